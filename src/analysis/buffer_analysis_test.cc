// Tests of the buffer and alias analysis (and of hlo/buffer_semantics.h).
#include "analysis/buffer_analysis.h"

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/computation.h"
#include "hlo/module.h"
#include "hlo/parser.h"

namespace hloverlap {
namespace {

std::unique_ptr<Module> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

const Instruction* Find(const Computation& c, const std::string& name) {
  for (const auto& i : c.instructions()) {
    if (i->name() == name) return i.get();
  }
  ADD_FAILURE() << "no instruction " << name;
  return nullptr;
}

// The instruction defining the buffer leaf `leaf` of `name` holds.
std::string Holder(const BufferAnalysis& a, const Computation& c,
                   const std::string& name, int64_t leaf = 0) {
  absl::Span<const int32_t> leaves = a.LeafBuffers(Find(c, name));
  if (leaf >= static_cast<int64_t>(leaves.size()) || leaves[leaf] < 0) {
    return "none";
  }
  return a.buffers()[leaves[leaf]].defining->name();
}

TEST(BufferSemanticsTest, TuplesAndGetTupleElementsAliasTheirOperands) {
  std::unique_ptr<Module> m = Parse(R"(
HloModule m
ENTRY e {
  a = f32[8] parameter(0)
  u = (s32[], f32[4]) parameter(1)
  t = (f32[8], (s32[], f32[4])) tuple(a, u)
  g = (s32[], f32[4]) get-tuple-element(t), index=1
  ROOT x = f32[4] get-tuple-element(g), index=1
})");
  const Computation& e = *m->entry();
  std::vector<LeafSource> t = ResultLeafSources(*Find(e, "t"));
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].kind, LeafKind::kAliases);
  EXPECT_EQ(t[0].operand, 0);
  EXPECT_EQ(t[2].operand, 1);
  EXPECT_EQ(t[2].operand_leaf, 1);
  EXPECT_FALSE(t[2].in_place);
  std::vector<LeafSource> g = ResultLeafSources(*Find(e, "g"));
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].operand_leaf, 1);
  EXPECT_EQ(g[1].operand_leaf, 2);
  BufferAnalysis a(e);
  EXPECT_EQ(Holder(a, e, "x"), "u");
  EXPECT_EQ(a.buffers()[a.LeafBuffers(Find(e, "x"))[0]].kind,
            LeafKind::kOutside);
  EXPECT_EQ(a.DefinedBytes(Find(e, "t")), 0);
  EXPECT_EQ(DefinedBytes(*Find(e, "t")), 0);
}

TEST(BufferSemanticsTest, WhileUpdatesItsStateInPlace) {
  std::unique_ptr<Module> m = Parse(R"(
HloModule m
cond {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  x = f32[8] get-tuple-element(p), index=1
  y = f32[8] negate(x)
  ROOT r = (s32[], f32[8]) tuple(j, y)
}
ENTRY e {
  z = s32[] constant(0)
  v = f32[8] parameter(0)
  init = (s32[], f32[8]) tuple(z, v)
  w = (s32[], f32[8]) while(init), condition=cond, body=body
  ROOT out = f32[8] get-tuple-element(w), index=1
})");
  const Computation& e = *m->entry();
  std::vector<LeafSource> w = ResultLeafSources(*Find(e, "w"));
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[1].kind, LeafKind::kAliases);
  EXPECT_TRUE(w[1].in_place);
  BufferAnalysis a(e);
  EXPECT_EQ(Holder(a, e, "out"), "v");
  EXPECT_EQ(Holder(a, e, "w", 0), "z");
  // Constants define buffers (XLA's alias analysis gives them one).
  EXPECT_EQ(a.DefinedBytes(Find(e, "z")), 4);
  // Peak: the entry parameter (32 B), the counter (4 B), and the body's own
  // peak at the while: its new counter and negate (4 + 32 B, loop state
  // taken over by the caller's buffers... less the outputs) + constant.
  MemoryPeak peak = ModulePeakMemory(*m);
  EXPECT_EQ(peak.parameter_bytes, 32);
  EXPECT_GT(peak.bytes, 36);
}

TEST(BufferSemanticsTest, AsyncStartHoldsItsOperandUntilTheDone) {
  std::unique_ptr<Module> m = Parse(R"(
HloModule m, num_partitions=2
ENTRY e {
  x = f32[8] parameter(0)
  n = f32[8] negate(x)
  s = (f32[8], f32[16]) all-gather-start(n), dimensions={0}, replica_groups={{0,1}}
  m = f32[8] multiply(x, x)
  d = f32[16] all-gather-done(s)
  ROOT r = f32[16] exponential(d)
})");
  const Computation& e = *m->entry();
  BufferAnalysis a(e);
  EXPECT_EQ(Holder(a, e, "s", 0), "n");
  EXPECT_EQ(Holder(a, e, "s", 1), "s");
  EXPECT_EQ(Holder(a, e, "d"), "s");
  EXPECT_EQ(a.DefinedBytes(Find(e, "s")), 64);
  EXPECT_EQ(a.DefinedBytes(Find(e, "d")), 0);
  std::vector<int32_t> held = a.BuffersHeld(Find(e, "s"));
  EXPECT_EQ(held.size(), 2u);
  // Over the sequence: at m, x (32) + n (32, held by the start until the
  // done) + the gathered buffer (64) + m (32); r then takes d's buffer.
  MemoryPeak peak = ModulePeakMemory(*m);
  EXPECT_EQ(peak.bytes, 32 + 32 + 64 + 32);
  EXPECT_EQ(peak.at, "m (e)");
}

TEST(BufferSemanticsTest, CopyStartCopiesIntoElementZero) {
  std::unique_ptr<Module> m = Parse(R"(
HloModule m
ENTRY e {
  x = f32[8] parameter(0)
  cs = (f32[8], f32[8], u32[]) copy-start(x)
  ROOT cd = f32[8] copy-done(cs)
})");
  const Computation& e = *m->entry();
  BufferAnalysis a(e);
  EXPECT_EQ(Holder(a, e, "cs", 0), "cs");
  EXPECT_EQ(Holder(a, e, "cs", 1), "x");
  EXPECT_EQ(Holder(a, e, "cd"), "cs");
  EXPECT_EQ(a.DefinedBytes(Find(e, "cs")), 32 + 4);
}

TEST(BufferSemanticsTest, CopyOfATupleIsShallow) {
  std::unique_ptr<Module> m = Parse(R"(
HloModule m
ENTRY e {
  a = f32[8] parameter(0)
  p = f32[4] parameter(1)
  b = f32[4] exponential(p)
  t = (f32[8], f32[4]) tuple(a, b)
  c = (f32[8], f32[4]) copy(t)
  x = f32[8] copy(a)
  ROOT r = ((f32[8], f32[4]), f32[8]) tuple(c, x)
})");
  if (m == nullptr) return;
  const Computation& e = *m->entry();
  // The tuple copy's elements are the operand's buffers: no bytes of its
  // own; the array copy defines one.
  BufferAnalysis a(e);
  EXPECT_EQ(Holder(a, e, "c", 0), "a");
  EXPECT_EQ(Holder(a, e, "c", 1), "b");
  EXPECT_EQ(a.DefinedBytes(Find(e, "c")), 0);
  EXPECT_EQ(DefinedBytes(*Find(e, "c")), 0);
  EXPECT_EQ(Holder(a, e, "x"), "x");
  EXPECT_EQ(a.DefinedBytes(Find(e, "x")), 32);
}

TEST(BufferSemanticsTest, InPlaceUpdatesAliasTheirTarget) {
  std::unique_ptr<Module> m = Parse(R"(
HloModule m
fused {
  p0 = f32[8,4] parameter(0)
  p1 = f32[1,4] parameter(1)
  i = s32[] parameter(2)
  z = s32[] constant(0)
  ROOT u = f32[8,4] dynamic-update-slice(p0, p1, i, z)
}
ENTRY e {
  b = f32[8,4] parameter(0)
  v = f32[1,4] parameter(1)
  i = s32[] parameter(2)
  z = s32[] constant(0)
  c = f32[8,4] copy(b)
  d = f32[8,4] dynamic-update-slice(c, v, i, z)
  ROOT f = f32[8,4] fusion(d, v, i), kind=kLoop, calls=fused
})");
  const Computation& e = *m->entry();
  BufferAnalysis a(e);
  EXPECT_EQ(Holder(a, e, "d"), "c");
  EXPECT_EQ(Holder(a, e, "f"), "c");
  EXPECT_TRUE(ResultLeafSources(*Find(e, "f"))[0].in_place);
  EXPECT_EQ(a.DefinedBytes(Find(e, "d")), 0);
  EXPECT_EQ(a.DefinedBytes(Find(e, "c")), 128);
}

TEST(BufferSemanticsTest, GemmWorkspaceIsScratch) {
  std::unique_ptr<Module> m = Parse(R"(
HloModule m
ENTRY e {
  x = bf16[16,16] parameter(0)
  y = bf16[16,16] parameter(1)
  g = (bf16[16,16], s8[1024]) custom-call(x, y), custom_call_target="__cublas$lt$matmul"
  ROOT o = bf16[16,16] get-tuple-element(g), index=0
})");
  const Computation& e = *m->entry();
  std::vector<LeafSource> g = ResultLeafSources(*Find(e, "g"));
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].kind, LeafKind::kDefines);
  EXPECT_EQ(g[1].kind, LeafKind::kScratch);
  EXPECT_EQ(DefinedBytes(*Find(e, "g")), 512);
  EXPECT_EQ(DefinedBytes(*Find(e, "g"), /*with_scratch=*/true), 512 + 1024);
  // The workspace is live only at the GEMM: params 1024 + output 512 +
  // workspace 1024 there.
  EXPECT_EQ(ModulePeakMemory(*m).bytes, 1024 + 512 + 1024);
}

TEST(BufferSemanticsTest, MalformedAliasesDefineInstead) {
  // A get-tuple-element of a non-tuple (rejected by the verifier, but the
  // analysis must not read out of range).
  std::unique_ptr<Module> m = Parse(R"(
HloModule m
ENTRY e {
  x = f32[8] parameter(0)
  ROOT g = f32[8] get-tuple-element(x), index=3
})");
  if (m == nullptr) return;
  std::vector<LeafSource> g = ResultLeafSources(*Find(*m->entry(), "g"));
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].kind, LeafKind::kDefines);
}

TEST(BufferAnalysisTest, ElementwiseTakesADyingOperandsBuffer) {
  std::unique_ptr<Module> m = Parse(R"(
HloModule m
ENTRY e {
  a = f32[1048576] parameter(0)
  b = f32[1048576] exponential(a)
  ROOT c = f32[1048576] negate(b)
})");
  MemoryPeak peak = ModulePeakMemory(*m);
  EXPECT_EQ(peak.bytes, 8 << 20);
  EXPECT_EQ(peak.at, "b (e)");
  // The same computation in another order gives the same peak here; a
  // sequence that is not the instruction order is honoured.
  const Computation& e = *m->entry();
  std::vector<const Instruction*> order = {Find(e, "a"), Find(e, "b"),
                                           Find(e, "c")};
  EXPECT_EQ(PeakOverSequence(e, order, true, false).bytes, 8 << 20);
}

}  // namespace
}  // namespace hloverlap
