// The semantic fuzzer's oracle (see oracle.h).
#include "fuzz/oracle.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "analysis/while_loop_analysis.h"
#include "fuzz/mutator.h"
#include "hlo/parser.h"
#include "hlo/printer.h"
#include "hlo/verifier.h"
#include "interp/compare.h"
#include "interp/evaluator.h"
#include "interp/random_inputs.h"
#include "passes/loop_policy.h"
#include "passes/pass.h"
#include "sim/simulator.h"
#include "tools/cli_util.h"

namespace hloverlap::fuzz {
namespace {

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
      .count();
}

// What `hloverlap opt` reports with exit 2 rather than 3.
bool IsUserError(const absl::Status& s) {
  return ExitCodeForStatus(s) == kExitUserError;
}

Outcome Finding(std::string cls, std::string message) {
  Outcome o;
  o.kind = Outcome::Kind::kFinding;
  o.finding_class = std::move(cls);
  o.message = std::move(message);
  return o;
}

std::string FirstLine(absl::string_view s, size_t max = 300) {
  absl::string_view line = s.substr(0, s.find('\n'));
  return std::string(line.substr(0, max));
}

}  // namespace

std::string Variant::CommandLine() const {
  std::vector<std::string> words;
  if (!preset.empty()) words.push_back(absl::StrCat("--preset=", preset));
  if (!passes.empty()) words.push_back(absl::StrCat("--passes=", passes));
  for (const std::string& r : loop_rules) {
    words.push_back(absl::StrCat("--loop=", r));
  }
  return absl::StrJoin(words, " ");
}

absl::StatusOr<Variant> ParseVariant(std::string_view text) {
  Variant v;
  for (absl::string_view word :
       absl::StrSplit(absl::string_view(text.data(), text.size()), ' ',
                      absl::SkipEmpty())) {
    if (absl::ConsumePrefix(&word, "--preset=")) {
      v.preset = std::string(word);
    } else if (absl::ConsumePrefix(&word, "--passes=")) {
      v.passes = std::string(word);
    } else if (absl::ConsumePrefix(&word, "--loop=")) {
      v.loop_rules.emplace_back(word);
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("variant: expected --preset=, --passes= or --loop=, "
                       "got '",
                       word, "'"));
    }
  }
  if (v.preset.empty() == v.passes.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "variant '", std::string(text), "': give one --preset or --passes"));
  }
  return v;
}

std::vector<Variant> DefaultVariants() {
  std::vector<Variant> out;
  for (const std::string& p : KnownPresets()) out.push_back({p, "", {}});
  out.push_back({"xla-gpu", "", {"all:pipeline=depth=2"}});
  out.push_back({"xla-gpu", "", {"all:double-buffer=on"}});
  out.push_back({"xla-gpu", "", {"all:pipeline=sink"}});
  out.push_back({"", "double-buffer", {"all:double-buffer=on"}});
  // Each loop pass twice, on its own output, then async and scheduling.
  out.push_back({"",
                 "collective-pipeliner,double-buffer,collective-pipeliner,"
                 "double-buffer,async-collectives,latency-hiding-scheduler",
                 {}});
  return out;
}

absl::StatusOr<std::unique_ptr<Module>> ParseAndVerify(
    std::string_view text, std::string_view filename) {
  ParseOptions po;
  po.filename = std::string(filename);
  po.max_elements = int64_t{1} << 24;
  absl::StatusOr<std::unique_ptr<Module>> m = ParseHloModule(text, po);
  if (!m.ok()) return m.status();
  if (absl::Status s = VerifyModule(**m); !s.ok()) return s;
  return m;
}

std::vector<std::string> TripCountMismatches(const Module& module) {
  std::vector<std::string> out;
  for (const auto& comp : module.computations()) {
    if (comp->IsFusionComputation()) continue;
    for (const auto& i : comp->instructions()) {
      if (i->opcode() != Opcode::kWhile) continue;
      std::optional<int64_t> exact = ExactTripCount(*i);
      if (!exact) continue;
      WhileLoopInfo info = AnalyzeWhileLoop(*i);
      if (info.trip_count && *info.trip_count != *exact) {
        out.push_back(absl::StrCat(
            "loop ", i->name(), ": analysis ", *info.trip_count,
            info.trip_count_source == TripCountSource::kKnownTripCount
                ? " (known_trip_count)"
                : "",
            ", exact ", *exact));
      }
    }
  }
  return out;
}

Execution Execute(const Module& module, const OracleOptions& options) {
  Execution e;
  const auto t0 = std::chrono::steady_clock::now();
  interp::InterpreterOptions io;
  io.num_devices = options.devices;
  io.max_parallel_devices = 1;  // the fuzzer runs mutants in parallel
  io.memory_limit_bytes = options.memory_limit_bytes;
  io.max_iterations = options.max_iterations;
  io.fill_seed = options.input_seed;
  auto fail = [&](const absl::Status& s) {
    e.error = FirstLine(s.message());
    // The interpreter's work limits (iterations, time) are ResourceExhausted
    // like its memory limit; they name what they counted.
    const bool work_limit = absl::StrContains(s.message(), "iterations") ||
                            absl::StrContains(s.message(), "time limit");
    e.kind = work_limit ? Execution::Kind::kIterationLimit
             : s.code() == absl::StatusCode::kResourceExhausted
                 ? Execution::Kind::kMemoryLimit
                 : Execution::Kind::kError;
    e.seconds = Since(t0);
    return e;
  };
  absl::StatusOr<std::unique_ptr<interp::Interpreter>> in =
      interp::Interpreter::Create(module, io);
  if (!in.ok()) return fail(in.status());
  interp::RandomInputOptions ro;
  ro.seed = options.input_seed;
  absl::StatusOr<std::vector<std::vector<interp::Value>>> inputs =
      interp::MakeRandomInputs(module, (*in)->num_devices(), ro);
  if (!inputs.ok()) return fail(inputs.status());
  const std::vector<PromisedParameter> promised =
      options.promised.has_value() ? *options.promised
                                   : PromisedEntryParameters(module);
  for (const PromisedParameter& p : promised) {
    absl::StatusOr<interp::Value> x =
        interp::Value::ScalarFromInt(p.type, p.value);
    if (!x.ok()) continue;
    for (std::vector<interp::Value>& device : *inputs) {
      if (p.parameter_number >= 0 &&
          p.parameter_number < static_cast<int64_t>(device.size())) {
        device[p.parameter_number] = *x;
      }
    }
  }
  absl::StatusOr<std::vector<interp::Value>> out = (*in)->Run(*inputs);
  if (!out.ok()) return fail(out.status());
  e.kind = Execution::Kind::kOk;
  e.outputs = *std::move(out);
  e.seconds = Since(t0);
  return e;
}

std::optional<Outcome> CheckSimulator(const Module& module) {
  absl::StatusOr<SimResult> r = Simulate(module, SimOptions{});
  if (!r.ok()) return Finding("sim-error", FirstLine(r.status().message()));
  if (!std::isfinite(r->step_time_us) || r->step_time_us < 0) {
    return Finding("sim-error",
                   absl::StrCat("step time ", r->step_time_us, " us"));
  }
  return std::nullopt;
}

Outcome CheckVariant(std::string_view mutant_text, const Variant& variant,
                     const Execution& reference, const OracleOptions& options,
                     const std::function<void(std::string_view)>& on_stage) {
  on_stage("opt");
  absl::StatusOr<std::unique_ptr<Module>> parsed =
      ParseAndVerify(mutant_text, "mutant.hlo");
  if (!parsed.ok()) {
    return Finding("unparsable-mutant", FirstLine(parsed.status().message()));
  }
  Module& module = **parsed;
  // The mutant's promises: the output runs on the inputs the mutant ran on.
  std::vector<PromisedParameter> promised = PromisedEntryParameters(module);
  // A loop whose count rests on a promise no input could be chosen to keep.
  std::string unkept;
  for (const auto& c : module.computations()) {
    for (const auto& i : c->instructions()) {
      if (i->opcode() != Opcode::kWhile || !unkept.empty()) continue;
      WhileLoopInfo info = AnalyzeWhileLoop(*i);
      if (info.unchecked.empty()) continue;
      const bool kept =
          info.start_parameter != nullptr && info.promised_start.has_value() &&
          std::any_of(promised.begin(), promised.end(), [&](const auto& p) {
            return p.parameter_number ==
                   info.start_parameter->parameter_number();
          });
      if (!kept) {
        unkept = absl::StrCat("loop ", i->name(), ": trip count ",
                              info.trip_count.value_or(0), " ",
                              info.TripCountOrigin());
      }
    }
  }
  absl::StatusOr<PassPipeline> pipeline = variant.preset.empty()
                                              ? BuildPipeline(variant.passes)
                                              : BuildPreset(variant.preset);
  if (!pipeline.ok()) {
    return Finding("bad-variant", FirstLine(pipeline.status().message()));
  }
  PassContext context;
  for (const std::string& rule : variant.loop_rules) {
    absl::StatusOr<LoopRule> r = ParseLoopRule(rule);
    if (!r.ok()) return Finding("bad-variant", FirstLine(r.status().message()));
    context.options.loop_rules.push_back(*std::move(r));
  }
  absl::StatusOr<bool> changed = pipeline->Run(module, context);
  if (!changed.ok()) {
    if (IsUserError(changed.status())) {
      Outcome o;
      o.kind = Outcome::Kind::kRefused;
      o.message = FirstLine(changed.status().message());
      return o;
    }
    return Finding("internal-error", FirstLine(changed.status().message()));
  }

  on_stage("check-output");
  if (absl::Status s = VerifyModule(module); !s.ok()) {
    return Finding("invalid-output",
                   absl::StrCat("the module does not verify after the "
                                "pipeline: ",
                                FirstLine(s.message())));
  }
  const std::string printed = PrintModule(module);
  if (printed == mutant_text) {
    Outcome o;
    o.kind = Outcome::Kind::kUnchanged;
    return o;
  }
  absl::StatusOr<std::unique_ptr<Module>> reparsed =
      ParseAndVerify(printed, "out.hlo");
  if (!reparsed.ok()) {
    return Finding("unparsable-output",
                   absl::StrCat("the printed output does not parse and "
                                "verify: ",
                                FirstLine(reparsed.status().message())));
  }

  on_stage("sim");
  if (std::optional<Outcome> sim = CheckSimulator(**reparsed)) return *sim;

  on_stage("run-output");
  // A rewrite may move iterations around (peeling, unrolling) but not add
  // many: twice the mutant's cap is the output's.
  OracleOptions output_options = options;
  output_options.max_iterations = 2 * options.max_iterations + 100;
  output_options.promised = promised;
  Execution got = Execute(**reparsed, output_options);
  switch (got.kind) {
    case Execution::Kind::kOk:
      break;
    case Execution::Kind::kMemoryLimit: {
      Outcome o;
      o.kind = Outcome::Kind::kRefused;
      o.message = absl::StrCat("output over the memory limit: ", got.error);
      return o;
    }
    case Execution::Kind::kIterationLimit:
      return Finding("output-nontermination",
                     absl::StrCat("the mutant terminates (", reference.seconds,
                                  " s), the output does not: ", got.error));
    case Execution::Kind::kError:
      return Finding("output-run-error", got.error);
  }
  if (got.outputs.size() != reference.outputs.size()) {
    return Finding("miscompile", "different device counts");
  }
  for (size_t d = 0; d < got.outputs.size(); ++d) {
    interp::ValueComparison c = interp::CompareValues(
        reference.outputs[d], got.outputs[d], interp::Tolerance{});
    if (!c.bit_identical) {
      return Finding(unkept.empty() ? "miscompile" : "unchecked-trip-count",
                     absl::StrCat("different: device ", d, ", ",
                                  c.first_difference.value_or("?"), "; ",
                                  c.differing_elements, " elements differ",
                                  unkept.empty() ? "" : "; ", unkept));
    }
  }
  return Outcome{};
}

}  // namespace hloverlap::fuzz
