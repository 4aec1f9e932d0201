#include "core/reference.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>

#include "absl/strings/str_cat.h"
#include "core/spec_text.h"
#include "core/status_macros.h"

namespace amarena {
namespace {

void WriteElement(void* base, DType t, int64_t off, float v) {
  if (t == DType::kF32) {
    static_cast<float*>(base)[off] = v;
  } else {
    static_cast<uint16_t*>(base)[off] = Bf16FromF32(v);
  }
}

// Exact value (double) and magnitude scale of output element (i, j).
struct Exact {
  double value;
  double scale;
};

// The exact value of each output element of `s`; element (i, j) of batch
// element q, operand x's matrix starting at q * s.BatchStride(x). For a
// matmul, B is read once per batch element into a transposed float copy and
// A's row once per row, so the callers, which walk batch by batch and row by
// row, sum each element along two contiguous arrays: reading every input
// element through Layout::Offset made checking a 2048^3 kernel take minutes.
// f32 and bf16 values are exact as floats; the products and the sums (in the
// order of k) are doubles, as before the copies.
class Elements {
 public:
  Elements(const Spec& s, void* const* ops, const void* out_before)
      : s_(s),
        ops_(ops),
        out_before_(out_before),
        o_(s.OutputIndex()),
        out_(s.Operand(o_)) {}

  Exact At(int64_t q, int64_t i, int64_t j) {
    switch (s_.kind) {
      case Kind::kZero:
        return {0, 0};
      case Kind::kMove: {
        const TensorSpec src = s_.Operand(0);
        const double v = ReadElement(ops_[0], src.aux.dtype, src.Offset(i, j));
        return {v, std::fabs(v)};
      }
      case Kind::kMatmul:
      case Kind::kMatmulAccum:
        break;
    }
    const double init =
        s_.kind == Kind::kMatmulAccum
            ? ReadElement(out_before_, out_.aux.dtype,
                          q * s_.BatchStride(o_) + out_.Offset(i, j))
            : 0;
    Load(q, i);
    const float* b = bt_.data() + j * s_.k;
    double sum = 0, scale = 0;
    for (int64_t kk = 0; kk < s_.k; ++kk) {
      const double p = static_cast<double>(a_[static_cast<size_t>(kk)]) * b[kk];
      sum += p;
      scale += std::fabs(p);
    }
    // C = init + alpha * sum: the magnitudes summed are |init| and the
    // products scaled by |alpha| (a kernel rounds each scaled term).
    const double alpha = s_.alpha;
    return {init + alpha * sum, std::fabs(init) + std::fabs(alpha) * scale};
  }

 private:
  // B of batch element q (transposed: column j at j * k) and A's row i.
  void Load(int64_t q, int64_t i) {
    if (q != q_) {
      const TensorSpec b = s_.Operand(1);
      const int64_t b0 = q * s_.BatchStride(1);
      bt_.resize(static_cast<size_t>(s_.k * s_.n));
      for (int64_t kk = 0; kk < s_.k; ++kk)
        for (int64_t j = 0; j < s_.n; ++j)
          bt_[static_cast<size_t>(j * s_.k + kk)] =
              ReadElement(ops_[1], b.aux.dtype, b0 + b.Offset(kk, j));
      q_ = q;
      i_ = -1;
    }
    if (i != i_) {
      const TensorSpec a = s_.Operand(0);
      const int64_t a0 = q * s_.BatchStride(0);
      a_.resize(static_cast<size_t>(s_.k));
      for (int64_t kk = 0; kk < s_.k; ++kk)
        a_[static_cast<size_t>(kk)] =
            ReadElement(ops_[0], a.aux.dtype, a0 + a.Offset(i, kk));
      i_ = i;
    }
  }

  const Spec& s_;
  void* const* ops_;
  const void* out_before_;
  const int o_;
  const TensorSpec out_;
  int64_t q_ = -1, i_ = -1;
  std::vector<float> a_, bt_;
};

}  // namespace

float ReadElement(const void* base, DType t, int64_t off) {
  if (t == DType::kF32) return static_cast<const float*>(base)[off];
  return F32FromBf16(static_cast<const uint16_t*>(base)[off]);
}

void Operands::Free::operator()(void* p) const { std::free(p); }

Operands::Operands(const Spec& s) {
  for (int i = 0; i < s.NumOperands(); ++i) {
    TensorSpec t = s.Operand(i);
    size_t bytes =
        static_cast<size_t>(s.BatchedElements(i)) * SizeOf(t.aux.dtype);
    const size_t align = bytes >= 4096 ? 4096 : 64;
    size_t rounded = (bytes + align - 1) / align * align;
    void* p = std::aligned_alloc(align, rounded);
    AMARENA_CHECK(p != nullptr);
    std::memset(p, 0, rounded);
    bufs_.emplace_back(p);
    ptrs_.push_back(p);
    bytes_.push_back(bytes);
  }
}

std::vector<uint8_t> Operands::Snapshot(int i) const {
  const uint8_t* p = static_cast<const uint8_t*>(ptrs_[i]);
  return std::vector<uint8_t>(p, p + bytes_[i]);
}

void FillRandom(const Spec& s, Operands& ops, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int i = 0; i < s.NumOperands(); ++i) {
    TensorSpec t = s.Operand(i);
    for (int64_t e = 0; e < s.BatchedElements(i); ++e)
      WriteElement(ops.ptr(i), t.aux.dtype, e, dist(rng));
  }
}

namespace {

// alpha != 1 adds up to two roundings per term (alpha times an input or a
// partial sum, wherever the kernel applies it), hence 2 more.
double Tolerance(const Spec& s) {
  const double extra = s.alpha != 1.0f ? 2 : 0;
  double tolerance = (static_cast<double>(s.IsMatmul() ? s.k : 1) + 4 + extra) *
                     std::ldexp(1.0, -23);
  if (s.Operand(s.OutputIndex()).aux.dtype == DType::kBF16)
    tolerance = std::max(tolerance, std::ldexp(1.0, -8));
  return tolerance;
}

// Calls f(q, i, j, got) for every output element the kernel wrote.
template <typename F>
void ForEachOutput(const Spec& s, const Operands& ops, F&& f) {
  const int o = s.OutputIndex();
  const TensorSpec out = s.Operand(o);
  for (int64_t q = 0; q < s.b; ++q)
    for (int64_t i = 0; i < out.rows; ++i)
      for (int64_t j = 0; j < out.cols; ++j)
        f(q, i, j,
          ReadElement(ops.ptr(o), out.aux.dtype,
                      q * s.BatchStride(o) + out.Offset(i, j)));
}

void Judge(Verdict& v, double got, const Exact& e) {
  double err = std::fabs(got - e.value) / (e.scale + 1e-30);
  if (!(err <= v.tolerance)) v.ok = false;  // also catches NaN
  if (std::isnan(err)) err = INFINITY;
  v.max_rel_err = std::max(v.max_rel_err, err);
}

void CheckBeforeSize(const Spec& s, const std::vector<uint8_t>& before) {
  const int o = s.OutputIndex();
  AMARENA_CHECK(before.size() ==
                static_cast<size_t>(s.BatchedElements(o) *
                                    SizeOf(s.Operand(o).aux.dtype)));
}

}  // namespace

Verdict CheckAgainstReference(const Spec& s, const Operands& ops,
                              const std::vector<uint8_t>& output_before) {
  CheckBeforeSize(s, output_before);
  Verdict v{.ok = true, .tolerance = Tolerance(s)};
  Elements exact(s, ops.ptrs(), output_before.data());
  ForEachOutput(s, ops, [&](int64_t q, int64_t i, int64_t j, double got) {
    Judge(v, got, exact.At(q, i, j));
  });
  return v;
}

ExpectedOutput::ExpectedOutput(const Spec& s, const Operands& inputs,
                               const std::vector<uint8_t>& output_before)
    : spec_(s) {
  CheckBeforeSize(s, output_before);
  const TensorSpec out = s.Operand(s.OutputIndex());
  exact_.reserve(static_cast<size_t>(s.b * out.rows * out.cols));
  Elements exact(s, inputs.ptrs(), output_before.data());
  for (int64_t q = 0; q < s.b; ++q)
    for (int64_t i = 0; i < out.rows; ++i)
      for (int64_t j = 0; j < out.cols; ++j) {
        const Exact e = exact.At(q, i, j);
        exact_.push_back({e.value, e.scale});
      }
}

Verdict ExpectedOutput::Check(const Operands& ops) const {
  Verdict v{.ok = true, .tolerance = Tolerance(spec_)};
  size_t next = 0;
  ForEachOutput(spec_, ops, [&](int64_t, int64_t, int64_t, double got) {
    const auto [value, scale] = exact_[next++];
    Judge(v, got, Exact{.value = value, .scale = scale});
  });
  return v;
}

void Relayout(const TensorSpec& from, const void* src, const TensorSpec& to,
              void* dst) {
  AMARENA_CHECK(from.rows == to.rows && from.cols == to.cols &&
                from.aux.dtype == to.aux.dtype);
  Relayout(to.rows, to.cols, SizeOf(to.aux.dtype), from.aux.layout, src,
           to.aux.layout, dst);
}

absl::Status RunReference(const Spec& s, void* const* operands) {
  for (int i = 0; i < s.NumOperands(); ++i)
    if (s.aux[i].level != Level::kGL)
      return absl::InvalidArgumentError(
          absl::StrCat("cannot run reference for ", PrintSpec(s), ": operand ",
                       i, " is in ", Name(s.aux[i].level), ", must be in gl"));
  int o = s.OutputIndex();
  TensorSpec out = s.Operand(o);
  // The output as stored (a leading dimension's gaps included): elements
  // are read from it at their offsets.
  std::vector<uint8_t> before(
      static_cast<size_t>(s.BatchedElements(o) * SizeOf(out.aux.dtype)));
  std::memcpy(before.data(), operands[o], before.size());
  Elements exact(s, operands, before.data());
  for (int64_t q = 0; q < s.b; ++q)
    for (int64_t i = 0; i < out.rows; ++i)
      for (int64_t j = 0; j < out.cols; ++j)
        WriteElement(operands[o], out.aux.dtype,
                     q * s.BatchStride(o) + out.Offset(i, j),
                     static_cast<float>(exact.At(q, i, j).value));
  return absl::OkStatus();
}

}  // namespace amarena
