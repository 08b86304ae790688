#include "interp/collectives.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/computation.h"
#include "hlo/opcode_traits.h"
#include "interp/elementwise.h"
#include "interp/errors.h"
#include "interp/shape_ops.h"

namespace hloverlap::interp {
namespace {

bool UsesGlobalDeviceIdsField(Opcode op) {
  switch (op) {
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kReduceScatter:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::string_view CollectiveGroupModeName(CollectiveGroupMode mode) {
  switch (mode) {
    case CollectiveGroupMode::kCrossReplica:
      return "cross-replica";
    case CollectiveGroupMode::kCrossPartition:
      return "cross-partition";
    case CollectiveGroupMode::kCrossReplicaAndPartition:
      return "cross-replica-and-partition";
    case CollectiveGroupMode::kFlattenedId:
      return "flattened-id";
  }
  return "?";
}

absl::StatusOr<CollectiveGroupMode> GetCollectiveGroupMode(
    const Instruction& instr) {
  const InstructionAttributes& a = instr.attrs();
  const bool has_channel = a.channel_id.has_value();
  if (UsesGlobalDeviceIdsField(instr.opcode())) {
    if (!has_channel) {
      if (a.use_global_device_ids) {
        return Invalid(absl::StrCat(
            "use_global_device_ids=true without channel_id in ", instr.name()));
      }
      return CollectiveGroupMode::kCrossReplica;
    }
    return a.use_global_device_ids
               ? CollectiveGroupMode::kFlattenedId
               : CollectiveGroupMode::kCrossReplicaAndPartition;
  }
  return has_channel ? CollectiveGroupMode::kCrossPartition
                     : CollectiveGroupMode::kCrossReplica;
}

absl::StatusOr<std::vector<int64_t>> GetParticipants(
    const Instruction& instr, const DeviceTopology& topology, int64_t device) {
  absl::StatusOr<CollectiveGroupMode> mode = GetCollectiveGroupMode(instr);
  if (!mode.ok()) return mode.status();
  const ReplicaGroups& rg = instr.attrs().replica_groups;
  std::optional<std::vector<std::vector<int64_t>>> groups =
      rg.present() ? rg.Groups() : std::vector<std::vector<int64_t>>{};
  if (!groups.has_value()) {
    return Invalid(absl::StrCat("cannot expand replica_groups=", rg.ToString(),
                                " of ", instr.name()));
  }
  const int64_t R = topology.replica_count, P = topology.num_partitions;
  const int64_t my_r = topology.replica_of(device);
  const int64_t my_p = topology.partition_of(device);
  int64_t id_space;  // the ids the groups list
  int64_t my_id;
  switch (*mode) {
    case CollectiveGroupMode::kCrossReplica:
    case CollectiveGroupMode::kCrossReplicaAndPartition:
      id_space = R;
      my_id = my_r;
      break;
    case CollectiveGroupMode::kCrossPartition:
      id_space = P;
      my_id = my_p;
      break;
    case CollectiveGroupMode::kFlattenedId:
    default:
      id_space = R * P;
      my_id = device;
      break;
  }
  std::vector<int64_t> group;
  if (groups->empty()) {
    for (int64_t i = 0; i < id_space; ++i) group.push_back(i);
  } else {
    int found = 0;
    for (const auto& g : *groups) {
      for (int64_t id : g) {
        if (id < 0 || id >= id_space) {
          return Invalid(absl::StrCat(
              "replica group ", GroupString(g), " of ", instr.name(),
              " names id ", id, ", but there are only ", id_space, " ",
              *mode == CollectiveGroupMode::kCrossPartition ? "partitions"
              : *mode == CollectiveGroupMode::kFlattenedId  ? "devices"
                                                            : "replicas",
              " (", std::string(CollectiveGroupModeName(*mode)), " mode, ", R,
              " replicas x ", P, " partitions)"));
        }
        if (id == my_id) {
          ++found;
          group = g;
        }
      }
    }
    if (found != 1) {
      return Invalid(absl::StrCat(
          "device ", device, " (replica ", my_r, ", partition ", my_p,
          ") appears ", found, " times in replica_groups=", rg.ToString(),
          " of ", instr.name(), " (",
          std::string(CollectiveGroupModeName(*mode)), " mode)"));
    }
  }
  std::vector<int64_t> out;
  switch (*mode) {
    case CollectiveGroupMode::kCrossReplica:
      for (int64_t r : group) out.push_back(topology.device_id(r, my_p));
      break;
    case CollectiveGroupMode::kCrossPartition:
      for (int64_t p : group) out.push_back(topology.device_id(my_r, p));
      break;
    case CollectiveGroupMode::kCrossReplicaAndPartition:
      for (int64_t r : group) {
        for (int64_t p = 0; p < P; ++p) out.push_back(topology.device_id(r, p));
      }
      break;
    case CollectiveGroupMode::kFlattenedId:
      out = group;
      break;
  }
  std::vector<int64_t> sorted = out;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    return Invalid(absl::StrCat("replica group ", GroupString(group), " of ",
                                instr.name(), " lists a device twice"));
  }
  return out;
}

absl::StatusOr<PermutePlan> GetPermutePlan(const Instruction& instr,
                                           const DeviceTopology& topology,
                                           int64_t device) {
  const bool cross_partition = instr.attrs().channel_id.has_value();
  const int64_t my_r = topology.replica_of(device);
  const int64_t my_p = topology.partition_of(device);
  PermutePlan plan;
  const int64_t n =
      cross_partition ? topology.num_partitions : topology.replica_count;
  for (int64_t i = 0; i < n; ++i) {
    plan.domain.push_back(cross_partition ? topology.device_id(my_r, i)
                                          : topology.device_id(i, my_p));
  }
  const int64_t me = cross_partition ? my_p : my_r;
  std::vector<bool> seen_source(n, false), seen_target(n, false);
  for (const auto& [s, t] : instr.attrs().source_target_pairs) {
    if (s < 0 || s >= n || t < 0 || t >= n) {
      return Invalid(
          absl::StrCat("source_target_pairs of ", instr.name(), " names {", s,
                       ",", t, "}, but there are only ", n,
                       cross_partition ? " partitions" : " replicas"));
    }
    if (seen_source[s] || seen_target[t]) {
      return Invalid(absl::StrCat("source_target_pairs of ", instr.name(),
                                  " use ",
                                  seen_source[s] ? "source " : "target ",
                                  seen_source[s] ? s : t, " twice"));
    }
    seen_source[s] = seen_target[t] = true;
    if (t == me) plan.source = s;
  }
  return plan;
}

namespace {

// "{{0,1},{1,2}}" (spaces allowed) as pairs; nullopt when malformed.
std::optional<std::vector<std::pair<int64_t, int64_t>>> ParsePairList(
    std::string_view text) {
  std::vector<int64_t> nums;
  int depth = 0;
  size_t i = 0;
  std::vector<int64_t> current;
  while (i < text.size()) {
    const char c = text[i];
    if (c == ' ' || c == '\n' || c == '\t' || c == ',') {
      ++i;
    } else if (c == '{') {
      if (++depth > 2) return std::nullopt;
      current.clear();
      ++i;
    } else if (c == '}') {
      if (depth == 2) {
        if (current.size() != 2) return std::nullopt;
        nums.insert(nums.end(), current.begin(), current.end());
      }
      if (--depth < 0) return std::nullopt;
      ++i;
    } else if (c >= '0' && c <= '9') {
      if (depth != 2) return std::nullopt;
      int64_t v = 0;
      while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
        if (v > (int64_t{1} << 40)) return std::nullopt;
        v = v * 10 + (text[i] - '0');
        ++i;
      }
      current.push_back(v);
    } else {
      return std::nullopt;
    }
  }
  if (depth != 0) return std::nullopt;
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (size_t k = 0; k + 1 < nums.size(); k += 2) {
    pairs.emplace_back(nums[k], nums[k + 1]);
  }
  return pairs;
}

bool IsHostTransfer(const Instruction& instr) {
  for (const RawAttribute& a : instr.attrs().raw) {
    if (a.name == "is_host_transfer") return a.value == "true";
  }
  return false;
}

constexpr std::string_view kSendRecvPairsKey =
    "_xla_send_recv_source_target_pairs";

}  // namespace

absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> GetSendRecvPairs(
    const Instruction& instr, int64_t n) {
  if (IsHostTransfer(instr)) {
    return Invalid(absl::StrCat(
        instr.name(),
        " is a host transfer (is_host_transfer=true): the interpreter "
        "simulates no host"));
  }
  if (!instr.attrs().channel_id.has_value()) {
    return Invalid(absl::StrCat(instr.name(), " has no channel_id"));
  }
  const FrontendAttribute* attr = FindFrontendAttribute(
      instr.attrs().frontend_attributes, kSendRecvPairsKey);
  if (attr == nullptr) {
    return Invalid(absl::StrCat(
        instr.name(), " has no frontend attribute ",
        std::string(kSendRecvPairsKey),
        " (e.g. \"{{0,1},{1,2}}\"): the interpreter cannot tell which "
        "devices it connects"));
  }
  std::optional<std::vector<std::pair<int64_t, int64_t>>> pairs =
      ParsePairList(attr->value);
  if (!pairs.has_value()) {
    return Invalid(absl::StrCat(
        instr.name(), ": cannot read ", std::string(kSendRecvPairsKey), "=\"",
        attr->value, "\" (expected pairs like {{0,1},{1,2}})"));
  }
  std::vector<bool> seen_source(n, false), seen_target(n, false);
  for (const auto& [s, t] : *pairs) {
    if (s < 0 || s >= n || t < 0 || t >= n) {
      return Invalid(
          absl::StrCat(std::string(kSendRecvPairsKey), " of ", instr.name(),
                       " names {", s, ",", t, "}, but there are only ", n,
                       " partitions (give the device count with --devices)"));
    }
    if (seen_source[s] || seen_target[t]) {
      return Invalid(absl::StrCat(std::string(kSendRecvPairsKey), " of ",
                                  instr.name(), " use ",
                                  seen_source[s] ? "source " : "target ",
                                  seen_source[s] ? s : t, " twice"));
    }
    seen_source[s] = seen_target[t] = true;
  }
  return *std::move(pairs);
}

NamedIds MaxNamedIds(const Instruction& instr) {
  NamedIds ids;
  auto note = [](int64_t id, int64_t& max, const Instruction*& at,
                 const Instruction* i) {
    if (id + 1 > max) {
      max = id + 1;
      at = i;
    }
  };
  const Opcode op = instr.opcode();
  const bool channel = instr.attrs().channel_id.has_value();
  if (op == Opcode::kSend || op == Opcode::kRecv) {
    const FrontendAttribute* attr = FindFrontendAttribute(
        instr.attrs().frontend_attributes, kSendRecvPairsKey);
    if (attr == nullptr) return ids;
    std::optional<std::vector<std::pair<int64_t, int64_t>>> pairs =
        ParsePairList(attr->value);
    if (!pairs.has_value()) return ids;
    for (const auto& [s, t] : *pairs) {
      note(std::max(s, t), ids.partitions, ids.partitions_at, &instr);
    }
    return ids;
  }
  if (op == Opcode::kCollectivePermute ||
      op == Opcode::kCollectivePermuteStart) {
    for (const auto& [s, t] : instr.attrs().source_target_pairs) {
      if (channel) {
        note(std::max(s, t), ids.partitions, ids.partitions_at, &instr);
      } else {
        note(std::max(s, t), ids.replicas, ids.replicas_at, &instr);
      }
    }
    return ids;
  }
  if (!IsCollective(op) || !instr.attrs().replica_groups.value().present()) {
    return ids;
  }
  absl::StatusOr<CollectiveGroupMode> mode = GetCollectiveGroupMode(instr);
  if (!mode.ok()) return ids;
  std::optional<std::vector<std::vector<int64_t>>> groups =
      instr.attrs().replica_groups.value().Groups();
  if (!groups.has_value()) return ids;
  for (const auto& g : *groups) {
    for (int64_t id : g) {
      switch (*mode) {
        case CollectiveGroupMode::kCrossPartition:
          note(id, ids.partitions, ids.partitions_at, &instr);
          break;
        case CollectiveGroupMode::kFlattenedId:
          note(id, ids.devices, ids.devices_at, &instr);
          break;
        default:
          note(id, ids.replicas, ids.replicas_at, &instr);
          break;
      }
    }
  }
  return ids;
}

std::string DescribeCollective(const Instruction* instr) {
  if (instr == nullptr) return "<none>";
  std::string s = instr->name();
  s += " (";
  if (instr->parent() != nullptr) {
    absl::StrAppend(&s, "computation ", instr->parent()->name());
  }
  if (instr->attrs().channel_id.has_value()) {
    absl::StrAppend(&s, ", channel_id=", *instr->attrs().channel_id);
  }
  s += ")";
  return s;
}

std::string GroupString(const std::vector<int64_t>& group) {
  return absl::StrCat("{", absl::StrJoin(group, ","), "}");
}

// --- Data movement
// --------------------------------------------------------------

absl::StatusOr<Value> AllGatherData(absl::Span<const Value> parts,
                                    int64_t dimension) {
  std::vector<const Value*> ptrs;
  for (const Value& v : parts) ptrs.push_back(&v);
  return Concatenate(ptrs, dimension);
}

namespace {

absl::Status CheckSameArrays(absl::Span<const Value> parts,
                             std::string_view what) {
  if (parts.empty())
    return Invalid(absl::StrCat(std::string(what), ": empty group"));
  for (const Value& v : parts) {
    if (!v.is_array() || v.type() != parts[0].type() ||
        v.dims() != parts[0].dims()) {
      return Invalid(absl::StrCat(std::string(what), ": devices contribute ",
                                  parts[0].ShapeString(), " and ",
                                  v.ShapeString()));
    }
  }
  return absl::OkStatus();
}

// Folds equally shaped arrays in order into a fresh array.
absl::StatusOr<Value> Fold(absl::Span<const Value> parts,
                           const Reducer& reducer) {
  absl::StatusOr<Value> acc = DeepCopy(parts[0]);
  if (!acc.ok()) return acc;
  const int64_t n = acc->element_count();
  if (reducer.fast_op.has_value()) {
    for (size_t i = 1; i < parts.size(); ++i) {
      absl::Status s = CombineElementwise(
          *reducer.fast_op, acc->type(), acc->mutable_raw(), parts[i].raw(), n);
      if (!s.ok()) return s;
    }
    return acc;
  }
  if (!reducer.generic) return Invalid("no reduction computation");
  const int64_t es = acc->element_size();
  for (int64_t e = 0; e < n; ++e) {
    absl::StatusOr<Value> a = ScalarAt(*acc, e);
    if (!a.ok()) return a;
    std::vector<Value> cur{*std::move(a)};
    for (size_t i = 1; i < parts.size(); ++i) {
      absl::StatusOr<Value> x = ScalarAt(parts[i], e);
      if (!x.ok()) return x;
      absl::StatusOr<std::vector<Value>> next =
          reducer.generic(cur, {*std::move(x)});
      if (!next.ok()) return next.status();
      if (next->size() != 1 || !(*next)[0].is_array() ||
          (*next)[0].type() != acc->type() || (*next)[0].element_count() != 1) {
        return Invalid("reduction computation returned the wrong shape");
      }
      cur = *std::move(next);
    }
    std::memcpy(acc->mutable_raw() + e * es, cur[0].raw(), es);
  }
  return acc;
}

absl::StatusOr<Value> Chunk(const Value& v, int64_t dimension, int64_t index,
                            int64_t count) {
  if (dimension < 0 || dimension >= v.rank() || v.dim(dimension) % count != 0) {
    return Invalid(absl::StrCat("cannot split ", v.ShapeString(), " into ",
                                count, " chunks along dimension ", dimension));
  }
  const int64_t size = v.dim(dimension) / count;
  std::vector<SliceRange> ranges;
  for (int64_t d = 0; d < v.rank(); ++d) {
    if (d == dimension) {
      ranges.push_back({index * size, (index + 1) * size, 1});
    } else {
      ranges.push_back({0, v.dim(d), 1});
    }
  }
  return Slice(v, ranges);
}

// Chunk `rank` (of parts.size()) of every part along `dimension`.
absl::StatusOr<std::vector<Value>> RankChunks(absl::Span<const Value> parts,
                                              int64_t dimension, int64_t rank) {
  std::vector<Value> chunks;
  for (const Value& v : parts) {
    absl::StatusOr<Value> c =
        Chunk(v, dimension, rank, static_cast<int64_t>(parts.size()));
    if (!c.ok()) return c.status();
    chunks.push_back(*std::move(c));
  }
  return chunks;
}

}  // namespace

absl::StatusOr<Value> AllReduceData(absl::Span<const Value> parts,
                                    const Reducer& reducer) {
  if (absl::Status s = CheckSameArrays(parts, "all-reduce"); !s.ok()) return s;
  return Fold(parts, reducer);
}

absl::StatusOr<Value> ReduceScatterData(absl::Span<const Value> parts,
                                        int64_t dimension, int64_t rank,
                                        const Reducer& reducer) {
  if (absl::Status s = CheckSameArrays(parts, "reduce-scatter"); !s.ok()) {
    return s;
  }
  absl::StatusOr<std::vector<Value>> chunks =
      RankChunks(parts, dimension, rank);
  if (!chunks.ok()) return chunks.status();
  return Fold(*chunks, reducer);
}

absl::StatusOr<Value> AllToAllData(absl::Span<const Value> parts,
                                   int64_t dimension, int64_t rank) {
  if (absl::Status s = CheckSameArrays(parts, "all-to-all"); !s.ok()) return s;
  absl::StatusOr<std::vector<Value>> chunks =
      RankChunks(parts, dimension, rank);
  if (!chunks.ok()) return chunks.status();
  std::vector<const Value*> ptrs;
  for (const Value& v : *chunks) ptrs.push_back(&v);
  return Concatenate(ptrs, dimension);
}

}  // namespace hloverlap::interp
