// The loops: tile (m or n, or b), parallel tile (m or n, or b, at the root)
// and split (k). Their descriptors: "tile D N", "parallel tile D N",
// "split k N".
//
// A batched matmul (b > 1) is only ever tiled along b (every other rewrite
// but a view or a pack of a shared input declines it), so every batch-1
// Spec below it is an ordinary one: the batch is a loop around the kernel
// of one batch element, and only what the batch shares (sb=0) may be moved
// before it (a shared B packed once, not once per batch element).
//
// tile: Tile the output along m or n.
// Applies to: Matmul, MatmulAccum, Zero, Move, with the sizes TileSizes allows
//   (2^a and 3 * 2^a below the extent; register tiles and packed panels kept
//   whole). A tile need not divide the extent.
// Yields: a serial Loop whose body is the same Spec on one tile (inputs follow:
//   A's rows with m, B's columns with n) and, if the size does not divide, one
//   remainder Spec covering the last partial tile. A loop allocates nothing;
//   a counted loop's body loses the GPR that holds its counter.
//   Batched: a loop over b in tiles of 1 whose body is the batch-1 matmul;
//   each operand's pointer moves by its batch stride (a shared one stays).
//
// parallel tile: Tile a matmul along m or n, one pool task per tile.
// Applies to: with more than one worker, a matmul at the root (every operand
//   in GL, not serial), with the sizes TileSizes allows that make at least as
//   many tiles as workers.
// Yields: a parallel Loop, body and remainder as for tile, both marked serial
//   (so there is at most one parallel loop per tree) and with no counter.
//   Batched: along b only, in tiles of powers of two and of ceil(b /
//   workers) that make at least as many tasks as workers; a task of more
//   than one batch element is a serial batched matmul (which may pack a
//   shared B once per task).
//
// split: Split the reduction dimension k.
// Applies to: MatmulAccum (the accumulation makes the pieces independent of
//   order) whose C is f32, with the sizes TileSizes allows. A bf16 C would be
//   rounded after every slice: its partial sums stay in an f32 buffer (pack,
//   moves.cc) and k is split below it. Each slice keeps alpha: it adds
//   alpha * A_k.B_k, and the slices add up to alpha * A.B.
// Yields: a serial Loop over k whose body is the MatmulAccum on a k-slice (A's
//   columns, B's rows) and, if the size does not divide k, one remainder
//   slice. Budgets as for tiling.
#include <algorithm>
#include <numeric>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "core/cost_model.h"
#include "core/spec_text.h"
#include "core/status_macros.h"
#include "search/rewrites/registry.h"

namespace amarena {

namespace {

void SetExtent(Spec& s, Dim d, int64_t extent) {
  switch (d) {
    case Dim::kM:
      s.m = extent;
      break;
    case Dim::kK:
      s.k = extent;
      break;
    case Dim::kN:
      s.n = extent;
      break;
    case Dim::kB:
      s.b = extent;
      break;
  }
}

// What every tile along `d` must be a multiple of: each operand that moves
// along `d` may demand a width, a register tile's lanes along its columns or
// what its layout needs in memory (Layout::TileMultiple: panels, groups of
// them, row pairs). 0 when two of them conflict (no tile keeps both whole).
int64_t TileMultipleAlong(const Spec& s, Dim d) {
  const int64_t extent = Extent(s, d);
  int64_t multiple = 1;
  for (int i = 0; i < s.NumOperands(); ++i) {
    Axis axis = OperandAxis(s, i, d);
    if (axis == Axis::kNone) continue;
    TensorSpec t = s.Operand(i);
    int64_t w = 1;
    if (t.aux.level == Level::kVRF && axis == Axis::kCols && t.cols > 1) {
      w = t.aux.vector_width;
    } else {
      w = t.layout().TileMultiple(axis, extent);
    }
    if (w > 1) {
      if (multiple % w != 0 && w % multiple != 0) return 0;
      multiple = std::max(multiple, w);
    }
  }
  return multiple;
}

// Tile sizes below the extent of `d`: 2^a, plus 3, 6 and 12 along m (so 6 x 16
// register tiles exist), keeping every register tile whole (a multiple of its
// vector width) and every packed operand's panels whole (a multiple of its
// panel width) and its interleaved row pairs whole (a multiple of 2). Held
// inline: a cold search asks for the sizes of half a million loops.
using Sizes = absl::InlinedVector<int64_t, 24>;

Sizes TileSizes(const Spec& s, Dim d) {
  const int64_t extent = Extent(s, d);
  const int64_t multiple = TileMultipleAlong(s, d);
  if (multiple == 0) return {};
  // 3 * 2^a only where it makes register tiles: 3, 6 and 12 rows along m.
  const int64_t max_three = d == Dim::kM ? 12 : 0;
  Sizes sizes;
  for (int64_t p = 1; p < extent; p *= 2) {
    for (int64_t size : {p, 3 * p}) {
      if (size >= extent || size % multiple != 0) continue;
      if (size != p && size > max_three) continue;
      sizes.push_back(size);
    }
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  // A tile over half the extent runs once and leaves a remainder: a split in
  // two. Only the largest such tile is offered (biggest piece + the rest).
  while (sizes.size() >= 2 && 2 * sizes[sizes.size() - 2] > extent)
    sizes.erase(sizes.end() - 2);
  return sizes;
}

// A Loop candidate over `d` in tiles of `size` (< the extent), the last
// partial tile becoming its own remainder sub-Spec. `tiles` is
// WithoutLds(s), which the rewrites compute once for all their sizes.
Candidate MakeLoop(const Spec& s, const Spec& tiles, ActionKind kind, Dim d,
                   int64_t size) {
  int64_t extent = Extent(s, d);
  AMARENA_CHECK(size >= 1 && size < extent);
  Candidate c;
  c.action = Action{.kind = kind, .dim = d, .size = size};
  Expansion& e = c.expansion;
  e.type = NodeType::kLoop;
  LoopInfo& loop = e.loop;
  loop = LoopInfo{.dim = d, .tile = size, .full_iters = extent / size};
  bool moves_registers = false;
  for (int i = 0; i < s.NumOperands(); ++i)
    moves_registers |=
        OperandAxis(s, i, d) != Axis::kNone && s.aux[i].level == Level::kVRF;
  // Tiles are addressed through their parent's views (WithoutLds).
  Spec body = tiles;
  SetExtent(body, d, size);
  if (kind == ActionKind::kParallelTile) {
    // Run by the pool: no counter (its children are serial, as every Spec
    // below the root is: registry.cc).
    loop.parallel = true;
  } else {
    loop.unrolled = moves_registers || loop.full_iters == 1;
    loop.counter_in_reg = !loop.unrolled && s.budget->gpr >= 1;
  }
  body.budget = LoopChildBudget(*s.budget, loop, 0);
  e.children.push_back(Canonical(body));
  if (extent % size) {
    Spec rem = tiles;
    SetExtent(rem, d, extent % size);
    e.children.push_back(Canonical(rem));
  }
  return c;
}

// Tiles of a parallel loop over the batch: powers of two and the even share
// ceil(b / workers), each making at least `workers` tasks (a remainder is
// a task too).
std::vector<int64_t> BatchTileSizes(const Spec& s, int workers) {
  std::vector<int64_t> sizes;
  auto offer = [&](int64_t size) {
    if (size >= 1 && size < s.b && (s.b + size - 1) / size >= workers)
      sizes.push_back(size);
  };
  for (int64_t p = 1; p < s.b; p *= 2) offer(p);
  offer((s.b + workers - 1) / workers);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

// Whether a loop over `d` in tiles of `size` is wanted: every one when
// `only` is null (enumerate), else just the action's (enumerate_one).
bool Wanted(const Action* only, Dim d, int64_t size) {
  return only == nullptr || (only->dim == d && only->size == size);
}

// A matmul whose row-major C fits one vector across (n at most the f32
// lanes) and whose B is plain (not in panels or k-pairs, which a vector may
// not straddle): every tile along n is still one vector a row, so tiling n
// only repeats the same instructions over narrower tiles. Only single
// columns are offered, and only of a column-major B (a dot product per
// column).
bool NarrowerThanVector(const Spec& s, const Target& t) {
  const Layout &b = s.aux[1].layout, &c = s.aux[2].layout;
  return s.IsMatmul() && s.n <= t.f32_lanes && !b.packed() && !b.paired() &&
         c.row_major() && !c.packed();
}

// A matmul whose B is column-major and unpacked, in GL or L3 (or in L2 with
// more than kRowsBeforePacking rows), is not tiled along m by the search: the
// broadcast kernels need B in row panels, so each tile of rows would pack
// its own copy of B, or read B unpacked (one dot product per output) from a
// slow level; packing B once before the loop over rows (or tiling n or k
// first) does the work of the first at a single copy, and the second pays
// off only for few rows. This restricts the space (it is not a dominance
// the model proves): over 156 cold searches of column-major shapes (both
// ISAs, one and two workers, m from 1 to 2048) it left every pick's cost
// unchanged and cut the Specs solved by 44 %; with 16 rows in L2 instead of
// 64, two picks of 24 rows (dot products on tiles of 12) cost 0.1 % more.
// A decision given to ApplyAction (a stored or hand-written tree) may still
// tile there.
inline constexpr int64_t kRowsBeforePacking = 64;
bool PacksBeforeTilingRows(const Spec& s) {
  const TensorAux& b = s.aux[1];
  if (!s.IsMatmul() || b.layout.row_major() || b.layout.packed()) return false;
  return b.level == Level::kGL || b.level == Level::kL3 ||
         (b.level == Level::kL2 && s.m > kRowsBeforePacking);
}

void TileOut(const Spec& s, const Target& t, std::vector<Candidate>& out,
             const Action* only) {
  if (s.b > 1) {
    if (Wanted(only, Dim::kB, 1))
      out.push_back(MakeLoop(s, WithoutLds(s), ActionKind::kTile, Dim::kB, 1));
    return;
  }
  const Spec tiles = WithoutLds(s);
  for (Dim d : {Dim::kM, Dim::kN}) {
    if (only != nullptr && only->dim != d) continue;
    const bool narrow = d == Dim::kN && NarrowerThanVector(s, t);
    if (narrow && s.aux[1].layout.row_major()) continue;
    if (d == Dim::kM && only == nullptr && PacksBeforeTilingRows(s)) continue;
    for (int64_t size : TileSizes(s, d))
      if (Wanted(only, d, size) && (!narrow || size == 1))
        out.push_back(MakeLoop(s, tiles, ActionKind::kTile, d, size));
  }
}

// Once per tree (the tiles are serial), at the root (every operand in GL, so
// each task is a whole kernel over its tile), with at least as many tiles as
// workers.
void ParallelTile(const Spec& s, const Target& t, std::vector<Candidate>& out,
                  const Action* only) {
  if (s.serial || t.workers < 2 || !s.IsMatmul()) return;
  for (int i = 0; i < s.NumOperands(); ++i)
    if (s.aux[i].level != Level::kGL) return;
  const Spec tiles = WithoutLds(s);
  if (s.b > 1) {
    for (int64_t size : BatchTileSizes(s, t.workers))
      if (Wanted(only, Dim::kB, size))
        out.push_back(
            MakeLoop(s, tiles, ActionKind::kParallelTile, Dim::kB, size));
    return;
  }
  for (Dim d : {Dim::kM, Dim::kN}) {
    if (only != nullptr && only->dim != d) continue;
    const int64_t extent = Extent(s, d);
    const Sizes sizes = TileSizes(s, d);
    for (int64_t size : sizes)
      if (extent / size >= t.workers && Wanted(only, d, size))
        out.push_back(MakeLoop(s, tiles, ActionKind::kParallelTile, d, size));
    // And the even share, as BatchTileSizes offers the batch's: one task a
    // worker (the last one shorter), each a multiple of what the tiles must
    // be and, along n, of two vectors (a register tile's width). Powers of
    // two alone split 143 rows into 64, 64 and 15: two rounds of tasks on
    // two workers. A share the loop above offered (as many full tiles as
    // workers) is not offered twice.
    const int64_t multiple = TileMultipleAlong(s, d);
    if (multiple == 0) continue;
    const int64_t step =
        d == Dim::kN ? std::lcm(multiple, int64_t{2} * t.f32_lanes) : multiple;
    const int64_t share =
        ((extent + t.workers - 1) / t.workers + step - 1) / step * step;
    const bool offered =
        extent / share >= t.workers &&
        std::find(sizes.begin(), sizes.end(), share) != sizes.end();
    if (share < extent && (extent + share - 1) / share == t.workers &&
        !offered && Wanted(only, d, share))
      out.push_back(MakeLoop(s, tiles, ActionKind::kParallelTile, d, share));
  }
}

void SplitK(const Spec& s, const Target&, std::vector<Candidate>& out,
            const Action* only) {
  if (s.kind != Kind::kMatmulAccum || s.b > 1 || s.aux[2].dtype != DType::kF32)
    return;
  if (only != nullptr && only->dim != Dim::kK) return;
  const Spec tiles = WithoutLds(s);
  for (int64_t size : TileSizes(s, Dim::kK))
    if (Wanted(only, Dim::kK, size))
      out.push_back(MakeLoop(s, tiles, ActionKind::kSplit, Dim::kK, size));
}

// A loop's size in its descriptor: at most 2^40, far above any extent.
std::optional<int64_t> ParseSize(absl::string_view w) {
  std::optional<int64_t> n = ParseCount(w, int64_t{1} << 40);
  if (n == 0) return std::nullopt;
  return n;
}

std::string DescribeTile(const Action& a) {
  return absl::StrCat("tile ", Name(a.dim), " ", a.size);
}

std::string DescribeParallelTile(const Action& a) {
  return absl::StrCat("parallel ", DescribeTile(a));
}

std::string DescribeSplit(const Action& a) {
  return absl::StrCat("split k ", a.size);
}

// "tile D N", from `words` after any "parallel".
absl::StatusOr<Action> ParseLoop(std::span<const absl::string_view> words,
                                 ActionKind kind) {
  if (words.size() != 3) return absl::InvalidArgumentError("want 'tile D N'");
  std::optional<Dim> d;
  if (words[1] == "m") d = Dim::kM;
  if (words[1] == "k") d = Dim::kK;
  if (words[1] == "n") d = Dim::kN;
  if (words[1] == "b") d = Dim::kB;
  std::optional<int64_t> n = ParseSize(words[2]);
  if (!d || !n)
    return absl::InvalidArgumentError(
        "want a dimension m, k, n or b and a size");
  return Action{.kind = kind, .dim = *d, .size = *n};
}

absl::StatusOr<Action> ParseTile(std::span<const absl::string_view> words) {
  return ParseLoop(words, ActionKind::kTile);
}

absl::StatusOr<Action> ParseParallelTile(
    std::span<const absl::string_view> words) {
  if (words.size() != 4 || words[1] != "tile")
    return absl::InvalidArgumentError("want 'parallel tile D N'");
  return ParseLoop(words.subspan(1), ActionKind::kParallelTile);
}

absl::StatusOr<Action> ParseSplit(std::span<const absl::string_view> words) {
  std::optional<int64_t> n;
  if (words.size() == 3) n = ParseSize(words[2]);
  if (words.size() != 3 || words[1] != "k" || !n)
    return absl::InvalidArgumentError("want 'split k N'");
  return Action{.kind = ActionKind::kSplit, .dim = Dim::kK, .size = *n};
}

}  // namespace

extern const Rewrite kTileRewrite = {.name = "tile",
                                     .keyword = "tile",
                                     .enumerate = EnumerateAll<TileOut>,
                                     .enumerate_one = EnumerateOne<TileOut>,
                                     .owns = OwnsKind<ActionKind::kTile>,
                                     .describe = DescribeTile,
                                     .parse = ParseTile};

extern const Rewrite kParallelTileRewrite = {
    .name = "parallel tile",
    .keyword = "parallel",
    .enumerate = EnumerateAll<ParallelTile>,
    .enumerate_one = EnumerateOne<ParallelTile>,
    .owns = OwnsKind<ActionKind::kParallelTile>,
    .describe = DescribeParallelTile,
    .parse = ParseParallelTile};

extern const Rewrite kSplitRewrite = {.name = "split",
                                      .keyword = "split",
                                      .enumerate = EnumerateAll<SplitK>,
                                      .enumerate_one = EnumerateOne<SplitK>,
                                      .owns = OwnsKind<ActionKind::kSplit>,
                                      .describe = DescribeSplit,
                                      .parse = ParseSplit};

}  // namespace amarena
