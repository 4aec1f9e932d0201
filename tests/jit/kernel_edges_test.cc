// Every kernel of the catalogue (core/kernels.h) on the edge shapes of one
// list, on both ISAs: extents below, at and above a vector (partial and
// masked tails), one and several rows, k of one, two, a vector and about the
// longest dot product one call unrolls, for f32, bf16 and f32*bf16 (f32
// activations, bf16 weights) and every layout of A and B, each also scaled
// (alpha) and into a bf16 C (accumulated in an f32 buffer, rounded back). Each
// shape becomes a root Spec in memory and a tree forced down to that kernel
// without tiling, so the kernel runs on the shape itself: views into L1, a
// register tile or a packing buffer on the way, every other subtree as the
// search makes it. With AVX2 the tree runs against the reference, with guard
// pages (tests/testing/check_kernel.h); with AVX-512 BF16 it is compiled (the
// bounds audit included) and run only where the host has AVX-512. A new kernel
// is covered by its catalogue row alone.
#include <algorithm>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/spec_text.h"
#include "gtest/gtest.h"
#include "search/action.h"
#include "search/replay.h"
#include "search/rewrites/registry.h"
#include "search/search.h"
#include "tests/testing/check_kernel.h"
#include "tests/testing/fixed_target.h"
#include "tests/testing/isa_runtime.h"

namespace amarena {
namespace {

// The one list: root Specs over the edge extents for `lanes` f32 lanes.
std::vector<Spec> EdgeRoots(int64_t lanes) {
  const int64_t rows[] = {1, 2, 6};
  const int64_t cols[] = {1, lanes - 1, lanes, lanes + 1, 2 * lanes + 1};
  const int64_t depths[] = {1,
                            2,
                            3,
                            lanes - 1,
                            lanes,
                            lanes + 1,
                            4 * lanes + 1,
                            kMaxDotVectors * lanes,
                            2 * kMaxDotVectors * lanes};
  std::vector<TensorAux> bs = {{}, {.layout = Order::kColMajor}};
  for (int64_t p : {lanes, 2 * lanes}) {
    bs.push_back({.layout = Layout::Panels(Order::kRowMajor, p)});
    bs.push_back({.layout = Layout::Panels(Order::kRowMajor, p).Paired()});
  }
  std::vector<Spec> out;
  for (int64_t m : rows)
    for (int64_t n : cols) {
      out.push_back(Spec::Zero(m, n, {}));
      for (int64_t k : depths)
        for (auto [a_dt, b_dt] : {std::pair{DType::kF32, DType::kF32},
                                  std::pair{DType::kBF16, DType::kBF16},
                                  std::pair{DType::kF32, DType::kBF16}})
          for (Order a_layout : {Order::kRowMajor, Order::kColMajor})
            for (TensorAux b : bs) {
              if (b.layout.paired() && b_dt != DType::kBF16) continue;
              b.dtype = b_dt;
              Spec s =
                  Spec::Matmul(m, k, n, {.dtype = a_dt, .layout = a_layout}, b,
                               {}, /*accum=*/true);
              out.push_back(s);
              Spec scaled = s;
              scaled.alpha = -1.5f;
              out.push_back(Canonical(scaled));
              Spec bf16_c = s;
              bf16_c.aux[2].dtype = DType::kBF16;
              out.push_back(Canonical(bf16_c));
            }
    }
  return out;
}

// Builds, in preorder, the decisions of a tree for `s` (bound) whose first
// leaf on the forced path selects `id` at the root's own extents: actions
// that move operands (views into L1, register tiles, packing into L1) until
// the kernel applies; the other children are searched. Empty if none.
class ForcedTree {
 public:
  ForcedTree(const Target& t, KernelId id)
      : t_(t), id_(id), searcher_(t), lanes_(t.f32_lanes) {}

  // Approaches are taken in their listed order (views, register tile,
  // packing), each at most once on the path: that order reaches every
  // combination, and keeps the walk small.
  bool Build(const Spec& s, std::vector<std::string>& out, size_t from = 0) {
    const Action select{.kind = ActionKind::kSelect, .kernel = id_};
    if (Try(s, select).has_value()) {
      out.push_back(Describe(select));
      leaf_ = s;
      return true;
    }
    const std::vector<Action> approaches = Approaches(s);
    for (size_t i = from; i < approaches.size(); ++i) {
      std::optional<Candidate> c = Try(s, approaches[i]);
      if (!c) continue;
      std::vector<std::string> sub = {Describe(approaches[i])};
      bool forced = false, ok = true;
      for (const Spec& child : c->expansion.children) {
        // A copy under a pack starts its own approaches.
        if (!forced && Build(child, sub, child.kind == s.kind ? i + 1 : 0)) {
          forced = true;
          continue;
        }
        absl::StatusOr<ImplPtr> impl = searcher_.Solve(child);
        if (!impl.ok()) {
          ok = false;
          break;
        }
        sub.push_back(EncodeDecisions(**impl));
      }
      if (ok && forced) {
        out.insert(out.end(), sub.begin(), sub.end());
        return true;
      }
    }
    return false;
  }
  const Spec& leaf() const { return leaf_; }

 private:
  std::optional<Candidate> Try(const Spec& s, const Action& a) {
    absl::StatusOr<Candidate> c = ApplyAction(s, a, t_);
    if (!c.ok()) return std::nullopt;
    return *std::move(c);
  }
  // Operand i moved to `to`, as the rewrites canonicalise it.
  static Action MoveTo(const Spec& s, int i, TensorAux to, AllocKind kind) {
    Spec moved = s;
    moved.aux[i] = to;
    return Action{.kind = ActionKind::kMove,
                  .operand = i,
                  .to = Canonical(moved).aux[i],
                  .alloc = kind};
  }
  std::vector<Action> Approaches(const Spec& s) const {
    std::vector<Action> out;
    // A bf16 C's f32 buffer comes first: every other approach is below it.
    if (s.IsMatmul() && s.aux[2].dtype == DType::kBF16)
      out.push_back(MoveTo(s, 2, {.level = Level::kL1}, AllocKind::kBuffer));
    for (int i = 0; i < s.NumOperands(); ++i) {
      TensorAux to = s.aux[i];
      to.level = Level::kL1;
      out.push_back(MoveTo(s, i, to, AllocKind::kView));
    }
    const int o = s.OutputIndex();
    for (int64_t vw : {lanes_, int64_t{8}, int64_t{1}})
      out.push_back(MoveTo(
          s, o,
          {.level = Level::kVRF, .vector_width = static_cast<uint8_t>(vw)},
          AllocKind::kRegisters));
    if (s.IsMatmul()) {
      for (DType dt : {s.aux[1].dtype, DType::kF32})
        for (int64_t p : {lanes_, 2 * lanes_})
          for (bool pairs : {false, true}) {
            const Layout panels = Layout::Panels(Order::kRowMajor, p);
            out.push_back(MoveTo(s, 1,
                                 {.dtype = dt,
                                  .level = Level::kL1,
                                  .layout = pairs ? panels.Paired() : panels},
                                 AllocKind::kBuffer));
          }
    }
    return out;
  }

  Target t_;
  KernelId id_;
  Searcher searcher_;
  int64_t lanes_;
  Spec leaf_;
};

// Runtimes that create kernels for a fixed target, database off.
Runtime& EdgeRuntime(Isa isa) {
  static Runtime* rts[2] = {};
  Runtime*& rt = rts[static_cast<int>(isa)];
  if (rt == nullptr) {
    RuntimeOptions options;
    options.db = "off";
    rt = new Runtime(testing::FixedTarget(isa, 1), options);
  }
  return *rt;
}

class KernelEdges : public ::testing::TestWithParam<std::tuple<Isa, KernelId>> {
};

// At most this many shapes per kernel and ISA, spread over the list.
constexpr int kShapesPerKernel = 16;

TEST_P(KernelEdges, MatchTheReference) {
  const auto [isa, id] = GetParam();
  const Target t = testing::FixedTarget(isa, 1);
  const bool run = isa == Isa::kAvx2
                       ? testing::HasIsa(Isa::kAvx2)
                       : testing::HasIsa(Isa::kAvx512) &&
                             TargetFor(DetectCpu(), isa)->bf16_dot;
  std::vector<Spec> roots = EdgeRoots(t.f32_lanes);
  std::shuffle(roots.begin(), roots.end(), std::mt19937_64(11));
  int covered = 0;
  for (const Spec& root : roots) {
    if (covered >= kShapesPerKernel) break;
    // A tree holds leaves of its root's kind, and moves.
    const Kind kind = root.IsMatmul() ? Kind::kMatmulAccum : root.kind;
    if (Info(id).kind != kind && Info(id).kind != Kind::kMove) continue;
    // Nor can the kernel appear where its row says it cannot.
    const Spec bound = t.Bind(root);
    if (Info(id).most_scratch_vregs(bound, t) < Info(id).least_scratch_vregs ||
        (kind == Kind::kMatmulAccum && Info(id).kind == kind &&
         !Info(id).peak_rate(bound, t)))
      continue;
    ForcedTree forced(t, id);
    std::vector<std::string> decisions;
    if (!forced.Build(bound, decisions)) continue;
    ++covered;
    const std::string text = PrintSpec(root);
    absl::StatusOr<KernelPtr> k =
        EdgeRuntime(isa).GetScheduled(text, absl::StrJoin(decisions, ";"));
    ASSERT_TRUE(k.ok()) << text << ": " << k.status();
    if (run) {
      EXPECT_TRUE(testing::KernelMatchesReference(*k, root))
          << Info(id).name << " at " << PrintSpec(forced.leaf());
    }
  }
  std::printf("%s %s: %d edge shapes%s\n", std::string(Name(isa)).c_str(),
              std::string(Info(id).name).c_str(), covered,
              run ? ", run" : ", compiled only");
  // The k-pair kernels need AVX-512 BF16; every other kernel has shapes.
  if (t.bf16_dot || covered > 0) {
    EXPECT_GT(covered, 0) << Info(id).name;
  }
}

INSTANTIATE_TEST_SUITE_P(Catalogue, KernelEdges,
                         ::testing::Combine(::testing::Values(Isa::kAvx2,
                                                              Isa::kAvx512),
                                            ::testing::ValuesIn(AllKernels())),
                         [](const auto& info) {
                           return absl::StrCat(
                               Name(std::get<0>(info.param)), "_",
                               Info(std::get<1>(info.param)).name);
                         });

}  // namespace
}  // namespace amarena
