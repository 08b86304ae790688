// Input files for `hloverlap run --inputs=FILE` (JSON).
//
//   {
//     "parameters": [
//       [1, 2, 3, 4],                      // parameter 0: same on all devices
//       2.5,                                // parameter 1: every element 2.5
//       {"per_device": [[1, 2], [3, 4]]},   // parameter 2: one per device
//       {"raw_file": "p3.bin"},             // parameter 3: raw bytes
//       null,                               // parameter 4: seeded random
//       {"tuple": [[1], {"random": true}]}  // parameter 5: a tuple
//     ]
//   }
//
// Shapes and element types come from the module's entry parameters; a list
// gives every element in row-major order (its length must equal the
// element count; nested lists are flattened), a number fills the array.
// Numbers convert like `convert` from f64 (integers exactly when they fit);
// "nan", "inf", "-inf" strings and true/false are accepted. A raw file holds
// the array's bytes as the interpreter stores them (row-major, little
// endian, bf16/f16 as 16-bit patterns, pred as one byte), its path relative
// to the JSON file. `null` or {"random": true} uses the random input of
// random_inputs.h for that parameter (same seed as without --inputs).
// Missing trailing parameters are random too.
#ifndef HLOVERLAP_INTERP_INPUT_FILE_H_
#define HLOVERLAP_INTERP_INPUT_FILE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/module.h"
#include "interp/random_inputs.h"
#include "interp/value.h"

namespace hloverlap::interp {

// `random` holds the random inputs [device][parameter] used for parameters
// the file leaves random; the result has the same layout.
absl::StatusOr<std::vector<std::vector<Value>>> ParseInputs(
    std::string_view json_text, const Module& module, int64_t num_devices,
    const std::vector<std::vector<Value>>& random,
    const std::string& base_dir = ".");

absl::StatusOr<std::vector<std::vector<Value>>> ReadInputFile(
    const std::string& path, const Module& module, int64_t num_devices,
    const std::vector<std::vector<Value>>& random);

}  // namespace hloverlap::interp

#endif  // HLOVERLAP_INTERP_INPUT_FILE_H_
