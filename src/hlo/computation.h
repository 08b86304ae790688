// HLO computations: an ordered list of instructions with a root.
//
// The stored instruction order is the text order. For a scheduled module
// (Module::is_scheduled()) it is the schedule of every non-fusion
// computation. The printer emits the stored order when it is a valid
// topological order (operands and control predecessors first) and otherwise
// a stable topological sort of it, so passes may append instructions freely.
#ifndef HLOVERLAP_HLO_COMPUTATION_H_
#define HLOVERLAP_HLO_COMPUTATION_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hlo/instruction.h"

namespace hloverlap {

class Module;

class Computation {
 public:
  explicit Computation(std::string name);
  Computation(const Computation&) = delete;
  Computation& operator=(const Computation&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  Module* parent() const { return parent_; }

  bool is_entry() const;
  // Fused computations (called by fusion) are not scheduled.
  bool IsFusionComputation() const { return is_fusion_computation_; }
  void set_is_fusion_computation(bool v) { is_fusion_computation_ = v; }
  // `}, execution_thread="..."` trailer; empty for the main thread.
  const std::string& execution_thread() const { return execution_thread_; }
  void set_execution_thread(std::string t) { execution_thread_ = std::move(t); }

  // Instructions in stored (text / schedule) order.
  const std::vector<std::unique_ptr<Instruction>>& instructions() const {
    if (HasPendingEdits()) ApplyPendingEdits();
    return instructions_;
  }
  int64_t instruction_count() const {
    return instructions_.size() + pending_.size() - pending_removals_;
  }
  Instruction* root() const { return root_; }
  void set_root(Instruction* root) { root_ = root; }

  // Parameters by number (parameter(N)); null where a number is missing.
  // (Rebuilt lazily, so parameter numbers may be set after adding.)
  const std::vector<Instruction*>& parameters() const;
  Instruction* parameter(int64_t i) const { return parameters()[i]; }
  int64_t num_parameters() const { return parameters().size(); }

  // Adds an instruction at the end (or before `before`, if given). The
  // computation takes ownership; a unique id is assigned. The name is kept
  // as is: use Module::UniqueName for fresh names. Inserts before an
  // instruction cost O(1): they are queued and merged into the stored order
  // in one O(n) pass when the order is next read (instructions()), so a pass
  // that rewrites every loop of a huge computation stays linear.
  Instruction* AddInstruction(std::unique_ptr<Instruction> instruction,
                              const Instruction* before = nullptr);
  // Convenience: creates and adds an instruction with the given operands.
  Instruction* AddInstruction(Opcode opcode, std::string name, Shape shape,
                              absl::Span<Instruction* const> operands);

  // Removes an instruction that has no users, is not the root, and has no
  // control successors. Its operands and control predecessors are detached
  // at once; like inserts, leaving the stored order (and destruction) waits
  // for the next read of the order, so the pointer stays valid until then.
  absl::Status RemoveInstruction(Instruction* instruction);
  // Removes a set of instructions in one sweep (O(n)); every removed
  // instruction's users must also be in the set.
  absl::Status RemoveInstructions(
      const absl::flat_hash_set<Instruction*>& instructions);

  // Reorders instructions to `order`, which must be a permutation of
  // instructions() (used by schedulers).
  absl::Status SetInstructionOrder(const std::vector<Instruction*>& order);

  // Post-order: operands and control predecessors before users; every
  // instruction (also unreachable ones) appears once. Stable with respect to
  // the stored order.
  std::vector<Instruction*> MakeInstructionPostOrder() const;

  // Computations called by instructions of this computation (deduplicated,
  // in first-use order).
  std::vector<Computation*> CalledComputations() const;

  // The signature shape of the computation: (param shapes) -> root shape.
  std::string SignatureString() const;

 private:
  friend class Module;
  std::string name_;
  Module* parent_ = nullptr;
  bool is_fusion_computation_ = false;
  std::string execution_thread_;
  bool HasPendingEdits() const {
    return !pending_.empty() || pending_removals_ != 0;
  }
  // Applies the deferred edits in one pass over instructions_: each queued
  // instruction lands right before its anchor, after those queued earlier
  // for the same anchor (the order repeated single inserts would give; an
  // anchor may itself be queued), and removed instructions are destroyed.
  void ApplyPendingEdits() const;

  // Mutable: reading the order (a const operation) merges pending_ first.
  // Edits are queued by passes (one thread) and may outlive the pass, so the
  // first read after them must be on one thread too: the interpreter reads
  // every reachable computation in Interpreter::Prepare before its device
  // threads start, and the threads only read those.
  mutable std::vector<std::unique_ptr<Instruction>> instructions_;
  struct PendingInsert {
    const Instruction* before;
    std::unique_ptr<Instruction> instruction;
  };
  mutable std::vector<PendingInsert> pending_;
  // Instructions removed but still owned by instructions_ or pending_
  // (flagged Instruction::kOrderRemoved).
  mutable int64_t pending_removals_ = 0;
  // Rebuilt on first use after a parameter was added or removed; guarded so
  // concurrent readers (the interpreter's device threads) are safe.
  mutable std::vector<Instruction*> parameters_;
  mutable std::atomic<bool> parameters_dirty_{false};
  mutable std::mutex parameters_mutex_;
  Instruction* root_ = nullptr;
};

}  // namespace hloverlap

#endif  // HLOVERLAP_HLO_COMPUTATION_H_
