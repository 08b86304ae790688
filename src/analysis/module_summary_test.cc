// Unit tests of the module summary (loop tree, trip counts, collectives).
#include "analysis/module_summary.h"

#include <filesystem>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/computation.h"
#include "hlo/module.h"
#include "hlo/parser.h"

namespace hloverlap {
namespace {

using ::testing::ElementsAre;

Shape F32(absl::InlinedVector<int64_t, 6> dims) {
  Shape s(PrimitiveType::kF32, std::move(dims));
  s.SetDefaultLayout();
  return s;
}

Shape LoopState() {
  return Shape::Tuple({Shape::Scalar(PrimitiveType::kS32), F32({8})});
}

ReplicaGroups TwoDevices() {
  ReplicaGroups g;
  g.format = ReplicaGroups::Format::kExplicit;
  g.explicit_groups = {{0, 1}};
  return g;
}

// Builds modules by hand: computations are added callees first.
class Builder {
 public:
  Builder() : module_(std::make_unique<Module>("m")) {}

  Computation* Add(std::string name) {
    return module_->AddComputation(
        std::make_unique<Computation>(std::move(name)));
  }

  // A scalar add reduction (to_apply of all-reduce / reduce-scatter).
  Computation* AddReduction(std::string name) {
    Computation* c = Add(std::move(name));
    Instruction* a = Param(c, 0, Shape::Scalar(PrimitiveType::kF32));
    Instruction* b = Param(c, 1, Shape::Scalar(PrimitiveType::kF32));
    c->set_root(c->AddInstruction(Opcode::kAdd, c->name() + ".add",
                                  Shape::Scalar(PrimitiveType::kF32), {a, b}));
    return c;
  }

  Instruction* Param(Computation* c, int64_t n, Shape shape) {
    auto p = std::make_unique<Instruction>(
        Opcode::kParameter, absl::StrCat(c->name(), ".p", n), std::move(shape));
    p->mutable_attrs().parameter_number = n;
    return c->AddInstruction(std::move(p));
  }

  // cond(state) -> pred[] (the comparison does not matter here).
  Computation* AddCondition(std::string name) {
    Computation* c = Add(std::move(name));
    Instruction* p = Param(c, 0, LoopState());
    Instruction* i = Gte(c, p, 0);
    Instruction* k = c->AddInstruction(Opcode::kConstant, c->name() + ".k",
                                       Shape::Scalar(PrimitiveType::kS32), {});
    auto cmp =
        std::make_unique<Instruction>(Opcode::kCompare, c->name() + ".lt",
                                      Shape::Scalar(PrimitiveType::kPred));
    cmp->AppendOperand(i);
    cmp->AppendOperand(k);
    cmp->mutable_attrs().comparison_direction = ComparisonDirection::kLt;
    c->set_root(c->AddInstruction(std::move(cmp)));
    return c;
  }

  Instruction* Gte(Computation* c, Instruction* t, int64_t index) {
    auto g = std::make_unique<Instruction>(
        Opcode::kGetTupleElement, absl::StrCat(t->name(), ".gte", index),
        t->shape().tuple_shapes(index));
    g->AppendOperand(t);
    g->mutable_attrs().tuple_index = index;
    return c->AddInstruction(std::move(g));
  }

  // A while over LoopState() in `c` with the given condition/body.
  Instruction* While(Computation* c, std::string name, Instruction* init,
                     Computation* cond, Computation* body,
                     std::string backend_config = "") {
    auto w = std::make_unique<Instruction>(Opcode::kWhile, std::move(name),
                                           LoopState());
    w->AppendOperand(init);
    w->mutable_called_computations() = {cond, body};
    if (!backend_config.empty()) {
      std::optional<WhileBackendConfig> config =
          WhileBackendConfig::Decode(backend_config);
      if (config.has_value()) w->mutable_attrs().while_config = *config;
    }
    return c->AddInstruction(std::move(w));
  }

  Instruction* AllGather(Computation* c, std::string name, Instruction* x) {
    auto ag = std::make_unique<Instruction>(Opcode::kAllGather, std::move(name),
                                            F32({16}));
    ag->AppendOperand(x);
    ag->mutable_attrs().replica_groups = TwoDevices();
    ag->mutable_attrs().dimensions = {0};
    ag->mutable_attrs().has_dimensions = true;
    return c->AddInstruction(std::move(ag));
  }

  Instruction* ReduceScatter(Computation* c, std::string name, Instruction* x,
                             Computation* reduction) {
    auto rs = std::make_unique<Instruction>(Opcode::kReduceScatter,
                                            std::move(name), F32({4}));
    rs->AppendOperand(x);
    rs->mutable_attrs().replica_groups = TwoDevices();
    rs->mutable_called_computations() = {reduction};
    return c->AddInstruction(std::move(rs));
  }

  // body(state): gathers element 1, reduce-scatters it, returns the state.
  Computation* AddLayerBody(std::string name, Computation* reduction) {
    Computation* c = Add(std::move(name));
    Instruction* p = Param(c, 0, LoopState());
    Instruction* i = Gte(c, p, 0);
    Instruction* x = Gte(c, p, 1);
    Instruction* ag = AllGather(c, c->name() + ".ag", x);
    ReduceScatter(c, c->name() + ".rs", ag, reduction);
    c->set_root(c->AddInstruction(Opcode::kTuple, c->name() + ".out",
                                  LoopState(), {i, x}));
    return c;
  }

  Module& module() { return *module_; }
  std::unique_ptr<Module> Release() { return std::move(module_); }

 private:
  std::unique_ptr<Module> module_;
};

// entry -> while outer (trip 4) -> body calls `step` via call -> while inner
// (trip 8) -> body with one all-gather and one reduce-scatter. The entry
// also has one all-reduce outside loops.
std::unique_ptr<Module> NestedModule() {
  Builder b;
  Computation* add = b.AddReduction("add");
  Computation* inner_cond = b.AddCondition("inner_cond");
  Computation* inner_body = b.AddLayerBody("inner_body", add);

  Computation* step = b.Add("step");
  {
    Instruction* p = b.Param(step, 0, LoopState());
    step->set_root(b.While(step, "while.inner", p, inner_cond, inner_body,
                           R"({"known_trip_count":{"n":"8"}})"));
  }
  Computation* outer_cond = b.AddCondition("outer_cond");
  Computation* outer_body = b.Add("outer_body");
  {
    Instruction* p = b.Param(outer_body, 0, LoopState());
    auto call =
        std::make_unique<Instruction>(Opcode::kCall, "call.step", LoopState());
    call->AppendOperand(p);
    call->mutable_called_computations() = {step};
    outer_body->set_root(outer_body->AddInstruction(std::move(call)));
  }
  Computation* entry = b.Add("main");
  {
    Instruction* p = b.Param(entry, 0, LoopState());
    Instruction* w =
        b.While(entry, "while.outer", p, outer_cond, outer_body,
                R"({"known_trip_count":{"n":4},"known_init_step":{}})");
    Instruction* x = b.Gte(entry, w, 1);
    auto ar = std::make_unique<Instruction>(Opcode::kAllReduce, "all-reduce",
                                            F32({8}));
    ar->AppendOperand(x);
    ar->mutable_attrs().replica_groups = TwoDevices();
    ar->mutable_called_computations() = {add};
    entry->set_root(entry->AddInstruction(std::move(ar)));
  }
  b.module().set_entry(entry);
  return b.Release();
}

TEST(ModuleSummaryTest, BuildsTheLoopTreeThroughCalls) {
  std::unique_ptr<Module> m = NestedModule();
  ModuleSummary s = SummarizeModule(*m);
  ASSERT_EQ(s.loops.size(), 2u);
  const LoopSummary& outer = s.loops[0];
  const LoopSummary& inner = s.loops[1];
  EXPECT_EQ(outer.name, "while.outer");
  EXPECT_EQ(outer.computation, "main");
  EXPECT_EQ(outer.body, "outer_body");
  EXPECT_EQ(outer.condition, "outer_cond");
  EXPECT_EQ(outer.trip_count, 4);
  EXPECT_EQ(outer.parent, -1);
  EXPECT_EQ(outer.depth, 0);
  EXPECT_THAT(outer.children, ElementsAre(1));
  EXPECT_EQ(outer.body_executions, 4);
  EXPECT_EQ(inner.name, "while.inner");
  EXPECT_EQ(inner.computation, "step");
  EXPECT_EQ(inner.trip_count, 8);
  EXPECT_EQ(inner.parent, 0);
  EXPECT_EQ(inner.depth, 1);
  EXPECT_EQ(inner.body_executions, 32);
  EXPECT_EQ(s.max_loop_depth, 2);
  EXPECT_FALSE(s.truncated);
}

TEST(ModuleSummaryTest, AttributesCollectivesToInnermostLoops) {
  std::unique_ptr<Module> m = NestedModule();
  ModuleSummary s = SummarizeModule(*m);
  ASSERT_EQ(s.collectives.size(), 3u);
  EXPECT_EQ(s.collective_count, 3);
  // Entry first (all-reduce), then the inner loop's collectives.
  EXPECT_EQ(s.collectives[0].kind, "all-reduce");
  EXPECT_EQ(s.collectives[0].loop, -1);
  EXPECT_EQ(s.collectives[0].bytes, 32);
  EXPECT_EQ(s.collectives[0].groups, "replica_groups={{0,1}}");
  EXPECT_EQ(s.collectives[0].executions, 1);
  EXPECT_EQ(s.collectives[1].kind, "all-gather");
  EXPECT_EQ(s.collectives[1].loop, 1);
  EXPECT_EQ(s.collectives[1].computation, "inner_body");
  EXPECT_EQ(s.collectives[1].bytes, 64);
  EXPECT_EQ(s.collectives[1].executions, 32);
  EXPECT_EQ(s.collectives[2].kind, "reduce-scatter");
  EXPECT_EQ(s.collectives[2].bytes, 16);

  ASSERT_EQ(s.groups.size(), 3u);
  EXPECT_EQ(s.groups[0].loop, -1);
  EXPECT_EQ(s.groups[0].computation, "main");
  EXPECT_EQ(s.groups[1].loop, 1);
  EXPECT_EQ(s.groups[1].kind, "all-gather");
  EXPECT_EQ(s.groups[1].count, 1);
  EXPECT_EQ(s.groups[1].bytes_per_execution, 64 * 32);

  EXPECT_EQ(s.collective_bytes, 32 + 64 + 16);
  EXPECT_EQ(s.collective_bytes_per_execution, 32 + 64 * 32 + 16 * 32);
  ASSERT_EQ(s.kind_totals.size(), 3u);
  EXPECT_EQ(s.kind_totals[0].kind, "all-reduce");
}

TEST(ModuleSummaryTest, ComputationRolesAndCounts) {
  std::unique_ptr<Module> m = NestedModule();
  ModuleSummary s = SummarizeModule(*m);
  absl::flat_hash_map<std::string, const ComputationSummary*> by_name;
  for (const auto& c : s.computations) by_name[c.name] = &c;
  EXPECT_EQ(by_name["main"]->role, "entry");
  EXPECT_EQ(by_name["outer_body"]->role, "while body");
  EXPECT_EQ(by_name["outer_cond"]->role, "while condition");
  EXPECT_EQ(by_name["step"]->role, "call");
  EXPECT_EQ(by_name["add"]->role, "applied");
  EXPECT_EQ(by_name["inner_body"]->instruction_count, 6);
  for (const auto& c : s.computations) EXPECT_TRUE(c.reachable) << c.name;
  EXPECT_EQ(s.instruction_count, m->instruction_count());
  EXPECT_EQ(s.reachable_instruction_count, s.instruction_count);
  EXPECT_EQ(s.entry, "main");
}

TEST(ModuleSummaryTest, UnknownTripCountMakesTotalsUnknown) {
  Builder b;
  Computation* add = b.AddReduction("add");
  Computation* cond = b.AddCondition("cond");
  Computation* body = b.AddLayerBody("body", add);
  Computation* unused = b.Add("unused");
  b.Param(unused, 0, F32({1}));
  unused->set_root(unused->instructions()[0].get());
  Computation* entry = b.Add("main");
  Instruction* p = b.Param(entry, 0, LoopState());
  entry->set_root(b.While(entry, "w", p, cond, body, "not json"));
  b.module().set_entry(entry);
  ModuleSummary s = SummarizeModule(b.module());
  ASSERT_EQ(s.loops.size(), 1u);
  EXPECT_FALSE(s.loops[0].trip_count.has_value());
  EXPECT_FALSE(s.loops[0].body_executions.has_value());
  EXPECT_FALSE(s.collective_bytes_per_execution.has_value());
  EXPECT_EQ(s.collective_bytes, 64 + 16);
  const ComputationSummary* u = nullptr;
  for (const auto& c : s.computations) {
    if (c.name == "unused") u = &c;
  }
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(u->role, "unused");
  EXPECT_FALSE(u->reachable);
  EXPECT_LT(s.reachable_instruction_count, s.instruction_count);
}

TEST(ModuleSummaryTest, SharedBodyCountsInEachContextAndCyclesStop) {
  // Two sibling loops share one body; the body also (illegally) runs a while
  // whose body is itself: the walk must terminate.
  Builder b;
  Computation* add = b.AddReduction("add");
  Computation* cond = b.AddCondition("cond");
  Computation* body = b.AddLayerBody("body", add);
  // Make `body` recursive: add a while over (cond, body) inside body.
  {
    Instruction* p = body->parameter(0);
    b.While(body, "w.self", p, cond, body);
  }
  Computation* entry = b.Add("main");
  Instruction* p = b.Param(entry, 0, LoopState());
  Instruction* w1 =
      b.While(entry, "w1", p, cond, body, R"({"known_trip_count":{"n":"2"}})");
  entry->set_root(b.While(entry, "w2", w1, cond, body,
                          R"({"known_trip_count":{"n":"3"}})"));
  b.module().set_entry(entry);
  ModuleSummary s = SummarizeModule(b.module());
  // w1, w2, and w.self once under each (its own recursion is cut).
  EXPECT_EQ(s.loops.size(), 4u);
  int self_count = 0;
  for (const auto& l : s.loops) {
    if (l.name == "w.self") {
      ++self_count;
      EXPECT_EQ(l.depth, 1);
    }
  }
  EXPECT_EQ(self_count, 2);
  // all-gather + reduce-scatter in each of the 4 loop contexts.
  EXPECT_EQ(s.collective_count, 8);
}

TEST(ModuleSummaryTest, AsyncCollectives) {
  Builder b;
  Computation* add = b.AddReduction("add");
  Computation* wrapped = b.Add("wrapped_rs");
  {
    Instruction* p = b.Param(wrapped, 0, F32({8}));
    wrapped->set_root(b.ReduceScatter(wrapped, "rs", p, add));
  }
  Computation* entry = b.Add("main");
  Instruction* p = b.Param(entry, 0, F32({8}));
  auto ags = std::make_unique<Instruction>(Opcode::kAllGatherStart, "ag-start",
                                           Shape::Tuple({F32({8}), F32({16})}));
  ags->AppendOperand(p);
  ags->mutable_attrs().replica_groups = TwoDevices();
  Instruction* start = entry->AddInstruction(std::move(ags));
  entry->AddInstruction(Opcode::kAllGatherDone, "ag-done", F32({16}), {start});
  auto as = std::make_unique<Instruction>(
      Opcode::kAsyncStart, "rs-start",
      Shape::Tuple({Shape::Tuple({F32({8})}), F32({4})}));
  as->AppendOperand(p);
  as->mutable_called_computations() = {wrapped};
  Instruction* astart = entry->AddInstruction(std::move(as));
  entry->set_root(
      entry->AddInstruction(Opcode::kAsyncDone, "rs-done", F32({4}), {astart}));
  b.module().set_entry(entry);
  ModuleSummary s = SummarizeModule(b.module());
  ASSERT_EQ(s.collectives.size(), 2u);
  EXPECT_EQ(s.collectives[0].kind, "all-gather");
  EXPECT_TRUE(s.collectives[0].async);
  EXPECT_EQ(s.collectives[0].bytes, 64);
  EXPECT_EQ(s.collectives[1].kind, "reduce-scatter");
  EXPECT_TRUE(s.collectives[1].async);
  EXPECT_EQ(s.collectives[1].computation, "wrapped_rs");
  EXPECT_EQ(s.collectives[1].bytes, 16);
}

TEST(ModuleSummaryTest, EmptyModuleWithoutEntry) {
  Module m("empty");
  ModuleSummary s = SummarizeModule(m);
  EXPECT_EQ(s.module_name, "empty");
  EXPECT_TRUE(s.loops.empty());
  EXPECT_TRUE(s.collectives.empty());
  EXPECT_EQ(s.collective_bytes_per_execution, 0);
}

// --- From text ---------------------------------------------------------------

constexpr char kAccumText[] = R"(
HloModule accum, num_partitions=2

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

layer_cond {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(8)
  ROOT lt = pred[] compare(i, n), direction=LT
}

layer_body {
  p.1 = (s32[], f32[8]) parameter(0)
  i.1 = s32[] get-tuple-element(p.1), index=0
  w = f32[8] get-tuple-element(p.1), index=1
  ag-start = (f32[8], f32[16]) all-gather-start(w), channel_id=1, replica_groups=[1,2]<=[2], dimensions={0}, use_global_device_ids=true
  ag = f32[16] all-gather-done(ag-start)
  rs = f32[8] reduce-scatter(ag), channel_id=2, replica_groups=[1,2]<=[2], dimensions={0}, use_global_device_ids=true, to_apply=add
  one = s32[] constant(1)
  next = s32[] add(i.1, one)
  ROOT t = (s32[], f32[8]) tuple(next, rs)
}

accum_cond {
  q = (s32[], f32[8]) parameter(0)
  k = s32[] get-tuple-element(q), index=0
  four = s32[] constant(4)
  ROOT lt.1 = pred[] compare(k, four), direction=LT
}

accum_body {
  q.1 = (s32[], f32[8]) parameter(0)
  k.1 = s32[] get-tuple-element(q.1), index=0
  g = f32[8] get-tuple-element(q.1), index=1
  z = s32[] constant(0)
  init = (s32[], f32[8]) tuple(z, g)
  layers = (s32[], f32[8]) while(init), condition=layer_cond, body=layer_body, backend_config={"known_trip_count":{"n":"8"}}
  g.1 = f32[8] get-tuple-element(layers), index=1
  one.1 = s32[] constant(1)
  k.2 = s32[] add(k.1, one.1)
  ROOT t.1 = (s32[], f32[8]) tuple(k.2, g.1)
}

ENTRY main {
  x.0 = f32[8] parameter(0)
  zero = s32[] constant(0)
  st = (s32[], f32[8]) tuple(zero, x.0)
  accum = (s32[], f32[8]) while(st), condition=accum_cond, body=accum_body
  ROOT out = f32[8] get-tuple-element(accum), index=1
}
)";

TEST(ModuleSummaryTextTest, InfersTripCountsAndCountsAsyncStarts) {
  auto m = ParseHloModule(kAccumText);
  ASSERT_TRUE(m.ok()) << m.status();
  ModuleSummary s = SummarizeModule(**m);
  ASSERT_EQ(s.loops.size(), 2u);
  EXPECT_EQ(s.loops[0].name, "accum");
  EXPECT_EQ(s.loops[0].trip_count, 4);
  EXPECT_EQ(s.loops[0].trip_count_source,
            LoopSummary::TripCountSource::kInferred);
  EXPECT_EQ(s.loops[0].iv_index, 0);
  EXPECT_EQ(s.loops[0].iv_start, IntValue::FromInt64(PrimitiveType::kS32, 0));
  EXPECT_EQ(s.loops[0].iv_step, IntValue::FromInt64(PrimitiveType::kS32, 1));
  EXPECT_EQ(s.loops[0].iv_bound, IntValue::FromInt64(PrimitiveType::kS32, 4));
  EXPECT_EQ(s.loops[1].name, "layers");
  EXPECT_EQ(s.loops[1].trip_count, 8);
  EXPECT_EQ(s.loops[1].trip_count_source,
            LoopSummary::TripCountSource::kBackendConfig);
  EXPECT_EQ(s.loops[1].parent, 0);
  EXPECT_EQ(s.loops[1].body_executions, 32);

  ASSERT_EQ(s.collectives.size(), 2u);
  EXPECT_EQ(s.collectives[0].kind, "all-gather");
  EXPECT_TRUE(s.collectives[0].async);
  EXPECT_EQ(s.collectives[0].bytes, 64);  // element 1 of the start tuple
  EXPECT_EQ(s.collectives[0].groups, "replica_groups=[1,2]<=[2]");
  EXPECT_EQ(s.collectives[1].kind, "reduce-scatter");
  EXPECT_FALSE(s.collectives[1].async);
  EXPECT_EQ(s.collective_bytes_per_execution, (64 + 32) * 32);
}

// Every corpus module summarizes; the accumulation cases have the layer
// loops nested in the accumulation loop, and every loop of the 03 stage has
// a trip count (XLA's known_trip_count, or the induction variable's).
TEST(ModuleSummaryTextTest, Corpus) {
  std::filesystem::path corpus =
      std::filesystem::path(HLOVERLAP_SOURCE_DIR) / ".." / "shared" / "corpus";
  if (!std::filesystem::is_directory(corpus)) {
    GTEST_SKIP() << "no corpus at " << corpus;
  }
  int files = 0;
  for (const auto& c : std::filesystem::directory_iterator(corpus)) {
    if (!c.is_directory()) continue;
    std::string name = c.path().filename().string();
    for (const char* stage : {"03_before_collective_pipeliner.hlo",
                              "04_after_collective_pipeliner.hlo"}) {
      std::filesystem::path file = c.path() / stage;
      if (!std::filesystem::exists(file)) continue;
      auto m = ParseHloFile(file.string());
      ASSERT_TRUE(m.ok()) << m.status();
      ModuleSummary s = SummarizeModule(**m);
      ++files;
      SCOPED_TRACE(file.string());
      EXPECT_FALSE(s.loops.empty());
      EXPECT_GT(s.collective_count, 0);
      bool accum = name.find("noaccum") == std::string::npos;
      EXPECT_EQ(s.max_loop_depth, accum ? 2 : 1);
      // XLA's pipeliner output (04) has loops starting at a computed value,
      // whose trip count the induction variable analysis may not know.
      if (std::string_view(stage).substr(0, 2) == "03") {
        for (const LoopSummary& l : s.loops) {
          EXPECT_TRUE(l.trip_count.has_value())
              << l.name << ": " << l.unknown_reason;
        }
      }
      EXPECT_EQ(s.reachable_instruction_count, s.instruction_count);
    }
  }
  EXPECT_GT(files, 0);
}

}  // namespace
}  // namespace hloverlap
