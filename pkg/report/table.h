// Aligned columns for a terminal: every cell padded to its column's widest, two spaces
// between columns, one line per row. Cells are printed as given: escape them first.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

namespace rdmadp::report {

inline std::string AlignedRows(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) {
      out += row[c];
      if (c + 1 < row.size()) out += std::string(widths[c] - row[c].size() + 2, ' ');
    }
    out += '\n';
  }
  return out;
}

}  // namespace rdmadp::report
