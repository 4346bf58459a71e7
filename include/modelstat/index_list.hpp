// A short list of indices with its first 4 inline: the graph IR's node inputs
// and outputs and a tensor's consumers (graph.hpp). Most such lists hold 1-4
// indices, and a 100,000-node graph has ~300,000 of them: as std::vector<int>
// each was a heap block of its own (its allocation, its free, 32 bytes of the
// heap among the IR's other blocks). Longer lists go to the heap as a
// vector's would. Same size as a std::vector<int> (24 bytes).
//
// The part of std::vector<int>'s interface the code uses. There is no
// implicit conversion to a std::vector<int> (a `const std::vector<int>&`
// bound to a list would silently be a copy, stale once the list changes):
// `to_vector()` says where a copy is made.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <stdexcept>
#include <vector>

namespace modelstat {

class IndexList {
 public:
  using value_type = int;
  using size_type = size_t;
  using difference_type = std::ptrdiff_t;
  using iterator = int*;
  using const_iterator = const int*;
  using reference = int&;
  using const_reference = const int&;
  using pointer = int*;
  using const_pointer = const int*;

  static constexpr size_t kInline = 4;  // indices held without a heap block

  IndexList() = default;
  IndexList(std::initializer_list<int> v) { assign(v.begin(), v.end()); }
  IndexList(const std::vector<int>& v) { assign(v.begin(), v.end()); }  // NOLINT: as a vector's copy
  IndexList(const IndexList& o) { assign(o.begin(), o.end()); }
  IndexList(IndexList&& o) noexcept { take(o); }
  IndexList& operator=(const IndexList& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  IndexList& operator=(IndexList&& o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  IndexList& operator=(std::initializer_list<int> v) {
    assign(v.begin(), v.end());
    return *this;
  }
  IndexList& operator=(const std::vector<int>& v) {
    assign(v.begin(), v.end());
    return *this;
  }
  ~IndexList() { release(); }

  std::vector<int> to_vector() const { return std::vector<int>(begin(), end()); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return capacity_; }
  bool on_heap() const { return capacity_ > kInline; }
  int* data() { return on_heap() ? heap_ : inline_; }
  const int* data() const { return on_heap() ? heap_ : inline_; }
  int* begin() { return data(); }
  int* end() { return data() + size_; }
  const int* begin() const { return data(); }
  const int* end() const { return data() + size_; }
  const int* cbegin() const { return begin(); }
  const int* cend() const { return end(); }
  int& operator[](size_t i) { return data()[i]; }
  const int& operator[](size_t i) const { return data()[i]; }
  int& at(size_t i) {
    if (i >= size_) throw std::out_of_range("IndexList::at");
    return data()[i];
  }
  const int& at(size_t i) const {
    if (i >= size_) throw std::out_of_range("IndexList::at");
    return data()[i];
  }
  int& front() { return data()[0]; }
  const int& front() const { return data()[0]; }
  int& back() { return data()[size_ - 1]; }
  const int& back() const { return data()[size_ - 1]; }

  void reserve(size_t n) {
    if (n > capacity_) grow(n);
  }
  void push_back(int v) {
    if (size_ == capacity_) grow(2 * size_t(capacity_));
    data()[size_++] = v;
  }
  int& emplace_back(int v) {
    push_back(v);
    return back();
  }
  void pop_back() { --size_; }
  void clear() { size_ = 0; }
  void resize(size_t n, int v = 0) {
    reserve(n);
    int* d = data();
    for (size_t i = size_; i < n; ++i) d[i] = v;
    size_ = uint32_t(n);
  }
  template <typename It>
  void assign(It first, It last) {
    clear();
    reserve(size_t(std::distance(first, last)));
    int* d = data();
    for (; first != last; ++first) d[size_++] = int(*first);
  }
  int* insert(const int* pos, int v) {
    const size_t at = size_t(pos - begin());
    push_back(v);
    std::rotate(begin() + at, end() - 1, end());
    return begin() + at;
  }
  // [first, last) must not point into this list (as for std::vector).
  template <typename It>
  int* insert(const int* pos, It first, It last) {
    const size_t at = size_t(pos - begin()), old = size_;
    for (; first != last; ++first) push_back(int(*first));
    std::rotate(begin() + at, begin() + old, end());
    return begin() + at;
  }
  int* erase(const int* pos) { return erase(pos, pos + 1); }
  int* erase(const int* first, const int* last) {
    int* f = begin() + (first - begin());
    int* e = std::move(begin() + (last - begin()), end(), f);
    size_ = uint32_t(e - begin());
    return f;
  }
  void swap(IndexList& o) noexcept {
    IndexList t(std::move(o));
    o = std::move(*this);
    *this = std::move(t);
  }

  friend bool operator==(const IndexList& a, const IndexList& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator!=(const IndexList& a, const IndexList& b) { return !(a == b); }
  friend bool operator==(const IndexList& a, const std::vector<int>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator==(const std::vector<int>& a, const IndexList& b) { return b == a; }
  friend bool operator!=(const IndexList& a, const std::vector<int>& b) { return !(a == b); }
  friend bool operator!=(const std::vector<int>& a, const IndexList& b) { return !(b == a); }

 private:
  void grow(size_t n) {
    n = std::max(n, kInline + 1);
    int* p = new int[n];
    std::copy(begin(), end(), p);
    release();
    heap_ = p;
    capacity_ = uint32_t(n);
  }
  void release() {
    if (on_heap()) delete[] heap_;
    capacity_ = uint32_t(kInline);
  }
  void take(IndexList& o) {
    size_ = o.size_;
    capacity_ = o.capacity_;
    if (o.on_heap()) {
      heap_ = o.heap_;
    } else {
      std::copy(o.inline_, o.inline_ + o.size_, inline_);
    }
    o.size_ = 0;
    o.capacity_ = uint32_t(kInline);
  }

  uint32_t size_ = 0;
  uint32_t capacity_ = uint32_t(kInline);  // > kInline: heap_ holds the indices
  union {
    int inline_[kInline];
    int* heap_;
  };
};

}  // namespace modelstat
