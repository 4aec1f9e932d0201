// The modes of db_stress, the multi-process helper of the search database
// tests (db_concurrency_test.sh, db_file_test.sh, db_lock_test.sh). Each
// takes the database path and its own arguments and returns the exit status:
// 0 all good, 1 a check failed, 2 usage or setup errors.
#ifndef AMARENA_TESTS_RUNTIME_DB_STRESS_H_
#define AMARENA_TESTS_RUNTIME_DB_STRESS_H_

#include <string>
#include <vector>

#include "core/spec.h"
#include "core/target.h"

namespace amarena::db_stress {

using Args = std::vector<std::string>;

// The host target with one worker (what every mode searches for).
Target HostOrDie();

// db_stress_file.cc: the file under concurrent writers, readers,
// checkpoints, a full disk and killed processes.
int Store(const std::string& db, const Args& args);
int Expect(const std::string& db, const Args& args);
int Readers(const std::string& db, const Args& args);
int Checkpoint(const std::string& db, const Args& args);
int Header(const std::string& db);
int HoldLock(const std::string& db, const Args& args);

// db_stress_timed.cc: how long a runtime waits beside a lock holder.
int TimedGets(const std::string& db, const Args& args);

}  // namespace amarena::db_stress

#endif  // AMARENA_TESTS_RUNTIME_DB_STRESS_H_
