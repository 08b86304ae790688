// HLO instructions.
//
// An Instruction is owned by its Computation. It has an opcode, a result
// shape, an ordered operand list (with a users list kept in sync), called
// computations, control predecessors/successors, and attributes.
//
// Attributes passes reason about are typed (InstructionAttributes below);
// everything else is kept verbatim in `raw` so printing round-trips.
//
// Called computations by opcode (order matters):
//   while              {condition, body}
//   conditional        {true, false} (pred selector) or branches (s32)
//   call, map, reduce, reduce-window, scatter, sort, all-reduce(-start),
//   reduce-scatter, scan, fusion, async-start     {to_apply / calls}
//   select-and-scatter {select, scatter}
//   custom-call        called_computations={...} (any number)
#ifndef HLOVERLAP_HLO_INSTRUCTION_H_
#define HLOVERLAP_HLO_INSTRUCTION_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "hlo/attributes.h"
#include "hlo/literal.h"
#include "hlo/opcode.h"
#include "hlo/shape.h"
#include "hlo/while_backend_config.h"

namespace hloverlap {

class Computation;

// Typed attributes. A field is meaningful only for the opcodes listed.
struct InstructionAttributes {
  // dimensions={...}: broadcast, transpose, reduce, reverse, concatenate,
  // sort, map, all-gather(-start), reduce-scatter, all-to-all,
  // get/set-dimension-size, scan.
  DimensionVector dimensions;
  bool has_dimensions = false;  // printed only when present in the input

  int64_t tuple_index = 0;                   // get-tuple-element index=
  int64_t parameter_number = 0;              // parameter(N)
  int64_t iota_dimension = 0;                // iota iota_dimension=
  BoxedList<std::vector<SliceRange>> slice;  // slice slice=
  // dynamic-slice dynamic_slice_sizes=
  BoxedList<DimensionVector> dynamic_slice_sizes;
  BoxedList<std::vector<PaddingDim>> padding;  // pad padding=
  Boxed<DotDimensionNumbers> dot;              // dot, ragged-dot, scaled-dot
  ComparisonDirection comparison_direction = ComparisonDirection::kEq;
  BoxedString comparison_type;  // compare type= (empty = default for type)

  // Collectives.
  std::optional<int64_t> channel_id;
  Boxed<ReplicaGroups> replica_groups;
  bool use_global_device_ids = false;
  bool constrain_layout = false;
  // collective-permute source_target_pairs=
  BoxedList<std::vector<std::pair<int64_t, int64_t>>> source_target_pairs;

  BoxedString fusion_kind;         // fusion kind= (kLoop, kInput, ...)
  BoxedString custom_call_target;  // custom-call custom_call_target=
  // conditional printed with branch_computations={...} (s32 selector) rather
  // than true_computation=/false_computation=.
  bool branch_computations_form = false;
  bool is_composite = false;  // call is_composite=true

  std::unique_ptr<Literal> literal;  // constant

  OpMetadata metadata;
  BoxedList<FrontendAttributes> frontend_attributes;
  // raw text: JSON blob or unescaped string. A while's JSON object is
  // decoded into while_config instead (and this stays empty).
  ConfigText backend_config;
  bool backend_config_is_raw = true;       // printed as {...} blob vs "string"
  Boxed<WhileBackendConfig> while_config;  // while (while_backend_config.h)
  BoxedString sharding;  // raw text of sharding={...}, braces included

  // Attributes no pass interprets, in input order, printed verbatim.
  BoxedList<std::vector<RawAttribute>> raw;
};

// Where an instruction was defined in the text it was parsed from: the
// 1-based line and column (in bytes) of its name (after `ROOT`). {0, 0} when
// unknown: built by a pass from scratch, or read from no text. Clones keep
// their original's position (CopyAttributesFrom), so a diagnostic about a
// rewritten instruction points at the source line it came from.
struct SourcePosition {
  uint32_t line = 0;
  uint32_t column = 0;
  bool known() const { return line != 0; }
};

// An instruction's users: most have one or two, held inline (the same 24
// bytes as a std::vector, without an allocation per instruction).
using UserList = absl::InlinedVector<Instruction*, 2>;

class Instruction {
 public:
  Instruction(Opcode opcode, std::string name, Shape shape);
  // With a shape shared with other instructions (see SharedShape).
  Instruction(Opcode opcode, std::string name, SharedShape shape);
  Instruction(const Instruction&) = delete;
  Instruction& operator=(const Instruction&) = delete;

  Opcode opcode() const { return opcode_; }
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  const Shape& shape() const { return shape_.get(); }
  // A reference to this instruction's own shape (a shape shared with other
  // instructions is copied first).
  Shape& mutable_shape() { return shape_.Mutable(); }
  void set_shape(Shape shape) { shape_.Set(std::move(shape)); }
  // The shape as held: copying it shares it (clones and parsers use this).
  const SharedShape& shared_shape() const { return shape_; }
  Computation* parent() const { return parent_; }

  // Unique id within the module, assigned when added to a computation; stable
  // for the instruction's lifetime (used for deterministic ordering/hashing).
  int64_t unique_id() const { return unique_id_; }

  // --- Operands and users -------------------------------------------------
  absl::Span<Instruction* const> operands() const { return operands_; }
  Instruction* operand(int64_t i) const { return operands_[i]; }
  int64_t operand_count() const { return operands_.size(); }
  // Users, each once, in the order they started using this instruction.
  const UserList& users() const { return users_; }
  int64_t user_count() const { return users_.size(); }
  bool IsUserOf(const Instruction* operand) const;

  void AppendOperand(Instruction* operand);
  // Replaces operand i, updating users of the old and new operand.
  void ReplaceOperandWith(int64_t i, Instruction* new_operand);
  // Replaces every occurrence of old_operand among the operands.
  void ReplaceOperandsWith(Instruction* old_operand, Instruction* new_operand);
  // Replaces this instruction in all its users' operand lists (and as the
  // computation root) with `other`. Shapes must be compatible.
  absl::Status ReplaceAllUsesWith(Instruction* other);
  // Drops all operands (unregistering this from their users).
  void DetachOperands();

  // --- Control dependencies -----------------------------------------------
  const std::vector<Instruction*>& control_predecessors() const {
    return control_predecessors_.value();
  }
  const std::vector<Instruction*>& control_successors() const {
    return control_successors_.value();
  }
  // `this` must run after `predecessor`. Idempotent.
  void AddControlPredecessor(Instruction* predecessor);
  void RemoveControlPredecessor(Instruction* predecessor);
  // Removes every control edge into and out of this instruction.
  void DropAllControlDependencies();

  // --- Called computations ------------------------------------------------
  const std::vector<Computation*>& called_computations() const {
    return called_computations_;
  }
  std::vector<Computation*>& mutable_called_computations() {
    return called_computations_;
  }
  // while only.
  Computation* while_condition() const { return called_computations_[0]; }
  Computation* while_body() const { return called_computations_[1]; }
  // Single callee of call/fusion/reduce/all-reduce/async-start/..., or null.
  Computation* to_apply() const {
    return called_computations_.empty() ? nullptr : called_computations_[0];
  }

  // --- Attributes ---------------------------------------------------------
  const InstructionAttributes& attrs() const { return attrs_; }
  InstructionAttributes& mutable_attrs() { return attrs_; }
  const OpMetadata& metadata() const { return attrs_.metadata; }
  const DimensionVector& dimensions() const { return attrs_.dimensions; }
  int64_t tuple_index() const { return attrs_.tuple_index; }
  int64_t parameter_number() const { return attrs_.parameter_number; }
  const Literal* literal() const { return attrs_.literal.get(); }
  // Raw attribute text by name, or nullptr.
  const RawAttribute* FindRawAttribute(std::string_view name) const;

  // Position of the definition in the parsed text (see SourcePosition).
  // Columns past 2^24 - 1 and lines past 2^32 - 1 are stored saturated.
  SourcePosition source_position() const {
    return {source_line_, source_column_};
  }
  void set_source_position(SourcePosition position);

  // Copies attributes, called computations, metadata and the source position
  // (not operands, users, control edges or name) from `other`.
  void CopyAttributesFrom(const Instruction& other);

  // The line as printed (without indentation or ROOT), for diagnostics.
  std::string ToString() const;

 private:
  friend class Computation;
  friend class Module;

  Opcode opcode_;
  std::string name_;
  SharedShape shape_;
  Computation* parent_ = nullptr;
  int64_t unique_id_ = -1;
  absl::InlinedVector<Instruction*, 3> operands_;
  UserList users_;
  // Few instructions have control edges: out of line (8 bytes each).
  BoxedList<std::vector<Instruction*>> control_predecessors_;
  BoxedList<std::vector<Instruction*>> control_successors_;
  std::vector<Computation*> called_computations_;
  InstructionAttributes attrs_;
  // The source position and the order flags share the 8 bytes that were the
  // flags' byte and its padding: the position costs no memory.
  uint32_t source_line_ = 0;
  uint32_t source_column_ : 24 = 0;
  // Computation's deferred order edits (see Computation::pending_): whether
  // instructions are queued before this one, whether it awaits removal.
  static constexpr uint8_t kOrderAnchor = 1;
  static constexpr uint8_t kOrderRemoved = 2;
  uint32_t order_flags_ : 8 = 0;

  void AddUser(Instruction* user);
  void RemoveUserIfUnused(Instruction* user);
};

}  // namespace hloverlap

#endif  // HLOVERLAP_HLO_INSTRUCTION_H_
