// The search's memo table, spatially compressed.
//
// A Spec splits into a table key (the Spec without its budget: kind, dims,
// dtypes, levels, layouts, flags) and an integer point: its budget, with each
// cache level as its index on the budget grid (core/spec.h; 0 for no lines). A
// result found under budget L whose tree peaks at P (core/impl.h: the least
// budget under which the tree is valid) is the answer for every budget between
// P and L, so it is stored once, as the box [P, L]; "no tree fits L" is the
// answer for every budget below L, the box [0, L]. A new box merges with an
// existing one that holds the same answer when their union is a box. Lookups
// scan the key's boxes.
//
// With compression off (tests compare the two) each result is the single
// point L.
//
// Each key also keeps what the search learns about it whatever the budget
// (KeyInfo): the budget clamp (UsableBudget, search/search.h) and the lower
// bound, computed once per key rather than on every lookup, and the best cost
// found under the most budget, a lower bound for every smaller budget. The
// search hashes a key once and then goes by its id (a dense index).
//
//   MemoTable t(/*compress=*/true);
//   if (const MemoEntry* e = t.Find(spec)) ...
//   t.Insert(spec, entry);
//   auto [id, fresh] = t.Id(MemoTable::KeyOf(spec));  // fresh: fill Info(id)
//   if (const MemoEntry* e = t.Find(id, clamped_budget)) ...
#ifndef AMARENA_SEARCH_MEMO_TABLE_H_
#define AMARENA_SEARCH_MEMO_TABLE_H_

#include <array>
#include <limits>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "core/impl.h"
#include "search/action.h"

namespace amarena {

struct MemoEntry {
  bool feasible = false;
  Cost cost;
  Action action;  // the best action, re-applied to rebuild the tree

  friend bool operator==(const MemoEntry&, const MemoEntry&) = default;
};

struct MemoStats {
  int64_t keys = 0;
  int64_t boxes = 0;
  // Budget points the boxes cover: the Specs the table answers without search.
  int64_t specs_answered = 0;
  // Distinct Specs (budget included, as each was reached, before clamping)
  // the search asked for, when counted (MemoTable::CountQueries).
  int64_t specs_asked = 0;
  int64_t bytes = 0;
};

// A cost above every tree's: "no tree" where a cost or a bound is expected.
inline constexpr int64_t kNoTree = std::numeric_limits<int64_t>::max();

// What the search keeps per key besides its boxes, whatever the budget.
struct KeyInfo {
  Budget usable;       // UsableBudget of the key's Specs
  int64_t lower = -1;  // LowerBound of the key's Specs, once computed
  // The best cost found under `floor_budget` (floor_budget set), the least
  // any tree under a budget that fits in it can cost; kNoTree when none fits.
  int64_t floor = 0;
  std::optional<Budget> floor_budget;
  // Index of the candidates' bounds recorded when the key was first solved
  // (Searcher), or -1.
  int32_t bounds = -1;
};

class MemoTable {
 public:
  static constexpr size_t kKeyWords = kPackedWords;
  // The table key, PackProblem's words (hashing them is several times
  // cheaper than hashing the Spec field by field).
  struct Key {
    uint64_t w[kKeyWords];
    friend bool operator==(const Key&, const Key&) = default;
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      // The leading dimensions', batch strides', alpha's and the tiles'
      // facts' words are zero for dense Specs with alpha 1: no step.
      // (Equality compares them all, so this only spreads.)
      if (k.w[3] != 0 || k.w[4] != 0 || k.w[5] != 0 || k.w[6] != 0 ||
          k.w[7] != 0)
        h = H::combine(std::move(h), k.w[3], k.w[4], k.w[5], k.w[6],
                       k.w[7]);
      return H::combine(std::move(h), k.w[0], k.w[1], k.w[2]);
    }
  };
  static Key KeyOf(const Spec& s);
  // Starts loading `key`'s slot of the id map (Id looks it up soon).
  void PrefetchId(const Key& key) const { ids_.prefetch(key); }

  explicit MemoTable(bool compress = true) : compress_(compress) {}

  // Remember every distinct Spec passed to NoteAsked, for
  // MemoStats::specs_asked (a hash insert each; benchmarks turn it on).
  void CountQueries() { count_queries_ = true; }
  void NoteAsked(const Spec& s) {
    if (count_queries_) asked_.insert({KeyOf(s), ToPoint(*s.budget)});
  }

  // `s` must carry a budget.
  const MemoEntry* Find(const Spec& s) const;
  void Insert(const Spec& s, const MemoEntry& e);
  // The key's id, made (and `fresh`, with a default KeyInfo and no boxes)
  // on first use. Ids stay valid for the table's life.
  std::pair<uint32_t, bool> Id(const Key& key);
  // The same by id and budget. References are valid until the next call
  // that adds a key.
  const MemoEntry* Find(uint32_t id, const Budget& b) const;
  void Insert(uint32_t id, const Budget& b, const MemoEntry& e);
  KeyInfo& Info(uint32_t id) { return records_[id].info; }

  MemoStats Stats() const;  // walks the table
  // Memory held, counted as entries come and go (cheap).
  int64_t ApproxBytes() const {
    return num_boxes_ * static_cast<int64_t>(sizeof(Box)) +
           static_cast<int64_t>(ids_.size()) *
               static_cast<int64_t>(sizeof(Key) + sizeof(uint32_t) +
                                    sizeof(Record));
  }

 private:
  static constexpr int kDims = 5;
  using Point = std::array<int32_t, kDims>;  // budgets below 2^31
  struct Box {
    Point lo, hi;
    MemoEntry entry;
  };
  static Point ToPoint(const Budget& b);
  // Most keys hold one box: keep it in the table's slot, saving a pointer
  // chase on every lookup.
  using Boxes = absl::InlinedVector<Box, 1>;
  struct Record {
    Boxes boxes;
    KeyInfo info;
  };

  bool compress_;
  bool count_queries_ = false;
  absl::flat_hash_map<Key, uint32_t> ids_;
  std::vector<Record> records_;  // by id
  absl::flat_hash_set<std::pair<Key, Point>> asked_;
  int64_t num_boxes_ = 0;
};

}  // namespace amarena

#endif  // AMARENA_SEARCH_MEMO_TABLE_H_
