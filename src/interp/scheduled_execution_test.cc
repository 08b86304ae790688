// Scheduled modules (is_scheduled=true) run in their stored order with
// async semantics; schedules that break them are clear errors from
// Interpreter::Create, never crashes.
#include <algorithm>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/computation.h"
#include "interp/testing.h"

namespace hloverlap::interp {
namespace {

using testing::F32;
using testing::Parse;

// Compute placed between each start and its done; every async form.
constexpr char kScheduled[] = R"(
HloModule scheduled, is_scheduled=true, num_partitions=2

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

wrapped_rs {
  p0 = f32[4] parameter(0)
  ROOT rs = f32[2] reduce-scatter(p0), channel_id=4, replica_groups={{0,1}}, use_global_device_ids=true, dimensions={0}, to_apply=add
}

ENTRY main {
  x = f32[4] parameter(0)
  ags = (f32[4], f32[8]) all-gather-start(x), channel_id=1, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
  ars = f32[4] all-reduce-start(x), channel_id=2, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add
  neg = f32[4] negate(x)
  cps = (f32[4], f32[4], u32[], u32[]) collective-permute-start(neg), channel_id=3, source_target_pairs={{0,1},{1,0}}
  rss = ((f32[4]), f32[2]) async-start(neg), calls=wrapped_rs
  sq = f32[4] multiply(x, x)
  agd = f32[8] all-gather-done(ags)
  ard = f32[4] all-reduce-done(ars)
  cpd = f32[4] collective-permute-done(cps)
  rsd = f32[2] async-done(rss)
  sum = f32[4] add(ard, cpd)
  sum2 = f32[4] add(sum, sq)
  ROOT t = (f32[8], f32[4], f32[2]) tuple(agd, sum2, rsd)
}
)";

std::vector<std::vector<Value>> TwoDevices() {
  return {{F32({4}, {1, 2, 3, 4})}, {F32({4}, {10, 20, 30, 40})}};
}

TEST(ScheduledExecution, RunsInScheduleOrderWithSameValues) {
  std::unique_ptr<Module> m = Parse(kScheduled);
  ASSERT_NE(m, nullptr);
  absl::StatusOr<std::vector<Value>> scheduled = RunModule(*m, TwoDevices());
  ASSERT_TRUE(scheduled.ok()) << scheduled.status();
  m->set_is_scheduled(false);
  absl::StatusOr<std::vector<Value>> plain = RunModule(*m, TwoDevices());
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_EQ(scheduled->size(), 2u);
  for (int d = 0; d < 2; ++d) {
    ASSERT_TRUE((*scheduled)[d].is_tuple());
    for (int64_t k = 0; k < 3; ++k) {
      EXPECT_EQ(testing::Doubles((*scheduled)[d].element(k)),
                testing::Doubles((*plain)[d].element(k)))
          << "device " << d << " output " << k;
    }
  }
  // Device 0: all-gather, all-reduce + permuted -x of device 1 + x*x.
  EXPECT_EQ(testing::Doubles((*scheduled)[0].element(0)),
            (std::vector<double>{1, 2, 3, 4, 10, 20, 30, 40}));
  EXPECT_EQ(testing::Doubles((*scheduled)[0].element(1)),
            (std::vector<double>{2, 6, 12, 20}));
}

// Moves `what` to just before `before` in its computation's order.
void MoveBefore(Computation& c, std::string_view what,
                std::string_view before) {
  std::vector<Instruction*> order;
  Instruction* moved = nullptr;
  for (const auto& i : c.instructions()) {
    if (i->name() == what) moved = i.get();
  }
  ASSERT_NE(moved, nullptr);
  for (const auto& i : c.instructions()) {
    if (i->name() == before) order.push_back(moved);
    if (i.get() != moved) order.push_back(i.get());
  }
  ASSERT_TRUE(c.SetInstructionOrder(order).ok());
}

TEST(ScheduledExecution, DoneBeforeStartIsAnError) {
  std::unique_ptr<Module> m = Parse(kScheduled);
  ASSERT_NE(m, nullptr);
  MoveBefore(*m->entry(), "agd", "ags");
  absl::StatusOr<std::unique_ptr<Interpreter>> interp =
      Interpreter::Create(*m, {.num_devices = 2});
  ASSERT_FALSE(interp.ok());
  EXPECT_EQ(interp.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(interp.status().message().find(
                "invalid schedule of computation main: all-gather-done agd "
                "(position 1) runs before its all-gather-start ags "
                "(position 2)"),
            std::string::npos)
      << interp.status();
}

TEST(ScheduledExecution, AsyncDoneBeforeAsyncStartIsAnError) {
  std::unique_ptr<Module> m = Parse(kScheduled);
  ASSERT_NE(m, nullptr);
  MoveBefore(*m->entry(), "rsd", "rss");
  absl::StatusOr<std::unique_ptr<Interpreter>> interp =
      Interpreter::Create(*m, {.num_devices = 2});
  ASSERT_FALSE(interp.ok());
  EXPECT_NE(interp.status().message().find(
                "async-done rsd (position 5) runs before its async-start rss"),
            std::string::npos)
      << interp.status();
}

TEST(ScheduledExecution, OperandAfterUserIsAnError) {
  std::unique_ptr<Module> m = Parse(kScheduled);
  ASSERT_NE(m, nullptr);
  MoveBefore(*m->entry(), "sum2", "sum");
  absl::StatusOr<std::unique_ptr<Interpreter>> interp =
      Interpreter::Create(*m, {.num_devices = 2});
  ASSERT_FALSE(interp.ok());
  EXPECT_NE(interp.status().message().find("sum2 (position "),
            std::string::npos);
  EXPECT_NE(interp.status().message().find("before it is computed"),
            std::string::npos)
      << interp.status();
}

// A use of a start's value other than by its done, before the done.
constexpr char kUseBeforeDone[] = R"(
HloModule use_before_done, is_scheduled=true, num_partitions=2

ENTRY main {
  x = f32[4] parameter(0)
  ags = (f32[4], f32[8]) all-gather-start(x), channel_id=1, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
  early = f32[8] get-tuple-element(ags), index=1
  agd = f32[8] all-gather-done(ags)
  ROOT sum = f32[8] add(early, agd)
}
)";

TEST(ScheduledExecution, UseOfStartBeforeDoneIsAnError) {
  std::unique_ptr<Module> m = Parse(kUseBeforeDone);
  ASSERT_NE(m, nullptr);
  absl::StatusOr<std::unique_ptr<Interpreter>> interp =
      Interpreter::Create(*m, {.num_devices = 2});
  ASSERT_FALSE(interp.ok());
  EXPECT_NE(interp.status().message().find(
                "early (position 2) uses the value of all-gather-start ags "
                "(position 1) before its all-gather-done agd (position 3)"),
            std::string::npos)
      << interp.status();
  // After the done it is allowed; unscheduled modules are not checked.
  MoveBefore(*m->entry(), "agd", "early");
  EXPECT_TRUE(Interpreter::Create(*m, {.num_devices = 2}).ok());
  std::unique_ptr<Module> plain = Parse(kUseBeforeDone);
  plain->set_is_scheduled(false);
  EXPECT_TRUE(Interpreter::Create(*plain, {.num_devices = 2}).ok());
}

TEST(ScheduledExecution, StartWithoutDoneUsedIsAnError) {
  std::unique_ptr<Module> m = Parse(R"(
HloModule no_done, is_scheduled=true, num_partitions=2

ENTRY main {
  x = f32[4] parameter(0)
  ags = (f32[4], f32[8]) all-gather-start(x), channel_id=1, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
  ROOT r = f32[8] get-tuple-element(ags), index=1
}
)");
  ASSERT_NE(m, nullptr);
  absl::StatusOr<std::unique_ptr<Interpreter>> interp =
      Interpreter::Create(*m, {.num_devices = 2});
  ASSERT_FALSE(interp.ok());
  EXPECT_NE(interp.status().message().find("which has no matching done"),
            std::string::npos)
      << interp.status();
}

// Loop bodies are schedules too.
TEST(ScheduledExecution, LoopBodyScheduleIsChecked) {
  std::unique_ptr<Module> m = Parse(R"(
HloModule loop, is_scheduled=true, num_partitions=2

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p.1 = (s32[], f32[4]) parameter(0)
  i.1 = s32[] get-tuple-element(p.1), index=0
  v = f32[4] get-tuple-element(p.1), index=1
  ars = f32[4] all-reduce-start(v), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add
  one = s32[] constant(1)
  next = s32[] add(i.1, one)
  ard = f32[4] all-reduce-done(ars)
  ROOT t = (s32[], f32[4]) tuple(next, ard)
}

ENTRY main {
  x = f32[4] parameter(0)
  c0 = s32[] constant(0)
  init = (s32[], f32[4]) tuple(c0, x)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  ROOT out = f32[4] get-tuple-element(w), index=1
}
)");
  ASSERT_NE(m, nullptr);
  absl::StatusOr<std::vector<Value>> out = RunModule(*m, TwoDevices());
  ASSERT_TRUE(out.ok()) << out.status();
  // Three all-reduces: (1 + 10) * 4 = 44.
  EXPECT_EQ(testing::Doubles((*out)[0])[0], 44);
  MoveBefore(*m->FindComputation("body"), "ard", "ars");
  absl::StatusOr<std::unique_ptr<Interpreter>> interp =
      Interpreter::Create(*m, {.num_devices = 2});
  ASSERT_FALSE(interp.ok());
  EXPECT_NE(interp.status().message().find(
                "invalid schedule of computation body: all-reduce-done ard"),
            std::string::npos)
      << interp.status();
}

}  // namespace
}  // namespace hloverlap::interp
