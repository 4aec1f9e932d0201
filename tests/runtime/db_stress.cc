// Many threads of one process asking one runtime for random Specs, against a
// search database other processes use too; every kernel is checked against
// the reference. Driven by db_concurrency_test.sh.
//
//   db_stress DB SEED COUNT THREADS [reverse|expect-stored]
//   db_stress DB --duplicates     (prints the number of duplicated rows)
//
// Exit status: 0 all good, 1 a wrong result or an unexpected source, 2 usage
// or setup errors.
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
  if (argc == 3 && std::string(argv[2]) == "--duplicates")
    return Duplicates(argv[1]);
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
  absl::StatusOr<Target> target = HostTarget();
  if (!target.ok()) {
    std::fprintf(stderr, "%s\n",
                 std::string(target.status().message()).c_str());
    return 2;
  }
  target->workers = 1;
  RuntimeOptions options;
  options.db = argv[1];
  Runtime rt(target, options);
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
  std::printf("%d searched, %d from the database, %d wrong\n", searched.load(),
              stored.load(), wrong.load());
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
