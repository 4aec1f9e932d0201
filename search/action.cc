#include "search/action.h"

#include "absl/strings/str_cat.h"

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
          a.to.layout == Layout::kColMajor ? " col" : "",
          a.to.pack ? absl::StrCat(" p", a.to.pack) : "",
          a.to.vector_width ? absl::StrCat(" v", a.to.vector_width) : "");
    case ActionKind::kSelect:
      return absl::StrCat("select ", Info(a.kernel).name);
  }
  return "?";
}

}  // namespace amarena
