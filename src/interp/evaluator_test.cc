#include "interp/evaluator.h"

#include <chrono>

#include "gtest/gtest.h"
#include "hlo/diagnostic.h"
#include "interp/testing.h"

namespace hloverlap::interp {
namespace {

using testing::Doubles;
using testing::F32;
using testing::Ints;
using testing::Run1;
using testing::RunText;
using testing::S32;

TEST(Evaluator, WhileLoopWithTupleState) {
  constexpr char kText[] = R"(
HloModule m

cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[4] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  fi = f32[] convert(i)
  b = f32[1] broadcast(fi), dimensions={}
  x1 = f32[4] dynamic-update-slice(x, b, i)
  ROOT t = (s32[], f32[4]) tuple(i1, x1)
}

ENTRY main {
  z = s32[] constant(0)
  x = f32[4] parameter(0)
  t = (s32[], f32[4]) tuple(z, x)
  w = (s32[], f32[4]) while(t), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(w), index=1
}
)";
  // Iterations 0..4 write i at min(i, 3) (clamped): [0, 1, 2, 4].
  Value r = Run1(kText, {F32({4}, {9, 9, 9, 9})});
  EXPECT_EQ(Doubles(r), (std::vector<double>{0, 1, 2, 4}));
}

TEST(Evaluator, CallAndConditional) {
  constexpr char kText[] = R"(
HloModule m

double {
  x = f32[] parameter(0)
  ROOT y = f32[] add(x, x)
}

negate {
  x = f32[] parameter(0)
  ROOT y = f32[] negate(x)
}

square {
  x = f32[] parameter(0)
  ROOT y = f32[] multiply(x, x)
}

ENTRY main {
  i = s32[] parameter(0)
  p = pred[] parameter(1)
  x = f32[] parameter(2)
  c = f32[] call(x), to_apply=double
  a = f32[] conditional(i, x, c, x), branch_computations={double, negate, square}
  b = f32[] conditional(p, c, x), true_computation=negate, false_computation=square
  ROOT t = (f32[], f32[], f32[]) tuple(c, a, b)
}
)";
  auto run = [&](int32_t i, bool p) {
    absl::StatusOr<Value> pv = Value::ScalarFromInt(PrimitiveType::kPred, p);
    EXPECT_TRUE(pv.ok());
    Value r = Run1(kText, {S32({}, {i}), *pv, F32({}, {3})});
    std::vector<double> out;
    for (const Value& e : r.elements()) out.push_back(e.GetDouble(0));
    return out;
  };
  EXPECT_EQ(run(0, true), (std::vector<double>{6, 6, -6}));
  EXPECT_EQ(run(1, false), (std::vector<double>{6, -6, 9}));
  // Out-of-range indices run the last branch.
  EXPECT_EQ(run(7, false), (std::vector<double>{6, 9, 9}));
  EXPECT_EQ(run(-1, false), (std::vector<double>{6, 9, 9}));
}

TEST(Evaluator, ReduceOrderAndNonAddReducers) {
  constexpr char kText[] = R"(
HloModule m

sub {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] subtract(a, b)
}

max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] maximum(a, b)
}

argmax {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(bv, av), direction=GT
  v = f32[] select(gt, bv, av)
  i = s32[] select(gt, bi, ai)
  ROOT t = (f32[], s32[]) tuple(v, i)
}

ENTRY main {
  x = f32[2,3] parameter(0)
  ten = f32[] constant(10)
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  r0 = f32[2] reduce(x, ten), dimensions={1}, to_apply=sub
  r1 = f32[3] reduce(x, ninf), dimensions={0}, to_apply=max
  idx = s32[2,3] iota(), iota_dimension=1
  am = (f32[2], s32[2]) reduce(x, idx, ninf, zero), dimensions={1}, to_apply=argmax
  r2 = f32[] reduce(x, ten), dimensions={0,1}, to_apply=sub
  amv = f32[2] get-tuple-element(am), index=0
  ami = s32[2] get-tuple-element(am), index=1
  ROOT t = (f32[2], f32[3], f32[2], s32[2], f32[]) tuple(r0, r1, amv, ami, r2)
}
)";
  Value r = Run1(kText, {F32({2, 3}, {1, 5, 2, 7, -1, 3})});
  ASSERT_TRUE(r.is_tuple());
  // acc = f(acc, x) in row-major order: 10-1-5-2 = 2, 10-7+1-3 = 1.
  EXPECT_EQ(Doubles(r.element(0)), (std::vector<double>{2, 1}));
  EXPECT_EQ(Doubles(r.element(1)), (std::vector<double>{7, 5, 3}));
  EXPECT_EQ(Doubles(r.element(2)), (std::vector<double>{5, 7}));
  EXPECT_EQ(Ints(r.element(3)), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(Doubles(r.element(4)), (std::vector<double>{10 - 17}));
}

TEST(Evaluator, ShapeAndTupleOps) {
  constexpr char kText[] = R"(
HloModule m

ENTRY main {
  x = f32[2,3] parameter(0)
  t = f32[3,2] transpose(x), dimensions={1,0}
  r = f32[6] reshape(t)
  s = f32[3] slice(r), slice={[1:6:2]}
  z = f32[] constant(0)
  p = f32[5] pad(s, z), padding=1_1
  c = f32[8] concatenate(s, p), dimensions={0}
  tu = (f32[8], f32[6]) tuple(c, r)
  ob = (f32[8], f32[6]) opt-barrier(tu)
  g = f32[8] get-tuple-element(ob), index=0
  sh = f32[8] custom-call(g), custom_call_target="Sharding", sharding={replicated}
  cp = f32[8] copy(sh)
  ROOT n = f32[8] negate(cp)
}
)";
  Value r = Run1(kText, {F32({2, 3}, {0, 1, 2, 3, 4, 5})});
  // t = [[0,3],[1,4],[2,5]], r = 0 3 1 4 2 5, s = 3 4 5.
  EXPECT_EQ(Doubles(r),
            (std::vector<double>{-3, -4, -5, -0.0, -3, -4, -5, -0.0}));
}

TEST(Evaluator, UnsupportedOpcodeIsAClearError) {
  constexpr char kText[] = R"(
HloModule m

ENTRY main {
  x = c64[8] parameter(0)
  ROOT fft.1 = c64[8] fft(x), fft_type=FFT, fft_length={8}
}
)";
  absl::StatusOr<std::vector<Value>> r = RunText(kText, {{}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "unsupported opcode 'fft' in instruction fft.1 (computation main)");
  constexpr char kCustom[] = R"(
HloModule m

ENTRY main {
  x = f32[8] parameter(0)
  ROOT cc = f32[8] custom-call(x), custom_call_target="__cudnn$convForward"
}
)";
  r = RunText(kCustom, {{F32({8}, std::vector<float>(8))}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "opaque custom-call '__cudnn$convForward' in instruction cc "
            "(computation main): the interpreter does not know what it "
            "computes (--opaque-custom-calls runs it as a deterministic "
            "function of its operands)");
}

TEST(Evaluator, ElidedConstantsNeedTheFillFlag) {
  constexpr char kText[] = R"(
HloModule m

ENTRY main {
  c = f32[3] constant({...})
  x = f32[3] parameter(0)
  ROOT a = f32[3] add(c, x)
}
)";
  Value x = F32({3}, {0, 0, 0});
  absl::StatusOr<std::vector<Value>> r = RunText(kText, {{x}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("constant c (computation main) is "
                                      "elided"),
            std::string::npos)
      << r.status();
  InterpreterOptions opts;
  opts.fill_elided_constants = true;
  absl::StatusOr<std::vector<Value>> a = RunText(kText, {{x}}, opts);
  absl::StatusOr<std::vector<Value>> b = RunText(kText, {{x}}, opts);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(Fnv1a64((*a)[0]), Fnv1a64((*b)[0]));
  for (double v : Doubles((*a)[0])) {
    EXPECT_GE(v, -1.0);
    EXPECT_LT(v, 1.0);
  }
}

TEST(Evaluator, MemoryLimitRefusesBeforeAllocating) {
  constexpr char kText[] = R"(
HloModule m, num_partitions=2

ENTRY main {
  x = f32[] parameter(0)
  b = f32[1024,1024] broadcast(x), dimensions={}
  ROOT n = f32[1024,1024] negate(b)
}
)";
  absl::StatusOr<std::unique_ptr<Module>> m = ParseHloModule(kText);
  ASSERT_TRUE(m.ok());
  InterpreterOptions opts;
  opts.memory_limit_bytes = 10 << 20;
  absl::StatusOr<std::unique_ptr<Interpreter>> interp =
      Interpreter::Create(**m, opts);
  ASSERT_FALSE(interp.ok());
  EXPECT_EQ(interp.status().code(), absl::StatusCode::kResourceExhausted);
  // Two live 4 MiB arrays per device, two devices.
  EXPECT_NE(interp.status().message().find("estimated 16777224 bytes"),
            std::string::npos)
      << interp.status();
  opts.memory_limit_bytes = 20 << 20;
  EXPECT_TRUE(Interpreter::Create(**m, opts).ok());
}

TEST(Evaluator, ParameterShapesAreChecked) {
  constexpr char kText[] = R"(
HloModule m

ENTRY main {
  ROOT x = f32[2] parameter(0)
}
)";
  absl::StatusOr<std::vector<Value>> r =
      RunText(kText, {{F32({3}, {1, 2, 3})}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("expected f32[2]"), std::string::npos);
}

TEST(Evaluator, TopologyFromHeaderAndFlag) {
  auto m = testing::Parse(
      "HloModule m, num_partitions=2\n\nENTRY e {\n"
      "  ROOT p = u32[] partition-id()\n}\n");
  ASSERT_NE(m, nullptr);
  absl::StatusOr<DeviceTopology> t = ResolveTopology(*m, 0);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->num_partitions, 2);
  t = ResolveTopology(*m, 4);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->num_partitions, 4);
  EXPECT_EQ(t->replica_count, 1);
  absl::StatusOr<std::vector<Value>> r = RunModule(*m, {}, {.num_devices = 4});
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<int64_t> ids;
  for (const Value& v : *r) ids.push_back(v.GetInt(0));
  EXPECT_EQ(ids, (std::vector<int64_t>{0, 1, 2, 3}));
}

// Device 0 reaches --max-iterations at once; device 1 is busy in a loop of
// large dots that would take minutes and below the limit: it stops at its
// next instruction, the run returns the limit's error, located at the loop.
TEST(Evaluator, IterationLimitStopsEveryDevice) {
  constexpr char kText[] = R"(
HloModule m, num_partitions=2

cond {
  p = (s32[], f32[640,640]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(2147483647)
  ROOT lt = pred[] compare(i, n), direction=LT
}

spin {
  p = (s32[], f32[640,640]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[640,640] get-tuple-element(p), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], f32[640,640]) tuple(j, x)
}

slow_cond {
  p = (s32[], f32[640,640]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(999)
  ROOT lt = pred[] compare(i, n), direction=LT
}

slow {
  p = (s32[], f32[640,640]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[640,640] get-tuple-element(p), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  d = f32[640,640] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  e = f32[640,640] dot(d, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (s32[], f32[640,640]) tuple(j, e)
}

fast_branch {
  s = (s32[], f32[640,640]) parameter(0)
  ROOT w = (s32[], f32[640,640]) while(s), condition=cond, body=spin
}

slow_branch {
  s = (s32[], f32[640,640]) parameter(0)
  ROOT w = (s32[], f32[640,640]) while(s), condition=slow_cond, body=slow
}

ENTRY main {
  x = f32[640,640] parameter(0)
  zero = s32[] constant(0)
  s = (s32[], f32[640,640]) tuple(zero, x)
  pid = u32[] partition-id()
  uzero = u32[] constant(0)
  first = pred[] compare(pid, uzero), direction=EQ
  ROOT c = (s32[], f32[640,640]) conditional(first, s, s), true_computation=fast_branch, false_computation=slow_branch
}
)";
  absl::StatusOr<std::unique_ptr<Module>> m = ParseHloModule(kText);
  ASSERT_TRUE(m.ok()) << m.status();
  InterpreterOptions opts;
  opts.max_iterations = 1000;
  absl::StatusOr<Value> x = Value::Zeros(PrimitiveType::kF32, {640, 640});
  ASSERT_TRUE(x.ok());
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<Value>> r = RunModule(**m, {{*x}}, opts);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(r.status().message().find(
                "while loop w (computation fast_branch) stopped after 1000 "
                "iterations"),
            std::string::npos)
      << r.status();
  std::optional<SourcePosition> pos = StatusSourcePosition(r.status());
  ASSERT_TRUE(pos.has_value());
  EXPECT_EQ(pos->line, 40);
  EXPECT_EQ(pos->column, 8);
  // 999 iterations of two 640^3 dots take minutes; stopping takes one.
  EXPECT_LT(seconds, 20) << "device 1 was not stopped";
}

TEST(Evaluator, TimeLimitStopsTheRun) {
  constexpr char kText[] = R"(
HloModule m

cond {
  p = s32[] parameter(0)
  n = s32[] constant(2147483647)
  ROOT lt = pred[] compare(p, n), direction=LT
}

body {
  p = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT j = s32[] add(p, one)
}

ENTRY main {
  zero = s32[] constant(0)
  ROOT w = s32[] while(zero), condition=cond, body=body
}
)";
  InterpreterOptions opts;
  opts.max_iterations = 0;
  opts.time_limit_seconds = 0.2;
  absl::StatusOr<std::vector<Value>> r = RunText(kText, {{}}, opts);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(r.status().message().find("time limit of 0.2 s"), std::string::npos)
      << r.status();
}

TEST(Evaluator, ErrorsCarryTheInstructionsPosition) {
  constexpr char kText[] = R"(
HloModule m

ENTRY main {
  x = f32[] parameter(0)
  ROOT b = f32[1024,1024] broadcast(x), dimensions={}
}
)";
  absl::StatusOr<std::unique_ptr<Module>> m = ParseHloModule(kText);
  ASSERT_TRUE(m.ok());
  InterpreterOptions opts;
  opts.memory_limit_bytes = 1 << 20;
  absl::StatusOr<std::unique_ptr<Interpreter>> interp =
      Interpreter::Create(**m, opts);
  ASSERT_FALSE(interp.ok());
  std::optional<SourcePosition> pos = StatusSourcePosition(interp.status());
  ASSERT_TRUE(pos.has_value()) << interp.status();
  EXPECT_EQ(pos->line, 6);
  EXPECT_EQ(pos->column, 8);
  EXPECT_EQ(LocateInFile(interp.status(), "m.hlo").message().substr(0, 11),
            "m.hlo:6:8: ");
}

}  // namespace
}  // namespace hloverlap::interp
