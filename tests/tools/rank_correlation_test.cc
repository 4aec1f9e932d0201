#include "tools/rank_correlation.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace amarena::tools {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::Optional;

TEST(RankCorrelationTest, TiesTakeTheAverageOfTheirRanks) {
  const std::vector<double> v = {5, 7, 7, 9};
  EXPECT_THAT(AverageRanks(v), ElementsAre(1, 2.5, 2.5, 4));
  const std::vector<double> w = {3, 1, 3, 3, 0};
  EXPECT_THAT(AverageRanks(w), ElementsAre(4, 2, 4, 4, 1));
}

TEST(RankCorrelationTest, MonotoneOrdersGiveOneAndMinusOne) {
  const std::vector<double> x = {1, 2, 3, 4, 5};
  const std::vector<double> up = {10, 20, 25, 400, 1000};  // not linear
  const std::vector<double> down = {9, 8, 7, 1, 0};
  EXPECT_THAT(SpearmanRho(x, up), Optional(DoubleNear(1, 1e-12)));
  EXPECT_THAT(SpearmanRho(x, down), Optional(DoubleNear(-1, 1e-12)));
}

// Without ties, rho is the textbook 1 - 6 sum d^2 / (n (n^2 - 1)), with
// n (n^2 - 1) = 120 for five pairs.
TEST(RankCorrelationTest, MatchesTheTextbookFormulaWithoutTies) {
  const std::vector<double> x = {10, 20, 30, 40, 50};
  const std::vector<double> y = {1, 3, 2, 5, 4};
  // ranks of y: 1, 3, 2, 5, 4: d = 0, -1, 1, -1, 1, sum d^2 = 4:
  // 1 - 24 / 120 = 0.8.
  EXPECT_THAT(SpearmanRho(x, y), Optional(DoubleNear(0.8, 1e-12)));
  const std::vector<double> z = {1, 2, 5, 3, 4};
  // ranks 1, 2, 5, 3, 4: d = 0, 0, -2, 1, 1, sum d^2 = 6: 1 - 36 / 120.
  EXPECT_THAT(SpearmanRho(x, z), Optional(DoubleNear(0.7, 1e-12)));
}

// With ties, rho is Pearson's correlation of the average ranks: x ranks
// 1, 2.5, 2.5, 4 and y 1, 2, 3, 4, each centred on 2.5, so
// sum dx dy = 2.25 + 0 + 0 + 2.25 = 4.5, sum dx^2 = 4.5, sum dy^2 = 5 and
// rho = 4.5 / sqrt(22.5).
TEST(RankCorrelationTest, TiesUsePearsonOnAverageRanks) {
  const std::vector<double> x = {1, 2, 2, 3};
  const std::vector<double> y = {1, 2, 3, 4};
  EXPECT_THAT(SpearmanRho(x, y),
              Optional(DoubleNear(0.9486832980505138, 1e-12)));
  // Symmetric in its arguments.
  EXPECT_THAT(SpearmanRho(y, x),
              Optional(DoubleNear(0.9486832980505138, 1e-12)));
}

TEST(RankCorrelationTest, UndefinedCasesAreNullopt) {
  const std::vector<double> one = {1};
  const std::vector<double> two = {1, 2};
  const std::vector<double> flat = {3, 3};
  const std::vector<double> three = {1, 2, 3};
  EXPECT_EQ(SpearmanRho(one, one), std::nullopt);
  EXPECT_EQ(SpearmanRho(two, flat), std::nullopt);
  EXPECT_EQ(SpearmanRho(two, three), std::nullopt);
  EXPECT_THAT(SpearmanRho(two, two), Optional(DoubleNear(1, 1e-12)));
}

}  // namespace
}  // namespace amarena::tools
