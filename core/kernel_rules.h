// The kernel catalogue's shared rules (core/kernels.cc) and the rows kept in
// their own files (the dot products, core/kernels_dot.cc; the k-pair
// kernels, core/kernels_pairs.cc): internal to core/kernels*.cc, which together
// define the KernelInfo table of core/kernels.h. Nothing else includes this
// header.
#ifndef AMARENA_CORE_KERNEL_RULES_H_
#define AMARENA_CORE_KERNEL_RULES_H_

#include <cstdint>
#include <optional>

#include "core/kernels.h"

namespace amarena::kernels_internal {

// Shared predicates and prices (their comments are in core/kernels.cc).
bool F32Output(const Spec& s);
bool Bf16(const TensorAux& a);
bool Scaled(const Spec& s);
int64_t WidenCost(const Target& t);
bool RegisterTileOk(const TensorSpec& r, const Target& t);
int MaskScratch(const TensorSpec& r, const Target& t);
bool MayHold(const Spec& s, Kind leaf);
bool PairsMayRun(const Spec& s, const Target& t);
int64_t VectorsPerRow(const Spec& s);
bool BRowsMayBeVectors(const Spec& s);
bool BPairsMayExist(const Spec& s);

// kDot, kDotBf16 (core/kernels_dot.cc).
bool DotApplies(const Spec& s, const Target& t);
int DotScratch(const Spec& s, const Target& t);
int DotMostScratch(const Spec& s, const Target& t);
std::optional<PeakRate> DotRate(const Spec& s, const Target& t);
int64_t DotCost(const Spec& s, const Target& t);
bool DotBf16Applies(const Spec& s, const Target& t);
int DotBf16Scratch(const Spec& s, const Target& t);
int DotBf16MostScratch(const Spec& s, const Target& t);
std::optional<PeakRate> DotBf16Rate(const Spec& s, const Target& t);
int64_t DotBf16Cost(const Spec& s, const Target& t);

// kOuterBf16, kCopyPairs, kWidenPairs (core/kernels_pairs.cc).
bool OuterBf16Applies(const Spec& s, const Target& t);
int OuterBf16Scratch(const Spec& s, const Target& t);
int OuterBf16MostScratch(const Spec& s, const Target& t);
std::optional<PeakRate> OuterBf16Rate(const Spec& s, const Target& t);
int64_t OuterBf16Cost(const Spec& s, const Target& t);
bool CopyPairsApplies(const Spec& s, const Target& t);
int TwoScratch(const Spec& s, const Target& t);
int CopyPairsMostScratch(const Spec& s, const Target& t);
int64_t CopyPairsCost(const Spec& s, const Target& t);
bool WidenPairsApplies(const Spec& s, const Target& t);
int WidenPairsScratch(const Spec& s, const Target& t);
int WidenPairsMostScratch(const Spec& s, const Target& t);
std::optional<PeakRate> WidenPairsRate(const Spec& s, const Target& t);
int64_t WidenPairsCost(const Spec& s, const Target& t);

}  // namespace amarena::kernels_internal

#endif  // AMARENA_CORE_KERNEL_RULES_H_
