// The hostile-input JSON reader (json_input.hpp): a SAX handler that builds the
// document with limits and knows, at any point, the path it is at; the field
// readers; the path of a refused field.
#include "analyzer/measurements/json_input.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace modelstat {

namespace {

// Printable one-line text of bytes from the file: control and non-ASCII bytes
// as \xNN, at most `limit` bytes shown.
std::string printable(const std::string& text, size_t limit = 60) {
  static const char* const kHex = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < text.size() && i < limit; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (text.size() > limit) out += "...";
  return out;
}

// "a.b[2].c" from the keys and indices leading to a value.
struct PathStep {
  bool index = false;
  std::string key;
  size_t position = 0;
};

std::string spell_path(const std::vector<PathStep>& steps) {
  std::string path;
  for (size_t i = 0; i < steps.size(); ++i) {
    // A deep path (a refused nesting) keeps its first and last steps.
    if (steps.size() > 12 && i >= 6 && i + 4 < steps.size()) {
      if (i == 6) path += "...";
      continue;
    }
    const PathStep& s = steps[i];
    if (s.index)
      path += "[" + std::to_string(s.position) + "]";
    else
      path += (path.empty() ? "" : ".") + printable(s.key);
  }
  return path;
}


// Builds the document as nlohmann's DOM parser does (a stack of the open
// containers), refusing it at the first limit exceeded; returning false stops
// the parse. The path of the value being read is the stack's keys and counts.
class LimitedDomBuilder {
 public:
  using number_integer_t = Json::number_integer_t;
  using number_unsigned_t = Json::number_unsigned_t;
  using number_float_t = Json::number_float_t;
  using string_t = Json::string_t;
  using binary_t = Json::binary_t;

  Json root;
  std::string failure;  // why parsing stopped, when it did

  bool null() { return add(Json(nullptr)); }
  bool boolean(bool v) { return add(Json(v)); }
  bool number_integer(number_integer_t v) { return add(Json(v)); }
  bool number_unsigned(number_unsigned_t v) { return add(Json(v)); }
  bool number_float(number_float_t v, const string_t&) { return add(Json(v)); }
  bool string(string_t& v) { return add(Json(std::move(v))); }
  bool binary(binary_t&) { return fail("binary values are not JSON"); }
  bool start_object(std::size_t) { return open(Json::object()); }
  bool start_array(std::size_t) { return open(Json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(string_t& k) {
    frames_.back().key = k;
    frames_.back().key_open = true;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    // "[json.exception.parse_error.101] parse error at line 1, column 9: ...": the text after the tag.
    std::string what = e.what();
    const size_t tag_end = what.find("] ");
    if (tag_end != std::string::npos) what.erase(0, tag_end + 2);
    return fail("not valid JSON: " + printable(what, 240));
  }

  // Where parsing stopped: `field "PATH"` of the value being read, `after
  // field "PATH"` between an object's members, or empty at the top.
  std::string where() const {
    std::vector<PathStep> steps;
    bool after = false;
    for (size_t i = 0; i < frames_.size(); ++i) {
      const Frame& f = frames_[i];
      const bool innermost = i + 1 == frames_.size();
      if (f.array) {
        // An inner frame's current element is already counted; the innermost
        // frame's is the one being read, not yet counted.
        if (!innermost || !limit_hit_) steps.push_back({true, {}, static_cast<size_t>(innermost ? f.count : f.count - 1)});
      } else if (f.key_open && !(innermost && limit_hit_)) {
        steps.push_back({false, f.key, 0});
      } else if (innermost && !limit_hit_ && f.count > 0) {
        steps.push_back({false, f.key, 0});
        after = true;
      }
    }
    if (steps.empty()) return {};
    return (after ? "after field \"" : "field \"") + spell_path(steps) + "\": ";
  }

 private:
  struct Frame {
    Json* container;
    bool array;
    int64_t count = 0;  // elements or members so far
    std::string key;    // objects: the last key read
    bool key_open = false;  // objects: its value is not complete yet (else an error is between members)
  };
  std::vector<Frame> frames_;
  int64_t values_ = 0;
  bool limit_hit_ = false;  // the failure is the innermost container's, not its current element's

  bool fail(std::string why) {
    failure = std::move(why);
    return false;
  }
  bool over_limit(std::string why) {
    limit_hit_ = true;
    return fail(std::move(why));
  }

  // Places `v` in the innermost container (or as the root); nullptr when refused.
  Json* place(Json&& v) {
    if (++values_ > kJsonMaxValues)
      return over_limit("more than " + std::to_string(kJsonMaxValues) + " values in the document"), nullptr;
    if (frames_.empty()) {
      root = std::move(v);
      return &root;
    }
    Frame& f = frames_.back();
    if (f.array) {
      if (f.count >= kJsonMaxArrayElements)
        return over_limit("an array of more than " + std::to_string(kJsonMaxArrayElements) +
                          " elements (the most a modelstat document may hold)"),
               nullptr;
      ++f.count;
      auto& elements = *f.container->get_ptr<Json::array_t*>();
      elements.push_back(std::move(v));
      return &elements.back();
    }
    if (f.count >= kJsonMaxObjectMembers)
      return over_limit("an object of more than " + std::to_string(kJsonMaxObjectMembers) + " members"), nullptr;
    ++f.count;
    f.key_open = v.is_structured();  // a container's member completes when it closes
    Json& slot = (*f.container)[f.key];
    slot = std::move(v);
    return &slot;
  }

  bool add(Json&& v) { return place(std::move(v)) != nullptr; }

  bool open(Json&& container) {
    if (static_cast<int>(frames_.size()) >= kJsonMaxDepth)
      return over_limit("nested deeper than " + std::to_string(kJsonMaxDepth) + " levels");
    const bool array = container.is_array();
    Json* placed = place(std::move(container));
    if (!placed) return false;
    frames_.push_back({placed, array, 0, {}});
    return true;
  }

  bool close() {
    frames_.pop_back();
    if (!frames_.empty()) frames_.back().key_open = false;
    return true;
  }
};

// The path from `root` to the value at `target`, by address; false when it is not in `root`.
bool find_path(const Json& root, const Json* target, std::vector<PathStep>& steps) {
  if (&root == target) return true;
  if (root.is_array()) {
    for (size_t i = 0; i < root.size(); ++i) {
      steps.push_back({true, {}, i});
      if (find_path(root[i], target, steps)) return true;
      steps.pop_back();
    }
  } else if (root.is_object()) {
    for (auto it = root.begin(); it != root.end(); ++it) {
      steps.push_back({false, it.key(), 0});
      if (find_path(it.value(), target, steps)) return true;
      steps.pop_back();
    }
  }
  return false;
}

// The value as the file wrote it, shortened: "abc" (quoted), 12.5, null, an object, an array.
std::string describe(const Json& v) {
  if (v.is_string()) return "\"" + printable(v.get_ref<const std::string&>(), 40) + "\"";
  if (v.is_object()) return "an object";
  if (v.is_array()) return "an array";
  return v.dump();
}

// What each rule expects, in JsonNumber's order.
const char* rule_text(JsonNumber rule) {
  static const char* const kText[] = {"a finite number", "a finite number >= 0", "a positive finite number"};
  return kText[static_cast<int>(rule)];
}

const Json& checked_object(const Json& object) {
  if (!object.is_object()) json_expected(object, "an object");
  return object;
}

int64_t checked_integer(const Json& object, const char* key, const Json& v, int64_t min, int64_t max) {
  const std::string expected = "a whole number from " + std::to_string(min) + " to " + std::to_string(max);
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(max) || (min > 0 && u < static_cast<uint64_t>(min))) json_expected(object, key, expected);
    return static_cast<int64_t>(u);
  }
  if (!v.is_number_integer()) json_expected(object, key, expected);
  const int64_t i = v.get<int64_t>();
  if (i < min || i > max) json_expected(object, key, expected);
  return i;
}

bool number_ok(const Json& v, JsonNumber rule) {
  if (!v.is_number()) return false;
  const double x = v.get<double>();
  if (!std::isfinite(x)) return false;  // unreachable from the parser; a document built in code may hold one
  return rule == JsonNumber::Finite || (rule == JsonNumber::NonNegative ? x >= 0 : x > 0);
}

}  // namespace

Json parse_json_document(const std::string& text, const std::string& origin) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw Error(ErrorKind::Input, text.empty() ? "empty file, not a JSON document" : "no JSON value, only white space",
                origin);
  LimitedDomBuilder builder;
  if (!Json::sax_parse(text, &builder)) throw Error(ErrorKind::Input, builder.where() + builder.failure, origin);
  return std::move(builder.root);
}

Json read_json_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(ErrorKind::Input, std::string("cannot read: ") + std::strerror(errno), path);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw Error(ErrorKind::Input, std::string("cannot read: ") + std::strerror(errno), path);
  if (S_ISDIR(st.st_mode)) throw Error(ErrorKind::Input, "is a directory, not a JSON file", path);
  const std::string too_large = "larger than " + std::to_string(kJsonMaxFileBytes >> 20) +
                                " MiB, the most a modelstat JSON document may be";
  if (S_ISREG(st.st_mode) && st.st_size > kJsonMaxFileBytes) throw Error(ErrorKind::Input, too_large, path);
  // Read to the end rather than st_size bytes (a pipe, a file that grows), never past the limit.
  std::string text;
  if (S_ISREG(st.st_mode)) text.reserve(static_cast<size_t>(st.st_size));
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(ErrorKind::Input, std::string("cannot read: ") + std::strerror(errno), path);
    if (n == 0) break;
    if (static_cast<int64_t>(text.size()) + n > kJsonMaxFileBytes) throw Error(ErrorKind::Input, too_large, path);
    text.append(buffer, static_cast<size_t>(n));
  }
  return parse_json_document(text, path);
}

Error json_field_error(const Json& document, const std::string& origin, const JsonFieldError& e) {
  std::vector<PathStep> steps;
  std::string path;
  if (find_path(document, e.where, steps)) path = spell_path(steps);
  if (!e.key.empty()) path += (path.empty() ? "" : ".") + printable(e.key);
  return Error(ErrorKind::Input, (path.empty() ? "" : "field \"" + path + "\": ") + e.what(), origin);
}

// ------------------------------------------------------------ field readers

void json_expected(const Json& value, const std::string& expected) {
  throw JsonFieldError(value, {}, "expected " + expected + ", got " + describe(value));
}

void json_expected(const Json& object, const char* key, const std::string& expected) {
  const auto it = object.find(key);
  if (it == object.end()) throw JsonFieldError(object, key, "missing (expected " + expected + ")");
  json_expected(*it, expected);
}

const Json& json_field(const Json& object, const char* key) {
  const auto it = checked_object(object).find(key);
  if (it == object.end()) throw JsonFieldError(object, key, "missing");
  return *it;
}

const Json* json_field_if(const Json& object, const char* key) {
  const auto it = checked_object(object).find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

const Json& json_object(const Json& object, const char* key) {
  const Json& v = json_field(object, key);
  if (!v.is_object()) json_expected(v, "an object");
  return v;
}

const Json& json_array(const Json& object, const char* key) {
  const Json& v = json_field(object, key);
  if (!v.is_array()) json_expected(v, "an array");
  return v;
}

std::string json_string_value(const Json& value) {
  if (!value.is_string()) json_expected(value, "a string");
  return value.get<std::string>();
}

std::string json_string(const Json& object, const char* key) { return json_string_value(json_field(object, key)); }

bool json_bool_or(const Json& object, const char* key, bool fallback) {
  const Json* v = json_field_if(object, key);
  if (!v) return fallback;
  if (!v->is_boolean()) json_expected(object, key, "true or false");
  return v->get<bool>();
}

std::string json_string_or(const Json& object, const char* key, const std::string& fallback) {
  const Json* v = json_field_if(object, key);
  return v ? json_string_value(*v) : fallback;
}

double json_number_value(const Json& value, JsonNumber rule) {
  if (!number_ok(value, rule)) json_expected(value, rule_text(rule));
  return value.get<double>();
}

double json_number(const Json& object, const char* key, JsonNumber rule) {
  const auto it = checked_object(object).find(key);
  if (it == object.end()) json_expected(object, key, rule_text(rule));
  return json_number_value(*it, rule);
}

double json_number_or(const Json& object, const char* key, JsonNumber rule, double fallback) {
  const Json* v = json_field_if(object, key);
  return v ? json_number_value(*v, rule) : fallback;
}

int64_t json_integer(const Json& object, const char* key, int64_t min, int64_t max) {
  const auto it = checked_object(object).find(key);
  if (it == object.end())
    json_expected(object, key, "a whole number from " + std::to_string(min) + " to " + std::to_string(max));
  return checked_integer(object, key, *it, min, max);
}

int64_t json_integer_or(const Json& object, const char* key, int64_t min, int64_t max, int64_t fallback) {
  const Json* v = json_field_if(object, key);
  return v ? checked_integer(object, key, *v, min, max) : fallback;
}

}  // namespace modelstat
