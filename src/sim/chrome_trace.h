// The simulated timeline as a Chrome trace (chrome://tracing, Perfetto):
// "traceEvents" with one track (thread) per stream (compute, collective,
// async compute), loop and iteration slices enclosing their kernels, flow
// events from the compute stream where a collective is issued to the
// collective and from the collective to where it is waited for, and the
// compute that ran while it was in flight in the collective's args:
//
//   {"ph":"X","tid":2,"name":"ags","cat":"collective","ts":12.5,"dur":80,
//    "args":{"overlapped_compute_us":80,"overlapped_kernels":3,...}}
//
// Needs a result simulated with SimOptions::record_trace.
#ifndef HLOVERLAP_SIM_CHROME_TRACE_H_
#define HLOVERLAP_SIM_CHROME_TRACE_H_

#include <string>

#include "sim/sim_types.h"

namespace hloverlap {

std::string ChromeTraceJson(const SimResult& result);

}  // namespace hloverlap

#endif  // HLOVERLAP_SIM_CHROME_TRACE_H_
