// Many threads of one process asking one runtime for random Specs, against a
// search database other processes use too; every kernel is checked against
// the reference. Also the helpers of the tests that put the file through
// checkpoints, a full disk, killed processes and a held lock
// (tests/runtime/db_stress.h).
//
//   db_stress DB SEED COUNT THREADS [reverse|expect-stored]
//   db_stress DB --duplicates     (prints the number of duplicated rows)
//   db_stress DB --store FIRST COUNT [keep-wal] [fsize=BYTES] [ok-list=FILE]
//                        [cap=BYTES]
//   db_stress DB --expect FIRST COUNT | --expect list=FILE
//   db_stress DB --readers STOP_FILE
//   db_stress DB --checkpoint [fsize=BYTES] [die|kill-midway]
//   db_stress DB --header
//   db_stress DB --hold-lock SECONDS READY_FILE
//   db_stress DB --timed-gets STORED_SPEC NEW_SPEC MAX_MS
//
// Exit status: 0 all good, 1 a wrong result, an unexpected source or a failed
// check, 2 usage or setup errors.
#include "tests/runtime/db_stress.h"

#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "core/reference.h"
#include "core/spec_text.h"
#include "runtime/host.h"
#include "runtime/runtime.h"
#include "tests/testing/random_specs.h"

namespace amarena {

namespace db_stress {

Target HostOrDie() {
  absl::StatusOr<Target> target = HostTarget();
  if (!target.ok()) {
    std::fprintf(stderr, "%s\n",
                 std::string(target.status().message()).c_str());
    std::exit(2);
  }
  target->workers = 1;
  return *target;
}

}  // namespace db_stress

namespace {

int Duplicates(const std::string& db) {
  sqlite3* h = nullptr;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) !=
      SQLITE_OK)
    return 2;
  sqlite3_stmt* q = nullptr;
  int rc = sqlite3_prepare_v2(
      h,
      "SELECT count(*) FROM (SELECT 1 FROM results GROUP BY target, spec, "
      "vrf_lo, gpr_lo, l1_lo, l2_lo, l3_lo, vrf_hi, gpr_hi, l1_hi, l2_hi, "
      "l3_hi HAVING count(*) > 1)",
      -1, &q, nullptr);
  long long dups = -1;
  if (rc == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
    dups = sqlite3_column_int64(q, 0);
  sqlite3_finalize(q);
  sqlite3_close(h);
  std::printf("%lld\n", dups);
  return dups == 0 ? 0 : 1;
}

int Main(int argc, char** argv) {
  if (argc >= 3 && argv[2][0] == '-' && argv[2][1] == '-') {
    const std::string db = argv[1], mode = argv[2];
    const db_stress::Args args(argv + 3, argv + argc);
    if (mode == "--duplicates") return Duplicates(db);
    if (mode == "--store") return db_stress::Store(db, args);
    if (mode == "--expect") return db_stress::Expect(db, args);
    if (mode == "--readers") return db_stress::Readers(db, args);
    if (mode == "--checkpoint") return db_stress::Checkpoint(db, args);
    if (mode == "--header") return db_stress::Header(db);
    if (mode == "--hold-lock") return db_stress::HoldLock(db, args);
    if (mode == "--timed-gets") return db_stress::TimedGets(db, args);
    std::fprintf(stderr, "db_stress: unknown mode %s\n", mode.c_str());
    return 2;
  }
  if (argc < 5) {
    std::fprintf(stderr,
                 "usage: db_stress DB SEED COUNT THREADS "
                 "[reverse|expect-stored]\n");
    return 2;
  }
  const std::string mode = argc > 5 ? argv[5] : "";
  const uint64_t seed = std::strtoull(argv[2], nullptr, 10);
  const int count = std::atoi(argv[3]), threads = std::atoi(argv[4]);
  std::vector<Spec> specs = testing::RandomMatmuls(count, 96, seed);
  if (mode == "reverse") std::reverse(specs.begin(), specs.end());
  RuntimeOptions options;
  options.db = argv[1];
  Runtime rt(db_stress::HostOrDie(), options);
  if (rt.db() == nullptr) return 2;
  std::atomic<size_t> next{0};
  std::atomic<int> wrong{0}, searched{0}, stored{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (size_t i; (i = next.fetch_add(1)) < specs.size();) {
        const Spec& s = specs[i];
        absl::StatusOr<KernelPtr> k = rt.Get(s);
        if (!k.ok()) {
          std::fprintf(stderr, "%s: %s\n", PrintSpec(s).c_str(),
                       std::string(k.status().message()).c_str());
          ++wrong;
          continue;
        }
        ((*k)->source() == KernelSource::kDatabase ? stored : searched) += 1;
        Operands ops(s);
        FillRandom(s, ops, i);
        std::vector<uint8_t> before = ops.Snapshot(s.OutputIndex());
        if (absl::Status run = (*k)->Run(ops.ptrs()); !run.ok()) {
          std::fprintf(stderr, "%s: %s\n", PrintSpec(s).c_str(),
                       std::string(run.message()).c_str());
          ++wrong;
          continue;
        }
        if (!CheckAgainstReference(s, ops, before).ok) {
          std::fprintf(stderr, "wrong result: %s\n", PrintSpec(s).c_str());
          ++wrong;
        }
      }
    });
  for (std::thread& t : pool) t.join();
  CacheStats cs = rt.cache_stats();
  std::printf(
      "%d searched, %d from the database, %d wrong; stores skipped %lld, "
      "failed %lld\n",
      searched.load(), stored.load(), wrong.load(),
      static_cast<long long>(cs.db_store_skipped),
      static_cast<long long>(cs.db_store_failed));
  if (wrong) return 1;
  if (mode == "expect-stored" && searched != 0) {
    std::fprintf(stderr, "%d Specs were not in the database\n",
                 searched.load());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace amarena

int main(int argc, char** argv) { return amarena::Main(argc, argv); }
