// A few lines per loop from a pipeline's remarks (`hloverlap opt
// --remarks-summary`, the default when the remarks go to a file).
//
// A pipeline leaves one remark per decision: on the seed example about 240.
// The summary groups them by the loop of the *input* module they concern
// (passes rename the loops they rebuild, `while.147` -> `while.147.1`, and
// copy them, `while.145.1.peel0`; a remark's loop is mapped back to the
// input loop whose name is the longest dotted prefix of its own), and
// within a loop by pass and by what happened, with instruction names left
// out so that equal reasons count together:
//
//   summary per loop (input names, outermost first):
//     while.147 (trip count 4; experiments/seed_repro.py:61)
//       pipeliner: 12x prefetched all-gather 1 iteration ahead
//       pipeliner refused: 8x all-reduce: it is stored into ..., which is
//           not a loop state element (e.g. all-reduce.5.pipelined.1.1)
//       double buffering refused: 1x outer loop: only innermost loops ...
//       scheduler: 23 of 25 async collectives hidden; exposed:
//           all-reduce-start.24 131.3 of 131.3 us (no independent compute
//           between the start and its use)
//     while.147/while.145 (trip count 8; experiments/seed_repro.py:52)
//       ...
//   async conversion: 98 collectives to start/done pairs
//   scheduler: 96 of 98 async collectives overlapped (module
//     jit_train_step)
//
// followed by the remark counts and, from `hloverlap opt`, the step, the
// exposed communication and the peak memory before and after
// (StepComparisonText): each figure printed once, all from the simulator
// `hloverlap sim` runs. Remarks outside any loop are grouped under
// "outside loops"; loops of other passes' making that match no input loop
// keep their own path. Each line counts input instructions (named in
// brackets) and says the names a message refers to; a loop's copies of
// another loop's instructions (made when that loop was rewritten) count
// apart, labelled as copies. A loop's title says what it is in the JAX
// program (LoopRole).
#ifndef HLOVERLAP_PASSES_REMARK_SUMMARY_H_
#define HLOVERLAP_PASSES_REMARK_SUMMARY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "analysis/cost_oracle.h"
#include "hlo/module.h"
#include "passes/remarks.h"

namespace hloverlap {

// A loop of the input module, recorded before the passes run.
struct SummaryLoop {
  std::string name;  // the while instruction
  std::string path;  // "while.147/while.145"
  int depth = 0;
  SourceLocation location;
  std::string op_name;  // the while's metadata op_name
  // The instructions the loop's body and condition hold (and what they
  // call), not those of nested loops: a remark in this loop about another
  // loop's instruction is about a copy the rewrites made.
  std::vector<std::string> instructions;
};

// What a loop is in the user's JAX program, from its op_name:
// "scan/fori_loop", "scan/fori_loop, forward (jvp)", "scan/fori_loop,
// backward (transpose(jvp))" (JAX names every loop `while`); "" without an
// op_name.
std::string LoopRole(std::string_view op_name);

// The loops of `module`, outermost first (a parent before its children).
std::vector<SummaryLoop> SummaryLoops(const Module& module);

// The instruction and computation names of the input module, recorded
// before the passes run, to name clones after their originals: a name the
// input lacks maps to the longest dotted prefix the input has
// (`all-gather.7.next.peel` -> `all-gather.7`, `while.145.1.peel0` ->
// `while.145`, `body.pipelined` -> `body`); names with no such prefix stay.
class InputNames {
 public:
  explicit InputNames(const Module& module);
  std::string Map(std::string_view name) const;
  // Each component of a loop path "while.147.1/while.145.2".
  std::string MapPath(std::string_view path) const;
  // Every dotted identifier of a sentence.
  std::string MapText(std::string_view text) const;

 private:
  absl::flat_hash_set<std::string> names_;
};

// Renames what the remarks refer to (instruction, loop, instruction and
// loop arguments, names in a message without a format and in the
// suggestion) to the input's names; text arguments (names of instructions a
// pass made that the output has, `ag.hoisted`) stay.
void MapRemarksToInput(const InputNames& names, RemarkSink& sink);

// The summary text (lines end with '\n'; the last one is the counts line,
// with "; all remarks in FILE" when `remarks_file` is not empty).
std::string RemarksSummary(const std::vector<Remark>& remarks,
                           const std::vector<SummaryLoop>& loops,
                           const std::string& remarks_file = "");

// The input's and the output's predictions side by side, one prediction
// each (CostOracle::PredictStep, the simulator of `hloverlap sim`):
//
//   predicted (simulator, as `hloverlap sim`):  input -> output
//     step                   289.108 ms -> 156.759 ms (-132.349 ms, -45.8%)
//     exposed communication   42.071 ms ->   0.967 ms (-41.104 ms)
//     peak memory             8.10 GiB ->  15.36 GiB (+7.26 GiB)
//
// With a --memory-budget the peak line says whether the growth is within
// it.
std::string StepComparisonText(const StepPrediction& input,
                               const StepPrediction& output,
                               std::optional<int64_t> memory_budget);

}  // namespace hloverlap

#endif  // HLOVERLAP_PASSES_REMARK_SUMMARY_H_
