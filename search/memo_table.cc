#include "search/memo_table.h"

#include <algorithm>
#include <bit>

#include "core/spec_text.h"
#include "core/status_macros.h"

namespace amarena {
namespace {

// A budget grid value's index: 2 bit_width + its second bit (1 -> 2, 2 -> 4,
// 3 -> 5, 4 -> 6, 6 -> 7, 8 -> 8, ...), increasing along the grid.
int32_t GridCoord(int64_t lines) {
  if (lines <= 0) return 0;
  const int32_t bits = 64 - std::countl_zero(static_cast<uint64_t>(lines));
  const int32_t half = bits >= 2 ? (lines >> (bits - 2)) & 1 : 0;
  return 2 * bits + half;
}

}  // namespace

MemoTable::Key MemoTable::KeyOf(const Spec& s) {
  static_assert(kMaxPack < (1 << 11));
  const std::array<uint64_t, kPackedWords> p = PackProblem(s);
  Key k;
  std::copy(p.begin(), p.end(), k.w);
  return k;
}

MemoTable::Point MemoTable::ToPoint(const Budget& b) {
  return {b.vrf, b.gpr, GridCoord(b.l1_lines), GridCoord(b.l2_lines),
          GridCoord(b.l3_lines)};
}

const MemoEntry* MemoTable::Find(const Spec& s) const {
  AMARENA_CHECK(s.budget.has_value());
  auto it = ids_.find(KeyOf(s));
  if (it == ids_.end()) return nullptr;
  return Find(it->second, *s.budget);
}

void MemoTable::Insert(const Spec& s, const MemoEntry& e) {
  AMARENA_CHECK(s.budget.has_value());
  Insert(Id(KeyOf(s)).first, *s.budget, e);
}

std::pair<uint32_t, bool> MemoTable::Id(const Key& key) {
  auto [it, fresh] =
      ids_.try_emplace(key, static_cast<uint32_t>(records_.size()));
  if (fresh) records_.emplace_back();
  return {it->second, fresh};
}

const MemoEntry* MemoTable::Find(uint32_t id, const Budget& b) const {
  const Point p = ToPoint(b);
  for (const Box& box : records_[id].boxes) {
    bool inside = true;
    for (int d = 0; d < kDims && inside; ++d)
      inside = box.lo[d] <= p[d] && p[d] <= box.hi[d];
    if (inside) return &box.entry;
  }
  return nullptr;
}

void MemoTable::Insert(uint32_t id, const Budget& b, const MemoEntry& e) {
  Box box{.lo = {}, .hi = ToPoint(b), .entry = e};
  box.lo = !compress_ ? box.hi : e.feasible ? ToPoint(e.cost.peak) : Point{};
  for (int d = 0; d < kDims; ++d) AMARENA_CHECK(box.lo[d] <= box.hi[d]);
  Boxes& boxes = records_[id].boxes;
  // Merge with any box holding the same answer whose union with this one is
  // a box: equal on every axis but one, and touching or overlapping on it.
  for (bool merged = compress_; merged;) {
    merged = false;
    for (size_t i = 0; i < boxes.size(); ++i) {
      const Box& o = boxes[i];
      if (!(o.entry == box.entry)) continue;
      int differ = -1, count = 0;
      for (int d = 0; d < kDims; ++d) {
        if (o.lo[d] != box.lo[d] || o.hi[d] != box.hi[d]) {
          differ = d;
          ++count;
        }
      }
      if (count > 1) continue;
      if (count == 1 && (o.hi[differ] + 1 < box.lo[differ] ||
                         box.hi[differ] + 1 < o.lo[differ]))
        continue;
      if (count == 1) {
        box.lo[differ] = std::min(box.lo[differ], o.lo[differ]);
        box.hi[differ] = std::max(box.hi[differ], o.hi[differ]);
      }
      boxes.erase(boxes.begin() + static_cast<std::ptrdiff_t>(i));
      --num_boxes_;
      merged = true;
      break;
    }
  }
  boxes.push_back(box);
  ++num_boxes_;
}

MemoStats MemoTable::Stats() const {
  MemoStats st;
  st.specs_asked = static_cast<int64_t>(asked_.size());
  st.bytes = static_cast<int64_t>(
      ids_.capacity() * (sizeof(Key) + sizeof(uint32_t)) +
      records_.capacity() * sizeof(Record));
  for (const Record& record : records_) {
    const Boxes& boxes = record.boxes;
    if (!boxes.empty()) ++st.keys;
    st.boxes += static_cast<int64_t>(boxes.size());
    st.bytes += static_cast<int64_t>(boxes.capacity() * sizeof(Box));
    for (const Box& b : boxes) {
      int64_t volume = 1;
      for (int d = 0; d < kDims; ++d)
        volume *= static_cast<int64_t>(b.hi[d]) - b.lo[d] + 1;
      st.specs_answered += volume;
    }
  }
  return st;
}

}  // namespace amarena
