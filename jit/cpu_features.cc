#include "jit/cpu_features.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "xbyak/xbyak_util.h"

namespace amarena {

std::string CpuFeatures::FeatureList() const {
  std::vector<std::string> f;
  if (avx2) f.push_back("avx2");
  if (fma) f.push_back("fma");
  if (avx512f) f.push_back("avx512f");
  if (avx512bw) f.push_back("avx512bw");
  if (avx512vl) f.push_back("avx512vl");
  if (avx512_bf16) f.push_back("avx512_bf16");
  if (avx512_vnni) f.push_back("avx512_vnni");
  return absl::StrJoin(f, " ");
}

namespace {

constexpr const char* kCpu0 = "/sys/devices/system/cpu/cpu0";

// The data (or unified) cache of `level` in `caches`, if described.
const CacheDescription* Find(const std::vector<CacheDescription>& caches,
                             int level) {
  for (const CacheDescription& c : caches)
    if (c.level == level && c.type != "Instruction" && c.bytes > 0) return &c;
  return nullptr;
}

// SMT width: the logical CPUs of cpu0's core (1 if not described).
int ThreadsPerCore() {
  std::ifstream f(std::string(kCpu0) + "/topology/thread_siblings_list");
  std::string list;
  if (!(f >> list)) return 1;
  return std::max(1, CountCpuList(list));
}

std::string Brand() {
  uint32_t data[12] = {};
  for (uint32_t i = 0; i < 3; ++i) {
    uint32_t out[4];
    Xbyak::util::Cpu::getCpuid(0x80000002u + i, out);
    std::memcpy(&data[i * 4], out, 16);
  }
  std::string s(reinterpret_cast<const char*>(data), 48);
  s = s.c_str();
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

void VendorFamilyModel(CpuFeatures* f) {
  uint32_t r[4];
  Xbyak::util::Cpu::getCpuid(0, r);
  char vendor[12];
  std::memcpy(vendor, &r[1], 4);  // ebx, edx, ecx
  std::memcpy(vendor + 4, &r[3], 4);
  std::memcpy(vendor + 8, &r[2], 4);
  f->vendor.assign(vendor, 12);
  Xbyak::util::Cpu::getCpuid(1, r);
  const uint32_t base_family = (r[0] >> 8) & 0xf;
  const uint32_t base_model = (r[0] >> 4) & 0xf;
  f->family = static_cast<int>(
      base_family == 0xf ? base_family + ((r[0] >> 20) & 0xff) : base_family);
  f->model = static_cast<int>(base_family == 0x6 || base_family == 0xf
                                  ? base_model | (((r[0] >> 16) & 0xf) << 4)
                                  : base_model);
}

}  // namespace

int64_t ParseCacheSize(absl::string_view size) {
  int64_t unit = 1;
  if (!size.empty()) {
    switch (size.back()) {
      case 'K':
        unit = int64_t{1} << 10;
        break;
      case 'M':
        unit = int64_t{1} << 20;
        break;
      case 'G':
        unit = int64_t{1} << 30;
        break;
    }
    if (unit != 1) size.remove_suffix(1);
  }
  int64_t v = 0;
  if (!absl::SimpleAtoi(size, &v) || v <= 0) return 0;
  return v * unit;
}

int CountCpuList(absl::string_view list) {
  int n = 0;
  for (absl::string_view part : absl::StrSplit(list, ',')) {
    part = absl::StripAsciiWhitespace(part);
    const size_t dash = part.find('-');
    int lo = 0, hi = 0;
    if (dash == absl::string_view::npos) {
      if (!absl::SimpleAtoi(part, &lo) || lo < 0) return 0;
      hi = lo;
    } else if (!absl::SimpleAtoi(part.substr(0, dash), &lo) ||
               !absl::SimpleAtoi(part.substr(dash + 1), &hi) || lo < 0 ||
               hi < lo) {
      return 0;
    }
    n += hi - lo + 1;
  }
  return n;
}

std::vector<CacheDescription> ReadCaches(const std::string& cpu_dir) {
  std::vector<CacheDescription> out;
  for (int index = 0; index < 16; ++index) {
    const std::string dir = cpu_dir + "/cache/index" + std::to_string(index);
    std::ifstream lv(dir + "/level"), ty(dir + "/type"), sz(dir + "/size"),
        shared(dir + "/shared_cpu_list");
    CacheDescription c;
    std::string size, list;
    if (!(lv >> c.level) || !(ty >> c.type) || !(sz >> size)) continue;
    c.bytes = ParseCacheSize(size);
    // No list (an old kernel): counted as private, as before.
    c.cpus_sharing = shared >> list ? std::max(1, CountCpuList(list)) : 1;
    out.push_back(c);
  }
  return out;
}

int64_t PerCoreShare(const CacheDescription& c, int threads_per_core) {
  const int cores =
      std::max(1, c.cpus_sharing / std::max(1, threads_per_core));
  return std::min(c.bytes / cores, kMaxCacheShareBytes);
}

CpuFeatures DetectCpu() {
  static const CpuFeatures detected = [] {
    Xbyak::util::Cpu cpu;
    using C = Xbyak::util::Cpu;
    CpuFeatures f;
    f.avx2 = cpu.has(C::tAVX2);
    f.fma = cpu.has(C::tFMA);
    f.avx512f = cpu.has(C::tAVX512F);
    f.avx512bw = cpu.has(C::tAVX512BW);
    f.avx512vl = cpu.has(C::tAVX512VL);
    f.avx512_bf16 = cpu.has(C::tAVX512_BF16);
    f.avx512_vnni = cpu.has(C::tAVX512_VNNI);
    // sysfs first: sysconf's answer for L3 is unreliable under some
    // hypervisors (it reported 384 MiB for a 32 MiB L3 here), and only sysfs
    // says which CPUs share a cache.
    const std::vector<CacheDescription> caches = ReadCaches(kCpu0);
    const int smt = ThreadsPerCore();
    auto share = [&](int level, int sysconf_name, int64_t fallback,
                     int64_t* total) {
      if (const CacheDescription* c = Find(caches, level)) {
        *total = c->bytes;
        return PerCoreShare(*c, smt);
      }
      long v = sysconf(sysconf_name);
      *total = v > 0 ? v : fallback;
      return std::min(*total, kMaxCacheShareBytes);
    };
    int64_t l1_total = 0;
    f.l1d_bytes = share(1, _SC_LEVEL1_DCACHE_SIZE, 32 * 1024, &l1_total);
    f.l2_bytes =
        share(2, _SC_LEVEL2_CACHE_SIZE, 512 * 1024, &f.l2_total_bytes);
    f.l3_bytes =
        share(3, _SC_LEVEL3_CACHE_SIZE, 8 * 1024 * 1024, &f.l3_total_bytes);
    f.brand = Brand();
    VendorFamilyModel(&f);
    return f;
  }();
  return detected;
}

}  // namespace amarena
