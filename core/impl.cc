#include "core/impl.h"

#include "absl/strings/str_cat.h"
#include "core/spec_text.h"

namespace amarena {

absl::string_view Name(Dim d) {
  switch (d) {
    case Dim::kM:
      return "m";
    case Dim::kK:
      return "k";
    case Dim::kN:
      return "n";
    case Dim::kB:
      return "b";
  }
  return "?";
}

int64_t Extent(const Spec& s, Dim d) {
  switch (d) {
    case Dim::kM:
      return s.m;
    case Dim::kK:
      return s.k;
    case Dim::kN:
      return s.n;
    case Dim::kB:
      return s.b;
  }
  return 0;
}

std::string PrintPeak(const Budget& b) {
  return absl::StrCat("vrf:", b.vrf, ",gpr:", b.gpr, ",l1:", b.l1_lines,
                      ",l2:", b.l2_lines, ",l3:", b.l3_lines);
}

Axis OperandAxis(const Spec& s, int i, Dim d) {
  if (d == Dim::kB) return Axis::kNone;
  if (!s.IsMatmul()) return d == Dim::kM ? Axis::kRows : Axis::kCols;
  switch (d) {
    case Dim::kB:
      break;
    case Dim::kM:
      return i == 1 ? Axis::kNone : Axis::kRows;
    case Dim::kN:
      return i == 0 ? Axis::kNone : Axis::kCols;
    case Dim::kK:
      return i == 0 ? Axis::kCols : i == 1 ? Axis::kRows : Axis::kNone;
  }
  return Axis::kNone;
}

Expansion ExpansionOf(const ImplNode& node) {
  Expansion e;
  static_cast<Step&>(e) = node.how;
  for (const auto& c : node.children) e.children.push_back(c->spec);
  return e;
}

int64_t BatchStep(const Spec& s, int i, int64_t tile) {
  return s.IsMatmul() && s.b > 1 ? tile * s.BatchStride(i) : 0;
}

namespace {

std::string Describe(const ImplNode& node) {
  const Step& e = node.how;
  switch (e.type) {
    case NodeType::kLoop:
      return absl::StrCat(e.loop.dim == Dim::kK ? "split k" : "tile ",
                          e.loop.dim == Dim::kK ? "" : Name(e.loop.dim), " by ",
                          e.loop.tile, " x", e.loop.full_iters,
                          node.HasRemainder() ? " +remainder" : "",
                          e.loop.parallel ? " parallel" : "",
                          e.loop.unrolled ? " unrolled" : "");
    case NodeType::kBlock:
      return "block";
    case NodeType::kAlloc: {
      TensorSpec t = node.spec.Operand(e.alloc.operand);
      t.aux = e.alloc.to;
      std::string where(Name(e.alloc.to.level));
      if (std::string l = e.alloc.to.layout.Text(); !l.empty())
        absl::StrAppend(&where, ",", l);
      if (e.alloc.to.vector_width)
        absl::StrAppend(&where, ",v", e.alloc.to.vector_width);
      static constexpr absl::string_view kVerb[] = {"view", "pack", "regs"};
      return absl::StrCat(
          kVerb[static_cast<int>(e.alloc.kind)], " operand ", e.alloc.operand,
          " in ", where, " (", t.BudgetUnits(),
          e.alloc.kind == AllocKind::kRegisters ? " regs)" : " lines)");
    }
    case NodeType::kKernel:
      return absl::StrCat("kernel ", Info(e.kernel).name);
  }
  return "?";
}

void Print(const ImplNode& node, int depth, absl::string_view role,
           std::string& out) {
  std::string line =
      absl::StrCat(std::string(2 * depth, ' '), role, Describe(node));
  if (line.size() < 48) line.resize(48, ' ');
  absl::StrAppend(&out, line, "  ", PrintSpec(node.spec),
                  "  cost=", node.cost.main,
                  " peak=", PrintPeak(node.cost.peak), "\n");
  const Step& e = node.how;
  for (size_t i = 0; i < node.children.size(); ++i) {
    absl::string_view child_role;
    if (e.type == NodeType::kLoop && i == 1) child_role = "rem: ";
    if (e.type == NodeType::kAlloc) {
      if (e.alloc.prologue && i == 0) child_role = "load: ";
      if (e.alloc.epilogue && i + 1 == node.children.size())
        child_role = "store: ";
    }
    Print(*node.children[i], depth + 1, child_role, out);
  }
}

}  // namespace

std::string PrintImpl(const ImplNode& root) {
  std::string out;
  Print(root, 0, "", out);
  return out;
}

int CountNodes(const ImplNode& root) {
  int n = 1;
  for (const auto& c : root.children) n += CountNodes(*c);
  return n;
}

}  // namespace amarena
