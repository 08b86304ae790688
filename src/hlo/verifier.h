// Structural and shape verification of HLO modules.
//
// Per instruction: operand counts, called-computation counts and shape rules
// (via hlo/shape_inference.h) for the common ops (elementwise, broadcast,
// reshape, transpose, convert, slice, dynamic-slice, dynamic-update-slice,
// concatenate, pad, iota, dot, reduce, select/compare, tuple and
// get-tuple-element, while/call/conditional signatures, collectives and their
// async forms); operand/user and control edges consistent both ways and
// inside the instruction's computation.
// Per computation: the root belongs to it, parameters are numbered 0..n-1,
// operands and control edges form no cycle.
// Per module: names are unique (instructions among instructions, computations
// among computations), called computations belong to the module, nothing
// calls the entry computation, the call graph has no cycle, every async
// computation has one async-start.
// Per scheduled module (is_scheduled=true): the instruction order of every
// computation but fusion computations is its schedule (so it lists each
// instruction exactly once by construction), and it must run as stored:
// operands and control predecessors first, a -done after its -start in the
// same computation, and the value of a -start (or async-update) used only
// by its update/done until the done:
//
//   ags = (f32[8], f32[16]) all-gather-start(p)
//   use = f32[8] negate(ags.1)                    <- before the done: error
//   agd = f32[16] all-gather-done(ags)
//
// Opcodes it has no rule for are accepted, and it is lenient where XLA is
// (no result rule for fusion and custom-call; bitcast only keeps the bit
// size). Shapes with dynamic dimensions skip the arithmetic rules. It never
// crashes: every index and attribute value is checked before use.
#ifndef HLOVERLAP_HLO_VERIFIER_H_
#define HLOVERLAP_HLO_VERIFIER_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "hlo/module.h"

namespace hloverlap {

struct VerifierOptions {
  // Compare layouts too (off: shapes compared ignoring layout). Layouts are
  // compared where a rule says a shape is a copy of another (while state,
  // call arguments, tuple elements, async pairs ...), never for shapes the
  // verifier computes itself.
  bool check_layouts = false;
};

// All problems found, one message each, naming computation and instruction:
// "computation main, instruction add.3: expected f32[8], found f32[4]".
std::vector<std::string> VerifyModuleAll(const Module& module,
                                         const VerifierOptions& options = {});
// OK, or InvalidArgument with the first problem (and a count of the rest).
absl::Status VerifyModule(const Module& module,
                          const VerifierOptions& options = {});

// The per-instruction and per-computation checks for one computation (e.g. a
// loop body a pass just built), without the module-wide ones (name
// uniqueness, call-graph cycles, async-start counts, the schedule). Called
// computations must belong to the computation's module when it has one.
std::vector<std::string> VerifyComputationAll(
    const Computation& computation, const VerifierOptions& options = {});

namespace verifier_internal {
// For tests. VerifyModuleAll first runs a quick pass (one walk per
// computation, answering only "certainly clean" or "maybe not") and runs the
// full checks, which word the problems, only on "maybe". The quick pass never
// accepts a module the full checks find a problem in (every error test goes
// through it); these expose the two halves.
bool QuickPassAccepts(const Module& module,
                      const VerifierOptions& options = {});
std::vector<std::string> FullChecks(const Module& module,
                                    const VerifierOptions& options = {});
}  // namespace verifier_internal

// The schedule rules above for one computation, whatever the module's
// is_scheduled: OK, or InvalidArgument "invalid schedule of computation C:
// ..." located at the instruction that runs too early (hlo/diagnostic.h).
// The interpreter runs a scheduled module's order through this.
absl::Status VerifySchedule(const Computation& computation);

}  // namespace hloverlap

#endif  // HLOVERLAP_HLO_VERIFIER_H_
