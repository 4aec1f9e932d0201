// db_stress TimedGets: how long a runtime's requests take while another
// process holds the database's write lock. An upper bound on waiting, not a
// speed measurement: the bound given is far above the normal figures.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "core/spec_text.h"
#include "runtime/host.h"
#include "runtime/runtime.h"
#include "runtime/search_db.h"
#include "tests/runtime/db_stress.h"

namespace amarena::db_stress {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace

// TimedGets MAX_MS NEW STORED STORED2: with the lock held elsewhere, times
// making a runtime on DB, a Get of STORED (a Spec text already in the
// database), a Get of NEW (one that is not) and, as the yardstick, the same
// Get of NEW in a runtime without a database; a Get of STORED2 by another
// thread while the Get of NEW stores its result; then Gets with a 1 ms
// deadline. Exit 1 if any wait the database adds exceeds MAX_MS.
int TimedGets(const std::string& db, const Args& args) {
  if (args.size() < 4) return 2;
  const double max_ms = std::atof(args[0].c_str());
  const std::string fresh = args[1], stored = args[2], stored2 = args[3];
  // The host's own target, threads included, as `amarena precompute` stores
  // for.
  absl::StatusOr<Target> t = HostTarget();
  if (!t.ok()) return 2;
  std::atomic<int> bad{0};
  auto check = [&](const char* what, double ms, double limit) {
    std::printf("%-36s %9.2f ms\n", what, ms);
    if (ms > limit) {
      std::printf("  FAIL: over %.0f ms\n", limit);
      ++bad;
    }
  };

  RuntimeOptions off;
  off.db = "off";
  Runtime plain(t, off);
  auto t0 = Clock::now();
  absl::StatusOr<KernelPtr> yardstick = plain.Get(fresh);
  const double plain_ms = MsSince(t0);
  if (!yardstick.ok()) return 2;

  // Opening alone: reads the version, takes no lock a writer holds.
  t0 = Clock::now();
  bool opened = SearchDb::Open(db).ok();
  check("open the database alone", MsSince(t0), max_ms);
  if (!opened) ++bad;

  RuntimeOptions with_db;
  with_db.db = db;
  t0 = Clock::now();
  Runtime rt(t, with_db);
  check("make a runtime, open the database", MsSince(t0), max_ms);
  if (rt.db() == nullptr) {
    std::printf("  FAIL: no database\n");
    return 1;
  }
  t0 = Clock::now();
  absl::StatusOr<KernelPtr> k = rt.Get(stored);
  check("Get a stored Spec", MsSince(t0), max_ms);
  if (!k.ok() || (*k)->source() != KernelSource::kDatabase) {
    std::printf("  FAIL: %s was not found in the database\n", stored.c_str());
    ++bad;
  }
  // The Get of NEW on a thread; once its search is about done (the time it
  // took without a database), the Get of STORED2 here, in the window where
  // NEW's result is being stored.
  double fresh_ms = 0;
  std::thread other([&] {
    auto start = Clock::now();
    absl::StatusOr<KernelPtr> f = rt.Get(fresh);
    fresh_ms = MsSince(start);
    if (!f.ok()) ++bad;
  });
  std::this_thread::sleep_for(
      std::chrono::duration<double, std::milli>(plain_ms * 0.9));
  t0 = Clock::now();
  k = rt.Get(stored2);
  check("Get a stored Spec beside a store", MsSince(t0), max_ms);
  if (!k.ok() || (*k)->source() != KernelSource::kDatabase) {
    std::printf("  FAIL: %s was not found in the database\n", stored2.c_str());
    ++bad;
  }
  other.join();
  check("Get a new Spec", fresh_ms, plain_ms + max_ms);
  std::printf("%-36s %9.2f ms\n", "  the same without a database", plain_ms);

  // The lock was really held: the new Spec's store was skipped.
  int64_t skipped = rt.cache_stats().db_store_skipped;
  std::printf("%-36s %9lld\n", "stores skipped",
              static_cast<long long>(skipped));
  if (skipped < 1) {
    std::printf("  FAIL: the store was not skipped: was the lock held?\n");
    ++bad;
  }

  // Requests with a deadline: a new runtime, so nothing is cached.
  Runtime rt2(t, with_db);
  GetOptions soon;
  soon.deadline = Clock::now() + std::chrono::milliseconds(1);
  t0 = Clock::now();
  k = rt2.Get(stored, soon);
  check("Get a stored Spec, 1 ms deadline", MsSince(t0), max_ms);
  soon.deadline = Clock::now() + std::chrono::milliseconds(1);
  t0 = Clock::now();
  k = rt2.Get("matmul 300x200x100 f32", soon);
  check("Get a new Spec, 1 ms deadline", MsSince(t0), max_ms);
  return bad ? 1 : 0;
}

}  // namespace amarena::db_stress
