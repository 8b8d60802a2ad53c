#include "pkg/config/k8s_names.h"

#include <algorithm>
#include <cctype>

#include "pkg/text/cat.h"

namespace rdmadp::config {
namespace {

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// `c` as a message shows it: itself when printable, else \xNN, so that a name with a
// newline (a flag value, render --gpu-device-class) still gives a one-line error.
std::string Shown(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return Cat(std::string_view(&c, 1));
  static constexpr char kHex[] = "0123456789abcdef";
  return Cat("\\x", kHex[u >> 4], kHex[u & 0xf]);
}

// Name part of a qualified name: ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], at most 63.
std::string QualifiedNamePartProblem(std::string_view n) {
  if (n.empty()) return "the name part after '/' is empty";
  if (n.size() > 63) return Cat("the name part is ", n.size(), " characters, over 63");
  if (!IsAsciiAlnum(n.front()) || !IsAsciiAlnum(n.back())) {
    return "the name part must start and end with a letter or digit";
  }
  for (char c : n) {
    if (!IsAsciiAlnum(c) && c != '-' && c != '_' && c != '.') {
      return Cat("the name part contains '", Shown(c), "'");
    }
  }
  return "";
}

}  // namespace

bool IsAsciiAlnum(char c) { return IsLowerAlnum(c) || (c >= 'A' && c <= 'Z'); }

bool GoResourceNameOk(std::string_view name) {
  return !name.empty() &&
         std::all_of(name.begin(), name.end(), [](char c) { return IsAsciiAlnum(c) || c == '_'; });
}

std::string DnsSubdomainProblem(std::string_view s) {
  if (s.empty()) return "it is empty";
  if (s.size() > 253) return Cat("it is ", s.size(), " characters, over 253");
  size_t start = 0;
  while (start <= s.size()) {
    size_t dot = s.find('.', start);
    if (dot == std::string_view::npos) dot = s.size();
    const std::string_view label = s.substr(start, dot - start);
    start = dot + 1;
    if (label.empty()) return "it has an empty label between dots";
    if (!IsLowerAlnum(label.front()) || !IsLowerAlnum(label.back())) {
      return "each dot-separated label must start and end with a lowercase letter or digit";
    }
    for (char c : label) {
      if (!IsLowerAlnum(c) && c != '-') {
        return Cat("it contains '", Shown(c), "' (only lowercase letters, digits, '-' and '.')");
      }
    }
  }
  return "";
}

std::string DnsLabelProblem(std::string_view s) {
  if (s.size() > 63) return Cat("it is ", s.size(), " characters, over 63");
  if (s.find('.') != std::string_view::npos) return "it contains '.' (a DNS label has none)";
  return DnsSubdomainProblem(s);
}

std::string ExtendedResourceNameProblem(std::string_view name) {
  const auto slash = name.find('/');
  if (slash == std::string_view::npos) return "it has no '/<name>' after the prefix";
  if (name.find('/', slash + 1) != std::string_view::npos) return "it contains more than one '/'";
  if (name.find("kubernetes.io/") != std::string_view::npos) {
    return "the kubernetes.io domain is reserved for native resources";
  }
  if (name.starts_with("requests.")) return "it must not start with \"requests.\"";
  const std::string_view domain = name.substr(0, slash);
  // The kubelet checks "requests." + name, so the domain has 9 characters less room.
  if (domain.size() > 244) {
    return Cat("the prefix is ", domain.size(), " characters, over 244");
  }
  if (auto p = DnsSubdomainProblem(domain); !p.empty()) {
    return Cat("the prefix is not a DNS subdomain: ", p);
  }
  return QualifiedNamePartProblem(name.substr(slash + 1));
}

std::string DnsLabel(std::string_view text) {
  std::string out;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    out += std::isalnum(u) != 0 ? static_cast<char>(std::tolower(u)) : '-';
  }
  const size_t first = out.find_first_not_of('-');
  if (first == std::string::npos) return "x";
  out = out.substr(first, out.find_last_not_of('-') - first + 1);
  out.resize(std::min<size_t>(out.size(), 63));
  // The cut can end on a '-' (a long FQDN whose dots became dashes): a label must not.
  out.resize(out.find_last_not_of('-') + 1);
  return out;
}

}  // namespace rdmadp::config
