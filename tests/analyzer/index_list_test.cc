// IndexList (include/modelstat/index_list.hpp), the graph IR's list of node
// inputs, outputs and tensor consumers: 4 indices inline, more on the heap.
// Expected contents are written out by hand for each step.
#include "modelstat/index_list.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <stdexcept>
#include <utility>
#include <vector>

namespace modelstat {
namespace {

std::vector<int> contents(const IndexList& l) { return std::vector<int>(l.begin(), l.end()); }

TEST(IndexList, AnEmptyListHoldsNothingAndHasItsInlineRoom) {
  IndexList l;
  EXPECT_TRUE(l.empty());
  EXPECT_EQ(l.size(), 0u);
  EXPECT_EQ(l.begin(), l.end());
  EXPECT_EQ(l.capacity(), 4u);
  EXPECT_FALSE(l.on_heap());
  // The size of the std::vector<int> it replaces (3 pointers on x86-64).
  EXPECT_EQ(sizeof(IndexList), 24u);
}

TEST(IndexList, PushBackPastTheInlineRoomMovesToTheHeapAndKeepsOrder) {
  IndexList l;
  for (int v : {10, 20, 30, 40}) l.push_back(v);
  EXPECT_FALSE(l.on_heap());
  EXPECT_EQ(l.capacity(), 4u);
  EXPECT_EQ(contents(l), (std::vector<int>{10, 20, 30, 40}));

  l.push_back(50);  // the 5th: 8 places on the heap
  EXPECT_TRUE(l.on_heap());
  EXPECT_EQ(l.capacity(), 8u);
  EXPECT_EQ(l.size(), 5u);
  EXPECT_EQ(contents(l), (std::vector<int>{10, 20, 30, 40, 50}));
  EXPECT_EQ(l.front(), 10);
  EXPECT_EQ(l.back(), 50);
  EXPECT_EQ(l[2], 30);

  for (int v : {60, 70, 80, 90}) l.push_back(v);  // the 9th doubles again: 16
  EXPECT_EQ(l.capacity(), 16u);
  EXPECT_EQ(contents(l), (std::vector<int>{10, 20, 30, 40, 50, 60, 70, 80, 90}));
  // 10 + 20 + ... + 90 = 450.
  EXPECT_EQ(std::accumulate(l.begin(), l.end(), 0), 450);
  int seen = 0;
  for (int& v : l) v += 1;  // iteration writes through
  for (int v : l) seen += v;
  EXPECT_EQ(seen, 459);

  l.pop_back();
  EXPECT_EQ(l.size(), 8u);
  EXPECT_EQ(l.back(), 81);
}

TEST(IndexList, CopiesAreEqualAndIndependentInlineAndOnTheHeap) {
  IndexList small{1, 2};
  IndexList small_copy(small);
  small_copy[0] = 7;
  EXPECT_EQ(contents(small), (std::vector<int>{1, 2}));
  EXPECT_EQ(contents(small_copy), (std::vector<int>{7, 2}));

  IndexList big{1, 2, 3, 4, 5, 6};
  IndexList big_copy(big);
  EXPECT_TRUE(big_copy.on_heap());
  EXPECT_NE(big_copy.data(), big.data());
  EXPECT_EQ(big_copy, big);
  big_copy.push_back(7);
  EXPECT_EQ(contents(big), (std::vector<int>{1, 2, 3, 4, 5, 6}));

  // Copy-assignment in both directions between inline and heap lists.
  small_copy = big;
  EXPECT_EQ(contents(small_copy), (std::vector<int>{1, 2, 3, 4, 5, 6}));
  big_copy = small;
  EXPECT_EQ(contents(big_copy), (std::vector<int>{1, 2}));
  IndexList& alias = big_copy;
  big_copy = alias;  // self-assignment keeps the contents
  EXPECT_EQ(contents(big_copy), (std::vector<int>{1, 2}));
}

TEST(IndexList, MovesTakeTheHeapBlockAndLeaveTheSourceEmpty) {
  IndexList big{1, 2, 3, 4, 5};
  const int* block = big.data();
  IndexList moved(std::move(big));
  EXPECT_EQ(moved.data(), block);  // the block changed hands, not copied
  EXPECT_EQ(contents(moved), (std::vector<int>{1, 2, 3, 4, 5}));
  EXPECT_TRUE(big.empty());  // NOLINT(bugprone-use-after-move): the moved-from state is specified
  EXPECT_FALSE(big.on_heap());
  big.push_back(9);  // usable again
  EXPECT_EQ(contents(big), (std::vector<int>{9}));

  IndexList small{3, 4};
  IndexList moved_small(std::move(small));
  EXPECT_EQ(contents(moved_small), (std::vector<int>{3, 4}));
  EXPECT_TRUE(small.empty());  // NOLINT(bugprone-use-after-move)

  // Move-assignment onto a heap list frees its block and takes the inline one's contents.
  moved = std::move(moved_small);
  EXPECT_FALSE(moved.on_heap());
  EXPECT_EQ(contents(moved), (std::vector<int>{3, 4}));

  // A vector of lists reallocating moves each list (noexcept move).
  std::vector<IndexList> lists;
  for (int i = 0; i < 100; ++i) {
    IndexList l;
    for (int k = 0; k <= i % 7; ++k) l.push_back(i * 10 + k);
    lists.push_back(std::move(l));
  }
  EXPECT_EQ(contents(lists[0]), (std::vector<int>{0}));
  EXPECT_EQ(contents(lists[3]), (std::vector<int>{30, 31, 32, 33}));
  EXPECT_EQ(contents(lists[6]), (std::vector<int>{60, 61, 62, 63, 64, 65, 66}));
  EXPECT_EQ(contents(lists[99]), (std::vector<int>{990, 991}));  // 99 % 7 == 1: two
  EXPECT_EQ(lists.size(), 100u);
}

TEST(IndexList, EqualityComparesTheIndicesNotTheStorage) {
  IndexList inline_list{1, 2, 3};
  IndexList heap_list;
  heap_list.reserve(10);
  for (int v : {1, 2, 3}) heap_list.push_back(v);
  EXPECT_TRUE(heap_list.on_heap());
  EXPECT_TRUE(inline_list == heap_list);
  EXPECT_FALSE(inline_list != heap_list);
  EXPECT_TRUE(inline_list == (std::vector<int>{1, 2, 3}));
  EXPECT_TRUE((std::vector<int>{1, 2, 3}) == inline_list);
  EXPECT_TRUE(inline_list != (IndexList{1, 2}));        // a prefix
  EXPECT_TRUE(inline_list != (IndexList{1, 2, 3, 4}));  // longer
  EXPECT_TRUE(inline_list != (std::vector<int>{1, 2, 4}));
  EXPECT_TRUE((std::vector<int>{}) != inline_list);
  EXPECT_TRUE(IndexList{} == std::vector<int>{});
}

TEST(IndexList, InsertAndEraseShiftTheRestAcrossTheInlineBoundary) {
  IndexList l{1, 2, 4, 5};
  int* at = l.insert(l.begin() + 2, 3);  // the 5th index: now on the heap
  EXPECT_EQ(*at, 3);
  EXPECT_TRUE(l.on_heap());
  EXPECT_EQ(contents(l), (std::vector<int>{1, 2, 3, 4, 5}));
  l.insert(l.begin(), 0);
  l.insert(l.end(), 6);
  EXPECT_EQ(contents(l), (std::vector<int>{0, 1, 2, 3, 4, 5, 6}));

  const std::vector<int> more{7, 8};
  at = l.insert(l.begin() + 1, more.begin(), more.end());
  EXPECT_EQ(*at, 7);
  EXPECT_EQ(contents(l), (std::vector<int>{0, 7, 8, 1, 2, 3, 4, 5, 6}));

  at = l.erase(l.begin() + 1);  // returns the element after the erased one
  EXPECT_EQ(*at, 8);
  EXPECT_EQ(contents(l), (std::vector<int>{0, 8, 1, 2, 3, 4, 5, 6}));
  at = l.erase(l.begin() + 1, l.begin() + 3);
  EXPECT_EQ(*at, 2);
  EXPECT_EQ(contents(l), (std::vector<int>{0, 2, 3, 4, 5, 6}));
  at = l.erase(l.end() - 1);
  EXPECT_EQ(at, l.end());
  EXPECT_EQ(contents(l), (std::vector<int>{0, 2, 3, 4, 5}));

  IndexList small{1, 3};
  small.insert(small.begin() + 1, 2);
  EXPECT_FALSE(small.on_heap());
  EXPECT_EQ(contents(small), (std::vector<int>{1, 2, 3}));
  small.erase(small.begin(), small.end());
  EXPECT_TRUE(small.empty());
}

TEST(IndexList, ResizeAssignAtAndSwap) {
  IndexList l{5};
  l.resize(3, -1);
  EXPECT_EQ(contents(l), (std::vector<int>{5, -1, -1}));
  l.resize(6);  // zeros, as a vector's
  EXPECT_EQ(contents(l), (std::vector<int>{5, -1, -1, 0, 0, 0}));
  l.resize(2);
  EXPECT_EQ(contents(l), (std::vector<int>{5, -1}));

  EXPECT_EQ(l.at(1), -1);
  EXPECT_THROW(l.at(2), std::out_of_range);

  l = std::vector<int>{4, 3, 2, 1, 0};
  EXPECT_EQ(contents(l), (std::vector<int>{4, 3, 2, 1, 0}));
  EXPECT_EQ(l.to_vector(), (std::vector<int>{4, 3, 2, 1, 0}));
  l = {8};
  EXPECT_EQ(contents(l), (std::vector<int>{8}));
  l.clear();
  EXPECT_TRUE(l.empty());

  IndexList a{1, 2};
  IndexList b{3, 4, 5, 6, 7};
  a.swap(b);
  EXPECT_EQ(contents(a), (std::vector<int>{3, 4, 5, 6, 7}));
  EXPECT_EQ(contents(b), (std::vector<int>{1, 2}));
}

}  // namespace
}  // namespace modelstat
