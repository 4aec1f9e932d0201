// Tests for runtime/prices.h: price tables stored in a search database are
// found again by a new connection and used by HostTarget without measuring;
// the policy's choice among stored, shipped and nearest tables; and
// AMARENA_PRICES.
#include "runtime/prices.h"

#include <sqlite3.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/host.h"
#include "runtime/search_db.h"
#include "tests/testing/temp_dir.h"

namespace amarena {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

constexpr int kGL = static_cast<int>(Level::kGL);

// Sets an environment variable for one scope, restoring it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (value == nullptr) {
      unsetenv(name);
    } else {
      setenv(name, value, 1);
    }
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_, old_.c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

// Prices no measurement gives (a GL line of 777 units), for this host.
PriceTable Unmistakable() {
  PriceTable t;
  t.label = "calibrated";
  t.cpu = IdentityOf(DetectCpu());
  t.cost.fma = 5;
  t.cost.line_dense[kGL] = 777;
  t.cost.line_strided[kGL] = 999;
  t.cost.line_gl_adjacent_panels = 800;
  t.cost.line_gl_far_panels = 700;
  t.cost.line_gl_run.fill(900);
  return t;
}

TEST(PricesTest, AStoredTableIsFoundByANewConnectionForItsCpuOnly) {
  TempDir dir;
  const std::string db = dir.path() + "/amarena.db";
  const PriceTable t = Unmistakable();
  EXPECT_FALSE(LoadStoredPrices(db, t.cpu).has_value());  // no file yet
  ASSERT_TRUE(StorePrices(db, t).ok());
  std::optional<PriceTable> back = LoadStoredPrices(db, t.cpu);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, t);
  CpuIdentity other = t.cpu;
  other.model += 1;
  EXPECT_FALSE(LoadStoredPrices(db, other).has_value());
  other = t.cpu;
  other.l3_bytes *= 2;
  EXPECT_FALSE(LoadStoredPrices(db, other).has_value());

  // Stored again: replaced, not duplicated.
  PriceTable again = t;
  again.cost.line_dense[kGL] = 778;
  ASSERT_TRUE(StorePrices(db, again).ok());
  EXPECT_EQ(LoadStoredPrices(db, t.cpu)->cost.line_dense[kGL], 778);

  // The file is still a current search database the runtime opens as is.
  absl::StatusOr<std::unique_ptr<SearchDb>> opened = SearchDb::Open(db);
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_TRUE((*opened)->Stats().ok());
  EXPECT_EQ(LoadStoredPrices(db, t.cpu)->cost.line_dense[kGL], 778);
}

TEST(PricesTest, StoredPricesAreClamped) {
  TempDir dir;
  const std::string db = dir.path() + "/amarena.db";
  PriceTable t = Unmistakable();
  t.cost.line_strided[kGL] = 1;  // below dense: raised to it
  ASSERT_TRUE(StorePrices(db, t).ok());
  EXPECT_EQ(LoadStoredPrices(db, t.cpu)->cost.line_strided[kGL], 777);
}

TEST(PricesTest, ADatabaseMadeBeforeThePricesTableGetsIt) {
  TempDir dir;
  const std::string db = dir.path() + "/amarena.db";
  ASSERT_TRUE(SearchDb::Open(db).ok());
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(h, "DROP TABLE prices", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(h);
  const PriceTable t = Unmistakable();
  EXPECT_FALSE(LoadStoredPrices(db, t.cpu).has_value());
  ASSERT_TRUE(StorePrices(db, t).ok());
  EXPECT_TRUE(LoadStoredPrices(db, t.cpu).has_value());
}

TEST(PricesTest, HostTargetUsesTheStoredTableWithoutMeasuring) {
  TempDir dir;
  const std::string db = dir.path() + "/amarena.db";
  const PriceTable t = Unmistakable();
  ASSERT_TRUE(StorePrices(db, t).ok());
  ScopedEnv db_env("AMARENA_DB", db.c_str());
  ScopedEnv prices_env("AMARENA_PRICES", nullptr);
  absl::StatusOr<ChosenPrices> p = HostPrices();
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->source, ChosenPrices::Source::kStored);
  EXPECT_EQ(p->Describe(), "calibrated on this host");
  absl::StatusOr<Target> target = HostTarget();
  ASSERT_TRUE(target.ok()) << target.status();
  // 777 units a GL line is what was stored, not what any host measures.
  EXPECT_EQ(target->cost.line_dense[kGL], 777);
  EXPECT_EQ(CostParamsText(target->cost), CostParamsText(t.cost));
  EXPECT_THAT(target->Fingerprint(), HasSubstr(PricesHash(t.cost)));

  // AMARENA_PRICES=default overrides the stored table; =host insists on it.
  {
    ScopedEnv forced("AMARENA_PRICES", "default");
    absl::StatusOr<Target> d = HostTarget();
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(CostParamsText(d->cost), CostParamsText(CostParams{}));
    EXPECT_NE(d->Fingerprint(), target->Fingerprint());
  }
  {
    ScopedEnv forced("AMARENA_PRICES", "host");
    absl::StatusOr<Target> h = HostTarget();
    ASSERT_TRUE(h.ok());
    EXPECT_EQ(h->cost.line_dense[kGL], 777);
  }
}

TEST(PricesTest, WithoutAStoredTableTheShippedOrNearestIsChosen) {
  const PriceTable& zen4 = *FindShipped("zen4-epyc-vm");
  absl::StatusOr<ChosenPrices> exact = ChoosePrices(zen4.cpu, "", "");
  ASSERT_TRUE(exact.ok());
  EXPECT_EQ(exact->source, ChosenPrices::Source::kShipped);
  EXPECT_EQ(exact->table.label, "zen4-epyc-vm");
  EXPECT_THAT(exact->Describe(), HasSubstr("shipped table for zen4-epyc-vm"));

  CpuIdentity near = zen4.cpu;
  near.model = 33;  // another Zen 3/4 model
  absl::StatusOr<ChosenPrices> nearest = ChoosePrices(near, "", "");
  ASSERT_TRUE(nearest.ok());
  EXPECT_EQ(nearest->source, ChosenPrices::Source::kNearest);
  EXPECT_EQ(nearest->table.label, "zen4-epyc-vm");
  EXPECT_THAT(nearest->Describe(),
              HasSubstr("nearest shipped table zen4-epyc-vm"));
  EXPECT_THAT(nearest->Describe(), HasSubstr("run amarena calibrate"));

  CpuIdentity intel;
  intel.vendor = "GenuineIntel";
  intel.family = 6;
  intel.model = 143;
  absl::StatusOr<ChosenPrices> xeon = ChoosePrices(intel, "", "");
  ASSERT_TRUE(xeon.ok());
  EXPECT_EQ(xeon->source, ChosenPrices::Source::kNearest);
  EXPECT_EQ(xeon->table.label, "xeon-amx-vm");

  CpuIdentity hygon = zen4.cpu;
  hygon.vendor = "HygonGenuine";  // no table of its vendor: the defaults
  absl::StatusOr<ChosenPrices> other = ChoosePrices(hygon, "", "");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->source, ChosenPrices::Source::kNearest);
  EXPECT_EQ(other->table.label, ShippedPriceTables().front().label);

  // A database path with nothing there is no table, and is not created.
  TempDir dir;
  const std::string db = dir.path() + "/none.db";
  EXPECT_EQ(ChoosePrices(zen4.cpu, db, "")->source,
            ChosenPrices::Source::kShipped);
  EXPECT_NE(access(db.c_str(), F_OK), 0);
}

TEST(PricesTest, ForcedChoicesAndBadValues) {
  const CpuIdentity cpu = IdentityOf(DetectCpu());
  absl::StatusOr<ChosenPrices> named = ChoosePrices(cpu, "", "zen4-epyc-vm");
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(named->source, ChosenPrices::Source::kForced);
  EXPECT_EQ(named->Describe(), "AMARENA_PRICES=zen4-epyc-vm: zen4-epyc-vm");

  absl::StatusOr<ChosenPrices> host = ChoosePrices(cpu, "", "host");
  ASSERT_FALSE(host.ok());
  EXPECT_EQ(host.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(host.status().message(), HasSubstr("run amarena calibrate"));

  absl::StatusOr<ChosenPrices> bad = ChoosePrices(cpu, "", "zen9");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(),
              HasSubstr("AMARENA_PRICES is 'zen9', must be default, host or "
                        "a shipped table (zen5-epyc-vm"));

  ScopedEnv forced("AMARENA_PRICES", "zen9");
  absl::StatusOr<Target> t = HostTarget();
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(PricesTest, IdentityComesFromCpuid) {
  const CpuIdentity cpu = IdentityOf(DetectCpu());
  EXPECT_EQ(cpu.vendor.size(), 12u);  // CPUID leaf 0's 12 characters
  EXPECT_GT(cpu.family, 0);
  EXPECT_GT(cpu.l1d_bytes, 0);
  EXPECT_THAT(cpu.Key(), HasSubstr(cpu.vendor + "/"));
}

}  // namespace
}  // namespace amarena
