// Private to analyzer: transparent huge pages for the few large blocks of
// memory an analysis of a big graph fills at once (the parsed model's arena,
// the IR's tensor and node arrays, the analysis's rows).
//
// Why: each first touch of a 4 KiB page of new memory is a page fault, ~1-3 us
// of system time on a VM. A 100,000-node graph fills ~150 MB while it loads,
// ~40,000 faults: a quarter of the whole analysis. A 2 MiB huge page takes
// one fault where 512 small pages took 512. Only a hint: where the kernel
// has THP off (or no huge page is free), the memory is ordinary memory.
// Blocks below kHugePageBytes are left alone: a small model loads as before.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <new>

namespace modelstat {

constexpr size_t kHugePageBytes = size_t(2) << 20;

// Marks the whole 2 MiB pages inside [p, p + bytes) for huge pages, before
// they are touched (madvise on memory already faulted in changes nothing
// until khugepaged gets to it).
inline void advise_huge_pages(const void* p, size_t bytes) {
  if (bytes < 2 * kHugePageBytes) return;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(kHugePageBytes - 1);
  if (end > begin) (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

// Arena blocks (google::protobuf::ArenaOptions::block_alloc / block_dealloc)
// as whole, aligned huge pages from mmap.
inline size_t huge_block_length(size_t bytes) { return (bytes + kHugePageBytes - 1) & ~(kHugePageBytes - 1); }

inline void* huge_block_alloc(size_t bytes) {
  const size_t length = huge_block_length(bytes);
  // Over-allocate by one huge page, then unmap the unaligned head and tail.
  void* raw = ::mmap(nullptr, length + kHugePageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  if (aligned > start) ::munmap(raw, aligned - start);
  const size_t tail = start + length + kHugePageBytes - (aligned + length);
  if (tail) ::munmap(reinterpret_cast<void*>(aligned + length), tail);
  (void)::madvise(reinterpret_cast<void*>(aligned), length, MADV_HUGEPAGE);
  return reinterpret_cast<void*>(aligned);
}

inline void huge_block_dealloc(void* p, size_t bytes) { ::munmap(p, huge_block_length(bytes)); }

}  // namespace modelstat
