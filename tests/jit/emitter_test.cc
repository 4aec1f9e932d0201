// The emitter's pointer bumps (jit/emitter.h, Owe): a loop's restoring `sub`
// folds into the enclosing loop's `add`, so no run of consecutive bumps moves
// one register twice; and the kernels the search makes stay small
// (no chains of unrolled remainders, core/cost_model.h RemainderCode). The
// code is compiled for fixed AVX2 and AVX-512 targets and never run here: the
// reference tests (compile_test.cc, guard_page_test.cc, kernel_edges_test.cc)
// run what the host can.
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "core/price_table.h"
#include "core/spec_text.h"
#include "gtest/gtest.h"
#include "jit/compile.h"
#include "jit/disassemble.h"
#include "search/search.h"
#include "tests/testing/fixed_target.h"

namespace amarena {
namespace {

struct Compiled {
  std::unique_ptr<CompiledKernel> kernel;
  // One instruction per line (a parallel kernel: its first task's).
  std::string listing;
};

Compiled CompileFor(const Target& t, const std::string& text) {
  Searcher searcher(t);
  const Spec root = t.Bind(*ParseSpec(text));
  absl::StatusOr<ImplPtr> impl = searcher.Solve(root);
  EXPECT_TRUE(impl.ok()) << text << ": " << impl.status();
  if (!impl.ok()) return {};
  absl::StatusOr<std::unique_ptr<CompiledKernel>> code =
      Compile(**impl, t, KernelName(root));
  EXPECT_TRUE(code.ok()) << text << ": " << code.status();
  if (!code.ok()) return {};
  Compiled c;
  c.kernel = std::move(*code);
  absl::StatusOr<std::string> listing =
      jit::Disassemble(c.kernel->code(), c.kernel->code_size());
  if (listing.ok()) c.listing = *listing;
  return c;
}

Compiled CompileFor(Isa isa, int workers, const std::string& text) {
  return CompileFor(testing::FixedTarget(isa, workers), text);
}

// "add"/"sub" of an immediate to a 64-bit register: the register, else "".
std::string BumpedRegister(absl::string_view line) {
  std::vector<absl::string_view> words =
      absl::StrSplit(line, ' ', absl::SkipEmpty());
  // "0448", "add", "rdx,", "0x800"
  if (words.size() != 4 || (words[1] != "add" && words[1] != "sub") ||
      !absl::StartsWith(words[3], "0x"))
    return "";
  return std::string(words[2]);
}

class EmitterTest : public ::testing::TestWithParam<Isa> {};

// `sub rcx,0x80; sub r8,0x1000; add rcx,0x80; add r8,0x1000` (an inner loop's
// restore, then its enclosing loop's step) is one bump per register, or none.
TEST_P(EmitterTest, NoRegisterIsBumpedTwiceInARow) {
  if (!jit::Disassemble(nullptr, 0).ok()) GTEST_SKIP() << "built without Zydis";
  for (const char* text :
       {"matmul 64x64x64 f32", "matmul 100x100x100 f32",
        "matmul 1024x1024x1024 f32", "matmul 49x2048x512 f32",
        "matmul 37x91x53 f32 a=col b=col c=col accum"}) {
    for (int workers : {1, 2}) {
      const Compiled c = CompileFor(GetParam(), workers, text);
      ASSERT_FALSE(c.listing.empty()) << text;
      // The registers bumped by the current run of consecutive bumps.
      std::set<std::string> run;
      int bumps = 0;
      for (absl::string_view line : absl::StrSplit(c.listing, '\n')) {
        const std::string reg = BumpedRegister(line);
        if (reg.empty()) {
          run.clear();
          continue;
        }
        ++bumps;
        EXPECT_TRUE(run.insert(reg).second)
            << text << " (" << workers << " workers): " << reg
            << " bumped twice in one run of bumps, at " << line;
      }
      // The check saw loops at all.
      EXPECT_GT(bumps, 0) << text;
    }
  }
}

// Packing copies and zero fills are counted loops: the largest suite shapes'
// kernels hold no straight-line tiles of remainders.
// The prologue saves only the callee-saved registers the tree can be handed
// (its GPR peak beside the operand bases and the scratch pointer): none for
// a small register-tile kernel, and each one it saves it restores. The
// kernels run and match the reference in the other tests.
TEST_P(EmitterTest, SavesOnlyTheCalleeSavedRegistersItUses) {
  if (!jit::Disassemble(nullptr, 0).ok()) GTEST_SKIP() << "built without Zydis";
  const Compiled small = CompileFor(GetParam(), 1, "matmul 8x8x8 f32");
  ASSERT_FALSE(small.listing.empty());
  EXPECT_EQ(small.listing.find("push"), std::string::npos) << small.listing;
  for (const char* text :
       {"matmul 1024x1024x1024 f32", "matmul 997x1009x1013 f32"}) {
    const Compiled c = CompileFor(GetParam(), 1, text);
    for (const char* reg : {"rbx", "rbp", "r12", "r13", "r14", "r15"}) {
      const bool pushed =
          c.listing.find(std::string("push ") + reg) != std::string::npos;
      const bool popped =
          c.listing.find(std::string("pop ") + reg) != std::string::npos;
      EXPECT_EQ(pushed, popped) << text << ": " << reg;
    }
  }
}

TEST_P(EmitterTest, LargeMatmulsStaySmall) {
  for (const char* text :
       {"matmul 1024x1024x1024 f32", "matmul 2048x2048x2048 f32"}) {
    for (int workers : {1, 2}) {
      const Compiled c = CompileFor(GetParam(), workers, text);
      ASSERT_NE(c.kernel, nullptr) << text;
      EXPECT_LE(c.kernel->total_code_size(), 4096u)
          << text << " (" << workers << " workers)";
    }
  }
}

// The same under the prices of every CPU the project ships a table for, with
// that CPU's caches: the trees differ (the Intel table's put a packed B
// buffer, filled on first use, above two loops along m), the bound does not.
TEST_P(EmitterTest, LargeMatmulsStaySmallUnderEveryShippedTable) {
  for (const PriceTable& table : ShippedPriceTables()) {
    Target t = testing::FixedTarget(GetParam(), 1,
                                    {.l1d = table.cpu.l1d_bytes,
                                     .l2 = table.cpu.l2_bytes,
                                     .l3 = table.cpu.l3_bytes});
    t.SetPrices(table.cost);
    for (int workers : {1, 2}) {
      t.workers = workers;
      const Compiled c = CompileFor(t, "matmul 1024x1024x1024 f32");
      ASSERT_NE(c.kernel, nullptr) << table.label;
      EXPECT_LE(c.kernel->total_code_size(), 4096u)
          << table.label << " (" << workers << " workers)";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, EmitterTest,
                         ::testing::Values(Isa::kAvx2, Isa::kAvx512),
                         [](const ::testing::TestParamInfo<Isa>& info) {
                           return std::string(Name(info.param));
                         });

}  // namespace
}  // namespace amarena
