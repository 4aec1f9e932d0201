// Operands against guard pages: each operand in a mapping of its own, flush
// against a PROT_NONE page after it (kBack) or before it (kFront), so a kernel
// that reads or writes one byte outside an operand faults at once. Kernels'
// scratch areas are guarded the same way (jit/scratch.h). This sees what
// valgrind cannot: valgrind decodes no AVX-512, so only this checks the
// AVX-512 code.
//
//   GuardedOperands g(spec, ops, Placement::kBack);
//   ASSERT_TRUE(kernel->Run(g.ptrs()).ok());
//   g.CopyOutputTo(spec, ops);
#ifndef AMARENA_TESTS_TESTING_GUARDED_OPERANDS_H_
#define AMARENA_TESTS_TESTING_GUARDED_OPERANDS_H_

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "core/reference.h"
#include "core/spec.h"
#include "gtest/gtest.h"

namespace amarena::testing {

enum class Placement { kBack, kFront };

// Bytes operand i of `s` occupies in its layout (panel padding included),
// over the whole batch.
inline size_t OperandBytes(const Spec& s, int i) {
  return static_cast<size_t>(s.BatchedElements(i)) * SizeOf(s.aux[i].dtype);
}

class GuardedOperands {
 public:
  // Copies of `ops` (operands of `s`), placed against guard pages.
  GuardedOperands(const Spec& s, const Operands& ops, Placement where) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    for (int i = 0; i < s.NumOperands(); ++i) {
      // Operands need 4-byte alignment: an odd count of bf16 leaves two
      // bytes before the guard page.
      const size_t bytes = OperandBytes(s, i);
      const size_t room = (bytes + 3) / 4 * 4;
      const size_t usable = (room + page - 1) / page * page;
      const size_t total = usable + 2 * page;
      void* m =
          mmap(nullptr, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      EXPECT_NE(m, MAP_FAILED);
      char* inner = static_cast<char*>(m) + page;
      EXPECT_EQ(mprotect(inner, usable, PROT_READ | PROT_WRITE), 0);
      char* p = where == Placement::kFront ? inner : inner + (usable - room);
      std::memcpy(p, ops.ptr(i), bytes);
      maps_.push_back({m, total});
      ptrs_.push_back(p);
    }
  }
  ~GuardedOperands() {
    for (const Map& m : maps_) munmap(m.base, m.bytes);
  }
  GuardedOperands(const GuardedOperands&) = delete;
  GuardedOperands& operator=(const GuardedOperands&) = delete;

  void* const* ptrs() const { return ptrs_.data(); }
  void CopyOutputTo(const Spec& s, Operands& ops) const {
    const int o = s.OutputIndex();
    std::memcpy(ops.ptr(o), ptrs_[static_cast<size_t>(o)], OperandBytes(s, o));
  }

 private:
  struct Map {
    void* base;
    size_t bytes;
  };
  std::vector<Map> maps_;
  std::vector<void*> ptrs_;
};

}  // namespace amarena::testing

#endif  // AMARENA_TESTS_TESTING_GUARDED_OPERANDS_H_
