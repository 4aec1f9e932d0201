// Cache budgets are each core's share of a shared cache: the arithmetic on
// parsed sysfs descriptions (a fake tree in a temporary directory), never on
// this host's values.
#include "jit/cpu_features.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "tests/testing/temp_dir.h"

namespace amarena {
namespace {

TEST(CpuFeaturesTest, CpuListsAndSizesParse) {
  EXPECT_EQ(CountCpuList("0"), 1);
  EXPECT_EQ(CountCpuList("0-1"), 2);
  EXPECT_EQ(CountCpuList("0-3,8-11"), 8);
  EXPECT_EQ(CountCpuList("0,64"), 2);
  EXPECT_EQ(CountCpuList("0-95\n"), 96);
  EXPECT_EQ(CountCpuList(""), 0);
  EXPECT_EQ(CountCpuList("3-1"), 0);
  EXPECT_EQ(CountCpuList("x"), 0);
  EXPECT_EQ(ParseCacheSize("32K"), 32 << 10);
  EXPECT_EQ(ParseCacheSize("480M"), int64_t{480} << 20);
  EXPECT_EQ(ParseCacheSize("1G"), int64_t{1} << 30);
  EXPECT_EQ(ParseCacheSize("512"), 512);
  EXPECT_EQ(ParseCacheSize("K"), 0);
  EXPECT_EQ(ParseCacheSize("-4K"), 0);
}

// Writes one cache's sysfs files under `cpu`.
void Cache(const std::string& cpu, int index, int level, const char* type,
           const char* size, const char* shared) {
  const std::string dir = cpu + "/cache/index" + std::to_string(index);
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/level") << level << "\n";
  std::ofstream(dir + "/type") << type << "\n";
  std::ofstream(dir + "/size") << size << "\n";
  if (shared != nullptr) std::ofstream(dir + "/shared_cpu_list") << shared;
}

TEST(CpuFeaturesTest, ASharedCacheIsDividedAmongItsCores) {
  testing::TempDir dir;
  const std::string cpu = dir.path() + "/cpu0";
  // A 48-core, 96-thread part: private L1 and L2 (shared by SMT siblings),
  // 480 MiB of L3 over every core.
  Cache(cpu, 0, 1, "Data", "48K", "0,48");
  Cache(cpu, 1, 1, "Instruction", "32K", "0,48");
  Cache(cpu, 2, 2, "Unified", "2048K", "0,48");
  Cache(cpu, 3, 3, "Unified", "480M", "0-95");
  const std::vector<CacheDescription> caches = ReadCaches(cpu);
  ASSERT_EQ(caches.size(), 4u);
  EXPECT_EQ(caches[3].level, 3);
  EXPECT_EQ(caches[3].bytes, int64_t{480} << 20);
  EXPECT_EQ(caches[3].cpus_sharing, 96);
  // Two SMT threads per core: 96 CPUs are 48 cores, 10 MiB each.
  EXPECT_EQ(PerCoreShare(caches[3], 2), int64_t{10} << 20);
  EXPECT_EQ(PerCoreShare(caches[2], 2), 2048 << 10);  // one core's own
  EXPECT_EQ(PerCoreShare(caches[0], 2), 48 << 10);
  // Counted without SMT, each logical CPU gets half as much.
  EXPECT_EQ(PerCoreShare(caches[3], 1), int64_t{5} << 20);
}

TEST(CpuFeaturesTest, AnImplausibleShareIsCapped) {
  // A VM whose two CPUs "share" the host's 480 MiB: not 240 MiB a core.
  CacheDescription vm{.level = 3, .type = "Unified",
                      .bytes = int64_t{480} << 20, .cpus_sharing = 2};
  EXPECT_EQ(PerCoreShare(vm, 1), kMaxCacheShareBytes);
  EXPECT_LT(PerCoreShare(vm, 1), int64_t{256} << 20);
  // No list at all (an old kernel): private, as large as it says, capped.
  testing::TempDir dir;
  const std::string cpu = dir.path() + "/cpu0";
  Cache(cpu, 0, 3, "Unified", "32768K", nullptr);
  std::vector<CacheDescription> caches = ReadCaches(cpu);
  ASSERT_EQ(caches.size(), 1u);
  EXPECT_EQ(caches[0].cpus_sharing, 1);
  EXPECT_EQ(PerCoreShare(caches[0], 1), int64_t{32} << 20);
  // Two CPUs without SMT sharing 32 MiB (a 2-vCPU guest): 16 MiB each.
  caches[0].cpus_sharing = 2;
  EXPECT_EQ(PerCoreShare(caches[0], 1), int64_t{16} << 20);
}

}  // namespace
}  // namespace amarena
