// Buffers: the scratch a tree needs, a packing copy's buffer carved from it,
// and a packed B filled as the first tile of its body reads it
// (Emitter::FillsOnFirstUse). Internal to jit/.
#include <algorithm>
#include <memory>
#include <vector>

#include "jit/emit_check.h"
#include "jit/emitter.h"

namespace amarena::jit {

namespace {

// Bytes of a buffer holding `t`: what its layout addresses, panel padding,
// interleaved rows padded to whole pairs and unused section slots included.
int64_t BufferBytes(const TensorSpec& t) { return t.StoredBytes(); }

int64_t AlignUp(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

// Scratch past a buffer for the flag that says whether it has been filled
// on first use (Emitter::LowerFillingTile): a line of its own.
constexpr int64_t kFillFlagBytes = 64;

}  // namespace

int64_t ScratchNeeded(const ImplNode& node) {
  int64_t below = 0;
  for (const ImplPtr& c : node.children)
    below = std::max(below, ScratchNeeded(*c));
  if (node.how.type == NodeType::kAlloc &&
      node.how.alloc.kind == AllocKind::kBuffer) {
    TensorSpec t = node.spec.Operand(node.how.alloc.operand);
    t.aux = node.how.alloc.to;
    // Any buffer may be filled on first use: room for its flag.
    below += AlignUp(BufferBytes(t), 64) + kFillFlagBytes;
  }
  return below;
}

namespace {

// Whether every read of operand `i` in the matmul subtree `node` is a
// broadcast kernel's load of f32 vectors (what BroadcastFma tees; a row's
// partial last vector under a mask), and nothing else moves, buffers or
// batches it.
bool ReadOnlyByTeeingKernels(const ImplNode& node, int i) {
  const Spec& s = node.spec;
  if (!s.IsMatmul()) return true;  // a zero or a move of another operand
  switch (node.how.type) {
    case NodeType::kLoop:
      if (node.how.loop.dim == Dim::kB) return false;
      break;
    case NodeType::kBlock:
      break;
    case NodeType::kAlloc:
      if (node.how.alloc.operand == i &&
          node.how.alloc.kind != AllocKind::kView)
        return false;
      break;
    case NodeType::kKernel: {
      const int vw = s.aux[2].vector_width;
      return node.how.kernel == KernelId::kBroadcastFma &&
             s.aux[i].dtype == DType::kF32 && vw > 1;
    }
  }
  for (const ImplPtr& c : node.children)
    if (!ReadOnlyByTeeingKernels(*c, i)) return false;
  return true;
}

// A serial loop along m with a tile after the first: a loop whose first
// tile can fill a buffer the others then read.
bool SerialLoopAlongM(const ImplNode& node) {
  if (node.how.type != NodeType::kLoop) return false;
  const LoopInfo& loop = node.how.loop;
  return loop.dim == Dim::kM && !loop.parallel && loop.full_iters >= 1 &&
         (loop.full_iters >= 2 || node.HasRemainder());
}

// Whether `node` (the first tile of a fill, below its leading loops along m)
// reads each element of B once: no loop along m, whose every tile would
// read B again from where it was and store it again (`tile m 64; view 0 l2;
// tile n 64; tile m 6`, 100^3 on AVX-512: 0.67x the speed of the copy).
bool ReadsBOnce(const ImplNode& node) {
  if (node.how.type == NodeType::kLoop && node.how.loop.dim == Dim::kM)
    return false;
  for (const ImplPtr& c : node.children)
    if (!ReadsBOnce(*c)) return false;
  return true;
}

// The first tile of `loop` below its leading serial loops along m: the one
// that fills the buffer (Emitter::LowerFillingTile).
const ImplNode& FillingTileOf(const ImplNode& loop) {
  const ImplNode* head = loop.children[0].get();
  while (SerialLoopAlongM(*head)) head = head->children[0].get();
  return *head;
}

}  // namespace

bool Emitter::FillsOnFirstUse(const ImplNode& node,
                              bool operands_fit_l3) const {
  const AllocInfo& a = node.how.alloc;
  const Spec& s = node.spec;
  if (!fill_on_first_use_ || !operands_fit_l3 ||
      a.kind != AllocKind::kBuffer || !a.prologue ||
      a.epilogue || !s.IsMatmul() || a.operand != 1 || s.b != 1 ||
      s.aux[1].dtype != DType::kF32 || a.to.dtype != DType::kF32 ||
      !Faster(a.to.level, Level::kL3) || s.aux[1].layout.packed() ||
      !s.aux[1].layout.row_major())
    return false;
  const ImplNode& body = *node.children[1];
  // Every tile, the remainder's too, reads the buffer only as the first one
  // fills it: the vectors of its columns, a partial one under the mask it
  // was stored with (never the panels' padding); and the first tile reads
  // each element of B once.
  return SerialLoopAlongM(body) &&
         ReadOnlyByTeeingKernels(*body.children[0], a.operand) &&
         ReadsBOnce(FillingTileOf(body)) &&
         (!body.HasRemainder() ||
          ReadOnlyByTeeingKernels(*body.children[1], a.operand));
}

void Emitter::LowerBuffer(const ImplNode& node, std::span<const View> views) {
  const AllocInfo& a = node.how.alloc;
  TensorSpec t = node.spec.Operand(a.operand);
  t.aux = a.to;
  const int64_t bytes = AlignUp(BufferBytes(t), 64);
  View buf = MemoryView(t);
  buf.base = AllocGpr();
  lea(buf.base, ptr[scratch_ + Disp32(scratch_top_)]);
  Points& p = points_[static_cast<size_t>(buf.base.getIdx())];
  p = points_[static_cast<size_t>(scratch_.getIdx())];
  p.lo += scratch_top_;
  p.hi += scratch_top_;
  scratch_top_ += bytes;
  AMARENA_JIT_CHECK(scratch_top_ <= scratch_bytes_);
  if (FillsOnFirstUse(node, operands_fit_l3_)) {
    // The loops along m do not move B, so the filling tile sees the buffer
    // and the source as they are here.
    const ImplNode& body = *node.children[1];
    std::vector<View> inner(views.begin(), views.end());
    inner[a.operand] = buf;
    const FillingTile outer = filling_;
    filling_ = {&FillingTileOf(body), a.operand, views[a.operand],
                scratch_top_};
    scratch_top_ += kFillFlagBytes;
    AMARENA_JIT_CHECK(scratch_top_ <= scratch_bytes_);
    Touch(scratch_, filling_.flag);
    mov(byte[scratch_ + Disp32(filling_.flag)], 0);
    Lower(body, inner);
    scratch_top_ -= kFillFlagBytes;
    filling_ = outer;
  } else {
    LowerAllocChildren(node, views, buf);
  }
  scratch_top_ -= bytes;
  FreeGpr(buf.base);
}

void Emitter::LowerFillingTile(const ImplNode& node,
                               std::span<const View> views) {
  // The tile is lowered twice: reading the buffer, inline, where every run
  // but the first goes; and reading the source teed into the buffer, out of
  // the way. Both start owing nothing (Lower paid); the filling copy ends
  // owing what the buffer-reading one does, so the bumps still owed after the
  // join fold into the enclosing loop's as any tile's do.
  const FillingTile f = filling_;
  filling_ = FillingTile();
  Xbyak::Label fill, done;
  Touch(scratch_, f.flag);
  cmp(byte[scratch_ + Disp32(f.flag)], 0);
  je(fill, T_NEAR);
  LowerNode(node, views);
  const auto owed = owed_;
  jmp(done, T_NEAR);
  L(fill);
  owed_ = {};
  mov(byte[scratch_ + Disp32(f.flag)], 1);
  std::vector<View> teed(views.begin(), views.end());
  teed[f.operand] = f.source;
  teed[f.operand].tee = std::make_shared<View>(views[f.operand]);
  LowerNode(node, teed);
  for (size_t i = 0; i < owed_.size(); ++i) owed_[i] -= owed[i];
  PayOwed();
  owed_ = owed;
  L(done);
  filling_ = f;
}

}  // namespace amarena::jit
