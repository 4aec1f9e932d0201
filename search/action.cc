#include "search/action.h"

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/spec_text.h"

namespace amarena {

std::string Describe(const Action& a) {
  switch (a.kind) {
    case ActionKind::kTile:
      return absl::StrCat("tile ", Name(a.dim), " ", a.size);
    case ActionKind::kParallelTile:
      return absl::StrCat("parallel tile ", Name(a.dim), " ", a.size);
    case ActionKind::kSplit:
      return absl::StrCat("split k ", a.size);
    case ActionKind::kToAccum:
      return "to-accum";
    case ActionKind::kMove:
      return absl::StrCat(
          a.alloc == AllocKind::kView     ? "view "
          : a.alloc == AllocKind::kBuffer ? "pack "
                                          : "regs ",
          a.operand, " ", Name(a.to.level),
          a.to.layout.row_major() ? "" : " col",
          a.to.layout.packed() ? absl::StrCat(" ", PackName(a.to)) : "",
          a.to.vector_width ? absl::StrCat(" v", a.to.vector_width) : "",
          a.to.dtype != DType::kF32 ? absl::StrCat(" ", Name(a.to.dtype)) : "");
    case ActionKind::kSelect:
      return absl::StrCat("select ", Info(a.kernel).name);
  }
  return "?";
}

namespace {

std::optional<Dim> ParseDim(absl::string_view s) {
  if (s == "m") return Dim::kM;
  if (s == "k") return Dim::kK;
  if (s == "n") return Dim::kN;
  return std::nullopt;
}

// A positive integer no larger than `max`, after an optional one-letter
// prefix ("p16", "v8").
std::optional<int64_t> ParseCount(absl::string_view s, int64_t max) {
  int64_t v = 0;
  if (!absl::SimpleAtoi(s, &v) || v < 0 || v > max) return std::nullopt;
  return v;
}

}  // namespace

absl::StatusOr<Action> ParseAction(absl::string_view text) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("action descriptor '", text, "' is malformed: ", why));
  };
  std::vector<absl::string_view> w =
      absl::StrSplit(text, ' ', absl::SkipEmpty());
  if (w.empty()) return bad("it is empty");
  Action a;
  if (w[0] == "parallel") {
    if (w.size() != 4 || w[1] != "tile") return bad("want 'parallel tile D N'");
    w.erase(w.begin());
    a.kind = ActionKind::kParallelTile;
  } else if (w[0] == "tile") {
    a.kind = ActionKind::kTile;
  }
  if (a.kind == ActionKind::kTile || a.kind == ActionKind::kParallelTile) {
    if (w.size() != 3) return bad("want 'tile D N'");
    std::optional<Dim> d = ParseDim(w[1]);
    std::optional<int64_t> n = ParseCount(w[2], int64_t{1} << 40);
    if (!d || !n || *n == 0)
      return bad("want a dimension m, k or n and a size");
    a.dim = *d;
    a.size = *n;
    return a;
  }
  if (w[0] == "split") {
    std::optional<int64_t> n;
    if (w.size() == 3) n = ParseCount(w[2], int64_t{1} << 40);
    if (w.size() != 3 || w[1] != "k" || !n || *n == 0)
      return bad("want 'split k N'");
    a.kind = ActionKind::kSplit;
    a.dim = Dim::kK;
    a.size = *n;
    return a;
  }
  if (w[0] == "to-accum") {
    if (w.size() != 1) return bad("'to-accum' takes no parameters");
    a.kind = ActionKind::kToAccum;
    return a;
  }
  if (w[0] == "select") {
    if (w.size() != 2) return bad("want 'select KERNEL'");
    a.kind = ActionKind::kSelect;
    for (KernelId id : AllKernels())
      if (Info(id).name == w[1]) {
        a.kernel = id;
        return a;
      }
    return bad("the kernel is unknown");
  }
  if (w[0] == "view" || w[0] == "pack" || w[0] == "regs") {
    a.kind = ActionKind::kMove;
    a.alloc = w[0] == "view"   ? AllocKind::kView
              : w[0] == "pack" ? AllocKind::kBuffer
                               : AllocKind::kRegisters;
    if (w.size() < 3) return bad("want 'view|pack|regs OPERAND LEVEL ...'");
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
  return bad(absl::StrCat("unknown action '", w[0], "'"));
}

Action ActionOf(const Expansion& e) {
  Action a;
  switch (e.type) {
    case NodeType::kLoop:
      a.kind = e.loop.parallel         ? ActionKind::kParallelTile
               : e.loop.dim == Dim::kK ? ActionKind::kSplit
                                       : ActionKind::kTile;
      a.dim = e.loop.dim;
      a.size = e.loop.tile;
      break;
    case NodeType::kBlock:
      a.kind = ActionKind::kToAccum;
      break;
    case NodeType::kAlloc:
      a.kind = ActionKind::kMove;
      a.operand = e.alloc.operand;
      a.to = e.alloc.to;
      a.alloc = e.alloc.kind;
      break;
    case NodeType::kKernel:
      a.kind = ActionKind::kSelect;
      a.kernel = e.kernel;
      break;
  }
  return a;
}

}  // namespace amarena
