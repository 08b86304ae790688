// Structural and shape verification of HLO modules.
//
// Checks operand counts and shape rules for the common ops (elementwise,
// broadcast, reshape, transpose, convert, slice, dynamic-slice,
// dynamic-update-slice, concatenate, pad, iota, dot, reduce, select/compare,
// tuple/get-tuple-element, while/call signatures, collectives and their
// async forms), def-before-use, operand/user consistency, and that called
// computations belong to the module. Opcodes it has no rule for are accepted.
#ifndef HLOVERLAP_HLO_VERIFIER_H_
#define HLOVERLAP_HLO_VERIFIER_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "hlo/module.h"

namespace hloverlap {

struct VerifierOptions {
  // Compare layouts too (off: shapes compared ignoring layout).
  bool check_layouts = false;
};

// All problems found, one message each, naming computation and instruction:
// "computation main, instruction add.3: expected f32[8], found f32[4]".
std::vector<std::string> VerifyModuleAll(const Module& module,
                                         const VerifierOptions& options = {});
// OK, or InvalidArgument with the first problem (and a count of the rest).
absl::Status VerifyModule(const Module& module,
                          const VerifierOptions& options = {});

}  // namespace hloverlap

#endif  // HLOVERLAP_HLO_VERIFIER_H_
