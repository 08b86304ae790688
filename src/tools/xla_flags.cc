// XLA flags mapped onto hloverlap's options (see xla_flags.h).
#include "tools/xla_flags.h"

#include <cctype>
#include <cstdlib>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "hlo/absl_compat.h"
#include "passes/loop_policy.h"
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

// Flags of XLA that hloverlap recognizes but does not act on, with why.
std::string_view KnownButIgnored(std::string_view name) {
  struct Entry {
    std::string_view prefix;
    std::string_view why;
  };
  static constexpr Entry kEntries[] = {
      {"xla_gpu_enable_latency_hiding_scheduler",
       "scheduling is not part of hloverlap's opt pipeline yet"},
      {"xla_gpu_collective_permute_decomposer",
       "hloverlap does not decompose or pipeline collective-permutes"},
      {"xla_gpu_enable_pipelined_p2p", "hloverlap does not pipeline send/recv"},
      {"xla_gpu_disable_async_collectives",
       "async conversion is not part of hloverlap's opt pipeline yet"},
      {"xla_gpu_enable_highest_priority_async_stream",
       "a runtime stream setting"},
      {"xla_gpu_run_post_layout_collective_pipeliner",
       "hloverlap pipelines the module it is given"},
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
      {"xla_gpu_graph_level", "a runtime (CUDA graph) setting"},
      {"xla_gpu_enable_command_buffer", "a runtime (command buffer) setting"},
      {"xla_gpu_enable_triton_gemm", "a code generation setting"},
      {"xla_dump", "hloverlap writes what -o and --dump-after say"},
  };
  for (const Entry& e : kEntries) {
    if (name.substr(0, e.prefix.size()) == e.prefix) return e.why;
  }
  return {};
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

absl::Status ApplyXlaFlags(std::string_view text, std::string_view origin,
                           PassOptions& options, XlaFlagsResult& result) {
  absl::StatusOr<std::vector<XlaFlag>> flags = SplitXlaFlags(text, origin);
  if (!flags.ok()) return flags.status();
  auto bool_error = [&](const XlaFlag& f) {
    return absl::InvalidArgumentError(
        absl::StrCat(AsAbsl(origin), ": ", Quote(f.text),
                     ": expected a boolean value (true or false)"));
  };
  for (const XlaFlag& f : *flags) {
    const std::string& name = f.name;
    auto applied = [&](std::string what) {
      result.applied.push_back(
          absl::StrCat(AsAbsl(origin), ": ", f.text, ": ", what));
    };
    struct KindFlag {
      std::string_view enable_name;  // xla_gpu_enable_pipelined_<kind>
      std::string_view mode_name;    // xla_gpu_pipeline_<kind>
      bool PassOptions::*field;
      std::string_view what;
    };
    static constexpr KindFlag kKinds[] = {
        {"xla_gpu_enable_pipelined_all_gather", "xla_gpu_pipeline_all_gather",
         &PassOptions::pipeline_all_gather, "all-gather prefetch"},
        {"xla_gpu_enable_pipelined_reduce_scatter",
         "xla_gpu_pipeline_reduce_scatter",
         &PassOptions::pipeline_reduce_scatter, "reduce-scatter pipelining"},
        {"xla_gpu_enable_pipelined_all_reduce", "xla_gpu_pipeline_all_reduce",
         &PassOptions::pipeline_all_reduce, "all-reduce pipelining"},
    };
    bool handled = false;
    for (const KindFlag& k : kKinds) {
      if (name == k.enable_name) {
        std::optional<bool> b = ParseBool(f);
        if (!b) return bool_error(f);
        options.*k.field = *b;
        result.pipelining_requested |= *b;
        applied(absl::StrCat(AsAbsl(k.what), *b ? " on" : " off"));
        handled = true;
      } else if (name == k.mode_name) {
        std::string v = absl::AsciiStrToLower(f.value);
        if (v == "on" || v == "true" || v == "default") {
          options.*k.field = true;
          result.pipelining_requested = true;
          applied(absl::StrCat(AsAbsl(k.what), " on"));
        } else if (v == "off" || v == "false") {
          options.*k.field = false;
          applied(absl::StrCat(AsAbsl(k.what), " off"));
        } else if (v == "explicit") {
          options.*k.field = true;
          result.pipelining_requested = true;
          result.warnings.push_back(absl::StrCat(
              AsAbsl(origin), ": ", f.text,
              ": 'explicit' (only collectives tagged is_pipelineable) is not "
              "supported; ",
              AsAbsl(k.what),
              " is on for every loop (use --loop= or "
              "_hloverlap_pipeline to choose loops)"));
        } else {
          return absl::InvalidArgumentError(
              absl::StrCat(AsAbsl(origin), ": ", Quote(f.text),
                           ": expected on, off, explicit or default"));
        }
        handled = true;
      }
    }
    if (handled) continue;
    if (name == "xla_gpu_enable_pipelined_collectives") {
      // XLA ORs this with the per-kind flags: true turns all three on,
      // false changes nothing.
      std::optional<bool> b = ParseBool(f);
      if (!b) return bool_error(f);
      if (*b) {
        options.pipeline_all_gather = true;
        options.pipeline_reduce_scatter = true;
        options.pipeline_all_reduce = true;
        result.pipelining_requested = true;
        applied("all-gather, reduce-scatter and all-reduce pipelining on");
      } else {
        applied(
            "no effect (as in XLA, false leaves the per-collective flags "
            "in charge)");
      }
      continue;
    }
    if (name == "xla_gpu_enable_while_loop_double_buffering") {
      std::optional<bool> b = ParseBool(f);
      if (!b) return bool_error(f);
      options.double_buffer_default = *b;
      applied(
          absl::StrCat("double buffering ", *b ? "on" : "off", " by default"));
      continue;
    }
    if (name == "xla_gpu_enable_while_loop_unrolling") {
      std::string v = absl::AsciiStrToUpper(f.value);
      if (v == "WHILE_LOOP_UNROLLING_NO_UNROLL") {
        options.double_buffer_default = false;
        applied("double buffering off by default");
      } else if (v == "WHILE_LOOP_UNROLLING_DOUBLE_BUFFER" ||
                 v == "WHILE_LOOP_UNROLLING_AUTO_UNROLL") {
        options.double_buffer_default = true;
        applied("double buffering on by default");
      } else if (v == "WHILE_LOOP_UNROLLING_FULL_UNROLL" ||
                 v == "WHILE_LOOP_UNROLLING_MANUAL_UNROLL") {
        result.warnings.push_back(absl::StrCat(
            AsAbsl(origin), ": ", f.text,
            " ignored (hloverlap does not unroll loops fully; per-loop "
            "control: --loop= or _hloverlap_double_buffer)"));
      } else {
        return absl::InvalidArgumentError(absl::StrCat(
            AsAbsl(origin), ": ", Quote(f.text),
            ": expected WHILE_LOOP_UNROLLING_NO_UNROLL, _DOUBLE_BUFFER, "
            "_AUTO_UNROLL, _FULL_UNROLL or _MANUAL_UNROLL"));
      }
      continue;
    }
    std::string_view why = KnownButIgnored(name);
    if (!why.empty()) {
      result.warnings.push_back(absl::StrCat(AsAbsl(origin), ": ", f.text,
                                             " ignored (", AsAbsl(why), ")"));
    } else {
      result.warnings.push_back(
          absl::StrCat(AsAbsl(origin), ": ", f.text,
                       " ignored (not a flag that concerns hloverlap)"));
    }
  }
  return absl::OkStatus();
}

absl::Status ApplyXlaFlagsFromEnvAndCommandLine(std::string_view command_line,
                                                bool use_env,
                                                PassOptions& options,
                                                XlaFlagsResult& result) {
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
  for (const std::string& w : result.warnings) {
    PrintError(absl::StrCat("warning: ", w));
  }
  return absl::OkStatus();
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
