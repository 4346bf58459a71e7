// DimSymbol (include/modelstat/graph.hpp): a dim's dim_param, interned so a
// Dim is 16 bytes. Expected values written out by hand.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "modelstat/graph.hpp"

namespace modelstat {
namespace {

TEST(DimSymbol, NoSymbolAndTheEmptyTextAreTheSame) {
  const DimSymbol none;
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(none.str(), "");
  const DimSymbol from_empty("");
  EXPECT_TRUE(from_empty.empty());
  EXPECT_TRUE(none == from_empty);
  EXPECT_EQ(sizeof(Dim), 16u);  // an int64 and a pointer
}

TEST(DimSymbol, TheSameTextIsTheSameSymbolAndComparesWithStrings) {
  const std::string text = "batch";
  const DimSymbol a(text);
  const DimSymbol b("batch");
  const DimSymbol c(std::string_view("batch_size").substr(0, 5));  // "batch" from a longer buffer
  const DimSymbol seq("seq");
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a.str(), "batch");
  EXPECT_TRUE(a == b);
  EXPECT_TRUE(a == c);
  EXPECT_EQ(&a.str(), &c.str());  // one copy of the text
  EXPECT_TRUE(a != seq);
  EXPECT_TRUE(a == std::string("batch"));
  EXPECT_TRUE(std::string("batch") == a);
  EXPECT_TRUE(a != std::string("batch_size"));
  EXPECT_TRUE(std::string("seq") != a);
  EXPECT_TRUE(seq == "seq");
  EXPECT_TRUE(seq != "se");
  EXPECT_TRUE(DimSymbol() != "x");
  std::ostringstream os;
  os << a << "/" << seq << "/" << DimSymbol();
  EXPECT_EQ(os.str(), "batch/seq/");
}

TEST(DimSymbol, DimsCopyTheirSymbolAndShapesPrintIt) {
  Dim d{-1, "n"};
  Dim copy = d;
  EXPECT_FALSE(copy.known());
  EXPECT_TRUE(copy.symbol == "n");
  d.symbol = "m";  // the copy keeps its own
  EXPECT_TRUE(copy.symbol == "n");
  // "?" for an unknown dim without a symbol (Shape::to_string's convention).
  const Shape s{true, {Dim{-1, "batch"}, Dim{3, {}}, Dim{}, copy}};
  EXPECT_EQ(s.to_string(), "batchx3x?xn");
}

TEST(DimSymbol, ThreadsInterningTheSameTextsAgree) {
  // Each thread interns its own sequence of texts (the last-text shortcut is
  // a thread's own); all end on the same one copy of each.
  const std::vector<std::string> texts = {"t_alpha", "t_beta", "t_alpha", "t_gamma", "t_beta"};
  std::vector<std::vector<const std::string*>> seen(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < seen.size(); ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 200; ++round)
        for (const auto& x : texts) seen[t].push_back(&DimSymbol(x).str());
    });
  for (auto& th : threads) th.join();
  const std::string* alpha = &DimSymbol("t_alpha").str();
  const std::string* beta = &DimSymbol("t_beta").str();
  const std::string* gamma = &DimSymbol("t_gamma").str();
  for (const auto& list : seen) {
    ASSERT_EQ(list.size(), 1000u);
    for (size_t k = 0; k < list.size(); k += 5) {
      EXPECT_EQ(list[k], alpha);
      EXPECT_EQ(list[k + 1], beta);
      EXPECT_EQ(list[k + 2], alpha);
      EXPECT_EQ(list[k + 3], gamma);
      EXPECT_EQ(list[k + 4], beta);
    }
  }
  EXPECT_EQ(*gamma, "t_gamma");
}

}  // namespace
}  // namespace modelstat
