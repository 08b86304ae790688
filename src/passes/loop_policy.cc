#include "passes/loop_policy.h"

#include <charconv>
#include <cmath>
#include <regex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "hlo/absl_compat.h"
#include "passes/pass_registry.h"

namespace hloverlap {
namespace {

bool ParseInt(std::string_view s, int* out) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

// Applies one policy item ("pipeline=depth=2") to `policy`.
absl::Status ApplyPolicyItem(std::string_view item, LoopPolicy& policy) {
  size_t eq = item.find('=');
  if (eq == std::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("loop policy item '", AsAbsl(item),
                     "' is not of the form pipeline=off|on|depth=N|sink or "
                     "double-buffer=off|on"));
  }
  std::string_view key = item.substr(0, eq);
  std::string_view value = item.substr(eq + 1);
  if (key == "pipeline") {
    if (value == "off") {
      policy.pipeline = false;
    } else if (value == "on") {
      policy.pipeline = true;
    } else if (value == "sink") {
      policy.pipeline = true;
      policy.sink = true;
    } else if (value.substr(0, 6) == "depth=") {
      // The range of the pipeliner's declared `depth` option.
      const PassOptionInfo* declared =
          FindPassOption("collective-pipeliner", "depth");
      int d = 0;
      if (!ParseInt(value.substr(6), &d) || declared == nullptr ||
          !declared->Check(value.substr(6)).ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "pipeline depth '", AsAbsl(value.substr(6)),
            "' must be an integer from ", declared ? declared->min : 1, " to ",
            declared ? declared->max : 1));
      }
      policy.pipeline = true;
      policy.pipeline_depth = d;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("pipeline policy '", AsAbsl(value),
                       "' must be off, on, depth=N or sink"));
    }
    return absl::OkStatus();
  }
  if (key == "double-buffer" || key == "double_buffer") {
    if (value == "off") {
      policy.double_buffer = false;
    } else if (value == "on") {
      policy.double_buffer = true;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "double-buffer policy '", AsAbsl(value), "' must be off or on"));
    }
    return absl::OkStatus();
  }
  if (key == "defer-reduce" || key == "defer_reduce") {
    if (value != "off" && value != "on") {
      return absl::InvalidArgumentError(absl::StrCat(
          "defer-reduce policy '", AsAbsl(value), "' must be off or on"));
    }
    policy.defer_reduce = value == "on";
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown loop policy '", AsAbsl(key),
                   "' (known: pipeline, double-buffer, defer-reduce)"));
}

}  // namespace

bool LoopSelectorMatches(const LoopSelector& s, const LoopNode& loop) {
  switch (s.kind) {
    case LoopSelector::Kind::kAll:
      return true;
    case LoopSelector::Kind::kName:
      return loop.while_instr->name() == s.text;
    case LoopSelector::Kind::kDepth:
      return loop.depth == s.depth;
    case LoopSelector::Kind::kInnermost:
      return loop.children.empty();
    case LoopSelector::Kind::kOutermost:
      return loop.parent == nullptr;
    case LoopSelector::Kind::kOpNameRegex: {
      try {
        std::regex re(s.text);
        return std::regex_search(loop.while_instr->metadata().op_name.value(),
                                 re);
      } catch (...) {
        return false;  // validated in ParseLoopRule
      }
    }
  }
  return false;
}

namespace {

// DEPTH_RANGE: the pipeliner's declared range.
constexpr std::string_view kLoopRuleHelp =
    R"(--loop=SELECTOR:POLICY (repeatable; later rules win over earlier ones and
over the frontend attributes _hloverlap_pipeline / _hloverlap_double_buffer)
  SELECTOR  NAME or name=NAME   the while instruction named NAME (while.147)
            op_name~REGEX       loops whose metadata op_name contains a match
                                of REGEX (ECMAScript). JAX names every loop
                                (fori_loop, scan) `while`; autodiff puts the
                                forward pass's in jvp(...), the backward
                                pass's in transpose(jvp(...)): e.g.
                                op_name~transpose (backward-pass loops)
            depth=N             loops nested N deep (0 = outermost)
            innermost           loops with no loop inside
            outermost           loops inside no other loop
            all (or *)          every loop
  POLICY    comma-separated items:
            pipeline=off|on     pipelining of this loop's collectives
            pipeline=depth=N    prefetch all-gathers N iterations ahead (DEPTH_RANGE;
                                at most trip count - 1, clamped with a warning)
            pipeline=sink       batch per-iteration reduce-scatters/all-reduces
                                into one collective after the loop
            double-buffer=off|on  unroll by 2 (default: innermost loops with
                                collectives)
            defer-reduce=off|on accumulate gradients locally and reduce once
                                after the loop (pass defer-reduction; opt-in:
                                a full-size accumulator per device)
  A selector that matches no loop is a warning listing the loops.
  `hloverlap explain IN.hlo` lists the loops with names, depths and op_names.
  e.g. --loop=innermost:pipeline=depth=2
       --loop='op_name~transpose:double-buffer=off'
       --loop=outermost:pipeline=off (e.g. a gradient-accumulation fori_loop))";

}  // namespace

std::string_view LoopRuleHelp() {
  static const std::string* help = [] {
    const PassOptionInfo* depth =
        FindPassOption("collective-pipeliner", "depth");
    return new std::string(absl::StrReplaceAll(
        AsAbsl(kLoopRuleHelp),
        {{"DEPTH_RANGE", depth == nullptr
                             ? std::string("1-64")
                             : absl::StrCat(depth->min, "-", depth->max)}}));
  }();
  return *help;
}

int CheckLoopRulesMatch(const Module& module,
                        const std::vector<LoopRule>& rules,
                        RemarkSink& remarks) {
  if (rules.empty()) return 0;
  LoopNest nest(module);
  // Outermost first, as `explain` lists them.
  std::vector<const LoopNode*> loops;
  std::vector<const LoopNode*> stack(nest.roots().rbegin(),
                                     nest.roots().rend());
  while (!stack.empty()) {
    const LoopNode* n = stack.back();
    stack.pop_back();
    loops.push_back(n);
    for (auto it = n->children.rbegin(); it != n->children.rend(); ++it) {
      stack.push_back(*it);
    }
  }
  std::string listing;
  constexpr size_t kMaxListed = 16;
  for (size_t i = 0; i < loops.size() && i < kMaxListed; ++i) {
    const LoopNode& n = *loops[i];
    absl::StrAppend(&listing, i ? "; " : "", n.path, " (depth ", n.depth,
                    n.children.empty() ? ", innermost" : "");
    const std::string& op_name = n.while_instr->metadata().op_name;
    if (!op_name.empty())
      absl::StrAppend(&listing, ", op_name \"", op_name, "\"");
    listing += ")";
  }
  if (loops.size() > kMaxListed) {
    absl::StrAppend(&listing, "; and ", loops.size() - kMaxListed, " more");
  }
  int unmatched = 0;
  for (const LoopRule& rule : rules) {
    bool any = false;
    for (const LoopNode* n : loops)
      any |= LoopSelectorMatches(rule.selector, *n);
    if (any) continue;
    ++unmatched;
    Remark r;
    r.pass = "loop-policy";
    r.kind = RemarkKind::kWarning;
    r.name = "LoopSelectorMatchesNothing";
    r.message = absl::StrCat("--loop=", rule.text, " matches no loop");
    r.suggestion = loops.empty() ? std::string("the module has no while loop")
                                 : absl::StrCat("the loops: ", listing);
    remarks.Emit(std::move(r));
  }
  return unmatched;
}

absl::StatusOr<LoopRule> ParseLoopRule(std::string_view text) {
  LoopRule rule;
  rule.text = std::string(text);
  // The selector ends at the last ':' (regexes may contain ':' only if the
  // policy follows the last one).
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0 ||
      colon + 1 >= text.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--loop='", AsAbsl(text),
        "': expected <selector>:<policy>, e.g. innermost:pipeline=on"));
  }
  std::string_view sel = text.substr(0, colon);
  std::string_view pol = text.substr(colon + 1);
  LoopSelector& s = rule.selector;
  if (sel == "all" || sel == "*") {
    s.kind = LoopSelector::Kind::kAll;
  } else if (sel == "innermost") {
    s.kind = LoopSelector::Kind::kInnermost;
  } else if (sel == "outermost") {
    s.kind = LoopSelector::Kind::kOutermost;
  } else if (sel.substr(0, 6) == "depth=") {
    s.kind = LoopSelector::Kind::kDepth;
    if (!ParseInt(sel.substr(6), &s.depth) || s.depth < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--loop='", AsAbsl(text), "': depth must be a non-negative integer"));
    }
  } else if (sel.substr(0, 8) == "op_name~") {
    s.kind = LoopSelector::Kind::kOpNameRegex;
    s.text = std::string(sel.substr(8));
    try {
      std::regex re(s.text);
    } catch (const std::exception& e) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--loop='", AsAbsl(text), "': invalid regex '", s.text, "'"));
    }
  } else if (sel.substr(0, 5) == "name=") {
    s.kind = LoopSelector::Kind::kName;
    s.text = std::string(sel.substr(5));
  } else {
    s.kind = LoopSelector::Kind::kName;
    s.text = std::string(sel);
  }
  for (absl::string_view item : absl::StrSplit(AsAbsl(pol), ',')) {
    absl::Status st = ApplyPolicyItem(AsStd(item), rule.policy);
    if (!st.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--loop='", AsAbsl(text), "': ", st.message()));
    }
  }
  return rule;
}

namespace {

constexpr std::string_view kPolicyAttributes[] = {"_hloverlap_pipeline",
                                                  "_hloverlap_double_buffer"};

// The attribute `key` of `loop` when it counts there: its own, not
// inherited from the enclosing loop's scope (LoopPolicyAttributes).
const FrontendAttribute* OwnAttribute(const LoopNode& loop,
                                      std::string_view key) {
  const FrontendAttribute* a =
      FindFrontendAttribute(loop.while_instr->attrs().frontend_attributes, key);
  if (a == nullptr || loop.parent == nullptr) return a;
  const FrontendAttribute* outer = FindFrontendAttribute(
      loop.parent->while_instr->attrs().frontend_attributes, key);
  if (outer != nullptr && outer->value == a->value) return nullptr;
  return a;
}

}  // namespace

std::vector<LoopAttributeUse> LoopPolicyAttributes(const LoopNode& loop) {
  std::vector<LoopAttributeUse> out;
  for (std::string_view key : kPolicyAttributes) {
    const FrontendAttribute* a = FindFrontendAttribute(
        loop.while_instr->attrs().frontend_attributes, key);
    if (a == nullptr) continue;
    LoopAttributeUse use{std::string(key), std::string(a->value), ""};
    if (OwnAttribute(loop, key) == nullptr) {
      use.inherited_from = loop.parent->while_instr->name();
    }
    out.push_back(std::move(use));
  }
  return out;
}

int ReportLoopAttributes(const Module& module,
                         const std::vector<LoopRule>& rules,
                         RemarkSink& remarks) {
  LoopNest nest(module);
  int emitted = 0;
  std::vector<const LoopNode*> stack(nest.roots().rbegin(),
                                     nest.roots().rend());
  while (!stack.empty()) {
    const LoopNode& n = *stack.back();
    stack.pop_back();
    for (auto it = n.children.rbegin(); it != n.children.rend(); ++it) {
      stack.push_back(*it);
    }
    const std::vector<LoopAttributeUse> uses = LoopPolicyAttributes(n);
    if (uses.empty()) continue;
    std::string warning;
    const LoopPolicy with_rules = ResolveLoopPolicy(n, rules, &warning);
    auto emit = [&](RemarkKind kind, std::string name, std::string message,
                    std::string suggestion) {
      Remark r;
      r.pass = "loop-policy";
      r.kind = kind;
      r.name = std::move(name);
      r.instruction = n.while_instr->name();
      r.opcode = "while";
      r.loop = n.path;
      r.location = module.GetSourceLocation(n.while_instr->metadata());
      r.message = std::move(message);
      r.suggestion = std::move(suggestion);
      remarks.Emit(std::move(r));
      ++emitted;
    };
    if (!warning.empty()) {
      emit(RemarkKind::kWarning, "IgnoredLoopAttribute", warning, "");
    }
    for (const LoopAttributeUse& use : uses) {
      const std::string attr =
          absl::StrCat("frontend attribute ", use.key, "=\"", use.value, "\"");
      if (use.inherited()) {
        emit(RemarkKind::kAnalysis, "LoopAttributeInherited",
             absl::StrCat(attr, " is inherited from the scope around ",
                          use.inherited_from,
                          " (the enclosing loop has the same value): it "
                          "counts only for ",
                          use.inherited_from,
                          ", so this loop keeps its default"),
             absl::StrCat("set it in a scope around this loop alone to "
                          "give it its own value, or use --loop=",
                          n.while_instr->name(), ":..."));
        continue;
      }
      const bool pipeline = use.key == "_hloverlap_pipeline";
      LoopPolicy from_attr;
      if (!ApplyPolicyItem(
               absl::StrCat(pipeline ? "pipeline=" : "double-buffer=",
                            use.value),
               from_attr)
               .ok()) {
        continue;  // the IgnoredLoopAttribute warning above
      }
      const std::string what =
          pipeline
              ? (from_attr.pipeline == false ? std::string("pipelining off")
                 : from_attr.sink            ? std::string("pipelining: sink")
                 : from_attr.pipeline_depth
                     ? absl::StrCat("pipelining at depth ",
                                    *from_attr.pipeline_depth)
                     : std::string("pipelining on"))
              : absl::StrCat("double buffering ",
                             *from_attr.double_buffer ? "on" : "off");
      // The last --loop rule that sets the same thing wins over it.
      std::string overridden;
      for (const LoopRule& rule : rules) {
        if (!LoopSelectorMatches(rule.selector, n)) continue;
        if (pipeline ? rule.policy.pipeline.has_value()
                     : rule.policy.double_buffer.has_value()) {
          overridden = rule.text;
        }
      }
      const bool differs =
          pipeline ? (with_rules.pipeline != from_attr.pipeline ||
                      with_rules.pipeline_depth != from_attr.pipeline_depth ||
                      with_rules.sink != from_attr.sink)
                   : with_rules.double_buffer != from_attr.double_buffer;
      emit(RemarkKind::kAnalysis, "LoopAttributeApplied",
           overridden.empty()
               ? absl::StrCat(attr, ": ", what, " for this loop")
               : absl::StrCat(attr, " asks for ", what, "; --loop=", overridden,
                              " overrides it for this loop",
                              differs ? "" : " (with the same setting)"),
           n.depth > 0 ? "an attribute counts for the outermost loop of the "
                         "scope that set it; loops nested in that scope keep "
                         "their defaults unless given their own value"
                       : "");
    }
  }
  return emitted;
}

LoopPolicy ResolveLoopPolicy(const LoopNode& loop,
                             const std::vector<LoopRule>& rules,
                             std::string* warning) {
  LoopPolicy policy;
  const FrontendAttributes& fa = loop.while_instr->attrs().frontend_attributes;
  auto warn = [&](std::string msg) {
    if (warning != nullptr) {
      if (!warning->empty()) warning->append("; ");
      warning->append(msg);
    }
  };
  // Attributes inherited from an enclosing loop's scope do not count here.
  if (const FrontendAttribute* a = OwnAttribute(loop, "_hloverlap_pipeline")) {
    LoopPolicy p;
    absl::Status st = ApplyPolicyItem(absl::StrCat("pipeline=", a->value), p);
    if (st.ok()) {
      policy.pipeline = p.pipeline;
      policy.pipeline_depth = p.pipeline_depth;
      policy.sink = p.sink;
      policy.source = "frontend attribute _hloverlap_pipeline";
    } else {
      warn(absl::StrCat("ignored _hloverlap_pipeline=\"", a->value,
                        "\": ", st.message()));
    }
  }
  if (const FrontendAttribute* a =
          OwnAttribute(loop, "_hloverlap_double_buffer")) {
    LoopPolicy p;
    absl::Status st =
        ApplyPolicyItem(absl::StrCat("double-buffer=", a->value), p);
    if (st.ok()) {
      policy.double_buffer = p.double_buffer;
    } else {
      warn(absl::StrCat("ignored _hloverlap_double_buffer=\"", a->value,
                        "\": ", st.message()));
    }
  }
  if (const FrontendAttribute* a =
          FindFrontendAttribute(fa, "_xla_loop_unroll_strategy")) {
    if (a->value == "double-buffer" || a->value == "double_buffer") {
      if (!policy.double_buffer.has_value()) policy.double_buffer = true;
    }
  }
  for (const LoopRule& rule : rules) {
    if (!LoopSelectorMatches(rule.selector, loop)) continue;
    if (rule.policy.pipeline.has_value()) {
      policy.pipeline = rule.policy.pipeline;
      policy.pipeline_depth = rule.policy.pipeline_depth;
      policy.sink = rule.policy.sink;
      policy.source = absl::StrCat("--loop=", rule.text);
    }
    if (rule.policy.double_buffer.has_value()) {
      policy.double_buffer = rule.policy.double_buffer;
    }
    if (rule.policy.defer_reduce.has_value()) {
      policy.defer_reduce = rule.policy.defer_reduce;
    }
  }
  return policy;
}

}  // namespace hloverlap
