// Where one `hloverlap` process spends its CPU time, phase by phase.
//
// For bench/cold_opt_bench.cc and anyone asking why a command is slow: with
// HLOVERLAP_PHASE_REPORT=FILE in the environment, the process records, at
// each phase mark, its CPU time so far (user and system, getrusage), its
// minor page faults and the bytes held in malloc blocks, and writes them to
// FILE when main returns, one mark per line:
//
//   start 1204 2011 131 70864
//   read 1310 2203 175 70864
//   parse 9012 4520 2310 6082336
//   ...
//
// (name, user µs, system µs, minor faults, heap bytes; all cumulative since
// the process started, so the "start" line is what exec, the dynamic loader
// and static initialisers cost). What follows the last mark (returning from
// main, exit) is the process total, as the parent sees it through wait4,
// minus that mark. Without the variable every call is a load and a branch.
#ifndef HLOVERLAP_TOOLS_PHASE_REPORT_H_
#define HLOVERLAP_TOOLS_PHASE_REPORT_H_

namespace hloverlap {

// Reads HLOVERLAP_PHASE_REPORT and records the "start" mark. Call first in
// main.
void StartPhaseReport();
// Records a mark named `phase` (a string literal: the pointer is kept).
void MarkPhase(const char* phase);
// Records the "end" mark and writes the report (if enabled). Call last in
// main.
void FinishPhaseReport();

}  // namespace hloverlap

#endif  // HLOVERLAP_TOOLS_PHASE_REPORT_H_
