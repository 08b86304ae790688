// The simulator's report: text (what `hloverlap sim` prints) and JSON
// (`--format=json`: step_time_ms, compute_ms, ..., one entry per collective
// by exposed time), and the total of XLA's memory_usage_report.txt that the
// liveness peak is compared with.
//
//   step time:                156.930 ms
//   compute:                  140.2 ms (89.3%), 1520 kernels
//   ...
//   collectives by exposed time:
//     name      kind        bytes  runs  time ms  exposed ms  loop / source
#ifndef HLOVERLAP_SIM_REPORT_H_
#define HLOVERLAP_SIM_REPORT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "sim/sim_types.h"

namespace hloverlap {

// The report: text (default) and JSON (`step_time_ms` etc.). `top` limits
// the collectives listed in text (0 = all).
std::string FormatSimText(const SimResult& result, int top = 20);
std::string FormatSimJson(const SimResult& result);

// "total bytes" of XLA's memory_usage_report.txt (`Total bytes: N`), or -1.
int64_t ParseMemoryReportTotalBytes(std::string_view report);

}  // namespace hloverlap

#endif  // HLOVERLAP_SIM_REPORT_H_
