// Copy an input operand into a packed buffer in a faster cache level.
// Applies to: B (operand 1) of Matmul and MatmulAccum when it is in GL, L3 or
//   L2 in a plain layout (from column-major the copy transposes, element by
//   element), towards each faster cache level whose budget
//   the buffer fits (L2 and L3 only for buffers too big for the next faster
//   level, Target::WorthPlacing), as K x P panels with P two vectors (the
//   width of the 6 x 16 register tiles the broadcast kernel runs best), or one
//   vector when B is at most that wide. (Widths of one and three vectors too
//   were tried: they changed the 512^3 and 1024^3 trees' modelled cost by
//   under 0.5 % and doubled the search time.)
//   A bf16 B is packed either as bf16 (half the bytes; the kernel widens each
//   vector it loads) or cast to f32 on the way (the copy widens each element
//   once, however many rows of A then read it); with AVX-512 BF16 a
//   row-major bf16 B may also be packed interleaved in k-pairs (`pPx2`, the
//   layout the vdpbf16ps outer-product kernel reads).
//   A B that arrives interleaved in k-pairs may be unpacked the same ways
//   (element by element): the way to a kernel where vdpbf16ps cannot read it
//   (no AVX-512 BF16, a column-major A, panels narrower than a vector).
// Yields: an Alloc of kind buffer: the prologue Move (the copy, which the
//   search implements like any other Spec: tiled, viewed, and a copy kernel)
//   and the body reading B from the buffer. The buffer takes its lines from
//   the level's budget and one GPR for its base pointer.
#include "search/rewrites/alloc_common.h"
#include "search/rewrites/registry.h"

namespace amarena {

void PackOperand(const Spec& s, const Target& t, std::vector<Candidate>& out) {
  if (!s.IsMatmul()) return;
  const int i = 1;
  const TensorAux& from = s.aux[i];
  if (from.level == Level::kVRF || from.level == Level::kL1 ||
      (from.layout.packed() && !from.layout.paired()))
    return;
  const int64_t lanes = t.f32_lanes;
  const int64_t p = s.n > lanes ? 2 * lanes : lanes;
  const bool bf16 = from.dtype == DType::kBF16;
  const bool pairs = bf16 && t.bf16_dot && from.layout == Layout();
  for (Level to : kCacheLevels) {
    if (!Faster(to, from.level)) continue;
    // The operand's own dtype, f32 when that is a cast, and bf16 k-pairs.
    struct Choice {
      DType dtype;
      bool pairs;
    };
    const Choice choices[] = {
        {from.dtype, false}, {DType::kF32, false}, {DType::kBF16, true}};
    const int num = !bf16 ? 1 : pairs ? 3 : 2;
    for (int d = 0; d < num; ++d) {
      TensorAux aux = from;
      aux.dtype = choices[d].dtype;
      aux.level = to;
      aux.layout = Layout::Panels(Order::kRowMajor, p);
      if (choices[d].pairs) aux.layout = aux.layout.Paired();
      // Panels in sections stay in as many (the copy keeps their order).
      if (from.layout.in_sections())
        aux.layout = aux.layout.InSections(from.layout.section_count());
      TensorSpec buffer = s.Operand(i);
      buffer.aux = aux;
      if (!t.WorthPlacing(to, buffer.Lines())) continue;
      if (auto c = MakeAlloc(s, i, aux, AllocKind::kBuffer))
        out.push_back(*std::move(c));
    }
  }
}

}  // namespace amarena
