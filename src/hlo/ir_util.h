// Small structural facts about instructions and the builders every rewrite
// needs, shared by the analyses and the passes (one definition each).
//
//   %p = (s32[], f32[8]) parameter(0)
//   %x = f32[8] get-tuple-element(%p), index=1   IsGteOf(x, p, 1)
//   %y = f32[8] add(%x, %x), control-predecessors={%z}
//                                                HasControlDeps(y)
//
// NewGetTupleElement(module, "x", p, 1) builds another `%x.1 = f32[8]
// get-tuple-element(%p), index=1` (not yet added to a computation).
#ifndef HLOVERLAP_HLO_IR_UTIL_H_
#define HLOVERLAP_HLO_IR_UTIL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/types/span.h"
#include "hlo/literal.h"
#include "hlo/module.h"

namespace hloverlap {

// Whether `i` has control predecessors or control successors.
bool HasControlDeps(const Instruction* i);

// Whether `i` is a get-tuple-element of `tuple` (of element `index`).
bool IsGteOf(const Instruction* i, const Instruction* tuple);
bool IsGteOf(const Instruction* i, const Instruction* tuple, int64_t index);

// Whether every user of `i` is a get-tuple-element.
bool OnlyGteUsers(const Instruction* i);

// get-tuple-element(`tuple`), index=`index`, named after `base` (unique in
// `module`), with the element's shape; not yet added anywhere.
std::unique_ptr<Instruction> NewGetTupleElement(Module& module,
                                                std::string_view base,
                                                Instruction* tuple,
                                                int64_t index);

// constant(`literal`) named after `base`, of the literal's shape.
std::unique_ptr<Instruction> NewConstant(Module& module, std::string_view base,
                                         Literal literal);

// broadcast(`scalar`) to `shape` (dimensions={}), named after `base`.
std::unique_ptr<Instruction> NewScalarBroadcast(Module& module,
                                                std::string_view base,
                                                Instruction* scalar,
                                                const Shape& shape);

// tuple(`elements`) named `name` (taken as it is), with their shapes.
std::unique_ptr<Instruction> NewTuple(std::string name,
                                      absl::Span<Instruction* const> elements);

// The instruction stored right after `i` in its computation's order (null
// when it is the last).
const Instruction* NextInOrder(const Instruction* i);

}  // namespace hloverlap

#endif  // HLOVERLAP_HLO_IR_UTIL_H_
