// Cloning and rewrite utilities.
#ifndef HLOVERLAP_HLO_CLONE_H_
#define HLOVERLAP_HLO_CLONE_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "hlo/module.h"

namespace hloverlap {

// Creates a copy of `instruction` (opcode, shape, attributes, called
// computations) named `name`, with `new_operands`, not yet added anywhere.
std::unique_ptr<Instruction> CloneInstruction(
    const Instruction& instruction, std::string name,
    absl::Span<Instruction* const> new_operands);

// Deep-copies `computation` into its module (or `target` if given) under a
// fresh name derived from `suffix` ("body.3" + ".clone"). Instructions get
// fresh module-unique names; collectives get fresh channel ids. Called
// computations are shared, not copied, unless deep is true. Returns the new
// computation (added before the first computation that calls... at the end of
// the module's list; call Module::SortComputationsCalleesFirst when needed).
absl::StatusOr<Computation*> CloneComputation(const Computation& computation,
                                              std::string_view suffix = "clone",
                                              Module* target = nullptr,
                                              bool deep = false);

struct CloneIntoOptions {
  // Appended to cloned names before uniquing ("add.3" + ".peel").
  std::string suffix = "clone";
  // Cloned while instructions get their own copies of condition and body
  // (recursively for whiles nested in them), so no two whiles share them.
  bool deep_clone_loops = true;
  // Collectives get fresh channel ids.
  bool fresh_channel_ids = true;
  // Insert before this instruction of `dst` (nullptr: at the end).
  const Instruction* insert_before = nullptr;
};

// Clones `instructions` (given in an order where operands come first) into
// `dst`. Operands are looked up in `map`, which must already hold every
// operand that is not itself cloned; each clone is recorded in `map`.
// Control predecessors are copied when their clone is in `dst`. A cloned
// async-start or fusion gets its own copy of the wrapped / fused
// computation (each has one caller), with fresh channel ids. Created
// instructions and computations are appended to `created` /
// `created_computations` (so a caller can undo a failed rewrite).
absl::Status CloneInstructionsInto(
    absl::Span<Instruction* const> instructions, Computation& dst,
    absl::flat_hash_map<const Instruction*, Instruction*>& map,
    const CloneIntoOptions& options,
    std::vector<Instruction*>* created = nullptr,
    std::vector<Computation*>* created_computations = nullptr);

// Copies a while's condition and body (and recursively the loops inside
// them) into fresh computations; returns {condition, body}.
absl::StatusOr<std::pair<Computation*, Computation*>> CloneLoopComputations(
    const Instruction& while_instr, std::string_view suffix,
    std::vector<Computation*>* created_computations = nullptr);

// Predicted sizes of the copies above, for the module-size guard
// (passes/pass.h): the instructions CloneInstructionsInto(instructions, ...)
// creates with `deep_clone_loops` (one per instruction, the conditions and
// bodies of nested loops recursively, each async-start's or fusion's called
// computation), and the instructions CloneLoopComputations(while_instr)
// creates. Computed without cloning; saturate at kCloneCostSaturated (also
// for a computation that calls itself).
inline constexpr int64_t kCloneCostSaturated = int64_t{1} << 62;
int64_t CloneCost(absl::Span<Instruction* const> instructions,
                  bool deep_clone_loops = true);
int64_t LoopCloneCost(const Instruction& while_instr);

// Deep-copies a whole module (names and channel ids unchanged).
std::unique_ptr<Module> CloneModule(const Module& module);

// Replaces every use of `old_instruction` by `new_instruction` and removes
// `old_instruction` if it is then unused.
absl::Status ReplaceInstruction(Instruction* old_instruction,
                                Instruction* new_instruction);

}  // namespace hloverlap

#endif  // HLOVERLAP_HLO_CLONE_H_
