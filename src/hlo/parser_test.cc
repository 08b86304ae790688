// Tests of the HLO text parser: every dump style (tests/hlo/dump_styles/),
// typed attributes, literals, async sugar, compact GTE operands, the corpus,
// input files (gzip, errors), and one test per error class with an exact
// FILE:LINE:COL.
#include "hlo/parser.h"

#include <zlib.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/clone.h"
#include "hlo/module.h"
#include "hlo/parser_internal.h"
#include "hlo/printer.h"
#include "hlo/shape_inference.h"
#include "hlo/verifier.h"

namespace hloverlap {
namespace {

namespace fs = std::filesystem;

fs::path SourceDir() {
  if (const char* env = std::getenv("HLOVERLAP_SOURCE_DIR");
      env != nullptr && *env != '\0') {
    return fs::path(env);
  }
  return fs::path(HLOVERLAP_SOURCE_DIR);
}

std::string ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::unique_ptr<Module> ParseOk(std::string_view text) {
  ParseOptions options;
  options.filename = "t.hlo";
  absl::StatusOr<std::unique_ptr<Module>> m = ParseHloModule(text, options);
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return nullptr;
  return *std::move(m);
}

std::unique_ptr<Module> ParseStyle(const std::string& file) {
  const fs::path path = SourceDir() / "tests" / "hlo" / "dump_styles" / file;
  absl::StatusOr<std::unique_ptr<Module>> m = ParseHloFile(path.string());
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return nullptr;
  return *std::move(m);
}

// The error message of parsing `text` as "t.hlo" (empty if it parsed).
std::string ErrorOf(std::string_view text, ParseOptions options = {}) {
  options.filename = "t.hlo";
  absl::StatusOr<std::unique_ptr<Module>> m = ParseHloModule(text, options);
  if (m.ok()) return "";
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(m.status().message());
}

// Expects an error starting with "t.hlo:LINE:COL: " and containing `what`.
#define EXPECT_PARSE_ERROR(text, line, col, what)                           \
  do {                                                                      \
    const std::string _msg = ErrorOf(text);                                 \
    const std::string _prefix =                                             \
        "t.hlo:" + std::to_string(line) + ":" + std::to_string(col) + ": "; \
    EXPECT_EQ(_msg.substr(0, _prefix.size()), _prefix) << _msg;             \
    EXPECT_NE(_msg.find(what), std::string::npos) << _msg;                  \
  } while (0)

Instruction* Find(const Module& m, std::string_view name) {
  for (const auto& c : m.computations()) {
    for (const auto& i : c->instructions()) {
      if (i->name() == name) return i.get();
    }
  }
  return nullptr;
}

Instruction* FindIn(const Computation* c, std::string_view name) {
  for (const auto& i : c->instructions()) {
    if (i->name() == name) return i.get();
  }
  return nullptr;
}

std::vector<std::string> ComputationNames(const Module& m) {
  std::vector<std::string> names;
  for (const auto& c : m.computations()) names.push_back(c->name());
  return names;
}

// ---------------------------------------------------------------------------
// Dump styles.

TEST(DumpStyles, Default2025) {
  auto m = ParseStyle("default_2025.hlo");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->name(), "default_style");
  EXPECT_TRUE(m->is_scheduled());
  EXPECT_EQ(m->num_partitions(), 2);
  EXPECT_EQ(m->replica_count(), 1);
  EXPECT_EQ(m->entry_computation_layout(),
            "{(f32[8,128]{1,0}, s32[])->(f32[8,128]{1,0}, f32[4,128]{1,0})}");
  ASSERT_EQ(m->frontend_attributes().size(), 1u);
  EXPECT_EQ(m->frontend_attributes()[0].key, "fingerprint_before_lhs");
  EXPECT_EQ(m->frontend_attributes()[0].value, "0123abcd");
  EXPECT_FALSE(m->frontend_attributes()[0].is_raw);
  EXPECT_EQ(ComputationNames(*m),
            (std::vector<std::string>{"add.1", "wrapped_rs", "fused_scale",
                                      "cond.6", "body.11", "main.30"}));
  ASSERT_NE(m->entry(), nullptr);
  EXPECT_EQ(m->entry()->name(), "main.30");
  EXPECT_EQ(m->entry()->instruction_count(), 12);
  EXPECT_EQ(m->entry()->root()->name(), "result.26");
  EXPECT_TRUE(m->FindComputation("fused_scale")->IsFusionComputation());
  EXPECT_FALSE(m->FindComputation("wrapped_rs")->IsFusionComputation());

  const Instruction* rs = Find(*m, "rs.0");
  ASSERT_NE(rs, nullptr);
  EXPECT_EQ(rs->opcode(), Opcode::kReduceScatter);
  EXPECT_EQ(rs->attrs().channel_id, 2);
  EXPECT_EQ(rs->attrs().replica_groups->format, ReplicaGroups::Format::kIota);
  EXPECT_EQ(rs->attrs().replica_groups->iota_num_groups, 1);
  EXPECT_EQ(rs->attrs().replica_groups->iota_group_size, 2);
  EXPECT_EQ(rs->attrs().replica_groups->iota_reshape_dims,
            DimensionVector({2}));
  EXPECT_TRUE(rs->attrs().use_global_device_ids);
  EXPECT_TRUE(rs->attrs().has_dimensions);
  EXPECT_EQ(rs->dimensions(), DimensionVector({0}));
  ASSERT_EQ(rs->called_computations().size(), 1u);
  EXPECT_EQ(rs->to_apply()->name(), "add.1");

  const Instruction* start = Find(*m, "rs-start");
  ASSERT_NE(start, nullptr);
  EXPECT_EQ(start->opcode(), Opcode::kAsyncStart);
  EXPECT_EQ(start->to_apply()->name(), "wrapped_rs");
  EXPECT_EQ(start->operand(0)->name(), "a.19");
  EXPECT_EQ(Find(*m, "rs-done")->opcode(), Opcode::kAsyncDone);

  const Instruction* ag = Find(*m, "ag-start");
  EXPECT_EQ(ag->opcode(), Opcode::kAllGatherStart);
  EXPECT_EQ(ag->attrs().backend_config,
            "{\"operation_queue_id\":\"0\",\"wait_on_operation_queues\":[]}");
  EXPECT_TRUE(ag->attrs().backend_config_is_raw);

  const Instruction* w = Find(*m, "while.22");
  ASSERT_EQ(w->called_computations().size(), 2u);
  EXPECT_EQ(w->while_condition()->name(), "cond.6");
  EXPECT_EQ(w->while_body()->name(), "body.11");
  // A while's config is decoded (while_backend_config.h), not kept raw.
  EXPECT_EQ(w->attrs().backend_config, "");
  EXPECT_EQ(w->attrs().while_config->known_trip_count(), 4);
  EXPECT_EQ(w->attrs().while_config->Encode(),
            "{\"known_trip_count\":{\"n\":\"4\"}}");

  const Instruction* fusion = Find(*m, "scale_fusion");
  EXPECT_EQ(fusion->attrs().fusion_kind, "kLoop");
  EXPECT_EQ(fusion->metadata().op_name, "jit(step)/while/body/mul");
  EXPECT_EQ(fusion->metadata().source_file, "/app/step.py");
  EXPECT_EQ(fusion->metadata().source_line, 12);

  EXPECT_EQ(Find(*m, "a.19")->attrs().sharding, "{devices=[2,1]<=[2]}");
  EXPECT_EQ(Find(*m, "b.20")->attrs().sharding, "{replicated}");
  EXPECT_EQ(Find(*m, "b.20")->parameter_number(), 1);
  EXPECT_EQ(Find(*m, "lt.10")->attrs().comparison_direction,
            ComparisonDirection::kLt);
  EXPECT_EQ(Find(*m, "i.8")->tuple_index(), 0);
  EXPECT_EQ(Find(*m, "broadcast.4")->dimensions(), DimensionVector{});
  EXPECT_TRUE(Find(*m, "broadcast.4")->attrs().has_dimensions);

  const Literal* c = Find(*m, "c.24")->literal();
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->elided());
  EXPECT_EQ(c->Get<float>(0), 1.0f);
  EXPECT_EQ(c->Get<float>(3), 4.0f);
  EXPECT_TRUE(Find(*m, "big.25")->literal()->elided());
  EXPECT_EQ(Find(*m, "constant.3")->literal()->Get<float>(0), 0.5f);

  const Shape& shape = Find(*m, "a.19")->shape();
  EXPECT_EQ(shape.element_type(), PrimitiveType::kF32);
  EXPECT_EQ(shape.dimensions(), (absl::InlinedVector<int64_t, 6>{8, 128}));
  ASSERT_TRUE(shape.has_layout());
  EXPECT_EQ(shape.layout()->minor_to_major,
            (absl::InlinedVector<int64_t, 6>{1, 0}));
}

TEST(DumpStyles, OperandShapes) {
  auto m = ParseStyle("default_operand_shapes.hlo");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->replica_count(), 2);
  EXPECT_EQ(m->computations().size(), 4u);
  const Instruction* ar = Find(*m, "ar.16");
  ASSERT_NE(ar, nullptr);
  EXPECT_EQ(ar->opcode(), Opcode::kAllReduce);
  EXPECT_EQ(ar->operand(0)->name(), "v.15");
  EXPECT_EQ(ar->attrs().replica_groups->format,
            ReplicaGroups::Format::kExplicit);
  EXPECT_EQ(ar->attrs().replica_groups->explicit_groups,
            (std::vector<std::vector<int64_t>>{{0, 1}}));
  EXPECT_EQ(ar->to_apply()->name(), "sum.1");
  EXPECT_EQ(ar->metadata().op_type, "psum");
  const Instruction* w = Find(*m, "while.24");
  EXPECT_EQ(w->operand(0)->name(), "init.23");
  EXPECT_EQ(m->entry()->root()->name(), "out.25");
  EXPECT_EQ(m->entry()->root()->operand(0), w);
}

TEST(DumpStyles, ShortDump2023WithAsyncSugar) {
  auto m = ParseStyle("short_dump_2023.hlo");
  ASSERT_NE(m, nullptr);
  // add, cond, body, two synthesized wrapped computations, main.
  ASSERT_EQ(m->computations().size(), 6u);
  EXPECT_EQ(m->entry()->name(), "main");
  const Instruction* start = Find(*m, "reduce-scatter-start");
  ASSERT_NE(start, nullptr);
  EXPECT_EQ(start->opcode(), Opcode::kAsyncStart);
  EXPECT_EQ(start->shape().tuple_size(), 2);
  ASSERT_EQ(start->called_computations().size(), 1u);
  const Computation* wrapped = start->to_apply();
  EXPECT_EQ(wrapped->name(), "wrapped_reduce_scatter");
  EXPECT_FALSE(wrapped->IsFusionComputation());
  ASSERT_EQ(wrapped->num_parameters(), 1);
  const Instruction* rs = wrapped->root();
  EXPECT_EQ(rs->opcode(), Opcode::kReduceScatter);
  EXPECT_EQ(rs->name(), "reduce-scatter");
  EXPECT_EQ(rs->shape().dimensions(), (absl::InlinedVector<int64_t, 6>{2, 16}));
  EXPECT_EQ(rs->operand(0), wrapped->parameter(0));
  EXPECT_EQ(rs->attrs().channel_id, 5);
  EXPECT_EQ(rs->dimensions(), DimensionVector({0}));
  EXPECT_EQ(rs->to_apply()->name(), "add");
  EXPECT_EQ(rs->metadata().op_name, "jit(f)/reduce_scatter");
  EXPECT_EQ(start->metadata().op_name, "jit(f)/reduce_scatter");
  EXPECT_EQ(start->attrs().backend_config, "{\"operation_queue_id\":\"0\"}");
  // The wrapped computation precedes its caller.
  const auto& comps = m->computations();
  EXPECT_EQ(comps[3].get(), wrapped);
  const Instruction* done = Find(*m, "reduce-scatter-done");
  EXPECT_EQ(done->opcode(), Opcode::kAsyncDone);
  EXPECT_EQ(done->operand(0), start);

  const Instruction* a2a = Find(*m, "all-to-all-start");
  EXPECT_EQ(a2a->to_apply()->root()->opcode(), Opcode::kAllToAll);
  EXPECT_EQ(a2a->to_apply()->name(), "wrapped_all_to_all");
  ASSERT_EQ(a2a->control_predecessors().size(), 1u);
  EXPECT_EQ(a2a->control_predecessors()[0], done);

  const Instruction* t = Find(*m, "t");
  EXPECT_EQ(t->operand_count(), 6);
  EXPECT_EQ(t->shape().tuple_size(), 6);
  EXPECT_EQ(t->operand(5)->name(), "e");
  EXPECT_EQ(m->FindComputation("body")->root(), t);
}

TEST(DumpStyles, ShortParsable) {
  auto m = ParseStyle("short_parsable.hlo");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->name(), "jit_step");
  ASSERT_EQ(m->frontend_attributes().size(), 1u);
  EXPECT_TRUE(m->frontend_attributes()[0].is_raw);
  EXPECT_EQ(m->frontend_attributes()[0].value, "{mesh = #sdy.mesh<[\"x\"=2]>}");
  const Instruction* ag = Find(*m, "all-gather.42");
  ASSERT_NE(ag, nullptr);
  EXPECT_EQ(ag->dimensions(), DimensionVector({0}));
  EXPECT_EQ(ag->attrs().channel_id, 1);
  const Literal* lit = Find(*m, "constant.16")->literal();
  ASSERT_NE(lit, nullptr);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(lit->Get<float>(i), i + 1.0f);
  const Instruction* reduce = Find(*m, "reduce.48");
  EXPECT_EQ(reduce->to_apply()->name(), "region_0.1");
  EXPECT_EQ(reduce->dimensions(), DimensionVector({1}));
  EXPECT_EQ(m->entry()->root()->name(), "broadcast.49");
}

TEST(DumpStyles, HeaderlessEntry) {
  auto m = ParseStyle("headerless_entry.hlo");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->name(), "module_main");
  EXPECT_EQ(m->computations().size(), 3u);
  EXPECT_EQ(m->entry()->name(), "main");
  const Instruction* cp = Find(*m, "cp");
  ASSERT_NE(cp, nullptr);
  EXPECT_EQ(cp->attrs().source_target_pairs,
            (std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {1, 0}}));
  EXPECT_EQ(m->entry()->root()->opcode(), Opcode::kWhile);
  EXPECT_EQ(m->entry()->root()->attrs().while_config->Encode(),
            "{\"known_trip_count\":{\"n\":\"7\"}}");
  // Shapes without layouts stay without layouts.
  EXPECT_FALSE(cp->shape().has_layout());
}

TEST(DumpStyles, CompactGte2026) {
  auto m = ParseStyle("compact_gte_2026.hlo");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->dropped_control_predecessors(), 1);
  const StackFrameIndex& sf = m->stack_frames();
  EXPECT_EQ(sf.file_names, std::vector<std::string>{"/app/model.py"});
  EXPECT_EQ(sf.function_names, (std::vector<std::string>{"step", "layer"}));
  ASSERT_EQ(sf.file_locations.size(), 2u);
  EXPECT_EQ(sf.file_locations[1].line, 42);
  EXPECT_EQ(sf.file_locations[1].end_line, 43);
  EXPECT_EQ(sf.file_locations[1].column, 8);
  EXPECT_EQ(sf.file_locations[1].end_column, 30);
  EXPECT_EQ(sf.file_locations[1].function_name_id, 2);
  ASSERT_EQ(sf.frames.size(), 2u);
  EXPECT_EQ(sf.frames[1].file_location_id, 2);
  EXPECT_EQ(sf.frames[1].parent_frame_id, 1);  // text 2 = frame 1
  EXPECT_EQ(sf.frames[0].parent_frame_id, 0);
  EXPECT_EQ(Find(*m, "next.23")->metadata().stack_frame_id, 2);
  EXPECT_EQ(m->FindComputation("host_compute.5")->execution_thread(), "host");

  const Computation* body = m->FindComputation("body.20");
  const Instruction* s0 = FindIn(body, "s.21_0");
  const Instruction* s1 = FindIn(body, "s.21_1");
  const Instruction* s10 = FindIn(body, "s.21_1_0");
  const Instruction* s11 = FindIn(body, "s.21_1_1");
  ASSERT_NE(s0, nullptr);
  ASSERT_NE(s1, nullptr);
  ASSERT_NE(s10, nullptr);
  ASSERT_NE(s11, nullptr);
  EXPECT_EQ(s0->opcode(), Opcode::kGetTupleElement);
  EXPECT_EQ(s1->tuple_index(), 1);
  EXPECT_EQ(s10->operand(0), s1);
  EXPECT_EQ(s11->tuple_index(), 1);
  // One GTE per distinct name#i: 8 parsed instructions and 4 GTEs (#0, #1,
  // #1#0, #1#1).
  EXPECT_EQ(body->instruction_count(), 8 + 4);
  EXPECT_EQ(Find(*m, "m.26")->operand(1), s11);
  EXPECT_EQ(Find(*m, "pair.27")->operand(1), s11);
  // The GTE precedes its first user.
  int pos_s0 = -1, pos_next = -1;
  for (int i = 0; i < body->instruction_count(); ++i) {
    if (body->instructions()[i].get() == s0) pos_s0 = i;
    if (body->instructions()[i]->name() == "next.23") pos_next = i;
  }
  EXPECT_LT(pos_s0, pos_next);
  // The undefined control predecessor was dropped.
  EXPECT_TRUE(Find(*m, "ar-start.24")->control_predecessors().empty());
  const Instruction* out = m->entry()->root();
  EXPECT_EQ(out->name(), "out.57");
  ASSERT_EQ(out->control_predecessors().size(), 1u);
  EXPECT_EQ(out->control_predecessors()[0]->name(), "call.56");
  EXPECT_EQ(Find(*m, "call.56")->operand(0)->name(), "while.55_1_0");
}

// ---------------------------------------------------------------------------
// Corpus.

TEST(Corpus, EveryFileParses) {
  const fs::path corpus = SourceDir() / ".." / "shared" / "corpus";
  if (!fs::exists(corpus)) GTEST_SKIP() << "no corpus at " << corpus;
  int files = 0;
  for (const auto& dir : fs::directory_iterator(corpus)) {
    if (!dir.is_directory()) continue;
    for (const auto& f : fs::directory_iterator(dir.path())) {
      if (f.path().extension() != ".hlo") continue;
      ++files;
      absl::StatusOr<std::unique_ptr<Module>> m =
          ParseHloFile(f.path().string());
      ASSERT_TRUE(m.ok()) << m.status().message();
      EXPECT_NE((*m)->entry(), nullptr) << f.path();
      const std::string name = f.path().filename().string();
      if (name.rfind("09_", 0) == 0) {
        EXPECT_TRUE((*m)->is_scheduled()) << f.path();
        EXPECT_FALSE((*m)->stack_frames().empty()) << f.path();
      }
    }
  }
  EXPECT_GE(files, 41);
}

TEST(Corpus, ThroughputReport) {
  const fs::path corpus = SourceDir() / ".." / "shared" / "corpus";
  if (!fs::exists(corpus)) GTEST_SKIP() << "no corpus at " << corpus;
  double bytes = 0, seconds = 0;
  for (const auto& dir : fs::directory_iterator(corpus)) {
    if (!dir.is_directory()) continue;
    for (const char* stage :
         {"04_after_collective_pipeliner.hlo", "09_after_optimizations.hlo"}) {
      const fs::path p = dir.path() / stage;
      if (!fs::exists(p)) continue;
      const std::string text = ReadText(p);
      double best = 1e9;
      for (int rep = 0; rep < 3; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        auto m = ParseHloModule(text);
        auto t1 = std::chrono::steady_clock::now();
        ASSERT_TRUE(m.ok()) << m.status().message();
        best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
      }
      bytes += text.size();
      seconds += best;
    }
  }
  std::printf("parse throughput on corpus 04+09 files: %.1f MB/s\n",
              bytes / 1e6 / seconds);
}

// ---------------------------------------------------------------------------
// Attributes.

// Metadata read by the character scan (plain strings, spaces or commas)
// and by the token path (escapes, line breaks, comments, unknown keys, long
// numbers, non-ASCII) give the same fields.
TEST(Attributes, MetadataSpellingsGiveTheSameFields) {
  struct Case {
    const char* metadata;
    const char* op_name;
    const char* scheduling_name;
    int64_t stack_frame_id;
  };
  const Case cases[] = {
      {R"m({op_name="a/b(c)" scheduling_name="s.1" stack_frame_id=7})m",
       "a/b(c)", "s.1", 7},
      {R"m({op_name="a/b(c)",scheduling_name="s.1",stack_frame_id=7})m",
       "a/b(c)", "s.1", 7},
      {R"m({ op_name="it's" , stack_frame_id=0007 })m", "it's", "", 7},
      {R"m({op_name="a\"b" scheduling_name="s"})m", "a\"b", "s", 0},
      {"{op_name=\"a\"\n scheduling_name=\"s\"}", "a", "s", 0},
      {R"m({op_name="a" /* c */ stack_frame_id=3})m", "a", "", 3},
      {R"m({op_name="a" future_key=1 stack_frame_id=3})m", "a", "", 3},
      {R"m({stack_frame_id=123456789012345678})m", "", "", 123456789012345678},
      {R"m({stack_frame_id=1234567890123456789})m", "", "",
       1234567890123456789},
      {"{op_name=\"caf\xc3\xa9\" stack_frame_id=2}", "caf\xc3\xa9", "", 2},
      {R"m({op_name="x" op_name="y"})m", "y", "", 0},
      {R"m({})m", "", "", 0},
  };
  for (const Case& c : cases) {
    const std::string text = std::string(
                                 "HloModule m\n\nENTRY e {\n  ROOT p = f32[4] "
                                 "parameter(0), metadata=") +
                             c.metadata + "\n}\n";
    auto m = ParseOk(text);
    ASSERT_NE(m, nullptr) << c.metadata;
    const OpMetadata& md = Find(*m, "p")->metadata();
    EXPECT_EQ(md.op_name, c.op_name) << c.metadata;
    EXPECT_EQ(md.scheduling_name, c.scheduling_name) << c.metadata;
    EXPECT_EQ(md.stack_frame_id, c.stack_frame_id) << c.metadata;
  }
}

TEST(Attributes, TypedFields) {
  auto m = ParseOk(R"(
HloModule attrs

ENTRY main {
  p = f32[8,16]{1,0} parameter(0)
  q = f32[16,4]{1,0} parameter(1)
  i = s32[] parameter(2)
  zero = f32[] constant(0)
  s = f32[2,8]{1,0} slice(p), slice={[0:4:2], [8:16]}
  ds = f32[1,16]{1,0} dynamic-slice(p, i, i), dynamic_slice_sizes={1,16}
  pd = f32[10,19]{1,0} pad(p, zero), padding=1_1x0_2_1
  d = f32[8,4]{1,0} dot(p, q), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={default,highest}
  b = f32[2,8,4]{2,1,0} dot(pd, pd), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  c = pred[8,16]{1,0} compare(p, p), direction=GE, type=TOTALORDER
  io = s32[8]{0} iota(), iota_dimension=0
  cc = f32[8,16]{1,0} custom-call(p), custom_call_target="Sharding", sharding={devices=[2,1]0,1}, frontend_attributes={_xla_b="x\"y",_xla_a={a = 1 : i32}}, backend_config="plain string"
  ag = f32[16,16]{1,0} all-gather(p), channel_id=7, replica_groups=[2,2]<=[2,2]T(1,0), dimensions={0}, constrain_layout=true
  mg = f32[8,16]{1,0} all-to-all(p), replica_groups=mesh['a'=2,'b'=2] {'b'}, dimensions={1}
  cv = f32[8,16]{1,0} custom-call(p), custom_call_target="conv", window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, literal=s32[2]{0} {1, 2}, api_version=API_VERSION_TYPED_FFI
  ROOT t = (f32[8,4]{1,0}) tuple(d), metadata={op_type="t", op_name="x y", source_line=3, source_end_line=4, source_column=5, source_end_column=6, deduplicated_name="dd", scheduling_name="sn", stack_frame_id=9, profile_type={1,2}, metadata_payload="pl"}
}
)");
  ASSERT_NE(m, nullptr);
  const auto& s = Find(*m, "s")->attrs().slice;
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0], (SliceRange{0, 4, 2}));
  EXPECT_EQ(s[1], (SliceRange{8, 16, 1}));
  EXPECT_EQ(Find(*m, "ds")->attrs().dynamic_slice_sizes,
            DimensionVector({1, 16}));
  const auto& pad = Find(*m, "pd")->attrs().padding;
  ASSERT_EQ(pad.size(), 2u);
  EXPECT_EQ(pad[0], (PaddingDim{1, 1, 0}));
  EXPECT_EQ(pad[1], (PaddingDim{0, 2, 1}));
  const Instruction* d = Find(*m, "d");
  EXPECT_EQ(d->attrs().dot->lhs_contracting_dims, DimensionVector({1}));
  EXPECT_EQ(d->attrs().dot->rhs_contracting_dims, DimensionVector({0}));
  EXPECT_TRUE(d->attrs().dot->lhs_batch_dims.empty());
  ASSERT_EQ(d->attrs().raw.size(), 1u);
  EXPECT_EQ(d->attrs().raw[0],
            (RawAttribute{"operand_precision", "{default,highest}"}));
  EXPECT_EQ(Find(*m, "b")->attrs().dot->rhs_batch_dims, DimensionVector({0}));
  const Instruction* c = Find(*m, "c");
  EXPECT_EQ(c->attrs().comparison_direction, ComparisonDirection::kGe);
  EXPECT_EQ(c->attrs().comparison_type, "TOTALORDER");
  EXPECT_EQ(Find(*m, "io")->attrs().iota_dimension, 0);
  const Instruction* cc = Find(*m, "cc");
  EXPECT_EQ(cc->attrs().custom_call_target, "Sharding");
  EXPECT_EQ(cc->attrs().sharding, "{devices=[2,1]0,1}");
  ASSERT_EQ(cc->attrs().frontend_attributes.size(), 2u);
  EXPECT_EQ(cc->attrs().frontend_attributes[0],
            (FrontendAttribute{"_xla_b", "x\"y", false}));
  EXPECT_EQ(cc->attrs().frontend_attributes[1],
            (FrontendAttribute{"_xla_a", "{a = 1 : i32}", true}));
  EXPECT_EQ(cc->attrs().backend_config, "plain string");
  EXPECT_FALSE(cc->attrs().backend_config_is_raw);
  const Instruction* ag = Find(*m, "ag");
  EXPECT_EQ(ag->attrs().channel_id, 7);
  EXPECT_TRUE(ag->attrs().constrain_layout);
  EXPECT_FALSE(ag->attrs().use_global_device_ids);
  const ReplicaGroups& rg = ag->attrs().replica_groups;
  EXPECT_EQ(rg.format, ReplicaGroups::Format::kIota);
  EXPECT_EQ(rg.iota_num_groups, 2);
  EXPECT_EQ(rg.iota_group_size, 2);
  EXPECT_EQ(rg.iota_reshape_dims, DimensionVector({2, 2}));
  EXPECT_EQ(rg.iota_transpose_perm, DimensionVector({1, 0}));
  const ReplicaGroups& mesh = Find(*m, "mg")->attrs().replica_groups;
  EXPECT_EQ(mesh.format, ReplicaGroups::Format::kMesh);
  EXPECT_EQ(mesh.mesh_text, "mesh['a'=2,'b'=2] {'b'}");
  const auto& raw = Find(*m, "cv")->attrs().raw;
  ASSERT_EQ(raw.size(), 4u);
  EXPECT_EQ(raw[0], (RawAttribute{"window", "{size=3x3 pad=1_1x1_1}"}));
  EXPECT_EQ(raw[1], (RawAttribute{"dim_labels", "b01f_01io->b01f"}));
  EXPECT_EQ(raw[2], (RawAttribute{"literal", "s32[2]{0} {1, 2}"}));
  EXPECT_EQ(raw[3], (RawAttribute{"api_version", "API_VERSION_TYPED_FFI"}));
  const OpMetadata& md = Find(*m, "t")->metadata();
  EXPECT_EQ(md.op_type, "t");
  EXPECT_EQ(md.op_name, "x y");
  EXPECT_EQ(md.source_line, 3);
  EXPECT_EQ(md.source_end_line, 4);
  EXPECT_EQ(md.source_column, 5);
  EXPECT_EQ(md.source_end_column, 6);
  EXPECT_EQ(md.deduplicated_name, "dd");
  EXPECT_EQ(md.scheduling_name, "sn");
  EXPECT_EQ(md.stack_frame_id, 9);
  EXPECT_EQ(md.profile_type, "{1,2}");
  EXPECT_EQ(md.metadata_payload, "pl");
}

TEST(Attributes, CalledComputationsOrder) {
  auto m = ParseOk(R"(
HloModule calls

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}

b0 {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}

b1 {
  p = f32[4] parameter(0)
  ROOT n = f32[4] abs(p)
}

ENTRY main {
  x = f32[4] parameter(0)
  k = s32[] parameter(1)
  f = pred[] parameter(2)
  zero = f32[] constant(0)
  br = f32[4] conditional(k, x, x), branch_computations={b0, b1}
  tf = f32[4] conditional(f, x, x), true_computation=b1, false_computation=b0
  ss = f32[4] select-and-scatter(x, x, zero), window={size=1}, select=ge, scatter=add
  cl = f32[4] call(x), to_apply=b0, is_composite=true
  cu = f32[4] custom-call(x), custom_call_target="t", called_computations={b1, b0}
  ROOT r = f32[] reduce(x, zero), dimensions={0}, to_apply=add
}
)");
  ASSERT_NE(m, nullptr);
  auto names = [](const Instruction* i) {
    std::vector<std::string> out;
    for (const Computation* c : i->called_computations()) {
      out.push_back(c->name());
    }
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(names(Find(*m, "br")), (V{"b0", "b1"}));
  EXPECT_TRUE(Find(*m, "br")->attrs().branch_computations_form);
  EXPECT_EQ(names(Find(*m, "tf")), (V{"b1", "b0"}));
  EXPECT_FALSE(Find(*m, "tf")->attrs().branch_computations_form);
  EXPECT_EQ(names(Find(*m, "ss")), (V{"ge", "add"}));
  EXPECT_EQ(names(Find(*m, "cl")), (V{"b0"}));
  EXPECT_TRUE(Find(*m, "cl")->attrs().is_composite);
  EXPECT_EQ(names(Find(*m, "cu")), (V{"b1", "b0"}));
  EXPECT_EQ(names(Find(*m, "r")), (V{"add"}));
}

TEST(Attributes, RawAttributesKeepExactText) {
  auto m = ParseOk(R"(
HloModule raw, input_output_alias={ {}: (0, {}, may-alias) }, buffer_donor={ (1, {}) }, allow_spmd_sharding_propagation_to_output={true}

ENTRY main {
  p = f32[4]{0} parameter(0), parameter_replication={false}
  q = f32[4]{0} parameter(1)
  ROOT f = f32[4]{0} custom-call(p, q), custom_call_target="x", output_to_operand_aliasing={{}: (0, {})}, origin={{"orig" {1,0}}}, statistics={visualizing_index=1,stat_a=0.5}, schedule=SCHEDULE_LATEST, custom_call_has_side_effect=true
}
)");
  ASSERT_NE(m, nullptr);
  const auto& hdr = m->raw_header_attributes();
  ASSERT_EQ(hdr.size(), 3u);
  EXPECT_EQ(hdr[0],
            (RawAttribute{"input_output_alias", "{ {}: (0, {}, may-alias) }"}));
  EXPECT_EQ(hdr[1], (RawAttribute{"buffer_donor", "{ (1, {}) }"}));
  EXPECT_EQ(hdr[2], (RawAttribute{"allow_spmd_sharding_propagation_to_output",
                                  "{true}"}));
  EXPECT_EQ(Find(*m, "p")->attrs().raw,
            (std::vector<RawAttribute>{{"parameter_replication", "{false}"}}));
  const auto& raw = Find(*m, "f")->attrs().raw;
  ASSERT_EQ(raw.size(), 5u);
  EXPECT_EQ(raw[0],
            (RawAttribute{"output_to_operand_aliasing", "{{}: (0, {})}"}));
  EXPECT_EQ(raw[1], (RawAttribute{"origin", "{{\"orig\" {1,0}}}"}));
  EXPECT_EQ(raw[2],
            (RawAttribute{"statistics", "{visualizing_index=1,stat_a=0.5}"}));
  EXPECT_EQ(raw[3], (RawAttribute{"schedule", "SCHEDULE_LATEST"}));
  EXPECT_EQ(raw[4], (RawAttribute{"custom_call_has_side_effect", "true"}));
}

TEST(Attributes, AsyncSugarFusionStart) {
  auto m = ParseOk(R"(
HloModule sugar

fused {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}

ENTRY main {
  x = f32[4] parameter(0)
  fusion-start = ((f32[4]), f32[4], u32[]) fusion-start(x), kind=kLoop, calls=fused
  fusion-update = ((f32[4]), f32[4], u32[]) fusion-update(fusion-start)
  ROOT fusion-done = f32[4] fusion-done(fusion-update)
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* start = Find(*m, "fusion-start");
  EXPECT_EQ(start->opcode(), Opcode::kAsyncStart);
  const Computation* wrapped = start->to_apply();
  EXPECT_FALSE(wrapped->IsFusionComputation());
  EXPECT_EQ(wrapped->root()->opcode(), Opcode::kFusion);
  EXPECT_EQ(wrapped->root()->attrs().fusion_kind, "kLoop");
  EXPECT_TRUE(m->FindComputation("fused")->IsFusionComputation());
  EXPECT_EQ(Find(*m, "fusion-update")->opcode(), Opcode::kAsyncUpdate);
  EXPECT_EQ(Find(*m, "fusion-done")->opcode(), Opcode::kAsyncDone);
}

TEST(Attributes, GenericAsyncDoneWithCalls) {
  const std::string text = R"(
HloModule generic

w {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}

v {
  p = f32[4] parameter(0)
  ROOT n = f32[4] abs(p)
}

ENTRY main {
  x = f32[4] parameter(0)
  s = ((f32[4]), f32[4]) async-start(x), calls=w
  ROOT d = f32[4] async-done(s), calls=CALLEE
}
)";
  std::string ok = text;
  ok.replace(ok.find("CALLEE"), 6, "w");
  EXPECT_NE(ParseOk(ok), nullptr);
  std::string bad = text;
  bad.replace(bad.find("CALLEE"), 6, "v");
  EXPECT_PARSE_ERROR(bad, 17, 34, "does not match");
}

TEST(Attributes, SynthesizedNamesAreMadeUnique) {
  auto m = ParseOk(R"(
HloModule names

ENTRY main {
  p = (f32[4], f32[4]) parameter(0)
  p_0 = f32[4] constant({1, 2, 3, 4})
  a = f32[4] add(p#0, p_0)
  ROOT b = f32[4] add(p#0, p#1)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry()->instruction_count(), 6);
  const Instruction* a = Find(*m, "a");
  EXPECT_EQ(a->operand(0)->name(), "p_0.1");
  EXPECT_EQ(a->operand(1)->name(), "p_0");
  EXPECT_EQ(Find(*m, "b")->operand(0), a->operand(0));  // reused
  EXPECT_EQ(Find(*m, "b")->operand(1)->name(), "p_1");
}

// Hand-written HLO reuses names across computations; XLA accepts it and so
// do we: the first keeps the name, later ones get ".<k>" avoiding every
// other name (here "x.1" is taken, so the repeat becomes "x.2").
TEST(Attributes, NamesRepeatedAcrossComputationsAreMadeUnique) {
  auto m = ParseOk(R"(
HloModule names

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT a = f32[] add(x, y)
}

ENTRY main {
  x = f32[4] parameter(0)
  x.1 = f32[] constant(0)
  ROOT a = f32[] reduce(x, x.1), dimensions={0}, to_apply=add
}
)");
  ASSERT_NE(m, nullptr);
  const Computation* add = m->computations().front().get();
  EXPECT_EQ(add->parameter(0)->name(), "x");
  EXPECT_EQ(add->root()->name(), "a");
  const Instruction* root = m->entry()->root();
  EXPECT_EQ(root->name(), "a.1");
  EXPECT_EQ(root->operand(0)->name(), "x.2");
  EXPECT_EQ(root->operand(1)->name(), "x.1");
  EXPECT_TRUE(VerifyModule(*m).ok());
}

// ---------------------------------------------------------------------------
// Literals.

std::unique_ptr<Module> ParseConstant(const std::string& shape,
                                      const std::string& literal) {
  return ParseOk("ENTRY e {\n  ROOT c = " + shape + " constant(" + literal +
                 ")\n}\n");
}

TEST(Literals, ElementTypes) {
  auto bf = ParseConstant("bf16[3]", "{1, -2.5, 3.39e+38}");
  ASSERT_NE(bf, nullptr);
  const Literal* l = bf->entry()->root()->literal();
  EXPECT_EQ(l->Get<uint16_t>(0), 0x3f80);
  EXPECT_EQ(l->Get<uint16_t>(1), 0xc020);
  EXPECT_EQ(l->Get<uint16_t>(2), 0x7f7f);  // rounds to the largest bf16
  auto f16 = ParseConstant("f16[2]", "{1, 65504}");
  ASSERT_NE(f16, nullptr);
  EXPECT_EQ(f16->entry()->root()->literal()->Get<uint16_t>(0), 0x3c00);
  EXPECT_EQ(f16->entry()->root()->literal()->Get<uint16_t>(1), 0x7bff);
  auto f8 = ParseConstant("f8e4m3fn[3]", "{448, -0.5, nan}");
  ASSERT_NE(f8, nullptr);
  EXPECT_EQ(f8->entry()->root()->literal()->Get<uint8_t>(0), 0x7e);
  EXPECT_EQ(f8->entry()->root()->literal()->Get<uint8_t>(1), 0xb0);
  EXPECT_EQ(f8->entry()->root()->literal()->Get<uint8_t>(2), 0x7f);
  auto e5 = ParseConstant("f8e5m2[2]", "{-inf, 0.0000152587890625}");
  ASSERT_NE(e5, nullptr);
  EXPECT_EQ(e5->entry()->root()->literal()->Get<uint8_t>(0), 0xfc);
  EXPECT_EQ(e5->entry()->root()->literal()->Get<uint8_t>(1), 0x01);
  auto fnuz = ParseConstant("f8e4m3fnuz[2]", "{-0, nan}");
  ASSERT_NE(fnuz, nullptr);
  EXPECT_EQ(fnuz->entry()->root()->literal()->Get<uint8_t>(0), 0x00);
  EXPECT_EQ(fnuz->entry()->root()->literal()->Get<uint8_t>(1), 0x80);
  auto e8 = ParseConstant("f8e8m0fnu[2]", "{1, 0.25}");
  ASSERT_NE(e8, nullptr);
  EXPECT_EQ(e8->entry()->root()->literal()->Get<uint8_t>(0), 127);
  EXPECT_EQ(e8->entry()->root()->literal()->Get<uint8_t>(1), 125);
  auto f4 = ParseConstant("f4e2m1fn[2]", "{6, -0.5}");
  ASSERT_NE(f4, nullptr);
  EXPECT_EQ(f4->entry()->root()->literal()->Get<uint8_t>(0), 0x7);
  EXPECT_EQ(f4->entry()->root()->literal()->Get<uint8_t>(1), 0x9);
}

TEST(Literals, NanInfAndPayloads) {
  auto m =
      ParseConstant("f32[6]", "{nan, -nan, inf, -inf, nan(0x7f), -nan(0x1)}");
  ASSERT_NE(m, nullptr);
  const Literal* l = m->entry()->root()->literal();
  auto bits = [&](int i) {
    float f = l->Get<float>(i);
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
  };
  EXPECT_EQ(bits(0), 0x7fc00000u);
  EXPECT_EQ(bits(1), 0xffc00000u);
  EXPECT_EQ(bits(2), 0x7f800000u);
  EXPECT_EQ(bits(3), 0xff800000u);
  EXPECT_EQ(bits(4), 0x7f80007fu);
  EXPECT_EQ(bits(5), 0xff800001u);
  auto d = ParseConstant("f64[]", "nan(0x8000000000000)");
  ASSERT_NE(d, nullptr);
  EXPECT_TRUE(std::isnan(d->entry()->root()->literal()->Get<double>(0)));
  auto bf = ParseConstant("bf16[]", "-nan(0x3)");
  ASSERT_NE(bf, nullptr);
  EXPECT_EQ(bf->entry()->root()->literal()->Get<uint16_t>(0), 0xff83);
}

TEST(Literals, IntegersPredsComplexTuples) {
  auto p = ParseConstant("pred[4]", "{true, false, 1, 0}");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->entry()->root()->literal()->Get<uint8_t>(0), 1);
  EXPECT_EQ(p->entry()->root()->literal()->Get<uint8_t>(3), 0);
  auto u = ParseConstant("u64[2]", "{18446744073709551615, 0}");
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(u->entry()->root()->literal()->Get<uint64_t>(0),
            std::numeric_limits<uint64_t>::max());
  auto s = ParseConstant("s64[]", "-9223372036854775808");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->entry()->root()->literal()->Get<int64_t>(0),
            std::numeric_limits<int64_t>::min());
  auto s4 = ParseConstant("s4[2]", "{-8, 7}");
  ASSERT_NE(s4, nullptr);
  EXPECT_EQ(s4->entry()->root()->literal()->Get<int8_t>(0), -8);
  auto c = ParseConstant("c64[2]", "{(1, -2.5), (0, 3)}");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->entry()->root()->literal()->Get<float>(1), -2.5f);
  EXPECT_EQ(c->entry()->root()->literal()->Get<float>(3), 3.0f);
  auto t = ParseConstant("(s32[2], f32[])", "( {1, 2}, 1.5 )");
  ASSERT_NE(t, nullptr);
  const Literal* tl = t->entry()->root()->literal();
  ASSERT_EQ(tl->elements().size(), 2u);
  EXPECT_EQ(tl->elements()[0].Get<int32_t>(1), 2);
  EXPECT_EQ(tl->elements()[1].Get<float>(0), 1.5f);
  auto nested = ParseConstant("s32[2,3]", "{ { 1, 2, 3 }, { 4, 5, 6 } }");
  ASSERT_NE(nested, nullptr);
  EXPECT_EQ(nested->entry()->root()->literal()->Get<int32_t>(5), 6);
  auto empty = ParseConstant("f32[0]", "{}");
  ASSERT_NE(empty, nullptr);
  auto elided = ParseConstant("f32[1000,1000]", "{...}");
  ASSERT_NE(elided, nullptr);
  EXPECT_TRUE(elided->entry()->root()->literal()->elided());
  EXPECT_TRUE(elided->entry()->root()->literal()->data().empty());
}

TEST(Literals, Errors) {
  EXPECT_PARSE_ERROR("ENTRY e {\n  ROOT c = s8[] constant(128)\n}\n", 2, 26,
                     "out of range for s8");
  EXPECT_PARSE_ERROR("ENTRY e {\n  ROOT c = u8[] constant(-1)\n}\n", 2, 26,
                     "negative value");
  EXPECT_PARSE_ERROR("ENTRY e {\n  ROOT c = f32[3] constant({1, 2})\n}\n", 2,
                     33,
                     "expected 3 elements in dimension 0 of literal, got 2");
  EXPECT_PARSE_ERROR(
      "ENTRY e {\n  ROOT c = f32[2,2] constant({{1, 2}, {3, 4, 5}})\n}\n", 2,
      46, "too many elements in dimension 1");
  EXPECT_PARSE_ERROR("ENTRY e {\n  ROOT c = f32[] constant(1e999)\n}\n", 2, 27,
                     "out of range");
  EXPECT_PARSE_ERROR("ENTRY e {\n  ROOT c = f4e2m1fn[] constant(nan)\n}\n", 2,
                     32, "NaN is not representable");
  EXPECT_PARSE_ERROR("ENTRY e {\n  ROOT c = f32[] constant(nan(0x0))\n}\n", 2,
                     31, "invalid NaN payload");
  EXPECT_PARSE_ERROR("ENTRY e {\n  ROOT c = pred[] constant(2)\n}\n", 2, 28,
                     "expected 'true', 'false', 0 or 1");
  // More elements than the input could hold: rejected before allocating.
  EXPECT_PARSE_ERROR("ENTRY e {\n  ROOT c = f32[4000000000] constant({1})\n}\n",
                     2, 37, "more than the input holds");
}

// ---------------------------------------------------------------------------
// Errors, one per class, with exact positions.

constexpr char kSmall[] = R"(HloModule small

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  p = f32[8]{0} parameter(0), metadata={op_name="p"}
  z = f32[] constant(0)
  r = f32[] reduce(p, z), dimensions={0}, to_apply=add
  ROOT t = (f32[], f32[8]{0}) tuple(r, p)
}
)";

TEST(Errors, EmptyAndCommentOnly) {
  EXPECT_PARSE_ERROR("", 1, 1, "empty input");
  EXPECT_PARSE_ERROR("// only a comment\n", 2, 1, "empty input");
  EXPECT_PARSE_ERROR("HloModule m\n", 2, 1,
                     "expected at least one computation");
}

TEST(Errors, TruncationAnywhereNeverCrashes) {
  const std::string text = kSmall;
  ASSERT_NE(ParseOk(text), nullptr);
  // Prefixes that end inside the ENTRY computation are errors; shorter ones
  // may be valid modules (e.g. just the `add` computation).
  const size_t entry = text.find("ENTRY");
  const size_t last_brace = text.rfind('}');
  for (size_t n = 0; n < text.size(); ++n) {
    ParseOptions options;
    options.filename = "t.hlo";
    auto m = ParseHloModule(std::string_view(text.data(), n), options);
    if (n > entry && n <= last_brace) {
      EXPECT_FALSE(m.ok()) << "prefix of " << n << " bytes parsed";
    }
    if (!m.ok()) {
      EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_EQ(m.status().message().substr(0, 6), "t.hlo:");
    }
  }
  // Truncated at the very end of the ENTRY body.
  EXPECT_PARSE_ERROR(text.substr(0, last_brace), 14, 1,
                     "expected instruction name or '}', got end of input");
}

TEST(Errors, ExpectedCommaOrParen) {
  EXPECT_PARSE_ERROR(
      "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT a = f32[] add(p foo)\n}\n",
      3, 24, "expected ',' or ')' after operand, got 'foo'");
}

TEST(Errors, UnknownOpcode) {
  EXPECT_PARSE_ERROR("ENTRY e {\n  ROOT a = f32[] frobnicate()\n}\n", 2, 18,
                     "unknown opcode 'frobnicate'");
  // Sugar only for opcodes without native async forms.
  EXPECT_PARSE_ERROR(
      "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT s = ((f32[]), f32[]) "
      "copy-update(p)\n}\n",
      3, 29, "unknown opcode 'copy-update'");
}

TEST(Errors, UndefinedNames) {
  EXPECT_PARSE_ERROR(
      "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT a = f32[] add(p, nope)\n}\n",
      3, 25, "undefined operand 'nope'");
  EXPECT_PARSE_ERROR(
      "ENTRY e {\n  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
      "  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=nosuch\n}\n",
      4, 57, "undefined computation 'nosuch'");
  EXPECT_PARSE_ERROR(
      "ENTRY e {\n  p = f32[] parameter(0)\n"
      "  ROOT a = f32[] add(p, p), control-predecessors={ghost}\n}\n",
      3, 51, "undefined control predecessor 'ghost'");
}

TEST(Errors, UseBeforeDefinition) {
  EXPECT_PARSE_ERROR(
      "ENTRY e {\n  a = f32[] negate(b)\n  b = f32[] parameter(0)\n"
      "  ROOT c = f32[] add(a, b)\n}\n",
      2, 20, "operand 'b' is used before its definition");
  EXPECT_PARSE_ERROR(
      "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), "
      "to_apply=later\n}\n\nlater {\n  q = f32[] parameter(0)\n"
      "  ROOT n = f32[] negate(q)\n}\n",
      3, 36, "computation 'later' is used before its definition");
  EXPECT_PARSE_ERROR(
      "ENTRY e {\n  p = f32[] parameter(0)\n"
      "  a = f32[] negate(p), control-predecessors={b}\n"
      "  ROOT b = f32[] abs(p)\n}\n",
      3, 46, "control predecessor 'b' is used before its definition");
}

TEST(Errors, Duplicates) {
  EXPECT_PARSE_ERROR(
      "ENTRY e {\n  a = f32[] parameter(0)\n  a = f32[] negate(a)\n}\n", 3, 3,
      "duplicate instruction name 'a' in computation 'e'");
  EXPECT_PARSE_ERROR(
      "c {\n  ROOT a = f32[] parameter(0)\n}\n\nc {\n  ROOT a = f32[] "
      "parameter(0)\n}\n",
      5, 1, "duplicate computation name 'c'");
  EXPECT_PARSE_ERROR(
      "ENTRY e {\n  a = f32[] parameter(0)\n  b = f32[] parameter(0)\n"
      "  ROOT c = f32[] add(a, b)\n}\n",
      3, 23, "duplicate parameter number 0");
  EXPECT_PARSE_ERROR(
      "ENTRY e {\n  ROOT a = f32[] parameter(0)\n  ROOT b = f32[] negate(a)\n"
      "}\n",
      3, 3, "more than one ROOT");
  EXPECT_PARSE_ERROR(
      "ENTRY e {\n  a = f32[] parameter(0)\n"
      "  ROOT b = f32[] negate(a), metadata={}, metadata={}\n}\n",
      3, 42, "duplicate attribute 'metadata'");
}

TEST(Errors, MalformedShapes) {
  EXPECT_PARSE_ERROR("ENTRY e {\n  ROOT a = f33[] parameter(0)\n}\n", 2, 12,
                     "not an element type");
  EXPECT_PARSE_ERROR("ENTRY e {\n  ROOT a = f32[4,-3] parameter(0)\n}\n", 2, 18,
                     "negative dimension size -3");
  EXPECT_PARSE_ERROR(
      "ENTRY e {\n  ROOT a = f32[4294967296,4294967296] parameter(0)\n}\n", 2,
      12, "too many elements");
  EXPECT_PARSE_ERROR(
      "ENTRY e {\n  ROOT a = f32[99999999999999999999] parameter(0)\n}\n", 2,
      16, "too large");
  EXPECT_PARSE_ERROR("ENTRY e {\n  ROOT a = f32[4]{0,1} parameter(0)\n}\n", 2,
                     18, "layout has 2 dimensions but the shape has rank 1");
  EXPECT_PARSE_ERROR("ENTRY e {\n  ROOT a = f32[4,2]{0,0} parameter(0)\n}\n", 2,
                     20, "not a permutation");
  EXPECT_PARSE_ERROR("ENTRY e {\n  ROOT a = f32[4]{0:T(8,)} parameter(0)\n}\n",
                     2, 25, "expected tile dimension");
  EXPECT_PARSE_ERROR("ENTRY e {\n  ROOT a = f32[4 parameter(0)\n}\n", 2, 18,
                     "expected ',' or ']' in dimensions, got 'parameter'");
}

TEST(Errors, MalformedAttributes) {
  EXPECT_PARSE_ERROR(
      "ENTRY e {\n  p = f32[4] parameter(0)\n"
      "  ROOT b = f32[4] broadcast(p), dimensions={0,}\n}\n",
      3, 47, "expected integer, got '}'");
  EXPECT_PARSE_ERROR(
      "ENTRY e {\n  p = f32[4] parameter(0)\n"
      "  ROOT s = f32[2] slice(p), slice={[0:]}\n}\n",
      3, 39, "expected slice limit");
  EXPECT_PARSE_ERROR(
      "ENTRY e {\n  p = f32[4] parameter(0)\n"
      "  ROOT c = pred[4] compare(p, p), direction=SIDEWAYS\n}\n",
      3, 45, "expected comparison direction");
  EXPECT_PARSE_ERROR(
      "ENTRY e {\n  p = f32[4] parameter(0)\n"
      "  ROOT a = f32[8] all-gather(p), replica_groups=[2,2]<=[3], "
      "dimensions={0}\n}\n",
      3, 49, "malformed iota replica groups");
  EXPECT_PARSE_ERROR(
      "c {\n  ROOT a = f32[] parameter(0)\n}\n\nENTRY e {\n"
      "  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p), condition=c\n"
      "}\n",
      7, 30, "attribute 'condition' is not allowed on 'negate'");
  EXPECT_PARSE_ERROR(
      "ENTRY e {\n  p = f32[4] parameter(0)\n  ROOT g = f32[4] "
      "get-tuple-element(p)\n}\n",
      3, 19, "'get-tuple-element' requires attribute 'index'");
  EXPECT_PARSE_ERROR(
      "ENTRY e {\n  p = f32[4] parameter(0)\n"
      "  ROOT n = f32[4] negate(p), custom={\"a\":[1]\n",
      3, 37, "unterminated '{'");
}

TEST(Errors, DeclaredOperandShapeMismatch) {
  EXPECT_PARSE_ERROR(
      "ENTRY e {\n  p = f32[8] parameter(0)\n"
      "  ROOT n = f32[4] negate(f32[4] p)\n}\n",
      3, 26, "operand 'p' is declared with shape f32[4] but has shape f32[8]");
}

TEST(Errors, CompactGteOutOfRange) {
  EXPECT_PARSE_ERROR(
      "ENTRY e {\n  p = (f32[], f32[]) parameter(0)\n"
      "  ROOT n = f32[] negate(p#2)\n}\n",
      3, 27, "tuple index 2 out of range for 'p' with 2 elements");
  EXPECT_PARSE_ERROR(
      "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p#0)\n}\n",
      3, 27, "needs a tuple");
}

TEST(Errors, BadBytes) {
  EXPECT_PARSE_ERROR(std::string("ENTRY e {\n  ROOT p = f32[4]\0 parameter(0)"
                                 "\n}\n",
                                 44),
                     2, 18, "NUL");
  EXPECT_PARSE_ERROR("ENTRY e {\n  \xff\xfe = f32[4] parameter(0)\n}\n", 2, 3,
                     "invalid UTF-8");
  EXPECT_PARSE_ERROR(
      "ENTRY e {\n  ROOT p = f32[4] parameter(0), metadata={op_name=\"a\xc3\x28"
      "\"}\n}\n",
      2, 53, "invalid UTF-8");
  // Valid UTF-8 inside strings is fine.
  auto m = ParseOk(
      "ENTRY e {\n  ROOT p = f32[4] parameter(0), metadata={op_name=\"\xc3\xa9"
      "\"}\n}\n");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry()->root()->metadata().op_name, "\xc3\xa9");
  EXPECT_PARSE_ERROR("ENTRY e {\n  ROOT p = f32[4] parameter(0) $\n}\n", 2, 32,
                     "unexpected character '$'");
  EXPECT_PARSE_ERROR("ENTRY e {\n  /* never closed\n", 2, 3,
                     "unterminated '/*' comment");
  EXPECT_PARSE_ERROR(
      "ENTRY e {\n  ROOT p = f32[4] parameter(0), metadata={op_name=\"x}\n}\n",
      2, 51, "unterminated string");
}

// The parser reads the common spellings of a dump's lines straight from
// the characters (parser_fast_scan.cc: ScanShapeFast, ScanOperandsFast,
// ScanMetadataFast, SkipSignatureParamsFast; parser.cc:
// TakeCachedLineShape; Lexer::ScanBraceBlob 16 bytes at a time) and leaves
// everything else to the tokens. These pin down what those paths must
// agree with the tokens on.

// Every module under tests/ and in the corpus, parsed with the fast scanners
// and with the token path alone: the same printed module, or the same
// error.
TEST(FastPaths, AgreeWithTheTokenPath) {
  std::vector<fs::path> files;
  for (const fs::path& root :
       {SourceDir() / "tests", SourceDir() / ".." / "shared" / "corpus"}) {
    if (!fs::exists(root)) continue;
    for (const auto& f : fs::recursive_directory_iterator(root)) {
      if (f.is_regular_file() && f.path().extension() == ".hlo") {
        files.push_back(f.path());
      }
    }
  }
  ASSERT_GE(files.size(), 100u);
  int parsed = 0;
  for (const fs::path& path : files) {
    const std::string text = ReadText(path);
    ParseOptions options;
    options.filename = path.filename().string();
    absl::StatusOr<std::unique_ptr<Module>> fast =
        ParseHloModule(text, options);
    absl::StatusOr<std::unique_ptr<Module>> tokens =
        parser_internal::ParseHloModuleTokenPathOnly(text, options);
    ASSERT_EQ(fast.ok(), tokens.ok()) << path;
    if (!fast.ok()) {
      EXPECT_EQ(fast.status().message(), tokens.status().message()) << path;
      continue;
    }
    ++parsed;
    EXPECT_EQ(PrintModule(**fast), PrintModule(**tokens)) << path;
  }
  EXPECT_GE(parsed, 100);
}

TEST(FastPaths, BraceBlobsKeepTheirTextAcrossBlocks) {
  // Braces and escaped quotes inside strings, a UTF-8 character, nesting,
  // all spread over several 16-byte blocks.
  const std::string blob =
      "{\"a\":\"}{\\\"\",\"long_key_aaaaaaaaaaaaaaaaaaa\":{\"n\":{\"m\":"
      "\"\xc3\xa9{}\"}},\"z\":[1,2],\"q\":\"\\\\\"}";
  auto m = ParseOk("ENTRY e {\n  ROOT p = f32[] parameter(0), backend_config=" +
                   blob + ", metadata={op_name=\"x\"}\n}\n");
  ASSERT_NE(m, nullptr);
  const Instruction* p = Find(*m, "p");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->attrs().backend_config, blob);
  EXPECT_TRUE(p->attrs().backend_config.checked_blob());
  EXPECT_EQ(p->metadata().op_name, "x");
}

TEST(FastPaths, BraceBlobErrorsPointWhereTheTokensDid) {
  const std::string line = "  ROOT p = f32[] parameter(0), backend_config=";
  // A string opened in one block and never closed: at its opening quote.
  EXPECT_PARSE_ERROR("ENTRY e {\n" + line + "{\"" + std::string(30, 'a') +
                         "\":\"" + std::string(70, 'b') + "\n}\n",
                     2, 81, "unterminated string");
  // Nesting past the limit inside a block: at the first '{' too deep.
  ParseOptions shallow;
  shallow.max_nesting_depth = 3;
  const std::string msg =
      ErrorOf("ENTRY e {\n" + line + "{\"" + std::string(20, 'a') +
                  "\":{\"b\":{\"c\":{\"d\":{\"e\":1}}}}}\n}\n",
              shallow);
  EXPECT_EQ(msg.substr(0, 12), "t.hlo:2:81: ") << msg;
  EXPECT_NE(msg.find("nesting deeper than 3 levels"), std::string::npos) << msg;
}

TEST(FastPaths, OperandListsWithIndexComments) {
  auto m = ParseOk(R"(
ENTRY e {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  t = (f32[], f32[], f32[], f32[], f32[], f32[]) tuple(%a, %b, %a, %b, %a, /*index=5*/%b)
  u = (f32[], f32[], f32[], f32[], f32[], f32[]) tuple(%a, %b, %a, %b, %a, /*index=5 */%b)
  ROOT v = (f32[], f32[], f32[], f32[], f32[], f32[]) tuple(%a, %b, %a, %b, %a, /*index=*/%b)
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* a = Find(*m, "a");
  const Instruction* b = Find(*m, "b");
  for (const char* name : {"t", "u", "v"}) {
    const Instruction* t = Find(*m, name);
    ASSERT_NE(t, nullptr) << name;
    ASSERT_EQ(t->operand_count(), 6) << name;
    for (int k = 0; k < 6; ++k) {
      EXPECT_EQ(t->operand(k), k % 2 == 0 ? a : b) << name << " " << k;
    }
  }
  EXPECT_EQ(a->user_count(), 3);
}

TEST(FastPaths, ShapesSpelledAlikeAreSharedAndLayoutsStayLayouts) {
  auto m = ParseOk(R"(
%f (x: f32[2], y: f32[2]{0}) -> f32[2] {
  %x = f32[2] parameter(0)
  %y = f32[2]{0} parameter(1)
  ROOT %s = f32[2] add(%x, %x)
}

ENTRY %e (p: f32[2]{0}) -> f32[2]{0} {
  %p = f32[2]{0} parameter(0)
  %c = f32[2] call(%p), to_apply=%f
  ROOT %n = f32[2]{0} negate(%p), metadata={op_name="n" scheduling_name="n"}
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* x = Find(*m, "x");
  const Instruction* s = Find(*m, "s");
  const Instruction* y = Find(*m, "y");
  const Instruction* n = Find(*m, "n");
  ASSERT_TRUE(x && s && y && n);
  EXPECT_TRUE(x->shared_shape().SharesWith(s->shared_shape()));
  EXPECT_TRUE(y->shared_shape().SharesWith(n->shared_shape()));
  EXPECT_FALSE(x->shape().has_layout());
  EXPECT_TRUE(y->shape().has_layout());
  EXPECT_EQ(n->metadata().scheduling_name, "n");
  EXPECT_EQ(n->operand(0), Find(*m, "p"));
}

TEST(FastPaths, ErrorsTheyStepAroundAreTheTokensErrors) {
  EXPECT_PARSE_ERROR(
      "ENTRY e {\n  ROOT p = f32[] parameter(0), metadata={op_name=\"x\"}, "
      "metadata={op_name=\"y\"}\n}\n",
      2, 56, "duplicate attribute 'metadata'");
  EXPECT_PARSE_ERROR(
      "ENTRY e {\n  a = f32[] parameter(0)\n  ROOT b = f32[] add(%a, %c)\n}\n",
      3, 26, "'c'");
  EXPECT_PARSE_ERROR(
      "ENTRY e {\n  a = f32[] parameter(0)\n  ROOT a = f32[] negate(%a)\n}\n",
      3, 8, "duplicate instruction name 'a'");
  EXPECT_PARSE_ERROR(
      "ENTRY e {\n  a = f32[] parameter(0)\n  b = f32[] parameter(0)\n}\n", 3,
      23, "duplicate parameter number 0");
}

TEST(Errors, NestingDepthBombs) {
  const int n = 100000;
  EXPECT_PARSE_ERROR("ENTRY e {\n  ROOT p = " + std::string(n, '(') + "f32[]" +
                         std::string(n, ')') + " parameter(0)\n}\n",
                     2, 268, "shape nesting deeper than 256 levels");
  EXPECT_PARSE_ERROR("ENTRY e {\n  ROOT c = f32[1] constant(" +
                         std::string(n, '{') + "1" + std::string(n, '}') +
                         ")\n}\n",
                     2, 29, "expected number, got '{'");
  EXPECT_PARSE_ERROR(
      "ENTRY e {\n  ROOT p = f32[] parameter(0), backend_config=" +
          std::string(n, '{') + "\n}\n",
      2, 303, "nesting deeper than 256 levels");
  EXPECT_PARSE_ERROR("ENTRY e {\n  ROOT p = f32[] parameter(0), foo=" +
                         std::string(n, '[') + "\n}\n",
                     2, 292, "nesting deeper than 256 levels");
  // A literal whose rank exceeds the limit.
  std::string dims = "1";
  for (int i = 0; i < 300; ++i) dims += ",1";
  EXPECT_PARSE_ERROR("ENTRY e {\n  ROOT c = f32[" + dims + "] constant(1)\n}\n",
                     2, 628, "literal nesting deeper than 256 levels");
  // The limit is configurable.
  ParseOptions small;
  small.max_nesting_depth = 2;
  EXPECT_NE(
      ErrorOf("ENTRY e {\n  ROOT p = (((f32[]))) parameter(0)\n}\n", small)
          .find("shape nesting deeper than 2 levels"),
      std::string::npos);
}

TEST(Errors, HugeSingleLineIsLinear) {
  // 100 MB of spaces on one line, then a stray character.
  std::string text = "HloModule m\nENTRY main {";
  text.append(100000000, ' ');
  text.append("$\n}\n");
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_PARSE_ERROR(text, 2, 100000013, "unexpected character '$'");
  // A 20 MB string value and a 5M-element constant parse.
  std::string big =
      "ENTRY e {\n  ROOT p = f32[4] parameter(0), metadata={op_name=\"";
  big.append(20000000, 'x');
  big.append("\"}\n}\n");
  EXPECT_NE(ParseOk(big), nullptr);
  std::string lit = "ENTRY e {\n  ROOT c = s32[5000000] constant({";
  for (int i = 0; i < 5000000; ++i) lit += i ? ",1" : "1";
  lit += "})\n}\n";
  EXPECT_NE(ParseOk(lit), nullptr);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  EXPECT_LT(seconds, 30.0);  // seconds even under sanitizers
}

TEST(Errors, AsyncSugarMismatch) {
  EXPECT_PARSE_ERROR(
      "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
      "  ROOT s = f32[] add(a, b)\n}\n\nENTRY e {\n  p = f32[8] parameter(0)\n"
      "  s = ((f32[8]), f32[4]) reduce-scatter-start(p), dimensions={0}, "
      "to_apply=add\n  ROOT d = f32[8] all-to-all-done(s)\n}\n",
      10, 19, "needs one operand: the matching 'all-to-all-start'");
  EXPECT_PARSE_ERROR(
      "ENTRY e {\n  p = f32[8] parameter(0)\n"
      "  ROOT s = f32[8] all-to-all-start(p), dimensions={0}\n}\n",
      3, 12, "must have a tuple shape");
  EXPECT_PARSE_ERROR(
      "ENTRY e {\n  p = f32[8] parameter(0)\n"
      "  ROOT s = ((f32[4]), f32[8]) all-to-all-start(p), dimensions={0}\n}\n",
      3, 31, "operand 0 of 'all-to-all-start' has shape f32[8]");
}

TEST(Errors, MissingParameterAndSignatureMismatch) {
  EXPECT_PARSE_ERROR(
      "ENTRY e {\n  a = f32[] parameter(1)\n  ROOT n = f32[] negate(a)\n}\n", 4,
      1, "has parameter(1) but no parameter(0)");
  EXPECT_PARSE_ERROR(
      "ENTRY %e (a: f32[]) -> s32[] {\n  a = f32[] parameter(0)\n"
      "  ROOT n = f32[] negate(a)\n}\n",
      1, 24, "does not match the root shape f32[]");
}

// ---------------------------------------------------------------------------
// Shapes.

TEST(Shapes, ParseShapeApi) {
  absl::StatusOr<Shape> s = ParseShape("bf16[2,4]{1,0}");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->element_type(), PrimitiveType::kBF16);
  EXPECT_EQ(s->ToString(), "bf16[2,4]{1,0}");
  s = ParseShape("(f32[], (s32[2]{0}, token[]))");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->tuple_size(), 2);
  EXPECT_TRUE(s->tuple_shapes(1).tuple_shapes(1).IsToken());
  s = ParseShape("s32[<=128,?,4]");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->dim_kind(0), DimKind::kBounded);
  EXPECT_EQ(s->dimensions(0), 128);
  EXPECT_EQ(s->dim_kind(1), DimKind::kUnbounded);
  EXPECT_EQ(s->dim_kind(2), DimKind::kStatic);
  s = ParseShape("bf16[8,128]{1,0:T(8,128)(2,1)L(2)S(1)E(16)#(u16)}");
  ASSERT_TRUE(s.ok()) << s.status().message();
  const Layout& l = *s->layout();
  ASSERT_EQ(l.tiles.size(), 2u);
  EXPECT_EQ(l.tiles[0].dims, (absl::InlinedVector<int64_t, 2>{8, 128}));
  EXPECT_EQ(l.tiles[1].dims, (absl::InlinedVector<int64_t, 2>{2, 1}));
  EXPECT_EQ(l.memory_space, 1);
  EXPECT_EQ(l.element_size_bits, 16);
  EXPECT_EQ(l.other_tail, "L(2)#(u16)");
  s = ParseShape("f32[4] {0}");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_TRUE(s->has_layout());
  s = ParseShape("u32[]{:S(2)}");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->layout()->memory_space, 2);
  EXPECT_FALSE(ParseShape("f32[4] junk").ok());
  EXPECT_FALSE(ParseShape("tuple[]").ok());
}

// ---------------------------------------------------------------------------
// Input files.

std::string TempPath(const std::string& name) {
  return (fs::path(::testing::TempDir()) / name).string();
}

void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary);
  out << data;
}

void WriteGzip(const std::string& path, const std::string& data) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, data.data(), static_cast<unsigned>(data.size())),
            static_cast<int>(data.size()));
  gzclose(f);
}

TEST(Files, PlainGzipAndErrors) {
  const std::string plain = TempPath("small.hlo");
  WriteFile(plain, kSmall);
  absl::StatusOr<std::unique_ptr<Module>> m = ParseHloFile(plain);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)->name(), "small");

  const std::string gz = TempPath("small.hlo.gz");
  WriteGzip(gz, kSmall);
  absl::StatusOr<std::string> text = ReadInputFile(gz);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(*text, kSmall);
  // Gzip detected by magic without the suffix.
  const std::string gz2 = TempPath("small_gz_no_suffix.hlo");
  WriteGzip(gz2, kSmall);
  m = ParseHloFile(gz2);
  ASSERT_TRUE(m.ok()) << m.status().message();

  // Diagnostics name the file.
  const std::string bad = TempPath("bad.hlo");
  WriteFile(bad, "ENTRY e {\n  ROOT a = f32[] frob()\n}\n");
  m = ParseHloFile(bad);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(), bad + ":2:18: unknown opcode 'frob'");

  // Truncated and corrupt gzip data, missing files.
  std::string compressed = ReadText(gz);
  WriteFile(TempPath("trunc.hlo.gz"),
            compressed.substr(0, compressed.size() / 2));
  text = ReadInputFile(TempPath("trunc.hlo.gz"));
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.status().message().find("truncated gzip data"),
            std::string::npos)
      << text.status().message();
  std::string corrupt = compressed;
  for (size_t i = 12; i < corrupt.size() - 8; ++i) corrupt[i] ^= 0x5a;
  WriteFile(TempPath("corrupt.hlo.gz"), corrupt);
  text = ReadInputFile(TempPath("corrupt.hlo.gz"));
  ASSERT_FALSE(text.ok());
  WriteFile(TempPath("plain.hlo.gz"), "not gzip");
  text = ReadInputFile(TempPath("plain.hlo.gz"));
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.status().message().find("not gzip data"), std::string::npos);
  text = ReadInputFile(TempPath("does_not_exist.hlo"));
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(text.status().message().find("does_not_exist.hlo"),
            std::string::npos);
}

// Every instruction records the line and column of its name; instructions
// synthesized for a line (compact GTEs, async sugar) get that line's; clones
// keep their original's.
TEST(SourcePositions, RecordedByTheParserKeptByClones) {
  constexpr char kText[] =
      "HloModule m\n"
      "\n"
      "ENTRY main {\n"
      "  %p = (f32[2], f32[2]) parameter(0)\n"
      "    ROOT  %n = f32[2] negate(%p#1)\n"
      "}\n";
  absl::StatusOr<std::unique_ptr<Module>> m = ParseHloModule(kText);
  ASSERT_TRUE(m.ok()) << m.status();
  const Computation* entry = (*m)->entry();
  std::map<std::string, std::pair<uint32_t, uint32_t>> at;
  for (const auto& i : entry->instructions()) {
    at[i->name()] = {i->source_position().line, i->source_position().column};
  }
  EXPECT_EQ(at["p"], std::make_pair(4u, 3u));
  EXPECT_EQ(at["n"], std::make_pair(5u, 11u));
  EXPECT_EQ(at["p_1"], std::make_pair(5u, 11u));  // synthesized for line 5
  std::unique_ptr<Instruction> clone =
      CloneInstruction(*entry->root(), "n.clone", entry->root()->operands());
  EXPECT_EQ(clone->source_position().line, 5u);
  EXPECT_EQ(clone->source_position().column, 11u);
  Instruction fresh(Opcode::kAdd, "fresh", Shape());
  EXPECT_FALSE(fresh.source_position().known());
}

// Every opcode XLA's parser infers a shape for (ParserInfersShape), written
// without a shape: the inferred shape, one row per opcode. Opcodes XLA
// infers none for are refused.
TEST(ParserTest, InfersTheShapeOfEveryOpcodeXlaInfers) {
  const std::string head = R"(HloModule m
add (a: f32[], b: f32[]) -> f32[] {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
lt (c: f32[], d: f32[]) -> pred[] {
  c = f32[] parameter(0)
  d = f32[] parameter(1)
  ROOT l = pred[] compare(c, d), direction=LT
}
cond (s: (s32[], f32[2,3])) -> pred[] {
  s = (s32[], f32[2,3]) parameter(0)
  ROOT f = pred[] constant(false)
}
body (s: (s32[], f32[2,3])) -> (s32[], f32[2,3]) {
  ROOT s = (s32[], f32[2,3]) parameter(0)
}
twice (q: f32[2,3]) -> f32[2,3] {
  q = f32[2,3] parameter(0)
  ROOT m = f32[2,3] add(q, q)
}
ENTRY main {
  x = f32[2,3] parameter(0)
  y = f32[2,3] parameter(1)
  i = s32[2,3] parameter(2)
  p = pred[2,3] parameter(3)
  z = f32[] parameter(4)
  t = (s32[], f32[2,3]) parameter(5)
  c = c64[2,3] parameter(6)
  tk = token[] parameter(7)
  ROOT r = )";
  // Opcodes other than the elementwise ones: the line and the shape.
  const std::map<Opcode, std::pair<std::string, std::string>> rows = {
      {Opcode::kAddDependency, {"add-dependency(x, tk)", "f32[2,3]"}},
      {Opcode::kAfterAll, {"after-all(tk, tk)", "token[]"}},
      {Opcode::kBroadcast, {"broadcast(z), dimensions={}", "f32[]"}},
      {Opcode::kCall, {"call(x), to_apply=twice", "f32[2,3]"}},
      {Opcode::kClamp, {"clamp(z, x, z)", "f32[2,3]"}},
      {Opcode::kConcatenate, {"concatenate(x, y), dimensions={0}", "f32[4,3]"}},
      {Opcode::kConditional,
       {"conditional(p2, x, y), true_computation=twice, "
        "false_computation=twice",
        "f32[2,3]"}},
      {Opcode::kDomain,
       {"domain(x), domain={kind=\"sharding\", entry={maximal device=0}, "
        "exit={maximal device=1}}",
        "f32[2,3]"}},
      {Opcode::kDot,
       {"dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={1}",
        "f32[2,2]"}},
      {Opcode::kGetDimensionSize,
       {"get-dimension-size(x), dimensions={1}", "s32[]"}},
      {Opcode::kGetTupleElement, {"get-tuple-element(t), index=1", "f32[2,3]"}},
      {Opcode::kMap, {"map(x, y), dimensions={0,1}, to_apply=add", "f32[2,3]"}},
      {Opcode::kOptBarrier, {"opt-barrier(t)", "(s32[], f32[2,3])"}},
      {Opcode::kPad, {"pad(x, z), padding=1_1x0_2", "f32[4,5]"}},
      {Opcode::kPartitionId, {"partition-id()", "u32[]"}},
      {Opcode::kReduce,
       {"reduce(x, z), dimensions={0}, to_apply=add", "f32[3]"}},
      {Opcode::kReplicaId, {"replica-id()", "u32[]"}},
      {Opcode::kReverse, {"reverse(x), dimensions={0}", "f32[2,3]"}},
      {Opcode::kSelect, {"select(p, x, y)", "f32[2,3]"}},
      {Opcode::kSetDimensionSize,
       {"set-dimension-size(x, k), dimensions={1}", "f32[2,3]"}},
      {Opcode::kSort,
       {"sort(x, y), dimensions={1}, to_apply=lt4", "(f32[2,3], f32[2,3])"}},
      {Opcode::kTopk, {"topk(x), k=2, largest=true", "(f32[2,2], s32[2,2])"}},
      {Opcode::kTranspose, {"transpose(x), dimensions={1,0}", "f32[3,2]"}},
      {Opcode::kTuple, {"tuple(x, i)", "(f32[2,3], s32[2,3])"}},
      {Opcode::kWhile,
       {"while(t), condition=cond, body=body", "(s32[], f32[2,3])"}},
      {Opcode::kConvolution,
       {"convolution(v, kw), window={size=3 pad=1_1}, "
        "dim_labels=b0f_0io->b0f",
        "f32[1,8,4]"}},
      {Opcode::kFft, {"fft(x), fft_type=RFFT, fft_length={3}", "c64[2,2]"}},
      {Opcode::kGather,
       {"gather(x, ix), offset_dims={1}, collapsed_slice_dims={0}, "
        "start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}",
        "f32[4,3]"}},
      {Opcode::kScatter,
       {"scatter(x, ix, u), update_window_dims={1}, "
        "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
        "index_vector_dim=1, to_apply=add",
        "f32[2,3]"}},
      {Opcode::kReduceWindow,
       {"reduce-window(x, z), window={size=1x2 stride=1x1}, to_apply=add",
        "f32[2,2]"}},
      {Opcode::kSelectAndScatter,
       {"select-and-scatter(x, src, z), window={size=1x2}, select=lt, "
        "scatter=add",
        "f32[2,3]"}},
      {Opcode::kBatchNormTraining,
       {"batch-norm-training(x, s3, s3), epsilon=0.001, feature_index=1",
        "(f32[2,3], f32[3], f32[3])"}},
      {Opcode::kBatchNormInference,
       {"batch-norm-inference(x, s3, s3, s3, s3), epsilon=0.001, "
        "feature_index=1",
        "f32[2,3]"}},
      {Opcode::kBatchNormGrad,
       {"batch-norm-grad(x, s3, s3, s3, y), epsilon=0.001, feature_index=1",
        "(f32[2,3], f32[3], f32[3])"}},
      {Opcode::kCholesky, {"cholesky(sq), lower=true", "f32[3,3]"}},
      {Opcode::kTriangularSolve,
       {"triangular-solve(sq, x), left_side=false, lower=true, "
        "transpose_a=NO_TRANSPOSE",
        "f32[2,3]"}},
      {Opcode::kRaggedDot,
       {"ragged-dot(x, rk, gs), lhs_contracting_dims={1}, "
        "rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}",
        "f32[2,5]"}},
  };
  // Extra entry lines some rows need.
  const std::string extra =
      "  p2 = pred[] parameter(8)\n  k = s32[] parameter(9)\n"
      "  v = f32[1,8,2] parameter(10)\n  kw = f32[3,2,4] parameter(11)\n"
      "  ix = s32[4,1] parameter(12)\n  u = f32[4,3] parameter(13)\n"
      "  src = f32[2,2] parameter(14)\n  s3 = f32[3] parameter(15)\n"
      "  sq = f32[3,3] parameter(16)\n  rk = f32[4,3,5] parameter(17)\n"
      "  gs = s32[4] parameter(18)\n";
  const std::string lt4 =
      R"(lt4 (e: f32[], f: f32[], g: f32[], h: f32[]) -> pred[] {
  e = f32[] parameter(0)
  f = f32[] parameter(1)
  g = f32[] parameter(2)
  h = f32[] parameter(3)
  ROOT l = pred[] compare(e, f), direction=LT
}
)";
  auto module_text = [&](const std::string& line) {
    std::string text = head;
    // Room for the extra parameters before ROOT, and lt4 before ENTRY.
    const size_t root = text.rfind("  ROOT r = ");
    text.insert(root, extra);
    text.insert(text.find("ENTRY main"), lt4);
    return text + line + "\n}\n";
  };
  auto expect_refused = [&](const std::string& line, const char* why) {
    ParseOptions options;
    options.filename = "t.hlo";
    absl::StatusOr<std::unique_ptr<Module>> m =
        ParseHloModule(module_text(line), options);
    ASSERT_FALSE(m.ok()) << line;
    EXPECT_NE(std::string(m.status().message()).find(why), std::string::npos)
        << line << ": " << m.status().message();
  };
  int checked = 0;
  for (int k = 0; k < kNumOpcodes; ++k) {
    const Opcode op = static_cast<Opcode>(k);
    const std::string name(OpcodeName(op));
    if (!ParserInfersShape(op)) {
      // Written without a shape, refused at the opcode.
      expect_refused(name + "(x)", "needs a result shape");
      continue;
    }
    std::string line;
    std::string want;
    if (op == Opcode::kCompare) {
      line = "compare(x, y), direction=LT";
      want = "pred[2,3]";
    } else if (IsElementwiseUnary(op) || IsElementwiseBinary(op)) {
      const bool integral = op == Opcode::kNot || op == Opcode::kPopcnt ||
                            op == Opcode::kCountLeadingZeros ||
                            op == Opcode::kAnd || op == Opcode::kOr ||
                            op == Opcode::kXor || op == Opcode::kShiftLeft ||
                            op == Opcode::kShiftRightArithmetic ||
                            op == Opcode::kShiftRightLogical;
      const bool complex_in = op == Opcode::kReal || op == Opcode::kImag;
      const std::string a = integral ? "i" : complex_in ? "c" : "x";
      const std::string b = integral ? "i" : "y";
      line = name + "(" + a + (IsElementwiseBinary(op) ? ", " + b : "") + ")";
      want = integral                  ? "s32[2,3]"
             : op == Opcode::kIsFinite ? "pred[2,3]"
             : op == Opcode::kComplex  ? "c64[2,3]"
                                       : "f32[2,3]";
    } else if (auto it = rows.find(op); it != rows.end()) {
      line = it->second.first;
      want = it->second.second;
    } else {
      ADD_FAILURE() << name << " has no row";
      continue;
    }
    std::unique_ptr<Module> m = ParseOk(module_text(line));
    ASSERT_NE(m, nullptr) << name << ": " << line;
    EXPECT_EQ(ShapeString(m->entry()->root()->shape()), want) << name;
    EXPECT_TRUE(VerifyModule(*m).ok()) << name << ": " << VerifyModule(*m);
    ++checked;
  }
  EXPECT_GT(checked, 72);
}

}  // namespace
}  // namespace hloverlap
