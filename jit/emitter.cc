#include "jit/emitter.h"

#include <algorithm>

#include "jit/emit_check.h"

namespace amarena::jit {

using Xbyak::Reg64;

int64_t View::Offset(int64_t i, int64_t j) const {
  AMARENA_JIT_CHECK(!in_regs);
  return AffineView::Offset(i, j);
}

namespace {
// The Emitter whose EmitFunction is running on this thread (the audit).
thread_local Emitter* auditing = nullptr;
}  // namespace

Xbyak::Address View::At(int64_t i, int64_t j) const {
  const int64_t off = Offset(i, j);
  if (auditing != nullptr) auditing->Touch(base, off);
  return Xbyak::util::ptr[base + Disp32(off)];
}

void Emitter::Touch(const Reg64& base, int64_t offset) {
  const Points& p = points_[static_cast<size_t>(base.getIdx())];
  AMARENA_JIT_CHECK(p.region >= 0);  // every base points somewhere known
  Range& r = touched_[static_cast<size_t>(p.region)];
  r.min = std::min(r.min, p.lo + offset);
  r.max = std::max(r.max, p.hi + offset);
}

View View::Slice(int64_t r0, int64_t c0, int64_t nrows, int64_t ncols) const {
  View v = *this;
  v.rows = nrows;
  v.cols = ncols;
  if (!in_regs) {
    std::optional<AffineView> mem = AffineView::Slice(r0, c0, nrows, ncols);
    AMARENA_JIT_CHECK(mem.has_value());
    static_cast<AffineView&>(v) = *mem;
    if (tee) v.tee = std::make_shared<View>(tee->Slice(r0, c0, nrows, ncols));
    return v;
  }
  AMARENA_JIT_CHECK(c0 % vw == 0);
  AMARENA_JIT_CHECK(!tee);
  v.regs.clear();
  for (int64_t i = 0; i < nrows; ++i)
    for (int64_t j = 0; j < ncols; j += vw)
      v.regs.push_back(Reg(r0 + i, c0 + j));
  return v;
}

int64_t View::Step(Axis axis, int64_t tile) const {
  AMARENA_JIT_CHECK(!in_regs);
  std::optional<int64_t> step = AffineView::Step(axis, tile);
  AMARENA_JIT_CHECK(step.has_value());
  return *step;
}

View MemoryView(const TensorSpec& t, int64_t pitch) {
  View v;
  static_cast<AffineView&>(v) =
      t.layout().Affine(t.rows, t.cols, SizeOf(t.aux.dtype), pitch);
  v.rows = t.rows;
  v.cols = t.cols;
  return v;
}

// GPRs the emitter may hand out (rsp excluded; rdi holds the operand array only
// until the bases are loaded). Callee-saved ones are pushed by the prologue.
static const int kGprOrder[] = {
    Xbyak::Operand::RAX, Xbyak::Operand::RCX, Xbyak::Operand::RDX,
    Xbyak::Operand::RSI, Xbyak::Operand::R8,  Xbyak::Operand::R9,
    Xbyak::Operand::R10, Xbyak::Operand::R11, Xbyak::Operand::RBX,
    Xbyak::Operand::RBP, Xbyak::Operand::R12, Xbyak::Operand::R13,
    Xbyak::Operand::R14, Xbyak::Operand::R15};

namespace {

// Plain heap memory for code being emitted: it is copied into the code arena
// when done, so it is never made executable (Xbyak's own allocator would
// flip it to read-write-execute).
struct HeapAllocator : Xbyak::Allocator {
  bool useProtect() const override { return false; }
};
HeapAllocator heap_allocator;

}  // namespace

Emitter::Emitter(const Target& target)
    : Xbyak::CodeGenerator(4096, Xbyak::AutoGrow, &heap_allocator),
      target_(target) {
  for (int r = target_.vector_registers - 1; r >= 0; --r)
    free_vregs_.push_back(r);
  for (int i = static_cast<int>(std::size(kGprOrder)) - 1; i >= 0; --i)
    free_gprs_.push_back(kGprOrder[i]);
}

void Emitter::LimitGprs(size_t n) {
  if (free_gprs_.size() > n)
    free_gprs_.erase(free_gprs_.begin(), free_gprs_.end() - n);
}

int Emitter::AllocVreg() {
  AMARENA_JIT_CHECK(!free_vregs_.empty());
  int r = free_vregs_.back();
  free_vregs_.pop_back();
  vreg_peak_ = std::max(vreg_peak_, VregsHeld());
  return r;
}
void Emitter::FreeVreg(int r) { free_vregs_.push_back(r); }

Reg64 Emitter::AllocGpr() {
  AMARENA_JIT_CHECK(!free_gprs_.empty());
  int r = free_gprs_.back();
  free_gprs_.pop_back();
  return Reg64(r);
}
void Emitter::FreeGpr(const Reg64& r) {
  // Its value is dead: what it was owed is never paid.
  owed_[static_cast<size_t>(r.getIdx())] = 0;
  free_gprs_.push_back(r.getIdx());
}

void Emitter::PayOwed() {
  for (size_t i = 0; i < owed_.size(); ++i) {
    const int64_t bytes = owed_[i];
    if (bytes == 0) continue;
    owed_[i] = 0;
    const Reg64 r(static_cast<int>(i));
    if (bytes > 0) {
      add(r, Disp32(bytes));
    } else {
      sub(r, Disp32(-bytes));
    }
  }
}

void Emitter::EmitFunction(const ImplNode& root,
                           const std::array<int64_t, 3>& leading) {
  struct Audit {
    explicit Audit(Emitter* e) { auditing = e; }
    ~Audit() { auditing = nullptr; }
  } audit(this);
  // The callee-saved registers, in kGprOrder's order: the prologue saves
  // only those the function can be handed, which the tree's GPR peak (its
  // counters and buffer pointers, core/impl.h) beside the operand bases and
  // the scratch pointer says; the rest leave the free list, so a tree that
  // needed more would fail to compile rather than clobber the caller's.
  static const Reg64 kSaved[] = {rbx, rbp, r12, r13, r14, r15};
  constexpr int kCallerSaved =
      static_cast<int>(std::size(kGprOrder) - std::size(kSaved));
  scratch_bytes_ = ScratchNeeded(root);
  operands_fit_l3_ = root.spec.OperandsFitL3();
  const int held = root.spec.NumOperands() + (scratch_bytes_ > 0 ? 1 : 0) +
                   root.cost.peak.gpr;
  const int saved = std::clamp(held - kCallerSaved, 0,
                               static_cast<int>(std::size(kSaved)));
  LimitGprs(static_cast<size_t>(kCallerSaved + saved));
  for (int i = 0; i < saved; ++i) push(kSaved[i]);
  if (scratch_bytes_ > 0) {
    scratch_ = AllocGpr();
    mov(scratch_, ptr[rdi + 8 * root.spec.NumOperands()]);
    points_[static_cast<size_t>(scratch_.getIdx())] = {kScratchRegion, 0, 0};
  }
  std::vector<View> views;
  for (int i = 0; i < root.spec.NumOperands(); ++i) {
    TensorSpec t = root.spec.Operand(i);
    AMARENA_JIT_CHECK(t.aux.level == Level::kGL);
    View v = MemoryView(t, leading[static_cast<size_t>(i)]);
    v.base = AllocGpr();
    mov(v.base, ptr[rdi + 8 * i]);
    points_[static_cast<size_t>(v.base.getIdx())] = {i, 0, 0};
    views.push_back(v);
  }
  Lower(root, views);
  // The operand bases are dead now: what they are owed is dropped with them.
  for (const View& v : views) FreeGpr(v.base);
  if (scratch_bytes_ > 0) FreeGpr(scratch_);
  for (int64_t bytes : owed_) AMARENA_JIT_CHECK(bytes == 0);
  vzeroupper();
  for (int i = saved - 1; i >= 0; --i) pop(kSaved[i]);
  ret();
  if (uses_masks_) {
    // 8 x -1 then 8 x 0: the 8 dwords from (8 - v) * 4 have v leading -1s
    // (AVX2 masks); then 17 words (1 << v) - 1 (AVX-512 opmasks), padded to
    // byte 128; then 33 dwords (1 << v) - 1 (32-lane word masks).
    align(64);
    L(mask_table_);
    for (int i = 0; i < 16; ++i) dd(i < 8 ? 0xffffffffu : 0u);
    for (int v = 0; v <= 16; ++v) dw(static_cast<uint16_t>((1u << v) - 1));
    for (int i = 17; i < 32; ++i) dw(0);
    for (int v = 0; v <= 32; ++v)
      dd(v == 32 ? 0xffffffffu : static_cast<uint32_t>((1ull << v) - 1));
  }
  if (alpha_) {
    align(64);
    L(alpha_table_);
    for (int i = 0; i < 16; ++i) dd(std::bit_cast<uint32_t>(*alpha_));
  }
  if (uses_high_words_) {
    align(64);
    L(high_words_table_);
    for (int i = 0; i < 16; ++i) dd(0xffff0000u);
  }
}

void Emitter::Lower(const ImplNode& node, std::span<const View> views) {
  PayOwed();
  if (&node == filling_.tile) return LowerFillingTile(node, views);
  LowerNode(node, views);
}

void Emitter::LowerNode(const ImplNode& node, std::span<const View> views) {
  switch (node.how.type) {
    case NodeType::kLoop:
      return LowerLoop(node, views);
    case NodeType::kAlloc:
      return LowerAlloc(node, views);
    case NodeType::kBlock:
      return LowerBlock(node, views);
    case NodeType::kKernel:
      return EmitKernel(*this, node.spec, node.how.kernel, views);
  }
}

namespace {

// Operand i's view for the tile starting at `start` along d with extent `len`.
View TileView(const Spec& s, const View& v, int i, Dim d, int64_t start,
              int64_t len) {
  if (d == Dim::kB) {  // the same matrix, `start` batch elements on
    View moved = v;
    moved.disp += BatchStep(s, i, start) * SizeOf(s.aux[i].dtype);
    return moved;
  }
  switch (OperandAxis(s, i, d)) {
    case Axis::kRows:
      return v.Slice(start, 0, len, v.cols);
    case Axis::kCols:
      return v.Slice(0, start, v.rows, len);
    case Axis::kNone:
      break;
  }
  return v;
}

}  // namespace

std::vector<View> TileViews(const Spec& s, std::span<const View> views, Dim d,
                            int64_t start, int64_t len) {
  std::vector<View> out;
  for (int i = 0; i < s.NumOperands(); ++i)
    out.push_back(TileView(s, views[i], i, d, start, len));
  return out;
}

void Emitter::LowerLoop(const ImplNode& node, std::span<const View> views) {
  const Spec& s = node.spec;
  const LoopInfo& loop = node.how.loop;
  const int n = s.NumOperands();

  auto tile_views = [&](int64_t start, int64_t len) {
    return TileViews(s, views, loop.dim, start, len);
  };
  const int64_t rem = Extent(s, loop.dim) - loop.full_iters * loop.tile;

  if (loop.unrolled) {
    // Unrolled: register tiles are bound statically, one body copy per tile.
    for (int64_t it = 0; it < loop.full_iters; ++it)
      Lower(*node.children[0], tile_views(it * loop.tile, loop.tile));
    if (rem)
      Lower(*node.children[1], tile_views(loop.full_iters * loop.tile, rem));
    return;
  }

  // Counted loop; each moving memory operand's base (and the base of a
  // buffer it is teed into) is bumped by one tile per iteration.
  struct Bump {
    Reg64 base;
    int64_t step = 0;
    Points saved;
  };
  std::vector<Bump> bumps;
  for (int i = 0; i < n; ++i) {
    Axis axis = OperandAxis(s, i, loop.dim);
    int64_t step = 0, tee_step = 0;
    if (axis != Axis::kNone) {
      AMARENA_JIT_CHECK(!views[i].in_regs);  // the search unrolls those loops
      step = views[i].Step(axis, loop.tile);
      if (views[i].tee) tee_step = views[i].tee->Step(axis, loop.tile);
    }
    if (loop.dim == Dim::kB) {  // a shared operand's pointer stays
      AMARENA_JIT_CHECK(!views[i].in_regs && !views[i].tee);
      step = BatchStep(s, i, loop.tile) * SizeOf(s.aux[i].dtype);
    }
    if (step) bumps.push_back({views[i].base, step, {}});
    if (tee_step) bumps.push_back({views[i].tee->base, tee_step, {}});
  }
  // In-place bumps need distinct base registers.
  for (size_t i = 0; i < bumps.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      AMARENA_JIT_CHECK(bumps[i].base != bumps[j].base);
  std::vector<View> body = tile_views(0, loop.tile);
  // The counter lives in a GPR when the search gave it one (and the pool, which
  // tests may shrink, has one); otherwise in a stack slot (rsp-relative slots
  // nest like the loops).
  AMARENA_JIT_CHECK(loop.full_iters >= 1);  // dec-then-jnz runs at least once
  const bool in_reg = loop.counter_in_reg && HasFreeGpr();
  Reg64 counter = in_reg ? AllocGpr() : Reg64();
  if (in_reg) {
    mov(counter, loop.full_iters);
  } else {
    push(Disp32(loop.full_iters));
  }
  // The audit: in the body, a stepped base may hold any of its iterations'
  // offsets; at the remainder, it has moved by every full iteration.
  auto points = [&](const Bump& b) -> Points& {
    return points_[static_cast<size_t>(b.base.getIdx())];
  };
  auto shift = [&](const Bump& b, int64_t from, int64_t to) {
    points(b).lo = b.saved.lo + std::min(from, to);
    points(b).hi = b.saved.hi + std::max(from, to);
  };
  for (Bump& b : bumps) {
    b.saved = points(b);
    shift(b, 0, b.step * (loop.full_iters - 1));
  }
  Xbyak::Label top;
  L(top);
  Lower(*node.children[0], body);
  // Folded with what the body still owes (its own loops' restores).
  for (const Bump& b : bumps) Owe(b.base, b.step);
  PayOwed();
  if (in_reg) {
    dec(counter);
    FreeGpr(counter);
  } else {
    dec(qword[rsp]);
  }
  jnz(top);
  if (!in_reg) add(rsp, 8);
  // Bases now point at the remainder tile.
  for (const Bump& b : bumps)
    shift(b, b.step * loop.full_iters, b.step * loop.full_iters);
  if (rem) Lower(*node.children[1], tile_views(0, rem));
  for (const Bump& b : bumps) points(b) = b.saved;
  // Owed, not emitted: the enclosing loop's bump may cancel it.
  for (const Bump& b : bumps) Owe(b.base, -b.step * loop.full_iters);
}

void Emitter::LowerAlloc(const ImplNode& node, std::span<const View> views) {
  const AllocInfo& a = node.how.alloc;
  if (a.kind == AllocKind::kView) {  // a cache view changes the Spec, not code
    // Where an output viewed in L1 was before (AddsOutputLate).
    const bool output = a.operand == node.spec.OutputIndex() &&
                        a.to.level == Level::kL1;
    const Level was = output_from_;
    if (output) output_from_ = node.spec.aux[a.operand].level;
    Lower(*node.children[0], views);
    output_from_ = was;
    return;
  }
  if (a.kind == AllocKind::kBuffer) return LowerBuffer(node, views);
  const View& mem = views[a.operand];
  View reg;
  reg.in_regs = true;
  reg.rows = mem.rows;
  reg.cols = mem.cols;
  reg.vw = a.to.vector_width;
  for (int64_t r = 0; r < reg.rows * reg.RegsPerRow(); ++r)
    reg.regs.push_back(AllocVreg());
  LowerAllocChildren(node, views, reg);
  for (auto it = reg.regs.rbegin(); it != reg.regs.rend(); ++it) FreeVreg(*it);
}

bool Emitter::AddsOutputLate(const ImplNode& node, const View& mem,
                             const View& reg) const {
  const AllocInfo& a = node.how.alloc;
  if (a.kind != AllocKind::kRegisters || !a.prologue || !a.epilogue ||
      node.spec.kind != Kind::kMatmulAccum || node.spec.k < kLateOutputMinK ||
      reg.rows < 2 || !Faster(Level::kL2, output_from_))
    return false;
  // The prologue is a plain load of whole f32 vectors, each one run of
  // consecutive elements in memory.
  const ImplNode& load = *node.children[0];
  return load.how.type == NodeType::kKernel &&
         load.how.kernel == KernelId::kVectorLoad && reg.vw > 1 &&
         reg.cols % reg.vw == 0 && mem.col_stride == 4 &&
         mem.panel_axis == Axis::kNone &&
         node.spec.aux[a.operand].dtype == DType::kF32;
}

void Emitter::LowerAllocChildren(const ImplNode& node,
                                 std::span<const View> views,
                                 const View& moved) {
  const AllocInfo& a = node.how.alloc;
  const View& from = views[a.operand];
  const bool late = AddsOutputLate(node, from, moved);
  size_t child = 0;
  if (late) {
    // A line per 16 floats of each row, and the row's last element: where
    // the row starts within a line is only known at run time.
    constexpr int64_t kLineFloats = kLineBytes / 4;
    for (int64_t i = 0; i < moved.rows; ++i) {
      for (int64_t j = 0; j < moved.cols; j += kLineFloats)
        prefetcht0(from.At(i, j));
      if ((moved.cols - 1) % kLineFloats != 0)
        prefetcht0(from.At(i, moved.cols - 1));
    }
    for (int r : moved.regs) Zero(r);
    ++child;  // the load, which the adds below take the place of
  } else if (a.prologue) {
    View io[] = {from, moved};
    Lower(*node.children[child++], io);
  }
  std::vector<View> inner(views.begin(), views.end());
  inner[a.operand] = moved;
  Lower(*node.children[child++], inner);
  if (late)
    for (int64_t i = 0; i < moved.rows; ++i)
      for (int64_t j = 0; j < moved.cols; j += moved.vw) {
        const Xbyak::Xmm v = VecW(moved.Reg(i, j), moved.vw);
        vaddps(v, v, from.At(i, j));
      }
  if (a.epilogue) {
    View io[] = {moved, from};
    Lower(*node.children[child++], io);
  }
}

void Emitter::LowerBlock(const ImplNode& node, std::span<const View> views) {
  for (const ImplPtr& c : node.children) {
    if (c->spec.kind == Kind::kZero) {
      View out[] = {views[node.spec.OutputIndex()]};
      Lower(*c, out);
    } else {
      Lower(*c, views);
    }
  }
}

}  // namespace amarena::jit
