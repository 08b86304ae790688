// The driver every loop rewrite of a loop pass goes through (DESIGN.md,
// "Errors"): one place for the loop nest, the call graph, the memory ledger,
// remapping after a commit, and the failure policy.
//
// A pass walks driver.nest() (innermost first), decides per candidate, and
// hands each rewrite to Rewrite with a builder that fills a LoopRewrite
// (passes/loop_rewrite.h) without committing it:
//
//   LoopPassDriver driver("collective-hoist", module, context);
//   for (LoopNode* node : driver.nest().InnermostFirst()) {
//     ...decide; missed remarks...
//     absl::StatusOr<bool> done = driver.Rewrite(request, [&](LoopRewrite& txn)
//     {
//       ...txn.AppendLoopState(...), edits of the copies...
//       return absl::OkStatus();
//     });
//     if (!done.ok()) return done.status();  // the module-size limit only
//     if (*done) ...passed remark; driver.Moved(x) names what x became...
//   }
//
// Rewrite reserves the instructions with the module-size guard (over the
// limit: the error that stops the pipeline, before anything is built), runs
// the builder, and commits with LoopRewrite::Commit(what). Any error of the
// builder or the commit rolls the transaction back, so the module is what
// it was for that loop, emits a `failure` remark (RewriteDiscarded) naming
// the pass, the loop and the candidate, and returns false: the pass goes on
// with its other loops. On success it spends the rewrite's extra live bytes
// on the ledger, remaps the nest through what moved, and rebuilds the call
// graph (lazily).
#ifndef HLOVERLAP_PASSES_LOOP_PASS_DRIVER_H_
#define HLOVERLAP_PASSES_LOOP_PASS_DRIVER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analysis/call_graph.h"
#include "hlo/module.h"
#include "passes/loop_rewrite.h"
#include "passes/pass.h"

namespace hloverlap {

// One rewrite as the driver runs it.
struct LoopRewriteRequest {
  // The size guard's location (the loop, or the candidate).
  const Instruction* at = nullptr;
  // The candidate a failure remark names (a collective, or the loop
  // itself); null: `at`.
  const Instruction* candidate = nullptr;
  std::string loop;  // its loop path (LoopNode::path)
  // What the rewrite does ("hoisting all-gather ag out of outer"): the size
  // guard's and a failure's wording.
  std::string what;
  int64_t added_instructions = 0;  // reserved with the size guard
  std::string avoid;               // how to keep the rewrite off
  int64_t extra_live_bytes = 0;    // spent on the ledger once committed
  // Commit(what)'s prefix of a verification problem.
  std::string verify_what;
  // The failure remark's message starts with this (else "<pass>: <what>: ").
  std::string failure_prefix;
};

class LoopPassDriver {
 public:
  using Builder = std::function<absl::Status(LoopRewrite& txn)>;

  LoopPassDriver(std::string_view pass, Module& module, PassContext& context);
  LoopPassDriver(const LoopPassDriver&) = delete;
  LoopPassDriver& operator=(const LoopPassDriver&) = delete;

  Module& module() const { return *module_; }
  PassContext& context() const { return *context_; }
  // The loops of the module when the driver started, remapped after each
  // rewrite (a node whose loop was replaced names the replacement).
  LoopNest& nest() { return nest_; }
  // Who calls each computation, as of the last rewrite.
  const CallGraph& callers();
  // Whether `loop` is still an instruction of the module (a loop of a
  // computation a rewrite removed is not).
  bool Alive(const Instruction* loop);

  // Runs one rewrite (see the header comment). An error is the module-size
  // limit only; false: the rewrite failed and was discarded (remarked).
  absl::StatusOr<bool> Rewrite(const LoopRewriteRequest& request,
                               const Builder& build);
  // What `inst` became in the last committed rewrite (itself if nothing).
  Instruction* Moved(Instruction* inst) const;
  // Whether a rewrite committed.
  bool changed() const { return changed_; }

 private:
  std::string pass_;
  Module* module_;
  PassContext* context_;
  LoopNest nest_;
  std::unique_ptr<CallGraph> callers_;
  absl::flat_hash_map<const Instruction*, Instruction*> moved_;
  absl::flat_hash_set<const Instruction*> alive_;
  bool alive_valid_ = false;
  bool changed_ = false;
};

}  // namespace hloverlap

#endif  // HLOVERLAP_PASSES_LOOP_PASS_DRIVER_H_
