#include "bench/peers/check.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/spec_text.h"

namespace amarena::bench {

Reference::Reference(const Problem& p, uint64_t seed)
    : p_(p),
      spec_(
          *ParseSpec(absl::StrCat("matmul ", p.m, "x", p.k, "x", p.n, " f32"))),
      ops_(std::make_unique<Operands>(spec_)),
      value_(p.m * p.n, 0.0),
      scale_(p.m * p.n, 0.0) {
  FillRandom(spec_, *ops_, seed);
  const float *a = this->a(), *b = this->b();
  for (int64_t i = 0; i < p.m; ++i) {
    double* v = &value_[i * p.n];
    double* s = &scale_[i * p.n];
    for (int64_t kk = 0; kk < p.k; ++kk) {
      const double aik = a[i * p.k + kk];
      const float* bk = b + kk * p.n;
      for (int64_t j = 0; j < p.n; ++j) {
        const double prod = aik * static_cast<double>(bk[j]);
        v[j] += prod;
        s[j] += std::fabs(prod);
      }
    }
  }
}

Verdict Reference::Check(const float* c) const {
  Verdict v;
  v.tolerance = (static_cast<double>(p_.k) + 4) * std::ldexp(1.0, -23);
  v.ok = true;
  for (int64_t e = 0; e < p_.m * p_.n; ++e) {
    double err = std::fabs(c[e] - value_[e]) / (scale_[e] + 1e-30);
    if (!(err <= v.tolerance)) v.ok = false;  // also catches NaN
    if (std::isnan(err)) err = INFINITY;
    v.max_rel_err = std::max(v.max_rel_err, err);
  }
  return v;
}

absl::Status VerifyOnce(PreparedGemm& g, const Reference& ref) {
  const Problem& p = ref.problem();
  std::fill(ref.c(), ref.c() + p.m * p.n, 12345.0f);
  g.Run();
  Verdict v = ref.Check(ref.c());
  if (v.ok) return absl::OkStatus();
  return absl::DataLossError(absl::StrFormat(
      "wrong result: max relative error %.3g exceeds the tolerance %.3g",
      v.max_rel_err, v.tolerance));
}

}  // namespace amarena::bench
