// The Emitter lowers an Impl tree to x86-64 with Xbyak. Internal to jit/.
//
// Each operand of the Spec being lowered has a View:
//   - in memory: a base GPR plus its layout's affine description in bytes
//     (core/layout.h, AffineView: a displacement, constant row/column strides,
//     panels and their strides; every shape is known when the kernel is
//     generated);
//   - in registers: the vector registers bound to the tile, row-major, `vw`
//     lanes each.
// Buffers (packing copies) live in a scratch area the caller passes after the
// operands; they are carved out of it in a stack discipline.
// Loops bump base registers in place and restore them afterwards, so after any
// node is emitted every base register holds what it held before, once the
// bumps it still owes are paid: a loop's restoring `sub` is deferred until
// the next node is emitted, so that when the next code is the enclosing loop's
// own `add` of a step the two fold into one instruction (or none when they
// cancel), and a register freed meanwhile never pays at all. Register tiles
// are bound when their Alloc is entered and freed on exit (a stack discipline),
// and loops that move a register tile are unrolled, so the VRF budget the
// search respected is exactly the number of registers the emitter hands out.
#ifndef AMARENA_JIT_EMITTER_H_
#define AMARENA_JIT_EMITTER_H_

#include <array>
#include <bit>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/impl.h"
#include "core/target.h"
#include "jit/emit_check.h"
#include "xbyak/xbyak.h"

namespace amarena::jit {

// Memory: the AffineView part (offsets in bytes from `base`), which the layout
// computes; the emitter only binds it to a base register.
struct View : AffineView {
  bool in_regs = false;
  Xbyak::Reg64 base;
  // Registers: regs[i * RegsPerRow() + j / vw] holds row i, columns j..j+vw-1.
  std::vector<int> regs;
  int64_t rows = 0, cols = 0;
  int vw = 0;
  // A buffer being filled on first use (Emitter::LowerBuffer): every vector
  // a kernel loads from this view it also stores at the same (i, j) of
  // `tee`, a memory view with its own base register. Slices slice both;
  // loops step both.
  std::shared_ptr<const View> tee;

  int64_t RegsPerRow() const { return (cols + vw - 1) / vw; }
  int Reg(int64_t i, int64_t j) const {
    return regs[i * RegsPerRow() + j / vw];
  }
  Xbyak::Address At(int64_t i, int64_t j) const;  // memory view only
  int64_t Offset(int64_t i, int64_t j) const;     // bytes from base
  // Sub-tile starting at (r0, c0) with the given extent. A slice of a packed
  // view starts on a panel boundary or stays within one panel
  // (AffineView::Slice).
  View Slice(int64_t r0, int64_t c0, int64_t nrows, int64_t ncols) const;
  // Bytes to add to the base to move `tile` rows (Axis::kRows) or columns.
  int64_t Step(Axis axis, int64_t tile) const;
};

// A memory view of `t` as stored in its own layout (Layout::Affine, in bytes),
// its base register unset. `pitch` is what Layout::TilePitch says of the whole
// matrix `t` is a tile of (0: `t` is the whole matrix): the elements between
// consecutive outer rows of a plain tile, the panel slots per section of one
// in sections.
View MemoryView(const TensorSpec& t, int64_t pitch = 0);

class Emitter : public Xbyak::CodeGenerator {
 public:
  explicit Emitter(const Target& target);

  // Emits `void fn(void* const* operands)` for a root Impl whose operands are
  // in GL; operands[NumOperands()] is the scratch area when scratch_bytes() >
  // 0.
  // `leading[i]` overrides operand i's row (column) pitch in elements.
  void EmitFunction(const ImplNode& root,
                    const std::array<int64_t, 3>& leading = {});
  int64_t scratch_bytes() const { return scratch_bytes_; }

  // The bounds audit. While EmitFunction runs, every memory access made
  // through View::At is recorded against what its base register may point
  // at: an operand or the scratch area, at a range of byte offsets that loops
  // widen by their steps. Touched(r) is the range of offsets at which
  // accesses to region r (operand i, or kScratchRegion) start; empty (min >
  // max) if none. Compile compares it with the region's size, so generated
  // code that would start an access outside its operands is refused at
  // creation on every ISA, whether or not the host can run it.
  static constexpr int kScratchRegion = 3;
  struct Range {
    int64_t min = INT64_MAX, max = INT64_MIN;
  };
  const Range& Touched(int region) const {
    return touched_[static_cast<size_t>(region)];
  }
  void Touch(const Xbyak::Reg64& base, int64_t offset);

  // Pools. The budget the search checked guarantees these never run dry; if
  // they do, it is our bug (a CHECK).
  int AllocVreg();
  void FreeVreg(int r);
  // Vector registers handed out and not yet returned, and the most held at
  // once since ResetVregPeak: how tests measure the scratch a kernel's
  // emitter takes (jit/kernel_scratch.h).
  int VregsHeld() const {
    return target_.vector_registers - static_cast<int>(free_vregs_.size());
  }
  int VregPeak() const { return vreg_peak_; }
  void ResetVregPeak() { vreg_peak_ = VregsHeld(); }
  Xbyak::Reg64 AllocGpr();
  bool HasFreeGpr() const { return !free_gprs_.empty(); }
  // Hand out at most `n` GPRs (tests use it to exercise stack-slot loop
  // counters).
  void LimitGprs(size_t n);
  // Whether packed B buffers may be filled on first use (FillsOnFirstUse).
  void set_fill_on_first_use(bool on) { fill_on_first_use_ = on; }
  // Whether the buffer `node` (an Alloc) is filled as its body first reads the
  // operand rather than by its prologue copy: a row-major f32 B packed into L1
  // or L2 with no epilogue, whose body is a serial loop along m (which does not
  // move B) of more than one tile, whose tiles read B only through the
  // broadcast kernel's loads of whole vectors, in a function whose operands fit
  // in its L3 budget (`operands_fit_l3`, Spec::OperandsFitL3 of its root).
  // The loop's first tile reads B from where it was, and the kernel stores each
  // vector it loads into the buffer as well (View::tee), so the stores overlap
  // its FMAs instead of a copy running ahead of them; every later tile reads
  // the buffer. Where B comes from memory the copy streams it faster than a
  // tile of FMAs reads it: on a Zen 4 guest the fill ran 16x4096x4096 (64 MiB
  // of B) 1.19x and 1024^3 (B packed into L3) 1.02-1.04x slower, and 64x64x64
  // with ldb=4096 1.03-1.07x, 256^3 1.015x and 128x768x768 1.02x faster. The
  // cost model still prices the copy as if it ran ahead.
  bool FillsOnFirstUse(const ImplNode& node, bool operands_fit_l3) const;
  void FreeGpr(const Xbyak::Reg64& r);

  // Deferred pointer bumps: Owe adds `bytes` to what GPR r must still be
  // moved by; PayOwed emits one add (or sub) per register owed a nonzero
  // amount. Every node pays what it finds owed before it emits code, so no
  // access ever sees a register that is owed a bump.
  void Owe(const Xbyak::Reg64& r, int64_t bytes) {
    owed_[static_cast<size_t>(r.getIdx())] += bytes;
  }
  void PayOwed();

  const Target& target() const { return target_; }

  // Vector register r at the target's width: ymm (AVX2) or zmm (AVX-512).
  Xbyak::Xmm Vec(int r) const { return VecW(r, target_.f32_lanes); }
  // Vector register r holding `lanes` f32: zmm (16), ymm (8), xmm (4 or 1).
  static Xbyak::Xmm VecW(int r, int lanes) {
    if (lanes == 16) return Xbyak::Zmm(r);
    if (lanes == 8) return Xbyak::Ymm(r);
    return Xbyak::Xmm(r);
  }
  // Masks for a last partial vector of `valid` lanes, read from a table the
  // function carries after its code. AVX2: vector register r becomes the
  // vmaskmovps mask; AVX-512: k1 becomes the opmask (returned).
  void LoadYmmMask(int r, int valid) {
    uses_masks_ = true;
    vmovdqu(Xbyak::Ymm(r), ptr[rip + mask_table_ + (8 - valid) * 4]);
  }
  const Xbyak::Opmask& SetK1(int valid) {
    uses_masks_ = true;
    kmovw(k1, ptr[rip + mask_table_ + 64 + 2 * valid]);
    return k1;
  }
  // k1 with `valid` of 32 word lanes set (bf16 tails of vdpbf16ps; AVX512BW).
  const Xbyak::Opmask& SetK1Words(int valid) {
    uses_masks_ = true;
    kmovd(k1, ptr[rip + mask_table_ + 128 + 4 * valid]);
    return k1;
  }

  // 64 bytes holding `alpha` in every f32 lane, from a table the function
  // carries after its code (as the masks): what scaled matmul kernels
  // multiply by (a memory operand: no register held). Every matmul of one
  // function has the root's alpha (no rewrite changes it), so there is one
  // table.
  Xbyak::Address AlphaVector(float alpha) {
    AMARENA_JIT_CHECK(!alpha_ || std::bit_cast<uint32_t>(*alpha_) ==
                                     std::bit_cast<uint32_t>(alpha));
    alpha_ = alpha;
    return ptr[rip + alpha_table_];
  }

  // 64 bytes of 0xffff0000 dwords, from a table the function carries after
  // its code (as the masks): a vector of bf16 k-pairs ANDed with it keeps
  // each dword's high word, the odd row as f32 (widen_pairs).
  Xbyak::Address HighWords() {
    uses_high_words_ = true;
    return ptr[rip + high_words_table_];
  }

  // Sets vector register r to zero (vpxord for zmm: AVX512F only).
  void Zero(int r) {
    if (target_.f32_lanes == 16) {
      vpxord(Xbyak::Zmm(r), Xbyak::Zmm(r), Xbyak::Zmm(r));
    } else {
      vxorps(Xbyak::Ymm(r), Xbyak::Ymm(r), Xbyak::Ymm(r));
    }
  }

 private:
  void Lower(const ImplNode& node, std::span<const View> views);
  void LowerLoop(const ImplNode& node, std::span<const View> views);
  void LowerAlloc(const ImplNode& node, std::span<const View> views);
  void LowerBlock(const ImplNode& node, std::span<const View> views);
  void LowerBuffer(const ImplNode& node, std::span<const View> views);
  // The tile that fills a buffer on first use (FillsOnFirstUse): the first
  // tile of the buffer's body below its leading loops along m, lowered twice
  // behind a flag in scratch. The first time it runs it reads the operand
  // from `source`, teed into the buffer; every later time, and every other
  // tile, reads the buffer. One copy of each loop, rather than the first
  // iteration of each leading loop peeled (the AVX-512 1024^3 kernel's
  // body three times and its remainder twice: 6.3 KiB against 2.9).
  struct FillingTile {
    const ImplNode* tile = nullptr;
    int operand = -1;
    View source;
    int64_t flag = 0;  // scratch offset of the byte: 0 until filled
  };
  void LowerFillingTile(const ImplNode& node, std::span<const View> views);
  void LowerNode(const ImplNode& node, std::span<const View> views);
  // An Alloc's [prologue Move,] body[, epilogue Move], with the operand's view
  // replaced by `moved` in the body.
  void LowerAllocChildren(const ImplNode& node, std::span<const View> views,
                          const View& moved);
  // Whether the register tile `reg` of `node` (an Alloc to registers) adds
  // its C from memory `mem` late (core/kernels.h, kLateOutputMinK).
  bool AddsOutputLate(const ImplNode& node, const View& mem,
                      const View& reg) const;

  Target target_;
  bool fill_on_first_use_ = true;
  FillingTile filling_;
  // Spec::OperandsFitL3 of the function being emitted.
  bool operands_fit_l3_ = false;
  // The level the output was viewed into L1 from, in the subtree being
  // lowered (kL1 outside any such view).
  Level output_from_ = Level::kL1;
  Xbyak::Label mask_table_;
  bool uses_masks_ = false;
  Xbyak::Label alpha_table_;
  Xbyak::Label high_words_table_;
  bool uses_high_words_ = false;
  std::optional<float> alpha_;
  Xbyak::Reg64 scratch_;
  int64_t scratch_top_ = 0;
  int64_t scratch_bytes_ = 0;
  std::vector<int> free_vregs_;
  int vreg_peak_ = 0;
  std::vector<int> free_gprs_;
  // What each GPR (by index) points at: a region and the offsets it may hold.
  struct Points {
    int region = -1;
    int64_t lo = 0, hi = 0;
  };
  std::array<Points, 16> points_{};
  // Bytes each GPR (by index) is still to be moved by (Owe).
  std::array<int64_t, 16> owed_{};
  std::array<Range, 4> touched_{};
};

// The views of every operand of `s` for its tile starting at `start` along
// d with extent `len` (an operand the dimension does not move keeps its view).
std::vector<View> TileViews(const Spec& s, std::span<const View> views, Dim d,
                            int64_t start, int64_t len);
// Scratch bytes the tree needs: buffers nest like a stack, each 64-aligned
// (emit_buffers.cc).
int64_t ScratchNeeded(const ImplNode& root);

// The per-kernel emitters (emit_kernels.cc), one per KernelId.
void EmitKernel(Emitter& e, const Spec& spec, KernelId id,
                std::span<const View> views);
// The dot-product kernels (emit_dot_kernels.cc).
void EmitDot(Emitter& e, const Spec& spec, std::span<const View> views);
void EmitDotBf16(Emitter& e, const Spec& spec, std::span<const View> views);
// The k-pair (vdpbf16ps outer-product) kernels (emit_bf16_kernels.cc).
void EmitOuterBf16(Emitter& e, const Spec& spec, std::span<const View> views);
void EmitCopyPairs(Emitter& e, const Spec& spec, std::span<const View> views);
// f32 A times k-pair bf16 B with f32 FMAs (emit_bf16_kernels.cc).
void EmitWidenPairs(Emitter& e, const Spec& spec, std::span<const View> views);

}  // namespace amarena::jit

#endif  // AMARENA_JIT_EMITTER_H_
