// Per-loop summary of remarks (see remark_summary.h).
#include "passes/remark_summary.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/call_graph.h"
#include "hlo/absl_compat.h"

namespace hloverlap {
namespace {

constexpr std::string_view kScheduler = "latency-hiding-scheduler";
constexpr std::string_view kAsync = "async-collectives";
constexpr std::string_view kLoopPolicy = "loop-policy";
constexpr size_t kMaxExposedListed = 3;

bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ||
         c == '.';
}

// The message with instruction-like names (dotted identifiers such as
// add.75.1 or while.146.1.gte2.1) replaced by "...", so that the same
// reason about different instructions counts once.
std::string WithoutNames(std::string_view message) {
  std::string out;
  size_t i = 0;
  while (i < message.size()) {
    const char c = message[i];
    const bool starts_word =
        (std::isalpha(static_cast<unsigned char>(c)) || c == '_') &&
        (i == 0 || !IsNameChar(message[i - 1]));
    if (!starts_word) {
      out.push_back(c);
      ++i;
      continue;
    }
    size_t j = i;
    while (j < message.size() && IsNameChar(message[j])) ++j;
    std::string_view word = message.substr(i, j - i);
    // A sentence's final '.' is not part of the word.
    while (!word.empty() && word.back() == '.') word.remove_suffix(1);
    const size_t dot = word.find('.');
    if (dot != std::string_view::npos && dot + 1 < word.size()) {
      out += "...";
    } else {
      out.append(word);
    }
    i += word.size();
  }
  return out;
}

// The message with its instruction arguments as "...".
std::string WithoutInstructionArgs(const Remark& r) {
  if (r.format.empty()) return r.message;
  Remark copy;
  copy.format = r.format;
  copy.args = r.args;
  for (RemarkArg& a : copy.args) {
    if (a.type == RemarkArg::Type::kInstruction) a.text = "...";
  }
  return copy.Render();
}

// "all-reduce not pipelined: REASON" -> "REASON".
std::string_view Reason(std::string_view message) {
  const size_t colon = message.find(": ");
  if (colon == std::string_view::npos) return message;
  std::string_view head = message.substr(0, colon);
  if (head.substr(0, 4) == "not " || head.find(" not ") != head.npos) {
    return message.substr(colon + 2);
  }
  return message;
}

std::string PassLabel(std::string_view pass) {
  if (pass == "collective-pipeliner") return "pipeliner";
  if (pass == "double-buffer") return "double buffering";
  if (pass == "collective-hoist") return "hoist";
  return std::string(pass);
}

std::string_view KindSuffix(RemarkKind kind) {
  switch (kind) {
    case RemarkKind::kPassed:
      return "";
    case RemarkKind::kMissed:
      return " refused";
    case RemarkKind::kFailure:
      return " FAILED";
    case RemarkKind::kAnalysis:
      return " note";
    case RemarkKind::kWarning:
      return " warning";
  }
  return "";
}

std::optional<int64_t> MetricOf(const Remark& r, std::string_view key) {
  for (const auto& [k, v] : r.metrics) {
    if (k == key) return v;
  }
  return std::nullopt;
}

std::string Us(int64_t ns) { return absl::StrFormat("%.1f", ns / 1000.0); }

// Equal texts of one (pass, kind), counted, with an example instruction.
struct Group {
  std::string text;
  int64_t count = 0;
  std::string example;
};

struct Line {
  std::string label;  // "pipeliner refused"
  std::vector<Group> groups;
  bool missed = false;  // its groups name an example instruction
};

struct Bucket {
  std::string title;
  SourceLocation location;
  std::optional<int64_t> trip_count;
  std::vector<Line> lines;
  // Scheduler, per async collective pair.
  int64_t hidden = 0;
  int64_t pairs = 0;
  std::vector<const Remark*> exposed;
  bool empty() const { return lines.empty() && pairs == 0; }
};

void AddToBucket(const Remark& r, Bucket& b) {
  if (r.pass == kScheduler) {
    if (!MetricOf(r, "latency_ns").has_value()) return;  // per computation
    ++b.pairs;
    if (r.kind == RemarkKind::kPassed) {
      ++b.hidden;
    } else {
      b.exposed.push_back(&r);
    }
    return;
  }
  if (std::optional<int64_t> t = MetricOf(r, "trip_count")) {
    b.trip_count = std::max(b.trip_count.value_or(0), *t);
  }
  // A rewrite the user has to ask for is an opportunity, not a refusal.
  const std::string label =
      r.name == "ReductionDeferralNotEnabled"
          ? absl::StrCat(PassLabel(r.pass), " possible (opt-in, off)")
          : absl::StrCat(PassLabel(r.pass), AsAbsl(KindSuffix(r.kind)));
  std::string text = r.kind == RemarkKind::kPassed
                         ? WithoutNames(WithoutInstructionArgs(r))
                         : WithoutNames(Reason(r.message));
  if (r.kind == RemarkKind::kMissed && !r.opcode.empty() &&
      r.opcode != "while") {
    text = absl::StrCat(r.opcode, ": ", text);
  }
  auto line = std::find_if(b.lines.begin(), b.lines.end(),
                           [&](const Line& l) { return l.label == label; });
  if (line == b.lines.end()) {
    b.lines.push_back({label, {}, r.kind == RemarkKind::kMissed});
    line = b.lines.end() - 1;
  }
  auto g = std::find_if(line->groups.begin(), line->groups.end(),
                        [&](const Group& x) { return x.text == text; });
  if (g == line->groups.end()) {
    // The loop itself is in the title; an instruction is an example.
    line->groups.push_back(
        {text, 0, r.opcode == "while" ? std::string() : r.instruction});
    g = line->groups.end() - 1;
  }
  ++g->count;
}

void AppendBucket(const Bucket& b, std::string& out) {
  absl::StrAppend(&out, "  ", b.title);
  std::vector<std::string> facts;
  if (b.trip_count.has_value()) {
    facts.push_back(absl::StrCat("trip count ", *b.trip_count));
  }
  if (b.location.known()) {
    facts.push_back(absl::StrCat(b.location.file, ":", b.location.line));
  }
  if (!facts.empty()) {
    out += " (";
    for (size_t i = 0; i < facts.size(); ++i) {
      absl::StrAppend(&out, i ? "; " : "", facts[i]);
    }
    out += ")";
  }
  out += "\n";
  for (const Line& line : b.lines) {
    const std::string indent(line.label.size() + 6, ' ');
    for (size_t i = 0; i < line.groups.size(); ++i) {
      const Group& g = line.groups[i];
      absl::StrAppend(&out,
                      i == 0 ? absl::StrCat("    ", line.label, ": ") : indent,
                      g.count, "x ", g.text);
      if (line.missed && !g.example.empty()) {
        absl::StrAppend(&out, " (e.g. ", g.example, ")");
      }
      out += "\n";
    }
  }
  if (b.pairs > 0) {
    absl::StrAppend(&out, "    scheduler: ", b.hidden, " of ", b.pairs,
                    " async collectives hidden");
    if (!b.exposed.empty()) {
      out += "; exposed: ";
      for (size_t i = 0; i < b.exposed.size() && i < kMaxExposedListed; ++i) {
        const Remark& r = *b.exposed[i];
        absl::StrAppend(&out, i ? ", " : "", r.instruction, " ",
                        Us(MetricOf(r, "exposed_ns").value_or(0)), " of ",
                        Us(MetricOf(r, "latency_ns").value_or(0)), " us");
        std::string_view why = r.suggestion;
        why = why.substr(0, why.find(';'));
        if (!why.empty()) absl::StrAppend(&out, " (", AsAbsl(why), ")");
      }
      if (b.exposed.size() > kMaxExposedListed) {
        absl::StrAppend(&out, " and ", b.exposed.size() - kMaxExposedListed,
                        " more");
      }
    }
    out += "\n";
  }
}

}  // namespace

InputNames::InputNames(const Module& module) {
  for (const auto& comp : module.computations()) {
    names_.insert(comp->name());
    for (const auto& instr : comp->instructions()) {
      names_.insert(instr->name());
    }
  }
}

std::string InputNames::Map(std::string_view name) const {
  for (std::string_view prefix = name; !prefix.empty();) {
    if (names_.contains(AsAbsl(prefix))) return std::string(prefix);
    const size_t dot = prefix.rfind('.');
    if (dot == prefix.npos) break;
    prefix = prefix.substr(0, dot);
  }
  return std::string(name);
}

std::string InputNames::MapPath(std::string_view path) const {
  std::string out;
  while (true) {
    const size_t slash = path.find('/');
    out += Map(path.substr(0, slash));
    if (slash == path.npos) break;
    out += '/';
    path.remove_prefix(slash + 1);
  }
  return out;
}

std::string InputNames::MapText(std::string_view text) const {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = i;
    while (j < text.size() && IsNameChar(text[j])) ++j;
    if (j == i) {
      out.push_back(text[i++]);
      continue;
    }
    std::string_view word = text.substr(i, j - i);
    // A sentence's final '.' is not part of the word.
    while (!word.empty() && word.back() == '.') word.remove_suffix(1);
    if (word.empty()) {
      out.append(text.substr(i, j - i));
    } else {
      out += word.find('.') == word.npos ? std::string(word) : Map(word);
      out.append(text.substr(i + word.size(), j - i - word.size()));
    }
    i = j;
  }
  return out;
}

void MapRemarksToInput(const InputNames& names, RemarkSink& sink) {
  for (Remark& r : sink.mutable_remarks()) {
    r.instruction = names.Map(r.instruction);
    r.loop = names.MapPath(r.loop);
    for (RemarkArg& a : r.args) {
      if (a.type == RemarkArg::Type::kInstruction) a.text = names.Map(a.text);
      if (a.type == RemarkArg::Type::kLoop) a.text = names.MapPath(a.text);
    }
    // Text arguments name what the pass made (the module it returns has
    // them), so they stay.
    r.message = r.format.empty() ? names.MapText(r.message) : r.Render();
    r.suggestion = names.MapText(r.suggestion);
  }
}

std::vector<SummaryLoop> SummaryLoops(const Module& module) {
  LoopNest nest(module);
  std::vector<SummaryLoop> out;
  std::vector<const LoopNode*> stack(nest.roots().rbegin(),
                                     nest.roots().rend());
  while (!stack.empty()) {
    const LoopNode* n = stack.back();
    stack.pop_back();
    out.push_back({n->while_instr->name(), n->path, n->depth,
                   module.GetSourceLocation(n->while_instr->metadata())});
    for (auto it = n->children.rbegin(); it != n->children.rend(); ++it) {
      stack.push_back(*it);
    }
  }
  return out;
}

std::string RemarksSummary(const std::vector<Remark>& remarks,
                           const std::vector<SummaryLoop>& loops,
                           const std::string& remarks_file) {
  absl::flat_hash_map<std::string, size_t> by_name;
  std::vector<Bucket> buckets(loops.size());
  for (size_t i = 0; i < loops.size(); ++i) {
    by_name.emplace(loops[i].name, i);
    buckets[i].title = loops[i].path;
    buckets[i].location = loops[i].location;
  }
  // Paths that match no input loop, in order of appearance.
  std::vector<std::string> other_paths;
  std::vector<Bucket> others;
  Bucket outside;
  outside.title = "outside loops";
  auto bucket_of = [&](const std::string& path) -> Bucket& {
    if (path.empty()) return outside;
    std::string_view last = path;
    if (size_t slash = last.rfind('/'); slash != last.npos) {
      last.remove_prefix(slash + 1);
    }
    // The input loop whose name is the longest dotted prefix.
    for (std::string_view prefix = last; !prefix.empty();) {
      auto it = by_name.find(std::string(prefix));
      if (it != by_name.end()) return buckets[it->second];
      const size_t dot = prefix.rfind('.');
      if (dot == prefix.npos) break;
      prefix = prefix.substr(0, dot);
    }
    auto it = std::find(other_paths.begin(), other_paths.end(), path);
    if (it != other_paths.end()) return others[it - other_paths.begin()];
    other_paths.push_back(path);
    others.emplace_back();
    others.back().title = path;
    return others.back();
  };

  int64_t async_converted = 0;
  Line async_sync{"kept synchronous", {}};
  std::vector<const Remark*> module_lines;
  std::vector<const Remark*> failures;
  for (const Remark& r : remarks) {
    if (r.kind == RemarkKind::kFailure) failures.push_back(&r);
    if (r.pass == kLoopPolicy) continue;  // printed as warnings
    if (r.pass == kAsync) {
      if (r.kind == RemarkKind::kPassed) {
        ++async_converted;
        continue;
      }
      const std::string text = WithoutNames(r.message);
      auto g = std::find_if(async_sync.groups.begin(), async_sync.groups.end(),
                            [&](const Group& x) { return x.text == text; });
      if (g == async_sync.groups.end()) {
        async_sync.groups.push_back({text, 0, r.instruction});
        g = async_sync.groups.end() - 1;
      }
      ++g->count;
      continue;
    }
    if (r.name == "ScheduledModule") {
      module_lines.push_back(&r);
      continue;
    }
    if (r.pass == kScheduler && r.kind == RemarkKind::kAnalysis) continue;
    AddToBucket(r, bucket_of(r.loop));
  }

  std::string out = "summary per loop (input names, outermost first):\n";
  bool any = false;
  for (std::vector<Bucket>* list : {&buckets, &others}) {
    for (const Bucket& b : *list) {
      if (b.empty()) continue;
      AppendBucket(b, out);
      any = true;
    }
  }
  if (!outside.empty()) {
    AppendBucket(outside, out);
    any = true;
  }
  if (!any) out += "  no loop decisions\n";
  if (async_converted > 0 || !async_sync.groups.empty()) {
    absl::StrAppend(&out, "async conversion: ", async_converted,
                    " collectives to start/done pairs");
    for (const Group& g : async_sync.groups) {
      absl::StrAppend(&out, "; ", g.count, "x ", g.text);
    }
    out += "\n";
  }
  for (const Remark* r : module_lines) absl::StrAppend(&out, r->message, "\n");
  if (!failures.empty()) {
    absl::StrAppend(&out, "failures: ", failures.size(),
                    ", the first: ", failures[0]->pass, ": ",
                    failures[0]->message, "\n");
  }
  int64_t passed = 0, missed = 0, failed = 0, warnings = 0;
  for (const Remark& r : remarks) {
    switch (r.kind) {
      case RemarkKind::kPassed:
        ++passed;
        break;
      case RemarkKind::kMissed:
        ++missed;
        break;
      case RemarkKind::kFailure:
        ++failed;
        break;
      case RemarkKind::kWarning:
        ++warnings;
        break;
      case RemarkKind::kAnalysis:
        break;
    }
  }
  absl::StrAppend(&out, "remarks: ", passed, " passed, ", missed, " missed, ",
                  failed, " failures");
  if (warnings > 0) absl::StrAppend(&out, ", ", warnings, " warnings");
  if (!remarks_file.empty()) {
    absl::StrAppend(&out, "; all remarks in ", remarks_file);
  }
  out += "\n";
  return out;
}

}  // namespace hloverlap
