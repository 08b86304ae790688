#include "interp/collectives.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "hlo/computation.h"
#include "interp/testing.h"

namespace hloverlap::interp {
namespace {

using testing::Doubles;
using testing::F32;
using testing::Parse;
using testing::RunText;

// Per-device inputs: device d gets f32[n] with elements 10*d + i.
std::vector<std::vector<Value>> DeviceIota(int devices, int n) {
  std::vector<std::vector<Value>> args;
  for (int d = 0; d < devices; ++d) {
    std::vector<float> v;
    for (int i = 0; i < n; ++i) v.push_back(10.0f * d + i);
    args.push_back({F32({n}, v)});
  }
  return args;
}

std::vector<std::vector<double>> RunAll(
    const std::string& text, const std::vector<std::vector<Value>>& args,
    InterpreterOptions options = {}) {
  absl::StatusOr<std::vector<Value>> r = RunText(text, args, options);
  EXPECT_TRUE(r.ok()) << r.status();
  std::vector<std::vector<double>> out;
  if (!r.ok()) return out;
  for (const Value& v : *r) out.push_back(Doubles(v));
  return out;
}

std::string Module(int partitions, const std::string& body,
                   const std::string& header_extra = "") {
  return absl::StrCat("HloModule m, num_partitions=", partitions, header_extra,
                      R"(

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] maximum(a, b)
}

weighted {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  two = f32[] constant(2)
  b2 = f32[] multiply(b, two)
  ROOT s = f32[] add(a, b2)
}

ENTRY main {
)",
                      body, "\n}\n");
}

// --- Groups
// -----------------------------------------------------------------------

TEST(Participants, ModesFollowXla) {
  auto m = Parse(R"(HloModule m, replica_count=2, num_partitions=2

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  x = f32[4] parameter(0)
  cr = f32[4] all-reduce(x), replica_groups={{0,1}}, to_apply=add
  crp = f32[4] all-reduce(x), channel_id=1, replica_groups={{0,1}}, to_apply=add
  cp = f32[4] all-to-all(x), channel_id=2, replica_groups={{1,0}}, dimensions={0}
  fl = f32[4] all-reduce(x), channel_id=3, replica_groups={{0,3},{1,2}}, use_global_device_ids=true, to_apply=add
  io = f32[4] all-reduce(x), channel_id=4, replica_groups=[2,2]<=[2,2]T(1,0), use_global_device_ids=true, to_apply=add
  ROOT t = (f32[4], f32[4], f32[4], f32[4], f32[4]) tuple(cr, crp, cp, fl, io)
}
)");
  ASSERT_NE(m, nullptr);
  DeviceTopology topo{2, 2};
  auto find = [&](const std::string& name) -> const Instruction* {
    for (const auto& i : m->entry()->instructions()) {
      if (i->name() == name) return i.get();
    }
    return nullptr;
  };
  auto parts = [&](const std::string& name, int64_t device) {
    absl::StatusOr<std::vector<int64_t>> p =
        GetParticipants(*find(name), topo, device);
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? *p : std::vector<int64_t>{};
  };
  // Device 3 is replica 1, partition 1.
  EXPECT_EQ(*GetCollectiveGroupMode(*find("cr")),
            CollectiveGroupMode::kCrossReplica);
  EXPECT_EQ(parts("cr", 3), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(*GetCollectiveGroupMode(*find("crp")),
            CollectiveGroupMode::kCrossReplicaAndPartition);
  EXPECT_EQ(parts("crp", 3), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(*GetCollectiveGroupMode(*find("cp")),
            CollectiveGroupMode::kCrossPartition);
  EXPECT_EQ(parts("cp", 3), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(*GetCollectiveGroupMode(*find("fl")),
            CollectiveGroupMode::kFlattenedId);
  EXPECT_EQ(parts("fl", 3), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(parts("fl", 2), (std::vector<int64_t>{1, 2}));
  // [2,2]<=[2,2]T(1,0) = {{0,2},{1,3}}.
  EXPECT_EQ(parts("io", 1), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(parts("io", 2), (std::vector<int64_t>{0, 2}));
  // A device outside the groups is an error.
  DeviceTopology big{2, 4};
  EXPECT_FALSE(GetParticipants(*find("fl"), big, 5).ok());
}

// --- Each collective on 2 and 4 devices
// -------------------------------------------

TEST(Collectives, AllReduceExplicitAndIotaGroups) {
  for (const char* groups : {"{{0,2},{1,3}}", "[2,2]<=[2,2]T(1,0)"}) {
    std::string text = Module(
        4, absl::StrCat("  x = f32[2] parameter(0)\n"
                        "  ROOT r = f32[2] all-reduce(x), channel_id=1, "
                        "replica_groups=",
                        groups, ", use_global_device_ids=true, to_apply=add"));
    auto out = RunAll(text, DeviceIota(4, 2));
    ASSERT_EQ(out.size(), 4u);
    EXPECT_EQ(out[0], (std::vector<double>{20, 22}));  // 0 + 20
    EXPECT_EQ(out[2], (std::vector<double>{20, 22}));
    EXPECT_EQ(out[1], (std::vector<double>{40, 42}));  // 10 + 30
    EXPECT_EQ(out[3], (std::vector<double>{40, 42}));
  }
  // All devices, 2 devices, non-add and generic reducers.
  for (const char* fn : {"add", "max", "weighted"}) {
    std::string text = Module(
        2, absl::StrCat("  x = f32[2] parameter(0)\n"
                        "  ROOT r = f32[2] all-reduce(x), channel_id=1, "
                        "replica_groups={{0,1}}, use_global_device_ids=true, "
                        "to_apply=",
                        fn));
    auto out = RunAll(text, DeviceIota(2, 2));
    ASSERT_EQ(out.size(), 2u);
    std::vector<double> want =
        std::string(fn) == "add"   ? std::vector<double>{10, 12}
        : std::string(fn) == "max" ? std::vector<double>{10, 11}
                                   : std::vector<double>{20, 23};
    EXPECT_EQ(out[0], want) << fn;
    EXPECT_EQ(out[1], want) << fn;
  }
}

TEST(Collectives, CrossReplicaModeUsesReplicas) {
  std::string text =
      "HloModule m, replica_count=4\n\nadd {\n  a = f32[] parameter(0)\n"
      "  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n"
      "ENTRY main {\n  x = f32[2] parameter(0)\n"
      "  ROOT r = f32[2] all-reduce(x), replica_groups={{0,1},{2,3}}, "
      "to_apply=add\n}\n";
  auto out = RunAll(text, DeviceIota(4, 2));
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0], (std::vector<double>{10, 12}));
  EXPECT_EQ(out[3], (std::vector<double>{50, 52}));
}

TEST(Collectives, AllGather) {
  for (int n : {2, 4}) {
    std::string text = Module(
        n, absl::StrCat(
               "  x = f32[2] parameter(0)\n"
               "  ROOT r = f32[",
               2 * n, "] all-gather(x), channel_id=1, replica_groups=[1,", n,
               "]<=[", n, "], dimensions={0}, use_global_device_ids=true"));
    auto out = RunAll(text, DeviceIota(n, 2));
    ASSERT_EQ(out.size(), static_cast<size_t>(n));
    std::vector<double> want;
    for (int d = 0; d < n; ++d) {
      want.push_back(10 * d);
      want.push_back(10 * d + 1);
    }
    for (int d = 0; d < n; ++d) EXPECT_EQ(out[d], want);
  }
  // Reversed explicit group order changes the concatenation order.
  std::string text = Module(
      2,
      "  x = f32[2] parameter(0)\n"
      "  ROOT r = f32[4] all-gather(x), channel_id=1, replica_groups={{1,0}}, "
      "dimensions={0}, use_global_device_ids=true");
  auto out = RunAll(text, DeviceIota(2, 2));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], (std::vector<double>{10, 11, 0, 1}));
}

TEST(Collectives, ReduceScatter) {
  for (int n : {2, 4}) {
    std::string text = Module(
        n, absl::StrCat("  x = f32[", 2 * n,
                        "] parameter(0)\n"
                        "  ROOT r = f32[2] reduce-scatter(x), channel_id=1, "
                        "replica_groups=[1,",
                        n, "]<=[", n,
                        "], use_global_device_ids=true, dimensions={0}, "
                        "to_apply=add"));
    auto out = RunAll(text, DeviceIota(n, 2 * n));
    ASSERT_EQ(out.size(), static_cast<size_t>(n));
    double base = 0;
    for (int d = 0; d < n; ++d) base += 10 * d;
    for (int d = 0; d < n; ++d) {
      EXPECT_EQ(out[d], (std::vector<double>{base + n * (2 * d),
                                             base + n * (2 * d + 1)}));
    }
  }
}

TEST(Collectives, AllToAllArrayAndTupleForms) {
  for (int n : {2, 4}) {
    std::string text = Module(
        n, absl::StrCat("  x = f32[", n,
                        "] parameter(0)\n"
                        "  ROOT r = f32[",
                        n, "] all-to-all(x), channel_id=1, replica_groups={{",
                        n == 2 ? "0,1" : "0,1,2,3", "}}, dimensions={0}"));
    auto out = RunAll(text, DeviceIota(n, n));
    ASSERT_EQ(out.size(), static_cast<size_t>(n));
    for (int d = 0; d < n; ++d) {
      std::vector<double> want;
      for (int s = 0; s < n; ++s) want.push_back(10 * s + d);
      EXPECT_EQ(out[d], want);
    }
  }
  std::string text =
      Module(2,
             "  x = f32[2] parameter(0)\n"
             "  a = f32[1] slice(x), slice={[0:1]}\n"
             "  b = f32[1] slice(x), slice={[1:2]}\n"
             "  ROOT r = (f32[1], f32[1]) all-to-all(a, b), channel_id=1, "
             "replica_groups={{0,1}}");
  absl::StatusOr<std::vector<Value>> r = RunText(text, DeviceIota(2, 2));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles((*r)[1].element(0)), (std::vector<double>{1}));
  EXPECT_EQ(Doubles((*r)[1].element(1)), (std::vector<double>{11}));
}

TEST(Collectives, CollectivePermuteAndBroadcast) {
  std::string text =
      Module(4,
             "  x = f32[2] parameter(0)\n"
             "  ROOT r = f32[2] collective-permute(x), channel_id=1, "
             "source_target_pairs={{0,1},{1,2},{2,0}}");
  auto out = RunAll(text, DeviceIota(4, 2));
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0], (std::vector<double>{20, 21}));
  EXPECT_EQ(out[1], (std::vector<double>{0, 1}));
  EXPECT_EQ(out[2], (std::vector<double>{10, 11}));
  EXPECT_EQ(out[3], (std::vector<double>{0, 0}));  // no source: zeros
  std::string bc =
      Module(2,
             "  x = f32[2] parameter(0)\n"
             "  ROOT r = f32[2] collective-broadcast(x), channel_id=1, "
             "replica_groups={{1,0}}");
  out = RunAll(bc, DeviceIota(2, 2));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], (std::vector<double>{10, 11}));
  EXPECT_EQ(out[1], (std::vector<double>{10, 11}));
}

TEST(Collectives, AsyncForms) {
  std::string text = absl::StrCat(
      "HloModule m, num_partitions=2\n\n"
      "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
      "  ROOT s = f32[] add(a, b)\n}\n\n"
      "wrapped_rs {\n  p = f32[4] parameter(0)\n"
      "  ROOT rs = f32[2] reduce-scatter(p), channel_id=4, "
      "replica_groups={{0,1}}, use_global_device_ids=true, dimensions={0}, "
      "to_apply=add\n}\n\n"
      "ENTRY main {\n"
      "  x = f32[4] parameter(0)\n"
      "  ags = (f32[4], f32[8]) all-gather-start(x), channel_id=1, "
      "replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true\n"
      "  ars = f32[4] all-reduce-start(x), channel_id=2, "
      "replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add\n"
      "  cps = (f32[4], f32[4], u32[], u32[]) collective-permute-start(x), "
      "channel_id=3, source_target_pairs={{0,1},{1,0}}\n"
      "  rss = ((f32[4]), f32[2], s32[]) async-start(x), calls=wrapped_rs\n"
      "  agd = f32[8] all-gather-done(ags)\n"
      "  ard = f32[4] all-reduce-done(ars)\n"
      "  cpd = f32[4] collective-permute-done(cps)\n"
      "  rsd = f32[2] async-done(rss)\n"
      "  ROOT t = (f32[8], f32[4], f32[4], f32[2]) tuple(agd, ard, cpd, rsd)\n"
      "}\n");
  absl::StatusOr<std::vector<Value>> r = RunText(text, DeviceIota(2, 4));
  ASSERT_TRUE(r.ok()) << r.status();
  const Value& d1 = (*r)[1];
  EXPECT_EQ(Doubles(d1.element(0)),
            (std::vector<double>{0, 1, 2, 3, 10, 11, 12, 13}));
  EXPECT_EQ(Doubles(d1.element(1)), (std::vector<double>{10, 12, 14, 16}));
  EXPECT_EQ(Doubles(d1.element(2)), (std::vector<double>{0, 1, 2, 3}));
  EXPECT_EQ(Doubles(d1.element(3)), (std::vector<double>{14, 16}));
}

// --- Deadlocks and mismatches
// ------------------------------------------------------

TEST(Collectives, DeviceFinishingWhileOthersWaitIsADeadlock) {
  // Device 1 skips the all-reduce (branch on partition-id).
  std::string text = absl::StrCat(
      "HloModule m, num_partitions=2\n\n"
      "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
      "  ROOT s = f32[] add(a, b)\n}\n\n"
      "with_ar {\n  p = f32[2] parameter(0)\n"
      "  ROOT ar.7 = f32[2] all-reduce(p), channel_id=7, "
      "replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add\n}\n\n"
      "without {\n  ROOT p = f32[2] parameter(0)\n}\n\n"
      "ENTRY main {\n  x = f32[2] parameter(0)\n"
      "  pid = u32[] partition-id()\n  zero = u32[] constant(0)\n"
      "  first = pred[] compare(pid, zero), direction=EQ\n"
      "  ROOT c = f32[2] conditional(first, x, x), "
      "true_computation=with_ar, false_computation=without\n}\n");
  for (int limit : {0, 1}) {
    InterpreterOptions opts;
    opts.max_parallel_devices = limit;
    absl::StatusOr<std::vector<Value>> r =
        RunText(text, DeviceIota(2, 2), opts);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find(
                  "deadlock: device 0 waits at collective #0, ar.7 "
                  "(computation with_ar, channel_id=7), for device 1, which "
                  "finished after 0 collectives"),
              std::string::npos)
        << r.status();
  }
}

TEST(Collectives, DevicesAtDifferentCollectivesIsAMismatch) {
  std::string text = absl::StrCat(
      "HloModule m, num_partitions=2\n\n"
      "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
      "  ROOT s = f32[] add(a, b)\n}\n\n"
      "b0 {\n  p = f32[2] parameter(0)\n"
      "  ROOT ar.1 = f32[2] all-reduce(p), channel_id=1, "
      "replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add\n}\n\n"
      "b1 {\n  p = f32[2] parameter(0)\n"
      "  ROOT ar.2 = f32[2] all-reduce(p), channel_id=2, "
      "replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add\n}\n"
      "\nENTRY main {\n  x = f32[2] parameter(0)\n"
      "  pid = u32[] partition-id()\n  i = s32[] convert(pid)\n"
      "  ROOT c = f32[2] conditional(i, x, x), branch_computations={b0, b1}\n"
      "}\n");
  absl::StatusOr<std::vector<Value>> r = RunText(text, DeviceIota(2, 2));
  ASSERT_FALSE(r.ok());
  const std::string msg(r.status().message());
  EXPECT_NE(msg.find("collective mismatch at collective #0"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("ar.1 (computation b0, channel_id=1)"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("ar.2 (computation b1, channel_id=2)"), std::string::npos)
      << msg;
}

TEST(Collectives, DifferentTripCountsDeadlock) {
  // Device d runs d+1 iterations of a loop with an all-reduce.
  std::string text = absl::StrCat(
      "HloModule m, num_partitions=2\n\n"
      "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
      "  ROOT s = f32[] add(a, b)\n}\n\n"
      "cond {\n  p = (u32[], f32[2]) parameter(0)\n"
      "  i = u32[] get-tuple-element(p), index=0\n"
      "  pid = u32[] partition-id()\n  one = u32[] constant(1)\n"
      "  n = u32[] add(pid, one)\n"
      "  ROOT lt = pred[] compare(i, n), direction=LT\n}\n\n"
      "body {\n  p = (u32[], f32[2]) parameter(0)\n"
      "  i = u32[] get-tuple-element(p), index=0\n"
      "  x = f32[2] get-tuple-element(p), index=1\n"
      "  one = u32[] constant(1)\n  i1 = u32[] add(i, one)\n"
      "  ar = f32[2] all-reduce(x), channel_id=1, replica_groups={{0,1}}, "
      "use_global_device_ids=true, to_apply=add\n"
      "  ROOT t = (u32[], f32[2]) tuple(i1, ar)\n}\n\n"
      "ENTRY main {\n  x = f32[2] parameter(0)\n  z = u32[] constant(0)\n"
      "  t = (u32[], f32[2]) tuple(z, x)\n"
      "  ROOT w = (u32[], f32[2]) while(t), condition=cond, body=body\n}\n");
  absl::StatusOr<std::vector<Value>> r = RunText(text, DeviceIota(2, 2));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("deadlock: device 1 waits at collective "
                                      "#1, ar (computation body, "
                                      "channel_id=1), for device 0"),
            std::string::npos)
      << r.status();
}

TEST(Collectives, ResultsAreIdenticalAcrossThreadLimits) {
  std::string text = Module(
      4,
      "  x = f32[64] parameter(0)\n"
      "  ar = f32[64] all-reduce(x), channel_id=1, replica_groups={{0,1,2,3}}, "
      "use_global_device_ids=true, to_apply=add\n"
      "  e = f32[64] exponential(ar)\n"
      "  ROOT rs = f32[16] reduce-scatter(e), channel_id=2, "
      "replica_groups={{3,2,1,0}}, use_global_device_ids=true, "
      "dimensions={0}, to_apply=add");
  std::vector<std::vector<Value>> args;
  for (int d = 0; d < 4; ++d) {
    std::vector<float> v(64);
    for (int i = 0; i < 64; ++i) v[i] = 0.01f * (i * 7 + d * 13 % 11);
    args.push_back({F32({64}, v)});
  }
  std::vector<uint64_t> reference;
  for (int limit : {0, 1, 2, 3}) {
    InterpreterOptions opts;
    opts.max_parallel_devices = limit;
    absl::StatusOr<std::vector<Value>> r = RunText(text, args, opts);
    ASSERT_TRUE(r.ok()) << r.status();
    std::vector<uint64_t> sums;
    for (const Value& v : *r) sums.push_back(Fnv1a64(v));
    if (reference.empty()) reference = sums;
    EXPECT_EQ(sums, reference) << "limit " << limit;
  }
}

}  // namespace
}  // namespace hloverlap::interp
