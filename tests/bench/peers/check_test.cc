// The benchmark's check (bench/peers/check.h) agrees with the scalar reference
// (core/reference.h), and a wrong implementation is caught by it.
#include "bench/peers/check.h"

#include <cmath>
#include <vector>

#include "bench/peers/peer.h"
#include "gtest/gtest.h"

namespace amarena::bench {
namespace {

// Runs CheckAgainstReference on `c` as the output of ref's problem.
Verdict CoreVerdict(const Reference& ref, const std::vector<float>& c) {
  const Problem& p = ref.problem();
  std::vector<uint8_t> before(p.m * p.n * sizeof(float), 0);
  std::copy(c.begin(), c.end(), ref.c());
  return CheckAgainstReference(ref.spec(), ref.operands(), before);
}

TEST(CheckTest, AgreesWithCoreReference) {
  for (Problem p : {Problem{1, 1, 1}, Problem{7, 13, 9}, Problem{33, 100, 17},
                    Problem{1, 300, 40}}) {
    Reference ref(p, /*seed=*/3);
    // The exact product rounded to f32 passes both; the same with one element
    // off by a few ulps of the magnitudes summed fails both.
    std::unique_ptr<Peer> wrong = MakeWrongPeer();
    std::vector<float> exact(p.m * p.n);
    {
      const float *a = ref.a(), *b = ref.b();
      for (int64_t i = 0; i < p.m; ++i)
        for (int64_t j = 0; j < p.n; ++j) {
          double s = 0;
          for (int64_t k = 0; k < p.k; ++k)
            s += static_cast<double>(a[i * p.k + k]) * b[k * p.n + j];
          exact[i * p.n + j] = static_cast<float>(s);
        }
    }
    Verdict mine = ref.Check(exact.data());
    Verdict core = CoreVerdict(ref, exact);
    EXPECT_TRUE(mine.ok);
    EXPECT_TRUE(core.ok);
    EXPECT_DOUBLE_EQ(mine.tolerance, core.tolerance);
    EXPECT_NEAR(mine.max_rel_err, core.max_rel_err, 1e-12);

    std::vector<float> off = exact;
    off[off.size() / 2] += 1.0f;
    mine = ref.Check(off.data());
    core = CoreVerdict(ref, off);
    EXPECT_FALSE(mine.ok);
    EXPECT_FALSE(core.ok);
    EXPECT_NEAR(mine.max_rel_err, core.max_rel_err, 1e-9 * core.max_rel_err);
  }
}

TEST(CheckTest, WrongImplementationIsAnError) {
  Reference ref(Problem{16, 64, 24});
  std::unique_ptr<Peer> wrong = MakePeer("wrong");
  ASSERT_NE(wrong, nullptr);
  ASSERT_TRUE(wrong->Init(IsaCap::kAvx2).ok());
  absl::StatusOr<std::unique_ptr<PreparedGemm>> g =
      wrong->Prepare(ref.problem(), 1, ref.a(), ref.b(), ref.c());
  ASSERT_TRUE(g.ok());
  absl::Status s = VerifyOnce(**g, ref);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("wrong result"), absl::string_view::npos)
      << s.message();
}

TEST(CheckTest, AmarenaPasses) {
  Reference ref(Problem{49, 64, 33});
  std::unique_ptr<Peer> amarena = MakePeer("amarena");
  ASSERT_TRUE(amarena->Init(IsaCap::kAvx2).ok());
  absl::StatusOr<std::unique_ptr<PreparedGemm>> g =
      amarena->Prepare(ref.problem(), 1, ref.a(), ref.b(), ref.c());
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_TRUE(VerifyOnce(**g, ref).ok());
}

// An implementation that leaves part of C unwritten is caught: the check
// fills C with a sentinel first.
class NoOpGemm : public PreparedGemm {
 public:
  void Run() override {}
};

TEST(CheckTest, UnwrittenOutputIsAnError) {
  Reference ref(Problem{8, 8, 8});
  NoOpGemm g;
  EXPECT_FALSE(VerifyOnce(g, ref).ok());
}

}  // namespace
}  // namespace amarena::bench
