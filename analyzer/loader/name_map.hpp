// Private to analyzer/loader: a hash map from tensor names to values, for the
// loader's per-name tables (graph order, shape inference, the IR builder).
// Keys are views into the parsed model's own strings, which outlive the map.
//
// Why not std::unordered_map: on a 100,000-node graph these tables hold
// 100k+ names each, and a node-based map spends a heap allocation per entry
// and a pointer chase per probe; they were a quarter of the whole analysis's
// cycles. This one is open addressing with linear probing in one array, the
// hash kept in each slot so that a probe compares characters only when the
// hashes match; it is sized for at most half full, so reserve what is known.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

namespace modelstat::loader {

template <typename V>
class NameMap {
 public:
  explicit NameMap(size_t expected = 0) { reserve(expected); }

  // Room for n entries without growing.
  void reserve(size_t n) {
    size_t capacity = 16;
    while (capacity < 2 * n) capacity *= 2;  // load at most 1/2
    if (capacity > slots_.size()) rehash(capacity);
  }

  V* find(std::string_view key) {
    const size_t i = probe(key, hash(key));
    return slots_[i].data ? &slots_[i].value : nullptr;
  }
  const V* find(std::string_view key) const { return const_cast<NameMap*>(this)->find(key); }
  bool contains(std::string_view key) const { return find(key) != nullptr; }

  // The entry of key, inserted with `value` when absent; second: inserted.
  std::pair<V*, bool> try_emplace(std::string_view key, V value) {
    if (2 * (size_ + 1) > slots_.size()) rehash(slots_.size() * 2);
    const uint32_t h = hash(key);
    const size_t i = probe(key, h);
    Slot& s = slots_[i];
    if (s.data) return {&s.value, false};
    // An empty name still needs a non-null pointer: the slot's mark of use.
    s = Slot{key.data() ? key.data() : "", uint32_t(key.size()), h, std::move(value)};
    ++size_;
    return {&s.value, true};
  }
  V& operator[](std::string_view key) { return *try_emplace(key, V{}).first; }

  size_t size() const { return size_; }

 private:
  // 24 bytes for a pointer or int value: the key as pointer and length
  // (names are far below 4 GiB), 32 bits of the hash to skip most compares.
  struct Slot {
    const char* data = nullptr;  // null: empty
    uint32_t size = 0;
    uint32_t hash = 0;
    V value{};
    std::string_view key() const { return {data, size}; }
  };

  static uint32_t hash(std::string_view key) {
    const uint64_t h = std::hash<std::string_view>{}(key);
    return uint32_t(h ^ (h >> 32));
  }

  // The slot holding key, or the empty slot where it belongs.
  size_t probe(std::string_view key, uint32_t h) const {
    const size_t mask = slots_.size() - 1;
    for (size_t i = size_t(h) & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (!s.data || (s.hash == h && s.key() == key)) return i;
    }
  }

  void rehash(size_t capacity) {
    std::vector<Slot> old(capacity);
    old.swap(slots_);
    for (Slot& s : old)
      if (s.data) slots_[probe(s.key(), s.hash)] = std::move(s);
  }

  std::vector<Slot> slots_ = std::vector<Slot>(16);
  size_t size_ = 0;
};

}  // namespace modelstat::loader
