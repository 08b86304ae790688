#include "passes/route_fixups.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/absl_compat.h"
#include "hlo/parser.h"
#include "hlo/raw_attribute_check.h"
#include "passes/pass_registry.h"
#include "passes/remarks.h"

namespace hloverlap {
namespace {

// The array-shaped copies of `computation` without control edges.
std::vector<Instruction*> RewritableCopies(const Computation& computation) {
  std::vector<Instruction*> out;
  for (const auto& instr : computation.instructions()) {
    if (instr->opcode() == Opcode::kCopy && instr->shape().IsArray() &&
        instr->control_predecessors().empty() &&
        instr->control_successors().empty()) {
      out.push_back(instr.get());
    }
  }
  return out;
}

// The header attribute `name` of `module`, or nullptr.
RawAttribute* HeaderAttribute(Module& module, std::string_view name) {
  for (RawAttribute& a : module.raw_header_attributes()) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

// Takes `prefix` off the front (`suffix` off the back) of `s` if it is
// there.
bool ConsumePrefix(std::string_view& s, std::string_view prefix) {
  if (!s.starts_with(prefix)) return false;
  s.remove_prefix(prefix.size());
  return true;
}
bool ConsumeSuffix(std::string_view& s, std::string_view suffix) {
  if (!s.ends_with(suffix)) return false;
  s.remove_suffix(suffix.size());
  return true;
}

std::string WithoutSpaces(std::string_view s) {
  std::string out(s);
  std::erase(out, ' ');
  return out;
}

// entry_computation_layout={(P0, P1, ...)->R}: the parameters' shapes and
// the outputs' (R's elements when R is a tuple, else R alone).
struct EntryLayout {
  std::vector<std::string> parameters;  // Shape::ToString(), layouts kept
  std::vector<std::string> outputs;
  bool tuple_result = false;
};

std::optional<EntryLayout> ReadEntryLayout(std::string_view text) {
  if (!ConsumePrefix(text, "{") || !ConsumeSuffix(text, "}")) {
    return std::nullopt;
  }
  // The arrow outside every bracket (a shape holds none).
  size_t arrow = text.find("->");
  if (arrow == std::string_view::npos) return std::nullopt;
  absl::StatusOr<Shape> params = ParseShape(text.substr(0, arrow));
  absl::StatusOr<Shape> result = ParseShape(text.substr(arrow + 2));
  if (!params.ok() || !result.ok() || !params->IsTuple()) return std::nullopt;
  EntryLayout layout;
  for (const Shape& p : params->tuple_shapes()) {
    layout.parameters.push_back(p.ToString());
  }
  layout.tuple_result = result->IsTuple();
  if (layout.tuple_result) {
    for (const Shape& r : result->tuple_shapes()) {
      layout.outputs.push_back(r.ToString());
    }
  } else {
    layout.outputs.push_back(result->ToString());
  }
  return layout;
}

// `<@mesh, [{"x"}, {}]>` of a Shardy sharding, spaces dropped and the
// `#sdy.sharding` prefix taken off, so that equal shardings compare equal.
std::string ShardyKey(std::string_view sharding) {
  std::string key = WithoutSpaces(sharding);
  std::string_view view = key;
  ConsumePrefix(view, "#sdy.sharding");
  return std::string(view);
}

// The entries of `#sdy.sharding_per_value<[A, B, ...]>`, each a ShardyKey;
// empty when the text is not that.
std::vector<std::string> ShardyPerValue(std::string_view text) {
  std::string compact = WithoutSpaces(text);
  std::string_view view = compact;
  if (!ConsumePrefix(view, "#sdy.sharding_per_value<[") ||
      !ConsumeSuffix(view, "]>")) {
    return {};
  }
  std::vector<std::string> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= view.size(); ++i) {
    char c = i < view.size() ? view[i] : ',';
    if (c == '(' || c == '[' || c == '{' || c == '<') ++depth;
    if (c == ')' || c == ']' || c == '}' || c == '>') --depth;
    if (c == ',' && depth == 0) {
      if (i > start) out.push_back(ShardyKey(view.substr(start, i - start)));
      start = i + 1;
    }
  }
  return out;
}

std::optional<std::string> FrontendValue(const Instruction& instr,
                                         std::string_view key) {
  const FrontendAttribute* a =
      FindFrontendAttribute(instr.attrs().frontend_attributes.value(), key);
  if (a == nullptr) return std::nullopt;
  return a->value;
}

// match=shardy: the Shardy sharding of each ENTRY parameter, and of each
// output that is a get-tuple-element of an xla.sdy.LocalToGlobalShape
// custom-call (the shard_map lowering's results); what is not there has no
// key and is never aliased.
struct ShardyKeys {
  absl::flat_hash_map<int64_t, std::string> parameters;
  absl::flat_hash_map<int64_t, std::string> outputs;
};

ShardyKeys ReadShardyKeys(const Computation& entry) {
  ShardyKeys keys;
  for (const auto& instr : entry.instructions()) {
    if (instr->opcode() != Opcode::kParameter) continue;
    if (auto v = FrontendValue(*instr, "xla.sdy.sharding")) {
      keys.parameters[instr->parameter_number()] = ShardyKey(*v);
    }
  }
  const Instruction* root = entry.root();
  if (root == nullptr || root->opcode() != Opcode::kTuple) return keys;
  for (int64_t j = 0; j < root->operand_count(); ++j) {
    const Instruction* gte = root->operand(j);
    if (gte->opcode() != Opcode::kGetTupleElement) continue;
    const Instruction* call = gte->operand(0);
    if (call->opcode() != Opcode::kCustomCall ||
        call->attrs().custom_call_target.value() !=
            "xla.sdy.LocalToGlobalShape") {
      continue;
    }
    std::optional<std::string> per =
        FrontendValue(*call, "xla.sdy.out_shardings");
    std::vector<std::string> values = ShardyPerValue(per.value_or(""));
    if (gte->tuple_index() < static_cast<int64_t>(values.size())) {
      keys.outputs[j] = values[gte->tuple_index()];
    }
  }
  return keys;
}

std::string IndexText(const std::vector<int64_t>& index) {
  return absl::StrCat("{", absl::StrJoin(index, ","), "}");
}

}  // namespace

absl::StatusOr<bool> CopyToReshapePass::Run(Module& module,
                                            PassContext& context) {
  bool changed = false;
  for (const auto& computation : module.computations()) {
    for (Instruction* copy : RewritableCopies(*computation)) {
      Remark r;
      r.pass = std::string(name());
      r.kind = RemarkKind::kPassed;
      r.name = "CopyAsReshape";
      DescribeInstruction(*copy, module, r);
      r.message =
          absl::StrCat("copy ", copy->name(), " -> reshape (value identity)");
      auto reshape = std::make_unique<Instruction>(
          Opcode::kReshape, copy->name(), copy->shared_shape());
      reshape->CopyAttributesFrom(*copy);
      reshape->AppendOperand(copy->operand(0));
      Instruction* added =
          computation->AddInstruction(std::move(reshape), copy);
      absl::Status s = copy->ReplaceAllUsesWith(added);
      if (s.ok()) s = computation->RemoveInstruction(copy);
      if (!s.ok()) {
        return absl::InternalError(
            absl::StrCat("copy-to-reshape: computation ", computation->name(),
                         ", instruction ", added->name(), ": ", s.message()));
      }
      context.remarks.Emit(std::move(r));
      changed = true;
    }
  }
  return changed;
}

absl::StatusOr<bool> StripShardingsPass::Run(Module& module,
                                             PassContext& context) {
  bool changed = false;
  for (const auto& computation : module.computations()) {
    for (const auto& instr : computation->instructions()) {
      if (instr->attrs().sharding.empty()) continue;
      instr->mutable_attrs().sharding = std::string();
      changed = true;
    }
  }
  return changed;
}

absl::StatusOr<bool> StripBufferDonorPass::Run(Module& module,
                                               PassContext& context) {
  return std::erase_if(module.raw_header_attributes(),
                       [](const RawAttribute& a) {
                         return a.name == "buffer_donor" ||
                                a.name == "input_output_alias";
                       }) > 0;
}

absl::StatusOr<bool> DonorsToAliasesPass::Run(Module& module,
                                              PassContext& context) {
  RawAttribute* donor_attr = HeaderAttribute(module, "buffer_donor");
  std::optional<EntryLayout> layout =
      ReadEntryLayout(module.entry_computation_layout());
  if (donor_attr == nullptr || !layout || module.entry() == nullptr) {
    return false;
  }
  std::vector<AliasEntry> donors, existing;
  if (CheckBufferDonor(donor_attr->value, &donors)) return false;
  RawAttribute* alias_attr = HeaderAttribute(module, "input_output_alias");
  if (alias_attr && CheckInputOutputAlias(alias_attr->value, &existing)) {
    return false;
  }
  // Outputs by their index in the result tuple; -1: the whole result.
  auto output_key = [&](size_t j) -> int64_t {
    return layout->tuple_result ? static_cast<int64_t>(j) : -1;
  };
  absl::flat_hash_set<int64_t> used;
  for (const AliasEntry& e : existing) {
    used.insert(e.output_index.empty() ? -1 : e.output_index.front());
  }
  const bool shardy = context.options.donor_match == "shardy";
  const ShardyKeys keys =
      shardy ? ReadShardyKeys(*module.entry()) : ShardyKeys();
  auto same_sharding = [&](size_t j, int64_t p) {
    if (!shardy) return true;
    auto out = keys.outputs.find(static_cast<int64_t>(j));
    auto param = keys.parameters.find(p);
    return out != keys.outputs.end() && param != keys.parameters.end() &&
           out->second == param->second;
  };
  std::vector<std::string> kept, added;
  for (const AliasEntry& donor : donors) {
    const int64_t p = donor.parameter;
    std::optional<int64_t> match;
    if (donor.parameter_index.empty() && p >= 0 &&
        p < static_cast<int64_t>(layout->parameters.size())) {
      for (size_t j = 0; j < layout->outputs.size() && !match; ++j) {
        if (!used.contains(output_key(j)) &&
            layout->outputs[j] == layout->parameters[p] &&
            same_sharding(j, p)) {
          match = output_key(j);
        }
      }
    }
    if (!match) {
      kept.push_back(
          absl::StrCat("(", p, ", ", IndexText(donor.parameter_index), ")"));
      continue;
    }
    used.insert(*match);
    std::string out = *match < 0 ? "{}" : absl::StrCat("{", *match, "}");
    added.push_back(absl::StrCat(out, ": (", p, ", {}, may-alias)"));
    Remark r;
    r.pass = std::string(name());
    r.kind = RemarkKind::kPassed;
    r.name = "DonorAliased";
    r.message = absl::StrCat("buffer donor parameter ", p, " -> output ", out,
                             " (may-alias)");
    r.metrics = {{"output", *match}, {"parameter", p}};
    context.remarks.Emit(std::move(r));
  }
  if (added.empty()) return false;
  // The existing entries as written, then the new ones.
  std::string entries;
  if (alias_attr != nullptr) {
    std::string_view inner = alias_attr->value;
    ConsumePrefix(inner, "{");
    ConsumeSuffix(inner, "}");
    inner = AsStd(absl::StripAsciiWhitespace(AsAbsl(inner)));
    ConsumeSuffix(inner, ",");
    entries = std::string(absl::StripAsciiWhitespace(AsAbsl(inner)));
  }
  for (const std::string& a : added) {
    absl::StrAppend(&entries, entries.empty() ? "" : ", ", a);
  }
  const std::string aliases = absl::StrCat("{ ", entries, " }");
  // Pointers into the attribute vector are stale after an erase: set the
  // aliases first, then keep or drop the donors.
  if (alias_attr != nullptr) {
    alias_attr->value = aliases;
  } else {
    module.raw_header_attributes().push_back({"input_output_alias", aliases});
  }
  if (kept.empty()) {
    std::erase_if(module.raw_header_attributes(), [](const RawAttribute& a) {
      return a.name == "buffer_donor";
    });
  } else {
    HeaderAttribute(module, "buffer_donor")->value =
        absl::StrCat("{ ", absl::StrJoin(kept, ", "), " }");
  }
  return true;
}

// Registration (passes/pass_registry.h).
void RegisterRouteFixupPasses(PassRegistry& registry) {
  registry.Add<CopyToReshapePass>(
      "array-shaped copy -> same-dimensions reshape (the StableHLO route "
      "has no copy)");
  registry.Add<StripShardingsPass>(
      "drop every instruction's sharding (a partitioned module compiled with "
      "partitioning off)");
  registry.Add<StripBufferDonorPass>(
      "drop the header's buffer_donor and input_output_alias (a compile "
      "without donation)");
  registry.Add<DonorsToAliasesPass>(
      "buffer donors -> may-alias input/output aliases where an output has "
      "the donor's shape and layout (XLA's own step before buffer "
      "assignment; the StableHLO route keeps only aliases)",
      {PassOptionInfo::Enum(
          "match", &PassOptions::donor_match, {"layout", "shardy"},
          "what an output must share with its donor: shape and layout, or "
          "also the Shardy sharding (a module before partitioning)")});
}

}  // namespace hloverlap
