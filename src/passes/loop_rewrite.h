// The loop-rewrite transaction every loop pass builds its rewrite in
// (DESIGN.md, "Facts and rewrites shared by every pass").
//
// A rewrite never edits the loop it replaces: it creates new computations
// (condition, body, the peeled iterations' callees), new instructions in
// existing computations (prologue, epilogue, the new while) and records them
// here, and names what replaces what at commit. Commit(what), the only
// commit, verifies what was built, makes the replacements and removes the
// old loops. Rollback (or destruction before a commit) removes everything
// recorded, so a rewrite that fails anywhere leaves the module as it was.
//
// Replacing a loop by a value built after a new loop (the collective
// pipeliner): the old while's uses and control edges go to `result` at
// commit (ReplaceAtCommit), and the old while goes:
//
//   %w = (s32[], f32[8]) while(%t), ...   ->   %w.1 = (s32[], f32[8], f32[8])
//   %r = f32[8] get-tuple-element(%w), ...          while(%t.pipelined), ...
//                                              %w.result = (s32[], f32[8])
//                                                  tuple(...epilogue...)
//                                              %r = get-tuple-element(
//                                                  %w.result), ...
//
//   LoopRewrite txn(module);
//   Computation* body = txn.NewComputation("body.pipelined", state, ...);
//   ... txn.Add(*parent, std::move(prologue_instr), old_while) ...
//   Instruction* w = txn.Add(*parent, NewWhile(...), old_while);
//   SetWhileTripCount(*w, trips - 1, ...);       // typed backend config
//   ... txn.Add(*parent, epilogue and the result tuple, old_while) ...
//   if (absl::Status s = txn.ReplaceAtCommit(old_while, result); !s.ok())
//     return s;                                   // the caller rolls back
//   if (absl::Status s = txn.Commit("rewritten loop does not verify: ");
//       !s.ok()) return s;                        // rolled back
//
// Appending loop state (the collective hoist): AppendLoopState builds, next
// to the loop, a while that carries the old state plus new elements, passed
// through unchanged, with its own copies of the condition and body:
//
//   %t = (s32[], f32[8]) tuple(%i, %x)        %t = (s32[], f32[8], f32[16])
//   %w = (s32[], f32[8]) while(%t), ...    ->      tuple(%i, %x, %g)
//   %r = f32[8] get-tuple-element(%w), ...   %w = (...) while(%t), ...
//                                             %r = get-tuple-element(%w), ...
//   body: param gains the element, `%g.carried = get-tuple-element(param),
//   index=2` right after it, and the root tuple passes it on.
//
// The copies keep the old names, instruction order and channel ids (the
// old loop, its init tuple and computations go at commit, so names are
// unique again and the text is the old one plus the new elements); called
// computations are shared until then. A loop inside a computation the
// transaction created is replaced at once; one in an existing computation
// at Commit(what), which verifies every created computation and the
// parents of the replaced loops first:
//
//   LoopRewrite txn(module);
//   Instruction* g = txn.Add(*parent, std::move(gather), outer);
//   absl::StatusOr<AppendedState> o = txn.AppendLoopState(outer, {g});
//   // `inner` is in outer's body: its copy is in o->body, replaced at once.
//   absl::StatusOr<AppendedState> i =
//       txn.AppendLoopState(o->map.at(inner), {o->reads[0]});
//   ... edit i->body (i->map: old instruction -> copy) ...
//   if (absl::Status s = txn.Commit("hoisted loops do not verify: ");
//       !s.ok()) return s;                        // rolled back
//
// AppendLoopStateOptions name and place the new init tuple and reads
// otherwise (the reduction deferral: a fresh `%t.deferred` right before the
// loop, the read `%ar.acc` right before the accumulating add).
//
// Editing a loop's copy (the deferral's inner loop of stacked rows, whose
// state element widens): CopyLoop builds the same while next to the loop,
// calling copies of its condition and body that the caller edits freely
// (state elements may change when every user of the loop is a
// get-tuple-element); ReplaceAtCommit redirects an existing instruction (a
// read of the old loop's result) at commit:
//
//   absl::StatusOr<AppendedState> o = txn.CopyLoop(w);
//   ... edit o->body, o->condition, o->loop (o->map: old -> copy) ...
//   txn.ReplaceAtCommit(old_read, read_after_the_loop);
//   if (absl::Status s = txn.Commit("the deferred loop does not verify: ");
//       !s.ok()) return s;                        // rolled back
//
// Replacing a loop by one built from scratch (double buffering): the new
// while is added next to the loop with ReplaceLoopAtCommit; at commit the
// old loop goes (its control predecessors to `preds_to`), and
// RenameAtCommit gives the copies the names the old computations held:
//
//   Instruction* w2 = txn.Add(*parent, NewWhile(...), w);
//   txn.ReplaceLoopAtCommit(w, w2, peeled_root);
//   txn.RenameAtCommit(body, ".double_buffer", "");
//   if (absl::Status s = txn.Commit("the unrolled loop does not verify: ");
//       !s.ok()) return s;                        // rolled back
//
// Failure injection (tests): every fallible step of a transaction (each
// AppendLoopState, CopyLoop, ReplaceAtCommit, ReplaceLoopAtCommit, each
// Checkpoint a pass calls between its own steps, and the commit itself)
// asks the process-wide FaultInjection first; a test sets one with
// ScopedLoopRewriteFault to fail the N-th step and checks that the module
// is left byte-identical. Unset (always, outside tests) it costs a null
// check.
//
// Used by the collective pipeliner, double buffering, the hoist and
// reduction deferral, all four through LoopPassDriver
// (passes/loop_pass_driver.h).
#ifndef HLOVERLAP_PASSES_LOOP_REWRITE_H_
#define HLOVERLAP_PASSES_LOOP_REWRITE_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/clone.h"
#include "hlo/module.h"

namespace hloverlap {

// The test hook of the passes built on LoopRewrite: runs on a rewrite's new
// loop body just before its commit. An error, or a body left malformed,
// makes the rewrite fail and roll back.
using LoopRewriteHook = std::function<absl::Status(Computation& body)>;

// Asked before each fallible step of every transaction (see the header
// comment): an error fails that step. `step` names it ("append loop state",
// "commit", or a pass's Checkpoint name).
using LoopRewriteFault = std::function<absl::Status(std::string_view step)>;

// Sets the process-wide LoopRewriteFault for its lifetime (tests only; not
// thread-safe, like the tests that use it).
class ScopedLoopRewriteFault {
 public:
  explicit ScopedLoopRewriteFault(LoopRewriteFault fault);
  ~ScopedLoopRewriteFault();
  ScopedLoopRewriteFault(const ScopedLoopRewriteFault&) = delete;
  ScopedLoopRewriteFault& operator=(const ScopedLoopRewriteFault&) = delete;

 private:
  LoopRewriteFault previous_;
};

// How AppendLoopState names and places what it builds; the defaults keep
// the old loop's text (see the header comment).
struct AppendLoopStateOptions {
  // Not empty: the new init is a fresh tuple of this name (made unique)
  // right before the loop, instead of a copy of the old init tuple in its
  // place under its name.
  std::string init_name;
  // Per new element, the name of its read in the body (made unique); a
  // missing or empty one is `<init>.carried`.
  std::vector<std::string> read_names;
  // Not null: an instruction of the old body; the reads go right before its
  // copy instead of right after the body's parameter.
  const Instruction* reads_before = nullptr;
};

// What AppendLoopState or CopyLoop built.
struct AppendedState {
  Instruction* loop = nullptr;  // the new while
  Computation* condition = nullptr;
  Computation* body = nullptr;
  // Per new element, its get-tuple-element of the body's parameter (none
  // for CopyLoop).
  std::vector<Instruction*> reads;
  // Each instruction of the old condition and body -> its copy.
  absl::flat_hash_map<const Instruction*, Instruction*> map;
};

class LoopRewrite {
 public:
  explicit LoopRewrite(Module& module) : module_(&module) {}
  LoopRewrite(const LoopRewrite&) = delete;
  LoopRewrite& operator=(const LoopRewrite&) = delete;
  // Rolls back unless committed.
  ~LoopRewrite() { Rollback(); }

  Module& module() const { return *module_; }

  // Adds `inst` to `comp` (before `before`, else at the end) and records it.
  Instruction* Add(Computation& comp, std::unique_ptr<Instruction> inst,
                   const Instruction* before = nullptr);
  // A fresh computation named after `base` with one parameter of
  // `param_shape` (returned in `param`), placed before `before`.
  Computation* NewComputation(std::string_view base, const Shape& param_shape,
                              const Computation* before, Instruction** param);

  // CloneLoopComputations (hlo/clone.h) of `while_instr`, the copies
  // recorded.
  absl::StatusOr<std::pair<Computation*, Computation*>> CloneLoop(
      const Instruction& while_instr, std::string_view suffix);
  // CloneInstructionsInto (hlo/clone.h) with what it creates recorded (the
  // instructions when `comp` is not a computation this transaction created;
  // those die with it).
  absl::Status CloneInto(
      absl::Span<Instruction* const> instructions, Computation& comp,
      absl::flat_hash_map<const Instruction*, Instruction*>& map,
      const CloneIntoOptions& options);

  // A while carrying `loop`'s state plus one element per `inits` (see the
  // header comment). `loop` needs one operand and a body whose root is a
  // tuple. Uses of `loop` go to the new while at commit (get-tuple-elements
  // directly, other users through a tuple of get-tuple-elements), or at
  // once when `loop` lives in a computation this transaction created. On an
  // error nothing is left half-built (the caller rolls back).
  absl::StatusOr<AppendedState> AppendLoopState(
      Instruction* loop, absl::Span<Instruction* const> inits,
      const AppendLoopStateOptions& options = {});
  // A while like `loop` (same name, operand, shape and attributes) next to
  // it, calling copies of its condition and body (as AppendLoopState's,
  // nothing appended), to edit. It replaces `loop` like AppendLoopState's
  // while; when the caller changes its state, every user of `loop` must be
  // a get-tuple-element (checked at commit).
  absl::StatusOr<AppendedState> CopyLoop(Instruction* loop);
  // At Commit(what), after the loops are replaced: the uses and control
  // edges of `old` (an instruction of a computation that existed) go to
  // `with` (same shape), and `old` is removed when it is then unused.
  absl::Status ReplaceAtCommit(Instruction* old, Instruction* with);
  // Commit for AppendLoopState and CopyLoop: verifies every created computation
  // and the computations of the loops to replace (an error is `what` + the
  // first problem), then replaces each such loop (control edges and uses moved)
  // and removes it, its init tuple when unused, and the computations only
  // it called. On any failure everything is rolled back.
  absl::Status Commit(std::string_view what);

  // A step of the caller's own (between the transaction's): fails when a
  // test's LoopRewriteFault says so. `step` names it in the error.
  absl::Status Checkpoint(std::string_view step) const;

  // At Commit(what), before the old computations go: `old` (a while of an
  // existing computation) is replaced by `with` (a while this transaction
  // added next to it, same shape): `old`'s control predecessors go to
  // `preds_to`, its control successors and uses to `with`, and `old` is
  // removed with the computations only it called; its operand stays.
  absl::Status ReplaceLoopAtCommit(Instruction* old, Instruction* with,
                                   Instruction* preds_to);
  // At Commit(what), after the old computations are gone: each instruction
  // of `comp` (created here) whose name ends with `from` is renamed to end
  // with `to` unless that name is taken; the while replacing a loop at
  // commit takes the old loop's name. In order of the calls.
  // With `once_removed`, only when Commit removed that computation.
  void RenameAtCommit(Computation* comp, std::string from, std::string to,
                      const Computation* once_removed = nullptr);
  // Each old instruction -> its copy, over every AppendLoopState and
  // CopyLoop so far, and each replaced loop -> its replacement: what a
  // caller remaps after Commit(what).
  const absl::flat_hash_map<const Instruction*, Instruction*>& moved() const {
    return moved_;
  }

  // Removes every recorded instruction and computation.
  void Rollback();

 private:
  Module* module_;
  std::vector<Instruction*> instructions_;  // in computations that existed
  std::vector<Computation*> computations_;  // created computations
  // AppendLoopState on a loop of an existing computation: replaced at
  // Commit(what).
  struct Replacement {
    Instruction* old_loop;
    Instruction* new_loop;
    Instruction* bridge;  // tuple of get-tuple-elements, or null
    // ReplaceLoopAtCommit: control predecessors go here, the operand stays
    // and the new loop takes the old one's name.
    Instruction* preds_to = nullptr;
  };
  struct Rename {
    Computation* comp;
    std::string from;
    std::string to;
    const Computation* once_removed;
  };
  std::vector<Rename> renames_;
  absl::flat_hash_map<const Instruction*, Instruction*> moved_;
  std::vector<Replacement> replacements_;
  std::vector<std::pair<Instruction*, Instruction*>> use_replacements_;
  // Computations that may become unused when the replacements are done.
  std::vector<Computation*> maybe_unused_;

  // Moves `old`'s control predecessors to `preds_to` and its control
  // successors to `result`.
  static void MoveControlEdges(Instruction* old, Instruction* preds_to,
                               Instruction* result);
  bool Created(const Computation* c) const;
  // The checks and copies of the condition and body of CopyLoop and
  // AppendLoopState (`what` starts an error) into `out`.
  absl::Status CopyLoopComputations(Instruction* loop, std::string_view what,
                                    AppendedState& out);
  // Records `r` for Commit(what), or replaces it at once when the old loop
  // lives in a created computation.
  absl::Status Register(const Replacement& r);
  // Moves `r.old_loop`'s control edges and uses to the new loop and removes
  // it (and its init tuple when unused).
  absl::Status Replace(const Replacement& r);
  // Forgets what was recorded (after a commit or a rollback).
  void Clear();
  // The test's LoopRewriteFault for `step`, prefixed with it.
  static absl::Status Fault(std::string_view step);
  // Commit(what)'s renames, once the old computations are gone.
  void ApplyRenames();
};

}  // namespace hloverlap

#endif  // HLOVERLAP_PASSES_LOOP_REWRITE_H_
