// HLO text printer: the current default XLA style.
//
// `HloModule name, attrs...`, stack frame tables, then each computation as
//   [ENTRY ]%name (p: shape, ...) -> shape {
//     %x = f32[8]{0} add(%a, %b), metadata={...}
//     ROOT %t = (f32[8]{0}) tuple(%x)
//   }
// with `%` names, no operand shapes, `/*index=N*/` before every 5th operand,
// explicit get-tuple-element lines (no compact GTE), generic async-start
// with calls= (no async syntax sugar), and all constant values (elided
// constants print as {...}). XLA's parser accepts the output.
//
// Attributes print in XLA's order (hlo_text_format.md §4.2, §9, §10.1);
// raw attributes are placed where XLA prints an attribute of that name, the
// rest follow the typed ones in stored order. Header attributes follow §3.2.
// On the corpus the output equals XLA's own dump byte for byte, except that
// compact-GTE operands (`%x#1`) come back as explicit get-tuple-element
// lines.
//
// Output always parses back: instructions are emitted in stored order when
// that is a topological order, else in a stable topological order (see
// PrintOrder); a backend_config or frontend attribute flagged raw that is
// not one balanced brace blob is printed as a quoted string instead.
//
// Speed: ~600-750 MB/s of output on the corpus 04/09 files (one idle core).
#ifndef HLOVERLAP_HLO_PRINTER_H_
#define HLOVERLAP_HLO_PRINTER_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "hlo/module.h"

namespace hloverlap {

struct PrintOptions {
  bool print_metadata = true;
  bool print_backend_config = true;
  // Print constants with more than this many elements as {...}; -1 = never.
  int64_t elide_constants_above = -1;
};

std::string PrintModule(const Module& module, const PrintOptions& options = {});
void AppendModule(const Module& module, std::string& out,
                  const PrintOptions& options = {});
// The same text handed to `sink` in pieces of about 256 KiB through one
// reused buffer, for writing a large module out without holding all of its
// text (and without the page faults of a buffer the size of the output).
// After `sink` returns false it is not called again; returns whether every
// call succeeded.
bool PrintModuleTo(const Module& module,
                   absl::FunctionRef<bool(std::string_view)> sink,
                   const PrintOptions& options = {});
void AppendComputation(const Computation& computation, std::string& out,
                       const PrintOptions& options = {});
// One instruction line without indentation or ROOT.
void AppendInstruction(const Instruction& instruction, std::string& out,
                       const PrintOptions& options = {});

// Appends a shape as printed in instruction lines ("bf16[4,8]{1,0}",
// "(s32[], /*...*/)"); print_layout=false gives the signature form.
void AppendShape(const Shape& shape, std::string& out,
                 bool print_layout = true);

// The order in which the printer emits the computation's instructions: the
// stored order when it is a topological order (every operand and control
// predecessor earlier), else a stable topological sort of it.
std::vector<const Instruction*> PrintOrder(const Computation& computation);

// C-escapes a string as XLA does (\n \t \" \\, octal for non-printable and
// non-ASCII bytes) and appends it with surrounding double quotes.
void AppendQuotedString(std::string_view s, std::string& out);

}  // namespace hloverlap

#endif  // HLOVERLAP_HLO_PRINTER_H_
