// XLA flags mapped onto hloverlap's options (see xla_flags.h).
#include "tools/xla_flags.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "hlo/absl_compat.h"
#include "passes/loop_policy.h"
#include "passes/pass_registry.h"
#include "tools/cli_util.h"

namespace hloverlap {
namespace {

bool IsFlagNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ||
         c == '.';
}

// Printable form of a word for messages (control bytes escaped, long words
// cut).
std::string Quote(std::string_view word) {
  std::string out;
  for (char c : word.substr(0, 120)) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      absl::StrAppend(&out, "\\x", absl::Hex(u, absl::kZeroPad2));
    } else {
      out.push_back(c);
    }
  }
  if (word.size() > 120) out += "...";
  return absl::StrCat("'", out, "'");
}

std::optional<bool> ParseBool(const XlaFlag& flag) {
  if (!flag.has_value) return true;  // bare --flag
  std::string v = absl::AsciiStrToLower(flag.value);
  if (v == "true" || v == "1" || v == "yes" || v == "on") return true;
  if (v == "false" || v == "0" || v == "no" || v == "off") return false;
  return std::nullopt;
}

// Flags of XLA that hloverlap recognizes but does not act on (by name
// prefix), with why.
struct IgnoredXlaFlag {
  std::string_view prefix;
  std::string_view why;
};
constexpr IgnoredXlaFlag kIgnoredXlaFlags[] = {
    {"xla_gpu_collective_permute_decomposer",
     "hloverlap does not decompose or pipeline collective-permutes"},
    {"xla_gpu_enable_pipelined_p2p", "hloverlap does not pipeline send/recv"},
    {"xla_gpu_enable_highest_priority_async_stream",
     "a runtime stream setting"},
    {"xla_gpu_run_post_layout_collective_pipeliner",
     "hloverlap pipelines the module it is given"},
    {"xla_gpu_enable_while_loop_reduce_scatter_code_motion",
     "hloverlap does not move accumulated reduce-scatters out of loops; "
     "the nearest is --loop=SELECTOR:pipeline=sink"},
    {"xla_gpu_enable_analytical_latency_estimator",
     "hloverlap's scheduler always uses its analytical GPU model (--gpu)"},
    {"xla_gpu_enable_analytical_sol_latency_estimator",
     "hloverlap's scheduler always uses its analytical GPU model (--gpu)"},
    {"xla_gpu_analytical_latency_estimator_options",
     "hloverlap's model constants come from sim --gpu-spec, not flags"},
    {"xla_gpu_pgle_profile_file_or_directory_path",
     "hloverlap's scheduler has no profile-guided latencies"},
    {"xla_gpu_enable_all_gather_combine_by_dim",
     "hloverlap does not combine collectives"},
    {"xla_gpu_enable_reduce_scatter_combine_by_dim",
     "hloverlap does not combine collectives"},
    {"xla_gpu_all_gather_combine_threshold_bytes",
     "hloverlap does not combine collectives"},
    {"xla_gpu_reduce_scatter_combine_threshold_bytes",
     "hloverlap does not combine collectives"},
    {"xla_gpu_all_reduce_combine_threshold_bytes",
     "hloverlap does not combine collectives"},
    {"xla_gpu_collective_permute_combine_threshold_bytes",
     "hloverlap does not combine collectives"},
    {"xla_gpu_graph_level", "a runtime (CUDA graph) setting"},
    {"xla_gpu_enable_command_buffer", "a runtime (command buffer) setting"},
    {"xla_gpu_enable_triton_gemm", "a code generation setting"},
    {"xla_dump", "hloverlap writes what -o and --dump-after say"},
};

std::string_view KnownButIgnored(std::string_view name) {
  for (const IgnoredXlaFlag& e : kIgnoredXlaFlags) {
    if (name.substr(0, e.prefix.size()) == e.prefix) return e.why;
  }
  return {};
}

// XLA's DebugOptions::CollectiveOpType names (case-insensitive) and the
// opcodes hloverlap's async conversion would make asynchronous.
struct CollectiveTypeName {
  std::string_view name;
  std::vector<Opcode> ops;
};

const std::vector<CollectiveTypeName>& CollectiveTypeNames() {
  static const auto* names = new std::vector<CollectiveTypeName>{
      {"NOOP", {}},
      {"ALLREDUCE", {Opcode::kAllReduce}},
      {"ALLGATHER", {Opcode::kAllGather}},
      {"REDUCESCATTER", {Opcode::kReduceScatter}},
      {"COLLECTIVEBROADCAST", {Opcode::kCollectiveBroadcast}},
      {"ALLTOALL", {Opcode::kAllToAll}},
      {"COLLECTIVEPERMUTE", {Opcode::kCollectivePermute}},
      {"RAGGEDALLTOALL", {Opcode::kRaggedAllToAll}},
      {"ALLCOLLECTIVES",
       {Opcode::kAllReduce, Opcode::kAllGather, Opcode::kReduceScatter,
        Opcode::kCollectiveBroadcast, Opcode::kAllToAll,
        Opcode::kCollectivePermute, Opcode::kRaggedAllToAll}},
  };
  return *names;
}

// Keeps `op` synchronous (flag names the reason) or makes it async again.
void SetSynchronous(PassOptions& options, Opcode op, bool sync,
                    const std::string& flag) {
  auto& list = options.synchronous_collectives;
  for (auto it = list.begin(); it != list.end(); ++it) {
    if (it->first == op) {
      list.erase(it);
      break;
    }
  }
  if (sync) list.emplace_back(op, flag);
}

std::optional<int64_t> ParseInt(const XlaFlag& flag) {
  int64_t v = 0;
  if (!flag.has_value || !absl::SimpleAtoi(flag.value, &v)) return std::nullopt;
  return v;
}

}  // namespace

absl::StatusOr<std::vector<XlaFlag>> SplitXlaFlags(std::string_view text,
                                                   std::string_view origin) {
  std::vector<XlaFlag> flags;
  size_t i = 0;
  const size_t n = text.size();
  while (i < n) {
    if (std::isspace(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    // One word, with quoted parts.
    size_t start = i;
    std::string word;
    while (i < n && !std::isspace(static_cast<unsigned char>(text[i]))) {
      char c = text[i];
      if (c == '\'' || c == '"') {
        size_t close = text.find(c, i + 1);
        if (close == std::string_view::npos) {
          return absl::InvalidArgumentError(
              absl::StrCat(AsAbsl(origin), ": unterminated ", std::string(1, c),
                           " quote in ", Quote(text.substr(start))));
        }
        word.append(text.substr(i + 1, close - i - 1));
        i = close + 1;
        continue;
      }
      word.push_back(c);
      ++i;
    }
    std::string_view raw = text.substr(start, i - start);
    std::string_view w = word;
    size_t dashes =
        w.substr(0, 2) == "--" ? 2 : (w.substr(0, 1) == "-" ? 1 : 0);
    if (dashes == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(AsAbsl(origin), ": ", Quote(raw),
                       " is not a flag (expected --name=value, e.g. "
                       "--xla_gpu_enable_pipelined_all_gather=true)"));
    }
    w.remove_prefix(dashes);
    size_t eq = w.find('=');
    XlaFlag flag;
    flag.name = std::string(w.substr(0, eq));
    flag.has_value = eq != std::string_view::npos;
    if (flag.has_value) flag.value = std::string(w.substr(eq + 1));
    flag.text = std::string(raw);
    if (flag.name.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(AsAbsl(origin), ": ", Quote(raw), " has no flag name"));
    }
    for (char c : flag.name) {
      if (!IsFlagNameChar(c)) {
        return absl::InvalidArgumentError(
            absl::StrCat(AsAbsl(origin), ": ", Quote(raw),
                         " is not a valid flag name (letters, digits, '_')"));
      }
    }
    flags.push_back(std::move(flag));
  }
  return flags;
}

namespace {

// One flag being applied: where it came from, and what applying it records.
class FlagApplication {
 public:
  FlagApplication(const XlaFlag& flag, std::string_view origin,
                  PassOptions& options, XlaFlagsResult& result)
      : flag_(flag),
        origin_(origin),
        where_(absl::StrCat(AsAbsl(origin), ": ", flag.text)),
        options_(options),
        result_(result) {}

  const XlaFlag& flag() const { return flag_; }
  const std::string& where() const { return where_; }
  PassOptions& options() { return options_; }
  XlaFlagsResult& result() { return result_; }

  // "ORIGIN: --flag=v: WHAT" as a note.
  void Applied(std::string_view what) {
    result_.applied.push_back(absl::StrCat(where_, ": ", AsAbsl(what)));
    result_.lines.push_back(absl::StrCat("note: ", where_, ": ", AsAbsl(what)));
  }
  // "ORIGIN: --flag=v MESSAGE" as a warning.
  void Warn(std::string_view message) {
    std::string w = absl::StrCat(where_, AsAbsl(message));
    result_.lines.push_back(absl::StrCat("warning: ", w));
    result_.warnings.push_back(std::move(w));
  }
  void Ignored(std::string_view why) {
    Warn(absl::StrCat(" ignored (", AsAbsl(why), ")"));
  }
  void SwitchPass(std::string_view pass, bool on) {
    result_.passes[std::string(pass)] = {on, where_};
  }
  // Records that `field` of the options was set by this flag.
  void SetSource(std::string_view field) {
    options_.option_sources[std::string(field)] = where_;
  }
  // InvalidArgument "ORIGIN: 'TEXT': EXPECTED".
  absl::Status Invalid(std::string_view expected) const {
    return absl::InvalidArgumentError(absl::StrCat(
        AsAbsl(origin_), ": ", Quote(flag_.text), ": ", AsAbsl(expected)));
  }
  // The flag's boolean value, or Invalid.
  absl::StatusOr<bool> Bool() const {
    std::optional<bool> b = ParseBool(flag_);
    if (!b) return Invalid("expected a boolean value (true or false)");
    return *b;
  }

 private:
  const XlaFlag& flag_;
  std::string_view origin_;
  std::string where_;
  PassOptions& options_;
  XlaFlagsResult& result_;
};

// A collective kind XLA's pipeliner can pipeline, with its two flags.
struct PipelinedKind {
  std::string_view enable_name;  // xla_gpu_enable_pipelined_<kind>
  std::string_view mode_name;    // xla_gpu_pipeline_<kind>
  bool PassOptions::*field;
  std::string_view field_name;
  std::string_view what;
};
constexpr PipelinedKind kPipelinedKinds[] = {
    {"xla_gpu_enable_pipelined_all_gather", "xla_gpu_pipeline_all_gather",
     &PassOptions::pipeline_all_gather, "pipeline_all_gather",
     "all-gather prefetch"},
    {"xla_gpu_enable_pipelined_reduce_scatter",
     "xla_gpu_pipeline_reduce_scatter", &PassOptions::pipeline_reduce_scatter,
     "pipeline_reduce_scatter", "reduce-scatter pipelining"},
    {"xla_gpu_enable_pipelined_all_reduce", "xla_gpu_pipeline_all_reduce",
     &PassOptions::pipeline_all_reduce, "pipeline_all_reduce",
     "all-reduce pipelining"},
};

void SetPipelinedKind(FlagApplication& a, const PipelinedKind& k, bool on) {
  a.options().*k.field = on;
  a.SetSource(k.field_name);
  if (on) {
    a.result().pipelining_requested = true;
    a.SwitchPass("collective-pipeliner", true);
  }
}

absl::Status ApplyEnablePipelined(FlagApplication& a, const PipelinedKind& k) {
  absl::StatusOr<bool> b = a.Bool();
  if (!b.ok()) return b.status();
  SetPipelinedKind(a, k, *b);
  a.Applied(absl::StrCat(AsAbsl(k.what), *b ? " on" : " off"));
  return absl::OkStatus();
}

absl::Status ApplyPipelineMode(FlagApplication& a, const PipelinedKind& k) {
  const std::string v = absl::AsciiStrToLower(a.flag().value);
  if (v == "on" || v == "true" || v == "default") {
    SetPipelinedKind(a, k, true);
    a.Applied(absl::StrCat(AsAbsl(k.what), " on"));
  } else if (v == "off" || v == "false") {
    SetPipelinedKind(a, k, false);
    a.Applied(absl::StrCat(AsAbsl(k.what), " off"));
  } else if (v == "explicit") {
    SetPipelinedKind(a, k, true);
    a.Warn(absl::StrCat(
        ": 'explicit' (only collectives tagged is_pipelineable) is not "
        "supported; ",
        AsAbsl(k.what),
        " is on for every loop (use --loop= or _hloverlap_pipeline to choose "
        "loops)"));
  } else {
    return a.Invalid("expected on, off, explicit or default");
  }
  return absl::OkStatus();
}

absl::Status ApplyPipelinedCollectives(FlagApplication& a) {
  // XLA ORs this with the per-kind flags: true turns all three on, false
  // changes nothing.
  absl::StatusOr<bool> b = a.Bool();
  if (!b.ok()) return b.status();
  if (*b) {
    for (const PipelinedKind& k : kPipelinedKinds) SetPipelinedKind(a, k, true);
    a.Applied("all-gather, reduce-scatter and all-reduce pipelining on");
  } else {
    a.Applied(
        "no effect (as in XLA, false leaves the per-collective flags in "
        "charge)");
  }
  return absl::OkStatus();
}

void SetDoubleBufferDefault(FlagApplication& a, bool on) {
  a.options().double_buffer_default = on;
  a.SetSource("double_buffer_default");
  if (on) a.SwitchPass("double-buffer", true);
}

absl::Status ApplyDoubleBuffering(FlagApplication& a) {
  absl::StatusOr<bool> b = a.Bool();
  if (!b.ok()) return b.status();
  SetDoubleBufferDefault(a, *b);
  a.Applied(absl::StrCat("double buffering ", *b ? "on" : "off",
                         " by default (innermost loops with collectives)"));
  return absl::OkStatus();
}

absl::Status ApplyLoopUnrolling(FlagApplication& a) {
  const std::string v = absl::AsciiStrToUpper(a.flag().value);
  if (v == "WHILE_LOOP_UNROLLING_NO_UNROLL") {
    SetDoubleBufferDefault(a, false);
    a.Applied("double buffering off by default");
  } else if (v == "WHILE_LOOP_UNROLLING_DOUBLE_BUFFER" ||
             v == "WHILE_LOOP_UNROLLING_AUTO_UNROLL") {
    SetDoubleBufferDefault(a, true);
    a.Applied("double buffering on by default");
  } else if (v == "WHILE_LOOP_UNROLLING_FULL_UNROLL" ||
             v == "WHILE_LOOP_UNROLLING_MANUAL_UNROLL") {
    a.Ignored(
        "hloverlap does not unroll loops fully; per-loop control: --loop= or "
        "_hloverlap_double_buffer");
  } else {
    return a.Invalid(
        "expected WHILE_LOOP_UNROLLING_NO_UNROLL, _DOUBLE_BUFFER, "
        "_AUTO_UNROLL, _FULL_UNROLL or _MANUAL_UNROLL");
  }
  return absl::OkStatus();
}

absl::Status ApplyLatencyHidingScheduler(FlagApplication& a) {
  absl::StatusOr<bool> b = a.Bool();
  if (!b.ok()) return b.status();
  a.SwitchPass("latency-hiding-scheduler", *b);
  // XLA always converts collectives to async pairs; the scheduler needs
  // them.
  if (*b) a.SwitchPass("async-collectives", true);
  a.Applied(*b ? "latency-hiding scheduler on (after async conversion)"
               : "latency-hiding scheduler off");
  return absl::OkStatus();
}

absl::Status ApplyDisableAsyncCollectives(FlagApplication& a) {
  // A comma-separated list of CollectiveOpType names; it replaces the
  // previous list, as in XLA.
  std::vector<Opcode> ops;
  std::vector<std::string> kinds;
  for (absl::string_view raw :
       absl::StrSplit(AsAbsl(a.flag().value), ',', absl::SkipWhitespace())) {
    const std::string token = absl::AsciiStrToUpper(raw);
    const CollectiveTypeName* found = nullptr;
    for (const CollectiveTypeName& c : CollectiveTypeNames()) {
      if (c.name == token) found = &c;
    }
    if (found == nullptr) {
      std::vector<std::string> known;
      for (const CollectiveTypeName& c : CollectiveTypeNames()) {
        known.push_back(absl::AsciiStrToLower(AsAbsl(c.name)));
      }
      return a.Invalid(absl::StrCat("unknown collective '", std::string(raw),
                                    "' (known: ", absl::StrJoin(known, ", "),
                                    ")"));
    }
    for (Opcode op : found->ops) {
      ops.push_back(op);
      kinds.emplace_back(OpcodeName(op));
    }
  }
  a.options().synchronous_collectives.clear();
  for (Opcode op : ops) SetSynchronous(a.options(), op, true, a.where());
  a.Applied(kinds.empty()
                ? std::string("every collective kind may be async")
                : absl::StrCat("async conversion leaves ",
                               absl::StrJoin(kinds, ", "), " synchronous"));
  return absl::OkStatus();
}

// Older XLA (before 2024): one switch per kind.
absl::Status ApplyEnableAsyncKind(FlagApplication& a, Opcode op) {
  absl::StatusOr<bool> b = a.Bool();
  if (!b.ok()) return b.status();
  SetSynchronous(a.options(), op, !*b, a.where());
  if (*b) a.SwitchPass("async-collectives", true);
  a.Applied(absl::StrCat(AsAbsl(OpcodeName(op)),
                         *b ? " async" : " left synchronous"));
  return absl::OkStatus();
}

absl::Status ApplyEnableAsyncCollectives(FlagApplication& a) {
  absl::StatusOr<bool> b = a.Bool();
  if (!b.ok()) return b.status();
  for (Opcode op : CollectiveTypeNames().back().ops) {
    SetSynchronous(a.options(), op, !*b, a.where());
  }
  if (*b) a.SwitchPass("async-collectives", true);
  a.Applied(*b ? "every collective kind async"
               : "async conversion leaves every collective synchronous");
  return absl::OkStatus();
}

absl::Status ApplyOverlapLimit(FlagApplication& a) {
  std::optional<int64_t> v = ParseInt(a.flag());
  if (!v || *v < 1 || *v > 8)
    return a.Invalid("expected an integer from 1 to 8");
  a.options().collective_in_flight_limit = static_cast<int>(*v);
  a.Applied(absl::StrCat("scheduler: ", *v,
                         " async collective(s) in flight at once"));
  return absl::OkStatus();
}

absl::Status ApplyMemorySlop(FlagApplication& a) {
  std::optional<int64_t> v = ParseInt(a.flag());
  if (!v || *v < 0 || *v > 1000) {
    return a.Invalid("expected a percentage (an integer from 0 to 1000)");
  }
  a.options().scheduler_memory_slop_percent = static_cast<int>(*v);
  a.Applied(absl::StrCat(
      "scheduler memory limit (0.8 x GPU memory - parameters and outputs) x ",
      *v, "%"));
  return absl::OkStatus();
}

// Value spellings, for --list-xla-flags (ParseBool's and the modes').
constexpr std::string_view kBoolValues = "true|false (or 1|0, yes|no, on|off)";
const std::vector<std::string>& BoolTrueValues() {
  static const auto* values =
      new std::vector<std::string>{"", "true", "1", "yes", "on"};
  return *values;
}

// The table: every flag hloverlap acts on, in the order of xla_flags.h.
struct XlaFlagHandler {
  std::string name;
  std::string pass;    // the pass it concerns
  std::string values;  // the values it takes, for people
  // The values (lower case; "" for the bare flag) that turn a collective
  // pipelining on; empty for the other flags.
  std::vector<std::string> pipelining_values;
  std::function<absl::Status(FlagApplication&)> apply;
};

const std::vector<XlaFlagHandler>& XlaFlagHandlers() {
  static const auto* table = [] {
    auto* t = new std::vector<XlaFlagHandler>();
    constexpr std::string_view kPipeliner = "collective-pipeliner";
    for (const PipelinedKind& k : kPipelinedKinds) {
      t->push_back(
          {std::string(k.enable_name), std::string(kPipeliner),
           std::string(kBoolValues), BoolTrueValues(),
           [&k](FlagApplication& a) { return ApplyEnablePipelined(a, k); }});
    }
    t->push_back({"xla_gpu_enable_pipelined_collectives",
                  std::string(kPipeliner), std::string(kBoolValues),
                  BoolTrueValues(), ApplyPipelinedCollectives});
    for (const PipelinedKind& k : kPipelinedKinds) {
      t->push_back(
          {std::string(k.mode_name),
           std::string(kPipeliner),
           "on|off|explicit|default",
           {"on", "true", "default", "explicit"},
           [&k](FlagApplication& a) { return ApplyPipelineMode(a, k); }});
    }
    t->push_back({"xla_gpu_enable_while_loop_double_buffering",
                  "double-buffer",
                  std::string(kBoolValues),
                  {},
                  ApplyDoubleBuffering});
    t->push_back({"xla_gpu_enable_while_loop_unrolling",
                  "double-buffer",
                  "WHILE_LOOP_UNROLLING_{NO_UNROLL,DOUBLE_BUFFER,AUTO_UNROLL,"
                  "FULL_UNROLL,MANUAL_UNROLL}",
                  {},
                  ApplyLoopUnrolling});
    t->push_back({"xla_gpu_disable_async_collectives",
                  "async-collectives",
                  "comma-separated CollectiveOpType names",
                  {},
                  ApplyDisableAsyncCollectives});
    static constexpr std::pair<std::string_view, Opcode> kAsyncKinds[] = {
        {"xla_gpu_enable_async_all_reduce", Opcode::kAllReduce},
        {"xla_gpu_enable_async_all_gather", Opcode::kAllGather},
        {"xla_gpu_enable_async_reduce_scatter", Opcode::kReduceScatter},
        {"xla_gpu_enable_async_all_to_all", Opcode::kAllToAll},
        {"xla_gpu_enable_async_collective_permute", Opcode::kCollectivePermute},
        {"xla_gpu_enable_async_collective_broadcast",
         Opcode::kCollectiveBroadcast},
    };
    for (const auto& [name, op] : kAsyncKinds) {
      const Opcode kind = op;
      t->push_back({std::string(name),
                    "async-collectives",
                    std::string(kBoolValues),
                    {},
                    [kind](FlagApplication& a) {
                      return ApplyEnableAsyncKind(a, kind);
                    }});
    }
    t->push_back({"xla_gpu_enable_async_collectives",
                  "async-collectives",
                  std::string(kBoolValues),
                  {},
                  ApplyEnableAsyncCollectives});
    t->push_back({"xla_gpu_enable_latency_hiding_scheduler",
                  "latency-hiding-scheduler",
                  std::string(kBoolValues),
                  {},
                  ApplyLatencyHidingScheduler});
    t->push_back({"xla_gpu_experimental_parallel_collective_overlap_limit",
                  "latency-hiding-scheduler",
                  "an integer from 1 to 8",
                  {},
                  ApplyOverlapLimit});
    t->push_back({"xla_gpu_memory_limit_slop_factor",
                  "latency-hiding-scheduler",
                  "a percentage from 0 to 1000",
                  {},
                  ApplyMemorySlop});
    return t;
  }();
  return *table;
}

const XlaFlagHandler* FindXlaFlagHandler(std::string_view name) {
  for (const XlaFlagHandler& h : XlaFlagHandlers()) {
    if (h.name == name) return &h;
  }
  return nullptr;
}

}  // namespace

absl::Status ApplyXlaFlags(std::string_view text, std::string_view origin,
                           PassOptions& options, XlaFlagsResult& result) {
  absl::StatusOr<std::vector<XlaFlag>> flags = SplitXlaFlags(text, origin);
  if (!flags.ok()) return flags.status();
  for (const XlaFlag& f : *flags) {
    FlagApplication a(f, origin, options, result);
    if (const XlaFlagHandler* h = FindXlaFlagHandler(f.name)) {
      if (absl::Status s = h->apply(a); !s.ok()) return s;
      continue;
    }
    std::string_view why = KnownButIgnored(f.name);
    a.Ignored(why.empty()
                  ? std::string_view("not a flag that concerns hloverlap")
                  : why);
  }
  return absl::OkStatus();
}

std::string ListXlaFlagsText() {
  std::string out;
  for (const XlaFlagHandler& h : XlaFlagHandlers()) {
    absl::StrAppend(&out, "--", h.name, "=", h.values, "\n    ", h.pass, "\n");
  }
  for (const IgnoredXlaFlag& e : kIgnoredXlaFlags) {
    absl::StrAppend(&out, "--", AsAbsl(e.prefix), "*\n    ignored (",
                    AsAbsl(e.why), ")\n");
  }
  return out;
}

nlohmann::ordered_json ListXlaFlagsJson() {
  nlohmann::ordered_json flags = nlohmann::ordered_json::array();
  for (const XlaFlagHandler& h : XlaFlagHandlers()) {
    nlohmann::ordered_json f;
    f["name"] = h.name;
    f["pass"] = h.pass;
    f["values"] = h.values;
    f["pipelining_values"] = h.pipelining_values;
    flags.push_back(std::move(f));
  }
  nlohmann::ordered_json ignored = nlohmann::ordered_json::array();
  for (const IgnoredXlaFlag& e : kIgnoredXlaFlags) {
    ignored.push_back(
        {{"prefix", std::string(e.prefix)}, {"why", std::string(e.why)}});
  }
  nlohmann::ordered_json out;
  out["xla_flags"] = std::move(flags);
  out["ignored"] = std::move(ignored);
  return out;
}

absl::Status ApplyXlaFlagsFromEnvAndCommandLine(std::string_view command_line,
                                                bool use_env,
                                                PassOptions& options,
                                                XlaFlagsResult& result,
                                                XlaFlagsPrint print) {
  if (const char* env = std::getenv("XLA_FLAGS"); use_env && env != nullptr) {
    if (absl::Status s = ApplyXlaFlags(env, "XLA_FLAGS", options, result);
        !s.ok()) {
      return s;
    }
  }
  if (!command_line.empty()) {
    if (absl::Status s =
            ApplyXlaFlags(command_line, "--xla-flags", options, result);
        !s.ok()) {
      return s;
    }
  }
  if (print == XlaFlagsPrint::kWarnings) {
    for (const std::string& w : result.warnings) {
      PrintError(absl::StrCat("warning: ", w));
    }
  } else if (print == XlaFlagsPrint::kAll) {
    for (const std::string& line : result.lines) PrintError(line);
  }
  return absl::OkStatus();
}

namespace {

// XLA:GPU's order of the passes flags can turn on (reference/xla_lhs.md 3).
constexpr std::string_view kFlagPasses[] = {
    "collective-pipeliner", "double-buffer", "async-collectives",
    "latency-hiding-scheduler"};

}  // namespace

std::string PipelineFromXlaFlags(const XlaFlagsResult& result) {
  std::vector<std::string> names;
  for (std::string_view pass : kFlagPasses) {
    auto it = result.passes.find(std::string(pass));
    if (it == result.passes.end() || !it->second.on) continue;
    names.emplace_back(pass);
    // The cleanup after the pipeliner, as the presets have it.
    if (pass == "collective-pipeliner") names.emplace_back(kRewriteCleanup);
  }
  if (names.empty()) return "";
  return JoinPipeline({kCleanupPipeline, absl::StrJoin(names, ",")});
}

std::vector<std::string> ApplyXlaFlagsToPipeline(
    const XlaFlagsResult& result, std::string_view pipeline_name,
    std::vector<std::string>& passes) {
  std::vector<std::string> notes;
  // Passes a flag asked for that the pipeline lacks, per flag, in order.
  std::vector<std::pair<std::string, std::vector<std::string>>> missing;
  for (std::string_view pass : kFlagPasses) {
    auto it = result.passes.find(std::string(pass));
    if (it == result.passes.end()) continue;
    const XlaFlagsResult::PassSwitch& sw = it->second;
    const bool present =
        std::find(passes.begin(), passes.end(), pass) != passes.end();
    if (!sw.on && present) {
      passes.erase(std::remove(passes.begin(), passes.end(), pass),
                   passes.end());
      notes.push_back(absl::StrCat("note: ", sw.flag, ": ", AsAbsl(pass),
                                   " left out of ", AsAbsl(pipeline_name)));
    } else if (sw.on && !present) {
      auto m = std::find_if(missing.begin(), missing.end(),
                            [&](const auto& e) { return e.first == sw.flag; });
      if (m == missing.end()) {
        missing.push_back({sw.flag, {}});
        m = missing.end() - 1;
      }
      m->second.emplace_back(pass);
    }
  }
  for (const auto& [flag, lacking] : missing) {
    notes.push_back(absl::StrCat(
        "warning: ", flag, ": no effect, ", AsAbsl(pipeline_name),
        " does not run ", absl::StrJoin(lacking, " or "),
        " (without --passes/--preset the XLA flags choose the passes)"));
  }
  return notes;
}

absl::Status AddLoopRules(const std::vector<std::string>& rules,
                          PassOptions& options) {
  for (const std::string& rule : rules) {
    absl::StatusOr<LoopRule> parsed = ParseLoopRule(rule);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--loop=", rule, ": ", parsed.status().message()));
    }
    options.loop_rules.push_back(*std::move(parsed));
  }
  return absl::OkStatus();
}

}  // namespace hloverlap
