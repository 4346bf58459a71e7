// Concat as rows of bytes (concat_rows.hpp).
#include "profiler/ops/concat_rows.hpp"

#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>

#include <cstring>
#include <numeric>

namespace modelstat::profiler {

namespace {

// memcpy for a row of `n` bytes; a short row (a detector's [N, 2] scores
// joined on the last axis: 8 bytes a row) in fixed-size moves the compiler
// inlines, where a call per row cost more than the copy (UltraFace's Concat
// of two [1, 4420, 2]: 59 us in 8840 calls).
inline void copy_row(char* d, const char* s, size_t n) {
  if (n > 256) {
    std::memcpy(d, s, n);
    return;
  }
  for (; n >= 32; n -= 32, d += 32, s += 32) __builtin_memcpy(d, s, 32);
  if (n >= 16) __builtin_memcpy(d, s, 16), n -= 16, d += 16, s += 16;
  if (n >= 8) __builtin_memcpy(d, s, 8), n -= 8, d += 8, s += 8;
  if (n >= 4) __builtin_memcpy(d, s, 4), n -= 4, d += 4, s += 4;
  for (; n > 0; --n) *d++ = *s++;
}

}  // namespace

std::optional<at::Tensor> concat_rows(const std::vector<at::Tensor>& parts, int64_t axis) {
  const at::Tensor& first = parts[0];
  const int64_t rank = first.dim();
  if (!first.device().is_cpu() || rank == 0) return std::nullopt;
  // The layout of the largest part (its bytes are most of the copy): a
  // channel pad written as Concat(x, zeros) of a channels-last x stays
  // channels-last, not transposed here and back in the next Conv.
  const at::Tensor* largest = &first;
  for (const at::Tensor& p : parts) {
    if (p.numel() > largest->numel()) largest = &p;
    if (at::GradMode::is_enabled() && p.requires_grad()) return std::nullopt;
  }
  const bool channels_last =
      rank == 4 && !largest->is_contiguous() && largest->is_contiguous(at::MemoryFormat::ChannelsLast);
  std::vector<int64_t> order(static_cast<size_t>(rank));  // dims, outermost in memory first
  std::iota(order.begin(), order.end(), int64_t(0));
  if (channels_last) order = {0, 2, 3, 1};
  const at::MemoryFormat format = channels_last ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::Contiguous;
  std::vector<int64_t> dims = first.sizes().vec();
  dims[size_t(axis)] = 0;
  std::vector<at::Tensor> laid;  // the parts in the output's layout (a part in another is copied first)
  for (const at::Tensor& p : parts) {
    if (p.dim() != rank || p.scalar_type() != first.scalar_type() || !p.device().is_cpu()) return std::nullopt;
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis && p.size(d) != first.size(d)) return std::nullopt;
    dims[size_t(axis)] += p.size(axis);
    laid.push_back(p.is_contiguous(format) ? p : p.contiguous(format));
  }
  at::Tensor out = at::empty(dims, first.options().memory_format(format));
  int64_t outer = 1;
  for (int64_t d : order) {
    if (d == axis) break;
    outer *= dims[size_t(d)];
  }
  if (out.numel() == 0) return out;
  const int64_t item = int64_t(first.element_size());
  std::vector<const char*> src;
  std::vector<int64_t> row;  // bytes of each part's row
  for (const at::Tensor& p : laid) {
    if (p.numel() == 0) continue;
    src.push_back(static_cast<const char*>(p.data_ptr()));
    row.push_back(p.numel() / outer * item);
  }
  const int64_t out_row = out.numel() / outer * item;
  char* dst = static_cast<char*>(out.data_ptr());
  constexpr int64_t kBytesPerTask = 64 << 10;
  at::parallel_for(0, outer, std::max<int64_t>(1, kBytesPerTask / out_row), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      char* o = dst + r * out_row;
      for (size_t i = 0; i < src.size(); ++i) {
        copy_row(o, src[i] + r * row[i], size_t(row[i]));
        o += row[i];
      }
    }
  });
  return out;
}

}  // namespace modelstat::profiler
