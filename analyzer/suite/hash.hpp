// FNV-1a, 64 bits: the identity of a suite, a cell, a model file, a machine and
// an environment (keys in the results database, names of result files). An
// identity, not a defence: nothing here trusts a hash against a forger.
#pragma once

#include <cstdint>
#include <string>

namespace modelstat::suite {

constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ULL;
constexpr uint64_t kFnvPrime = 0x100000001b3ULL;

inline uint64_t fnv1a64(const void* data, size_t size, uint64_t hash = kFnvOffset) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) hash = (hash ^ bytes[i]) * kFnvPrime;
  return hash;
}

// 16 lower-case hex digits.
std::string hash_hex(uint64_t hash);
inline std::string hash_text(const std::string& text) { return hash_hex(fnv1a64(text.data(), text.size())); }
// The hash of a file's bytes; Error(Input) naming the file when it cannot be read.
std::string hash_file(const std::string& path);

}  // namespace modelstat::suite
