// The Go plugin's reading of a config file, simulated: Go's encoding/json syntax and decoding
// rules, then ValidateConfigs; and the network-operator webhook's schema checks alongside.
// docs/go-compat-notes.md names the upstream file behind each rule.
#include "pkg/config/go_compat.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <utility>

#include "absl/strings/ascii.h"
#include "pkg/config/k8s_names.h"
#include "pkg/config/raw_config.h"
#include "pkg/text/cat.h"
#include "pkg/text/edit_distance.h"
#include "pkg/text/json.h"

namespace rdmadp::config {
namespace {

// Go's scanner refuses a document nested deeper than this (encoding/json scanner.go).
constexpr size_t kGoMaxDepth = 10000;
// A config is five levels deep (top, configList, entry, selectors, a selector list). Values
// below this depth are kept as their kind only: nothing checks inside them, and a hostile
// file then cannot make the tree (and its recursive destructor) deep.
constexpr size_t kKeptDepth = 8;

constexpr std::string_view kBothRefuse = "the Go plugin and the webhook refuse the file";
constexpr std::string_view kGoRefuses = "the Go plugin refuses the file";

// The Go plugin's fields at each level (pkg/types/types.go), in its spelling.
constexpr std::array<std::string_view, 2> kTopFields = {"periodicUpdateInterval", "configList"};
enum TopField { kInterval, kConfigList };
constexpr std::array<std::string_view, 5> kEntryFields = {"resourceName", "resourcePrefix",
                                                          "rdmaHcaMax", "devices", "selectors"};
enum EntryField { kResourceName, kResourcePrefix, kRdmaHcaMax, kDevices, kSelectors };
constexpr std::array<std::string_view, 5> kSelectorFields = {"vendors", "deviceIDs", "drivers",
                                                             "ifNames", "linkTypes"};
enum SelectorField { kVendors, kDeviceIds };
// Entry keys only this plugin reads (parse.cpp). The Go plugin skips them, and the webhook's
// schema lets them through: it does not close the entry object.
constexpr std::array<std::string_view, 9> kOurEntryKeys = {
    "frontend",     "deviceModel",        "envHints",     "skipUnusable", "memlock",
    "pciDeviceEnv", "unusedGraceSeconds", "trafficClass", "gidIndex"};
constexpr std::string_view kPciAddresses = "pciAddresses";

// `s` as a message repeats it: at most kMaxEchoBytes of it, cut at a character boundary,
// with control characters and bytes that are not UTF-8 escaped so that one problem stays
// one line whatever the file holds; with `quoted`, '"' and '\' escaped too, as the value
// then sits between double quotes.
std::string EchoValue(std::string_view s, bool quoted) {
  std::string out;
  size_t used = 0;
  while (used < s.size()) {
    const size_t n = Utf8SequenceLength(s.substr(used));
    const size_t take = n == 0 ? 1 : n;
    if (used + take > kMaxEchoBytes) break;
    const auto c = static_cast<unsigned char>(s[used]);
    static constexpr char kHex[] = "0123456789abcdef";
    if (n == 0) {
      Append(out, "\\x", kHex[c >> 4], kHex[c & 0xf]);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7f) {
      Append(out, "\\u00", kHex[c >> 4], kHex[c & 0xf]);
    } else if (quoted && (c == '"' || c == '\\')) {
      Append(out, '\\', static_cast<char>(c));
    } else {
      out.append(s.substr(used, n));
    }
    used += take;
  }
  if (used < s.size()) Append(out, "... (", s.size(), " bytes)");
  return out;
}

// "line N column M" of byte `offset`, the column counted in characters.
std::string Place(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  size_t line = 1;
  size_t start = 0;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      start = i + 1;
    }
  }
  size_t column = 1;
  for (size_t i = start; i < offset; ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++column;
  }
  return Cat("line ", line, " column ", column);
}

// The text as Go's decoder reads it, and what the pre-scan found on the way. Go replaces,
// inside strings, each byte that is not UTF-8 and each \u escape of half a surrogate pair by
// U+FFFD (decode.go, unquoteBytes); nlohmann refuses both, so they are replaced here first
// and reported as the misreads they are. Offsets are into `text`.
struct Prepared {
  std::string text;
  bool bom = false;  // nlohmann skips a byte order mark; Go refuses it
  std::optional<size_t> bad_utf8;
  std::optional<size_t> lone_surrogate;
  std::optional<size_t> too_deep;  // the bracket past kGoMaxDepth
  // nlohmann takes a NUL byte for the end of the input; Go refuses it anywhere.
  std::optional<size_t> nul;
};

std::optional<uint32_t> Hex4(std::string_view s, size_t pos) {
  if (pos + 4 > s.size()) return std::nullopt;
  uint32_t v = 0;
  for (size_t i = pos; i < pos + 4; ++i) {
    const char c = s[i];
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return std::nullopt;
    const int digit =
        c <= '9' ? c - '0' : absl::ascii_tolower(static_cast<unsigned char>(c)) - 'a' + 10;
    v = v * 16 + static_cast<uint32_t>(digit);
  }
  return v;
}

Prepared Prepare(std::string_view in) {
  Prepared p;
  p.text.reserve(in.size());
  p.bom = in.starts_with("\xEF\xBB\xBF");
  bool in_string = false;
  size_t depth = 0;
  size_t i = 0;
  while (i < in.size()) {
    const char c = in[i];
    if (c == '\0' && !p.nul) p.nul = p.text.size();
    if (!in_string) {
      if (c == '"') {
        in_string = true;
      } else if (c == '[' || c == '{') {
        if (++depth > kGoMaxDepth && !p.too_deep) p.too_deep = p.text.size();
      } else if ((c == ']' || c == '}') && depth > 0) {
        --depth;
      }
      p.text += c;
      ++i;
      continue;
    }
    if (c == '"') {
      in_string = false;
      p.text += c;
      ++i;
      continue;
    }
    if (c == '\\') {
      const std::optional<uint32_t> unit =
          i + 1 < in.size() && in[i + 1] == 'u' ? Hex4(in, i + 2) : std::nullopt;
      if (unit && *unit >= 0xD800 && *unit <= 0xDFFF) {
        std::optional<uint32_t> low;
        if (*unit < 0xDC00 && i + 8 <= in.size() && in.substr(i + 6, 2) == "\\u") {
          low = Hex4(in, i + 8);
        }
        if (low && *low >= 0xDC00 && *low <= 0xDFFF) {  // a pair: one character
          p.text.append(in.substr(i, 12));
          i += 12;
          continue;
        }
        if (!p.lone_surrogate) p.lone_surrogate = p.text.size();
        p.text += "\\ufffd";
        i += 6;
        continue;
      }
      // Any other escape, copied whole so that an escaped quote does not end the string.
      p.text.append(in.substr(i, 2));
      i += 2;
      continue;
    }
    const size_t n = Utf8SequenceLength(in.substr(i));
    if (n == 0) {
      if (!p.bad_utf8) p.bad_utf8 = p.text.size();
      p.text += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    p.text.append(in.substr(i, n));
    i += n;
  }
  return p;
}

// A JSON value with everything the checks need that a DOM loses: every member of an
// object in file order, duplicates included (Go decodes each of them), and a float's
// lexeme (Go's int fields refuse "1e3" and "1.0", which a double cannot tell from 1000).
struct Value {
  enum class Kind { kNull, kBool, kInteger, kUnsigned, kFloat, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  int64_t integer = 0;
  uint64_t unsigned_integer = 0;
  std::string text;          // a string's value; a float's lexeme
  std::string key;           // the member's name, for a value inside an object
  std::vector<Value> items;  // an array's items or an object's members, in file order
};
using Kind = Value::Kind;

// nlohmann's SAX interface. sax_parse hands errors to parse_error() instead of throwing.
class TreeBuilder {
 public:
  bool null() { return Add(Value{}); }
  bool boolean(bool b) {
    Value v;
    v.kind = Kind::kBool;
    v.boolean = b;
    return Add(std::move(v));
  }
  bool number_integer(nlohmann::json::number_integer_t n) {
    Value v;
    v.kind = Kind::kInteger;
    v.integer = n;
    return Add(std::move(v));
  }
  bool number_unsigned(nlohmann::json::number_unsigned_t n) {
    Value v;
    v.kind = Kind::kUnsigned;
    v.unsigned_integer = n;
    return Add(std::move(v));
  }
  bool number_float(nlohmann::json::number_float_t /*value*/, const std::string& lexeme) {
    Value v;
    v.kind = Kind::kFloat;
    v.text = lexeme;
    return Add(std::move(v));
  }
  bool string(std::string& s) {
    Value v;
    v.kind = Kind::kString;
    v.text = std::move(s);
    return Add(std::move(v));
  }
  bool binary(nlohmann::json::binary_t& /*bytes*/) { return true; }  // JSON text has none
  bool start_object(size_t /*elements*/) { return Open(Kind::kObject); }
  bool key(std::string& k) {
    key_ = std::move(k);
    return true;
  }
  bool end_object() { return Close(); }
  bool start_array(size_t /*elements*/) { return Open(Kind::kArray); }
  bool end_array() { return Close(); }
  bool parse_error(size_t position, const std::string& last_token,
                   const nlohmann::json::exception& e) {
    error_offset_ = position > 0 ? position - 1 : 0;  // the last byte read
    // out_of_range.406: a number beyond a double, which Go's syntax check would take.
    if (e.id == 406) {
      error_ = Cat("the number ", EchoValue(last_token, false), " does not fit a float64");
      number_overflow_ = true;
      return false;
    }
    // "[json.exception.parse_error.101] parse error at line L, column C: <detail>": the
    // place is ours to give (in characters); the detail repeats the token read, cut here.
    std::string detail = e.what();
    if (const size_t colon = detail.find(": "); colon != std::string::npos) {
      detail.erase(0, colon + 2);
    }
    const std::string said = Cat("; last read: '", last_token, "'");
    if (const size_t at = detail.find(said); at != std::string::npos) {
      detail.replace(at, said.size(), Cat("; last read: '", EchoValue(last_token, false), "'"));
    }
    error_ = std::move(detail);
    return false;
  }

  const Value& root() const { return root_; }
  const std::optional<std::string>& error() const { return error_; }
  size_t error_offset() const { return error_offset_; }
  bool number_overflow() const { return number_overflow_; }

 private:
  bool Add(Value v) {
    if (skipped_ > 0) return true;  // inside a value kept as its kind only
    if (stack_.empty()) {
      root_ = std::move(v);
      return true;
    }
    Value& parent = *stack_.back();
    if (parent.kind == Kind::kObject) v.key = std::move(key_);
    parent.items.push_back(std::move(v));
    return true;
  }
  bool Open(Kind kind) {
    Value v;
    v.kind = kind;
    if (skipped_ > 0 || stack_.size() >= kKeptDepth) {
      if (skipped_ == 0) Add(std::move(v));
      ++skipped_;
      return true;
    }
    if (stack_.empty()) {
      root_ = std::move(v);
      stack_.push_back(&root_);
      return true;
    }
    // Only the innermost open container grows, so the pointers on the stack stay valid.
    Value& parent = *stack_.back();
    if (parent.kind == Kind::kObject) v.key = std::move(key_);
    parent.items.push_back(std::move(v));
    stack_.push_back(&parent.items.back());
    return true;
  }
  bool Close() {
    if (skipped_ > 0) {
      --skipped_;
    } else if (!stack_.empty()) {
      stack_.pop_back();
    }
    return true;
  }

  Value root_;
  std::vector<Value*> stack_;
  size_t skipped_ = 0;  // open containers below kKeptDepth
  std::string key_;
  std::optional<std::string> error_;
  size_t error_offset_ = 0;
  bool number_overflow_ = false;
};

std::string Describe(const Value& v) {
  switch (v.kind) {
    case Kind::kNull:
      return "null";
    case Kind::kBool:
      return v.boolean ? "true" : "false";
    case Kind::kInteger:
      return std::to_string(v.integer);
    case Kind::kUnsigned:
      return std::to_string(v.unsigned_integer);
    case Kind::kFloat:
      return EchoValue(v.text, false);
    case Kind::kString:
      return Cat("the string \"", EchoValue(v.text, true), "\"");
    case Kind::kArray:
      return "a list";
    case Kind::kObject:
      return "an object";
  }
  return "?";
}

std::string Refusers(bool go, bool webhook) {
  if (go && webhook) return "the Go plugin refuses the file and the webhook refuses it";
  if (go) return std::string(kGoRefuses);
  return "the webhook refuses it";
}

// Go's encoding/json matches a key to a field by exact spelling first, then by Unicode
// simple case folding (fold.go). Beyond ASCII only two characters fold onto the ASCII
// letters of field names: the Kelvin sign onto 'k' and the long s onto 's'.
std::string GoFold(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.substr(i, 3) == "\xE2\x84\xAA") {
      out += 'K';
      i += 2;
    } else if (s.substr(i, 2) == "\xC5\xBF") {
      out += 'S';
      i += 1;
    } else {
      out += absl::ascii_toupper(static_cast<unsigned char>(s[i]));
    }
  }
  return out;
}

bool EqualsIgnoreAsciiCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (absl::ascii_tolower(static_cast<unsigned char>(a[i])) !=
        absl::ascii_tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

// The webhook's resourceName pattern: ^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$.
bool WebhookNameOk(std::string_view name) {
  return !name.empty() && IsAsciiAlnum(name.front()) && IsAsciiAlnum(name.back()) &&
         std::all_of(name.begin(), name.end(),
                     [](char c) { return IsAsciiAlnum(c) || c == '-' || c == '_' || c == '.'; });
}

// The webhook's resourcePrefix pattern:
// ^[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z]{2,})+$: a first label of 1 to
// 63 letters, digits and inner '-', then at least one label of two or more letters.
bool WebhookPrefixOk(std::string_view prefix) {
  const size_t dot = prefix.find('.');
  if (dot == std::string_view::npos) return false;
  const std::string_view first = prefix.substr(0, dot);
  if (first.empty() || first.size() > 63 || !IsAsciiAlnum(first.front()) ||
      !IsAsciiAlnum(first.back()) || !std::all_of(first.begin(), first.end(), [](char c) {
        return IsAsciiAlnum(c) || c == '-';
      })) {
    return false;
  }
  std::string_view rest = prefix.substr(dot + 1);
  while (true) {
    const size_t next = rest.find('.');
    const std::string_view label = rest.substr(0, next);
    if (label.size() < 2 || !std::all_of(label.begin(), label.end(), [](char c) {
          return absl::ascii_isalpha(static_cast<unsigned char>(c));
        })) {
      return false;
    }
    if (next == std::string_view::npos) return true;
    rest.remove_prefix(next + 1);
  }
}

bool HasFractionOrExponent(std::string_view lexeme) {
  return lexeme.find_first_of(".eE") != std::string_view::npos;
}

// Whether a JSON number's value is whole (1.0, 1e3, 100e-2), as the webhook's schema
// library tests "integer" (gojsonschema: the literal as a big.Rat, IsInt).
bool IsWholeNumber(std::string_view lexeme) {
  size_t i = 0;
  if (i < lexeme.size() && lexeme[i] == '-') ++i;
  std::string digits;
  int64_t fraction_digits = 0;
  auto is_digit = [&](size_t at) {
    return at < lexeme.size() && lexeme[at] >= '0' && lexeme[at] <= '9';
  };
  for (; is_digit(i); ++i) digits += lexeme[i];
  if (i < lexeme.size() && lexeme[i] == '.') {
    for (++i; is_digit(i); ++i) {
      digits += lexeme[i];
      ++fraction_digits;
    }
  }
  int64_t exponent = 0;
  if (i < lexeme.size() && (lexeme[i] == 'e' || lexeme[i] == 'E')) {
    ++i;
    bool negative = false;
    if (i < lexeme.size() && (lexeme[i] == '+' || lexeme[i] == '-')) {
      negative = lexeme[i] == '-';
      ++i;
    }
    // Saturates: an exponent this large decides the answer by its sign alone.
    for (; is_digit(i); ++i) {
      exponent = std::min<int64_t>(exponent * 10 + (lexeme[i] - '0'), 1'000'000'000);
    }
    if (negative) exponent = -exponent;
  }
  const size_t last = digits.find_last_not_of('0');
  if (last == std::string::npos) return true;  // zero
  const auto trailing_zeros = static_cast<int64_t>(digits.size() - 1 - last);
  return exponent - fraction_digits + trailing_zeros >= 0;
}

// Why Go's int decoding refuses `v` (it parses the literal's digits into 64 bits:
// strconv.ParseInt), or "" when it takes it. `expected` names the field's type; null is
// the caller's to handle.
std::string GoIntProblem(const Value& v, std::string_view expected) {
  switch (v.kind) {
    case Kind::kInteger:
      return "";
    case Kind::kUnsigned:
      if (v.unsigned_integer <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return "";
      }
      return Cat(v.unsigned_integer, " is out of range of Go's 64-bit int");
    case Kind::kFloat:
      // nlohmann reads an integer literal beyond 64 bits as a float.
      if (!HasFractionOrExponent(v.text)) {
        return Cat(EchoValue(v.text, false), " is out of range of Go's 64-bit int");
      }
      return Cat("must be an integer without a fraction or exponent, got ",
                 EchoValue(v.text, false));
    default:
      return Cat("must be ", expected, ", got ", Describe(v));
  }
}

int64_t IntOf(const Value& v) {
  return v.kind == Kind::kInteger ? v.integer : static_cast<int64_t>(v.unsigned_integer);
}

// One member of an object, as each reader takes it.
struct Member {
  const Value* value = nullptr;
  std::string path;
  int field = -1;      // the Go field it decodes into, or -1 (Go skips it)
  bool exact = false;  // spelled as the field is: the only spelling the webhook's schema knows
  // What the webhook's schema sees under this key: it decodes into a map, which keeps the
  // last of equal keys.
  bool webhook = false;
};

// The Go plugin's view of an entry (types.UserConfig), as decoding leaves it.
struct GoEntry {
  std::string resource_name;
  int64_t rdma_hca_max = 0;
  std::vector<std::string> devices;
  std::array<std::vector<std::string>, kSelectorFields.size()> selectors;
  bool SelectorsEmpty() const {
    return std::all_of(selectors.begin(), selectors.end(),
                       [](const auto& list) { return list.empty(); });
  }
};

class Checker {
 public:
  std::vector<std::string> Finish() {
    if (dropped_ > 0) {
      lines_.push_back(Cat("go-compatible: top level: ", dropped_,
                           " more problems not listed: fix the ones above first"));
    }
    return std::move(lines_);
  }

  void Problem(std::string_view where, std::string_view what, std::string_view who) {
    if (lines_.size() >= kMaxErrors) {
      ++dropped_;
      return;
    }
    lines_.push_back(Cat("go-compatible: ", where, ": ", what, ": ", who));
  }

  void Top(const Value& root) {
    if (root.kind == Kind::kNull) {
      // Go decodes null into an empty config; ValidateConfigs then finds no entry.
      Problem("top level", "is null",
              "the webhook refuses it (it must be an object; the Go plugin reads no configList)");
      GoValidate();
      return;
    }
    if (root.kind != Kind::kObject) {
      Problem("top level", Cat("must be an object, got ", Describe(root)), kBothRefuse);
      return;
    }
    bool config_list_key = false;
    for (const Member& m : Resolve(root, "", kTopFields, true, false)) {
      if (m.field == kInterval) {
        Interval(m);
      } else if (m.field == kConfigList) {
        config_list_key = config_list_key || m.exact;
        ConfigList(m);
      } else {
        Unknown(m, kTopFields, {}, "the Go plugin and the webhook ignore it");
      }
    }
    if (!config_list_key) {
      Problem("configList", "is missing", "the webhook refuses it (configList is required)");
    }
    GoValidate();
  }

 private:
  static std::string JoinPath(const std::string& path, std::string_view key) {
    return path.empty() ? EchoValue(key, false) : Cat(path, ".", EchoValue(key, false));
  }

  // Matches each member of `object` to a Go field, with the spelling rules of both readers.
  // A key that matches only ignoring case, and a field met twice, are problems here;
  // `strict`: the webhook's schema allows no key but the fields (additionalProperties).
  std::vector<Member> Resolve(const Value& object, const std::string& path,
                              std::span<const std::string_view> fields, bool webhook, bool strict) {
    std::map<std::string_view, size_t> last;  // key -> its last member
    for (size_t i = 0; i < object.items.size(); ++i) last[object.items[i].key] = i;
    std::vector<bool> seen(fields.size(), false);
    std::vector<Member> members;
    for (size_t i = 0; i < object.items.size(); ++i) {
      const Value& item = object.items[i];
      Member m;
      m.value = &item;
      m.path = JoinPath(path, item.key);
      m.webhook = webhook && last[item.key] == i;
      for (size_t f = 0; f < fields.size() && m.field < 0; ++f) {
        if (item.key == fields[f]) {
          m.field = static_cast<int>(f);
          m.exact = true;
        }
      }
      const std::string folded = GoFold(item.key);
      for (size_t f = 0; f < fields.size() && m.field < 0; ++f) {
        if (folded == GoFold(fields[f])) m.field = static_cast<int>(f);
      }
      if (m.field >= 0) {
        const std::string_view name = fields[static_cast<size_t>(m.field)];
        // Both plugins read it (ours ignoring ASCII case too); only the webhook differs.
        if (!m.exact && webhook) {
          Problem(m.path, Cat("matches \"", name, "\" only ignoring case"),
                  strict ? "the Go plugin reads it; the webhook refuses it (its schema matches "
                           "keys exactly)"
                         : "the Go plugin reads it; the webhook's schema matches keys exactly "
                           "and skips it");
        }
        if (seen[static_cast<size_t>(m.field)]) {
          Problem(m.path, Cat("repeats \"", name, "\" in this object"),
                  "the Go plugin decodes both in file order: a later value overwrites an "
                  "earlier one, an object merges into it");
        }
        seen[static_cast<size_t>(m.field)] = true;
      }
      members.push_back(std::move(m));
    }
    return members;
  }

  // A key no Go field matches, `also` keys of ours at this level: "did you mean" among both.
  void Unknown(const Member& m, std::span<const std::string_view> fields,
               std::span<const std::string_view> also, std::string_view who) {
    std::string_view nearest;
    size_t best = 4;  // at most 3 edits apart
    auto consider = [&](std::string_view k) {
      if (const size_t d = EditDistance(k, m.value->key); d < best) {
        best = d;
        nearest = k;
      }
    };
    for (auto k : fields) consider(k);
    for (auto k : also) consider(k);
    Problem(m.path,
            nearest.empty() ? std::string("unknown key")
                            : Cat("unknown key (did you mean \"", nearest, "\"?)"),
            who);
  }

  void Interval(const Member& m) {
    const Value& v = *m.value;
    if (v.kind == Kind::kNull) {  // a *int: null sets it back to nil, the default
      interval_.reset();
      return;
    }
    if (std::string p = GoIntProblem(v, "an integer (seconds) or null"); !p.empty()) {
      Problem(m.path, p, kGoRefuses);  // the webhook's schema leaves it out
      return;
    }
    interval_ = IntOf(v);
  }

  void ConfigList(const Member& m) {
    const Value& v = *m.value;
    const bool webhook = m.webhook && m.exact;
    if (v.kind == Kind::kNull) {
      list_.clear();
      if (webhook) {
        Problem(m.path, "is null",
                "the webhook refuses it (it must be a list; the Go plugin reads no entries)");
      }
      return;
    }
    if (v.kind != Kind::kArray) {
      Problem(m.path, Cat("must be a list, got ", Describe(v)), Refusers(true, webhook));
      return;
    }
    if (v.items.empty() && webhook) {
      Problem(m.path, "is empty", "the webhook refuses it (it needs at least 1 entry)");
    }
    // Go decodes a list into the slice it already holds: a second configList merges into
    // the entries of the first, element by element.
    if (list_.size() < v.items.size()) list_.resize(v.items.size());
    for (size_t i = 0; i < v.items.size(); ++i) {
      Entry(v.items[i], Cat(m.path, "[", i, "]"), webhook, list_[i]);
    }
    list_.resize(v.items.size());
  }

  void Entry(const Value& v, const std::string& path, bool webhook, GoEntry& entry) {
    if (v.kind == Kind::kNull) {  // null leaves a Go struct as it is: an empty entry
      if (webhook) {
        Problem(path, "is null",
                "the webhook refuses it (it must be an object; the Go plugin reads an empty "
                "entry)");
      }
      return;
    }
    if (v.kind != Kind::kObject) {
      Problem(path, Cat("must be an object, got ", Describe(v)), Refusers(true, webhook));
      return;
    }
    std::array<bool, kEntryFields.size()> present{};  // spelled exactly: the schema's view
    std::array<bool, kEntryFields.size()> read{};     // in any spelling: the Go plugin's
    for (const Member& m : Resolve(v, path, kEntryFields, webhook, false)) {
      const bool seen = m.webhook && m.exact;
      if (m.field >= 0) read[static_cast<size_t>(m.field)] = true;
      if (m.field >= 0 && m.exact) present[static_cast<size_t>(m.field)] = true;
      switch (m.field) {
        case kResourceName:
          if (String(m, seen, entry.resource_name) && seen) WebhookName(m.path, m.value->text);
          break;
        case kResourcePrefix: {
          std::string prefix;
          if (String(m, seen, prefix) && seen && !WebhookPrefixOk(prefix)) {
            Problem(m.path,
                    Cat("\"", EchoValue(prefix, true),
                        "\" is not a domain name such as \"example.com\" (labels after the "
                        "first hold letters only)"),
                    "the webhook refuses it (the Go plugin takes any prefix)");
          }
          break;
        }
        case kRdmaHcaMax:
          RdmaHcaMax(m, seen, entry.rdma_hca_max);
          break;
        case kDevices:
          StringList(m, seen, entry.devices, false);
          break;
        case kSelectors:
          Selectors(m, seen, entry);
          break;
        default:
          OurOrUnknownEntryKey(m, webhook);
      }
    }
    if (!webhook) return;
    if (!present[kResourceName]) {
      Problem(path + ".resourceName", "is missing",
              "the webhook refuses it (resourceName is required)");
    }
    if (!present[kRdmaHcaMax]) {
      Problem(path + ".rdmaHcaMax", "is missing",
              read[kRdmaHcaMax]
                  ? "the webhook refuses it (rdmaHcaMax is required)"
                  : "the webhook refuses it (rdmaHcaMax is required; the Go plugin reads 0)");
    }
    if (!present[kDevices] && !present[kSelectors]) {
      Problem(path, "has neither \"selectors\" nor \"devices\"", "the webhook refuses it");
    }
  }

  void OurOrUnknownEntryKey(const Member& m, bool webhook) {
    const Value& v = *m.value;
    const std::string_view key = v.key;
    auto is = [&](std::string_view ours) { return EqualsIgnoreAsciiCase(key, ours); };
    auto string_is = [&](std::string_view s) { return v.kind == Kind::kString && v.text == s; };
    // A key of ours at its default changes nothing when the Go plugin skips it.
    std::string_view who;
    if (is("frontend")) {
      if (v.kind == Kind::kNull || string_is("devicePlugin")) return;
      who =
          "the Go plugin ignores it and serves the entry through the device-plugin API, not "
          "DRA";
    } else if (is("deviceModel")) {
      if (v.kind == Kind::kNull || string_is("auto") || string_is("slots")) return;
      who =
          "the Go plugin ignores it (it has no DRA front end, and each slot it advertises "
          "gives the whole pool)";
    } else if (is("envHints")) {
      if (v.kind == Kind::kNull || (v.kind == Kind::kArray && v.items.empty())) return;
      who = "the Go plugin ignores it: containers get no NCCL_IB_HCA or UCX_NET_DEVICES";
    } else if (is("skipUnusable")) {
      if (v.kind == Kind::kNull || (v.kind == Kind::kBool && !v.boolean)) return;
      who =
          "the Go plugin ignores it: functions with no ACTIVE port or an all-zero GID table "
          "stay in the pool";
    } else if (is("pciDeviceEnv") || is("unusedGraceSeconds")) {
      // pciDeviceEnv: the Go plugin's Allocate answer has no envs at all: false is what it
      // does, and true (the default, as every entry has it) only adds variables it never
      // sets. unusedGraceSeconds changes what this plugin says, never what a pod gets.
      return;
    } else if (is("trafficClass") || is("gidIndex")) {
      if (v.kind == Kind::kNull) return;
      who = is("trafficClass")
                ? "the Go plugin ignores it: containers get no NCCL_IB_TC or UCX_IB_TRAFFIC_CLASS"
                : "the Go plugin ignores it: containers get no NCCL_IB_GID_INDEX or "
                  "UCX_IB_GID_INDEX";
    } else if (is("memlock")) {
      if (v.kind == Kind::kNull) return;
      who = "the Go plugin ignores it: containers keep the container runtime's RLIMIT_MEMLOCK";
    } else {
      Unknown(m, kEntryFields, kOurEntryKeys,
              webhook ? "the Go plugin and the webhook ignore it" : "the Go plugin ignores it");
      return;
    }
    Problem(m.path, "is a key only this plugin reads", who);
  }

  // A Go string field: true when it holds a string (then in `dst`).
  bool String(const Member& m, bool webhook, std::string& dst) {
    const Value& v = *m.value;
    if (v.kind == Kind::kString) {
      dst = v.text;
      return true;
    }
    if (v.kind == Kind::kNull) {  // null leaves a Go string as it is
      if (webhook) {
        Problem(m.path, "is null",
                "the webhook refuses it (it must be a string; the Go plugin leaves it unset)");
      }
      return false;
    }
    Problem(m.path, Cat("must be a string, got ", Describe(v)), Refusers(true, webhook));
    return false;
  }

  void WebhookName(const std::string& path, const std::string& name) {
    if (WebhookNameOk(name)) return;
    if (name.empty()) {
      Problem(path, "is empty",
              "the webhook refuses it (a name starts and ends with a letter or digit)");
      return;
    }
    Problem(path,
            Cat("\"", EchoValue(name, true),
                "\" must start and end with a letter or digit and hold only letters, digits, "
                "'-', '_' and '.'"),
            "the webhook refuses it");
  }

  void RdmaHcaMax(const Member& m, bool webhook, int64_t& dst) {
    const Value& v = *m.value;
    if (v.kind == Kind::kNull) {  // null leaves a Go int as it is
      if (webhook) {
        Problem(m.path, "is null",
                "the webhook refuses it (it must be an integer; the Go plugin reads 0)");
      }
      return;
    }
    const std::string go = GoIntProblem(v, "an integer");
    if (go.empty()) {
      dst = IntOf(v);
      return;
    }
    // The schema's "integer" is any whole number, 1e3 and 1.0 included.
    const bool whole =
        v.kind == Kind::kUnsigned || (v.kind == Kind::kFloat && IsWholeNumber(v.text));
    if (webhook && whole) {
      Problem(m.path, go, "the Go plugin refuses the file (the webhook accepts it)");
    } else {
      Problem(m.path, go, Refusers(true, webhook));
    }
  }

  // A Go []string: a selector list or devices. `pci_ids`: vendors and deviceIDs, which this
  // plugin normalizes and the Go plugin compares as written.
  void StringList(const Member& m, bool webhook, std::vector<std::string>& dst, bool pci_ids) {
    const Value& v = *m.value;
    if (v.kind == Kind::kNull) {  // null sets a Go slice to nil
      dst.clear();
      if (webhook) {
        Problem(m.path, "is null",
                "the webhook refuses it (it must be a list of strings; the Go plugin reads an "
                "empty list)");
      }
      return;
    }
    if (v.kind != Kind::kArray) {
      Problem(m.path, Cat("must be a list of strings, got ", Describe(v)), Refusers(true, webhook));
      return;
    }
    // Go decodes into the slice it holds: a null item keeps what was there.
    dst.resize(v.items.size());
    for (size_t i = 0; i < v.items.size(); ++i) {
      const Value& item = v.items[i];
      const std::string path = Cat(m.path, "[", i, "]");
      if (item.kind == Kind::kNull) {
        if (webhook) {
          Problem(path, "is null",
                  "the webhook refuses it (it must be a string; the Go plugin reads \"\")");
        }
        continue;
      }
      if (item.kind != Kind::kString) {
        Problem(path, Cat("must be a string, got ", Describe(item)), Refusers(true, webhook));
        continue;
      }
      dst[i] = item.text;
      if (webhook && item.text.empty()) {
        Problem(path, "is empty",
                "the webhook refuses it (strings here need at least 1 character)");
      }
      if (pci_ids && item.text != NormalizePciId(item.text)) {
        const std::string id = NormalizePciId(item.text);
        Problem(path,
                Cat("\"", EchoValue(item.text, true), "\" is not 4 lowercase hex digits",
                    id.empty() ? "" : Cat(" (write \"", id, "\")")),
                "the Go plugin compares it as written and matches no device");
      }
    }
  }

  void Selectors(const Member& m, bool webhook, GoEntry& entry) {
    const Value& v = *m.value;
    if (v.kind == Kind::kNull) {  // null leaves a Go struct as it is
      if (webhook) {
        Problem(m.path, "is null",
                "the webhook refuses it (it must be an object; the Go plugin reads no "
                "selectors)");
      }
      return;
    }
    if (v.kind != Kind::kObject) {
      Problem(m.path, Cat("must be an object, got ", Describe(v)), Refusers(true, webhook));
      return;
    }
    bool any_exact = false;
    std::vector<Member> pci;
    for (Member& s : Resolve(v, m.path, kSelectorFields, webhook, true)) {
      if (s.field >= 0) {
        any_exact = any_exact || s.exact;
        StringList(s, s.webhook && s.exact, entry.selectors[static_cast<size_t>(s.field)],
                   s.field == kVendors || s.field == kDeviceIds);
      } else if (EqualsIgnoreAsciiCase(s.value->key, kPciAddresses)) {
        pci.push_back(std::move(s));  // its effect depends on the other selectors
      } else {
        Unknown(s, kSelectorFields, std::span(&kPciAddresses, 1),
                webhook ? "the webhook refuses it; the Go plugin ignores it"
                        : "the Go plugin ignores it");
      }
    }
    for (const Member& p : pci) {
      const Value& list = *p.value;
      const bool used =
          list.kind != Kind::kNull && !(list.kind == Kind::kArray && list.items.empty());
      if (!used && !webhook) continue;  // an empty list skipped changes nothing
      const std::string_view go =
          !used                    ? "the Go plugin ignores it (it is empty here)"
          : entry.SelectorsEmpty() ? "the Go plugin ignores it and finds no selector in this entry"
                                   : "the Go plugin ignores it and pools every function the "
                                     "other selectors match";
      Problem(p.path, "is not a Go plugin selector",
              webhook ? Cat("the webhook refuses it; ", go) : std::string(go));
    }
    if (webhook && !any_exact) {
      Problem(m.path, "has none of vendors, deviceIDs, drivers, ifNames, linkTypes",
              "the webhook refuses it (it needs at least one)");
    }
  }

  // ValidateConfigs, over what decoding left. Go stops at the first failure; every one is
  // listed here, so that one pass finds them all.
  void GoValidate() {
    if (interval_) {
      // Go multiplies by time.Second in 64 bits and then tests for < 0: a large value wraps.
      const int64_t seconds = *interval_;
      const auto ns = static_cast<int64_t>(static_cast<uint64_t>(seconds) * 1'000'000'000ULL);
      const bool wrapped = seconds > std::numeric_limits<int64_t>::max() / 1'000'000'000 ||
                           seconds < std::numeric_limits<int64_t>::min() / 1'000'000'000;
      const std::string what =
          wrapped ? Cat("is ", seconds, " seconds, beyond Go's 64-bit nanosecond duration")
                  : Cat("is ", seconds);
      if (ns < 0) {
        Problem("periodicUpdateInterval", what,
                Cat("the Go plugin refuses the file (invalid \"periodicUpdateInterval\" "
                    "configuration \"",
                    ns, "\")"));
      } else if (wrapped) {
        Problem("periodicUpdateInterval", what, Cat("the Go plugin reads it as ", ns, " ns"));
      }
    }
    if (list_.empty()) {
      Problem("configList", "has no entries",
              "the Go plugin refuses the file (\"no resources configuration found\")");
    }
    std::map<std::string, size_t> names;  // valid name -> its entry
    for (size_t i = 0; i < list_.size(); ++i) {
      const GoEntry& e = list_[i];
      const std::string path = Cat("configList[", i, "]");
      if (!GoResourceNameOk(e.resource_name)) {
        Problem(path + ".resourceName",
                e.resource_name.empty()
                    ? std::string("is missing or empty")
                    : Cat("\"", EchoValue(e.resource_name, true),
                          "\" holds characters other than letters, digits and '_'"),
                "the Go plugin refuses the file (it allows only ^[a-zA-Z0-9_]+$)");
      } else if (auto [it, fresh] = names.emplace(e.resource_name, i); !fresh) {
        Problem(path + ".resourceName",
                Cat("\"", EchoValue(e.resource_name, true), "\" is already configList[", it->second,
                    "]'s name"),
                "the Go plugin refuses the file (names must be unique)");
      }
      if (e.rdma_hca_max < 0) {
        Problem(path + ".rdmaHcaMax", Cat("is ", e.rdma_hca_max),
                "the Go plugin refuses the file (it must be >= 0)");
      }
      if (e.SelectorsEmpty() && e.devices.empty()) {
        Problem(path, "has no selectors and no devices",
                "the Go plugin refuses the file (an entry needs one of them)");
      } else if (!e.SelectorsEmpty() && !e.devices.empty()) {
        Problem(path, "has both selectors and devices",
                "the Go plugin refuses the file (an entry takes one of them, not both)");
      }
    }
  }

  std::vector<std::string> lines_;
  size_t dropped_ = 0;
  // The Go plugin's view (types.UserConfigList), as decoding leaves it.
  std::optional<int64_t> interval_;
  std::vector<GoEntry> list_;
};

// A syntax problem's hint, from the byte where the parser stopped and the text's start.
std::string_view SyntaxHint(std::string_view text, size_t offset) {
  size_t first = text.find_first_not_of(" \t\r\n");
  if (text.starts_with("\xEF\xBB\xBF")) first = text.find_first_not_of(" \t\r\n", 3);
  if (first != std::string_view::npos &&
      (absl::ascii_isalpha(static_cast<unsigned char>(text[first])) || text[first] == '#' ||
       text.substr(first).starts_with("---"))) {
    return " (the Go plugin reads JSON only; this looks like YAML)";
  }
  if (offset >= text.size()) return "";
  const char c = text[offset];
  if (c == '/') return " (comments are not JSON)";
  if (c == '\'') return " (JSON strings take double quotes)";
  if (c == '}' || c == ']') {
    const size_t before = text.find_last_not_of(" \t\r\n", offset == 0 ? 0 : offset - 1);
    if (offset > 0 && before != std::string_view::npos && text[before] == ',') {
      return " (a trailing comma is not JSON)";
    }
  }
  return "";
}

}  // namespace

std::vector<std::string> GoCompatProblems(std::string_view text) {
  Checker checker;
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    checker.Problem("top level", "the file is empty", kBothRefuse);
    return checker.Finish();
  }
  const Prepared p = Prepare(text);
  if (p.bom) {
    checker.Problem("line 1 column 1", "a UTF-8 byte order mark is not JSON to Go", kBothRefuse);
  }
  if (p.bad_utf8) {
    checker.Problem(Place(p.text, *p.bad_utf8), "a string holds bytes that are not UTF-8",
                    "the Go plugin reads each as U+FFFD, so the value differs from the file");
  }
  if (p.lone_surrogate) {
    checker.Problem(Place(p.text, *p.lone_surrogate),
                    "a \\u escape names half of a UTF-16 surrogate pair",
                    "the Go plugin reads it as U+FFFD");
  }
  TreeBuilder builder;
  nlohmann::json::sax_parse(p.text.data(), p.text.data() + p.text.size(), &builder);
  // The first problem in the text is the one Go's scanner stops at.
  const size_t parse_at = builder.error() ? builder.error_offset() : std::string::npos;
  const size_t nul_at = p.nul.value_or(std::string::npos);
  const size_t deep_at = p.too_deep.value_or(std::string::npos);
  if (nul_at != std::string::npos && nul_at <= parse_at && nul_at <= deep_at) {
    checker.Problem(Place(p.text, nul_at), "a NUL byte is not JSON", kBothRefuse);
  } else if (deep_at != std::string::npos && deep_at <= parse_at) {
    checker.Problem(Place(p.text, deep_at),
                    Cat("arrays and objects nest more than ", kGoMaxDepth, " deep"), kBothRefuse);
  } else if (builder.number_overflow()) {
    // Go's syntax check takes any number; decoding it into an int or the webhook's generic
    // map (float64) fails, skipping it under an ignored key does not.
    checker.Problem(Place(p.text, parse_at), *builder.error(),
                    "the webhook refuses it, and the Go plugin refuses the file unless the key "
                    "is one it ignores (nothing after it was checked)");
  } else if (builder.error()) {
    checker.Problem(Place(p.text, parse_at),
                    Cat("not JSON: ", *builder.error(), SyntaxHint(p.text, parse_at)), kBothRefuse);
  } else {
    checker.Top(builder.root());
  }
  return checker.Finish();
}

}  // namespace rdmadp::config
