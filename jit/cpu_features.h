// What the host CPU offers, read through Xbyak's CPUID wrapper (which also
// checks that the OS saves the wide registers, XCR0), plus cache sizes from the
// OS.
//
//   CpuFeatures f = DetectCpu();
//   if (!f.avx2 || !f.fma) ...   // amarena needs both
#ifndef AMARENA_JIT_CPU_FEATURES_H_
#define AMARENA_JIT_CPU_FEATURES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace amarena {

struct CpuFeatures {
  bool avx2 = false, fma = false;
  bool avx512f = false, avx512bw = false, avx512vl = false, avx512_bf16 = false,
       avx512_vnni = false;
  // Each core's share of its caches (PerCoreShare): what the search may
  // budget for one thread. The whole caches, as the OS reports them, are
  // l2_total_bytes and l3_total_bytes.
  int64_t l1d_bytes = 32 * 1024;
  int64_t l2_bytes = 512 * 1024;
  int64_t l3_bytes = 8 * 1024 * 1024;
  int64_t l2_total_bytes = 512 * 1024;
  int64_t l3_total_bytes = 8 * 1024 * 1024;
  std::string brand;
  // CPUID vendor string and display family and model (leaf 1, with the
  // extended fields folded in as the vendors' manuals say): what a price
  // table is matched by (core/price_table.h).
  std::string vendor;
  int family = 0;
  int model = 0;

  // e.g. "avx2 fma avx512f avx512bw avx512vl avx512_bf16 avx512_vnni"
  std::string FeatureList() const;
};

CpuFeatures DetectCpu();

// One cache of a CPU as Linux describes it in sysfs
// (/sys/devices/system/cpu/cpuN/cache/indexI/{level,type,size,
// shared_cpu_list}).
struct CacheDescription {
  int level = 0;
  std::string type;  // "Data", "Instruction" or "Unified"
  int64_t bytes = 0;
  int cpus_sharing = 1;  // logical CPUs in shared_cpu_list
};

// The caches described under `cpu_dir` (e.g. /sys/devices/system/cpu/cpu0);
// those whose files are missing or unreadable are left out.
std::vector<CacheDescription> ReadCaches(const std::string& cpu_dir);
// CPUs in a Linux CPU list: "0-3,8-11" is 8, "5" is 1; 0 for text that is
// not one.
int CountCpuList(absl::string_view list);
// Size text as sysfs writes it: "32K", "1024K", "480M", "1G", "512".
int64_t ParseCacheSize(absl::string_view size);

// The largest per-core share of L3 a CPU is believed to have: 768 MiB of
// 3D V-Cache over the 16 cores of an EPYC 9184X is 48 MiB; 64 MiB leaves room.
// A hypervisor that reports a host's whole L3 as shared by the guest's few
// CPUs (480 MiB "shared" by 2) gets this, not 240 MiB.
inline constexpr int64_t kMaxCacheShareBytes = int64_t{64} << 20;

// The share of `c` one core may count on: its size over the cores sharing it
// (logical CPUs sharing it over `threads_per_core`, the SMT width: SMT
// siblings run one core's threads, which take turns rather than each holding
// a share), at most kMaxCacheShareBytes.
int64_t PerCoreShare(const CacheDescription& c, int threads_per_core);

}  // namespace amarena

#endif  // AMARENA_JIT_CPU_FEATURES_H_
