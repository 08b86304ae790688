// Checks of attributes hloverlap keeps verbatim (raw text it prints back
// unchanged), so that what XLA's parser refuses is refused here too, with
// the position of the fault, instead of being printed back for XLA to
// refuse later:
//
//   input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {1}) }
//   buffer_donor={ (0, {}), (1, {1}) }
//   api_version=API_VERSION_STATUS_RETURNING        (custom-call)
//   result_accuracy={mode=highest}
//   result_accuracy={tolerance={atol=1e-5,rtol=0,ulps=1}}
//
// Each check takes the attribute's value as written and returns nothing
// when XLA's parser accepts it, else the offset of the fault in `value` and
// a message.
#ifndef HLOVERLAP_HLO_RAW_ATTRIBUTE_CHECK_H_
#define HLOVERLAP_HLO_RAW_ATTRIBUTE_CHECK_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hloverlap {

struct RawAttributeError {
  size_t offset;  // into the value
  std::string message;
};

// One entry of an alias or donor list (donors have no output index).
struct AliasEntry {
  size_t offset;  // of the entry in the value
  std::vector<int64_t> output_index;
  int64_t parameter = 0;
  std::vector<int64_t> parameter_index;
};

// `{ <output index>: (<parameter>, <parameter index>[, may-alias|
// must-alias]), ... }` (a trailing comma allowed, as XLA allows it); the
// entries go to `entries` when given.
std::optional<RawAttributeError> CheckInputOutputAlias(
    std::string_view value, std::vector<AliasEntry>* entries = nullptr);
// `{ (<parameter>, <parameter index>), ... }`.
std::optional<RawAttributeError> CheckBufferDonor(
    std::string_view value, std::vector<AliasEntry>* entries = nullptr);
// One of XLA's CustomCallApiVersion names (any letter case) other than
// API_VERSION_UNSPECIFIED, which XLA's parser refuses on a custom call.
std::optional<RawAttributeError> CheckCustomCallApiVersion(
    std::string_view value);
// `{mode=default|highest}` or `{tolerance={atol=X,rtol=Y,ulps=N}}` (each
// tolerance field optional, none negative).
std::optional<RawAttributeError> CheckResultAccuracy(std::string_view value);

}  // namespace hloverlap

#endif  // HLOVERLAP_HLO_RAW_ATTRIBUTE_CHECK_H_
