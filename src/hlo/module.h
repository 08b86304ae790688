// HLO modules: computations (callees before callers), the entry computation,
// header attributes and the stack frame index.
#ifndef HLOVERLAP_HLO_MODULE_H_
#define HLOVERLAP_HLO_MODULE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "hlo/attributes.h"
#include "hlo/computation.h"

namespace hloverlap {

// The 2025-12+ stack frame tables (`FileNames`, `FunctionNames`,
// `FileLocations`, `StackFrames`), one vector each in text order: the entry
// written `N {...}` is element N - 1. Ids that refer to another table are
// kept as written, 1-based (0 or out of range: unknown), except
// parent_frame_id (see Frame).
struct StackFrameIndex {
  // A `FileLocations` entry: a source range in a function.
  struct FileLocation {
    int64_t file_name_id = 0;      // into file_names
    int64_t function_name_id = 0;  // into function_names
    // The range as XLA wrote it. Only line and column are read
    // (Module::GetSourceLocation); the ends are kept for printing.
    int64_t line = 0;
    int64_t end_line = 0;
    int64_t column = 0;
    int64_t end_column = 0;
  };
  // A `StackFrames` entry: a location and the frame that called it.
  struct Frame {
    int64_t file_location_id = 0;  // into file_locations
    // Into frames, 1-based, 0 = none. XLA writes it one higher (no parent
    // as `parent_frame_id=1`): the parser subtracts 1 (and reads 0 as
    // none), the printer adds it.
    int64_t parent_frame_id = 0;
  };
  std::vector<std::string> file_names;
  std::vector<std::string> function_names;
  std::vector<FileLocation> file_locations;
  std::vector<Frame> frames;
  bool empty() const {
    return file_names.empty() && function_names.empty() &&
           file_locations.empty() && frames.empty();
  }
};

// Where an instruction comes from in user source, resolved from metadata
// (source_file/source_line, or stack_frame_id through the index).
struct SourceLocation {
  std::string file;
  int64_t line = 0;
  int64_t column = 0;
  bool known() const { return !file.empty(); }
};

class Module {
 public:
  explicit Module(std::string name);
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  // Computations in print order (callees before callers; entry usually last).
  const std::vector<std::unique_ptr<Computation>>& computations() const {
    return computations_;
  }
  Computation* entry() const { return entry_; }
  void set_entry(Computation* entry) { entry_ = entry; }
  Computation* FindComputation(std::string_view name) const;
  // Whether `computation` is one of computations() (O(1); the pointer is
  // only compared, so a dangling one is safe to ask about).
  bool ContainsComputation(const Computation* computation) const {
    return computation_set_.contains(computation);
  }

  // Adds a computation at the end (or before `before`). Takes ownership.
  Computation* AddComputation(std::unique_ptr<Computation> computation,
                              const Computation* before = nullptr);
  // Removes a computation no instruction calls.
  absl::Status RemoveComputation(Computation* computation);
  // Removes a set of computations at once (one scan of the module: callers
  // inside the set do not count). Fails, removing nothing, when the entry or
  // a computation called from outside the set is in it.
  absl::Status RemoveComputations(
      const absl::flat_hash_set<const Computation*>& computations);
  // Reorders computations so callees come before callers (stable).
  void SortComputationsCalleesFirst();

  // --- Header attributes --------------------------------------------------
  bool is_scheduled() const { return is_scheduled_; }
  void set_is_scheduled(bool v) { is_scheduled_ = v; }
  int64_t replica_count() const { return replica_count_; }
  void set_replica_count(int64_t n) { replica_count_ = n; }
  int64_t num_partitions() const { return num_partitions_; }
  void set_num_partitions(int64_t n) { num_partitions_ = n; }
  // Raw text of `entry_computation_layout={...}` including braces; empty if
  // absent.
  const std::string& entry_computation_layout() const {
    return entry_computation_layout_;
  }
  void set_entry_computation_layout(std::string s) {
    entry_computation_layout_ = std::move(s);
  }
  FrontendAttributes& frontend_attributes() { return frontend_attributes_; }
  const FrontendAttributes& frontend_attributes() const {
    return frontend_attributes_;
  }
  // Other header attributes (input_output_alias, buffer_donor,
  // allow_spmd_sharding_propagation_*, ...) verbatim, in text order.
  std::vector<RawAttribute>& raw_header_attributes() { return raw_header_; }
  const std::vector<RawAttribute>& raw_header_attributes() const {
    return raw_header_;
  }

  StackFrameIndex& stack_frames() { return stack_frames_; }
  const StackFrameIndex& stack_frames() const { return stack_frames_; }
  SourceLocation GetSourceLocation(const OpMetadata& metadata) const;

  // Control-predecessor names the parser dropped because they named
  // get-tuple-elements omitted by compact-GTE dumps (ANCHORS §2).
  int64_t dropped_control_predecessors() const { return dropped_control_; }
  void set_dropped_control_predecessors(int64_t n) { dropped_control_ = n; }

  // --- Names and ids --------------------------------------------------------
  // A name not used by any instruction or computation of the module, derived
  // from `base` ("add.3" -> "add.3.1", "add.3.2", ...).
  std::string UniqueInstructionName(std::string_view base);
  std::string UniqueComputationName(std::string_view base);
  // A channel id larger than every channel id in use.
  int64_t NextChannelId();
  // Next instruction unique id (used by Computation::AddInstruction).
  int64_t NextUniqueId() { return next_unique_id_++; }
  // Forgets cached name/channel sets (after bulk renames by a pass).
  void InvalidateNameCache();

  int64_t instruction_count() const;

 private:
  std::string name_;
  std::vector<std::unique_ptr<Computation>> computations_;
  absl::flat_hash_set<const Computation*> computation_set_;
  Computation* entry_ = nullptr;
  bool is_scheduled_ = false;
  int64_t replica_count_ = 1;
  int64_t num_partitions_ = 1;
  std::string entry_computation_layout_;
  FrontendAttributes frontend_attributes_;
  std::vector<RawAttribute> raw_header_;
  StackFrameIndex stack_frames_;
  int64_t dropped_control_ = 0;
  int64_t next_unique_id_ = 0;

  // Lazily built sets of used names (see UniqueInstructionName).
  bool name_cache_valid_ = false;
  absl::flat_hash_set<std::string> used_names_;
  // Per base name, the next numeric suffix to try ("constant" -> 57), so
  // that many names from one base cost O(1) each, not O(count).
  absl::flat_hash_map<std::string, int64_t> next_suffix_;
  int64_t max_channel_id_ = -1;
  void BuildNameCache();
};

}  // namespace hloverlap

#endif  // HLOVERLAP_HLO_MODULE_H_
