// Structural comparison of HLO modules.
//
// CompareModules(a, b) is OK when the two modules are structurally identical:
// same module header (name, is_scheduled, replica_count, num_partitions,
// entry_computation_layout, frontend attributes, raw header attributes,
// stack frame index), the same computations in the same order (name, entry,
// fusion flag, execution thread, parameters, root), and in each the same
// instructions by name (in the same stored order unless
// compare_instruction_order is off) with the same opcode, shape including
// layout, operand names, called computation names, control predecessor
// names, typed attributes, raw attributes, literal bits, metadata, frontend
// attributes, backend_config and sharding.
//
// Otherwise it returns InvalidArgument describing the first difference, e.g.
//   "computation main.5, instruction add.3: operand 1 is %a vs %b"
//
// Order-insensitive by design (the printer canonicalizes these): frontend
// attributes (compared sorted by key) and raw attributes (compared sorted by
// name, so XLA's print order and the input order compare equal).
// Module::dropped_control_predecessors() is parse bookkeeping and ignored.
#ifndef HLOVERLAP_HLO_COMPARE_H_
#define HLOVERLAP_HLO_COMPARE_H_

#include "absl/status/status.h"
#include "hlo/module.h"

namespace hloverlap {

struct CompareOptions {
  // Instructions must appear in the same stored order. When false they are
  // matched by name (the computations must still have the same names).
  bool compare_instruction_order = true;
  bool compare_metadata = true;
  bool compare_backend_config = true;
};

absl::Status CompareModules(const Module& a, const Module& b,
                            const CompareOptions& options = {});

// Compares two instructions (of possibly different modules) by the same
// rules, names included; messages start with "instruction NAME: ".
absl::Status CompareInstructions(const Instruction& a, const Instruction& b,
                                 const CompareOptions& options = {});

}  // namespace hloverlap

#endif  // HLOVERLAP_HLO_COMPARE_H_
