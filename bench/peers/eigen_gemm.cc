// Eigen's matrix product, compiled once per instruction set: Eigen picks its
// vector width at compile time, so CMake builds this file into two shared
// libraries, one with -mavx2 -mfma (AMARENA_EIGEN_VARIANT=avx2) and one with
// the AVX-512 flags (=avx512). Each is built with hidden visibility and
// exports only the two C functions below: Eigen's templates instantiated with
// different flags would otherwise be merged by the linker into one variant.
// Threads: Eigen parallelises a large product with OpenMP (-fopenmp);
// Eigen::setNbThreads pins the count.
#include <Eigen/Core>
#include <cstdint>

#define AMARENA_EIGEN_CAT2(a, b) a##b
#define AMARENA_EIGEN_CAT(a, b) AMARENA_EIGEN_CAT2(a, b)
#define AMARENA_EIGEN_FN(suffix)                                              \
  AMARENA_EIGEN_CAT(AMARENA_EIGEN_CAT(amarena_eigen_, AMARENA_EIGEN_VARIANT), \
                    suffix)
#define AMARENA_EXPORT extern "C" __attribute__((visibility("default")))

namespace {
using RowMajor =
    Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
}  // namespace

// C[m,n] = A[m,k] . B[k,n], row-major, dense.
AMARENA_EXPORT void AMARENA_EIGEN_FN(_sgemm)(int64_t m, int64_t k, int64_t n,
                                             const float* a, const float* b,
                                             float* c, int threads) {
  Eigen::setNbThreads(threads);
  Eigen::Map<const RowMajor> A(a, m, k), B(b, k, n);
  Eigen::Map<RowMajor> C(c, m, n);
  C.noalias() = A * B;
}

// Eigen's own account of the vector instructions it was compiled for.
AMARENA_EXPORT const char* AMARENA_EIGEN_FN(_simd)() {
  return Eigen::SimdInstructionSetsInUse();
}
