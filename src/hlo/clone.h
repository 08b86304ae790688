// Cloning and rewrite utilities.
#ifndef HLOVERLAP_HLO_CLONE_H_
#define HLOVERLAP_HLO_CLONE_H_

#include <memory>
#include <string>

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
absl::StatusOr<Computation*> CloneComputation(
    const Computation& computation, std::string_view suffix = "clone",
    Module* target = nullptr, bool deep = false);

// Deep-copies a whole module (names and channel ids unchanged).
std::unique_ptr<Module> CloneModule(const Module& module);

// Replaces every use of `old_instruction` by `new_instruction` and removes
// `old_instruction` if it is then unused.
absl::Status ReplaceInstruction(Instruction* old_instruction,
                                Instruction* new_instruction);

}  // namespace hloverlap

#endif  // HLOVERLAP_HLO_CLONE_H_
