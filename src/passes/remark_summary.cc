// Per-loop summary of remarks (see remark_summary.h).
#include "passes/remark_summary.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/call_graph.h"
#include "analysis/module_summary.h"
#include "hlo/absl_compat.h"
#include "support/byte_size.h"

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

// A message with its names taken out: `text` has "..." where a name was
// (instruction-like dotted identifiers such as add.75.1, and the
// instruction arguments of a formatted message), so that the same reason
// about different instructions counts once; `names` are the names taken
// out, in order.
struct Masked {
  std::string text;
  std::vector<std::string> names;
};

// Instruction arguments arrive wrapped in kArgOpen/kArgClose (MaskedMessage).
constexpr char kArgOpen = '\x01';
constexpr char kArgClose = '\x02';

Masked MaskNames(std::string_view message) {
  Masked out;
  size_t i = 0;
  while (i < message.size()) {
    const char c = message[i];
    if (c == kArgOpen) {
      const size_t close = message.find(kArgClose, i);
      const size_t end = close == message.npos ? message.size() : close;
      out.names.emplace_back(message.substr(i + 1, end - i - 1));
      out.text += "...";
      i = close == message.npos ? end : end + 1;
      continue;
    }
    const bool starts_word =
        (std::isalpha(static_cast<unsigned char>(c)) || c == '_') &&
        (i == 0 || !IsNameChar(message[i - 1]));
    if (!starts_word) {
      out.text.push_back(c);
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
      out.text += "...";
      out.names.emplace_back(word);
    } else {
      out.text.append(word);
    }
    i += word.size();
  }
  return out;
}

// The message of a formatted remark with its instruction arguments marked
// for MaskNames.
std::string MarkedInstructionArgs(const Remark& r) {
  if (r.format.empty()) return r.message;
  Remark copy;
  copy.format = r.format;
  copy.args = r.args;
  for (RemarkArg& a : copy.args) {
    if (a.type == RemarkArg::Type::kInstruction) {
      a.text = absl::StrCat(std::string(1, kArgOpen), a.text,
                            std::string(1, kArgClose));
    }
  }
  return copy.Render();
}

constexpr size_t kMaxNamesListed = 8;

// "a, b, c and 4 more".
std::string NameList(const std::vector<std::string>& names,
                     size_t max = kMaxNamesListed) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < max; ++i) {
    absl::StrAppend(&out, i ? ", " : "", names[i]);
  }
  if (names.size() > max) {
    absl::StrAppend(&out, " and ", names.size() - max, " more");
  }
  return out;
}

void AddDistinct(std::vector<std::string>& list, const std::string& name) {
  if (std::find(list.begin(), list.end(), name) == list.end()) {
    list.push_back(name);
  }
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

// Equal texts of one (pass, kind), counted per input instruction: the
// instructions of the loop itself (`own`), and the copies in this loop of
// other loops' instructions (`copied`, made when those loops were
// rewritten: a peeled iteration, a prologue), apart.
struct Group {
  std::string text;     // with "..." for the names
  bool copies = false;  // a group of copies of other loops' instructions
  int64_t remarks = 0;
  // The distinct names of each "..." of `text`.
  std::vector<std::vector<std::string>> slots;
  // Distinct instructions (input names); for copies, each with the loop
  // it is copied from.
  std::vector<std::string> instructions;
  std::vector<std::pair<std::string, std::vector<std::string>>> from_loops;
};

// A new group of `masked` messages at the end of `groups`, a slot per
// "...".
std::vector<Group>::iterator AddGroup(std::vector<Group>& groups,
                                      const Masked& masked, bool copies) {
  Group& g = groups.emplace_back();
  g.text = masked.text;
  g.copies = copies;
  g.slots.resize(masked.names.size());
  return groups.end() - 1;
}

struct Line {
  std::string label;  // "pipeliner refused"
  std::vector<Group> groups;
};

struct Bucket {
  std::string title;
  std::string path;  // the input loop's path ("" outside loops)
  std::string role;  // LoopRole of its op_name
  SourceLocation location;
  std::optional<int64_t> trip_count;
  std::vector<Line> lines;
  // Scheduler, per async collective pair.
  int64_t hidden = 0;
  int64_t pairs = 0;
  std::vector<const Remark*> exposed;
  bool empty() const { return lines.empty() && pairs == 0; }
};

// Input instruction name -> the path of the input loop whose body holds it
// ("" outside every loop).
using Homes = absl::flat_hash_map<std::string, std::string>;

void AddToBucket(const Remark& r, const Homes& homes, Bucket& b) {
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
      : r.pass == kLoopPolicy
          ? std::string("policy")
          : absl::StrCat(PassLabel(r.pass), AsAbsl(KindSuffix(r.kind)));
  Masked masked = r.kind == RemarkKind::kPassed
                      ? MaskNames(MarkedInstructionArgs(r))
                      : MaskNames(Reason(r.message));
  const bool about_loop = r.opcode == "while" || r.instruction.empty();
  if (r.kind == RemarkKind::kMissed && !about_loop) {
    masked.text = absl::StrCat(r.opcode, ": ", masked.text);
  }
  // A copy: an instruction whose input home is another loop.
  std::string home = b.path;
  if (!about_loop) {
    if (auto it = homes.find(r.instruction); it != homes.end()) {
      home = it->second;
    }
  }
  const bool copy = home != b.path;
  auto line = std::find_if(b.lines.begin(), b.lines.end(),
                           [&](const Line& l) { return l.label == label; });
  if (line == b.lines.end()) {
    b.lines.push_back({label, {}});
    line = b.lines.end() - 1;
  }
  auto g = std::find_if(line->groups.begin(), line->groups.end(),
                        [&](const Group& x) {
                          return x.text == masked.text && x.copies == copy;
                        });
  if (g == line->groups.end()) g = AddGroup(line->groups, masked, copy);
  ++g->remarks;
  for (size_t i = 0; i < masked.names.size() && i < g->slots.size(); ++i) {
    AddDistinct(g->slots[i], masked.names[i]);
  }
  const std::string& instruction = about_loop ? b.path : r.instruction;
  AddDistinct(g->instructions, instruction);
  if (copy) {
    std::string_view from = home;
    if (size_t slash = from.rfind('/'); slash != from.npos) {
      from.remove_prefix(slash + 1);
    }
    const std::string from_name =
        from.empty() ? std::string("outside loops") : std::string(from);
    auto f = std::find_if(g->from_loops.begin(), g->from_loops.end(),
                          [&](const auto& x) { return x.first == from_name; });
    if (f == g->from_loops.end()) {
      g->from_loops.push_back({from_name, {}});
      f = g->from_loops.end() - 1;
    }
    AddDistinct(f->second, r.instruction);
  }
}

// The group's text with its names back: one name as it is, several as
// {a, b, c}.
std::string FilledText(const Group& g) {
  std::string out;
  size_t slot = 0;
  for (size_t i = 0; i < g.text.size();) {
    if (g.text.compare(i, 3, "...") == 0 && slot < g.slots.size()) {
      const std::vector<std::string>& names = g.slots[slot++];
      out += names.size() == 1 ? names[0]
                               : absl::StrCat("{", NameList(names, 4), "}");
      i += 3;
      continue;
    }
    out.push_back(g.text[i++]);
  }
  return out;
}

// "4x prefetched all-gather 1 iteration ahead [all-gather, all-gather.1]"
// for the loop's own instructions; copies of other loops' instructions
// are labelled as copies, counted per input instruction.
std::string GroupText(const Group& g, std::string_view loop_path) {
  const bool about_loop =
      g.instructions.size() == 1 && g.instructions[0] == loop_path;
  const int64_t distinct = static_cast<int64_t>(g.instructions.size());
  std::string out = absl::StrCat(distinct, "x ", FilledText(g));
  if (g.copies) {
    absl::StrAppend(&out, ", on ", g.remarks,
                    g.remarks == 1 ? " copy" : " copies",
                    " of other loops' instructions, made when those loops "
                    "were rewritten [");
    for (size_t i = 0; i < g.from_loops.size(); ++i) {
      absl::StrAppend(&out, i ? "; " : "", "of ", g.from_loops[i].first, ": ",
                      NameList(g.from_loops[i].second));
    }
    out += "]";
    return out;
  }
  if (!about_loop && !g.instructions.empty()) {
    absl::StrAppend(&out, " [", NameList(g.instructions), "]");
  }
  if (g.remarks > distinct) {
    absl::StrAppend(&out, " (+", g.remarks - distinct, " on copies of ",
                    about_loop ? "the loop" : "them", ")");
  }
  return out;
}

void AppendBucket(const Bucket& b, std::string& out) {
  absl::StrAppend(&out, "  ", b.title);
  std::vector<std::string> facts;
  if (!b.role.empty()) facts.push_back(b.role);
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
      absl::StrAppend(&out,
                      i == 0 ? absl::StrCat("    ", line.label, ": ") : indent,
                      GroupText(line.groups[i], b.path), "\n");
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

std::string LoopRole(std::string_view op_name) {
  if (op_name.empty()) return "";
  // JAX names every loop `while` (a fori_loop with static bounds is a
  // scan); autodiff wraps the loops of the forward pass in jvp(...) and
  // those of the backward pass in transpose(jvp(...)).
  std::string_view primitive = op_name;
  if (size_t slash = primitive.rfind('/'); slash != primitive.npos) {
    primitive.remove_prefix(slash + 1);
  }
  const std::string kind = primitive == "while" ? std::string("scan/fori_loop")
                                                : std::string(primitive);
  const size_t transpose = op_name.rfind("transpose(");
  const size_t jvp = op_name.rfind("jvp(");
  std::string role;
  if (transpose != op_name.npos && (jvp == op_name.npos || jvp > transpose)) {
    role = absl::StrCat(kind, ", backward (transpose(jvp))");
  } else if (jvp != op_name.npos) {
    role = absl::StrCat(kind, ", forward (jvp)");
  } else {
    role = kind;
  }
  if (op_name.find("checkpoint") != op_name.npos ||
      op_name.find("remat") != op_name.npos) {
    role += ", rematerialized";
  }
  return role;
}

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
    SummaryLoop& loop = out.emplace_back();
    loop.name = n->while_instr->name();
    loop.path = n->path;
    loop.depth = n->depth;
    loop.location = module.GetSourceLocation(n->while_instr->metadata());
    loop.op_name = std::string(n->while_instr->metadata().op_name);
    // The instructions of the body and condition, and of what they call,
    // nested loops' bodies excepted (those are their loops').
    std::vector<const Computation*> todo(
        n->while_instr->called_computations().begin(),
        n->while_instr->called_computations().end());
    absl::flat_hash_set<const Computation*> seen(todo.begin(), todo.end());
    while (!todo.empty()) {
      const Computation* c = todo.back();
      todo.pop_back();
      for (const auto& instr : c->instructions()) {
        loop.instructions.push_back(instr->name());
        if (instr->opcode() == Opcode::kWhile) continue;
        for (const Computation* callee : instr->called_computations()) {
          if (seen.insert(callee).second) todo.push_back(callee);
        }
      }
    }
    for (auto it = n->children.rbegin(); it != n->children.rend(); ++it) {
      stack.push_back(*it);
    }
  }
  return out;
}

namespace {

// The summary's count line: passed, missed, failures (and warnings), and
// where all remarks are.
void AppendRemarkCounts(const std::vector<Remark>& remarks,
                        const std::string& remarks_file, std::string& out) {
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
}

}  // namespace

std::string RemarksSummary(const std::vector<Remark>& remarks,
                           const std::vector<SummaryLoop>& loops,
                           const std::string& remarks_file) {
  absl::flat_hash_map<std::string, size_t> by_name;
  std::vector<Bucket> buckets(loops.size());
  Homes homes;
  for (size_t i = 0; i < loops.size(); ++i) {
    by_name.emplace(loops[i].name, i);
    buckets[i].title = loops[i].path;
    buckets[i].path = loops[i].path;
    buckets[i].role = LoopRole(loops[i].op_name);
    buckets[i].location = loops[i].location;
    // Outermost first: an inner loop's claim on a shared callee wins.
    for (const std::string& name : loops[i].instructions) {
      homes[name] = loops[i].path;
    }
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
    others.back().path = path;
    return others.back();
  };

  int64_t async_converted = 0;
  Line async_sync{"kept synchronous", {}};
  std::vector<const Remark*> module_lines;
  std::vector<const Remark*> failures;
  for (const Remark& r : remarks) {
    if (r.kind == RemarkKind::kFailure) failures.push_back(&r);
    // Selector warnings are printed as warnings; the attributes' decisions
    // are the loop's.
    if (r.pass == kLoopPolicy && r.kind == RemarkKind::kWarning) continue;
    if (r.pass == kAsync) {
      if (r.kind == RemarkKind::kPassed) {
        ++async_converted;
        continue;
      }
      const Masked masked = MaskNames(r.message);
      auto g =
          std::find_if(async_sync.groups.begin(), async_sync.groups.end(),
                       [&](const Group& x) { return x.text == masked.text; });
      if (g == async_sync.groups.end()) {
        g = AddGroup(async_sync.groups, masked, /*copies=*/false);
      }
      ++g->remarks;
      for (size_t i = 0; i < masked.names.size() && i < g->slots.size(); ++i) {
        AddDistinct(g->slots[i], masked.names[i]);
      }
      AddDistinct(g->instructions, r.instruction);
      continue;
    }
    if (r.name == "ScheduledModule") {
      module_lines.push_back(&r);
      continue;
    }
    if (r.pass == kScheduler && r.kind == RemarkKind::kAnalysis) continue;
    AddToBucket(r, homes, bucket_of(r.loop));
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
      absl::StrAppend(&out, "; ", GroupText(g, ""));
    }
    out += "\n";
  }
  // The step is the summary's last lines' (StepComparisonText), once.
  for (const Remark* r : module_lines) {
    auto metric = [&](std::string_view key) {
      for (const auto& [k, v] : r->metrics) {
        if (k == key) return v;
      }
      return int64_t{0};
    };
    absl::StrAppend(&out, "scheduler: ", metric("overlapped"), " of ",
                    metric("async_collectives"),
                    " async collectives overlapped (module ", r->instruction,
                    ")\n");
  }
  if (!failures.empty()) {
    absl::StrAppend(&out, "failures: ", failures.size(),
                    ", the first: ", failures[0]->pass, ": ",
                    failures[0]->message, "\n");
  }
  AppendRemarkCounts(remarks, remarks_file, out);
  out += "\n";
  return out;
}

std::string StepComparisonText(const StepPrediction& input,
                               const StepPrediction& output,
                               std::optional<int64_t> memory_budget) {
  auto ms = [](double us) { return absl::StrFormat("%.3f ms", us / 1e3); };
  auto time_line = [&](std::string_view what, double a, double b,
                       bool percent) {
    std::string line = absl::StrFormat("  %-22s %11s -> %11s (%+.3f ms", what,
                                       ms(a), ms(b), (b - a) / 1e3);
    if (percent && a > 0) {
      absl::StrAppend(&line, absl::StrFormat(", %+.1f%%", 100 * (b - a) / a));
    }
    return line + ")\n";
  };
  std::string out =
      "predicted (simulator, as `hloverlap sim`): input -> output\n";
  out += time_line("step", input.step_us, output.step_us, true);
  out += time_line("exposed communication", input.exposed_communication_us,
                   output.exposed_communication_us, false);
  const int64_t growth = output.peak_memory_bytes - input.peak_memory_bytes;
  absl::StrAppend(
      &out,
      absl::StrFormat("  %-22s %11s -> %11s (%s%s", "peak memory",
                      HumanBytes(input.peak_memory_bytes),
                      HumanBytes(output.peak_memory_bytes),
                      growth < 0 ? "-" : "+", HumanBytes(std::abs(growth))));
  if (memory_budget.has_value()) {
    absl::StrAppend(&out, growth <= *memory_budget ? "; within" : "; over",
                    " --memory-budget ", HumanBytes(*memory_budget));
  }
  out += ")\n";
  return out;
}

}  // namespace hloverlap
