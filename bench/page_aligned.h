// PageAligned: an allocator whose buffers start on a page, for benchmark
// operands. Engines keep tensors on at least 64 bytes (oneDNN's buffers, an
// engine's mapped weights on a page), while a large std::vector's data sits
// 16 bytes past a page, so that every 64-byte load straddles two lines: a
// benchmark on such buffers measures the misalignment, not the kernels.
//
//   std::vector<float, PageAligned<float>> a(n);
#ifndef AMARENA_BENCH_PAGE_ALIGNED_H_
#define AMARENA_BENCH_PAGE_ALIGNED_H_

#include <cstddef>
#include <cstdlib>
#include <new>

namespace amarena::bench {

template <typename T>
struct PageAligned {
  using value_type = T;
  PageAligned() = default;
  template <typename U>
  PageAligned(const PageAligned<U>&) {}
  T* allocate(size_t n) {
    const size_t bytes = (n * sizeof(T) + 4095) / 4096 * 4096;
    void* p = std::aligned_alloc(4096, bytes);
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t) { std::free(p); }
  friend bool operator==(const PageAligned&, const PageAligned&) {
    return true;
  }
};

}  // namespace amarena::bench

#endif  // AMARENA_BENCH_PAGE_ALIGNED_H_
