#include "passes/pass_registry.h"

#include <charconv>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/absl_compat.h"

namespace hloverlap {

// Each defined in the pass's own .cc, beside the pass.
void RegisterCallInlinerPass(PassRegistry& registry);
void RegisterDcePass(PassRegistry& registry);
void RegisterTupleSimplifierPass(PassRegistry& registry);
void RegisterCollectiveHoistPass(PassRegistry& registry);
void RegisterCollectivePipelinerPass(PassRegistry& registry);
void RegisterDoubleBufferPass(PassRegistry& registry);
void RegisterReductionDeferralPass(PassRegistry& registry);
void RegisterAsyncConversionPass(PassRegistry& registry);
void RegisterLatencyHidingSchedulerPass(PassRegistry& registry);
void RegisterAutoPlanPasses(PassRegistry& registry);
void RegisterRouteFixupPasses(PassRegistry& registry);

const PassRegistry& GlobalPassRegistry() {
  static const PassRegistry* registry = [] {
    auto* r = new PassRegistry();
    RegisterCallInlinerPass(*r);
    RegisterDcePass(*r);
    RegisterTupleSimplifierPass(*r);
    RegisterCollectiveHoistPass(*r);
    RegisterCollectivePipelinerPass(*r);
    RegisterDoubleBufferPass(*r);
    RegisterReductionDeferralPass(*r);
    RegisterAsyncConversionPass(*r);
    RegisterLatencyHidingSchedulerPass(*r);
    RegisterAutoPlanPasses(*r);
    RegisterRouteFixupPasses(*r);
    return r;
  }();
  return *registry;
}

std::string JoinPipeline(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view p : parts) {
    absl::StrAppend(&out, out.empty() ? "" : ",", AsAbsl(p));
  }
  return out;
}

// The presets, as pipeline text: the one place they are written.
const std::vector<PresetInfo>& Presets() {
  static const auto* presets = new std::vector<PresetInfo>{
      {"cleanup", std::string(kCleanupPipeline),
       "call inlining, tuple simplification, dead-code elimination"},
      {"pipeline",
       JoinPipeline({kCleanupPipeline, "defer-reduction,collective-pipeliner",
                     kRewriteCleanup}),
       "cleanup, the collective pipeliner, cleanup (defer-reduction only "
       "reports loops it could defer: opt-in)"},
      {"hoist-pipeline",
       JoinPipeline({kCleanupPipeline,
                     "defer-reduction,collective-hoist,collective-pipeliner",
                     kRewriteCleanup}),
       "loop-invariant all-gathers leave the "
       "accumulation loop first, then the rest is pipelined"},
      {"xla-gpu",
       JoinPipeline({kCleanupPipeline, "defer-reduction,collective-pipeliner",
                     kRewriteCleanup, "double-buffer", kXlaGpuTail}),
       "XLA:GPU's order (reference/xla_lhs.md section 3): cleanup, collective "
       "pipeliner, double buffering, async conversion, latency-hiding "
       "scheduler"},
      // Plans: the pipeline with the smallest predicted step (auto_plan.h).
      {"auto", "auto-plan",
       "plans with the cost model: runs the fixed presets and the xla-gpu "
       "tail after each loop rewrite on clones, keeps the fastest predicted"},
      {"auto-rewrite", "auto-rewrite-plan",
       "plans the loop rewrites only (no async ops, no schedule), each "
       "predicted after the xla-gpu tail (what the JAX bridge runs without "
       "XLA; its default compiles the candidates instead)"},
  };
  return *presets;
}

namespace {

bool ParseInt64(std::string_view s, int64_t* out) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return !s.empty() && ec == std::errc() && ptr == s.data() + s.size();
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// Splits at the commas outside braces; an error for unbalanced braces.
absl::StatusOr<std::vector<std::string_view>> SplitTopLevel(
    std::string_view text) {
  std::vector<std::string_view> items;
  int depth = 0;
  size_t begin = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    const char c = i < text.size() ? text[i] : ',';
    if (c == '{') {
      if (++depth > 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("nested '{' in '",
                         AsAbsl(Trim(text.substr(begin, i - begin + 1))), "'"));
      }
    } else if (c == '}') {
      if (--depth < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("'}' without '{' in '",
                         AsAbsl(Trim(text.substr(begin, i - begin + 1))), "'"));
      }
    } else if (c == ',' && depth == 0) {
      items.push_back(text.substr(begin, i - begin));
      begin = i + 1;
    }
  }
  if (depth != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "missing '}' in '", AsAbsl(Trim(text.substr(begin))), "'"));
  }
  return items;
}

std::vector<std::string> OptionNames(const PassInfo& pass) {
  std::vector<std::string> names;
  for (const PassOptionInfo& o : pass.options) names.push_back(o.name);
  return names;
}

// One `NAME` or `NAME{k=v,...}` of pipeline text.
absl::StatusOr<PassSpec> ParsePassItem(std::string_view item) {
  const size_t brace = item.find('{');
  const std::string_view name = Trim(item.substr(0, brace));
  PassSpec spec;
  spec.info = FindPass(name);
  if (spec.info == nullptr) {
    std::vector<std::string> known;
    for (const PassInfo& p : GlobalPassRegistry().passes()) {
      known.push_back(p.name);
    }
    return absl::InvalidArgumentError(
        absl::StrCat("unknown pass '", AsAbsl(name),
                     "'; known passes: ", absl::StrJoin(known, ", ")));
  }
  if (brace == std::string_view::npos) return spec;
  const size_t close = item.rfind('}');
  if (!Trim(item.substr(close + 1)).empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("pass '", AsAbsl(name), "': unexpected '",
                     AsAbsl(Trim(item.substr(close + 1))), "' after '}'"));
  }
  const std::string_view body = item.substr(brace + 1, close - brace - 1);
  if (body.find_first_of("{}") != std::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "pass '", AsAbsl(name), "': one {...} of options per pass, got '",
        AsAbsl(Trim(item)), "'"));
  }
  for (size_t begin = 0; begin <= body.size();) {
    size_t end = body.find(',', begin);
    if (end == std::string_view::npos) end = body.size();
    const std::string_view entry = Trim(body.substr(begin, end - begin));
    begin = end + 1;
    if (entry.empty()) continue;
    const size_t eq = entry.find('=');
    const std::string_view key = Trim(entry.substr(0, eq));
    const PassOptionInfo* option = spec.info->FindOption(key);
    if (option == nullptr) {
      return absl::InvalidArgumentError(
          spec.info->options.empty()
              ? absl::StrCat("pass '", AsAbsl(name), "' has no options (got '",
                             AsAbsl(entry), "')")
              : absl::StrCat("pass '", AsAbsl(name), "' has no option '",
                             AsAbsl(key), "'; its options: ",
                             absl::StrJoin(OptionNames(*spec.info), ", ")));
    }
    if (eq == std::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          "pass '", AsAbsl(name), "': option '", AsAbsl(key),
          "' needs a value (", AsAbsl(key), "=", option->TypeText(), ")"));
    }
    const std::string_view value = Trim(entry.substr(eq + 1));
    if (absl::Status s = option->Check(value); !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("pass '", AsAbsl(name), "': option '", AsAbsl(key), "=",
                       AsAbsl(value), "': ", s.message()));
    }
    for (const auto& [given, unused] : spec.options) {
      if (given == option) {
        return absl::InvalidArgumentError(
            absl::StrCat("pass '", AsAbsl(name), "': option '", AsAbsl(key),
                         "' given twice"));
      }
    }
    spec.options.emplace_back(option, std::string(value));
  }
  return spec;
}

nlohmann::ordered_json OptionValueJson(const PassOptionInfo& option,
                                       const PassOptions& options) {
  switch (option.type) {
    case PassOptionInfo::Type::kInt:
      return options.*option.int_field;
    case PassOptionInfo::Type::kBool:
      return options.*option.bool_field;
    case PassOptionInfo::Type::kEnum:
      return options.*option.string_field;
  }
  return nullptr;
}

}  // namespace

PassOptionInfo PassOptionInfo::Int(std::string name, int PassOptions::*field,
                                   int64_t min, int64_t max, std::string help) {
  PassOptionInfo o;
  o.name = std::move(name);
  o.type = Type::kInt;
  o.min = min;
  o.max = max;
  o.help = std::move(help);
  o.int_field = field;
  return o;
}

PassOptionInfo PassOptionInfo::Bool(std::string name, bool PassOptions::*field,
                                    std::string help) {
  PassOptionInfo o;
  o.name = std::move(name);
  o.type = Type::kBool;
  o.help = std::move(help);
  o.bool_field = field;
  return o;
}

PassOptionInfo PassOptionInfo::Enum(std::string name,
                                    std::string PassOptions::*field,
                                    std::vector<std::string> values,
                                    std::string help) {
  PassOptionInfo o;
  o.name = std::move(name);
  o.type = Type::kEnum;
  o.values = std::move(values);
  o.help = std::move(help);
  o.string_field = field;
  return o;
}

absl::Status PassOptionInfo::Check(std::string_view value) const {
  switch (type) {
    case Type::kInt: {
      int64_t v = 0;
      if (!ParseInt64(value, &v) || v < min || v > max) {
        return absl::InvalidArgumentError(
            absl::StrCat("expected an integer from ", min, " to ", max));
      }
      return absl::OkStatus();
    }
    case Type::kBool:
      if (value == "true" || value == "false") return absl::OkStatus();
      return absl::InvalidArgumentError("expected true or false");
    case Type::kEnum:
      for (const std::string& v : values) {
        if (v == value) return absl::OkStatus();
      }
      return absl::InvalidArgumentError(
          absl::StrCat("expected one of ", absl::StrJoin(values, ", ")));
  }
  return absl::InvalidArgumentError("unknown option type");
}

void PassOptionInfo::Set(PassOptions& options, std::string_view value,
                         std::string_view source) const {
  switch (type) {
    case Type::kInt: {
      int64_t v = 0;
      if (ParseInt64(value, &v)) options.*int_field = static_cast<int>(v);
      break;
    }
    case Type::kBool:
      options.*bool_field = value == "true";
      break;
    case Type::kEnum:
      options.*string_field = std::string(value);
      break;
  }
  if (!source_key.empty()) {
    options.option_sources[source_key] = std::string(source);
  }
}

std::string PassOptionInfo::Get(const PassOptions& options) const {
  switch (type) {
    case Type::kInt:
      return absl::StrCat(options.*int_field);
    case Type::kBool:
      return options.*bool_field ? "true" : "false";
    case Type::kEnum:
      return options.*string_field;
  }
  return "";
}

std::string PassOptionInfo::TypeText() const {
  switch (type) {
    case Type::kInt:
      return absl::StrCat("int ", min, "..", max);
    case Type::kBool:
      return "bool";
    case Type::kEnum:
      return absl::StrJoin(values, "|");
  }
  return "";
}

nlohmann::ordered_json PassOptionInfo::ToJson() const {
  nlohmann::ordered_json j;
  j["name"] = name;
  static constexpr const char* kTypes[] = {"int", "bool", "enum"};
  j["type"] = kTypes[static_cast<int>(type)];
  if (type == Type::kInt) {
    j["min"] = min;
    j["max"] = max;
  }
  if (type == Type::kEnum) j["values"] = values;
  j["default"] = OptionValueJson(*this, PassOptions());
  if (!flag.empty()) j["flag"] = flag;
  j["help"] = help;
  return j;
}

const PassOptionInfo* PassInfo::FindOption(std::string_view option) const {
  for (const PassOptionInfo& o : options) {
    if (o.name == option) return &o;
  }
  return nullptr;
}

void PassRegistry::AddInfo(PassInfo info) {
  passes_.push_back(std::move(info));
}

const PassInfo* PassRegistry::Find(std::string_view name) const {
  for (const PassInfo& p : passes_) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

const PassInfo* FindPass(std::string_view name) {
  return GlobalPassRegistry().Find(name);
}

const PassOptionInfo* FindPassOption(std::string_view pass,
                                     std::string_view option) {
  const PassInfo* info = FindPass(pass);
  return info == nullptr ? nullptr : info->FindOption(option);
}

std::string PassRunText(std::string_view name,
                        const PassOptionValues& options) {
  std::string text(name);
  if (options.empty()) return text;
  std::vector<std::string> items;
  for (const auto& [option, value] : options) {
    items.push_back(absl::StrCat(option->name, "=", value));
  }
  absl::StrAppend(&text, "{", absl::StrJoin(items, ","), "}");
  return text;
}

std::string PassSpec::Text() const { return PassRunText(info->name, options); }

absl::StatusOr<std::vector<PassSpec>> ParsePipelineText(std::string_view text) {
  absl::StatusOr<std::vector<std::string_view>> items = SplitTopLevel(text);
  if (!items.ok()) return items.status();
  std::vector<PassSpec> specs;
  for (std::string_view item : *items) {
    if (Trim(item).empty()) continue;
    absl::StatusOr<PassSpec> spec = ParsePassItem(item);
    if (!spec.ok()) return spec.status();
    specs.push_back(*std::move(spec));
  }
  return specs;
}

std::string PipelineText(const std::vector<PassSpec>& specs) {
  std::vector<std::string> items;
  for (const PassSpec& s : specs) items.push_back(s.Text());
  return absl::StrJoin(items, ",");
}

PassPipeline BuildPipeline(const std::vector<PassSpec>& specs) {
  PassPipeline pipeline;
  for (const PassSpec& s : specs) pipeline.Add(s.info->make(), s.options);
  return pipeline;
}

const PresetInfo* FindPreset(std::string_view name) {
  for (const PresetInfo& p : Presets()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::unique_ptr<Pass> CreatePass(std::string_view name) {
  const PassInfo* info = FindPass(name);
  return info == nullptr ? nullptr : info->make();
}

std::vector<std::string> KnownPassNames() {
  std::vector<std::string> names;
  for (const PassInfo& p : GlobalPassRegistry().passes()) {
    names.push_back(p.name);
  }
  return names;
}

std::vector<std::string> KnownPresets() {
  std::vector<std::string> names;
  for (const PresetInfo& p : Presets()) names.push_back(p.name);
  return names;
}

absl::StatusOr<PassPipeline> BuildPipeline(std::string_view pipeline_text) {
  absl::StatusOr<std::vector<PassSpec>> specs =
      ParsePipelineText(pipeline_text);
  if (!specs.ok()) return specs.status();
  return BuildPipeline(*specs);
}

absl::StatusOr<std::vector<PassSpec>> PresetPasses(std::string_view preset) {
  const PresetInfo* info = FindPreset(preset);
  if (info == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown preset '", AsAbsl(preset),
        "'; known presets: ", absl::StrJoin(KnownPresets(), ", ")));
  }
  return ParsePipelineText(info->pipeline);
}

absl::StatusOr<PassPipeline> BuildPreset(std::string_view preset) {
  absl::StatusOr<std::vector<PassSpec>> specs = PresetPasses(preset);
  if (!specs.ok()) return specs.status();
  return BuildPipeline(*specs);
}

std::string ListPassesText() {
  std::string out;
  for (const PassInfo& p : GlobalPassRegistry().passes()) {
    absl::StrAppend(&out, p.name, "\n    ", p.help, "\n");
    const PassOptions defaults;
    for (const PassOptionInfo& o : p.options) {
      absl::StrAppend(&out, "    ", o.name, "=<", o.TypeText(), ">  (default ",
                      o.Get(defaults),
                      o.flag.empty() ? "" : absl::StrCat("; flag ", o.flag),
                      ")\n        ", o.help, "\n");
    }
  }
  return out;
}

nlohmann::ordered_json ListPassesJson() {
  nlohmann::ordered_json passes = nlohmann::ordered_json::array();
  for (const PassInfo& p : GlobalPassRegistry().passes()) {
    nlohmann::ordered_json j;
    j["name"] = p.name;
    j["help"] = p.help;
    j["options"] = nlohmann::ordered_json::array();
    for (const PassOptionInfo& o : p.options)
      j["options"].push_back(o.ToJson());
    passes.push_back(std::move(j));
  }
  nlohmann::ordered_json out;
  out["passes"] = std::move(passes);
  return out;
}

std::string ListPresetsText() {
  std::string out;
  for (const PresetInfo& p : Presets()) {
    absl::StrAppend(&out, p.name, ": ", p.pipeline, "\n    ", p.help, "\n");
  }
  return out;
}

nlohmann::ordered_json ListPresetsJson() {
  nlohmann::ordered_json presets = nlohmann::ordered_json::array();
  for (const PresetInfo& p : Presets()) {
    nlohmann::ordered_json j;
    j["name"] = p.name;
    j["pipeline"] = p.pipeline;
    j["help"] = p.help;
    // Each pass with the options it runs with (declared defaults, or the
    // preset's own text).
    j["passes"] = nlohmann::ordered_json::array();
    absl::StatusOr<std::vector<PassSpec>> specs = ParsePipelineText(p.pipeline);
    for (const PassSpec& s : specs.ok() ? *specs : std::vector<PassSpec>()) {
      PassOptions options;
      for (const auto& [option, value] : s.options) {
        option->Set(options, value, "");
      }
      nlohmann::ordered_json pass;
      pass["name"] = s.info->name;
      pass["options"] = nlohmann::ordered_json::object();
      for (const PassOptionInfo& o : s.info->options) {
        pass["options"][o.name] = OptionValueJson(o, options);
      }
      j["passes"].push_back(std::move(pass));
    }
    presets.push_back(std::move(j));
  }
  nlohmann::ordered_json out;
  out["presets"] = std::move(presets);
  return out;
}

}  // namespace hloverlap
