// Analytical GPU cost model (see the header).
#include "analysis/gpu_cost_model.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/collective_ops.h"
#include "analysis/module_summary.h"
#include "analysis/while_loop_analysis.h"
#include "hlo/absl_compat.h"
#include "hlo/opcode_traits.h"
#include "nlohmann/json.hpp"

namespace hloverlap {
namespace {

constexpr std::string_view kDefaultTableText =
#include "analysis/gpu_collective_table.inc"
    ;

// Nested while/call/fusion depth beyond which costs are not followed (the
// IR has no recursion, but deep nests of generated code should not blow the
// stack).
constexpr int kMaxDepth = 64;

double Elements(const Shape& shape) {
  if (shape.IsTuple()) {
    double n = 0;
    for (const Shape& s : shape.tuple_shapes()) n += Elements(s);
    return n;
  }
  if (!shape.IsArray()) return 0;
  double n = 1;
  for (int64_t d : shape.dimensions())
    n *= static_cast<double>(std::max<int64_t>(d, 0));
  return n;
}

double Bytes(const Shape& shape) {
  return static_cast<double>(shape.ByteSize());
}

bool IsNop(Opcode op) {
  switch (op) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kGetTupleElement:
    case Opcode::kTuple:
    case Opcode::kBitcast:
    case Opcode::kReshape:
    case Opcode::kAfterAll:
    case Opcode::kAddDependency:
    case Opcode::kOptBarrier:
    case Opcode::kPartitionId:
    case Opcode::kReplicaId:
    case Opcode::kDomain:
    case Opcode::kGetDimensionSize:
      return true;
    default:
      return false;
  }
}

// A parameter of a fused computation read only through slices: the bytes
// the slices read; nullopt if some user reads it whole.
std::optional<double> SlicedReadBytes(const Instruction& value) {
  if (value.users().empty()) return std::nullopt;
  double bytes = 0;
  for (const Instruction* user : value.users()) {
    switch (user->opcode()) {
      case Opcode::kSlice:
      case Opcode::kDynamicSlice:
      case Opcode::kGather:
        if (user->operand_count() == 0 || user->operand(0) != &value) {
          return std::nullopt;
        }
        bytes += Bytes(user->shape());
        break;
      default:
        return std::nullopt;
    }
  }
  return bytes;
}

// For an in-place dynamic-update-slice: its update's bytes.
double UpdateBytes(const Instruction& dus) {
  return dus.operand_count() > 1 ? Bytes(dus.operand(1)->shape()) : 0;
}

std::optional<int64_t> ParseInt(const nlohmann::json& j) {
  if (j.is_number_integer()) return j.get<int64_t>();
  if (j.is_number_unsigned()) {
    uint64_t v = j.get<uint64_t>();
    if (v > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<int64_t>(v);
  }
  if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) {
      return std::nullopt;
    }
    return v;
  }
  return std::nullopt;
}

// 2 * |result| * prod(lhs dims at `contracting`).
std::optional<double> DotFlopsFrom(const Shape& lhs, const Shape& result,
                                   absl::Span<const int64_t> contracting) {
  if (!lhs.IsArray()) return std::nullopt;
  double k = 1;
  for (int64_t d : contracting) {
    if (d < 0 || d >= lhs.rank()) return std::nullopt;
    k *= static_cast<double>(std::max<int64_t>(lhs.dimensions(d), 0));
  }
  return 2.0 * Elements(result) * k;
}

// Time-dependent FLOP/s of the vector units for an element type.
double VectorRate(const GpuSpec& spec, PrimitiveType type) {
  if (type == PrimitiveType::kF64 || type == PrimitiveType::kC128) {
    return spec.vector_flops / 2;
  }
  return spec.vector_flops;
}

PrimitiveType FirstArrayType(const Shape& shape) {
  if (shape.IsTuple()) {
    for (const Shape& s : shape.tuple_shapes()) {
      PrimitiveType t = FirstArrayType(s);
      if (t != PrimitiveType::kInvalid) return t;
    }
    return PrimitiveType::kInvalid;
  }
  return shape.IsArray() ? shape.element_type() : PrimitiveType::kInvalid;
}

// 2 * |result| * |kernel| / kernel output features (from dim_labels, else
// the kernel's last dimension).
double ConvolutionFlops(const Instruction& conv) {
  if (conv.operand_count() < 2) return 0;
  const Shape& k = conv.operand(1)->shape();
  if (!k.IsArray()) return 0;
  double out_features = 1;
  const RawAttribute* labels = conv.FindRawAttribute("dim_labels");
  size_t us = labels == nullptr ? std::string::npos : labels->value.find('_');
  size_t arrow =
      labels == nullptr ? std::string::npos : labels->value.find("->");
  if (us != std::string::npos && arrow != std::string::npos && arrow > us) {
    std::string kl = labels->value.substr(us + 1, arrow - us - 1);
    size_t o = kl.find('o');
    if (o != std::string::npos && static_cast<int64_t>(o) < k.rank()) {
      out_features = std::max<int64_t>(k.dimensions(o), 1);
    }
  } else if (k.rank() > 0) {
    out_features = std::max<int64_t>(k.dimensions(k.rank() - 1), 1);
  }
  return 2 * Elements(conv.shape()) * Elements(k) / out_features;
}

double RingFactor(CollectiveTableKind kind, int64_t n) {
  if (n <= 1) return 0;
  double f = static_cast<double>(n - 1) / static_cast<double>(n);
  return kind == CollectiveTableKind::kAllReduce ? 2 * f : f;
}

}  // namespace

// --- Device presets -------------------------------------------------------

GpuSpec H200Spec() {
  GpuSpec s;
  s.name = "h200";
  s.matmul_flops = 790e12;
  s.vector_flops = 60e12;
  s.hbm_bytes_per_second = 4.3e12;
  s.kernel_launch_us = 2.0;
  s.memory_bytes = int64_t{141} * 1000 * 1000 * 1000;
  return s;
}

// The H200's compute with the H100's memory: less and slower HBM.
GpuSpec H100Spec() {
  GpuSpec s = H200Spec();
  s.name = "h100";
  s.hbm_bytes_per_second = 3.0e12;
  s.memory_bytes = int64_t{80} * 1000 * 1000 * 1000;
  return s;
}

namespace {
// Every device preset, the one owner of their names (in --gpu's order).
constexpr GpuSpec (*kGpuPresets[])() = {H100Spec, H200Spec};
}  // namespace

std::optional<GpuSpec> GpuSpecByName(std::string_view name) {
  const std::string lower = absl::AsciiStrToLower(AsAbsl(name));
  for (GpuSpec (*preset)() : kGpuPresets) {
    GpuSpec spec = preset();
    if (spec.name == lower) return spec;
  }
  return std::nullopt;
}

std::vector<std::string> KnownGpuNames() {
  std::vector<std::string> names;
  for (GpuSpec (*preset)() : kGpuPresets) names.push_back(preset().name);
  return names;
}

// --- Collective table ------------------------------------------------------

std::string_view CollectiveTableKindName(CollectiveTableKind kind) {
  switch (kind) {
    case CollectiveTableKind::kAllReduce:
      return "all-reduce";
    case CollectiveTableKind::kAllGather:
      return "all-gather";
    case CollectiveTableKind::kReduceScatter:
      return "reduce-scatter";
  }
  return "?";
}

CollectiveTable::CollectiveTable(std::vector<Row> rows)
    : rows_(std::move(rows)) {
  std::stable_sort(rows_.begin(), rows_.end(), [](const Row& a, const Row& b) {
    return std::tie(a.kind, a.group_size, a.bytes) <
           std::tie(b.kind, b.group_size, b.bytes);
  });
}

const CollectiveTable& CollectiveTable::Default() {
  static const CollectiveTable* table = [] {
    absl::StatusOr<CollectiveTable> t = ParseCollectiveTable(kDefaultTableText);
    // The compiled-in text is tested; an error would leave an empty table
    // (collectives then cost 0) rather than abort.
    return new CollectiveTable(t.ok() ? *std::move(t) : CollectiveTable({}));
  }();
  return *table;
}

std::optional<double> CollectiveTable::TimeUs(CollectiveTableKind kind,
                                              int64_t bytes,
                                              int64_t group_size) const {
  if (group_size <= 1 || bytes <= 0) return 0.0;
  // Rows of this kind; pick the group size: exact, else the nearest (ties:
  // the larger).
  int64_t best_group = -1;
  for (const Row& r : rows_) {
    if (r.kind != kind || r.bytes <= 0 || r.time_us <= 0) continue;
    if (best_group < 0 ||
        std::llabs(r.group_size - group_size) <
            std::llabs(best_group - group_size) ||
        (std::llabs(r.group_size - group_size) ==
             std::llabs(best_group - group_size) &&
         r.group_size > best_group)) {
      best_group = r.group_size;
    }
  }
  if (best_group < 0) return std::nullopt;
  const Row* first = nullptr;
  const Row* lo = nullptr;
  const Row* hi = nullptr;
  const Row* last = nullptr;
  for (const Row& r : rows_) {
    if (r.kind != kind || r.group_size != best_group || r.bytes <= 0 ||
        r.time_us <= 0) {
      continue;
    }
    if (first == nullptr) first = &r;
    last = &r;
    if (r.bytes <= bytes) lo = &r;
    if (r.bytes >= bytes && hi == nullptr) hi = &r;
  }
  double t = 0;
  double b = static_cast<double>(bytes);
  if (lo == nullptr) {
    t = first->time_us;  // below the table: latency floor
  } else if (hi == nullptr) {
    t = b / (static_cast<double>(last->bytes) / last->time_us);
  } else if (lo == hi || lo->bytes == hi->bytes) {
    t = lo->time_us;
  } else {
    double x0 = std::log2(static_cast<double>(lo->bytes));
    double x1 = std::log2(static_cast<double>(hi->bytes));
    double w = (std::log2(b) - x0) / (x1 - x0);
    double tp0 = static_cast<double>(lo->bytes) / lo->time_us;
    double tp1 = static_cast<double>(hi->bytes) / hi->time_us;
    t = b / (tp0 + w * (tp1 - tp0));
  }
  if (best_group != group_size) {
    // The latency floor: the fastest row (small sizes are noisy).
    double floor = first->time_us;
    for (const Row& r : rows_) {
      if (r.kind == kind && r.group_size == best_group && r.time_us > 0) {
        floor = std::min(floor, r.time_us);
      }
    }
    double scale = RingFactor(kind, group_size) / RingFactor(kind, best_group);
    t = floor + std::max(0.0, t - floor) * scale;
  }
  return t;
}

std::string CollectiveTable::ToText() const {
  std::string out = "# kind group_size bytes time_us\n";
  for (const Row& r : rows_) {
    absl::StrAppendFormat(&out, "%s %d %d %g\n",
                          AsAbsl(CollectiveTableKindName(r.kind)), r.group_size,
                          r.bytes, r.time_us);
  }
  return out;
}

absl::StatusOr<CollectiveTable> ParseCollectiveTable(std::string_view text) {
  std::vector<CollectiveTable::Row> rows;
  int64_t line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (size_t hash = line.find('#'); hash != std::string_view::npos) {
      line = line.substr(0, hash);
    }
    std::vector<std::string_view> fields;
    size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() &&
             (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) {
        ++i;
      }
      size_t j = i;
      while (j < line.size() && line[j] != ' ' && line[j] != '\t' &&
             line[j] != '\r') {
        ++j;
      }
      if (j > i) fields.push_back(line.substr(i, j - i));
      i = j;
    }
    if (fields.empty()) {
      if (end == text.size()) break;
      continue;
    }
    auto error = [&](std::string_view what) {
      return absl::InvalidArgumentError(
          absl::StrCat("collective table line ", line_no, ": ", AsAbsl(what),
                       " (expected 'kind group_size bytes time_us')"));
    };
    if (fields.size() != 4) return error("wrong number of fields");
    CollectiveTable::Row row;
    if (fields[0] == "all-reduce") {
      row.kind = CollectiveTableKind::kAllReduce;
    } else if (fields[0] == "all-gather") {
      row.kind = CollectiveTableKind::kAllGather;
    } else if (fields[0] == "reduce-scatter") {
      row.kind = CollectiveTableKind::kReduceScatter;
    } else {
      return error(absl::StrCat("unknown kind '", AsAbsl(fields[0]), "'"));
    }
    auto parse_int = [](std::string_view s, int64_t& v) {
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      return ec == std::errc() && p == s.data() + s.size();
    };
    if (!parse_int(fields[1], row.group_size) || row.group_size < 1) {
      return error("bad group size");
    }
    if (!parse_int(fields[2], row.bytes) || row.bytes < 1) {
      return error("bad byte count");
    }
    auto [p, ec] = std::from_chars(
        fields[3].data(), fields[3].data() + fields[3].size(), row.time_us);
    if (ec != std::errc() || p != fields[3].data() + fields[3].size() ||
        !(row.time_us > 0) || !std::isfinite(row.time_us)) {
      return error("bad time");
    }
    rows.push_back(row);
    if (end == text.size()) break;
  }
  return CollectiveTable(std::move(rows));
}

// --- Dots ------------------------------------------------------------------

bool IsScratchValue(const Instruction& value) {
  return value.opcode() == Opcode::kGetTupleElement &&
         value.operand_count() == 1 &&
         IsKernelScratch(*value.operand(0), value.attrs().tuple_index);
}

std::optional<double> DotFlops(const Instruction& instr) {
  if (instr.opcode() == Opcode::kDot || instr.opcode() == Opcode::kRaggedDot ||
      instr.opcode() == Opcode::kScaledDot) {
    if (instr.operand_count() < 2) return std::nullopt;
    return DotFlopsFrom(instr.operand(0)->shape(), instr.shape(),
                        instr.attrs().dot->lhs_contracting_dims);
  }
  if (!IsGemmCustomCall(instr) || instr.operand_count() < 2) {
    return std::nullopt;
  }
  const std::string& config = instr.attrs().backend_config;
  nlohmann::json json =
      nlohmann::json::parse(config.begin(), config.end(), nullptr,
                            /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) return std::nullopt;
  auto gemm = json.find("gemm_backend_config");
  if (gemm == json.end() || !gemm->is_object()) {
    gemm = json.end();
  }
  const nlohmann::json& g = gemm == json.end() ? json : *gemm;
  auto dnums = g.find("dot_dimension_numbers");
  if (dnums == g.end() || !dnums->is_object()) return std::nullopt;
  auto contracting = dnums->find("lhs_contracting_dimensions");
  if (contracting == dnums->end() || !contracting->is_array()) {
    return std::nullopt;
  }
  std::vector<int64_t> dims;
  for (const nlohmann::json& d : *contracting) {
    std::optional<int64_t> v = ParseInt(d);
    if (!v) return std::nullopt;
    dims.push_back(*v);
  }
  const Shape& result =
      instr.shape().IsTuple() && instr.shape().tuple_size() > 0
          ? instr.shape().tuple_shapes(0)
          : instr.shape();
  return DotFlopsFrom(instr.operand(0)->shape(), result, dims);
}

// --- Cost model --------------------------------------------------------------

GpuCostModel::GpuCostModel(GpuSpec spec, const CollectiveTable* table)
    : spec_(std::move(spec)),
      table_(table != nullptr ? table : &CollectiveTable::Default()) {}

double GpuCostModel::MatmulRate(PrimitiveType type) const {
  switch (type) {
    case PrimitiveType::kBF16:
    case PrimitiveType::kF16:
      return spec_.matmul_flops;
    case PrimitiveType::kF32:
    case PrimitiveType::kC64:
      return spec_.matmul_flops / 2;  // TF32
    case PrimitiveType::kS8:
    case PrimitiveType::kU8:
    case PrimitiveType::kF8E5M2:
    case PrimitiveType::kF8E4M3:
    case PrimitiveType::kF8E4M3FN:
    case PrimitiveType::kF8E4M3B11FNUZ:
    case PrimitiveType::kF8E3M4:
    case PrimitiveType::kF8E5M2FNUZ:
    case PrimitiveType::kF8E4M3FNUZ:
    case PrimitiveType::kF8E8M0FNU:
      return spec_.matmul_flops * 2;
    default:
      return VectorRate(spec_, type);
  }
}

std::optional<CollectiveInfo> GpuCostModel::GetCollectiveInfo(
    const Instruction& instr) {
  std::optional<CollectiveOp> c = ClassifyCollective(instr);
  if (!c.has_value()) return std::nullopt;
  const Instruction* coll = c->collective;
  Opcode op = c->kind;
  CollectiveInfo info;
  info.opcode = op;
  // Bytes: all-reduce buffer, all-gather output, reduce-scatter input,
  // otherwise the result.
  if (op == Opcode::kReduceScatter) {
    double b = 0;
    for (const Instruction* o : coll->operands()) b += Bytes(o->shape());
    info.bytes = static_cast<int64_t>(b);
  } else if (op == Opcode::kCollectivePermute && coll->operand_count() > 0) {
    info.bytes = coll->operand(0)->shape().ByteSize();
  } else if (coll->opcode() == Opcode::kAllGatherStart ||
             coll->opcode() == Opcode::kAllReduceStart ||
             coll->opcode() == Opcode::kCollectivePermuteStart) {
    info.bytes = CollectiveResultBytes(*coll);
  } else {
    info.bytes = coll->shape().ByteSize();
  }
  // Group size.
  std::optional<int64_t> g = coll->attrs().replica_groups->GroupSize();
  if (op == Opcode::kCollectivePermute) {
    g = 2;
  } else if (!g.has_value()) {
    int64_t n = 1;
    const Computation* comp = instr.parent();
    if (comp != nullptr && comp->parent() != nullptr) {
      n = std::max(comp->parent()->num_partitions(),
                   comp->parent()->replica_count());
    }
    g = n;
  }
  info.group_size = std::max<int64_t>(*g, 1);
  return info;
}

double GpuCostModel::CollectiveTimeUs(const CollectiveInfo& info) const {
  CollectiveTableKind kind = CollectiveTableKind::kAllGather;
  int64_t bytes = info.bytes;
  int64_t group = info.group_size;
  switch (info.opcode) {
    case Opcode::kAllReduce:
      kind = CollectiveTableKind::kAllReduce;
      break;
    case Opcode::kReduceScatter:
      kind = CollectiveTableKind::kReduceScatter;
      break;
    case Opcode::kCollectivePermute:
      group = 2;
      bytes = bytes > INT64_MAX / 2 ? INT64_MAX : bytes * 2;
      break;
    default:
      break;
  }
  std::optional<double> t = table_->TimeUs(kind, bytes, group);
  if (!t.has_value()) {
    // No table rows: bandwidth only, at the NVLink line rate.
    return static_cast<double>(bytes) / 370e9 * 1e6;
  }
  return *t;
}

double GpuCostModel::Roofline(OpCost& cost) const {
  cost.memory_us = cost.bytes / spec_.hbm_bytes_per_second * 1e6;
  cost.time_us = static_cast<double>(cost.kernels) * spec_.kernel_launch_us +
                 std::max(cost.compute_us, cost.memory_us);
  return cost.time_us;
}

void GpuCostModel::AddFusedComputationFlops(const Computation& fused,
                                            OpCost& cost, int depth) const {
  if (depth > kMaxDepth) return;
  for (const auto& p : fused.instructions()) {
    const Instruction& i = *p;
    if (i.opcode() == Opcode::kFusion && i.to_apply() != nullptr) {
      AddFusedComputationFlops(*i.to_apply(), cost, depth + 1);
      continue;
    }
    std::optional<double> dot = DotFlops(i);
    if (dot.has_value()) {
      cost.flops += *dot;
      cost.compute_us +=
          *dot / MatmulRate(i.operand(0)->shape().element_type()) * 1e6;
      continue;
    }
    double f = 0;
    if (IsElementwise(i.opcode())) {
      f = Elements(i.shape());
    } else if (i.opcode() == Opcode::kReduce ||
               i.opcode() == Opcode::kReduceWindow) {
      // Operands are inputs then init values; inputs dominate.
      for (const Instruction* o : i.operands()) f += Elements(o->shape());
    } else if (i.opcode() == Opcode::kConvolution) {
      double conv = ConvolutionFlops(i);
      cost.flops += conv;
      cost.compute_us +=
          conv / MatmulRate(i.operand(1)->shape().element_type()) * 1e6;
      continue;
    }
    if (f > 0) {
      cost.flops += f;
      cost.compute_us += f / VectorRate(spec_, FirstArrayType(i.shape())) * 1e6;
    }
  }
}

OpCost GpuCostModel::RawCost(const Instruction& instr) const {
  OpCost cost;
  Opcode op = instr.opcode();
  if (IsNop(op) || IsDoneLike(op) || op == Opcode::kAsyncUpdate ||
      op == Opcode::kRecv) {
    return cost;
  }
  if (IsAsyncStart(op)) return cost;  // see AsyncLatencyUs
  std::optional<CollectiveOp> collective =
      op == Opcode::kFusion ? ClassifyCollective(instr) : std::nullopt;
  if (collective.has_value() && collective->async) return cost;
  if (op == Opcode::kSend || IsCollective(op) || collective.has_value()) {
    std::optional<CollectiveInfo> info = GetCollectiveInfo(instr);
    if (info.has_value()) cost.time_us = CollectiveTimeUs(*info);
    cost.bytes = static_cast<double>(info.has_value() ? info->bytes : 0);
    return cost;
  }
  switch (op) {
    case Opcode::kWhile: {
      if (instr.called_computations().size() < 2) return cost;
      std::optional<int64_t> trip = WhileTripCount(instr);
      double n = static_cast<double>(trip.value_or(1));
      double body = ComputationTimeUs(*instr.while_body());
      double cond = ComputationTimeUs(*instr.while_condition());
      cost.time_us = n * (body + cond) + cond;
      return cost;
    }
    case Opcode::kCall:
    case Opcode::kConditional: {
      double t = 0;
      for (const Computation* c : instr.called_computations()) {
        double ct = ComputationTimeUs(*c);
        t = op == Opcode::kCall ? t + ct : std::max(t, ct);
      }
      cost.time_us = t;
      return cost;
    }
    default:
      break;
  }

  cost.kernels = 1;
  // Reads.
  if (op == Opcode::kFusion && instr.to_apply() != nullptr) {
    const Computation& fused = *instr.to_apply();
    const Instruction* root = fused.root();
    std::vector<const Instruction*> roots;
    if (root != nullptr && root->opcode() == Opcode::kTuple) {
      for (const Instruction* o : root->operands()) roots.push_back(o);
    } else if (root != nullptr) {
      roots.push_back(root);
    }
    for (int64_t i = 0; i < instr.operand_count(); ++i) {
      if (IsScratchValue(*instr.operand(i))) continue;
      const Instruction* param =
          i < fused.num_parameters() ? fused.parameter(i) : nullptr;
      double full = Bytes(instr.operand(i)->shape());
      if (param == nullptr) {
        cost.bytes += full;
        continue;
      }
      bool in_place = false;
      for (const Instruction* r : roots) {
        if (r->opcode() == Opcode::kDynamicUpdateSlice &&
            r->operand_count() > 0 && r->operand(0) == param) {
          in_place = true;
        }
      }
      if (in_place) continue;
      std::optional<double> sliced = SlicedReadBytes(*param);
      cost.bytes += sliced.has_value() ? std::min(*sliced, full) : full;
    }
    // Writes (not a GEMM's workspace, which the fusion threads out).
    for (size_t k = 0; k < roots.size(); ++k) {
      const Instruction* r = roots[k];
      if (IsKernelScratch(instr, static_cast<int64_t>(k))) continue;
      if (r->opcode() == Opcode::kDynamicUpdateSlice &&
          r->operand_count() > 0 &&
          r->operand(0)->opcode() == Opcode::kParameter) {
        cost.bytes += UpdateBytes(*r);
      } else {
        cost.bytes += Bytes(r->shape());
      }
    }
    AddFusedComputationFlops(fused, cost, 0);
    Roofline(cost);
    return cost;
  }

  switch (op) {
    case Opcode::kSlice:
    case Opcode::kDynamicSlice:
      cost.bytes = 2 * Bytes(instr.shape());
      break;
    case Opcode::kGather:
      cost.bytes = 2 * Bytes(instr.shape());
      if (instr.operand_count() > 1) {
        cost.bytes += Bytes(instr.operand(1)->shape());
      }
      break;
    case Opcode::kDynamicUpdateSlice:
      cost.bytes = 2 * UpdateBytes(instr);
      break;
    default: {
      for (const Instruction* o : instr.operands()) {
        if (!IsScratchValue(*o)) cost.bytes += Bytes(o->shape());
      }
      const Shape& out = IsGemmCustomCall(instr) && instr.shape().IsTuple() &&
                                 instr.shape().tuple_size() > 0
                             ? instr.shape().tuple_shapes(0)
                             : instr.shape();
      cost.bytes += Bytes(out);
      break;
    }
  }
  std::optional<double> dot = DotFlops(instr);
  if (dot.has_value()) {
    cost.flops = *dot;
    cost.compute_us =
        *dot / MatmulRate(instr.operand(0)->shape().element_type()) * 1e6;
  } else if (op != Opcode::kCustomCall) {
    const Instruction* self = &instr;
    double f = 0;
    if (IsElementwise(op)) {
      f = Elements(self->shape());
    } else if (op == Opcode::kReduce || op == Opcode::kReduceWindow) {
      for (const Instruction* o : self->operands()) f += Elements(o->shape());
    } else if (op == Opcode::kSort) {
      double n = Elements(self->operand_count() > 0 ? self->operand(0)->shape()
                                                    : self->shape());
      f = n * std::max(1.0, std::log2(std::max(n, 2.0)));
    }
    if (op == Opcode::kConvolution && instr.operand_count() >= 2) {
      double conv = ConvolutionFlops(instr);
      cost.flops = conv;
      cost.compute_us =
          conv / MatmulRate(instr.operand(1)->shape().element_type()) * 1e6;
    } else if (f > 0) {
      cost.flops = f;
      cost.compute_us =
          f / VectorRate(spec_, FirstArrayType(instr.shape())) * 1e6;
    }
  }
  Roofline(cost);
  return cost;
}

OpCost GpuCostModel::Cost(const Instruction& instr) const {
  return RawCost(instr);
}

double GpuCostModel::ComputationTimeUs(const Computation& computation) const {
  auto it = computation_time_.find(&computation);
  if (it != computation_time_.end()) return it->second;
  // Guard against pathological recursion: mark as 0 while computing.
  computation_time_[&computation] = 0;
  double t = 0;
  for (const auto& i : computation.instructions()) t += RawCost(*i).time_us;
  computation_time_[&computation] = t;
  return t;
}

double GpuCostModel::AsyncLatencyUs(const Instruction& start) const {
  Opcode op = start.opcode();
  if (op == Opcode::kCopyStart) {
    double b = start.operand_count() > 0 ? Bytes(start.operand(0)->shape()) : 0;
    return spec_.kernel_launch_us + 2 * b / spec_.hbm_bytes_per_second * 1e6;
  }
  if (op == Opcode::kRecv) {
    CollectiveInfo info;
    info.opcode = Opcode::kCollectivePermute;
    info.bytes = start.shape().IsTuple() && start.shape().tuple_size() > 0
                     ? start.shape().tuple_shapes(0).ByteSize()
                     : start.shape().ByteSize();
    info.group_size = 2;
    return CollectiveTimeUs(info);
  }
  std::optional<CollectiveOp> collective = ClassifyCollective(start);
  if (collective.has_value() && collective->async) {
    std::optional<CollectiveInfo> info = GetCollectiveInfo(start);
    if (info.has_value()) return CollectiveTimeUs(*info);
  }
  if (op == Opcode::kAsyncStart && start.to_apply() != nullptr) {
    return ComputationTimeUs(*start.to_apply());
  }
  return 0;
}

}  // namespace hloverlap
