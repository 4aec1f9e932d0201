// The amarena command-line tool.
//
//   amarena run "matmul 256x256x256 f32" [--reps N] [--schedule S] [--json]
//   amarena explain "matmul 256x256x256 f32" [--asm] [--code-size]
//                 [--isa avx2|avx512] [--schedule S] [--json]
//   amarena cpu [--json]
//   amarena calibrate [--json] [--save|--no-save] [--fresh]
//   amarena db stats|path|check|clear [--json]
//   amarena precompute SPEC... [--json]
//   amarena bench "matmul 256x256x256 f32" [--vs openblas,blis] [--threads N]
//                 [--json]
//   amarena fidelity "matmul 256x256x256 f32" [--trees N] [--k K] [--seed S]
//                 [--json FILE] [--warm|--cold] [--ms MS]
//                 [--rounds R] [--per-cost P] [--decisions D] [--levels L]
#include <cstdio>

#include "CLI/CLI.hpp"
#include "amarena/amarena.h"
#include "tools/commands.h"

namespace {

constexpr const char* kScheduleHelp =
    "use this tree instead of searching: the decisions `explain` prints "
    "after 'schedule:' (\"tile n 128;view 1 l1;...\"), replayed and "
    "costed; a '*' leaves that subtree to the search";

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "amarena: searches, JIT-compiles and runs tensor-operation kernels"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("amarena ") + amarena_version(),
                       "print the library version and exit");

  amarena::tools::RunOptions run;
  CLI::App* run_cmd = app.add_subcommand(
      "run", "search, JIT, verify against the reference and time one Spec");
  run_cmd
      ->add_option("spec", run.spec,
                   "the Spec, e.g. \"matmul 256x256x256 f32\"")
      ->required();
  run_cmd
      ->add_option("--reps", run.reps,
                   "timed batches of calls, each at least 1 ms (default: "
                   "about 0.3 s worth, at least 5)")
      ->check(CLI::PositiveNumber);
  run_cmd->add_option("--schedule", run.schedule, kScheduleHelp);
  run_cmd->add_flag("--json", run.json,
                    "print one JSON object as the last line");

  std::string explain_spec;
  amarena::tools::ExplainOptions explain;
  CLI::App* explain_cmd = app.add_subcommand(
      "explain",
      "search only: the chosen tree with each node's Spec, cost and peaks");
  explain_cmd->add_option("spec", explain_spec, "the Spec")->required();
  explain_cmd->add_flag("--json", explain.json,
                        "print one JSON object as the last line");
  explain_cmd->add_flag("--asm", explain.asm_listing,
                        "also JIT the tree and print its machine code");
  explain_cmd->add_flag("--code-size", explain.code_size,
                        "also JIT the tree and print its code size in bytes");
  explain_cmd->add_option(
      "--isa", explain.isa,
      "search and compile for avx2 or avx512 whatever this CPU has (the "
      "code is never run), with this host's caches, prices and threads");
  explain_cmd->add_option("--schedule", explain.schedule, kScheduleHelp);

  bool cpu_json = false;
  CLI::App* cpu_cmd =
      app.add_subcommand("cpu", "features and measured FMA peak");
  cpu_cmd->add_flag("--json", cpu_json,
                    "print one JSON object as the last line");

  bool calibrate_json = false, calibrate_save = true;
  CLI::App* calibrate_cmd = app.add_subcommand(
      "calibrate",
      "measure the cost model's prices on this host (7-10 s) and store "
      "them in the search database for this CPU");
  calibrate_cmd->add_flag("--json", calibrate_json,
                          "print one JSON object as the last line");
  calibrate_cmd->add_flag("--save,!--no-save", calibrate_save,
                          "store the prices (default) or only print them");
  bool calibrate_fresh = false;
  calibrate_cmd->add_flag(
      "--fresh", calibrate_fresh,
      "take every price as measured; by default a price within its noise "
      "(8 %, or one unit) of the table stored for this CPU keeps that price");

  std::string db_action;
  bool db_json = false;
  CLI::App* db_cmd = app.add_subcommand(
      "db", "the search database: stats, path, check (integrity) or clear");
  db_cmd->add_option("action", db_action, "stats, path, check or clear")
      ->required()
      ->check(CLI::IsMember({"stats", "path", "check", "clear"}));
  db_cmd->add_flag("--json", db_json, "print one JSON object as the last line");

  std::vector<std::string> precompute_specs;
  bool precompute_json = false;
  CLI::App* precompute_cmd = app.add_subcommand(
      "precompute",
      "search Specs ahead of time and store them in the search database");
  precompute_cmd
      ->add_option("specs", precompute_specs,
                   "Specs, e.g. \"matmul 128x768x3072 f32\" ...")
      ->required();
  precompute_cmd->add_flag("--json", precompute_json,
                           "print one JSON object as the last line");
  amarena::tools::BenchOptions bench;
  CLI::App* bench_cmd = app.add_subcommand(
      "bench",
      "time one 'matmul MxKxN f32' Spec against peer libraries, each checked "
      "against the reference first");
  bench_cmd->add_option("spec", bench.spec, "the Spec")->required();
  bench_cmd->add_option(
      "--vs", bench.vs,
      "peers, comma-separated: openblas,blis,onednn_sgemm,onednn_matmul,"
      "libxsmm,eigen,xnnpack (onednn: both oneDNN rows), or all");
  bench_cmd
      ->add_option("--threads", bench.threads,
                   "threads for every library (default: AMARENA_NUM_THREADS, "
                   "else all CPUs this process may use)")
      ->check(CLI::Range(1, 1024));
  bench_cmd->add_flag("--json", bench.json,
                      "print one JSON object as the last line");

  amarena::tools::FidelityOptions fid;
  CLI::App* fid_cmd = amarena::tools::AddFidelityCommand(app, &fid);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);  // prints the version on stdout, exit status 0
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "amarena: %s\n", e.what());
    return 2;
  }
  if (*run_cmd) return amarena::tools::RunCommand(run);
  if (*bench_cmd) return amarena::tools::BenchCommand(bench);
  if (*fid_cmd) return amarena::tools::FidelityCommand(fid);
  if (*cpu_cmd) return amarena::tools::CpuCommand(cpu_json);
  if (*calibrate_cmd)
    return amarena::tools::CalibrateCommand(calibrate_json, calibrate_save,
                                             calibrate_fresh);
  if (*db_cmd) return amarena::tools::DbCommand(db_action, db_json);
  if (*precompute_cmd)
    return amarena::tools::PrecomputeCommand(precompute_specs, precompute_json);
  if (*explain_cmd)
    return amarena::tools::ExplainCommand(explain_spec, explain);
  return 2;
}
