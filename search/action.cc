#include "search/action.h"

#include "absl/strings/str_cat.h"

namespace amarena {

std::string Describe(const Action& a) {
  switch (a.kind) {
    case ActionKind::kTile:
      return absl::StrCat("tile ", Name(a.dim), " ", a.size);
    case ActionKind::kSplit:
      return absl::StrCat("split k ", a.size);
    case ActionKind::kToAccum:
      return "to-accum";
    case ActionKind::kMove:
      return absl::StrCat("move ", a.operand, " ", Name(a.to.level), " v",
                          a.to.vector_width);
    case ActionKind::kSelect:
      return absl::StrCat("select ", Info(a.kernel).name);
  }
  return "?";
}

}  // namespace amarena
