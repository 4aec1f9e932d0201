// Kernel code shares a few mappings, is never writable and executable at
// once, and goes back to the arena when its kernel does.
#include "jit/code_arena.h"

#include <fstream>
#include <string>
#include <vector>

#include "core/reference.h"
#include "core/spec_text.h"
#include "gtest/gtest.h"
#include "jit/compile.h"
#include "search/search.h"

namespace amarena::jit {
namespace {

struct Maps {
  int anonymous_executable = 0;  // where JIT'd code can live
  int writable_executable = 0;
};

Maps ReadMaps() {
  Maps m;
  std::ifstream in("/proc/self/maps");
  for (std::string line; std::getline(in, line);) {
    // "start-end perms offset dev inode [path]": perms like "r-xp".
    std::string perms = line.substr(line.find(' ') + 1, 4);
    bool named = line.find('/') != std::string::npos ||
                 line.find('[') != std::string::npos;
    if (perms[2] == 'x' && !named) ++m.anonymous_executable;
    if (perms[1] == 'w' && perms[2] == 'x') ++m.writable_executable;
  }
  return m;
}

TEST(CodeArenaTest, ThreeHundredKernelsShareAFewMappings) {
  Target t = Target::Avx2({.l1d = 48 << 10, .l2 = 1 << 20, .l3 = 32 << 20});
  Searcher s(t);
  Maps before = ReadMaps();
  std::vector<std::unique_ptr<CompiledKernel>> kernels;
  std::vector<Spec> specs;
  for (int m = 1; m <= 20; ++m)
    for (int n = 1; n <= 15; ++n) {
      Spec spec = t.Bind(Spec::Matmul(m, 5, n));
      absl::StatusOr<std::unique_ptr<CompiledKernel>> k =
          Compile(**s.Solve(spec), t, KernelName(spec));
      ASSERT_TRUE(k.ok()) << k.status();
      kernels.push_back(*std::move(k));
      specs.push_back(spec);
    }
  Maps after = ReadMaps();
  EXPECT_LT(after.anonymous_executable - before.anonymous_executable, 10)
      << "one mapping per kernel would add " << kernels.size();
  EXPECT_EQ(after.writable_executable, 0);
  // Every one of them runs (and is right).
  for (size_t i = 0; i < kernels.size(); i += 7) {
    Spec user = specs[i];
    user.budget.reset();
    Operands ops(user);
    FillRandom(user, ops, i);
    std::vector<uint8_t> before_c = ops.Snapshot(2);
    ASSERT_TRUE((*kernels[i])(ops.ptrs()).ok());
    EXPECT_TRUE(CheckAgainstReference(user, ops, before_c).ok)
        << PrintSpec(user);
  }
}

TEST(CodeArenaTest, FreedPagesAreReused) {
  CodeArena arena;
  const unsigned char ret[] = {0xc3};
  std::vector<unsigned char> big(3 * 4096 + 5, 0xc3);
  absl::StatusOr<CodeBlock> a = arena.Publish(ret, 1);
  ASSERT_TRUE(a.ok()) << a.status();
  const void* first = a->data();
  absl::StatusOr<CodeBlock> b = arena.Publish(big.data(), big.size());
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(arena.Stats().blocks, 2);
  EXPECT_EQ(arena.Stats().pages_used, 1 + 4);
  *a = CodeBlock();  // freed
  EXPECT_EQ(arena.Stats().pages_used, 4);
  absl::StatusOr<CodeBlock> c = arena.Publish(ret, 1);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->data(), first);
  auto fn = reinterpret_cast<void (*)()>(const_cast<void*>(c->data()));
  fn();  // executable: returns
  EXPECT_EQ(arena.Stats().chunks, 1);
}

}  // namespace
}  // namespace amarena::jit
