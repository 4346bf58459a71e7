// JsonStream (json_stream.hpp): nlohmann's dump(2) layout, written as it goes.
#include "tools/writers/json_stream.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace modelstat::report_detail {

namespace {

std::string scalar(const Json& v) { return v.dump(-1, ' ', false, Json::error_handler_t::replace); }

}  // namespace

namespace {

// Bytes JSON takes as they are: printable ASCII but the quote and the backslash.
struct PlainBytes {
  bool plain[256] = {};
  constexpr PlainBytes() {
    for (int c = 0x20; c < 0x7f; ++c) plain[c] = c != '"' && c != '\\';
  }
};
constexpr PlainBytes kPlain;

// Whether one of the 8 bytes of w may not be plain: a control byte (< 0x20),
// 0x7f and above, '"' or '\\' (the word tests of "Bit Twiddling Hacks": exact
// for "is there such a byte", which is all that is asked here).
bool word_maybe_not_plain(uint64_t w) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL, kHigh = 0x8080808080808080ULL;
  const auto has_zero = [](uint64_t v) { return (v - kOnes) & ~v & kHigh; };
  const uint64_t below_space = (w - kOnes * 0x20) & ~w & kHigh;
  const uint64_t del_or_high = ((w + kOnes) | w) & kHigh;
  return (below_space | del_or_high | has_zero(w ^ (kOnes * '"')) | has_zero(w ^ (kOnes * '\\'))) != 0;
}

bool plain(const std::string& s) {
  const char* p = s.data();
  const char* const end = p + s.size();
  for (; end - p >= 8; p += 8) {  // 8 bytes a step: names are 10-60 characters
    uint64_t w;
    std::memcpy(&w, p, 8);
    if (word_maybe_not_plain(w)) return false;
  }
  for (; p < end; ++p)
    if (!kPlain.plain[static_cast<unsigned char>(*p)]) return false;
  return true;
}

}  // namespace

void JsonStream::append_string(LineBuffer& out, const std::string& s) {
  // Plain text is written as it is; anything else (escapes, UTF-8 and its
  // validation) goes through nlohmann's dump.
  if (!plain(s)) {
    const std::string text = scalar(Json(s));
    out.put(text.data(), text.size());
    return;
  }
  char* p = out.extend(s.size() + 2);
  *p = '"';
  std::memcpy(p + 1, s.data(), s.size());
  p[s.size() + 1] = '"';
}

void JsonStream::append(LineBuffer& out, double v) {
  if (!std::isfinite(v)) {
    out.put("null", 4);
    return;
  }
  // nlohmann's own shortest round-trip formatting (what dump() calls for a
  // double), so the text is the DOM path's byte for byte. The rows of
  // repeated blocks repeat their figures (a 100k-node graph's arithmetic
  // intensities are a handful of values): a value's text is kept in a
  // direct-mapped memo of 1,024 slots a thread, keyed by its bits.
  struct Slot {
    uint64_t bits = 0;
    uint8_t size = 0;  // 0: empty
    char text[31];
  };
  thread_local std::vector<Slot> memo;
  if (memo.empty()) memo.resize(1024);
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  Slot& slot = memo[size_t(bits * 0x9E3779B97F4A7C15ULL >> 54)];
  if (slot.size == 0 || slot.bits != bits) {
    char buf[64];
    char* end = nlohmann::detail::to_chars(buf, buf + sizeof buf, v);
    const size_t n = size_t(end - buf);
    if (n > sizeof slot.text) {  // longer than any double's shortest text; kept out of the memo all the same
      out.put(buf, n);
      return;
    }
    std::memcpy(slot.text, buf, n);
    slot.size = uint8_t(n);
    slot.bits = bits;
  }
  out.put(slot.text, slot.size);
}

void JsonStream::append(LineBuffer& out, const std::vector<std::string>& v) {
  out.put('[');
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out.put(", ", 2);
    append_string(out, v[i]);
  }
  out.put(']');
}

void JsonStream::separator(LineBuffer& line) {
  if (after_key_) {  // the value of a member: on the key's line
    after_key_ = false;
    return;
  }
  if (levels_.empty()) return;  // the document itself
  if (levels_.back()) line.put(',');
  levels_.back() = true;
  const size_t spaces = 2 * levels_.size();
  char* p = line.extend(1 + spaces);
  *p = '\n';
  std::memset(p + 1, ' ', spaces);
}

void JsonStream::next_item() {
  line_.clear();
  separator(line_);
  if (line_.size()) out_.write(line_.data(), std::streamsize(line_.size()));
}

void JsonStream::begin_object() {
  next_item();
  out_ << '{';
  levels_.push_back(false);
}

void JsonStream::begin_array() {
  next_item();
  out_ << '[';
  levels_.push_back(false);
}

void JsonStream::end_object() {
  const bool any = levels_.back();
  levels_.pop_back();
  if (any) out_ << '\n' << indent();
  out_ << '}';
}

void JsonStream::end_array() {
  const bool any = levels_.back();
  levels_.pop_back();
  if (any) out_ << '\n' << indent();
  out_ << ']';
}

void JsonStream::key(const std::string& name) {
  line_.clear();
  separator(line_);
  append_string(line_, name);
  line_.put(": ", 2);
  out_.write(line_.data(), std::streamsize(line_.size()));
  pending_key_ = name;
  after_key_ = true;
}

void JsonStream::value(const Json& v, Layout layout) {
  const std::string key = after_key_ ? pending_key_ : std::string();
  const bool member = after_key_;
  next_item();
  if (layout == Layout::OneLine)
    one_line(v);
  else
    pretty(v, member ? &key : nullptr);
}

void JsonStream::members(const Json& object) {
  for (auto it = object.begin(); it != object.end(); ++it) member(it.key(), it.value());
}

void JsonStream::pretty(const Json& v, const std::string* key) {
  if (v.is_object() && !v.empty()) {
    out_ << '{';
    levels_.push_back(false);
    for (auto it = v.begin(); it != v.end(); ++it) {
      next_item();
      out_ << scalar(Json(it.key())) << ": ";
      pretty(it.value(), &it.key());
    }
    levels_.pop_back();
    out_ << '\n' << indent() << '}';
    return;
  }
  if (v.is_array() && !v.empty()) {
    if (key && *key == "samples_s") return samples(v);
    out_ << '[';
    levels_.push_back(false);
    for (const Json& item : v) {
      next_item();
      pretty(item, nullptr);
    }
    levels_.pop_back();
    out_ << '\n' << indent() << ']';
    return;
  }
  out_ << scalar(v);  // a scalar, {} or []
}

void JsonStream::one_line(const Json& v) {
  if (v.is_object()) {
    out_ << '{';
    bool first = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
      out_ << (first ? "" : ", ") << scalar(Json(it.key())) << ": ";
      one_line(it.value());
      first = false;
    }
    out_ << '}';
  } else if (v.is_array()) {
    out_ << '[';
    for (size_t i = 0; i < v.size(); ++i) {
      out_ << (i ? ", " : "");
      one_line(v[i]);
    }
    out_ << ']';
  } else {
    out_ << scalar(v);
  }
}

void JsonStream::samples(const Json& array) {
  // The key's line sets the indent; numbers go kSamplesPerLine a line one level in.
  const std::string line_indent = indent();
  const bool wrap = array.size() > kSamplesPerLine;
  out_ << '[';
  for (size_t i = 0; i < array.size(); ++i) {
    if (i) out_ << ',';
    if (wrap && i % kSamplesPerLine == 0)
      out_ << '\n' << line_indent << "  ";
    else if (i)
      out_ << ' ';
    out_ << scalar(array[i]);
  }
  if (wrap) out_ << '\n' << line_indent;
  out_ << ']';
}

}  // namespace modelstat::report_detail
