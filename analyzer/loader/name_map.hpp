// Private to analyzer/loader: a hash map from tensor names to values, for the
// loader's per-name tables (graph order, shape inference, the IR builder).
// Keys are views into the parsed model's own strings, which outlive the map.
//
// Why not std::unordered_map: on a 100,000-node graph these tables hold
// 100k+ names each, and a node-based map spends a heap allocation per entry
// and a pointer chase per probe. Why not one array of (key, value) slots
// either: at 24 bytes a slot and a load of at most 1/2, 100k names take 6 MiB
// of slots touched at random, a cache miss (and often a TLB miss) per probe;
// those misses were a quarter of a 100k-node analysis's cycles. So the entries
// sit in one dense array in insertion order (graphs are read in node order:
// an entry looked up is usually one inserted recently, still in cache), and
// the open-addressing table (linear probing, load at most 1/2) holds 8 bytes
// a slot: the hash, so that a probe reads an entry only when hashes match,
// and the entry's position. 100k names: 2 MiB of table, 2.4 MiB of entries.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

namespace modelstat::loader {

// How many nodes ahead a loop prefetches names (NameMap::prefetch): enough
// to cover a memory access's latency with the work on the nodes between.
constexpr int kPrefetchAhead = 8;

template <typename V>
class NameMap {
 public:
  explicit NameMap(size_t expected = 0) { reserve(expected); }

  // Room for n entries without growing (pointers to values stay valid while
  // the map holds at most n entries).
  void reserve(size_t n) {
    entries_.reserve(n);
    size_t capacity = 16;
    while (capacity < 2 * n) capacity *= 2;  // load at most 1/2
    if (capacity > slots_.size()) rehash(capacity);
  }

  V* find(std::string_view key) { return find(key, hash(key)); }
  // With key's hash_of(key) computed already: one name looked up in several
  // maps (a type and a value by name) is hashed once.
  V* find(std::string_view key, uint32_t h) {
    const Slot& s = slots_[probe(key, h)];
    return s.entry ? &entries_[s.entry - 1].value : nullptr;
  }
  const V* find(std::string_view key, uint32_t h) const { return const_cast<NameMap*>(this)->find(key, h); }
  static uint32_t hash_of(std::string_view key) { return hash(key); }
  const V* find(std::string_view key) const { return const_cast<NameMap*>(this)->find(key); }
  bool contains(std::string_view key) const { return find(key) != nullptr; }
  bool contains(std::string_view key, uint32_t h) const { return find(key, h) != nullptr; }

  // The entry of key, inserted with `value` when absent; second: inserted.
  std::pair<V*, bool> try_emplace(std::string_view key, V value) { return try_emplace(key, hash(key), std::move(value)); }
  // With h = hash_of(key).
  std::pair<V*, bool> try_emplace(std::string_view key, uint32_t h, V value) {
    if (2 * (entries_.size() + 1) > slots_.size()) rehash(slots_.size() * 2);
    Slot& s = slots_[probe(key, h)];
    if (s.entry) return {&entries_[s.entry - 1].value, false};
    // An empty name still needs a non-null pointer, like every other key.
    entries_.push_back(Entry{key.data() ? key.data() : "", uint32_t(key.size()), std::move(value)});
    s = Slot{h, uint32_t(entries_.size())};
    return {&entries_.back().value, true};
  }
  V& operator[](std::string_view key) { return *try_emplace(key, V{}).first; }

  size_t size() const { return entries_.size(); }

  // Starts loading the slot of key into the cache, for a find or try_emplace
  // of it soon after. A table of 100k names is larger than the caches: a
  // probe costs a trip to memory (~100 ns), which a loop over nodes hides by
  // prefetching the names of a node kPrefetchAhead nodes ahead.
  void prefetch(std::string_view key) const { prefetch_hash(hash(key)); }
  // The same for a hash_of(key) computed already (PrefetchedHashes).
  void prefetch_hash(uint32_t h) const { __builtin_prefetch(&slots_[size_t(h) & (slots_.size() - 1)]); }

 private:
  // Names are far below 4 GiB, and a graph far below 4G names.
  struct Entry {
    const char* data;
    uint32_t size;
    V value;
    std::string_view key() const { return {data, size}; }
  };
  struct Slot {
    uint32_t hash = 0;
    uint32_t entry = 0;  // position in entries_ + 1; 0: empty
  };

  // std::hash (MurmurHash2). An inline hash (8 bytes a step, murmur3's
  // finaliser), as well spread (1.31 slots a probe on 100k names, the same),
  // made a 100k-node load slower where it was measured (2026-11-27: build IR
  // +25%, inference +15%, the time on the slot loads the prefetch should have
  // covered); why is not established. Hashing is not what costs here: the
  // trips to memory are.
  static uint32_t hash(std::string_view key) {
    const uint64_t h = std::hash<std::string_view>{}(key);
    return uint32_t(h ^ (h >> 32));
  }

  // The slot holding key, or the empty slot where it belongs.
  size_t probe(std::string_view key, uint32_t h) const {
    const size_t mask = slots_.size() - 1;
    for (size_t i = size_t(h) & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (!s.entry || (s.hash == h && entries_[s.entry - 1].key() == key)) return i;
    }
  }

  void rehash(size_t capacity) {
    std::vector<Slot> old(capacity);
    old.swap(slots_);
    const size_t mask = capacity - 1;
    for (const Slot& s : old) {
      if (!s.entry) continue;
      size_t i = size_t(s.hash) & mask;
      while (slots_[i].entry) i = (i + 1) & mask;  // keys are distinct: no compare
      slots_[i] = s;
    }
  }

  std::vector<Slot> slots_ = std::vector<Slot>(16);
  std::vector<Entry> entries_;
};

// The hashes of the names a loop prefetches kPrefetchAhead nodes ahead, kept
// until the loop reaches those names: each name is hashed once, not once
// for the prefetch and again for the lookup (a 100k-node graph's names are
// hashed ~2M times over a load otherwise). First in, first out: the loop
// takes them in the order it pushed them.
class PrefetchedHashes {
 public:
  // hash_of(name), kept, and name's slot in `map` prefetched.
  template <typename Map>
  void push(const Map& map, std::string_view name) {
    const uint32_t h = Map::hash_of(name);
    map.prefetch_hash(h);
    queue_.push_back(h);
  }
  // The hash pushed first of those not taken yet.
  uint32_t pop() {
    const uint32_t h = queue_.front();
    queue_.pop_front();
    return h;
  }

 private:
  std::deque<uint32_t> queue_;
};

}  // namespace modelstat::loader
