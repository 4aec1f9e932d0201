// amarena explain SPEC: run the search only and show what it chose and why it
// costs what it does: one node per line with its Spec, cost and peak use per
// level, then the search statistics; with --asm, the machine code too, with
// --code-size its size. --isa avx2|avx512 searches and compiles for that ISA
// whatever the host has (the host's caches, prices and threads): explain never
// runs the code, so AVX-512 kernels can be inspected on an AVX2 machine.
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "core/spec_text.h"
#include "core/status_macros.h"
#include "jit/compile.h"
#include "jit/disassemble.h"
#include "runtime/host.h"
#include "search/replay.h"
#include "search/search.h"
#include "search/weight_layout.h"
#include "tools/commands.h"
#include "tools/json.h"

namespace amarena::tools {

namespace {

// The host's target, or one of `isa` with the host's budgets, prices and
// threads.
absl::StatusOr<Target> ExplainTarget(const std::string& isa) {
  AMARENA_ASSIGN_OR_RETURN(Target host, HostTarget());
  if (isa.empty()) return host;
  Target t;
  if (isa == "avx2") {
    t = Target::Avx2({});
  } else if (isa == "avx512") {
    t = Target::Avx512({});
    t.bf16_dot = true;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot explain: --isa is '", isa, "', must be avx2 or avx512"));
  }
  t.l1_lines = host.l1_lines;
  t.l2_lines = host.l2_lines;
  t.l3_lines = host.l3_lines;
  t.l2_bytes = host.l2_bytes;
  t.l3_bytes = host.l3_bytes;
  t.workers = host.workers;
  t.cost = host.cost;
  return t;
}

}  // namespace

int ExplainCommand(const std::string& text, const ExplainOptions& options) {
  const std::string& schedule = options.schedule;
  const bool asm_listing = options.asm_listing;
  const bool json = options.json;
  absl::StatusOr<SpecRequest> request = ParseRequest(text);
  absl::StatusOr<Target> target = ExplainTarget(options.isa);
  absl::Status bad = !request.ok() ? request.status() : target.status();
  if (!bad.ok()) {
    std::fprintf(stderr, "amarena: %s\n", std::string(bad.message()).c_str());
    return 2;
  }
  Spec spec = request->spec;
  // Every layout of B spans the same bytes: one root target serves them.
  *target = target->ForRoot(target->Bind(spec));
  Searcher searcher(*target);
  if (request->b_any) {
    // The layout of B with the cheapest tree, each candidate searched here.
    absl::StatusOr<WeightLayoutChoice> choice = ChooseWeightLayout(
        spec, *target, [&](const Spec& s) -> absl::StatusOr<int64_t> {
          AMARENA_ASSIGN_OR_RETURN(ImplPtr best,
                                   searcher.Solve(target->Bind(s)));
          return best->cost.main;
        });
    if (!choice.ok()) {
      std::fprintf(stderr, "amarena: %s\n",
                   std::string(choice.status().message()).c_str());
      return 2;
    }
    for (const auto& [s, cost] : choice->tried)
      std::printf(
          "b layout: %-8s cost=%lld%s\n", WeightLayoutName(s.aux[1]).c_str(),
          static_cast<long long>(cost), s == choice->spec ? "  (chosen)" : "");
    spec = choice->spec;
  }
  Spec root = target->Bind(spec);
  absl::StatusOr<ImplPtr> impl =
      schedule.empty() ? searcher.Solve(root)
                       : Replay(root, schedule, *target, [&](const Spec& s) {
                           return searcher.Solve(s);
                         });
  if (!impl.ok()) {
    std::fprintf(stderr, "amarena: %s\n",
                 std::string(impl.status().message()).c_str());
    return 2;
  }
  const SearchStats& st = searcher.stats();
  const MemoStats memo = searcher.memo_stats();
  const double per_box =
      memo.boxes ? static_cast<double>(memo.specs_answered) / memo.boxes : 0;
  const std::string decisions = EncodeDecisions(**impl);
  std::printf("%s", PrintImpl(**impl).c_str());
  std::printf("schedule: %s\n", decisions.c_str());
  if (!schedule.empty()) {
    std::printf("cost: %lld (the given schedule, replayed, not searched)\n",
                static_cast<long long>((*impl)->cost.main));
  } else {
    std::printf(
        "search: %.2f ms, %lld Specs solved, %lld candidates costed, %lld "
        "pruned by the lower bound, %lld remainders followed (%lld searched "
        "where a decision did not apply), %d nodes\n",
        st.ms, static_cast<long long>(st.specs_solved),
        static_cast<long long>(st.candidates_tried),
        static_cast<long long>(st.candidates_pruned),
        static_cast<long long>(st.remainders_followed),
        static_cast<long long>(st.follow_searched), CountNodes(**impl));
    std::printf(
        "memo table: %lld boxes answer %lld Specs (%.1f Specs per box), %lld "
        "keys, %.1f KiB\n",
        static_cast<long long>(memo.boxes),
        static_cast<long long>(memo.specs_answered), per_box,
        static_cast<long long>(memo.keys), memo.bytes / 1024.0);
  }
  int64_t code_bytes = -1;
  if (asm_listing || options.code_size) {
    absl::StatusOr<std::unique_ptr<CompiledKernel>> code =
        Compile(**impl, *target, KernelName(root));
    if (!code.ok()) {
      std::fprintf(stderr, "amarena: %s\n",
                   std::string(code.status().message()).c_str());
      return 1;
    }
    code_bytes = static_cast<int64_t>((*code)->total_code_size());
    if (options.code_size)
      std::printf("code: %lld bytes (%s%s)\n",
                  static_cast<long long>(code_bytes),
                  std::string(Name(target->isa)).c_str(),
                  (*code)->parallel() ? ", every parallel task's" : "");
  }
  if (asm_listing) {
    absl::StatusOr<std::unique_ptr<CompiledKernel>> code =
        Compile(**impl, *target, KernelName(root));
    if (!code.ok()) {
      std::fprintf(stderr, "amarena: %s\n",
                   std::string(code.status().message()).c_str());
      return 1;
    }
    absl::StatusOr<std::string> listing =
        jit::Disassemble((*code)->code(), (*code)->code_size());
    if (!listing.ok()) {
      std::fprintf(stderr, "amarena: %s\n",
                   std::string(listing.status().message()).c_str());
      return 1;
    }
    std::printf("%s (%s, %zu bytes):\n%s", (*code)->name().c_str(),
                std::string(Name(target->isa)).c_str(), (*code)->code_size(),
                listing->c_str());
  }
  if (json) {
    JsonLine j;
    j.Add("spec", PrintSpec(root));
    j.Add("cost", (*impl)->cost.main);
    j.Add("schedule", decisions);
    j.Add("peak", PrintPeak((*impl)->cost.peak));
    j.Add("search_ms", st.ms);
    j.Add("specs_solved", st.specs_solved);
    j.Add("candidates", st.candidates_tried);
    j.Add("candidates_pruned", st.candidates_pruned);
    j.Add("memo_boxes", memo.boxes);
    j.Add("memo_specs_answered", memo.specs_answered);
    j.Add("memo_specs_per_box", per_box);
    j.Add("memo_bytes", memo.bytes);
    j.Add("nodes", static_cast<int64_t>(CountNodes(**impl)));
    j.Add("isa", Name(target->isa));
    if (code_bytes >= 0) j.Add("code_bytes", code_bytes);
    std::printf("%s\n", j.str().c_str());
  }
  return 0;
}

}  // namespace amarena::tools
