// `hloverlap run` / `hloverlap verify` (see run_command.h).
#include "tools/run_command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/while_loop_analysis.h"
#include "hlo/absl_compat.h"
#include "hlo/computation.h"
#include "hlo/diagnostic.h"
#include "interp/compare.h"
#include "interp/evaluator.h"
#include "interp/input_file.h"
#include "interp/random_inputs.h"
#include "support/byte_size.h"
#include "tools/common_options.h"

namespace hloverlap {
namespace {

using interp::Interpreter;
using interp::InterpreterOptions;
using interp::RunStats;
using interp::Value;

struct Prepared {
  LoadedModule loaded;
  std::unique_ptr<Interpreter> interp;
};

absl::StatusOr<Prepared> Prepare(const std::string& path,
                                 const InterpCommandOptions& o) {
  LoadOptions load;
  load.verify = o.verify;
  absl::StatusOr<LoadedModule> loaded = LoadModule(path, load);
  if (!loaded.ok()) return loaded.status();
  absl::StatusOr<int64_t> limit = ParseMemoryLimit(o.memory_limit);
  if (!limit.ok()) return limit.status();
  InterpreterOptions opts;
  opts.num_devices = o.devices;
  opts.max_parallel_devices = o.threads;
  opts.fill_elided_constants = o.fill_elided_constants;
  opts.opaque_custom_calls = o.opaque_custom_calls;
  opts.fill_seed = o.seed;
  opts.memory_limit_bytes = *limit;
  opts.max_iterations = o.max_iterations;
  opts.time_limit_seconds = o.time_limit;
  absl::StatusOr<std::unique_ptr<Interpreter>> interp =
      Interpreter::Create(*loaded->module, opts);
  if (!interp.ok()) return LocateInFile(interp.status(), loaded->filename);
  Prepared p;
  p.loaded = *std::move(loaded);
  p.interp = *std::move(interp);
  return p;
}

// Random inputs break a known_trip_count that rests on an entry
// parameter (the start of a loop's counter, which the analysis cannot
// check): such a parameter gets a value that keeps the promise, on every
// device, with a note saying so.
void KeepTripCountPromises(const Module& module,
                           std::vector<std::vector<Value>>& inputs,
                           std::vector<std::string>& notes) {
  for (const PromisedParameter& p : PromisedEntryParameters(module)) {
    absl::StatusOr<Value> x = Value::ScalarFromInt(p.type, p.value);
    if (!x.ok()) continue;
    bool set = false;
    for (std::vector<Value>& device : inputs) {
      if (p.parameter_number < static_cast<int64_t>(device.size())) {
        device[p.parameter_number] = *x;
        set = true;
      }
    }
    if (set) notes.push_back(p.note);
  }
}

absl::StatusOr<std::vector<std::vector<Value>>> MakeInputs(
    const Prepared& p, const InterpCommandOptions& o,
    std::vector<std::string>& notes) {
  const Interpreter& interp = *p.interp;
  interp::RandomInputOptions ro;
  ro.seed = o.seed;
  ro.same_on_all_devices = o.same_inputs;
  ro.float_scale = o.input_scale;
  absl::StatusOr<std::vector<std::vector<Value>>> random =
      interp::MakeRandomInputs(interp.module(), interp.num_devices(), ro);
  if (!random.ok()) return LocateInFile(random.status(), p.loaded.filename);
  KeepTripCountPromises(interp.module(), *random, notes);
  if (o.inputs.empty()) return random;
  return interp::ReadInputFile(o.inputs, interp.module(), interp.num_devices(),
                               *random);
}

// The interpreters' notes, each once.
void PrintNotes(std::initializer_list<const Interpreter*> interps,
                std::vector<std::string> printed) {
  for (const std::string& n : printed) std::printf("note: %s\n", n.c_str());
  for (const Interpreter* i : interps) {
    for (const std::string& n : i->notes()) {
      if (std::find(printed.begin(), printed.end(), n) != printed.end()) {
        continue;
      }
      printed.push_back(n);
      std::printf("note: %s\n", n.c_str());
    }
  }
}

std::string TopologyString(const Interpreter& interp) {
  const interp::DeviceTopology& t = interp.topology();
  return absl::StrCat(
      t.num_devices(), " device", t.num_devices() == 1 ? "" : "s", " (",
      t.replica_count, " replica", t.replica_count == 1 ? "" : "s", " x ",
      t.num_partitions, " partition", t.num_partitions == 1 ? "" : "s", ")");
}

void AppendLeaves(const Value& v, const std::string& path,
                  std::vector<std::pair<std::string, Value>>& out) {
  if (v.is_tuple()) {
    for (int64_t i = 0; i < v.tuple_size(); ++i) {
      std::string sub =
          path.empty()
              ? absl::StrCat("{", i, "}")
              : absl::StrCat(path.substr(0, path.size() - 1), ",", i, "}");
      AppendLeaves(v.element(i), sub, out);
    }
    return;
  }
  out.emplace_back(path.empty() ? "{}" : path, v);
}

std::string DescribeOutput(const Value& v, int64_t print_values) {
  std::string s =
      absl::StrFormat("%s fnv1a=%016x", v.ShapeString(), interp::Fnv1a64(v));
  if (!v.is_array()) return s;
  s += " [";
  const int64_t n =
      std::min<int64_t>(v.element_count(), std::max<int64_t>(print_values, 0));
  for (int64_t i = 0; i < n; ++i) {
    if (i) s += ", ";
    interp::AppendElement(v, i, s);
  }
  if (n < v.element_count()) {
    absl::StrAppend(&s, n > 0 ? ", " : "", "... (", v.element_count(),
                    " elements)");
  }
  return s + "]";
}

double Seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
      .count();
}

// A limit on the work of one run ("Stop a run after this many <what> (0: no
// limit; default <default_value>)"): --max-iterations and --time-limit.
template <typename T>
void AddWorkLimitOption(CLI::App* cmd, std::string_view flag, T& value,
                        std::string_view what, T default_value) {
  cmd->add_option(std::string(flag), value,
                  absl::StrCat("Stop a run after this many ", AsAbsl(what),
                               " (0: no limit; default ", default_value, ")"))
      ->check(NonNegative());
}

void AddInterpOptions(CLI::App* cmd, InterpCommandOptions& o) {
  cmd->add_option("--devices", o.devices,
                  "Number of simulated devices (default: replica_count x "
                  "num_partitions of the module)");
  cmd->add_option("--seed", o.seed, "Seed of the random inputs (default 0)");
  cmd->add_option("--input-scale", o.input_scale,
                  "Random floating-point inputs are uniform in [-X, X) "
                  "(default 1; e.g. 0.015625 keeps a real model's "
                  "activations O(1))")
      ->check(Positive());
  cmd->add_option("--inputs", o.inputs,
                  "JSON file with input values (docs/INTERPRETER.md)");
  cmd->add_option(
      "--memory-limit", o.memory_limit,
      absl::StrCat("Refuse modules whose estimated memory exceeds this many "
                   "bytes ('unlimited'; default: half the physical memory; ",
                   AsAbsl(kByteSizeUnits), ")"));
  cmd->add_option("--threads", o.threads,
                  "Devices computing at the same time (default: all)");
  AddWorkLimitOption(cmd, "--max-iterations", o.max_iterations,
                     "while-loop iterations on a device, all loops together",
                     InterpreterOptions::kDefaultMaxIterations);
  AddWorkLimitOption(cmd, "--time-limit", o.time_limit,
                     "seconds of wall time, per module",
                     InterpreterOptions::kDefaultTimeLimitSeconds);
  cmd->add_flag("--fill-elided-constants", o.fill_elided_constants,
                "Fill elided constants {...} with deterministic values");
  cmd->add_flag("--opaque-custom-calls", o.opaque_custom_calls,
                "Run custom calls the interpreter does not know as a "
                "deterministic function of their operands (a note says so)");
  cmd->add_flag("--same-inputs", o.same_inputs,
                "Give every device the same random inputs");
  AddNoVerifyFlag(*cmd, o.verify, "Do not verify the input modules");
  cmd->add_option("--values", o.print_values,
                  "Values printed per output (default 4)");
}

}  // namespace

absl::StatusOr<int64_t> ParseMemoryLimit(const std::string& text) {
  if (text.empty()) return 0;
  if (text == "unlimited" || text == "none") return -1;
  absl::StatusOr<int64_t> bytes = ParseByteSize(text);
  if (!bytes.ok() || *bytes <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--memory-limit: expected a byte count like 8G, 512M or 1000000, got '",
        text, "' (", AsAbsl(kByteSizeUnits), ")"));
  }
  return bytes;
}

int RunRunCommand(const RunCommandOptions& options) {
  const InterpCommandOptions& o = options.interp;
  absl::StatusOr<Prepared> p = Prepare(options.input, o);
  if (!p.ok()) return ReportStatus(p.status());
  const Interpreter& interp = *p->interp;
  std::vector<std::string> input_notes;
  absl::StatusOr<std::vector<std::vector<Value>>> inputs =
      MakeInputs(*p, o, input_notes);
  if (!inputs.ok()) return ReportStatus(inputs.status());
  auto t0 = std::chrono::steady_clock::now();
  RunStats stats;
  absl::StatusOr<std::vector<Value>> out = interp.Run(*inputs, &stats);
  const double secs = Seconds(t0);
  if (!out.ok()) {
    return ReportStatus(LocateInFile(out.status(), p->loaded.filename));
  }
  std::printf(
      "module %s: %s, seed %llu%s\n", interp.module().name().c_str(),
      TopologyString(interp).c_str(), static_cast<unsigned long long>(o.seed),
      o.inputs.empty() ? "" : absl::StrCat(", inputs ", o.inputs).c_str());
  PrintNotes({&interp}, input_notes);
  std::printf(
      "ran in %.3f s: %lld instructions, %lld while iterations, "
      "%lld collectives per device\n",
      secs, static_cast<long long>(stats.instructions_executed),
      static_cast<long long>(stats.while_iterations),
      static_cast<long long>(stats.collectives_executed));
  for (size_t d = 0; d < out->size(); ++d) {
    std::printf("device %zu:\n", d);
    std::vector<std::pair<std::string, Value>> leaves;
    AppendLeaves((*out)[d], "", leaves);
    for (const auto& [path, v] : leaves) {
      std::printf("  output %s: %s\n", path.c_str(),
                  DescribeOutput(v, o.print_values).c_str());
    }
  }
  std::fflush(stdout);
  return kExitOk;
}

int RunVerifyCommand(const VerifyCommandOptions& options) {
  const InterpCommandOptions& o = options.interp;
  absl::StatusOr<interp::Tolerance> tol =
      interp::ParseTolerance(options.tolerance);
  if (!tol.ok()) return ReportStatus(tol.status());
  absl::StatusOr<Prepared> a = Prepare(options.a, o);
  if (!a.ok()) return ReportStatus(a.status());
  absl::StatusOr<Prepared> b = Prepare(options.b, o);
  if (!b.ok()) return ReportStatus(b.status());
  const Interpreter& ia = *a->interp;
  const Interpreter& ib = *b->interp;
  if (ia.topology().replica_count != ib.topology().replica_count ||
      ia.topology().num_partitions != ib.topology().num_partitions) {
    return ReportStatus(absl::InvalidArgumentError(absl::StrCat(
        "the modules run on different devices: ", a->loaded.filename, " on ",
        TopologyString(ia), ", ", b->loaded.filename, " on ",
        TopologyString(ib), " (use --devices)")));
  }
  const std::vector<Shape> pa = ia.ParameterShapes();
  const std::vector<Shape> pb = ib.ParameterShapes();
  if (pa.size() != pb.size()) {
    return ReportStatus(absl::InvalidArgumentError(absl::StrCat(
        "the modules have different parameters: ", a->loaded.filename, " has ",
        pa.size(), ", ", b->loaded.filename, " has ", pb.size())));
  }
  for (size_t i = 0; i < pa.size(); ++i) {
    if (!pa[i].Compatible(pb[i])) {
      return ReportStatus(absl::InvalidArgumentError(absl::StrCat(
          "the modules have different parameters: parameter ", i, " is ",
          pa[i].ToString(false), " in ", a->loaded.filename, " and ",
          pb[i].ToString(false), " in ", b->loaded.filename)));
    }
  }
  std::vector<std::string> input_notes;
  absl::StatusOr<std::vector<std::vector<Value>>> inputs =
      MakeInputs(*a, o, input_notes);
  if (!inputs.ok()) return ReportStatus(inputs.status());
  auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<Value>> ra = ia.Run(*inputs);
  const double sa = Seconds(t0);
  if (!ra.ok()) {
    return ReportStatus(LocateInFile(ra.status(), a->loaded.filename));
  }
  t0 = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<Value>> rb = ib.Run(*inputs);
  const double sb = Seconds(t0);
  if (!rb.ok()) {
    return ReportStatus(LocateInFile(rb.status(), b->loaded.filename));
  }
  std::printf("verify %s vs %s: %s, seed %llu\n", a->loaded.filename.c_str(),
              b->loaded.filename.c_str(), TopologyString(ia).c_str(),
              static_cast<unsigned long long>(o.seed));
  PrintNotes({&ia, &ib}, input_notes);
  std::printf("ran in %.3f s and %.3f s\n", sa, sb);
  int64_t outputs = 0, identical_devices = 0;
  bool all_identical = true, all_within = true;
  std::string first_problem;
  int64_t total_diff = 0;
  double max_ulps = 0, max_rel = 0;
  for (size_t d = 0; d < ra->size(); ++d) {
    std::vector<std::pair<std::string, Value>> la, lb;
    AppendLeaves((*ra)[d], "", la);
    AppendLeaves((*rb)[d], "", lb);
    outputs = static_cast<int64_t>(la.size());
    interp::ValueComparison c = interp::CompareValues((*ra)[d], (*rb)[d], *tol);
    total_diff += c.differing_elements;
    max_ulps = std::max(max_ulps, c.max_ulps);
    max_rel = std::max(max_rel, c.max_relative);
    if (c.bit_identical) ++identical_devices;
    all_identical &= c.bit_identical;
    all_within &= c.within_tolerance;
    if (first_problem.empty()) {
      if (!c.within_tolerance && c.first_violation) {
        first_problem = absl::StrCat("device ", d, ", ", *c.first_violation);
      } else if (!c.bit_identical && c.first_difference) {
        first_problem = absl::StrCat("device ", d, ", ", *c.first_difference);
      }
    }
  }
  if (all_identical) {
    std::printf(
        "identical: all %lld outputs are bit-identical on all %zu "
        "devices\n",
        static_cast<long long>(outputs), ra->size());
    return kExitOk;
  }
  std::string stats = absl::StrCat(total_diff, " elements differ (max ",
                                   max_ulps, " ulp, max relative ",
                                   absl::StrFormat("%.3g", max_rel), ")");
  if (all_within && tol->kind != interp::Tolerance::Kind::kExact) {
    // A relative difference above the bound passed only by the floor.
    const std::string by_floor =
        tol->kind == interp::Tolerance::Kind::kRelative && tol->absolute > 0 &&
                max_rel > tol->value
            ? absl::StrCat(
                  "; the elements above relative ",
                  absl::StrFormat("%g", tol->value),
                  " were accepted by the absolute floor (difference at most ",
                  absl::StrFormat("%g", tol->absolute), ")")
            : std::string();
    std::printf("within tolerance %s: %s%s; first: %s\n",
                tol->ToString().c_str(), stats.c_str(), by_floor.c_str(),
                first_problem.c_str());
    return kExitOk;
  }
  std::printf(
      "different: %s; %s%s\n", first_problem.c_str(), stats.c_str(),
      tol->kind == interp::Tolerance::Kind::kExact
          ? ""
          : absl::StrCat(", outside tolerance ", tol->ToString()).c_str());
  return kExitDifferent;
}

void RegisterRunCommand(CLI::App& app, CommandContext& ctx) {
  auto run = std::make_shared<RunCommandOptions>();
  CLI::App* rc = AddCommand(
      app, ctx, "run",
      "Run a (per-device) HLO module on simulated devices with seeded random "
      "inputs; print each output's shape, checksum and first values.",
      [run]() { return RunRunCommand(*run); });
  rc->add_option("input", run->input, "HLO module ('-' for stdin)")->required();
  AddInterpOptions(rc, run->interp);

  auto verify = std::make_shared<VerifyCommandOptions>();
  CLI::App* vc = AddCommand(
      app, ctx, "verify",
      "Run two HLO modules on the same inputs and check that every output "
      "is bit-identical (exit 0), or report the first difference (exit 1).",
      [verify]() { return RunVerifyCommand(*verify); });
  vc->add_option("a", verify->a, "First HLO module")->required();
  vc->add_option("b", verify->b, "Second HLO module")->required();
  vc->add_option("--tolerance", verify->tolerance,
                 "Accept float differences up to ulps:N or relative:X, "
                 "optionally with an absolute floor (relative:X,absolute:Y) "
                 "(default: bit-identical)");
  AddInterpOptions(vc, verify->interp);
}

}  // namespace hloverlap
