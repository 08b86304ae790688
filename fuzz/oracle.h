// The semantic fuzzer's oracle: one mutant through one pass pipeline,
// checked the way `hloverlap opt` and `hloverlap verify --devices=2` would.
//
// For a mutant M (text that parses and verifies) and a variant V (a preset
// or pass list plus --loop rules):
//   1. reference: M runs on the reference interpreter on 2 devices with
//      seeded random inputs (Execute; an iteration cap stands in for
//      "terminates"; a mutant that does not finish is skipped, not a
//      finding);
//   2. opt: V runs on a fresh parse of M, as `hloverlap opt` does; an
//      internal error (what opt reports with exit 3) is a finding, a user
//      error (exit 2, e.g. a size guard) is a refusal;
//   3. the result must verify, print, parse again and verify again;
//   4. the re-parsed result runs on the same inputs and must terminate and
//      be bit-identical to the reference on every device.
// Besides, TripCountMismatches compares the passes' trip-count analysis
// with the fuzzer's own exact count on every loop of the mutant.
// Crashes, hangs and memory exhaustion are caught one level up, by the
// process the fuzzer forks for each mutant (semantic_fuzzer.cc).
#ifndef HLOVERLAP_FUZZ_ORACLE_H_
#define HLOVERLAP_FUZZ_ORACLE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/while_loop_analysis.h"
#include "hlo/module.h"
#include "interp/value.h"

namespace hloverlap::fuzz {

// One pipeline as given to `hloverlap opt`.
struct Variant {
  std::string preset;                   // --preset=
  std::string passes;                   // --passes=
  std::vector<std::string> loop_rules;  // --loop=, in order
  // "--preset=xla-gpu --loop=all:pipeline=depth=2"
  std::string CommandLine() const;
};

// Parses "--preset=P", "--passes=a,b", "--loop=R" words separated by
// spaces.
absl::StatusOr<Variant> ParseVariant(std::string_view text);

// Every preset, the --loop variants that force the loop passes (deeper
// pipelining, sinking, double buffering of every loop), and the loop passes
// run twice on their own output.
std::vector<Variant> DefaultVariants();

struct OracleOptions {
  int64_t devices = 2;
  uint64_t input_seed = 0;
  // A run of more while-loop iterations than this (all loops of a device
  // together) ends (the mutant is skipped as non-terminating; a pass output
  // may run twice as many before that is a finding).
  int64_t max_iterations = 50000;
  // The interpreter refuses modules whose estimate exceeds this.
  int64_t memory_limit_bytes = int64_t{1} << 30;
  // Entry parameters set to keep known_trip_count promises resting on them
  // (analysis/while_loop_analysis.h); unset: those of the module run.
  // CheckVariant runs the output on the mutant's.
  std::optional<std::vector<PromisedParameter>> promised;
};

struct Execution {
  enum class Kind { kOk, kIterationLimit, kMemoryLimit, kError };
  Kind kind = Kind::kError;
  std::vector<interp::Value> outputs;  // per device
  std::string error;
  double seconds = 0;
};

// Runs `module` on options.devices devices with inputs from
// options.input_seed (as `hloverlap run --seed`).
Execution Execute(const Module& module, const OracleOptions& options);

struct Outcome {
  enum class Kind {
    kIdentical,  // transformed, bit-identical results
    kUnchanged,  // the pipeline printed the mutant's text back
    kRefused,    // user error (exit 2) or the output is over the memory limit
    kFinding,
  };
  Kind kind = Kind::kIdentical;
  // For findings: internal-error, invalid-output, unparsable-output,
  // output-nontermination, output-run-error, miscompile, and
  // unchecked-trip-count: different results from a loop whose
  // known_trip_count rests on a value the inputs could not be chosen to
  // keep (the promise, not the pass, may be wrong).
  std::string finding_class;
  std::string message;
};

// The timeline simulator (`hloverlap sim`) on `module` must return a
// finite, non-negative step time (its crashes and hangs are caught by the
// caller's process): nullopt, or a `sim-error` finding.
std::optional<Outcome> CheckSimulator(const Module& module);

// Steps 2-4 for one variant (and CheckSimulator on the output); `reference` is
// Execute() of the mutant. `on_stage` is told the name of each step before it
// starts ("opt", "check-output", "run-output"), so that a crash can be
// attributed.
Outcome CheckVariant(std::string_view mutant_text, const Variant& variant,
                     const Execution& reference, const OracleOptions& options,
                     const std::function<void(std::string_view)>& on_stage);

// The loops of `module` whose trip count the while-loop analysis
// (analysis/while_loop_analysis.h) states wrongly: ExactTripCount knows the
// count and the analysis claims a different one ("unknown" is never
// wrong). One line per loop: "loop w: analysis 2, exact 155".
std::vector<std::string> TripCountMismatches(const Module& module);

// Parses and verifies module text (the fuzzer's mutants and seeds).
absl::StatusOr<std::unique_ptr<Module>> ParseAndVerify(
    std::string_view text, std::string_view filename);

}  // namespace hloverlap::fuzz

#endif  // HLOVERLAP_FUZZ_ORACLE_H_
