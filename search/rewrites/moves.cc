// The moves: view, pack and to-registers, each an Alloc that places one
// operand elsewhere. Their descriptors: "view|pack|regs OPERAND LEVEL" and
// the destination's parameters ("col", "pP", "pPx2", "pPsS", "vW", a dtype
// other than f32): "view 0 l1 col", "pack 1 l2 p16", "regs 2 vrf v8".
//
// view: View an operand in a faster cache level.
// Applies to: any memory operand (GL, L3, L2) of any Spec, towards L2 or L1
//   when its lines fit the budget there: L2 only for operands too big for L1
//   (Target::WorthPlacing; an output too: a C that a loop along k reads and
//   writes block after block, like a vector-matrix product's y, stays in L2
//   between the blocks). L3 holds packing buffers only: views
//   into L3 never changed the modelled cost of the trees (1024^3:
//   identical) and doubled the search time.
//   Same layout. Above a batch loop (b > 1), only an input the batch shares
//   (batch stride 0).
// Yields: an Alloc of kind view with one child, the Spec with the operand now
//   at that level and that level's budget reduced by the lines, rounded down
//   onto the budget grid (core/spec.h). No code: the cost model charges the
//   lines as traffic wherever the view sits, so a view inside a loop pays on
//   every iteration and a view hoisted out of it pays once (that is what
//   blocking buys).
//
// pack: Copy an input operand into a packed buffer in a faster cache level.
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
//   row-major bf16 B beside a bf16 A may also be packed interleaved in
//   k-pairs (`pPx2`, the layout the vdpbf16ps outer-product kernel reads).
//   A B that arrives interleaved in k-pairs may be unpacked the same ways
//   (element by element): the way to a kernel where vdpbf16ps cannot read it
//   (no AVX-512 BF16, a column-major A, panels narrower than a vector).
//   Above a batch loop (b > 1), only a B the batch shares (sb=0): one copy
//   for the whole batch.
//   A bf16 C (operand 2, in GL, L3 or L2) is buffered as f32, row-major, in
//   each faster cache level it fits: the matmul accumulates there in f32
//   (k is split only below the buffer, loops.cc), and the epilogue rounds it
//   to bf16 once (a narrowing copy). Accumulating, the prologue widens C
//   into the buffer first, so C += A.B is rounded once too. (Below the batch
//   loop: each batch element's C has its own.)
// Yields: an Alloc of kind buffer: the prologue Move (the copy, which the
//   search implements like any other Spec: tiled, viewed, and a copy kernel)
//   and the body reading B from the buffer (or, for C, a body writing it and
//   the epilogue Move back). The buffer takes its lines from the level's
//   budget and one GPR for its base pointer.
//
// to-registers: Hold the output tile in vector registers.
// Applies to: the output of Matmul, MatmulAccum or Zero when it is in L1: in
//   the widest vectors that divide its columns (v16 zmm with AVX-512, v8 ymm,
//   else v1, one scalar per register), and, when that is not the target's
//   full width, also in full-width vectors whose last one per row is partial
//   (read and written under a mask). Its registers must fit the VRF budget.
// Yields: an Alloc of kind registers: [Move L1 -> VRF if the operand is read,]
//   body[, Move VRF -> L1 if it is written], all under the VRF budget minus
//   the tile's registers.
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/cost_model.h"
#include "core/spec_text.h"
#include "search/action.h"
#include "search/rewrites/registry.h"

namespace amarena {

namespace {

// An Alloc candidate that moves one operand to `to`, with the children its
// kind needs; nullopt when the moved operand does not fit the Spec's budget.
std::optional<Candidate> MakeAlloc(const Spec& s, int i, TensorAux to,
                                   AllocKind kind) {
  Spec body = s;
  body.aux[i] = to;
  body = Canonical(body);
  AllocInfo info{.operand = i, .to = body.aux[i], .kind = kind};
  std::optional<Budget> child_budget = AllocChildBudget(s, info);
  if (!child_budget) return std::nullopt;
  body.budget = child_budget;
  CanonicalizeBudget(body);

  Candidate c;
  Expansion& e = c.expansion;
  e.type = NodeType::kAlloc;
  if (kind != AllocKind::kView) {
    Access acc = s.OperandAccess(i);
    TensorSpec t = s.Operand(i);
    info.prologue = acc != Access::kOut;
    info.epilogue = acc != Access::kIn;
    Spec load = Spec::Move(t.rows, t.cols, s.aux[i], info.to);
    Spec store = Spec::Move(t.rows, t.cols, info.to, s.aux[i]);
    load.budget = store.budget = child_budget;
    load.serial = store.serial = s.serial;
    if (info.prologue) e.children.push_back(Canonical(load));
    e.children.push_back(body);
    if (info.epilogue) e.children.push_back(Canonical(store));
  } else {
    e.children.push_back(body);
  }
  e.alloc = info;
  c.action = ActionOf(e);
  return c;
}

// Every view (`only` null), or just the views of `only`'s operand into its
// level (ApplyAction: following a remainder re-applies a view per node).
void Views(const Spec& s, const Target& t, std::vector<Candidate>& out,
           const Action* only) {
  for (int i = 0; i < s.NumOperands(); ++i) {
    if (only != nullptr && only->operand != i) continue;
    const TensorAux& from = s.aux[i];
    if (from.level == Level::kVRF || from.level == Level::kL1) continue;
    // Above the batch loop only what the whole batch shares.
    if (s.b > 1 && s.batch_stride[static_cast<size_t>(i)] != 0) continue;
    const int64_t lines = s.Operand(i).Lines();
    for (Level to : kCacheLevels) {
      if (!Faster(to, from.level) || to == Level::kL3) continue;
      // Applying an action (only set) takes any level: see PackOperand.
      if (only != nullptr ? only->to.level != to : !t.WorthPlacing(to, lines))
        continue;
      // Rows that crowd more lines into an L1 set than it has ways evict
      // each other on every pass of the loops below, so such a tile is no
      // L1 view (a pack copies it into a dense buffer instead).
      if (to == Level::kL1 && !s.Operand(i).Dense()) continue;
      TensorAux aux = from;
      aux.level = to;
      // The view's pitch is its parent's (WithoutLds).
      const TensorSpec op = s.Operand(i);
      aux.layout = aux.layout.AsTileOf(op.rows, op.cols, SizeOf(aux.dtype));
      if (auto c = MakeAlloc(s, i, aux, AllocKind::kView))
        out.push_back(*std::move(c));
    }
  }
}

// A bf16 C's f32 buffer, row-major (what the register tiles load and
// store).
void BufferBf16Output(const Spec& s, const Target& t,
                      std::vector<Candidate>& out, bool anywhere) {
  const TensorAux& from = s.aux[2];
  if (from.dtype != DType::kBF16 || from.level == Level::kVRF ||
      from.level == Level::kL1)
    return;
  for (Level to : kCacheLevels) {
    if (!Faster(to, from.level)) continue;
    TensorAux aux{DType::kF32, to, Layout(), 0};
    TensorSpec buffer = s.Operand(2);
    buffer.aux = aux;
    if (!anywhere && !t.WorthPlacing(to, buffer.Lines())) continue;
    if (auto c = MakeAlloc(s, 2, aux, AllocKind::kBuffer))
      out.push_back(*std::move(c));
  }
}

// Every pack (`only` null), or the candidates ApplyAction picks `only` from.
// Where a buffer is worth placing (Target::WorthPlacing) is a rule of the
// space the search enumerates, not of what is valid: an action applied
// (replay, or a remainder following its body, search/remainder.cc) may place
// a buffer anywhere its budget allows. (A k remainder of 145 rows following
// a body that packs its 1024 rows of B into L3 packs its own into L3 too;
// refused, the remainder was searched afresh, with a quarter of the Specs
// the search solved for 509x1169x1329.)
void PackOperand(const Spec& s, const Target& t, std::vector<Candidate>& out,
                 const Action* only) {
  // Above the batch loop only a B the whole batch shares: packed once.
  if (!s.IsMatmul() || (s.b > 1 && !s.SharedB())) return;
  const bool anywhere = only != nullptr;
  if (s.b == 1) BufferBf16Output(s, t, out, anywhere);
  const int i = 1;
  const TensorAux& from = s.aux[i];
  if (from.level == Level::kVRF || from.level == Level::kL1 ||
      (from.layout.packed() && !from.layout.paired()))
    return;
  const int64_t lanes = t.f32_lanes;
  const int64_t p = s.n > lanes ? 2 * lanes : lanes;
  const bool bf16 = from.dtype == DType::kBF16;
  // k-pairs only where vdpbf16ps may read them: A bf16 too.
  const bool pairs = bf16 && s.aux[0].dtype == DType::kBF16 && t.bf16_dot &&
                     from.layout.row_major() && !from.layout.packed();
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
      if (!anywhere && !t.WorthPlacing(to, buffer.Lines())) continue;
      if (auto c = MakeAlloc(s, i, aux, AllocKind::kBuffer))
        out.push_back(*std::move(c));
    }
  }
}

void ToRegisters(const Spec& s, const Target& t, std::vector<Candidate>& out) {
  if (s.kind == Kind::kMove || s.b > 1) return;
  const int i = s.OutputIndex();
  TensorSpec op = s.Operand(i);
  if (op.aux.level != Level::kL1 || op.aux.dtype != DType::kF32) return;
  const int exact = op.cols % t.f32_lanes == 0 ? t.f32_lanes
                    : op.cols % 8 == 0         ? 8
                                               : 1;
  auto offer = [&](int vw) {
    TensorAux to{op.aux.dtype, Level::kVRF, Order::kRowMajor,
                 static_cast<uint8_t>(vw)};
    if (auto c = MakeAlloc(s, i, to, AllocKind::kRegisters))
      out.push_back(*std::move(c));
  };
  offer(exact);
  if (exact != t.f32_lanes) offer(t.f32_lanes);
}

// The word each kind of Alloc's descriptor starts with. to-registers' is
// "regs", as stored decisions have always spelt it.
constexpr absl::string_view kVerb[] = {"view", "pack", "regs"};

constexpr absl::string_view Verb(AllocKind k) {
  return kVerb[static_cast<int>(k)];
}

template <AllocKind kAlloc>
bool OwnsMove(const Action& a) {
  return a.kind == ActionKind::kMove && a.alloc == kAlloc;
}

std::string DescribeMove(const Action& a) {
  return absl::StrCat(
      Verb(a.alloc), " ", a.operand, " ", Name(a.to.level),
      a.to.layout.row_major() ? "" : " col",
      a.to.layout.packed() ? absl::StrCat(" ", PackName(a.to)) : "",
      a.to.vector_width ? absl::StrCat(" v", a.to.vector_width) : "",
      a.to.dtype != DType::kF32 ? absl::StrCat(" ", Name(a.to.dtype)) : "");
}

template <AllocKind kAlloc>
absl::StatusOr<Action> ParseMove(std::span<const absl::string_view> w) {
  auto bad = [](absl::string_view why) {
    return absl::InvalidArgumentError(why);
  };
  Action a{.kind = ActionKind::kMove, .alloc = kAlloc};
  if (w.size() < 3)
    return bad(absl::StrCat("want '", Verb(kAlloc), " OPERAND LEVEL ...'"));
  std::optional<int64_t> op = ParseCount(w[1], 2);
  std::optional<Level> level = ParseLevel(w[2]);
  if (!op || !level) return bad("want an operand 0-2 and a level");
  a.operand = static_cast<int>(*op);
  a.to.level = *level;
  Order order = Order::kRowMajor;
  Layout panels;
  for (size_t i = 3; i < w.size(); ++i) {
    absl::string_view p = w[i];
    std::optional<int64_t> v;
    absl::StatusOr<Layout> l;
    if (p == "col") {
      order = Order::kColMajor;
    } else if (p[0] == 'p' && (l = Layout::ParsePanels(p)).ok()) {
      panels = *l;  // pP, pPx2 (interleaved pairs), either with sS
    } else if (p[0] == 'v' && (v = ParseCount(p.substr(1), 255))) {
      a.to.vector_width = static_cast<uint8_t>(*v);
    } else if (std::optional<DType> t = ParseDType(p)) {
      a.to.dtype = *t;
    } else {
      return bad(absl::StrCat("unknown parameter '", p, "'"));
    }
  }
  if (order != Order::kRowMajor && (panels.paired() || panels.in_sections()))
    return bad("column-major pairs or sections");
  a.to.layout = panels.WithOrder(order);
  return a;
}

}  // namespace

extern const Rewrite kViewRewrite = {.name = "view",
                                     .keyword = Verb(AllocKind::kView),
                                     .enumerate = EnumerateAll<Views>,
                                     .enumerate_one = EnumerateOne<Views>,
                                     .owns = OwnsMove<AllocKind::kView>,
                                     .describe = DescribeMove,
                                     .parse = ParseMove<AllocKind::kView>};

extern const Rewrite kPackRewrite = {.name = "pack",
                                     .keyword = Verb(AllocKind::kBuffer),
                                     .enumerate = EnumerateAll<PackOperand>,
                                     .enumerate_one =
                                         EnumerateOne<PackOperand>,
                                     .owns = OwnsMove<AllocKind::kBuffer>,
                                     .describe = DescribeMove,
                                     .parse = ParseMove<AllocKind::kBuffer>};

extern const Rewrite kToRegistersRewrite = {
    .name = "to-registers",
    .keyword = Verb(AllocKind::kRegisters),
    .enumerate = ToRegisters,
    .owns = OwnsMove<AllocKind::kRegisters>,
    .describe = DescribeMove,
    .parse = ParseMove<AllocKind::kRegisters>};

}  // namespace amarena
