#include "jit/cpu_features.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "absl/strings/str_join.h"
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

// Linux describes each cache of cpu0 in sysfs; sysconf's answer for L3 is
// unreliable under some hypervisors (it reported 384 MiB for a 32 MiB L3 here),
// so sysfs comes first.
int64_t SysfsCacheBytes(int level) {
  for (int index = 0; index < 8; ++index) {
    std::string dir =
        "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    std::ifstream lv(dir + "/level"), ty(dir + "/type"), sz(dir + "/size");
    int l = 0;
    std::string type, size;
    if (!(lv >> l) || !(ty >> type) || !(sz >> size)) continue;
    if (l != level || type == "Instruction") continue;
    int64_t v = std::strtoll(size.c_str(), nullptr, 10);
    if (!size.empty() && size.back() == 'K') v *= 1024;
    if (!size.empty() && size.back() == 'M') v *= 1024 * 1024;
    if (v > 0) return v;
  }
  return 0;
}

int64_t CacheBytes(int level, int sysconf_name, int64_t fallback) {
  if (int64_t v = SysfsCacheBytes(level); v > 0) return v;
  long v = sysconf(sysconf_name);
  return v > 0 ? v : fallback;
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
    f.l1d_bytes = CacheBytes(1, _SC_LEVEL1_DCACHE_SIZE, 32 * 1024);
    f.l2_bytes = CacheBytes(2, _SC_LEVEL2_CACHE_SIZE, 512 * 1024);
    f.l3_bytes = CacheBytes(3, _SC_LEVEL3_CACHE_SIZE, 8 * 1024 * 1024);
    f.brand = Brand();
    VendorFamilyModel(&f);
    return f;
  }();
  return detected;
}

}  // namespace amarena
