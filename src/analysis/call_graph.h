// Call graph of a module and the nesting tree of its while loops.
//
// A computation's call sites are the instructions that name it (while,
// call, fusion, reduce's to_apply, ...). The loop nest is derived from the
// call graph: a while loop W2 is nested in W1 when W2's computation is
// reachable from W1's body (directly, or through calls / conditionals /
// other non-loop callers).
//
//   ENTRY main { while.1 = while(...), body=outer_body }
//   outer_body { while.2 = while(...), body=inner_body }   // depth 1
//   inner_body { all-gather ... }                           // depth 2
#ifndef HLOVERLAP_ANALYSIS_CALL_GRAPH_H_
#define HLOVERLAP_ANALYSIS_CALL_GRAPH_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "hlo/module.h"

namespace hloverlap {

class CallGraph {
 public:
  explicit CallGraph(const Module& module);

  // Instructions that call `computation` (in module order).
  const std::vector<Instruction*>& CallSites(
      const Computation* computation) const;
  // Computations reachable from the entry, callees before callers.
  const std::vector<Computation*>& PostOrder() const { return post_order_; }
  // True if `computation` is reachable from the entry.
  bool IsReachable(const Computation* computation) const;

 private:
  absl::flat_hash_map<const Computation*, std::vector<Instruction*>> callers_;
  std::vector<Computation*> post_order_;
  absl::flat_hash_map<const Computation*, bool> reachable_;
  std::vector<Instruction*> empty_;
};

// One while loop in the nest.
struct LoopNode {
  Instruction* while_instr = nullptr;
  LoopNode* parent = nullptr;  // enclosing loop, null at top level
  std::vector<LoopNode*> children;
  int depth = 0;  // 0 = not inside another loop
  // "while.198/while.196": names from the outermost loop down.
  std::string path;
};

// The while loops reachable from the entry, as a forest. A body shared by
// several while instructions yields a node per while instruction; a loop
// reachable through several paths is attributed to the first one found.
class LoopNest {
 public:
  explicit LoopNest(const Module& module);

  const std::vector<LoopNode*>& roots() const { return roots_; }
  // Every loop, innermost first (children before parents).
  const std::vector<LoopNode*>& InnermostFirst() const { return post_order_; }
  const LoopNode* Find(const Instruction* while_instr) const;
  // After a rewrite replaced loops by copies (passes/loop_rewrite.h): each
  // node whose while is a key of `moved` names its copy.
  void Remap(
      const absl::flat_hash_map<const Instruction*, Instruction*>& moved);
  int64_t size() const { return nodes_.size(); }

 private:
  std::vector<std::unique_ptr<LoopNode>> nodes_;
  std::vector<LoopNode*> roots_;
  std::vector<LoopNode*> post_order_;
  absl::flat_hash_map<const Instruction*, LoopNode*> by_instr_;
};

}  // namespace hloverlap

#endif  // HLOVERLAP_ANALYSIS_CALL_GRAPH_H_
