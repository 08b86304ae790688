#include "passes/double_buffering.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "analysis/call_graph.h"
#include "analysis/while_loop_analysis.h"
#include "hlo/absl_compat.h"
#include "hlo/clone.h"
#include "hlo/ir_util.h"
#include "hlo/verifier.h"
#include "passes/dce.h"
#include "passes/loop_pass_driver.h"
#include "passes/loop_rewrite.h"
#include "passes/pass_registry.h"
#include "passes/planning.h"

namespace hloverlap {
namespace {

constexpr std::string_view kPassName = "double-buffer";

using InstrMap = absl::flat_hash_map<const Instruction*, Instruction*>;

// Collectives (synchronous or async) in `comp` or the non-loop computations
// it calls.
int64_t CountCollectives(const Computation& comp,
                         absl::flat_hash_set<const Computation*>& seen) {
  if (!seen.insert(&comp).second) return 0;
  int64_t n = 0;
  for (const auto& inst : comp.instructions()) {
    const Opcode op = inst->opcode();
    if (IsCollective(op) || (IsAsyncStart(op) && op != Opcode::kCopyStart &&
                             op != Opcode::kAsyncStart)) {
      ++n;
    }
    if (op == Opcode::kWhile) continue;
    for (const Computation* callee : inst->called_computations()) {
      if (callee != nullptr) n += CountCollectives(*callee, seen);
    }
  }
  return n;
}

// Makes the unrolled body advance the induction variable (tuple index k)
// by 2*step in one instruction, reading `iv_gte` (the body parameter's
// element k; created when null), and drops the second copy's own update
// when nothing else reads it.
absl::Status AdvanceBy2(Computation& body_ref, const WhileLoopInfo& info,
                        Instruction* iv_gte, Instruction* root2) {
  Computation* body = &body_ref;
  Module& module = *body->parent();
  Instruction* param = body->parameter(0);
  const int64_t k = *info.iv_index;
  // Two steps at the counter's width (wrapping as the two adds would).
  std::optional<IntValue> step2 = info.StepTimes(2);
  if (!step2.has_value()) {
    return absl::InternalError("the induction variable has no step");
  }
  const Shape iv_shape = param->shape().tuple_shapes(k);
  if (iv_gte == nullptr) {
    iv_gte =
        body->AddInstruction(NewGetTupleElement(module, "gte.iv", param, k));
  }
  Instruction* cst = body->AddInstruction(
      NewConstant(module, "double_buffer_step", step2->ToLiteral()));
  auto add = std::make_unique<Instruction>(
      Opcode::kAdd, module.UniqueInstructionName("double_buffer_iv"), iv_shape);
  add->AppendOperand(iv_gte);
  add->AppendOperand(cst);
  Instruction* next = body->AddInstruction(std::move(add));
  Instruction* old_next = root2->operand(k);
  root2->ReplaceOperandWith(k, next);
  // The second copy's own update is dead unless something else reads it.
  if (old_next->user_count() == 0 && old_next->control_successors().empty() &&
      old_next->parent() == body && old_next->opcode() != Opcode::kParameter) {
    absl::flat_hash_set<Instruction*> ops(old_next->operands().begin(),
                                          old_next->operands().end());
    if (body->RemoveInstruction(old_next).ok()) {
      for (Instruction* op : ops) {
        if (op->user_count() == 0 && op->opcode() == Opcode::kConstant &&
            op->control_successors().empty() && op != body->root()) {
          (void)body->RemoveInstruction(op);
        }
      }
    }
  }

  return absl::OkStatus();
}

// The predicted effect of unrolling (planning.h). In the unrolled body the
// scheduler may overlap a collective of one copy with the other copy's
// compute that does not wait for it:
//  - the second copy's collective with the first copy's compute that does
//    not produce its operand (all of it when the operand reads only
//    loop-invariant values and the counter: a weight slice's all-gather);
//  - the first copy's collective with the second copy's compute that does
//    not read what it writes (all of it but the store when its result only
//    goes into a loop output: a gradient's reduce-scatter).
// A collective whose operand comes from the previous iteration's compute
// and whose result the next iteration's compute reads overlaps nothing
// more. Per unrolled pair the hidden time is at most one copy's compute;
// the peeled iteration (odd trip counts) hides nothing. Unrolling copies no
// compute (the peeled iteration is one of the loop's own), so the gain is
// the hidden time; each overlapped collective keeps one more result live.
struct DoubleBufferEstimate {
  CandidateEstimate estimate;
  int64_t collectives = 0;
  int64_t overlapped = 0;
  // A collective that overlaps nothing more (for the refusal's reason).
  const Instruction* blocked = nullptr;
};

bool IsBodyCollective(const Instruction& x) {
  const Opcode op = x.opcode();
  return IsCollective(op) || (IsAsyncStart(op) && op != Opcode::kCopyStart &&
                              op != Opcode::kAsyncStart);
}

DoubleBufferEstimate EstimateDoubleBuffer(const Instruction& w,
                                          const WhileLoopInfo& info,
                                          const CostOracle* oracle) {
  DoubleBufferEstimate out;
  const Computation& body = *w.while_body();
  const Instruction* param = body.parameter(0);
  const Instruction* root = body.root();
  const std::vector<Instruction*> post = body.MakeInstructionPostOrder();
  // Compute a collective can hide behind: not scalars (the counter's
  // update, index arithmetic) and not loop-invariant values (the same every
  // iteration; compilers hoist them).
  const absl::flat_hash_set<const Instruction*> invariant =
      FindLoopInvariantInstructions(body, info.invariant_index);
  absl::flat_hash_map<const Instruction*, double> us;
  double iteration_us = 0;
  for (const Instruction* x : post) {
    const bool counts = oracle != nullptr && !IsBodyCollective(*x) &&
                        !invariant.contains(x) && !x->shape().IsTuple() &&
                        x->shape().rank() > 0;
    const double t = counts ? std::max(0.0, oracle->ComputeUs(*x)) : 0;
    us[x] = t;
    iteration_us += t;
  }
  // State elements the next iteration reads from this one's compute (not
  // invariant, not the counter, whose update is one add).
  auto varying = [&](int64_t j) {
    if (info.iv_index.has_value() && j == *info.iv_index) return false;
    return j < 0 || static_cast<size_t>(j) >= info.invariant_index.size() ||
           !info.invariant_index[j];
  };
  // Reachability within the body, from `seeds` along operands or users.
  auto reach = [](std::vector<const Instruction*> seeds, bool up) {
    absl::flat_hash_set<const Instruction*> seen(seeds.begin(), seeds.end());
    while (!seeds.empty()) {
      const Instruction* x = seeds.back();
      seeds.pop_back();
      if (up) {
        for (const Instruction* o : x->operands()) {
          if (seen.insert(o).second) seeds.push_back(o);
        }
      } else {
        for (const Instruction* u : x->users()) {
          if (seen.insert(u).second) seeds.push_back(u);
        }
      }
    }
    return seen;
  };
  // The compute of the instructions outside `set` (exactly 0 when the set
  // holds every instruction that has any).
  auto outside = [&](const absl::flat_hash_set<const Instruction*>& set) {
    double t = 0;
    for (const Instruction* x : post) {
      if (!set.contains(x)) t += us[x];
    }
    return t;
  };
  const bool tuple_root = root != nullptr && root->opcode() == Opcode::kTuple;
  double hideable_us = 0;
  for (const Instruction* c : post) {
    if (!IsBodyCollective(*c)) continue;
    ++out.collectives;
    const absl::flat_hash_set<const Instruction*> up =
        reach({c->operands().begin(), c->operands().end()}, true);
    // Ahead: the first copy's compute that does not produce the varying
    // state this collective's operand reads.
    std::vector<const Instruction*> producers;
    bool opaque = false;
    for (const Instruction* x : up) {
      if (x == param) {
        for (const Instruction* u : param->users()) {
          if (u->opcode() != Opcode::kGetTupleElement && up.contains(u)) {
            opaque = true;
          }
        }
      }
      if (x->opcode() != Opcode::kGetTupleElement || x->operand(0) != param ||
          !varying(x->tuple_index())) {
        continue;
      }
      if (!tuple_root || x->tuple_index() >= root->operand_count()) {
        opaque = true;
        continue;
      }
      producers.push_back(root->operand(x->tuple_index()));
    }
    const double ahead_us = opaque ? 0 : outside(reach(producers, true));
    // Behind: the second copy's compute that does not read the state this
    // collective's result is written into.
    const absl::flat_hash_set<const Instruction*> down = reach({c}, false);
    std::vector<const Instruction*> readers;
    bool escapes = !tuple_root;
    if (tuple_root) {
      for (int64_t j = 0; j < root->operand_count(); ++j) {
        if (!down.contains(root->operand(j))) continue;
        for (const Instruction* u : param->users()) {
          if (u->opcode() != Opcode::kGetTupleElement) escapes = true;
          if (u->opcode() == Opcode::kGetTupleElement &&
              u->tuple_index() == j) {
            readers.push_back(u);
          }
        }
      }
    }
    const double behind_us = escapes ? 0 : outside(reach(readers, false));
    const double coll_us = oracle == nullptr ? 0 : oracle->CollectiveUs(*c);
    const double hidden =
        std::min(coll_us, ahead_us) + std::min(coll_us, behind_us);
    // Without an oracle nothing is predicted: every collective counts.
    if (oracle != nullptr && hidden <= 0) {
      if (out.blocked == nullptr) out.blocked = c;
      continue;
    }
    ++out.overlapped;
    hideable_us += hidden;
    // One more result in flight.
    out.estimate.extra_live_bytes =
        AddLiveBytes(out.estimate.extra_live_bytes, ExtraLiveBytes(c->shape()));
  }
  if (oracle != nullptr) {
    const int64_t pairs = info.trip_count.value_or(0) / 2;
    out.estimate.predicted = true;
    out.estimate.hidden_us =
        static_cast<double>(pairs) * std::min(hideable_us, iteration_us);
  }
  return out;
}

class DoubleBufferer {
 public:
  DoubleBufferer(Module& module, PassContext& context)
      : module_(module),
        context_(context),
        driver_(kPassName, module, context) {}

  absl::StatusOr<bool> Run();

 private:
  // Why the loop is (not) unrolled; empty `why_not` means unroll.
  struct Decision {
    bool unroll = false;
    bool forced = false;  // a --loop rule or attribute turned it on
    std::string name;     // the remark's (docs/REMARKS.md)
    std::string reason;
    std::string suggestion;
  };
  Decision Decide(const LoopNode& node);
  // What PlanLoop decided for a loop, as a value that Apply carries out.
  struct Plan {
    Instruction* loop = nullptr;
    WhileLoopInfo info;
    Remark passed;  // emitted once the rewrite commits
    LoopRewriteRequest request;
  };
  // Decide, the loop's analysis and the plan's checks (profit, memory): the
  // plan, or none (with a missed remark) when the loop is left alone.
  std::optional<Plan> PlanLoop(const LoopNode& node);
  // The missed remark of a loop whose trip count or state (`info`) cannot
  // be unrolled; none when it can.
  std::optional<Remark> CannotUnroll(const LoopNode& node,
                                     const WhileLoopInfo& info);
  // The remark of an unrolling decided by `d`, predicted by `e`.
  Remark PassedRemark(const LoopNode& node, const Decision& d,
                      const WhileLoopInfo& info, const CandidateEstimate& e);
  // The driver's request for unrolling `node`'s loop of `trips` iterations.
  static LoopRewriteRequest RewriteRequest(const LoopNode& node, int64_t trips,
                                           const CandidateEstimate& e);
  // Unrolls as planned; false when the driver discarded the rewrite.
  absl::StatusOr<bool> Apply(const Plan& plan);
  absl::Status Rewrite(Instruction* w, const WhileLoopInfo& info,
                       LoopRewrite& txn);

  Remark MakeRemark(RemarkKind kind, std::string name, const LoopNode& node,
                    std::string message) {
    return InstructionRemark(kPassName, kind, std::move(name),
                             *node.while_instr, module_, node.path,
                             std::move(message));
  }

  Module& module_;
  PassContext& context_;
  LoopPassDriver driver_;
};

DoubleBufferer::Decision DoubleBufferer::Decide(const LoopNode& node) {
  const PassOptions& opts = context_.options;
  std::string warning;
  LoopPolicy policy = ResolveLoopPolicy(node, opts.loop_rules, &warning);
  if (!warning.empty()) {
    context_.remarks.Emit(MakeRemark(RemarkKind::kWarning,
                                     "IgnoredLoopAttribute", node, warning));
  }
  Decision d;
  if (policy.double_buffer.has_value()) {
    // Name the setting that decided: the last matching --loop rule, else
    // the frontend attributes.
    std::string source;
    const LoopPolicy from_attrs = ResolveLoopPolicy(node, {});
    for (const LoopRule& rule : opts.loop_rules) {
      if (!rule.policy.double_buffer.has_value()) continue;
      LoopPolicy alone = ResolveLoopPolicy(node, {rule});
      if (alone.double_buffer == rule.policy.double_buffer &&
          (alone.double_buffer != from_attrs.double_buffer ||
           !from_attrs.double_buffer.has_value())) {
        source = absl::StrCat("--loop=", rule.text);
      }
    }
    if (source.empty()) {
      const FrontendAttributes& fa =
          node.while_instr->attrs().frontend_attributes;
      source = FindFrontendAttribute(fa, "_hloverlap_double_buffer") != nullptr
                   ? "frontend attribute _hloverlap_double_buffer"
                   : "frontend attribute _xla_loop_unroll_strategy";
    }
    d.unroll = *policy.double_buffer;
    d.forced = d.unroll;
    d.name = d.unroll ? "DoubleBuffered" : "DoubleBufferingOff";
    d.reason = absl::StrCat("double buffering is ", d.unroll ? "on" : "off",
                            " for this loop (", source, ")");
    return d;
  }
  absl::flat_hash_set<const Computation*> seen;
  const int64_t colls =
      node.while_instr->called_computations().size() == 2
          ? CountCollectives(*node.while_instr->while_body(), seen)
          : 0;
  if (!node.children.empty()) {
    d.name = "NotInnermost";
    d.reason =
        "outer loop: only innermost loops are double-buffered by default "
        "(unrolling an outer loop doubles everything nested in it)";
    d.suggestion =
        "ask for it with _xla_loop_unroll_strategy=\"double-buffer\", "
        "_hloverlap_double_buffer=\"on\" or --loop=<selector>:double-buffer=on";
    return d;
  }
  if (colls == 0) {
    d.name = "NoCollectiveToOverlap";
    d.reason = "the loop contains no collective to overlap";
    d.suggestion = "force it with --loop=<selector>:double-buffer=on";
    return d;
  }
  if (!opts.double_buffer_default) {
    d.name = "DisabledByFlag";
    d.reason = absl::StrCat("double buffering by default is off",
                            opts.SourceOf("double_buffer_default"));
    d.suggestion =
        "turn it on for a loop with --loop=<selector>:double-buffer=on";
    return d;
  }
  d.unroll = true;
  d.name = "DoubleBuffered";
  d.reason = absl::StrCat("innermost loop with ", colls, " collective",
                          colls == 1 ? "" : "s");
  return d;
}

absl::Status DoubleBufferer::Rewrite(Instruction* w, const WhileLoopInfo& info,
                                     LoopRewrite& txn) {
  Computation* parent = w->parent();
  const int64_t trips = *info.trip_count;
  // With a recognised induction variable (index k, constant step) the body
  // advances it by 2*step in one instruction; otherwise (trip count from
  // known_trip_count) the second copy's own update stays chained.
  const bool advance_iv = info.iv_index.has_value() && info.step.has_value();
  const int64_t k = advance_iv ? *info.iv_index : -1;
  const bool peel = trips % 2 == 1;

  // New condition (a copy) and body (a copy, then a second copy appended).
  absl::StatusOr<std::pair<Computation*, Computation*>> loops =
      txn.CloneLoop(*w, "double_buffer");
  if (!loops.ok()) return loops.status();
  auto [cond, body] = *loops;
  if (absl::Status s = txn.Checkpoint("copying the loop"); !s.ok()) return s;
  Instruction* param = body->parameter(0);
  Instruction* root1 = body->root();
  if (param == nullptr || root1 == nullptr) {
    return absl::InternalError("the copied loop body has no parameter or root");
  }
  const bool tuple_root = root1->opcode() == Opcode::kTuple;
  if (advance_iv && (!tuple_root || k >= root1->operand_count())) {
    return absl::InternalError("the copied loop body has no tuple root");
  }
  std::vector<Instruction*> first = body->MakeInstructionPostOrder();
  InstrMap map;
  map[param] = root1;
  std::vector<Instruction*> to_clone;
  Instruction* iv_gte = nullptr;
  for (Instruction* inst : first) {
    if (inst == param) continue;
    if (tuple_root && inst->opcode() == Opcode::kGetTupleElement &&
        inst->operand(0) == param &&
        inst->tuple_index() < root1->operand_count()) {
      // The second copy reads the first copy's outputs directly.
      map[inst] = root1->operand(inst->tuple_index());
      if (inst->tuple_index() == k && iv_gte == nullptr) iv_gte = inst;
      continue;
    }
    to_clone.push_back(inst);
  }
  CloneIntoOptions options;
  options.suffix = "double_buffer_clone";
  if (absl::Status s = txn.CloneInto(to_clone, *body, map, options); !s.ok()) {
    return s;
  }
  auto root2_it = map.find(root1);
  if (root2_it == map.end()) {
    return absl::InternalError("the second copy has no root");
  }
  Instruction* root2 = root2_it->second;
  if (absl::Status s = txn.Checkpoint("appending the second copy"); !s.ok()) {
    return s;
  }
  body->set_root(root2);
  // The second copy read the first copy's outputs directly.
  if (root1 != root2 && root1 != param && root1->user_count() == 0 &&
      root1->control_successors().empty()) {
    if (absl::Status s = body->RemoveInstruction(root1); !s.ok()) return s;
  }

  if (advance_iv) {
    if (absl::Status s = AdvanceBy2(*body, info, iv_gte, root2); !s.ok()) {
      return s;
    }
    if (absl::Status s = txn.Checkpoint("advancing the counter by 2");
        !s.ok()) {
      return s;
    }
  }

  // Odd trip count: the first iteration runs in front of the loop.
  Instruction* init = w->operand(0);
  if (peel) {
    const Computation* old_body = w->while_body();
    const Instruction* old_param = old_body->parameter(0);
    InstrMap pmap;
    pmap[old_param] = init;
    std::vector<Instruction*> peeled;
    for (Instruction* inst : old_body->MakeInstructionPostOrder()) {
      if (inst == old_param) continue;
      if (init->opcode() == Opcode::kTuple &&
          inst->opcode() == Opcode::kGetTupleElement &&
          inst->operand(0) == old_param &&
          inst->tuple_index() < init->operand_count()) {
        pmap[inst] = init->operand(inst->tuple_index());
        continue;
      }
      peeled.push_back(inst);
    }
    CloneIntoOptions popts;
    popts.suffix = "peeled_double_buffer";
    popts.insert_before = w;
    if (absl::Status s = txn.CloneInto(peeled, *parent, pmap, popts); !s.ok()) {
      return s;
    }
    auto peeled_root = pmap.find(old_body->root());
    if (peeled_root == pmap.end()) {
      return absl::InternalError("the peeled iteration has no root");
    }
    init = peeled_root->second;
    if (absl::Status s = txn.Checkpoint("peeling the first iteration");
        !s.ok()) {
      return s;
    }
  }

  auto nw = std::make_unique<Instruction>(
      Opcode::kWhile, module_.UniqueInstructionName(w->name()), w->shape());
  nw->CopyAttributesFrom(*w);
  nw->mutable_called_computations() = {cond, body};
  nw->AppendOperand(init);
  SetWhileTripCount(
      *nw, trips / 2,
      advance_iv ? info.KnownInitStepFrom(peel ? 1 : 0, 2) : std::nullopt);
  Instruction* new_while = txn.Add(*parent, std::move(nw), w);

  // At commit (after verifying the new computations and `parent`): the new
  // loop replaces the old one, a peeled iteration running first inherits
  // its ordering constraints. The first copy takes back the names of the
  // instructions it copies (they are gone with the old computations), the
  // second copy is "NAME.double_buffer_clone": the unrolled loop reads like
  // the original.
  if (absl::Status s =
          txn.ReplaceLoopAtCommit(w, new_while, peel ? init : new_while);
      !s.ok()) {
    return s;
  }
  txn.RenameAtCommit(body, ".double_buffer.double_buffer_clone",
                     ".double_buffer_clone", w->while_body());
  txn.RenameAtCommit(body, ".double_buffer", "", w->while_body());
  txn.RenameAtCommit(cond, ".double_buffer", "", w->while_condition());
  return absl::OkStatus();
}

std::optional<Remark> DoubleBufferer::CannotUnroll(const LoopNode& node,
                                                   const WhileLoopInfo& info) {
  const Instruction* w = node.while_instr;
  std::string why, why_name = "UnknownTripCount";
  if (!info.trip_count.has_value()) {
    why = absl::StrCat(
        "the trip count is unknown (",
        info.missing.empty() ? "no induction variable" : info.missing,
        info.known_trip_count.has_value()
            ? ") and the condition contradicts its known_trip_count"
            : ") and the loop has no known_trip_count");
  } else if (*info.trip_count < 2) {
    why_name = "SingleIteration";
    why = absl::StrCat("trip count ", *info.trip_count,
                       ": there is no second iteration to unroll");
  } else if (w->called_computations().size() != 2 ||
             w->while_body()->parameter(0) == nullptr ||
             w->while_body()->root() == nullptr) {
    why_name = "OpaqueLoopState";
    why = "the loop has no body parameter or root";
  }
  if (why.empty()) return std::nullopt;
  Remark r = MakeRemark(RemarkKind::kMissed, why_name, node,
                        absl::StrCat("not double-buffered: ", why));
  r.suggestion =
      "write the loop as a fori_loop/scan with static bounds (the "
      "induction variable pattern of while_loop_analysis.h)";
  return r;
}

Remark DoubleBufferer::PassedRemark(const LoopNode& node, const Decision& d,
                                    const WhileLoopInfo& info,
                                    const CandidateEstimate& e) {
  const int64_t trips = *info.trip_count;
  // A planned run says what the plan predicted (forced: also when it
  // predicts no gain).
  std::string planned;
  if (context_.options.double_buffer_plan) {
    planned = absl::StrCat(d.forced ? "; forced, " : "; ", DescribeEstimate(e));
  }
  Remark passed = MakeRemark(RemarkKind::kPassed, "DoubleBuffered", node, "");
  passed.format = absl::StrCat(
      "double-buffered ({reason}): unrolled by 2, trip count {trip_count}",
      info.trip_count_source == TripCountSource::kKnownTripCount
          ? absl::StrCat(" (", info.TripCountOrigin(), ")")
          : "",
      " -> {new_trip_count}",
      trips % 2 ? ", first iteration peeled before the loop" : "", planned);
  passed.Text("reason", d.reason)
      .Loop("loop", node.path)
      .Int("trip_count", trips)
      .Int("new_trip_count", trips / 2);
  passed.Metric("trip_count", trips);
  passed.Metric("new_trip_count", trips / 2);
  passed.Metric("peeled", trips % 2);
  // The prediction (JSON, explain), planned or not.
  if (e.predicted) AddEstimateMetrics(e, passed.metrics);
  return passed;
}

LoopRewriteRequest DoubleBufferer::RewriteRequest(const LoopNode& node,
                                                  int64_t trips,
                                                  const CandidateEstimate& e) {
  const Instruction* w = node.while_instr;
  // Module-size guard: Rewrite copies the condition and the body twice
  // (nested loops included), the body once more for a peeled iteration,
  // and adds a few instructions (the counter's update, the new while).
  const int64_t body_cost =
      CloneCost(w->while_body()->MakeInstructionPostOrder());
  LoopRewriteRequest request;
  request.at = w;
  request.loop = node.path;
  request.what = absl::StrCat("unrolling while loop ", w->name(),
                              " (computation ", w->parent()->name(), ")");
  request.added_instructions =
      LoopCloneCost(*w) + body_cost * (1 + trips % 2) + 8;
  request.avoid =
      "keep double buffering off this loop "
      "(--loop=SELECTOR:double-buffer=off)";
  request.extra_live_bytes = e.extra_live_bytes;
  request.verify_what = "the unrolled loop does not verify: ";
  request.failure_prefix = "double buffering discarded: ";
  return request;
}

std::optional<DoubleBufferer::Plan> DoubleBufferer::PlanLoop(
    const LoopNode& node) {
  Decision d = Decide(node);
  if (!d.unroll) {
    Remark r = MakeRemark(RemarkKind::kMissed, d.name, node,
                          absl::StrCat("not double-buffered: ", d.reason));
    r.suggestion = d.suggestion;
    context_.remarks.Emit(std::move(r));
    return std::nullopt;
  }
  Instruction* w = node.while_instr;
  const WhileLoopInfo info = AnalyzeWhileLoop(*w);
  EmitTripCountWarning(info, kPassName, node.path, context_.remarks);
  if (std::optional<Remark> no = CannotUnroll(node, info); no.has_value()) {
    context_.remarks.Emit(std::move(*no));
    return std::nullopt;
  }
  const int64_t trips = *info.trip_count;
  // Plan: the predicted gain (when planning and not forced) and the ledger.
  const bool plan = context_.options.double_buffer_plan;
  const DoubleBufferEstimate de =
      EstimateDoubleBuffer(*w, info, context_.cost_oracle);
  const CandidateEstimate& e = de.estimate;
  // A plan's refusal carries the predicted numbers (metrics).
  auto refuse = [&](Remark r, std::string suggestion) {
    r.suggestion = std::move(suggestion);
    AddEstimateMetrics(e, r.metrics);
    r.Metric("trip_count", trips);
    context_.remarks.Emit(std::move(r));
    return std::nullopt;
  };
  if (plan && !d.forced && e.predicted && e.net_us() <= 0) {
    Remark r =
        MakeRemark(RemarkKind::kMissed, std::string(kNotProfitable), node, "");
    if (de.blocked != nullptr) {
      r.format = absl::StrCat(
          "not double-buffered: unrolling would hide no communication: "
          "{collective} reads what the previous iteration computes and the "
          "next iteration's compute needs its result (",
          DescribeEstimate(e), ")");
      r.Instr("collective", de.blocked->name());
    } else {
      r.format = absl::StrCat(
          "not double-buffered: the predicted net saving is not positive (",
          DescribeEstimate(e), ")");
    }
    return refuse(std::move(r),
                  "unrolling helps a collective whose operand is "
                  "loop-invariant (a weight slice) or whose result only goes "
                  "into a loop output; force it with "
                  "--loop=SELECTOR:double-buffer=on");
  }
  if (!context_.memory.Allows(e.extra_live_bytes)) {
    Remark r = MakeRemark(
        RemarkKind::kMissed, std::string(kOverMemoryBudget), node,
        absl::StrCat("not double-buffered",
                     d.forced ? " (asked for, but over the budget)" : "", ": ",
                     context_.memory.Describe(), " leaves no room for ",
                     e.extra_live_bytes,
                     " extra live bytes (the second copy's collective "
                     "results, in flight with the first's)"));
    return refuse(std::move(r),
                  "raise --memory-budget, or keep double buffering off this "
                  "loop (--loop=SELECTOR:double-buffer=off)");
  }
  // Remarks describe the loop before the rewrite deletes it.
  return Plan{w, info, PassedRemark(node, d, info, e),
              RewriteRequest(node, trips, e)};
}

absl::StatusOr<bool> DoubleBufferer::Apply(const Plan& plan) {
  absl::StatusOr<bool> done = driver_.Rewrite(
      plan.request,
      [&](LoopRewrite& txn) { return Rewrite(plan.loop, plan.info, txn); });
  if (!done.ok() || !*done) return done;
  context_.remarks.Emit(plan.passed);
  return true;
}

absl::StatusOr<bool> DoubleBufferer::Run() {
  // Innermost first: an outer loop's copies then hold unrolled inner loops.
  for (const LoopNode* node : driver_.nest().InnermostFirst()) {
    if (!driver_.Alive(node->while_instr)) continue;
    std::optional<Plan> plan = PlanLoop(*node);
    if (!plan.has_value()) continue;
    absl::StatusOr<bool> r = Apply(*plan);
    if (!r.ok()) return r.status();
  }
  const bool changed = driver_.changed();
  if (changed) {
    RemoveUnreachableComputations(module_);
    module_.SortComputationsCalleesFirst();
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> DoubleBufferPass::Run(Module& module,
                                           PassContext& context) {
  DoubleBufferer bufferer(module, context);
  absl::StatusOr<bool> changed = bufferer.Run();
  if (!changed.ok() || !*changed || !module.is_scheduled()) return changed;
  // The unrolled bodies are built by appending: in a scheduled module their
  // stored order is the schedule, so put each one that no longer runs as
  // written (an operand after its user) in post order. The scheduler, when
  // it runs next, replaces it; until then the module stays valid
  // (--verify-each, a pipeline that stops here).
  for (const auto& comp : module.computations()) {
    if (VerifySchedule(*comp).ok()) continue;
    if (absl::Status s =
            comp->SetInstructionOrder(comp->MakeInstructionPostOrder());
        !s.ok()) {
      return absl::InternalError(absl::StrCat("double-buffer: reordering ",
                                              comp->name(), ": ", s.message()));
    }
  }
  return changed;
}

// Registration (passes/pass_registry.h).
void RegisterDoubleBufferPass(PassRegistry& registry) {
  registry.Add<DoubleBufferPass>(
      "unroll loops by 2 (odd trip counts peel one iteration); innermost "
      "loops with collectives by default",
      {PassOptionInfo::Bool("default", &PassOptions::double_buffer_default,
                            "double-buffer innermost loops with collectives "
                            "when no --loop rule or attribute decides")
           .SetSourceKey("double_buffer_default"),
       PassOptionInfo::Bool("plan", &PassOptions::double_buffer_plan,
                            "unroll a loop only when the cost model predicts "
                            "a gain and --memory-budget allows it (a --loop "
                            "rule or attribute that turns it on still forces "
                            "it); off: every selected loop, as XLA")
           .SetSourceKey("double_buffer_plan")});
}

}  // namespace hloverlap
