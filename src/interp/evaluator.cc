#include "interp/evaluator.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <exception>
#include <new>
#include <thread>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "hlo/absl_compat.h"
#include "hlo/buffer_semantics.h"
#include "hlo/computation.h"
#include "hlo/diagnostic.h"
#include "hlo/shape_inference.h"
#include "hlo/verifier.h"
#include "interp/dot.h"
#include "interp/elementwise.h"
#include "interp/errors.h"
#include "interp/random_inputs.h"
#include "interp/reduce.h"
#include "interp/rendezvous.h"
#include "interp/shape_ops.h"

namespace hloverlap::interp {

// One instruction of a computation plan.
struct Step {
  const Instruction* instr = nullptr;
  std::vector<int32_t> operands;   // slots (= step indices)
  std::vector<int32_t> release;    // slots to free after this step
  std::vector<bool> operand_dies;  // operand i's last use is here
  std::vector<const ComputationPlan*> called;
};

struct ComputationPlan {
  const Computation* computation = nullptr;
  std::vector<Step> steps;
  int32_t root = -1;
  // Set when the computation is `op(parameter(0), parameter(1))` on scalars
  // of one type with op a combiner (add, multiply, maximum, ...).
  std::optional<Opcode> combiner;
  int64_t peak_bytes = -1;  // memory estimate, computed lazily
  // Where peak_bytes is reached: the innermost instruction running then.
  const Instruction* peak_at = nullptr;
};

namespace {

std::string Where(const Instruction* instr) {
  return absl::StrCat("in instruction ", instr->name(), " (computation ",
                      instr->parent() ? instr->parent()->name() : "?", ")");
}

bool IsIdentityCustomCall(std::string_view target) {
  return target == "Sharding" || target == "SPMDFullToShardShape" ||
         target == "SPMDShardToFullShape" || target == "MoveToHost" ||
         target == "MoveToDevice" || target == "LayoutConstraint" ||
         target.rfind("xla.sdy.", 0) == 0;
}

bool IsSupportedOpcode(const Instruction& instr, bool opaque_custom_calls) {
  const Opcode op = instr.opcode();
  if (IsSupportedUnaryOpcode(op) || IsSupportedBinaryOpcode(op)) return true;
  switch (op) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kConvert:
    case Opcode::kBitcastConvert:
    case Opcode::kCompare:
    case Opcode::kSelect:
    case Opcode::kClamp:
    case Opcode::kBroadcast:
    case Opcode::kReshape:
    case Opcode::kBitcast:
    case Opcode::kTranspose:
    case Opcode::kSlice:
    case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice:
    case Opcode::kConcatenate:
    case Opcode::kPad:
    case Opcode::kIota:
    case Opcode::kReverse:
    case Opcode::kDot:
    case Opcode::kReduce:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
    case Opcode::kWhile:
    case Opcode::kCall:
    case Opcode::kConditional:
    case Opcode::kFusion:
    case Opcode::kOptBarrier:
    case Opcode::kAddDependency:
    case Opcode::kAfterAll:
    case Opcode::kDomain:
    case Opcode::kPartitionId:
    case Opcode::kReplicaId:
    case Opcode::kGetDimensionSize:
    case Opcode::kSetDimensionSize:
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kAllGatherDone:
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kAllReduceDone:
    case Opcode::kReduceScatter:
    case Opcode::kAllToAll:
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart:
    case Opcode::kCollectivePermuteDone:
    case Opcode::kCollectiveBroadcast:
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
    case Opcode::kCopyStart:
    case Opcode::kCopyDone:
    case Opcode::kSend:
    case Opcode::kSendDone:
    case Opcode::kRecv:
    case Opcode::kRecvDone:
      return true;
    case Opcode::kCustomCall:
      return IsIdentityCustomCall(instr.attrs().custom_call_target) ||
             IsCublasGemmTarget(instr.attrs().custom_call_target) ||
             opaque_custom_calls;
    default:
      return false;
  }
}

// Bytes of new storage one step allocates (memory estimate): the leaves
// hlo/buffer_semantics.h says the instruction defines (tuples,
// get-tuple-elements, bitcasts, reshapes, -done halves and an async
// start's operands share storage; a GEMM's workspace is one shared zero
// value), with the interpreter's own storage rules on top: values are
// immutable and shared (value.h), so a copy, set-dimension-size,
// bitcast-convert or identity custom-call shares its operand's storage and
// constants are stored once (EstimateConstantBytes); nothing is updated in
// place except a dynamic-update-slice whose operand dies there, so a
// while's result, an in-place fusion and an async in-place update are new
// storage.
int64_t StepBytes(const Step& step) {
  const Instruction& instr = *step.instr;
  switch (instr.opcode()) {
    case Opcode::kConstant:
    case Opcode::kCopy:
    case Opcode::kSetDimensionSize:
    case Opcode::kBitcastConvert:
      return 0;
    case Opcode::kCustomCall:
      if (IsIdentityCustomCall(instr.attrs().custom_call_target)) return 0;
      break;
    default:
      break;
  }
  const bool dies = !step.operand_dies.empty() && step.operand_dies[0];
  std::vector<LeafSource> sources = ResultLeafSources(instr);
  std::vector<int64_t> bytes;
  AppendLeafBytes(instr.shape(), bytes);
  int64_t total = 0;
  for (size_t k = 0; k < sources.size() && k < bytes.size(); ++k) {
    const LeafSource& s = sources[k];
    const bool writes_in_place =
        instr.opcode() == Opcode::kDynamicUpdateSlice && dies;
    if (s.kind == LeafKind::kDefines ||
        (s.kind == LeafKind::kAliases && s.in_place && !writes_in_place)) {
      total += bytes[k];
    }
  }
  return total;
}

absl::Status CheckShapeSupported(const Shape& shape, const Instruction& instr) {
  if (shape.IsTuple()) {
    for (const Shape& s : shape.tuple_shapes()) {
      if (absl::Status st = CheckShapeSupported(s, instr); !st.ok()) return st;
    }
    return absl::OkStatus();
  }
  if (shape.IsToken()) return absl::OkStatus();
  if (!shape.IsArray() || !IsSupportedElementType(shape.element_type())) {
    return AtInstruction(
        Invalid(absl::StrCat(
            "unsupported element type '",
            std::string(PrimitiveTypeName(shape.element_type())), "' ",
            Where(&instr),
            " (the interpreter supports pred, s8-s64, u8-u64, f16, bf16, f32, "
            "f64)")),
        &instr);
  }
  if (shape.is_dynamic()) {
    return AtInstruction(
        Invalid(absl::StrCat("dynamic shape ", shape.ToString(), " ",
                             Where(&instr), " is not supported")),
        &instr);
  }
  return absl::OkStatus();
}

std::optional<Opcode> DetectCombiner(const Computation& comp) {
  if (comp.num_parameters() != 2) return std::nullopt;
  const Instruction* root = comp.root();
  const Instruction* p0 = comp.parameter(0);
  const Instruction* p1 = comp.parameter(1);
  if (root == nullptr || p0 == nullptr || p1 == nullptr) return std::nullopt;
  if (!IsCombinerOpcode(root->opcode()) || root->operand_count() != 2) {
    return std::nullopt;
  }
  if (!((root->operand(0) == p0 && root->operand(1) == p1) ||
        (root->operand(0) == p1 && root->operand(1) == p0))) {
    return std::nullopt;
  }
  if (!root->shape().IsScalar() || !p0->shape().IsScalar() ||
      !p1->shape().IsScalar() ||
      p0->shape().element_type() != root->shape().element_type() ||
      p1->shape().element_type() != root->shape().element_type()) {
    return std::nullopt;
  }
  // and/or/xor on floats are not defined; let the generic path report it.
  if (IsFloatingPointType(root->shape().element_type()) &&
      (root->opcode() == Opcode::kAnd || root->opcode() == Opcode::kOr ||
       root->opcode() == Opcode::kXor)) {
    return std::nullopt;
  }
  return root->opcode();
}

// Values of `shape` filled deterministically (elided constants).
absl::StatusOr<Value> FillConstant(const Shape& shape, uint64_t seed) {
  return RandomValue(shape, MixKey(seed, HashString(shape.ToString(false))));
}

}  // namespace

int64_t PhysicalMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<int64_t>(pages) * static_cast<int64_t>(page);
}

absl::StatusOr<DeviceTopology> ResolveTopology(const Module& module,
                                               int64_t num_devices) {
  DeviceTopology t;
  t.replica_count = std::max<int64_t>(1, module.replica_count());
  t.num_partitions = std::max<int64_t>(1, module.num_partitions());
  if (t.replica_count > 65536 || t.num_partitions > 65536) {
    return Invalid("replica_count/num_partitions too large to simulate");
  }
  // The ids the collectives name: a module without a device count in its
  // header (1 x 1) runs on as many devices as they need.
  NamedIds named;
  for (const auto& c : module.computations()) {
    for (const auto& instr : c->instructions()) {
      NamedIds n = MaxNamedIds(*instr);
      if (n.partitions > named.partitions) {
        named.partitions = n.partitions;
        named.partitions_at = n.partitions_at;
      }
      if (n.replicas > named.replicas) {
        named.replicas = n.replicas;
        named.replicas_at = n.replicas_at;
      }
      if (n.devices > named.devices) {
        named.devices = n.devices;
        named.devices_at = n.devices_at;
      }
    }
  }
  if (num_devices <= 0 && t.num_devices() == 1 &&
      (named.partitions > 1 || named.replicas > 1 || named.devices > 1)) {
    if (named.partitions > 65536 || named.replicas > 65536 ||
        named.devices > 65536) {
      return Invalid(
          "the module's collectives name too many devices to "
          "simulate");
    }
    t.replica_count = std::max<int64_t>(1, named.replicas);
    t.num_partitions = std::max<int64_t>(1, named.partitions);
    if (named.devices > t.num_devices()) {
      t.num_partitions =
          (named.devices + t.replica_count - 1) / t.replica_count;
    }
    const Instruction* at = named.partitions_at != nullptr ? named.partitions_at
                            : named.replicas_at != nullptr ? named.replicas_at
                                                           : named.devices_at;
    t.derived_from = absl::StrCat(
        t.num_devices(), " devices (", t.replica_count, " x ", t.num_partitions,
        "): the ids that ", at->name(),
        " and the other collectives name (the header gives no "
        "replica_count / num_partitions; --devices=N sets the count)");
    return t;
  }
  auto check_named = [&](const DeviceTopology& topo) -> absl::Status {
    const Instruction* at = nullptr;
    int64_t need = 0, have = 0;
    std::string what;
    if (named.partitions > topo.num_partitions) {
      at = named.partitions_at;
      need = named.partitions;
      have = topo.num_partitions;
      what = "partition";
    } else if (named.replicas > topo.replica_count) {
      at = named.replicas_at;
      need = named.replicas;
      have = topo.replica_count;
      what = "replica";
    } else if (named.devices > topo.num_devices()) {
      at = named.devices_at;
      need = named.devices;
      have = topo.num_devices();
      what = "device";
    }
    if (at == nullptr) return absl::OkStatus();
    return AtInstruction(
        Invalid(absl::StrCat(
            at->name(), " names ", what, " ", need - 1, ", but the run has ",
            have, " ", what, "s (", topo.replica_count, " replica",
            topo.replica_count == 1 ? "" : "s", " x ", topo.num_partitions,
            " partition", topo.num_partitions == 1 ? "" : "s",
            "); --devices=N sets the device count")),
        at);
  };
  if (num_devices <= 0 || num_devices == t.num_devices()) {
    if (absl::Status s = check_named(t); !s.ok()) return s;
    return t;
  }
  if (num_devices > 65536) {
    return Invalid(absl::StrCat("--devices=", num_devices, " is too many"));
  }
  if (num_devices % t.replica_count == 0) {
    t.num_partitions = num_devices / t.replica_count;
  } else if (num_devices % t.num_partitions == 0) {
    t.replica_count = num_devices / t.num_partitions;
  } else {
    return Invalid(absl::StrCat("--devices=", num_devices,
                                " is not a multiple of the module's "
                                "replica_count (",
                                module.replica_count(), ") or num_partitions (",
                                module.num_partitions(), ")"));
  }
  if (absl::Status s = check_named(t); !s.ok()) return s;
  return t;
}

// --- Device execution
// -------------------------------------------------------------

using Clock = std::chrono::steady_clock;

class DeviceRunner {
 public:
  // `deadline`: when the run's time limit passes (Clock::time_point::max()
  // for none).
  DeviceRunner(const Interpreter& interp, Rendezvous* rendezvous,
               int64_t device, Clock::time_point deadline)
      : interp_(interp),
        rdv_(rendezvous),
        device_(device),
        replica_(interp.topology_.replica_of(device)),
        partition_(interp.topology_.partition_of(device)),
        deadline_(deadline) {}

  absl::StatusOr<Value> Eval(const ComputationPlan& plan,
                             std::vector<Value> args);

  int64_t instructions() const { return instructions_; }
  int64_t while_iterations() const { return while_iterations_; }
  // The instruction being executed (the innermost), or null.
  const Instruction* current_instruction() const { return current_; }

 private:
  // Before every instruction: whether the device must stop because the run
  // failed on another device (a relaxed load of the run's flag) or may have
  // passed its time limit (the clock is read every kClockInterval
  // instructions); then Stop() says why.
  static constexpr int32_t kClockInterval = 32;
  bool MaybeStop() { return rdv_->failed() || --clock_countdown_ <= 0; }
  absl::Status Stop();
  // The error of a reached limit, located at the running loop (or
  // instruction), `what` saying which limit.
  absl::Status LimitReached(std::string_view what);
  absl::StatusOr<Value> Exec(const Step& step, std::vector<Value>& env);
  absl::StatusOr<Value> ExecCollective(const Step& step,
                                       std::vector<Value> operands);
  // send (its operand `data`, null if none) or recv: deposits the data for
  // the targets, or names the source for the recv-done.
  absl::StatusOr<Value> ExecSendRecv(const Instruction& instr,
                                     const Value* data);
  // recv-done of the recv tuple `recv`: the data its source sent.
  absl::StatusOr<Value> ExecRecvDone(const Instruction& instr,
                                     const Value& recv);
  absl::StatusOr<Reducer> MakeReducer(const ComputationPlan* plan);
  absl::Status Annotate(const absl::Status& st, const Instruction* instr) {
    if (annotated_ || st.code() == absl::StatusCode::kAborted) return st;
    annotated_ = true;
    return AtInstruction(
        WithMessage(st, absl::StrCat(st.message(), " ", Where(instr))), instr);
  }

  const Interpreter& interp_;
  Rendezvous* rdv_;
  const int64_t device_;
  const int64_t replica_;
  const int64_t partition_;
  const Clock::time_point deadline_;
  bool annotated_ = false;
  int64_t instructions_ = 0;
  int64_t while_iterations_ = 0;
  int32_t clock_countdown_ = 1;
  const Instruction* current_ = nullptr;
  // The innermost while loop running and its iteration (0-based).
  const Instruction* loop_ = nullptr;
  int64_t loop_iteration_ = 0;
};

absl::Status DeviceRunner::Stop() {
  clock_countdown_ = kClockInterval;
  if (rdv_->failed()) {
    return absl::AbortedError(
        absl::StrCat("device ", device_, " stopped: the run failed"));
  }
  if (deadline_ != Clock::time_point::max() && Clock::now() >= deadline_) {
    return LimitReached(absl::StrCat("the run reached its time limit of ",
                                     interp_.options_.time_limit_seconds,
                                     " s; raise it with --time-limit"));
  }
  return absl::OkStatus();
}

absl::Status DeviceRunner::LimitReached(std::string_view what) {
  annotated_ = true;
  const Instruction* at = loop_ != nullptr ? loop_ : current_;
  std::string where =
      loop_ != nullptr
          ? absl::StrCat("while loop ", loop_->name(), " (computation ",
                         loop_->parent() ? loop_->parent()->name() : "?",
                         ") stopped after ", loop_iteration_, " iterations (",
                         while_iterations_,
                         " while-loop iterations on the device so far)")
          : absl::StrCat("stopped ", at ? Where(at) : "");
  return AtInstruction(
      absl::ResourceExhaustedError(absl::StrCat(where, ": ", AsAbsl(what))),
      at);
}

absl::StatusOr<Value> DeviceRunner::Eval(const ComputationPlan& plan,
                                         std::vector<Value> args) {
  std::vector<Value> env(plan.steps.size());
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& step = plan.steps[i];
    const Instruction* instr = step.instr;
    if (instr->opcode() == Opcode::kParameter) {
      const int64_t n = instr->parameter_number();
      if (n < 0 || n >= static_cast<int64_t>(args.size())) {
        return Annotate(Invalid(absl::StrCat("parameter(", n,
                                             ") but the computation "
                                             "was called with ",
                                             args.size(), " arguments")),
                        instr);
      }
      env[i] = std::move(args[n]);
    } else {
      ++instructions_;
      current_ = instr;
      if (MaybeStop()) {
        if (absl::Status s = Stop(); !s.ok()) return s;
      }
      absl::StatusOr<Value> v = Exec(step, env);
      if (!v.ok()) return Annotate(v.status(), instr);
      const Shape& s = instr->shape();
      const bool mismatch =
          s.IsArray() ? !v->is_array() || v->type() != s.element_type() ||
                            v->rank() != s.rank() ||
                            !std::equal(v->dims().begin(), v->dims().end(),
                                        s.dimensions().begin())
                      : s.IsTuple() && (!v->is_tuple() ||
                                        v->tuple_size() != s.tuple_size());
      if (mismatch) {
        return Annotate(
            Invalid(absl::StrCat(std::string(OpcodeName(instr->opcode())),
                                 " produced ", v->ShapeString(),
                                 ", but the instruction's shape is ",
                                 s.ToString(false))),
            instr);
      }
      env[i] = *std::move(v);
    }
    for (int32_t s : step.release) env[s] = Value();
  }
  if (plan.root < 0) {
    return Invalid(
        absl::StrCat("computation ", plan.computation->name(), " has no root"));
  }
  return std::move(env[plan.root]);
}

absl::StatusOr<Reducer> DeviceRunner::MakeReducer(const ComputationPlan* plan) {
  if (plan == nullptr) return Invalid("missing to_apply computation");
  Reducer r;
  r.fast_op = plan->combiner;
  r.generic =
      [this, plan](
          const std::vector<Value>& acc,
          const std::vector<Value>& xs) -> absl::StatusOr<std::vector<Value>> {
    std::vector<Value> args;
    args.reserve(acc.size() + xs.size());
    args.insert(args.end(), acc.begin(), acc.end());
    args.insert(args.end(), xs.begin(), xs.end());
    absl::StatusOr<Value> out = Eval(*plan, std::move(args));
    if (!out.ok()) return out.status();
    if (out->is_tuple()) return out->elements();
    return std::vector<Value>{*std::move(out)};
  };
  return r;
}

absl::StatusOr<Value> DeviceRunner::ExecSendRecv(const Instruction& instr,
                                                 const Value* data) {
  const Opcode op = instr.opcode();
  const Shape& shape = instr.shape();
  auto it = interp_.p2p_.find(&instr);
  if (it == interp_.p2p_.end()) {
    return absl::InternalError("send/recv was not prepared");
  }
  const Interpreter::PreparedP2P& p2p = it->second;
  if (!shape.IsTuple() || shape.tuple_size() < 2 ||
      !shape.tuple_shapes(1).IsArray()) {
    return Invalid(absl::StrCat(std::string(OpcodeName(op)), " shape ",
                                shape.ToString(false),
                                " is not (data, u32[], token[])"));
  }
  absl::StatusOr<Value> zeros = Value::ZerosOfShape(shape);
  if (!zeros.ok()) return zeros.status();
  std::vector<Value> elems = zeros->elements();
  if (op == Opcode::kSend) {
    if (data == nullptr) {
      return Invalid(absl::StrCat(std::string(OpcodeName(op)),
                                  " needs 1 operands, has 0"));
    }
    std::vector<int64_t> targets;
    for (const auto& [src, dst] : p2p.pairs) {
      if (src == partition_) {
        targets.push_back(interp_.topology_.device_id(replica_, dst));
      }
    }
    rdv_->Send(device_, p2p.channel, targets, *data);
    elems[0] = *data;
  } else {
    // The context element names where the data comes from (device + 1;
    // 0: no pair targets this device), for the recv-done.
    int64_t from = 0;
    for (const auto& [src, dst] : p2p.pairs) {
      if (dst == partition_) {
        from = interp_.topology_.device_id(replica_, src) + 1;
      }
    }
    absl::StatusOr<Value> ctx =
        Value::ScalarFromInt(shape.tuple_shapes(1).element_type(), from);
    if (!ctx.ok()) return ctx.status();
    elems[1] = *std::move(ctx);
  }
  return Value::Tuple(std::move(elems));
}

absl::StatusOr<Value> DeviceRunner::ExecRecvDone(const Instruction& instr,
                                                 const Value& recv) {
  const Shape& shape = instr.shape();
  const Value& t = recv;
  if (!t.is_tuple() || t.tuple_size() < 2 || !t.element(1).is_array() ||
      t.element(1).element_count() != 1 || !shape.IsTuple() ||
      shape.tuple_size() < 1) {
    return Invalid(absl::StrCat("recv-done operand ", t.ShapeString(),
                                " is not a recv tuple"));
  }
  auto it = interp_.p2p_.find(&instr);
  if (it == interp_.p2p_.end()) {
    return absl::InternalError("recv-done was not prepared");
  }
  const int64_t from = t.element(1).GetInt(0);
  Value data = t.element(0);
  if (from > 0) {
    absl::StatusOr<Value> got =
        rdv_->Receive(device_, &instr, it->second.channel, from - 1);
    if (!got.ok()) return got.status();
    if (!got->shape().Compatible(shape.tuple_shapes(0))) {
      return Invalid(absl::StrCat(
          "recv-done expects ", shape.tuple_shapes(0).ToString(false),
          ", device ", from - 1, " sent ", got->ShapeString()));
    }
    data = *std::move(got);
  }
  absl::StatusOr<Value> out = Value::ZerosOfShape(shape);
  if (!out.ok()) return out.status();
  std::vector<Value> elems = out->elements();
  elems[0] = std::move(data);
  return Value::Tuple(std::move(elems));
}

absl::StatusOr<Value> DeviceRunner::Exec(const Step& step,
                                         std::vector<Value>& env) {
  const Instruction* instr = step.instr;
  const Opcode op = instr->opcode();
  const Shape& shape = instr->shape();
  auto operand = [&](int64_t i) -> const Value& {
    return env[step.operands[i]];
  };
  const int64_t nops = static_cast<int64_t>(step.operands.size());
  auto need = [&](int64_t n) -> absl::Status {
    if (nops < n) {
      return Invalid(absl::StrCat(std::string(OpcodeName(op)), " needs ", n,
                                  " operands, has ", nops));
    }
    return absl::OkStatus();
  };
  auto array_dims = [&]() { return ToDims(shape.dimensions()); };
  auto scalar_int = [&](int64_t i) -> absl::StatusOr<int64_t> {
    const Value& v = operand(i);
    if (!v.is_array() || v.element_count() != 1 ||
        !(IsIntegralType(v.type()) || v.type() == PrimitiveType::kPred)) {
      return Invalid(
          absl::StrCat("operand ", i, " of ", std::string(OpcodeName(op)),
                       " must be an integer scalar, got ", v.ShapeString()));
    }
    return v.GetInt(0);
  };
  // Operands `from`.. as integer scalars (dynamic-slice start indices).
  auto scalar_ints = [&](int64_t from) -> absl::StatusOr<std::vector<int64_t>> {
    std::vector<int64_t> values;
    for (int64_t i = from; i < nops; ++i) {
      absl::StatusOr<int64_t> v = scalar_int(i);
      if (!v.ok()) return v.status();
      values.push_back(*v);
    }
    return values;
  };
  auto call = [&](const ComputationPlan* plan,
                  std::vector<Value> args) -> absl::StatusOr<Value> {
    if (plan == nullptr) return Invalid("missing called computation");
    // The callee's instructions were current; this one is again after.
    struct Restore {
      const Instruction*& current;
      const Instruction* instr;
      ~Restore() { current = instr; }
    } restore{current_, instr};
    return Eval(*plan, std::move(args));
  };
  auto operands_from = [&](int64_t first) {
    std::vector<Value> v;
    for (int64_t i = first; i < nops; ++i) v.push_back(operand(i));
    return v;
  };

  if (IsSupportedUnaryOpcode(op) && op != Opcode::kCopy) {
    if (absl::Status s = need(1); !s.ok()) return s;
    return Unary(op, operand(0));
  }
  if (IsSupportedBinaryOpcode(op)) {
    if (absl::Status s = need(2); !s.ok()) return s;
    return Binary(op, operand(0), operand(1));
  }
  switch (op) {
    case Opcode::kConstant: {
      auto it = interp_.constants_.find(instr);
      if (it == interp_.constants_.end()) {
        return absl::InternalError("constant was not prepared");
      }
      return it->second;
    }
    case Opcode::kCopy:
    case Opcode::kOptBarrier:
    case Opcode::kAddDependency:
    case Opcode::kDomain:
    case Opcode::kSetDimensionSize:
    case Opcode::kAsyncUpdate:
      if (absl::Status s = need(1); !s.ok()) return s;
      return operand(0);
    case Opcode::kCustomCall: {
      if (auto it = interp_.gemms_.find(instr); it != interp_.gemms_.end()) {
        return EvalGemm(it->second.call, operands_from(0),
                        it->second.workspace);
      }
      if (auto it = interp_.opaque_.find(instr); it != interp_.opaque_.end()) {
        // An uninterpreted function: values drawn from the target and the
        // bits of every operand.
        uint64_t key = it->second;
        for (int64_t i = 0; i < nops; ++i) {
          key = MixKey(key, Fnv1a64(operand(i)));
        }
        return RandomValue(shape, key);
      }
      // Sharding annotations: identity (checked to keep the shape).
      if (nops == 1 && operand(0).shape().Compatible(shape)) return operand(0);
      std::vector<Value> ops = operands_from(0);
      Value t = Value::Tuple(ops);
      if (t.shape().Compatible(shape)) return t;
      return Invalid(absl::StrCat(
          "custom-call ", instr->attrs().custom_call_target.value(),
          " changes the shape (", t.ShapeString(), " to ",
          shape.ToString(false),
          "): only per-device (partitioned) programs can run"));
    }
    case Opcode::kAfterAll:
    case Opcode::kSendDone:
      return Value::Token();
    case Opcode::kSend:
    case Opcode::kRecv:
      return ExecSendRecv(*instr, nops >= 1 ? &operand(0) : nullptr);
    case Opcode::kRecvDone:
      if (absl::Status s = need(1); !s.ok()) return s;
      return ExecRecvDone(*instr, operand(0));
    case Opcode::kConvert:
      if (absl::Status s = need(1); !s.ok()) return s;
      return Convert(operand(0), shape.element_type());
    case Opcode::kBitcastConvert:
      if (absl::Status s = need(1); !s.ok()) return s;
      return BitcastConvert(operand(0), shape.element_type(), array_dims());
    case Opcode::kCompare:
      if (absl::Status s = need(2); !s.ok()) return s;
      return Compare(instr->attrs().comparison_direction,
                     instr->attrs().comparison_type, operand(0), operand(1));
    case Opcode::kSelect:
      if (absl::Status s = need(3); !s.ok()) return s;
      return Select(operand(0), operand(1), operand(2));
    case Opcode::kClamp:
      if (absl::Status s = need(3); !s.ok()) return s;
      return Clamp(operand(0), operand(1), operand(2));
    case Opcode::kBroadcast:
      if (absl::Status s = need(1); !s.ok()) return s;
      return Broadcast(operand(0), array_dims(), instr->dimensions());
    case Opcode::kReshape:
      if (absl::Status s = need(1); !s.ok()) return s;
      return Reshape(operand(0), array_dims());
    case Opcode::kBitcast:
      if (absl::Status s = need(1); !s.ok()) return s;
      return Bitcast(operand(0), instr->operand(0)->shape(), shape);
    case Opcode::kTranspose:
      if (absl::Status s = need(1); !s.ok()) return s;
      return Transpose(operand(0), instr->dimensions());
    case Opcode::kSlice:
      if (absl::Status s = need(1); !s.ok()) return s;
      return Slice(operand(0), instr->attrs().slice);
    case Opcode::kDynamicSlice: {
      if (absl::Status s = need(1); !s.ok()) return s;
      absl::StatusOr<std::vector<int64_t>> starts = scalar_ints(1);
      if (!starts.ok()) return starts.status();
      return DynamicSlice(operand(0), *starts,
                          instr->attrs().dynamic_slice_sizes);
    }
    case Opcode::kDynamicUpdateSlice: {
      if (absl::Status s = need(2); !s.ok()) return s;
      absl::StatusOr<std::vector<int64_t>> starts = scalar_ints(2);
      if (!starts.ok()) return starts.status();
      const int32_t slot0 = step.operands[0];
      bool reuse = step.operand_dies[0];
      for (int64_t i = 1; i < nops; ++i) reuse &= step.operands[i] != slot0;
      Value base;
      if (reuse) {
        base = std::move(env[slot0]);
        env[slot0] = Value();
        if (base.unique_buffer()) {
          std::atomic_thread_fence(std::memory_order_acquire);
        }
      } else {
        base = env[slot0];
      }
      return DynamicUpdateSlice(std::move(base), operand(1), *starts);
    }
    case Opcode::kConcatenate: {
      if (absl::Status s = need(1); !s.ok()) return s;
      if (instr->dimensions().size() != 1) {
        return Invalid("concatenate needs exactly one dimension");
      }
      std::vector<const Value*> ops;
      for (int64_t i = 0; i < nops; ++i) ops.push_back(&operand(i));
      return Concatenate(ops, instr->dimensions()[0]);
    }
    case Opcode::kPad:
      if (absl::Status s = need(2); !s.ok()) return s;
      return Pad(operand(0), operand(1), instr->attrs().padding);
    case Opcode::kIota:
      return Iota(shape.element_type(), array_dims(),
                  instr->attrs().iota_dimension);
    case Opcode::kReverse:
      if (absl::Status s = need(1); !s.ok()) return s;
      return Reverse(operand(0), instr->dimensions());
    case Opcode::kDot:
      if (absl::Status s = need(2); !s.ok()) return s;
      return Dot(operand(0), operand(1), instr->attrs().dot,
                 shape.element_type());
    case Opcode::kReduce: {
      if (nops < 2 || nops % 2 != 0) {
        return Invalid("reduce needs 2N operands (inputs, then inits)");
      }
      std::vector<Value> inputs, inits;
      for (int64_t i = 0; i < nops / 2; ++i) inputs.push_back(operand(i));
      for (int64_t i = nops / 2; i < nops; ++i) inits.push_back(operand(i));
      absl::StatusOr<Reducer> reducer =
          MakeReducer(step.called.empty() ? nullptr : step.called[0]);
      if (!reducer.ok()) return reducer.status();
      absl::StatusOr<std::vector<Value>> out =
          Reduce(inputs, inits, instr->dimensions(), *reducer);
      if (!out.ok()) return out.status();
      if (shape.IsTuple()) return Value::Tuple(*std::move(out));
      return std::move((*out)[0]);
    }
    case Opcode::kTuple:
      return Value::Tuple(operands_from(0));
    case Opcode::kGetTupleElement: {
      if (absl::Status s = need(1); !s.ok()) return s;
      const Value& t = operand(0);
      const int64_t idx = instr->tuple_index();
      if (!t.is_tuple() || idx < 0 || idx >= t.tuple_size()) {
        return Invalid(absl::StrCat("get-tuple-element index ", idx,
                                    " out of range for ", t.ShapeString()));
      }
      return t.element(idx);
    }
    case Opcode::kCall:
    case Opcode::kFusion:
      return call(step.called.empty() ? nullptr : step.called[0],
                  operands_from(0));
    case Opcode::kWhile: {
      if (absl::Status s = need(1); !s.ok()) return s;
      if (step.called.size() != 2) {
        return Invalid("while needs a condition and a body");
      }
      Value state = operand(0);
      const Instruction* const outer_loop = loop_;
      const int64_t outer_iteration = loop_iteration_;
      loop_ = instr;
      for (int64_t iter = 0;; ++iter) {
        loop_iteration_ = iter;
        std::vector<Value> cond_args{state};
        absl::StatusOr<Value> c = call(step.called[0], std::move(cond_args));
        if (!c.ok()) return c.status();
        if (!c->is_array() || c->type() != PrimitiveType::kPred ||
            c->element_count() != 1) {
          return Invalid(absl::StrCat("while condition returned ",
                                      c->ShapeString(), ", expected pred[]"));
        }
        if (c->data<pred_t>()[0].v == 0) break;
        if (const int64_t limit = interp_.options_.max_iterations;
            limit > 0 && while_iterations_ >= limit) {
          return LimitReached(absl::StrCat(
              "the run reached its limit of ", limit,
              " while-loop iterations per device (all loops together); "
              "raise it with --max-iterations"));
        }
        ++while_iterations_;
        std::vector<Value> body_args;
        body_args.push_back(std::move(state));
        absl::StatusOr<Value> next = call(step.called[1], std::move(body_args));
        if (!next.ok()) return next.status();
        state = *std::move(next);
      }
      loop_ = outer_loop;
      loop_iteration_ = outer_iteration;
      return state;
    }
    case Opcode::kConditional: {
      if (absl::Status s = need(1); !s.ok()) return s;
      const Value& sel = operand(0);
      const int64_t nb = static_cast<int64_t>(step.called.size());
      if (nb == 0 || nops != nb + 1) {
        return Invalid(absl::StrCat("conditional has ", nb, " branches and ",
                                    nops, " operands"));
      }
      if (!sel.is_array() || sel.element_count() != 1) {
        return Invalid("conditional selector must be a scalar");
      }
      int64_t branch;
      if (sel.type() == PrimitiveType::kPred) {
        if (nb != 2) return Invalid("pred conditional needs two branches");
        branch = sel.data<pred_t>()[0].v ? 0 : 1;
      } else {
        branch = sel.GetInt(0);
        if (branch < 0 || branch >= nb) branch = nb - 1;
      }
      return call(step.called[branch], {operand(branch + 1)});
    }
    case Opcode::kPartitionId:
      return Value::ScalarFromInt(PrimitiveType::kU32, partition_);
    case Opcode::kReplicaId:
      return Value::ScalarFromInt(PrimitiveType::kU32, replica_);
    case Opcode::kGetDimensionSize: {
      if (absl::Status s = need(1); !s.ok()) return s;
      const Value& v = operand(0);
      if (instr->dimensions().size() != 1 || !v.is_array() ||
          instr->dimensions()[0] < 0 || instr->dimensions()[0] >= v.rank()) {
        return Invalid("get-dimension-size: bad dimension");
      }
      return Value::ScalarFromInt(shape.element_type(),
                                  v.dim(instr->dimensions()[0]));
    }
    case Opcode::kAsyncStart: {
      if (step.called.empty()) return Invalid("async-start without calls=");
      std::vector<Value> ops = operands_from(0);
      absl::StatusOr<Value> result = call(step.called[0], ops);
      if (!result.ok()) return result.status();
      std::vector<Value> elems{Value::Tuple(std::move(ops)),
                               *std::move(result)};
      for (int64_t i = 2; i < (shape.IsTuple() ? shape.tuple_size() : 0); ++i) {
        absl::StatusOr<Value> z = Value::ZerosOfShape(shape.tuple_shapes(i));
        if (!z.ok()) return z.status();
        elems.push_back(*std::move(z));
      }
      return Value::Tuple(std::move(elems));
    }
    case Opcode::kAsyncDone:
    case Opcode::kAllGatherDone:
    case Opcode::kCollectivePermuteDone: {
      if (absl::Status s = need(1); !s.ok()) return s;
      const Value& t = operand(0);
      if (!t.is_tuple() || t.tuple_size() < 2) {
        return Invalid(absl::StrCat(std::string(OpcodeName(op)), " operand ",
                                    t.ShapeString(), " is not a start tuple"));
      }
      return t.element(1);
    }
    case Opcode::kAllReduceDone: {
      if (absl::Status s = need(1); !s.ok()) return s;
      // A start with an operand part, ((operands...), result), as XLA
      // prints it since 2025; otherwise the start is the result.
      if (!AllReduceStartHasOperandPart(instr->operand(0)->shape())) {
        return operand(0);
      }
      const Value& t = operand(0);
      if (!t.is_tuple() || t.tuple_size() != 2) {
        return Invalid(absl::StrCat("all-reduce-done operand ", t.ShapeString(),
                                    " is not a start tuple"));
      }
      return t.element(1);
    }
    case Opcode::kCopyStart: {
      if (absl::Status s = need(1); !s.ok()) return s;
      std::vector<Value> elems{operand(0), operand(0)};
      for (int64_t i = 2; i < (shape.IsTuple() ? shape.tuple_size() : 0); ++i) {
        absl::StatusOr<Value> z = Value::ZerosOfShape(shape.tuple_shapes(i));
        if (!z.ok()) return z.status();
        elems.push_back(*std::move(z));
      }
      return Value::Tuple(std::move(elems));
    }
    case Opcode::kCopyDone: {
      if (absl::Status s = need(1); !s.ok()) return s;
      const Value& t = operand(0);
      if (!t.is_tuple() || t.tuple_size() < 1) {
        return Invalid("copy-done operand is not a copy-start tuple");
      }
      return t.element(0);
    }
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kReduceScatter:
    case Opcode::kAllToAll:
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart:
    case Opcode::kCollectiveBroadcast:
      return ExecCollective(step, operands_from(0));
    default:
      break;
  }
  return Invalid(
      absl::StrCat("unsupported opcode '", std::string(OpcodeName(op)), "'"));
}

namespace {

// What the collective `instr` returns given its `result`: the result, or
// for a -start the tuple of its operand part (a lone operand bare or in a
// 1-tuple, as its shape says; NativeStartShapeMatches lists the forms),
// the result and any further (zero) elements.
absl::StatusOr<Value> WithOperandPart(const Instruction& instr,
                                      const std::vector<Value>& my_operands,
                                      Value result) {
  const Shape& shape = instr.shape();
  auto operand_part = [&] {
    const bool wrap =
        my_operands.size() != 1 || (shape.IsTuple() && shape.tuple_size() > 0 &&
                                    shape.tuple_shapes(0).IsTuple());
    return wrap ? Value::Tuple(my_operands) : my_operands[0];
  };
  switch (instr.opcode()) {
    case Opcode::kAllGatherStart:
      return Value::Tuple({operand_part(), result});
    case Opcode::kAllReduceStart:
      if (!AllReduceStartHasOperandPart(shape)) return result;
      return Value::Tuple({Value::Tuple(my_operands), result});
    case Opcode::kCollectivePermuteStart: {
      std::vector<Value> elems{operand_part(), result};
      for (int64_t i = 2; i < (shape.IsTuple() ? shape.tuple_size() : 0); ++i) {
        absl::StatusOr<Value> z = Value::ZerosOfShape(shape.tuple_shapes(i));
        if (!z.ok()) return z.status();
        elems.push_back(*std::move(z));
      }
      return Value::Tuple(std::move(elems));
    }
    default:
      return result;
  }
}

}  // namespace

absl::StatusOr<Value> DeviceRunner::ExecCollective(
    const Step& step, std::vector<Value> operands) {
  const Instruction* instr = step.instr;
  const Opcode op = instr->opcode();
  const DeviceTopology& topo = interp_.topology_;
  if (operands.empty()) {
    return Invalid(
        absl::StrCat(std::string(OpcodeName(op)), " has no operands"));
  }
  for (const Value& v : operands) {
    if (!v.is_array()) {
      return Invalid(absl::StrCat(std::string(OpcodeName(op)), " operand ",
                                  v.ShapeString(), " is not an array"));
    }
  }
  const bool is_permute =
      op == Opcode::kCollectivePermute || op == Opcode::kCollectivePermuteStart;
  std::vector<int64_t> participants;
  PermutePlan permute;
  if (is_permute) {
    if (instr->operand_count() == 4 && !instr->shape().IsTuple()) {
      return Invalid(
          "the in-place (4-operand) collective-permute form is "
          "not supported");
    }
    absl::StatusOr<PermutePlan> p = GetPermutePlan(*instr, topo, device_);
    if (!p.ok()) return p.status();
    permute = *std::move(p);
    participants = permute.domain;
  } else {
    absl::StatusOr<std::vector<int64_t>> p =
        GetParticipants(*instr, topo, device_);
    if (!p.ok()) return p.status();
    participants = *std::move(p);
  }
  const int64_t group_size = static_cast<int64_t>(participants.size());
  int64_t rank = 0;
  while (rank < group_size && participants[rank] != device_) ++rank;

  const std::vector<Value> my_operands = operands;
  absl::StatusOr<std::vector<std::vector<Value>>> exchanged =
      rdv_->Exchange(device_, instr, participants, std::move(operands));
  if (!exchanged.ok()) return exchanged.status();
  const std::vector<std::vector<Value>>& all = *exchanged;
  const size_t nvals = my_operands.size();
  for (const auto& v : all) {
    if (v.size() != nvals) {
      return Invalid("devices contribute different operand counts");
    }
  }
  auto part = [&](size_t j) {
    std::vector<Value> p;
    for (const auto& v : all) p.push_back(v[j]);
    return p;
  };
  auto dim0 = [&]() -> absl::StatusOr<int64_t> {
    if (instr->dimensions().size() != 1) {
      return Invalid(absl::StrCat(std::string(OpcodeName(op)),
                                  " needs exactly one dimension"));
    }
    return instr->dimensions()[0];
  };
  std::vector<Value> results;
  switch (op) {
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart: {
      absl::StatusOr<int64_t> d = dim0();
      if (!d.ok()) return d.status();
      for (size_t j = 0; j < nvals; ++j) {
        absl::StatusOr<Value> r = AllGatherData(part(j), *d);
        if (!r.ok()) return r.status();
        results.push_back(*std::move(r));
      }
      break;
    }
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kReduceScatter: {
      absl::StatusOr<Reducer> reducer =
          MakeReducer(step.called.empty() ? nullptr : step.called[0]);
      if (!reducer.ok()) return reducer.status();
      absl::StatusOr<int64_t> d = 0;
      if (op == Opcode::kReduceScatter) {
        d = dim0();
        if (!d.ok()) return d.status();
      }
      for (size_t j = 0; j < nvals; ++j) {
        absl::StatusOr<Value> r =
            op == Opcode::kReduceScatter
                ? ReduceScatterData(part(j), *d, rank, *reducer)
                : AllReduceData(part(j), *reducer);
        if (!r.ok()) return r.status();
        results.push_back(*std::move(r));
      }
      break;
    }
    case Opcode::kAllToAll: {
      if (instr->dimensions().empty()) {
        // Tuple form: operand j goes to rank j.
        if (static_cast<int64_t>(nvals) != group_size) {
          return Invalid(absl::StrCat("tuple all-to-all has ", nvals,
                                      " operands for a group of ", group_size));
        }
        for (int64_t i = 0; i < group_size; ++i) {
          results.push_back(all[i][rank]);
        }
        return Value::Tuple(std::move(results));
      }
      absl::StatusOr<int64_t> d = dim0();
      if (!d.ok()) return d.status();
      for (size_t j = 0; j < nvals; ++j) {
        absl::StatusOr<Value> r = AllToAllData(part(j), *d, rank);
        if (!r.ok()) return r.status();
        results.push_back(*std::move(r));
      }
      break;
    }
    case Opcode::kCollectiveBroadcast:
      for (size_t j = 0; j < nvals; ++j) results.push_back(all[0][j]);
      break;
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart:
      for (size_t j = 0; j < nvals; ++j) {
        if (permute.source >= 0) {
          results.push_back(all[permute.source][j]);
        } else {
          absl::StatusOr<Value> z =
              Value::Zeros(my_operands[j].type(), my_operands[j].dims());
          if (!z.ok()) return z.status();
          results.push_back(*std::move(z));
        }
      }
      break;
    default:
      return Invalid(
          absl::StrCat("not a collective: ", std::string(OpcodeName(op))));
  }
  Value result = nvals == 1 ? results[0] : Value::Tuple(results);
  return WithOperandPart(*instr, my_operands, std::move(result));
}

// --- Interpreter
// ----------------------------------------------------------------

Interpreter::Interpreter(const Module& module, InterpreterOptions options)
    : module_(module), options_(std::move(options)) {}

Interpreter::~Interpreter() = default;

absl::StatusOr<std::unique_ptr<Interpreter>> Interpreter::Create(
    const Module& module, const InterpreterOptions& options) {
  std::unique_ptr<Interpreter> interp(new Interpreter(module, options));
  absl::StatusOr<DeviceTopology> topo =
      ResolveTopology(module, options.num_devices);
  if (!topo.ok()) return topo.status();
  interp->topology_ = *topo;
  if (!topo->derived_from.empty()) interp->notes_.push_back(topo->derived_from);
  if (absl::Status s = interp->Prepare(); !s.ok()) return s;
  int64_t limit = options.memory_limit_bytes;
  if (limit == 0) limit = PhysicalMemoryBytes() / 2;
  if (limit > 0) {
    const int64_t estimate = interp->EstimateTotalBytes();
    if (estimate > limit) {
      // Located at what needs the memory: the largest entry parameter when
      // it outweighs the live values' peak, else where that peak is.
      const Instruction* at = interp->entry_plan_->peak_at;
      bool at_parameter = false;
      int64_t largest = 0;
      const Computation* entry = module.entry();
      for (int64_t p = 0; p < entry->num_parameters(); ++p) {
        const Instruction* param = entry->parameter(p);
        if (param->shape().ByteSize() > largest) {
          largest = param->shape().ByteSize();
          if (largest >= interp->entry_plan_->peak_bytes) {
            at = param;
            at_parameter = true;
          }
        }
      }
      return AtInstruction(
          absl::ResourceExhaustedError(absl::StrCat(
              "module needs an estimated ", estimate, " bytes (",
              estimate >> 20, " MiB: ", interp->num_devices(), " devices x ",
              interp->EstimatePerDeviceBytes() >> 20,
              " MiB of parameters and live values + ",
              interp->EstimateConstantBytes() >> 20,
              " MiB of constants), over the memory limit of ", limit,
              " bytes (", limit >> 20, " MiB)",
              at == nullptr ? ""
              : at_parameter
                  ? absl::StrCat("; the largest part is parameter ", at->name(),
                                 " (", largest >> 20, " MiB)")
                  : absl::StrCat("; the peak of live values is ", Where(at)),
              "; raise it with --memory-limit")),
          at);
    }
  }
  return interp;
}

absl::Status Interpreter::PrepareGemm(
    const Instruction& instr, absl::flat_hash_map<int64_t, Value>& workspaces) {
  absl::StatusOr<GemmCall> call = DecodeGemmCustomCall(instr);
  if (!call.ok()) {
    return AtInstruction(
        Invalid(absl::StrCat("cannot interpret custom-call '",
                             instr.attrs().custom_call_target.value(), "' ",
                             Where(&instr), ": ", call.status().message())),
        &instr);
  }
  PreparedGemm prepared{*std::move(call), Value()};
  if (prepared.call.has_workspace) {
    const Shape& ws = prepared.call.workspace_shape;
    auto it = workspaces.find(ws.ByteSize());
    if (it == workspaces.end()) {
      absl::StatusOr<Value> z = Value::ZerosOfShape(ws);
      if (!z.ok()) return z.status();
      it = workspaces.emplace(ws.ByteSize(), *std::move(z)).first;
    }
    // Same byte count, maybe another element type (s8 / u8).
    prepared.workspace =
        it->second.Reinterpret(ws.element_type(), ToDims(ws.dimensions()));
  }
  gemms_[&instr] = std::move(prepared);
  return absl::OkStatus();
}

absl::Status Interpreter::PrepareP2P(const Instruction& instr) {
  const Opcode op = instr.opcode();
  if (op != Opcode::kSend && op != Opcode::kRecv && op != Opcode::kRecvDone) {
    return absl::OkStatus();
  }
  auto fail = [&](std::string why) {
    return AtInstruction(
        Invalid(absl::StrCat(why, " (computation ",
                             instr.parent() ? instr.parent()->name() : "?",
                             ")")),
        &instr);
  };
  PreparedP2P p2p;
  if (op == Opcode::kRecvDone) {
    // Matched by channel: its own, else its recv's.
    std::optional<int64_t> channel = instr.attrs().channel_id;
    if (!channel.has_value() && instr.operand_count() == 1) {
      channel = instr.operand(0)->attrs().channel_id;
    }
    if (!channel.has_value())
      return fail(absl::StrCat(instr.name(), " has no channel_id"));
    p2p.channel = *channel;
  } else {
    absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> pairs =
        GetSendRecvPairs(instr, topology_.num_partitions);
    if (!pairs.ok()) return fail(std::string(pairs.status().message()));
    p2p.channel = *instr.attrs().channel_id;
    p2p.pairs = *std::move(pairs);
  }
  p2p_[&instr] = std::move(p2p);
  return absl::OkStatus();
}

namespace {

// The computations reachable from `entry`, callees first.
std::vector<const Computation*> CalleesFirst(const Computation* entry) {
  std::vector<const Computation*> order;
  absl::flat_hash_set<const Computation*> seen;
  std::vector<std::pair<const Computation*, bool>> stack{{entry, false}};
  while (!stack.empty()) {
    auto [c, expanded] = stack.back();
    stack.pop_back();
    if (expanded) {
      order.push_back(c);
      continue;
    }
    if (!seen.insert(c).second) continue;
    stack.push_back({c, true});
    for (const auto& instr : c->instructions()) {
      for (const Computation* callee : instr->called_computations()) {
        if (callee != nullptr && !seen.contains(callee)) {
          stack.push_back({callee, false});
        }
      }
    }
  }
  return order;
}

// InvalidArgument at the first instruction the interpreter cannot run.
absl::Status CheckOpcodesSupported(absl::Span<Instruction* const> post,
                                   const InterpreterOptions& options) {
  for (const Instruction* instr : post) {
    if (IsSupportedOpcode(*instr, options.opaque_custom_calls)) continue;
    std::string what(OpcodeName(instr->opcode()));
    if (instr->opcode() == Opcode::kCustomCall) {
      return AtInstruction(
          Invalid(absl::StrCat(
              "opaque custom-call '", instr->attrs().custom_call_target.value(),
              "' ", Where(instr),
              ": the interpreter does not know what it computes "
              "(--opaque-custom-calls runs it as a deterministic "
              "function of its operands)")),
          instr);
    }
    return AtInstruction(
        Invalid(absl::StrCat("unsupported opcode '", what, "' ", Where(instr))),
        instr);
  }
  return absl::OkStatus();
}

// The value of the constant `instr` (of computation `c`): its literal, or
// for an elided one deterministic values when the options allow.
absl::StatusOr<Value> ConstantValue(const Instruction& instr,
                                    const Computation& c,
                                    const InterpreterOptions& options) {
  const Literal* lit = instr.literal();
  if (lit == nullptr) {
    return AtInstruction(
        Invalid(absl::StrCat("constant without a value ", Where(&instr))),
        &instr);
  }
  absl::StatusOr<Value> v;
  if (lit->elided()) {
    if (!options.fill_elided_constants) {
      return AtInstruction(
          Invalid(absl::StrCat(
              "constant ", instr.name(), " (computation ", c.name(),
              ") is elided ({...}); the dump left its values out. Use "
              "--fill-elided-constants to fill elided constants with "
              "deterministic pseudo-random values")),
          &instr);
    }
    v = FillConstant(instr.shape(), options.fill_seed);
  } else {
    v = Value::FromLiteral(*lit);
  }
  if (!v.ok()) {
    return AtInstruction(
        WithMessage(v.status(),
                    absl::StrCat(v.status().message(), " ", Where(&instr))),
        &instr);
  }
  return v;
}

// Which operands die at each step (their last use, unless the root) and
// the slots each step frees, from every slot's last use.
void SetReleases(const std::vector<int32_t>& last_use, ComputationPlan& plan) {
  const size_t n = plan.steps.size();
  for (size_t i = 0; i < n; ++i) {
    Step& step = plan.steps[i];
    step.operand_dies.resize(step.operands.size(), false);
    for (size_t j = 0; j < step.operands.size(); ++j) {
      int32_t s = step.operands[j];
      step.operand_dies[j] =
          last_use[s] == static_cast<int32_t>(i) && s != plan.root;
    }
  }
  for (size_t s = 0; s < n; ++s) {
    if (static_cast<int32_t>(s) == plan.root) continue;
    int32_t at = last_use[s] >= 0 ? last_use[s] : static_cast<int32_t>(s);
    plan.steps[at].release.push_back(static_cast<int32_t>(s));
  }
}

}  // namespace

absl::Status Interpreter::Prepare() {
  absl::flat_hash_map<int64_t, Value> workspaces;
  std::vector<std::string> opaque_targets;
  const Computation* entry = module_.entry();
  if (entry == nullptr) return Invalid("module has no entry computation");
  for (const Computation* c : CalleesFirst(entry)) {
    auto plan = std::make_unique<ComputationPlan>();
    plan->computation = c;
    std::vector<Instruction*> post;
    if (module_.is_scheduled() && !c->IsFusionComputation()) {
      // The stored order is the schedule: run it as is, after checking it.
      if (absl::Status s = VerifySchedule(*c); !s.ok()) return s;
      post.reserve(c->instruction_count());
      for (const auto& i : c->instructions()) post.push_back(i.get());
    } else {
      post = c->MakeInstructionPostOrder();
    }
    absl::flat_hash_map<const Instruction*, int32_t> slot;
    for (size_t i = 0; i < post.size(); ++i) {
      slot[post[i]] = static_cast<int32_t>(i);
    }
    plan->steps.resize(post.size());
    std::vector<int32_t> last_use(post.size(), -1);
    if (absl::Status s = CheckOpcodesSupported(post, options_); !s.ok()) {
      return s;
    }
    for (size_t i = 0; i < post.size(); ++i) {
      const Instruction* instr = post[i];
      if (absl::Status s = CheckShapeSupported(instr->shape(), *instr);
          !s.ok()) {
        return s;
      }
      Step& step = plan->steps[i];
      step.instr = instr;
      for (const Instruction* o : instr->operands()) {
        auto it = slot.find(o);
        if (it == slot.end()) {
          return Invalid(absl::StrCat("operand ", o->name(), " of ",
                                      instr->name(),
                                      " is not in the same computation"));
        }
        step.operands.push_back(it->second);
        last_use[it->second] = static_cast<int32_t>(i);
      }
      for (const Computation* callee : instr->called_computations()) {
        auto it = plans_.find(callee);
        step.called.push_back(it == plans_.end() ? nullptr : it->second.get());
      }
      if (instr->opcode() == Opcode::kCustomCall &&
          IsCublasGemmTarget(instr->attrs().custom_call_target)) {
        if (absl::Status s = PrepareGemm(*instr, workspaces); !s.ok()) {
          return s;
        }
      } else if (instr->opcode() == Opcode::kCustomCall &&
                 !IsIdentityCustomCall(instr->attrs().custom_call_target)) {
        const std::string& target = instr->attrs().custom_call_target.value();
        opaque_[instr] = HashString(target);
        if (std::find(opaque_targets.begin(), opaque_targets.end(), target) ==
            opaque_targets.end()) {
          opaque_targets.push_back(target);
        }
      }
      if (absl::Status s = PrepareP2P(*instr); !s.ok()) return s;
      if (instr->opcode() == Opcode::kConstant) {
        absl::StatusOr<Value> v = ConstantValue(*instr, *c, options_);
        if (!v.ok()) return v.status();
        constants_[instr] = *std::move(v);
      }
    }
    const Instruction* root = c->root();
    if (root != nullptr) {
      auto it = slot.find(root);
      if (it != slot.end()) plan->root = it->second;
    }
    SetReleases(last_use, *plan);
    plan->combiner = DetectCombiner(*c);
    plans_[c] = std::move(plan);
  }
  entry_plan_ = plans_.at(entry).get();
  for (const std::string& target : opaque_targets) {
    int64_t count = 0;
    for (const auto& [instr, key] : opaque_) {
      count += instr->attrs().custom_call_target.value() == target;
    }
    notes_.push_back(absl::StrCat(
        "opaque custom-call '", target, "' (", count, " instruction",
        count == 1 ? "" : "s",
        "): runs as a deterministic function of its operands, so outputs "
        "that depend on it are compared as such, not as what it computes"));
  }
  for (int64_t p = 0; p < entry->num_parameters(); ++p) {
    if (entry->parameter(p) == nullptr) {
      return Invalid(absl::StrCat("entry computation ", entry->name(),
                                  " has no parameter(", p, ")"));
    }
  }
  return absl::OkStatus();
}

std::vector<Shape> Interpreter::ParameterShapes() const {
  std::vector<Shape> shapes;
  const Computation* entry = module_.entry();
  for (int64_t p = 0; p < entry->num_parameters(); ++p) {
    shapes.push_back(entry->parameter(p)->shape());
  }
  return shapes;
}

namespace {

int64_t PlanPeak(ComputationPlan* plan, int depth) {
  if (plan->peak_bytes >= 0) return plan->peak_bytes;
  if (depth > 64) return 0;
  int64_t live = 0, peak = 0;
  std::vector<int64_t> size(plan->steps.size(), 0);
  for (size_t i = 0; i < plan->steps.size(); ++i) {
    const Step& step = plan->steps[i];
    const Instruction* instr = step.instr;
    int64_t callee = 0;
    const Instruction* callee_at = nullptr;
    for (const ComputationPlan* c : step.called) {
      if (c == nullptr) continue;
      const int64_t p = PlanPeak(const_cast<ComputationPlan*>(c), depth + 1);
      if (p > callee) {
        callee = p;
        callee_at = c->peak_at;
      }
    }
    size[i] = StepBytes(step);
    live += size[i];
    if (live + callee > peak || plan->peak_at == nullptr) {
      peak = std::max(peak, live + callee);
      plan->peak_at = callee_at != nullptr ? callee_at : instr;
    }
    for (int32_t s : step.release) live -= size[s];
  }
  plan->peak_bytes = peak;
  return peak;
}

}  // namespace

int64_t Interpreter::EstimatePerDeviceBytes() const {
  int64_t params = 0;
  for (const Shape& s : ParameterShapes()) params += s.ByteSize();
  return params + PlanPeak(const_cast<ComputationPlan*>(entry_plan_), 0);
}

int64_t Interpreter::EstimateConstantBytes() const {
  int64_t total = 0;
  for (const auto& [instr, v] : constants_) total += v.TotalBytes();
  return total;
}

int64_t Interpreter::EstimateTotalBytes() const {
  const int64_t per = EstimatePerDeviceBytes();
  const int64_t n = num_devices();
  if (per > 0 && n > (int64_t{1} << 62) / per) return int64_t{1} << 62;
  return n * per + EstimateConstantBytes();
}

absl::StatusOr<std::vector<Value>> Interpreter::Run(
    const std::vector<std::vector<Value>>& args, RunStats* stats) const {
  const int64_t n = num_devices();
  if (static_cast<int64_t>(args.size()) != n) {
    return Invalid(absl::StrCat("got inputs for ", args.size(),
                                " devices, the run has ", n));
  }
  const std::vector<Shape> shapes = ParameterShapes();
  for (int64_t d = 0; d < n; ++d) {
    if (args[d].size() != shapes.size()) {
      return Invalid(absl::StrCat("device ", d, ": got ", args[d].size(),
                                  " inputs, the entry computation has ",
                                  shapes.size(), " parameters"));
    }
    for (size_t p = 0; p < shapes.size(); ++p) {
      if (!args[d][p].shape().Compatible(shapes[p])) {
        return Invalid(absl::StrCat("device ", d, ": input for parameter ", p,
                                    " has shape ", args[d][p].ShapeString(),
                                    ", expected ", shapes[p].ToString(false)));
      }
    }
  }
  Rendezvous rdv(n, options_.max_parallel_devices);
  std::vector<absl::StatusOr<Value>> results(
      n, absl::StatusOr<Value>(absl::UnknownError("device did not run")));
  std::vector<int64_t> instr_counts(n, 0), iter_counts(n, 0);
  Clock::time_point deadline = Clock::time_point::max();
  if (const double limit = options_.time_limit_seconds; limit > 0) {
    // Limits beyond a century read as none (and cannot overflow the clock).
    if (limit < 3.2e9) {
      deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(limit));
    }
  }
  auto run_device = [&](int64_t d) {
    DeviceRunner runner(*this, &rdv, d, deadline);
    try {
      rdv.Start(d);
      absl::StatusOr<Value> r = runner.Eval(*entry_plan_, args[d]);
      instr_counts[d] = runner.instructions();
      iter_counts[d] = runner.while_iterations();
      if (r.ok()) {
        rdv.Finish(d);
      } else {
        rdv.Fail(d, r.status());
      }
      results[d] = std::move(r);
    } catch (const std::bad_alloc&) {
      const Instruction* at = runner.current_instruction();
      absl::Status st =
          AtInstruction(absl::ResourceExhaustedError(absl::StrCat(
                            "device ", d, " ran out of memory",
                            at != nullptr ? absl::StrCat(" ", Where(at)) : "")),
                        at);
      rdv.Fail(d, st);
      results[d] = st;
    } catch (const std::exception& e) {
      absl::Status st = absl::InternalError(
          absl::StrCat("device ", d, " failed: ", e.what()));
      rdv.Fail(d, st);
      results[d] = st;
    } catch (...) {
      absl::Status st =
          absl::InternalError(absl::StrCat("device ", d, " failed"));
      rdv.Fail(d, st);
      results[d] = st;
    }
  };
  if (n == 1) {
    run_device(0);
  } else {
    std::vector<std::thread> threads;
    threads.reserve(n);
    try {
      for (int64_t d = 0; d < n; ++d) threads.emplace_back(run_device, d);
    } catch (const std::exception& e) {
      rdv.Fail(-1, absl::ResourceExhaustedError(absl::StrCat(
                       "cannot start device threads: ", e.what())));
    }
    for (std::thread& t : threads) t.join();
  }
  if (absl::Status e = rdv.error(); !e.ok()) return e;
  std::vector<Value> out;
  for (int64_t d = 0; d < n; ++d) {
    if (!results[d].ok()) return results[d].status();
    out.push_back(*std::move(results[d]));
  }
  if (stats != nullptr) {
    stats->instructions_executed = 0;
    stats->while_iterations = 0;
    for (int64_t d = 0; d < n; ++d) {
      stats->instructions_executed += instr_counts[d];
      stats->while_iterations += iter_counts[d];
    }
    stats->collectives_executed = rdv.collectives_executed(0);
  }
  return out;
}

absl::StatusOr<std::vector<Value>> RunModule(
    const Module& module, const std::vector<std::vector<Value>>& args,
    const InterpreterOptions& options) {
  absl::StatusOr<std::unique_ptr<Interpreter>> interp =
      Interpreter::Create(module, options);
  if (!interp.ok()) return interp.status();
  const int64_t n = (*interp)->num_devices();
  if (args.size() == 1 && n > 1) {
    std::vector<std::vector<Value>> all(n, args[0]);
    return (*interp)->Run(all);
  }
  if (args.empty() && n >= 1) {
    return (*interp)->Run(std::vector<std::vector<Value>>(n));
  }
  return (*interp)->Run(args);
}

}  // namespace hloverlap::interp
