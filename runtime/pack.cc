#include "runtime/pack.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

namespace amarena {
namespace {

// A task packs one tile of at most kTile stored rows by kTile units of one
// panel: 64 x 64 bf16 is 8 KiB read and 8 KiB written, so a transposed
// tile's source and destination both stay in L1 while it is worked on, and
// a 64 MiB matrix makes thousands of tasks to spread over threads.
constexpr int64_t kTile = 64;

// The matrix as the packer sees it: M, rows x cols, stored row-major in
// panels of `panel` units. A unit is the `g` elements of one column that a
// stored row holds side by side (g = 2 for k-pairs). A column-major layout
// is the row-major one of the transpose (see Plan's maker), so every layout
// is one of these.
struct Plan {
  int64_t rows = 0, cols = 0;
  int64_t es = 0;    // element bytes
  int64_t g = 1;     // rows per stored row
  int64_t unit = 0;  // g * es
  int64_t stored_rows = 0;
  int64_t panel = 0;  // units per stored row of a panel (cols when plain)
  int64_t panels = 0;
  int64_t sections = 1;
  int64_t section_slots = 0;  // panel slots per section
  const char* src = nullptr;
  int64_t ld = 0;           // bytes between source rows
  bool transposed = false;  // M(i, j) at src + j * ld + i * es
  char* dst = nullptr;
  int64_t row_tiles = 0, col_tiles = 0;  // per panel

  char* Panel(int64_t q) const {
    const int64_t slot =
        sections > 1 ? (q % sections) * section_slots + q / sections : q;
    return dst + slot * stored_rows * panel * unit;
  }
  const char* Elem(int64_t i, int64_t j) const {
    return src + (transposed ? j * ld + i * es : i * ld + j * es);
  }
};

Plan MakePlan(const PackInput& in, const Layout& to, void* dst) {
  Plan p;
  const bool col = !to.row_major();
  // Column-major B is row-major B^T: swap the dimensions and the source's
  // orientation.
  p.rows = col ? in.cols : in.rows;
  p.cols = col ? in.rows : in.cols;
  p.transposed = (in.source == PackSource::kTransposed) != col;
  p.es = in.es;
  p.g = to.row_group();
  p.unit = p.g * p.es;
  p.stored_rows = (p.rows + p.g - 1) / p.g;
  p.panel = to.packed() ? to.panel_width() : p.cols;
  p.panels = (p.cols + p.panel - 1) / p.panel;
  p.sections = std::max<int64_t>(to.section_count(), 1);
  p.section_slots = (p.panels + p.sections - 1) / p.sections;
  p.src = static_cast<const char*>(in.src);
  p.ld = in.src_ld * in.es;
  p.dst = static_cast<char*>(dst);
  p.row_tiles = (p.stored_rows + kTile - 1) / kTile;
  p.col_tiles = (p.panel + kTile - 1) / kTile;
  return p;
}

// --- Portable moves
// ------------------------------------------------------------

inline void CopyUnit(char* d, const char* s, int64_t bytes) {
  switch (bytes) {  // fixed sizes: one load and one store each
    case 2:
      std::memcpy(d, s, 2);
      break;
    case 4:
      std::memcpy(d, s, 4);
      break;
    case 8:
      std::memcpy(d, s, 8);
      break;
    default:
      std::memcpy(d, s, static_cast<size_t>(bytes));
  }
}

// dst[r][c] = src[c][r] for r < nr, c < nc: source row c at s + c * ss, its
// unit r at r * unit; destination row r at d + r * ds, unit c at c * unit.
void TransposeScalar(const char* s, int64_t ss, char* d, int64_t ds, int64_t nr,
                     int64_t nc, int64_t unit) {
  for (int64_t r = 0; r < nr; ++r)
    for (int64_t c = 0; c < nc; ++c)
      CopyUnit(d + r * ds + c * unit, s + c * ss + r * unit, unit);
}

// Stored row of k-pairs from rows a and b (b null: zero partners): unit c is
// (a[c], b[c]).
void InterleaveScalar(const char* a, const char* b, char* d, int64_t n,
                      int64_t es) {
  for (int64_t c = 0; c < n; ++c) {
    CopyUnit(d + c * 2 * es, a + c * es, es);
    if (b != nullptr)
      CopyUnit(d + c * 2 * es + es, b + c * es, es);
    else
      std::memset(d + c * 2 * es + es, 0, static_cast<size_t>(es));
  }
}

// --- AVX2 moves
// ----------------------------------------------------------------

// 8 x 8 units of 4 bytes: source rows s + c * ss (c < 8) to destination rows
// d + r * ds (r < 8). 8 loads, 24 shuffles, 8 stores.
__attribute__((target("avx2"))) inline void Transpose8x8x32(const char* s,
                                                            int64_t ss, char* d,
                                                            int64_t ds) {
  __m256 r[8], t[8], u[8];
  for (int i = 0; i < 8; ++i)
    r[i] = _mm256_loadu_ps(reinterpret_cast<const float*>(s + i * ss));
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);      // a0 b0 a1 b1 | a4 b4 a5 b5
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);  // a2 b2 a3 b3 | a6 ..
  }
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);          // a0 b0 c0 d0 | 4
    u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);      // 1 | 5
    u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);  // 2 | 6
    u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);  // 3 | 7
  }
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_ps(reinterpret_cast<float*>(d + i * ds),
                     _mm256_permute2f128_ps(u[i], u[i + 4], 0x20));
    _mm256_storeu_ps(reinterpret_cast<float*>(d + (i + 4) * ds),
                     _mm256_permute2f128_ps(u[i], u[i + 4], 0x31));
  }
}

// The low lane of `v` at `d`, the high one 8 rows further on.
__attribute__((target("avx2"))) inline void StoreLanes(char* d, int64_t ds,
                                                       __m256i v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(d), _mm256_castsi256_si128(v));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 8 * ds),
                   _mm256_extracti128_si256(v, 1));
}

// 8 source rows of 16 units of 2 bytes to 16 destination rows of 8: each
// 128-bit lane is an 8 x 8 transpose of its own (lane 0: destination rows
// 0-7, lane 1: rows 8-15). 8 loads, 24 unpacks, 16 stores.
__attribute__((target("avx2"))) inline void Transpose16x8x16(const char* s,
                                                             int64_t ss,
                                                             char* d,
                                                             int64_t ds) {
  __m256i r[8], t[8], u[8];
  for (int i = 0; i < 8; ++i)
    r[i] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i * ss));
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_epi16(r[i], r[i + 1]);      // a0 b0 .. a3 b3
    t[i + 1] = _mm256_unpackhi_epi16(r[i], r[i + 1]);  // a4 b4 .. a7 b7
  }
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm256_unpacklo_epi32(t[i], t[i + 2]);          // abcd 0, abcd 1
    u[i + 1] = _mm256_unpackhi_epi32(t[i], t[i + 2]);      // 2, 3
    u[i + 2] = _mm256_unpacklo_epi32(t[i + 1], t[i + 3]);  // 4, 5
    u[i + 3] = _mm256_unpackhi_epi32(t[i + 1], t[i + 3]);  // 6, 7
  }
  for (int i = 0; i < 4; ++i) {
    const __m256i even = _mm256_unpacklo_epi64(u[i], u[i + 4]);  // row 2i
    const __m256i odd = _mm256_unpackhi_epi64(u[i], u[i + 4]);   // 2i + 1
    StoreLanes(d + 2 * i * ds, ds, even);
    StoreLanes(d + (2 * i + 1) * ds, ds, odd);
  }
}

__attribute__((target("avx2"))) void TransposeAvx2(const char* s, int64_t ss,
                                                   char* d, int64_t ds,
                                                   int64_t nr, int64_t nc,
                                                   int64_t unit) {
  // Block: br destination rows by 8 columns (8 source rows).
  const int64_t br = unit == 2 ? 16 : unit == 4 ? 8 : 0;
  if (br == 0) return TransposeScalar(s, ss, d, ds, nr, nc, unit);
  const int64_t rb = nr - nr % br, cb = nc - nc % 8;
  for (int64_t r = 0; r < rb; r += br)
    for (int64_t c = 0; c < cb; c += 8) {
      const char* sp = s + c * ss + r * unit;
      char* dp = d + r * ds + c * unit;
      if (unit == 2)
        Transpose16x8x16(sp, ss, dp, ds);
      else
        Transpose8x8x32(sp, ss, dp, ds);
    }
  // The edges: columns past the last whole block, then rows.
  TransposeScalar(s + cb * ss, ss, d + cb * unit, ds, rb, nc - cb, unit);
  TransposeScalar(s + rb * unit, ss, d + rb * ds, ds, nr - rb, nc, unit);
}

__attribute__((target("avx2"))) void InterleaveAvx2(const char* a,
                                                    const char* b, char* d,
                                                    int64_t n, int64_t es) {
  if (es != 2 || b == nullptr) return InterleaveScalar(a, b, d, n, es);
  const int64_t nb = n - n % 16;
  for (int64_t c = 0; c < nb; c += 16) {
    const __m256i x =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + c * 2));
    const __m256i y =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + c * 2));
    const __m256i lo = _mm256_unpacklo_epi16(x, y);  // pairs 0-3 | 8-11
    const __m256i hi = _mm256_unpackhi_epi16(x, y);  // pairs 4-7 | 12-15
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + c * 4),
                        _mm256_permute2x128_si256(lo, hi, 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + c * 4 + 32),
                        _mm256_permute2x128_si256(lo, hi, 0x31));
  }
  InterleaveScalar(a + nb * 2, b + nb * 2, d + nb * 4, n - nb, es);
}

// --- Tiles -------------------------------------------------------------------

// Stored rows [r0, r1) by units [c0, c1) of panel q.
void PackTile(const Plan& p, int64_t q, int64_t r0, int64_t r1, int64_t c0,
              int64_t c1, bool avx2) {
  char* base = p.Panel(q);
  const int64_t row_bytes = p.panel * p.unit;
  auto drow = [&](int64_t r) { return base + r * row_bytes; };
  const int64_t j0 = q * p.panel;
  // Units of this panel that hold columns of M; the rest are padding.
  const int64_t cv = std::clamp<int64_t>(p.cols - j0, c0, c1);
  if (cv < c1)
    for (int64_t r = r0; r < r1; ++r)
      std::memset(drow(r) + cv * p.unit, 0,
                  static_cast<size_t>((c1 - cv) * p.unit));
  if (cv <= c0) return;
  const int64_t nc = cv - c0;
  // Stored rows whose every row is in M (all but an odd last row's pair).
  const int64_t full = std::min(r1, p.rows / p.g);
  if (p.transposed) {
    // Unit (r, c) is the g elements of source row j0 + c from element r * g:
    // a transpose of units.
    if (full > r0) {
      const char* s = p.Elem(r0 * p.g, j0 + c0);
      if (avx2)
        TransposeAvx2(s, p.ld, drow(r0) + c0 * p.unit, row_bytes, full - r0, nc,
                      p.unit);
      else
        TransposeScalar(s, p.ld, drow(r0) + c0 * p.unit, row_bytes, full - r0,
                        nc, p.unit);
    }
    for (int64_t r = std::max(full, r0); r < r1; ++r)  // the odd last row
      for (int64_t c = c0; c < cv; ++c) {
        char* d = drow(r) + c * p.unit;
        CopyUnit(d, p.Elem(r * p.g, j0 + c), p.es);
        std::memset(d + p.es, 0, static_cast<size_t>(p.unit - p.es));
      }
    return;
  }
  for (int64_t r = r0; r < r1; ++r) {
    char* d = drow(r) + c0 * p.unit;
    const char* a = p.Elem(r * p.g, j0 + c0);
    if (p.g == 1) {
      std::memcpy(d, a, static_cast<size_t>(nc * p.unit));
    } else {
      const char* b = r < full ? p.Elem(r * p.g + 1, j0 + c0) : nullptr;
      if (avx2)
        InterleaveAvx2(a, b, d, nc, p.es);
      else
        InterleaveScalar(a, b, d, nc, p.es);
    }
  }
}

bool HostHasAvx2() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return has;
}

}  // namespace

void PackMatrix(const PackInput& in, const Layout& to, void* dst,
                const ParallelFor* parallel, bool vectorized) {
  if (in.rows <= 0 || in.cols <= 0) return;
  const Plan p = MakePlan(in, to, dst);
  const bool avx2 = vectorized && HostHasAvx2();
  // Slots of the last group of sections that no panel fills.
  const int64_t slot_bytes = p.stored_rows * p.panel * p.unit;
  for (int64_t s = 0; s < p.sections; ++s)
    for (int64_t k = 0; k < p.section_slots; ++k)
      if (k * p.sections + s >= p.panels)  // slot s * G + k holds no panel
        std::memset(p.dst + (s * p.section_slots + k) * slot_bytes, 0,
                    static_cast<size_t>(slot_bytes));
  const int64_t per_panel = p.row_tiles * p.col_tiles;
  auto task = [&](size_t t) {
    const int64_t i = static_cast<int64_t>(t);
    const int64_t q = i / per_panel, rt = i % per_panel / p.col_tiles,
                  ct = i % p.col_tiles;
    PackTile(p, q, rt * kTile, std::min(p.stored_rows, (rt + 1) * kTile),
             ct * kTile, std::min(p.panel, (ct + 1) * kTile), avx2);
  };
  const size_t n = static_cast<size_t>(p.panels * per_panel);
  if (parallel != nullptr && n > 1) {
    (*parallel)(n, task);
  } else {
    for (size_t t = 0; t < n; ++t) task(t);
  }
}

}  // namespace amarena
