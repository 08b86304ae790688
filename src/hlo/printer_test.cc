// Unit tests of the HLO printer: exact text for module headers, signatures,
// operand index comments, every attribute kind, literals of every type,
// shapes and layouts, escaping and instruction ordering. Modules are built
// programmatically so these tests do not depend on the parser.
#include "hlo/printer.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/computation.h"
#include "hlo/literal.h"
#include "hlo/module.h"
#include "hlo/parser.h"
#include "hlo/shape.h"

namespace hloverlap {
namespace {

Shape Arr(PrimitiveType t, absl::InlinedVector<int64_t, 6> dims,
          bool layout = true) {
  Shape s(t, std::move(dims));
  if (layout) s.SetDefaultLayout();
  return s;
}
Shape F32(absl::InlinedVector<int64_t, 6> dims) {
  return Arr(PrimitiveType::kF32, std::move(dims));
}
Shape S32() { return Shape::Scalar(PrimitiveType::kS32); }

// Builds computations with less ceremony.
class Builder {
 public:
  explicit Builder(Computation* c) : c_(c) {}
  Instruction* Param(int64_t n, std::string name, Shape shape) {
    auto i = std::make_unique<Instruction>(Opcode::kParameter, std::move(name),
                                           std::move(shape));
    i->mutable_attrs().parameter_number = n;
    return c_->AddInstruction(std::move(i));
  }
  Instruction* Op(Opcode op, std::string name, Shape shape,
                  std::vector<Instruction*> operands = {}) {
    return c_->AddInstruction(op, std::move(name), std::move(shape), operands);
  }
  Instruction* Const(std::string name, Literal literal) {
    Shape shape = literal.shape();
    auto i = std::make_unique<Instruction>(Opcode::kConstant, std::move(name),
                                           shape);
    i->mutable_attrs().literal = std::make_unique<Literal>(std::move(literal));
    return c_->AddInstruction(std::move(i));
  }

 private:
  Computation* c_;
};

std::string Line(const Instruction& i) {
  std::string out;
  AppendInstruction(i, out);
  return out;
}

// A module with an entry computation `main` for single-instruction tests.
struct TestModule {
  std::unique_ptr<Module> module = std::make_unique<Module>("m");
  Computation* entry = nullptr;
  Computation* Add(std::string name) {
    return module->AddComputation(std::make_unique<Computation>(name));
  }
  Computation* Entry() {
    if (entry == nullptr) {
      entry = Add("main");
      module->set_entry(entry);
    }
    return entry;
  }
};

// ---------------------------------------------------------------------------
// Module structure.

TEST(PrinterTest, PrintsWholeModule) {
  TestModule t;
  Computation* add = t.Add("add.1");
  {
    Builder b(add);
    Instruction* x = b.Param(0, "x.1", Arr(PrimitiveType::kF32, {}));
    Instruction* y = b.Param(1, "y.1", Arr(PrimitiveType::kF32, {}));
    add->set_root(
        b.Op(Opcode::kAdd, "add.2", Arr(PrimitiveType::kF32, {}), {x, y}));
  }
  Computation* main = t.Entry();
  Builder b(main);
  Instruction* a = b.Param(0, "a.1", F32({8, 128}));
  Instruction* s = b.Param(1, "b.2", S32());
  Instruction* ar = b.Op(Opcode::kAllReduce, "ar.3", F32({8, 128}), {a});
  ar->mutable_called_computations().push_back(add);
  ar->mutable_attrs().channel_id = 3;
  ar->mutable_attrs().replica_groups->format = ReplicaGroups::Format::kIota;
  ar->mutable_attrs().replica_groups->iota_num_groups = 1;
  ar->mutable_attrs().replica_groups->iota_group_size = 2;
  ar->mutable_attrs().replica_groups->iota_reshape_dims = {2};
  ar->mutable_attrs().use_global_device_ids = true;
  Instruction* tuple = b.Op(Opcode::kTuple, "t.4",
                            Shape::Tuple({S32(), F32({8, 128})}), {s, ar});
  main->set_root(tuple);
  t.module->set_entry_computation_layout(
      "{(f32[8,128]{1,0}, s32[])->(s32[], f32[8,128]{1,0})}");
  t.module->set_num_partitions(2);

  EXPECT_EQ(PrintModule(*t.module),
            "HloModule m, entry_computation_layout={(f32[8,128]{1,0}, "
            "s32[])->(s32[], f32[8,128]{1,0})}, num_partitions=2\n"
            "\n"
            "%add.1 (x.1: f32[], y.1: f32[]) -> f32[] {\n"
            "  %x.1 = f32[] parameter(0)\n"
            "  %y.1 = f32[] parameter(1)\n"
            "  ROOT %add.2 = f32[] add(%x.1, %y.1)\n"
            "}\n"
            "\n"
            "ENTRY %main (a.1: f32[8,128], b.2: s32[]) -> (s32[], "
            "f32[8,128]) {\n"
            "  %a.1 = f32[8,128]{1,0} parameter(0)\n"
            "  %b.2 = s32[] parameter(1)\n"
            "  %ar.3 = f32[8,128]{1,0} all-reduce(%a.1), channel_id=3, "
            "replica_groups=[1,2]<=[2], use_global_device_ids=true, "
            "to_apply=%add.1\n"
            "  ROOT %t.4 = (s32[], f32[8,128]{1,0}) tuple(%b.2, %ar.3)\n"
            "}\n"
            "\n");
}

// PrintModuleTo streams through a 256 KiB buffer: the pieces must add up to
// PrintModule's text, also across a write larger than the buffer.
TEST(PrinterTest, StreamedTextEqualsPrintedText) {
  TestModule t;
  Builder b(t.Entry());
  Instruction* prev = b.Param(0, "p", F32({8, 128}));
  for (int k = 0; k < 4000; ++k) {
    Instruction* i = b.Op(Opcode::kNegate, "negate." + std::to_string(k),
                          F32({8, 128}), {prev});
    i->mutable_attrs().metadata.op_name = "jit(f)/some/long/op/name/neg";
    if (k == 2000) {
      // One attribute larger than the buffer.
      i->mutable_attrs().backend_config = std::string(600 << 10, 'x');
      i->mutable_attrs().backend_config_is_raw = false;
    }
    prev = i;
  }
  t.Entry()->set_root(prev);
  const std::string whole = PrintModule(*t.module);
  ASSERT_GT(whole.size(), size_t{900} << 10);
  std::string streamed;
  int pieces = 0;
  EXPECT_TRUE(PrintModuleTo(*t.module, [&](std::string_view piece) {
    ++pieces;
    streamed.append(piece);
    return true;
  }));
  EXPECT_GE(pieces, 3);
  EXPECT_EQ(streamed, whole);

  // A failing sink is not called again, and the result says so.
  int calls = 0;
  EXPECT_FALSE(PrintModuleTo(*t.module, [&](std::string_view) {
    ++calls;
    return false;
  }));
  EXPECT_EQ(calls, 1);
}

TEST(PrinterTest, HeaderAttributesInXlaOrder) {
  TestModule t;
  Builder(t.Entry()).Param(0, "p", S32());
  Module& m = *t.module;
  m.set_is_scheduled(true);
  m.set_replica_count(4);
  m.set_num_partitions(2);
  m.set_entry_computation_layout("{(s32[])->s32[]}");
  // Raw attributes stored out of XLA's order still print in XLA's order.
  m.raw_header_attributes().push_back(
      {"allow_spmd_sharding_propagation_to_output", "{true}"});
  m.raw_header_attributes().push_back(
      {"input_output_alias", "{ {}: (0, {}, may-alias) }"});
  m.raw_header_attributes().push_back({"buffer_donor", "{ (0, {}) }"});
  m.raw_header_attributes().push_back(
      {"allow_spmd_sharding_propagation_to_parameters", "{false}"});
  SetFrontendAttribute(m.frontend_attributes(), "z", "1");
  SetFrontendAttribute(m.frontend_attributes(), "a.b", "{x = 1 : i32}",
                       /*is_raw=*/true);
  std::string text = PrintModule(m);
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "HloModule m, is_scheduled=true, input_output_alias={ {}: (0, {}, "
            "may-alias) }, buffer_donor={ (0, {}) }, "
            "entry_computation_layout={(s32[])->s32[]}, "
            "allow_spmd_sharding_propagation_to_parameters={false}, "
            "allow_spmd_sharding_propagation_to_output={true}, "
            "replica_count=4, num_partitions=2, "
            "frontend_attributes={a.b={x = 1 : i32},z=\"1\"}");
}

TEST(PrinterTest, StackFrameTables) {
  TestModule t;
  t.Entry()->set_root(Builder(t.Entry()).Param(0, "p", S32()));
  StackFrameIndex& sf = t.module->stack_frames();
  sf.file_names = {"a.py"};
  sf.function_names = {"f", "g"};
  sf.file_locations.push_back({1, 2, 10, 10, 4, 9});
  sf.frames.push_back({1, 0});
  sf.frames.push_back({1, 1});
  EXPECT_EQ(PrintModule(*t.module),
            "HloModule m\n"
            "\n"
            "FileNames\n"
            "1 \"a.py\"\n"
            "\n"
            "FunctionNames\n"
            "1 \"f\"\n"
            "2 \"g\"\n"
            "\n"
            "FileLocations\n"
            "1 {file_name_id=1 function_name_id=2 line=10 end_line=10 "
            "column=4 end_column=9}\n"
            "\n"
            "StackFrames\n"
            "1 {file_location_id=1 parent_frame_id=1}\n"
            "2 {file_location_id=1 parent_frame_id=2}\n"
            "\n"
            "\n"
            "ENTRY %main (p: s32[]) -> s32[] {\n"
            "  ROOT %p = s32[] parameter(0)\n"
            "}\n"
            "\n");
  PrintOptions no_metadata;
  no_metadata.print_metadata = false;
  EXPECT_EQ(PrintModule(*t.module, no_metadata).find("FileNames"),
            std::string::npos);
}

TEST(PrinterTest, ExecutionThreadAndTupleSignature) {
  TestModule t;
  Computation* c = t.Add("host.1");
  c->set_execution_thread("host");
  Builder b(c);
  std::vector<Shape> elems(6, S32());
  Instruction* p = b.Param(0, "p.0", Shape::Tuple(elems));
  c->set_root(p);
  std::string out;
  AppendComputation(*c, out);
  EXPECT_EQ(out,
            "%host.1 (p.0: (s32[], s32[], s32[], s32[], s32[], "
            "/*index=5*/s32[])) -> (s32[], s32[], s32[], s32[], s32[], "
            "/*index=5*/s32[]) {\n"
            "  ROOT %p.0 = (s32[], s32[], s32[], s32[], s32[], "
            "/*index=5*/s32[]) parameter(0)\n"
            "}, execution_thread=\"host\"");
}

TEST(PrinterTest, OperandIndexComments) {
  TestModule t;
  Builder b(t.Entry());
  std::vector<Instruction*> ops;
  for (int i = 0; i < 11; ++i) {
    ops.push_back(
        b.Param(i, std::string("p").append(std::to_string(i)), S32()));
  }
  std::vector<Shape> shapes(11, S32());
  Instruction* tuple = b.Op(Opcode::kTuple, "t", Shape::Tuple(shapes), ops);
  EXPECT_EQ(Line(*tuple),
            "%t = (s32[], s32[], s32[], s32[], s32[], /*index=5*/s32[], "
            "s32[], s32[], s32[], s32[], /*index=10*/s32[]) tuple(%p0, %p1, "
            "%p2, %p3, %p4, /*index=5*/%p5, %p6, %p7, %p8, %p9, "
            "/*index=10*/%p10)");
}

TEST(PrinterTest, UnsortedStoredOrderIsTopologicallySorted) {
  TestModule t;
  Computation* c = t.Entry();
  Builder b(c);
  Instruction* p = b.Param(0, "p", S32());
  Instruction* neg = b.Op(Opcode::kNegate, "neg", S32(), {p});
  Instruction* root = b.Op(Opcode::kAdd, "add", S32(), {neg, neg});
  c->set_root(root);
  // A pass appends a new producer at the end and rewires `neg` to use it.
  Instruction* abs = b.Op(Opcode::kAbs, "abs", S32(), {p});
  neg->ReplaceOperandWith(0, abs);
  // And a control edge from the root's producer to a later copy.
  Instruction* copy = b.Op(Opcode::kCopy, "copy", S32(), {p});
  neg->AddControlPredecessor(copy);
  std::vector<const Instruction*> order = PrintOrder(*c);
  std::vector<std::string> names;
  for (const Instruction* i : order) names.push_back(i->name());
  EXPECT_EQ(names,
            (std::vector<std::string>{"p", "abs", "copy", "neg", "add"}));
  std::string out;
  AppendComputation(*c, out);
  EXPECT_EQ(out,
            "ENTRY %main (p: s32[]) -> s32[] {\n"
            "  %p = s32[] parameter(0)\n"
            "  %abs = s32[] abs(%p)\n"
            "  %copy = s32[] copy(%p)\n"
            "  %neg = s32[] negate(%abs), control-predecessors={%copy}\n"
            "  ROOT %add = s32[] add(%neg, %neg)\n"
            "}");
}

TEST(PrinterTest, ValidStoredOrderIsKeptEvenAfterRoot) {
  TestModule t;
  Computation* c = t.Entry();
  Builder b(c);
  Instruction* p = b.Param(0, "p", S32());
  Instruction* root = b.Op(Opcode::kNegate, "neg", S32(), {p});
  c->set_root(root);
  b.Op(Opcode::kAfterAll, "token", Shape::Token());
  std::string out;
  AppendComputation(*c, out);
  EXPECT_EQ(out,
            "ENTRY %main (p: s32[]) -> s32[] {\n"
            "  %p = s32[] parameter(0)\n"
            "  ROOT %neg = s32[] negate(%p)\n"
            "  %token = token[] after-all()\n"
            "}");
}

// ---------------------------------------------------------------------------
// Attributes.

class AttributeTest : public ::testing::Test {
 protected:
  Computation* c() { return t_.Entry(); }
  Builder b() { return Builder(c()); }
  Instruction* P(Shape s = S32()) {
    const int n = next_param_++;
    return b().Param(n, std::string("p").append(std::to_string(n)),
                     std::move(s));
  }
  Computation* Callee(std::string name) {
    Computation* callee = t_.Add(name);
    Builder cb(callee);
    callee->set_root(cb.Param(0, name + ".p", S32()));
    return callee;
  }
  TestModule t_;
  int next_param_ = 0;
};

TEST_F(AttributeTest, DimensionsOnlyWhenPresent) {
  Instruction* p = P();
  Instruction* bc = b().Op(Opcode::kBroadcast, "bc", F32({2, 3}), {p});
  EXPECT_EQ(Line(*bc), "%bc = f32[2,3]{1,0} broadcast(%p0)");
  bc->mutable_attrs().has_dimensions = true;
  EXPECT_EQ(Line(*bc), "%bc = f32[2,3]{1,0} broadcast(%p0), dimensions={}");
  bc->mutable_attrs().dimensions = {1, 0};
  EXPECT_EQ(Line(*bc), "%bc = f32[2,3]{1,0} broadcast(%p0), dimensions={1,0}");
}

TEST_F(AttributeTest, OpcodeSpecificTypedAttributes) {
  Instruction* p = P(Shape::Tuple({S32(), F32({4})}));
  Instruction* gte = b().Op(Opcode::kGetTupleElement, "gte", F32({4}), {p});
  gte->mutable_attrs().tuple_index = 1;
  EXPECT_EQ(Line(*gte), "%gte = f32[4]{0} get-tuple-element(%p0), index=1");

  Instruction* iota = b().Op(Opcode::kIota, "iota", F32({4}));
  EXPECT_EQ(Line(*iota), "%iota = f32[4]{0} iota(), iota_dimension=0");

  Instruction* slice = b().Op(Opcode::kSlice, "slice", F32({2}), {gte});
  slice->mutable_attrs().slice = {{0, 4, 2}};
  EXPECT_EQ(Line(*slice), "%slice = f32[2]{0} slice(%gte), slice={[0:4:2]}");
  slice->mutable_attrs().slice = {{1, 3, 1}, {0, 8, 1}};
  EXPECT_EQ(Line(*slice),
            "%slice = f32[2]{0} slice(%gte), slice={[1:3], [0:8]}");

  Instruction* ds = b().Op(Opcode::kDynamicSlice, "ds", F32({1}), {gte, P()});
  ds->mutable_attrs().dynamic_slice_sizes = {1};
  EXPECT_EQ(Line(*ds),
            "%ds = f32[1]{0} dynamic-slice(%gte, %p1), "
            "dynamic_slice_sizes={1}");

  Instruction* pad = b().Op(Opcode::kPad, "pad", F32({8}), {gte, P()});
  pad->mutable_attrs().padding = {{1, 2, 0}, {-1, 0, 0}};
  EXPECT_EQ(Line(*pad), "%pad = f32[8]{0} pad(%gte, %p2), padding=1_2x-1_0");
  pad->mutable_attrs().padding[1].interior = 1;
  EXPECT_EQ(Line(*pad),
            "%pad = f32[8]{0} pad(%gte, %p2), padding=1_2_0x-1_0_1");

  Instruction* dot = b().Op(Opcode::kDot, "dot", F32({4}), {gte, gte});
  EXPECT_EQ(Line(*dot),
            "%dot = f32[4]{0} dot(%gte, %gte), lhs_contracting_dims={}, "
            "rhs_contracting_dims={}");
  dot->mutable_attrs().dot->lhs_batch_dims = {0};
  dot->mutable_attrs().dot->lhs_contracting_dims = {2};
  dot->mutable_attrs().dot->rhs_batch_dims = {0};
  dot->mutable_attrs().dot->rhs_contracting_dims = {1};
  dot->mutable_attrs().raw.push_back(
      {"operand_precision", "{highest,default}"});
  EXPECT_EQ(Line(*dot),
            "%dot = f32[4]{0} dot(%gte, %gte), lhs_batch_dims={0}, "
            "lhs_contracting_dims={2}, rhs_batch_dims={0}, "
            "rhs_contracting_dims={1}, operand_precision={highest,default}");

  Instruction* cmp = b().Op(Opcode::kCompare, "cmp",
                            Arr(PrimitiveType::kPred, {4}), {gte, gte});
  cmp->mutable_attrs().comparison_direction = ComparisonDirection::kLt;
  EXPECT_EQ(Line(*cmp), "%cmp = pred[4]{0} compare(%gte, %gte), direction=LT");
  cmp->mutable_attrs().comparison_type = "TOTALORDER";
  EXPECT_EQ(Line(*cmp),
            "%cmp = pred[4]{0} compare(%gte, %gte), direction=LT, "
            "type=TOTALORDER");
}

TEST_F(AttributeTest, CollectiveAttributesInXlaOrder) {
  Instruction* p = P(F32({8}));
  Computation* add = Callee("add");
  Instruction* ag = b().Op(Opcode::kAllGather, "ag", F32({16}), {p});
  auto& a = ag->mutable_attrs();
  a.channel_id = 1;
  a.replica_groups->format = ReplicaGroups::Format::kExplicit;
  a.replica_groups->explicit_groups = {{0, 1}, {2, 3}};
  a.constrain_layout = true;
  a.has_dimensions = true;
  a.dimensions = {0};
  a.use_global_device_ids = true;
  EXPECT_EQ(Line(*ag),
            "%ag = f32[16]{0} all-gather(%p0), channel_id=1, "
            "replica_groups={{0,1},{2,3}}, constrain_layout=true, "
            "dimensions={0}, use_global_device_ids=true");

  Instruction* rs = b().Op(Opcode::kReduceScatter, "rs", F32({4}), {p});
  rs->mutable_called_computations().push_back(add);
  auto& r = rs->mutable_attrs();
  r.channel_id = 2;
  r.replica_groups->format = ReplicaGroups::Format::kIota;
  r.replica_groups->iota_num_groups = 2;
  r.replica_groups->iota_group_size = 4;
  r.replica_groups->iota_reshape_dims = {4, 2};
  r.replica_groups->iota_transpose_perm = {1, 0};
  r.use_global_device_ids = true;
  r.has_dimensions = true;
  r.dimensions = {0};
  EXPECT_EQ(Line(*rs),
            "%rs = f32[4]{0} reduce-scatter(%p0), channel_id=2, "
            "replica_groups=[2,4]<=[4,2]T(1,0), use_global_device_ids=true, "
            "dimensions={0}, to_apply=%add");

  Instruction* a2a = b().Op(Opcode::kAllToAll, "a2a", F32({8}), {p});
  a2a->mutable_attrs().replica_groups->format = ReplicaGroups::Format::kMesh;
  a2a->mutable_attrs().replica_groups->mesh_text = "mesh['x'=2] {'x'}";
  a2a->mutable_attrs().has_dimensions = true;
  a2a->mutable_attrs().dimensions = {0};
  EXPECT_EQ(Line(*a2a),
            "%a2a = f32[8]{0} all-to-all(%p0), replica_groups=mesh['x'=2] "
            "{'x'}, dimensions={0}");

  Instruction* empty = b().Op(Opcode::kAllReduce, "ar", F32({8}), {p});
  empty->mutable_called_computations().push_back(add);
  empty->mutable_attrs().replica_groups->format =
      ReplicaGroups::Format::kExplicit;
  EXPECT_EQ(Line(*empty),
            "%ar = f32[8]{0} all-reduce(%p0), replica_groups={}, "
            "to_apply=%add");

  Instruction* cp = b().Op(Opcode::kCollectivePermute, "cp", F32({8}), {p});
  cp->mutable_attrs().channel_id = 4;
  cp->mutable_attrs().source_target_pairs = {{0, 1}, {1, 0}};
  EXPECT_EQ(Line(*cp),
            "%cp = f32[8]{0} collective-permute(%p0), channel_id=4, "
            "source_target_pairs={{0,1},{1,0}}");
}

TEST_F(AttributeTest, CalledComputations) {
  Instruction* p = P();
  Computation* c1 = Callee("c1");
  Computation* c2 = Callee("c2");
  Computation* c3 = Callee("c3");

  Instruction* w = b().Op(Opcode::kWhile, "w", S32(), {p});
  w->mutable_called_computations() = {c1, c2};
  EXPECT_EQ(Line(*w), "%w = s32[] while(%p0), condition=%c1, body=%c2");

  Instruction* cond = b().Op(Opcode::kConditional, "cond", S32(), {p, p, p});
  cond->mutable_called_computations() = {c1, c2};
  EXPECT_EQ(Line(*cond),
            "%cond = s32[] conditional(%p0, %p0, %p0), true_computation=%c1, "
            "false_computation=%c2");
  cond->mutable_attrs().branch_computations_form = true;
  EXPECT_EQ(Line(*cond),
            "%cond = s32[] conditional(%p0, %p0, %p0), "
            "branch_computations={%c1, %c2}");

  Instruction* call = b().Op(Opcode::kCall, "call", S32(), {p});
  call->mutable_called_computations() = {c3};
  call->mutable_attrs().is_composite = true;
  SetFrontendAttribute(call->mutable_attrs().frontend_attributes,
                       "composite.name", "foo");
  EXPECT_EQ(Line(*call),
            "%call = s32[] call(%p0), to_apply=%c3, is_composite=true, "
            "frontend_attributes={composite.name=\"foo\"}");

  Instruction* sas = b().Op(Opcode::kSelectAndScatter, "sas", S32(), {p, p, p});
  sas->mutable_called_computations() = {c1, c2};
  sas->mutable_attrs().raw.push_back({"window", "{size=2}"});
  EXPECT_EQ(Line(*sas),
            "%sas = s32[] select-and-scatter(%p0, %p0, %p0), window={size=2}, "
            "select=%c1, scatter=%c2");

  Instruction* fusion = b().Op(Opcode::kFusion, "fusion", S32(), {p});
  fusion->mutable_called_computations() = {c3};
  fusion->mutable_attrs().fusion_kind = "kLoop";
  fusion->mutable_attrs().raw.push_back(
      {"output_to_operand_aliasing", "{{}: (0, {})}"});
  EXPECT_EQ(Line(*fusion),
            "%fusion = s32[] fusion(%p0), kind=kLoop, "
            "output_to_operand_aliasing={{}: (0, {})}, calls=%c3");

  Instruction* start =
      b().Op(Opcode::kAsyncStart, "start",
             Shape::Tuple({Shape::Tuple({S32()}), S32()}), {p});
  start->mutable_called_computations() = {c3};
  Instruction* done = b().Op(Opcode::kAsyncDone, "done", S32(), {start});
  done->mutable_called_computations() = {c3};
  EXPECT_EQ(Line(*start),
            "%start = ((s32[]), s32[]) async-start(%p0), calls=%c3");
  EXPECT_EQ(Line(*done), "%done = s32[] async-done(%start)");
}

TEST_F(AttributeTest, CustomCall) {
  Instruction* p = P();
  Computation* c1 = Callee("c1");
  Instruction* cc = b().Op(Opcode::kCustomCall, "cc", S32(), {p});
  EXPECT_EQ(Line(*cc), "%cc = s32[] custom-call(%p0), custom_call_target=\"\"");
  auto& a = cc->mutable_attrs();
  a.custom_call_target = "__cudnn$conv";
  // Stored in input order; XLA prints window/dim_labels before the target
  // and api_version after output_to_operand_aliasing.
  a.raw.push_back({"api_version", "API_VERSION_TYPED_FFI"});
  a.raw.push_back({"custom_call_has_side_effect", "true"});
  a.raw.push_back({"dim_labels", "b01f_01io->b01f"});
  a.raw.push_back({"window", "{size=3x3 pad=1_1x1_1}"});
  a.raw.push_back({"mystery", "{1}"});
  cc->mutable_called_computations() = {c1};
  EXPECT_EQ(Line(*cc),
            "%cc = s32[] custom-call(%p0), window={size=3x3 pad=1_1x1_1}, "
            "dim_labels=b01f_01io->b01f, custom_call_target=\"__cudnn$conv\", "
            "custom_call_has_side_effect=true, "
            "api_version=API_VERSION_TYPED_FFI, mystery={1}, "
            "called_computations={%c1}");
}

TEST_F(AttributeTest, CommonAttributesInXlaOrder) {
  Instruction* p = P();
  Instruction* q = P();
  Instruction* n = b().Op(Opcode::kNegate, "n", S32(), {p});
  auto& a = n->mutable_attrs();
  a.backend_config = "{\"a\":\"}{\",\"b\":[]}";
  a.metadata.op_type = "Neg";
  a.metadata.op_name = "jit(f)/neg";
  a.metadata.source_file = "/x.py";
  a.metadata.source_line = 7;
  a.metadata.source_end_line = 8;
  a.metadata.source_column = 3;
  a.metadata.source_end_column = 9;
  a.metadata.profile_type = "{1,2}";
  a.metadata.deduplicated_name = "d";
  a.metadata.scheduling_name = "n";
  a.metadata.stack_frame_id = 5;
  a.metadata.metadata_payload = "pl";
  a.raw.push_back({"origin", "{{\"n\"}}"});
  a.raw.push_back({"statistics", "{visualizing_index=1,stat_a=3}"});
  a.raw.push_back({"result_accuracy", "{mode=highest}"});
  a.sharding = "{replicated}";
  SetFrontendAttribute(a.frontend_attributes, "zz", "q\"uote");
  SetFrontendAttribute(a.frontend_attributes, "aa", "{{0,1},{1,2}}",
                       /*is_raw=*/true);
  n->AddControlPredecessor(q);
  n->AddControlPredecessor(p);
  EXPECT_EQ(Line(*n),
            "%n = s32[] negate(%p0), sharding={replicated}, "
            "frontend_attributes={aa={{0,1},{1,2}},zz=\"q\\\"uote\"}, "
            "control-predecessors={%p1, %p0}, "
            "statistics={visualizing_index=1,stat_a=3}, "
            "result_accuracy={mode=highest}, origin={{\"n\"}}, "
            "metadata={op_type=\"Neg\" op_name=\"jit(f)/neg\" "
            "source_file=\"/x.py\" source_line=7 source_end_line=8 "
            "source_column=3 source_end_column=9 profile_type={1,2} "
            "deduplicated_name=\"d\" scheduling_name=\"n\" stack_frame_id=5 "
            "metadata_payload=\"pl\"}, "
            "backend_config={\"a\":\"}{\",\"b\":[]}");

  PrintOptions opts;
  opts.print_metadata = false;
  opts.print_backend_config = false;
  std::string out;
  AppendInstruction(*n, out, opts);
  EXPECT_EQ(out.find("metadata="), std::string::npos);
  EXPECT_EQ(out.find("backend_config="), std::string::npos);
}

TEST_F(AttributeTest, BackendConfigForms) {
  Instruction* p = P();
  Instruction* n = b().Op(Opcode::kNegate, "n", S32(), {p});
  auto& a = n->mutable_attrs();
  a.backend_config = "abc\n";
  a.backend_config_is_raw = false;
  EXPECT_EQ(Line(*n), "%n = s32[] negate(%p0), backend_config=\"abc\\n\"");
  // Quoted JSON stays quoted.
  a.backend_config = "{\"x\":1}";
  EXPECT_EQ(Line(*n),
            "%n = s32[] negate(%p0), backend_config=\"{\\\"x\\\":1}\"");
  // Raw text that is not one balanced brace blob must be quoted to parse.
  a.backend_config_is_raw = true;
  a.backend_config = "{\"x\":1} {";
  EXPECT_EQ(Line(*n),
            "%n = s32[] negate(%p0), backend_config=\"{\\\"x\\\":1} {\"");
  a.backend_config = "{} {}";
  EXPECT_EQ(Line(*n), "%n = s32[] negate(%p0), backend_config=\"{} {}\"");
  a.backend_config = "{attn_heads = 32 : i64, s = \"}\"}";
  EXPECT_EQ(Line(*n),
            "%n = s32[] negate(%p0), backend_config={attn_heads = 32 : i64, "
            "s = \"}\"}");
}

TEST(PrinterTest, EscapesStrings) {
  std::string out;
  AppendQuotedString("a\"b\\c\n\t\r'd\x01\x7f\xc3\xa9?", out);
  EXPECT_EQ(out, "\"a\\\"b\\\\c\\n\\t\\r\\'d\\001\\177\\303\\251?\"");
}

TEST_F(AttributeTest, EscapesMetadataAndTarget) {
  Instruction* p = P();
  Instruction* cc = b().Op(Opcode::kCustomCall, "cc", S32(), {p});
  cc->mutable_attrs().custom_call_target = "t\"";
  cc->mutable_attrs().metadata.op_name =
      "jit(f)/all_to_all[axis_name=('z',)] \xe2\x86\x92";
  EXPECT_EQ(Line(*cc),
            "%cc = s32[] custom-call(%p0), custom_call_target=\"t\\\"\", "
            "metadata={op_name=\"jit(f)/all_to_all[axis_name=(\\'z\\',)] "
            "\\342\\206\\222\"}");
}

// Reference implementations for the word-at-a-time fast paths.
std::string ReferenceQuoted(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\'':
        out += "\\'";
        break;
      case '\\':
        out += "\\\\";
        break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          char buf[5];
          std::snprintf(buf, sizeof(buf), "\\%03o", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

bool ReferenceIsBraceBlob(const std::string& s) {
  if (s.size() < 2 || s.front() != '{' || s.back() != '}') return false;
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '"') {
      for (++i; i < s.size() && s[i] != '"'; ++i) {
        if (s[i] == '\\') ++i;
      }
      if (i >= s.size()) return false;
    } else if (s[i] == '{') {
      ++depth;
    } else if (s[i] == '}' && --depth == 0) {
      return i + 1 == s.size();
    }
  }
  return false;
}

TEST(PrinterTest, FastPathsMatchReferenceOnRandomStrings) {
  std::mt19937 rng(42);
  const std::string alphabet = "ab{}\"\\\n\x01\x7f\xe9' ";
  TestModule t;
  Builder b(t.Entry());
  Instruction* p = b.Param(0, "p", S32());
  Instruction* n = b.Op(Opcode::kNegate, "n", S32(), {p});
  for (int iter = 0; iter < 20000; ++iter) {
    std::string s;
    // Up to 100 bytes: the 16-byte SSE2 blocks, nested braces included.
    const int len = rng() % 100;
    for (int i = 0; i < len; ++i) {
      // Mostly plain letters so that 8-byte runs occur.
      s += (rng() % 3 == 0) ? alphabet[rng() % alphabet.size()]
                            : static_cast<char>('a' + rng() % 26);
    }
    if (rng() % 2) s = "{" + s + "}";
    if (rng() % 4 == 0) s = "{{" + s + "}}";
    std::string quoted;
    AppendQuotedString(s, quoted);
    ASSERT_EQ(quoted, ReferenceQuoted(s));
    n->mutable_attrs().backend_config = s;
    const std::string expected =
        "%n = s32[] negate(%p)" +
        (s.empty() ? std::string()
                   : ", backend_config=" +
                         (ReferenceIsBraceBlob(s) ? s : ReferenceQuoted(s)));
    ASSERT_EQ(Line(*n), expected) << s;
  }
}

// ---------------------------------------------------------------------------
// Shapes.

TEST(PrinterShapeTest, LayoutsAndDynamicDims) {
  auto text = [](const Shape& s, bool layout = true) {
    std::string out;
    AppendShape(s, out, layout);
    return out;
  };
  EXPECT_EQ(text(S32()), "s32[]");
  EXPECT_EQ(text(F32({2, 3})), "f32[2,3]{1,0}");
  EXPECT_EQ(text(F32({2, 3}), false), "f32[2,3]");
  EXPECT_EQ(text(Arr(PrimitiveType::kBF16, {2, 3}, false)), "bf16[2,3]");
  Shape tiled = Arr(PrimitiveType::kBF16, {8, 128, 4, 2});
  tiled.mutable_layout()->tiles = {Tile{{8, 128}},
                                   Tile{{2, Tile::kCombineDim}}};
  tiled.mutable_layout()->memory_space = 1;
  EXPECT_EQ(text(tiled), "bf16[8,128,4,2]{3,2,1,0:T(8,128)(2,*)S(1)}");
  Shape e4 = Arr(PrimitiveType::kS4, {128});
  e4.mutable_layout()->element_size_bits = 4;
  e4.mutable_layout()->other_tail = "M(8)L(2)D(D,C)";
  EXPECT_EQ(text(e4), "s4[128]{0:D(D,C)L(2)E(4)M(8)}");
  Shape scalar = Arr(PrimitiveType::kU32, {});
  scalar.mutable_layout()->memory_space = 2;
  EXPECT_EQ(text(scalar), "u32[]{:S(2)}");
  Shape col = F32({2, 3});
  col.mutable_layout()->minor_to_major = {0, 1};
  EXPECT_EQ(text(col), "f32[2,3]{0,1}");
  Shape dyn(PrimitiveType::kF32, {8, -1, 4});
  dyn.mutable_dim_kinds() = {DimKind::kBounded, DimKind::kUnbounded,
                             DimKind::kStatic};
  EXPECT_EQ(text(dyn), "f32[<=8,?,4]");
  EXPECT_EQ(text(Shape::Token()), "token[]");
  EXPECT_EQ(text(Shape::Tuple({})), "()");
  EXPECT_EQ(
      text(Shape::Tuple({Shape::Tuple({S32(), F32({1})}), Shape::Token()})),
      "((s32[], f32[1]{0}), token[])");
}

TEST(PrinterShapeTest, AgreesWithShapeToString) {
  std::vector<Shape> shapes = {S32(), F32({2, 3}),
                               Arr(PrimitiveType::kPred, {7}, false),
                               Shape::Tuple(std::vector<Shape>(7, S32()))};
  for (const Shape& s : shapes) {
    std::string out;
    AppendShape(s, out);
    EXPECT_EQ(out, s.ToString());
  }
}

// ---------------------------------------------------------------------------
// Literals.

template <typename T>
Literal Scalar(PrimitiveType type, T value) {
  Literal l(Shape::Scalar(type));
  l.Set<T>(0, value);
  return l;
}

template <typename T>
Literal Vec(PrimitiveType type, std::vector<T> values,
            absl::InlinedVector<int64_t, 6> dims = {}) {
  if (dims.empty()) dims = {static_cast<int64_t>(values.size())};
  Literal l(Arr(type, dims));
  for (size_t i = 0; i < values.size(); ++i) l.Set<T>(i, values[i]);
  return l;
}

std::string Lit(const Literal& l) {
  std::string out;
  AppendLiteral(l, out);
  return out;
}

float FloatFromBits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

TEST(LiteralPrintTest, F32) {
  auto f = [](float v) { return Lit(Scalar(PrimitiveType::kF32, v)); };
  EXPECT_EQ(f(1.0f), "1");
  EXPECT_EQ(f(0.5f), "0.5");
  EXPECT_EQ(f(1e-05f), "1e-05");
  EXPECT_EQ(f(0.1f), "0.1");
  EXPECT_EQ(f(-0.0f), "-0");
  EXPECT_EQ(f(123456.0f), "123456");
  EXPECT_EQ(f(1234567.0f), "1234567");
  EXPECT_EQ(f(16777217.0f), "16777216");
  EXPECT_EQ(f(std::numeric_limits<float>::max()), "3.40282347e+38");
  EXPECT_EQ(f(-2.38197633e+38f), "-2.38197633e+38");
  EXPECT_EQ(f(3.39e+38f), "3.39e+38");
  EXPECT_EQ(f(std::numeric_limits<float>::infinity()), "inf");
  EXPECT_EQ(f(-std::numeric_limits<float>::infinity()), "-inf");
  EXPECT_EQ(f(FloatFromBits(0x7fc00000)), "nan");
  EXPECT_EQ(f(FloatFromBits(0xffc00000)), "-nan");
  EXPECT_EQ(f(FloatFromBits(0x7f800001)), "nan(0x1)");
  EXPECT_EQ(f(FloatFromBits(0xffc0007f)), "-nan(0x40007f)");
  EXPECT_EQ(f(std::numeric_limits<float>::denorm_min()), "1.4013e-45");
}

TEST(LiteralPrintTest, F64) {
  auto d = [](double v) { return Lit(Scalar(PrimitiveType::kF64, v)); };
  EXPECT_EQ(d(0.1), "0.1");
  EXPECT_EQ(d(1.0 / 3), "0.33333333333333331");
  EXPECT_EQ(d(1e100), "1e+100");
  EXPECT_EQ(d(std::numeric_limits<double>::quiet_NaN()), "nan");
  uint64_t bits = 0x7ff0000000000123ull;
  double payload;
  std::memcpy(&payload, &bits, 8);
  EXPECT_EQ(d(payload), "nan(0x123)");
}

TEST(LiteralPrintTest, NarrowFloats) {
  auto bf = [](uint16_t bits) {
    return Lit(Scalar<uint16_t>(PrimitiveType::kBF16, bits));
  };
  EXPECT_EQ(bf(0x3fc0), "1.5");
  EXPECT_EQ(bf(0x3f81), "1.008");
  EXPECT_EQ(bf(0x3dcd), "0.1001");
  EXPECT_EQ(bf(0x7f80), "inf");
  EXPECT_EQ(bf(0xff80), "-inf");
  EXPECT_EQ(bf(0x7fc0), "nan");
  EXPECT_EQ(bf(0x7f81), "nan(0x1)");
  EXPECT_EQ(bf(0x8000), "-0");
  EXPECT_EQ(bf(0x7f61), "2.991e+38");
  auto h = [](uint16_t bits) {
    return Lit(Scalar<uint16_t>(PrimitiveType::kF16, bits));
  };
  EXPECT_EQ(h(0x3c00), "1");
  EXPECT_EQ(h(0x3555), "0.33325");
  EXPECT_EQ(h(0x7bff), "65504");
  EXPECT_EQ(h(0x7e00), "nan");
  EXPECT_EQ(h(0x7c01), "nan(0x1)");
  EXPECT_EQ(h(0xfc00), "-inf");
  auto f8 = [](PrimitiveType t, uint8_t bits) {
    return Lit(Scalar<uint8_t>(t, bits));
  };
  EXPECT_EQ(f8(PrimitiveType::kF8E4M3FN, 0x38), "1");
  EXPECT_EQ(f8(PrimitiveType::kF8E4M3FN, 0x7e), "448");
  EXPECT_EQ(f8(PrimitiveType::kF8E4M3FN, 0x7f), "nan");
  EXPECT_EQ(f8(PrimitiveType::kF8E4M3FN, 0xff), "-nan");
  EXPECT_EQ(f8(PrimitiveType::kF8E5M2, 0x3c), "1");
  EXPECT_EQ(f8(PrimitiveType::kF8E5M2, 0x7c), "inf");
  EXPECT_EQ(f8(PrimitiveType::kF8E5M2, 0x7e), "nan");
  EXPECT_EQ(f8(PrimitiveType::kF8E5M2, 0x7d), "nan(0x1)");
  EXPECT_EQ(f8(PrimitiveType::kF8E4M3FNUZ, 0x80), "-nan");
  EXPECT_EQ(f8(PrimitiveType::kF8E4M3FNUZ, 0x40), "1");
  EXPECT_EQ(f8(PrimitiveType::kF8E8M0FNU, 0x7f), "1");
  EXPECT_EQ(f8(PrimitiveType::kF8E8M0FNU, 0xff), "nan");
  EXPECT_EQ(f8(PrimitiveType::kF4E2M1FN, 0x7), "6");
  EXPECT_EQ(f8(PrimitiveType::kF4E2M1FN, 0x9), "-0.5");
  EXPECT_EQ(f8(PrimitiveType::kF6E3M2FN, 0x1f), "28");
}

TEST(LiteralPrintTest, AppendFloatLiteralFromDouble) {
  std::string out;
  AppendFloatLiteral(PrimitiveType::kF32, 0.1f, out);
  EXPECT_EQ(out, "0.1");
  out.clear();
  AppendFloatLiteral(PrimitiveType::kF64, 0.1f, out);
  EXPECT_EQ(out, "0.10000000149011612");
  out.clear();
  AppendFloatLiteral(PrimitiveType::kBF16, 1.0078125, out);
  EXPECT_EQ(out, "1.008");
  out.clear();
  AppendFloatLiteral(PrimitiveType::kF16,
                     -std::numeric_limits<double>::infinity(), out);
  EXPECT_EQ(out, "-inf");
  out.clear();
  AppendFloatLiteral(PrimitiveType::kF32, std::nan(""), out);
  EXPECT_EQ(out, "nan");
}

TEST(LiteralPrintTest, AppendFloatLiteralNarrowsNanPayloads) {
  // A double NaN keeps the top mantissa bits of its payload in the type.
  auto nan_as = [](PrimitiveType type, uint64_t bits) {
    double d;
    std::memcpy(&d, &bits, sizeof(d));
    std::string out;
    AppendFloatLiteral(type, d, out);
    return out;
  };
  EXPECT_EQ(nan_as(PrimitiveType::kF32, 0x7ff4000000000000ull),
            "nan(0x200000)");
  EXPECT_EQ(nan_as(PrimitiveType::kC64, 0xfff8000020000000ull),
            "-nan(0x400001)");
  EXPECT_EQ(nan_as(PrimitiveType::kBF16, 0xfff4000000000000ull), "-nan(0x20)");
  EXPECT_EQ(nan_as(PrimitiveType::kF16, 0x7ff8000000000000ull), "nan");
  EXPECT_EQ(nan_as(PrimitiveType::kF8E4M3FN, 0x7ff4000000000000ull), "nan");
  EXPECT_EQ(nan_as(PrimitiveType::kF64, 0x7ff0000000000123ull), "nan(0x123)");
}

TEST(LiteralPrintTest, Integers) {
  EXPECT_EQ(Lit(Scalar<uint64_t>(PrimitiveType::kU64,
                                 std::numeric_limits<uint64_t>::max())),
            "18446744073709551615");
  EXPECT_EQ(Lit(Scalar<int64_t>(PrimitiveType::kS64,
                                std::numeric_limits<int64_t>::min())),
            "-9223372036854775808");
  EXPECT_EQ(Lit(Scalar<int32_t>(PrimitiveType::kS32, -2147483647 - 1)),
            "-2147483648");
  EXPECT_EQ(Lit(Scalar<uint32_t>(PrimitiveType::kU32, 4294967295u)),
            "4294967295");
  EXPECT_EQ(Lit(Scalar<int8_t>(PrimitiveType::kS8, -128)), "-128");
  EXPECT_EQ(Lit(Scalar<uint8_t>(PrimitiveType::kU8, 255)), "255");
  EXPECT_EQ(Lit(Scalar<int16_t>(PrimitiveType::kS16, -300)), "-300");
  EXPECT_EQ(Lit(Scalar<uint16_t>(PrimitiveType::kU16, 65535)), "65535");
  EXPECT_EQ(Lit(Scalar<int8_t>(PrimitiveType::kS4, -8)), "-8");
  EXPECT_EQ(Lit(Scalar<int8_t>(PrimitiveType::kS4, 7)), "7");
  EXPECT_EQ(Lit(Scalar<uint8_t>(PrimitiveType::kU4, 15)), "15");
  EXPECT_EQ(Lit(Scalar<uint8_t>(PrimitiveType::kPred, 1)), "true");
  EXPECT_EQ(Lit(Scalar<uint8_t>(PrimitiveType::kPred, 0)), "false");
  EXPECT_EQ(Lit(Vec<uint8_t>(PrimitiveType::kPred, {1, 0, 1})), "{1, 0, 1}");
}

TEST(LiteralPrintTest, Complex) {
  Literal c(Shape::Scalar(PrimitiveType::kC64));
  c.Set<float>(0, 1.0f);
  c.Set<float>(1, -2.5f);
  EXPECT_EQ(Lit(c), "(1, -2.5)");
  Literal v(Arr(PrimitiveType::kC128, {2}));
  for (int i = 0; i < 4; ++i) v.Set<double>(i, i * 0.5);
  EXPECT_EQ(Lit(v), "{(0, 0.5), (1, 1.5)}");
}

TEST(LiteralPrintTest, ComplexPartsPrintAsTheirFloatType) {
  Literal c(Shape::Scalar(PrimitiveType::kC64));
  c.Set<uint32_t>(0, 0x7f800001u);  // nan(0x1)
  c.Set<float>(1, 0.1f);
  EXPECT_EQ(Lit(c), "(nan(0x1), 0.1)");
  Literal z(Shape::Scalar(PrimitiveType::kC128));
  z.Set<double>(0, 1.0 / 3);
  z.Set<double>(1, -std::numeric_limits<double>::infinity());
  EXPECT_EQ(Lit(z), "(0.33333333333333331, -inf)");
}

TEST(LiteralPrintTest, ArraysOfEveryRank) {
  EXPECT_EQ(Lit(Vec<float>(PrimitiveType::kF32, {1, 2.5f, 3})), "{1, 2.5, 3}");
  EXPECT_EQ(Lit(Vec<int32_t>(PrimitiveType::kS32, {7})), "{7}");
  EXPECT_EQ(Lit(Literal(Arr(PrimitiveType::kF32, {0}))), "{}");
  EXPECT_EQ(Lit(Vec<int32_t>(PrimitiveType::kS32, {1, 2, 3, 4, 5, 6}, {2, 3})),
            "{ { 1, 2, 3 }, { 4, 5, 6 } }");
  EXPECT_EQ(Lit(Vec<int32_t>(PrimitiveType::kS32, {0, 1, 2}, {1, 3})),
            "{ { 0, 1, 2 } }");
  EXPECT_EQ(Lit(Vec<int32_t>(PrimitiveType::kS32, {1, 2}, {2, 1})),
            "{ {1}, {2} }");
  EXPECT_EQ(Lit(Literal(Arr(PrimitiveType::kS32, {0, 3}))), "{  }");
  EXPECT_EQ(Lit(Vec<int32_t>(PrimitiveType::kS32, {1, 2, 3, 4, 5, 6, 7, 8},
                             {2, 2, 2})),
            "{ { { 1, 2 }, { 3, 4 } }, { { 5, 6 }, { 7, 8 } } }");
  EXPECT_EQ(Lit(Vec<int32_t>(PrimitiveType::kS32, {1, 2, 3, 4}, {1, 2, 1, 2})),
            "{ { /*i0=0*/ { /*i1=0*/ { 1, 2 } }, { /*i1=1*/ { 3, 4 } } } }");
  EXPECT_EQ(Lit(Vec<uint8_t>(PrimitiveType::kPred, {1, 0, 0, 1}, {2, 2})),
            "{ { 1, 0 }, { 0, 1 } }");
}

TEST(LiteralPrintTest, ElidedAndTuples) {
  EXPECT_EQ(Lit(Literal::Elided(F32({100}))), "{...}");
  Literal t(Shape::Tuple({S32(), F32({2})}));
  t.mutable_elements()[0].Set<int32_t>(0, 3);
  t.mutable_elements()[1].Set<float>(1, 0.25f);
  EXPECT_EQ(Lit(t), "( 3, {0, 0.25} )");
}

TEST_F(AttributeTest, ConstantsAndElision) {
  Instruction* c = b().Const(
      "c",
      Vec<float>(PrimitiveType::kF32, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(Line(*c),
            "%c = f32[11]{0} constant({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})");
  PrintOptions opts;
  opts.elide_constants_above = 10;
  std::string out;
  AppendInstruction(*c, out, opts);
  EXPECT_EQ(out, "%c = f32[11]{0} constant({...})");
  Instruction* s = b().Const("s", Scalar<float>(PrimitiveType::kF32, 2.0f));
  EXPECT_EQ(Line(*s), "%s = f32[] constant(2)");
  Instruction* e = b().Const("e", Literal::Elided(F32({4, 4})));
  EXPECT_EQ(Line(*e), "%e = f32[4,4]{1,0} constant({...})");
}

// A backend_config the parser scanned as one brace blob is printed raw
// without a second scan (ConfigText::checked_blob); writing the same text
// back (which forgets that) must print exactly the same, so the parser's
// scan and the printer's test agree on these tricky blobs. Any other write
// forgets the check: unbalanced text is quoted again.
TEST(ConfigTextTest, CheckedBlobsPrintAsTheCheckedText) {
  const char* blobs[] = {
      R"({"a":"}{","b":[]})",
      R"({"s":"\"}\\"})",
      R"({"n":{"m":{"k":"{"}},"e":""})",
      R"({attn_heads = 32 : i64, s = "}"})",
  };
  for (const char* blob : blobs) {
    SCOPED_TRACE(blob);
    const std::string text =
        std::string(
            "HloModule m\nENTRY e {\n  ROOT p = s32[] parameter(0), "
            "backend_config=") +
        blob + "\n}\n";
    absl::StatusOr<std::unique_ptr<Module>> m = ParseHloModule(text);
    ASSERT_TRUE(m.ok()) << m.status();
    Instruction* p = (*m)->entry()->root();
    ASSERT_TRUE(p->attrs().backend_config.checked_blob());
    const std::string checked = PrintModule(**m);
    const std::string copy = p->attrs().backend_config.value();
    p->mutable_attrs().backend_config = copy;
    EXPECT_FALSE(p->attrs().backend_config.checked_blob());
    EXPECT_EQ(PrintModule(**m), checked);
    EXPECT_NE(checked.find(std::string("backend_config=") + blob),
              std::string::npos);
  }
  ConfigText c;
  c.SetCheckedBlob("{}");
  ConfigText copy = c;
  EXPECT_TRUE(copy.checked_blob());
  c = std::string("{} {");
  EXPECT_FALSE(c.checked_blob());
  EXPECT_EQ(c, "{} {");
  c.SetCheckedBlob("{}");
  c.clear();
  EXPECT_FALSE(c.checked_blob());
  EXPECT_TRUE(c.empty());
}

// Metadata strings many instructions repeat are one shared value after
// parsing; assignment replaces the value and never edits the shared one.
TEST(SharedStringTest, ParsedOpNamesShareOneValueAndWritesReplaceIt) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseHloModule(R"(HloModule m
ENTRY e {
  a = s32[] parameter(0), metadata={op_name="jit(f)/add" source_file="f.py"}
  b = s32[] negate(a), metadata={op_name="jit(f)/add" source_file="f.py" source_line=3}
  ROOT c = s32[] negate(b), metadata={op_type="q\"" op_name="jit(f)/add"}
}
)");
  ASSERT_TRUE(m.ok()) << m.status();
  const Computation& e = *(*m)->entry();
  const Instruction* a = e.instructions()[0].get();
  Instruction* b = e.instructions()[1].get();
  const Instruction* c = e.instructions()[2].get();
  EXPECT_EQ(a->metadata().op_name.data(), b->metadata().op_name.data());
  // c's escaped op_type takes the general metadata path: shared too.
  EXPECT_EQ(a->metadata().op_name.data(), c->metadata().op_name.data());
  EXPECT_EQ(c->metadata().op_type, "q\"");
  EXPECT_EQ(a->metadata().source_file.data(), b->metadata().source_file.data());
  b->mutable_attrs().metadata.op_name = "other";
  EXPECT_EQ(a->metadata().op_name, "jit(f)/add");
  EXPECT_EQ(b->metadata().op_name, "other");
  SharedString s;
  EXPECT_TRUE(s.empty());
  s = std::string("");
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s, "");
}

// Most values have one or two users, held inline; longer lists spill and
// keep insertion order, and removal keeps the others in order.
TEST(UserListTest, InlineAndSpilledListsKeepOrder) {
  Module module("m");
  auto comp = std::make_unique<Computation>("e");
  Computation* e = comp.get();
  module.AddComputation(std::move(comp));
  Instruction* p = e->AddInstruction(std::make_unique<Instruction>(
      Opcode::kParameter, "p", Shape::Scalar(PrimitiveType::kS32)));
  std::vector<Instruction*> users;
  for (int k = 0; k < 5; ++k) {
    auto n =
        std::make_unique<Instruction>(Opcode::kNegate, "n" + std::to_string(k),
                                      Shape::Scalar(PrimitiveType::kS32));
    n->AppendOperand(p);
    n->AppendOperand(p);  // a second use: still one entry in p's users
    users.push_back(e->AddInstruction(std::move(n)));
  }
  EXPECT_EQ(std::vector<Instruction*>(p->users().begin(), p->users().end()),
            users);
  users[1]->DetachOperands();
  users.erase(users.begin() + 1);
  EXPECT_EQ(std::vector<Instruction*>(p->users().begin(), p->users().end()),
            users);
}

}  // namespace
}  // namespace hloverlap
