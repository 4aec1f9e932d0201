#include "runtime/supported.h"

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/impl.h"
#include "core/kernels.h"
#include "core/spec_text.h"

namespace amarena {

namespace {

std::string DTypesText(const Spec& s) {
  std::string out;
  for (int i = 0; i < s.NumOperands(); ++i)
    absl::StrAppend(&out,
                    i == 0                 ? ""
                    : i == s.OutputIndex() ? "->"
                                           : "*",
                    Name(s.aux[i].dtype));
  return out;
}

}  // namespace

absl::Status CheckSupported(const Spec& s, const Target& t) {
  if (s.kind == Kind::kMove)
    return absl::UnimplementedError(
        absl::StrCat("cannot create kernel for ", PrintSpec(s),
                     ": operation is move, must be matmul or zero (moves only "
                     "occur inside programs)"));
  absl::string_view names[] = {"a", "b", "c"};
  for (int i = 0; i < s.NumOperands(); ++i) {
    if (s.aux[i].level != Level::kGL)
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot create kernel for ", PrintSpec(s), ": operand ", names[i],
          " is in ", Name(s.aux[i].level), ", must be in gl"));
    // A way offset and a rows' alignment describe a tile of a larger matrix
    // (core/layout.h); an operand's own pitch says both (ld=).
    const Layout& l = s.aux[i].layout;
    if (l.way_code() != 0 || l.align_code() != 0)
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot create kernel for ", PrintSpec(s), ": operand ", names[i],
          l.way_code() != 0 ? " has a way offset ("
                            : " says its rows' alignment (",
          l.Text(), "), which only the search's tiles carry; give its pitch "
          "as ld", names[i], "= instead"));
    // A matmul's B may come pre-packed in row-major panels (weights packed
    // once, read by many calls); other packed operands occur only inside
    // programs.
    const bool prepacked_b =
        s.IsMatmul() && i == 1 && s.aux[i].layout.row_major();
    if (s.aux[i].layout.packed() && !prepacked_b)
      return absl::UnimplementedError(absl::StrCat(
          "cannot create kernel for ", PrintSpec(s), ": operand ", names[i],
          " is packed, must be plain row- or column-major (only a matmul's b "
          "may be pre-packed, in row panels)"));
  }
  // A pre-packed B's panels must be a power of two wide: loops along n take
  // tiles of powers of two (and a tile never cuts a panel). vdpbf16ps reads
  // k-pair panels in place beside a bf16, plain row-major A and a row-major C
  // (its register tiles are rows of C) and in whole vectors; widen_pairs
  // beside an f32 A and a row-major C, in whole vectors of 8 (any power of
  // two above 32), where one row of C across a panel (tiles never cut one)
  // leaves it 4 registers. Elsewhere the search unpacks them two rows at a
  // time, one element at a time, within the copy kernel's unrolling limit:
  // panels up to kMaxUnrolledStores / 2 wide.
  // (Sections are 2, 4 or 8 by construction: Layout::InSections.)
  if (const Layout& a = s.aux[0].layout, &b = s.aux[1].layout;
      s.IsMatmul() && b.packed()) {
    const int64_t p = b.panel_width();
    if ((p & (p - 1)) != 0)
      return absl::UnimplementedError(absl::StrCat(
          "cannot create kernel for ", PrintSpec(s), ": b is in panels of ", p,
          ", must be in panels of a power of two (loops along n take "
          "tiles of powers of two; other widths are not implemented)"));
    const Layout& c = s.aux[2].layout;
    // (A bf16 C is buffered as f32 row-major, whatever its own layout; the
    // k-pair kernels compute the plain product only, alpha = 1.)
    const bool c_rows = c.row_major() || s.aux[2].dtype == DType::kBF16;
    const bool vdp_reads_b = t.bf16_dot && a.row_major() && !a.packed() &&
                             c_rows && s.aux[0].dtype == DType::kBF16 &&
                             b.WholeVectors(t.f32_lanes) && s.alpha == 1.0f;
    const bool widen_reads_b = s.aux[0].dtype == DType::kF32 && c_rows &&
                               p / t.f32_lanes + 4 <= t.vector_registers &&
                               s.alpha == 1.0f;
    if (b.paired() && !vdp_reads_b && !widen_reads_b &&
        p > kMaxUnrolledStores / 2)
      return absl::UnimplementedError(absl::StrCat(
          "cannot create kernel for ", PrintSpec(s),
          ": b is in k-pair panels of ", p, ", must be at most ",
          kMaxUnrolledStores / 2, " wide where no kernel reads them in place (",
          s.alpha != 1.0f ? "alpha is not 1"
          : !c_rows       ? "C is column-major"
          : s.aux[0].dtype == DType::kF32
              ? "A is f32 and a row of C across a panel takes too many "
                "registers"
          : !t.bf16_dot ? "this target has no AVX-512 BF16"
          : !b.WholeVectors(t.f32_lanes)
              ? absl::StrCat("the panel is not a multiple of ", t.f32_lanes)
              : "A is not plain row-major",
          "; unpacking wider panels is not implemented: use b=any)"));
  }
  // f32 throughout, or bf16 inputs accumulated into an f32 output, or (a
  // matmul's) f32 activations times bf16 weights into f32: B is widened as
  // it is loaded, A read as f32. A matmul's C may be bf16 beside any of
  // those inputs (accumulated in an f32 buffer, rounded once as it is
  // written). bf16*f32 (a bf16 A beside an f32 B) is refused: nothing asks
  // for it, and it is not tested.
  const DType in = s.aux[0].dtype;
  const DType out = s.aux[s.OutputIndex()].dtype;
  bool dtypes_ok = out == DType::kF32 || (s.IsMatmul() && out == DType::kBF16);
  for (int i = 0; i < s.OutputIndex(); ++i) dtypes_ok &= s.aux[i].dtype == in;
  const bool f32_bf16 = s.IsMatmul() && s.aux[0].dtype == DType::kF32 &&
                        s.aux[1].dtype == DType::kBF16;
  if (!dtypes_ok && !f32_bf16)
    return absl::UnimplementedError(absl::StrCat(
        "cannot create kernel for ", PrintSpec(s), ": dtypes are ",
        DTypesText(s),
        ", must be f32, bf16*bf16->f32, f32*bf16->f32 or any of those with a "
        "bf16 output (other combinations are not implemented)"));
  if (!std::isfinite(s.alpha))
    return absl::InvalidArgumentError(
        absl::StrCat("cannot create kernel for ", PrintSpec(s), ": alpha is ",
                     s.alpha, ", must be finite"));
  // A batch made as a struct rather than parsed: the notation's rules
  // (strides at least 0, C's matrices apart, sizes within 2 GiB) apply all
  // the same, and its parser is where they live.
  if (s.b != 1) {
    absl::StatusOr<Spec> again = ParseSpec(PrintSpec(s));
    if (!again.ok()) return again.status();
  }
  if (s.budget) {
    Budget max = t.MaxBudget();
    if (!s.budget->FitsIn(max))
      return absl::InvalidArgumentError(
          absl::StrCat("cannot create kernel for ", PrintSpec(s),
                       ": budget exceeds the target's ", PrintPeak(max)));
  }
  return absl::OkStatus();
}

}  // namespace amarena
