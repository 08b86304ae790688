// Liveness peak memory (see the header).
#include "sim/liveness.h"

namespace hloverlap {

PeakMemory ComputePeakMemory(const Module& module) {
  return ModulePeakMemory(module);
}

}  // namespace hloverlap
