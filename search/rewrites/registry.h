// The rewrites the search may apply, in the order it enumerates them (the
// search then orders candidates by lower bound). This list is
// the only place to add one: each rewrite is a function in its own file under
// search/rewrites/ that appends every Candidate it offers for a Spec.
//
//   std::vector<Candidate> out;
//   for (const Rewrite& r : Rewrites()) r.enumerate(spec, target, out);
#ifndef AMARENA_SEARCH_REWRITES_REGISTRY_H_
#define AMARENA_SEARCH_REWRITES_REGISTRY_H_

#include <span>
#include <vector>

#include "core/target.h"
#include "search/action.h"

namespace amarena {

using EnumerateFn = void (*)(const Spec&, const Target&,
                             std::vector<Candidate>&);

struct Rewrite {
  absl::string_view name;
  EnumerateFn enumerate;
};

void SelectKernel(const Spec&, const Target&,
                  std::vector<Candidate>&);  // select.cc
void ViewOperand(const Spec&, const Target&,
                 std::vector<Candidate>&);  // moves.cc
void PackOperand(const Spec&, const Target&,
                 std::vector<Candidate>&);  // moves.cc
void ToRegisters(const Spec&, const Target&,
                 std::vector<Candidate>&);  // moves.cc
void ToAccum(const Spec&, const Target&,
             std::vector<Candidate>&);  // to_accum.cc
void TileOut(const Spec&, const Target&, std::vector<Candidate>&);  // loops.cc
void SplitK(const Spec&, const Target&, std::vector<Candidate>&);   // loops.cc

std::span<const Rewrite> Rewrites();

// All candidates for a Spec, from every rewrite in registry order.
std::vector<Candidate> EnumerateCandidates(const Spec& s, const Target& t);

}  // namespace amarena

#endif  // AMARENA_SEARCH_REWRITES_REGISTRY_H_
