// Reading a JSON document someone else wrote (a profile or report for
// `compare`, a ceilings file for `report` and `fit`), as hostile input: the one
// parser every reader uses and the field readers every from_json uses, so that
// every reader reports a bad file the same way, in one line naming the file and
// the field's path:
//
//   ceilings.json: field "matmul[0].flops_per_second": expected a positive finite number, got "abc"
//
// The parser refuses, before allocating for them, documents beyond the limits
// below (docs/files.md); JSON has no NaN or Infinity, and a number beyond a
// double's range (1e999) is refused too, so every number read is finite.
//
// How the path is found: a from_json(const Json&, Record&) keeps nlohmann's
// signature and knows nothing of where its object sits in the document. The
// field readers throw JsonFieldError holding the address of the offending
// value (or of the object missing a key); read_json_record, which holds the
// whole document, finds that address in it and spells its path. The path is
// thus computed only when a document is refused.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "analyzer/measurements/record_json.hpp"
#include "modelstat/error.hpp"

namespace modelstat {

// Limits of a document read back. Far above what modelstat writes (a profile of
// a 100k-node model with 30 samples per node: 5x10^6 values), low enough that a
// hostile file cannot exhaust memory (a parsed value takes about 16 bytes plus
// its string, so at most a few hundred MB) or the stack. The file's bytes are
// read whole first; nothing is allocated for what a document claims.
constexpr int64_t kJsonMaxFileBytes = int64_t(1) << 30;     // 1 GiB
constexpr int kJsonMaxDepth = 64;                           // nested arrays/objects
constexpr int64_t kJsonMaxArrayElements = 4'000'000;        // per array (4x the --max-iters default)
constexpr int64_t kJsonMaxObjectMembers = 10'000;           // per object (ordered_json looks keys up linearly)
constexpr int64_t kJsonMaxValues = 20'000'000;              // per document

// Parses `text`; Error(Input) naming `origin` and, for a syntax error or a
// limit, the path of the value where parsing stopped.
Json parse_json_document(const std::string& text, const std::string& origin);

// Reads `path` and parses it. Error(Input) naming the file: it cannot be opened
// (the system's reason), is a directory, is empty, exceeds kJsonMaxFileBytes,
// or does not parse.
Json read_json_file(const std::string& path);

// What a field reader throws: `where` is the offending value, or the object
// that lacks `key` (key empty: `where` itself is the field).
class JsonFieldError : public std::runtime_error {
 public:
  JsonFieldError(const Json& where, std::string key, const std::string& message)
      : std::runtime_error(message), where(&where), key(std::move(key)) {}
  const Json* where;
  std::string key;
};

// The Error(Input) for `e`, raised while reading `document` from `origin`:
// `field "a.b[2].c": <message>`.
Error json_field_error(const Json& document, const std::string& origin, const JsonFieldError& e);

// Runs read(document) and turns a JsonFieldError into json_field_error.
template <typename Read>
auto read_json_record(const Json& document, const std::string& origin, Read&& read) -> decltype(read(document)) {
  try {
    return read(document);
  } catch (const JsonFieldError& e) {
    throw json_field_error(document, origin, e);
  }
}

// ------------------------------------------------------------ field readers
// Each takes the object holding the field and its key; "_or" forms return the
// fallback when the key is absent or null (an optional field), the others
// throw JsonFieldError "missing". A wrong type or a value out of range throws
// "expected <what>, got <value>". A holder that is not an object throws too.

enum class JsonNumber {
  Finite,       // any number
  NonNegative,  // >= 0: a time, a cost
  Positive,     // > 0: a rate that is divided by or logged
};

const Json& json_field(const Json& object, const char* key);
const Json* json_field_if(const Json& object, const char* key);  // nullptr: absent or null
const Json& json_object(const Json& object, const char* key);
const Json& json_array(const Json& object, const char* key);
std::string json_string(const Json& object, const char* key);
std::string json_string_or(const Json& object, const char* key, const std::string& fallback = {});
double json_number(const Json& object, const char* key, JsonNumber rule);
double json_number_or(const Json& object, const char* key, JsonNumber rule, double fallback);
// A whole number in [min, max] (a count, a size, an index).
int64_t json_integer(const Json& object, const char* key, int64_t min, int64_t max);
int64_t json_integer_or(const Json& object, const char* key, int64_t min, int64_t max, int64_t fallback);
// true or false; `fallback` when absent or null (a field a later minor version added).
bool json_bool_or(const Json& object, const char* key, bool fallback);

// The same checks on a value itself (an array element).
double json_number_value(const Json& value, JsonNumber rule);
std::string json_string_value(const Json& value);

// Throws JsonFieldError for `value` (key empty) or for `object`'s `key`:
// "expected <expected>, got <value as written, shortened>".
[[noreturn]] void json_expected(const Json& value, const std::string& expected);
[[noreturn]] void json_expected(const Json& object, const char* key, const std::string& expected);

}  // namespace modelstat
