// Unit tests of the IR core: shapes, attributes, literals, instructions,
// computations, modules and cloning.
#include <limits>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/attributes.h"
#include "hlo/clone.h"
#include "hlo/computation.h"
#include "hlo/literal.h"
#include "hlo/module.h"
#include "hlo/parser.h"
#include "hlo/shape.h"

namespace hloverlap {
namespace {

using ::testing::ElementsAre;

Shape F32(absl::InlinedVector<int64_t, 6> dims) {
  Shape s(PrimitiveType::kF32, std::move(dims));
  s.SetDefaultLayout();
  return s;
}

TEST(ShapeTest, PrintsArraysTuplesAndLayouts) {
  EXPECT_EQ(F32({4, 128}).ToString(), "f32[4,128]{1,0}");
  EXPECT_EQ(F32({4, 128}).ToString(/*print_layout=*/false), "f32[4,128]");
  EXPECT_EQ(F32({}).ToString(), "f32[]");
  Shape t = Shape::Tuple({Shape::Scalar(PrimitiveType::kS32), F32({2})});
  EXPECT_EQ(t.ToString(), "(s32[], f32[2]{0})");
  std::vector<Shape> many(7, Shape::Scalar(PrimitiveType::kPred));
  EXPECT_EQ(Shape::Tuple(many).ToString(),
            "(pred[], pred[], pred[], pred[], pred[], /*index=5*/pred[], "
            "pred[])");
  Shape tiled = F32({8, 128});
  tiled.mutable_layout()->tiles.push_back(Tile{{8, 128}});
  tiled.mutable_layout()->memory_space = 1;
  EXPECT_EQ(tiled.ToString(), "f32[8,128]{1,0:T(8,128)S(1)}");
  Shape dyn(PrimitiveType::kS32, {128, 4});
  dyn.mutable_dim_kinds() = {DimKind::kBounded, DimKind::kStatic};
  EXPECT_EQ(dyn.ToString(), "s32[<=128,4]");
  EXPECT_TRUE(dyn.is_dynamic());
}

TEST(ShapeTest, SizesSaturateInsteadOfOverflowing) {
  Shape huge(PrimitiveType::kF32, {int64_t{1} << 40, int64_t{1} << 40});
  EXPECT_EQ(huge.ElementCount(), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(huge.ByteSize(), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(F32({2, 3}).ByteSize(), 24);
  Shape bf(PrimitiveType::kBF16, {4});
  EXPECT_EQ(Shape::Tuple({bf, F32({1})}).ByteSize(), 12);
}

TEST(ShapeTest, MinorToMajorPermutation) {
  EXPECT_TRUE(IsMinorToMajorPermutation({1, 0}, 2));
  EXPECT_TRUE(IsMinorToMajorPermutation({}, 0));
  EXPECT_FALSE(IsMinorToMajorPermutation({0, 0}, 2));     // repeated
  EXPECT_FALSE(IsMinorToMajorPermutation({2, 0}, 2));     // out of range
  EXPECT_FALSE(IsMinorToMajorPermutation({-1, 0}, 2));    // negative
  EXPECT_FALSE(IsMinorToMajorPermutation({0}, 2));        // too short
  EXPECT_FALSE(IsMinorToMajorPermutation({1, 0, 2}, 2));  // too long
}

TEST(ShapeTest, ArrayShapeSizeError) {
  EXPECT_EQ(ArrayShapeSizeError(PrimitiveType::kF32, {1024, 1024}), "");
  EXPECT_EQ(ArrayShapeSizeError(PrimitiveType::kF32, {}), "");
  EXPECT_EQ(ArrayShapeSizeError(PrimitiveType::kF32, {-1, 8}), "");  // dynamic
  EXPECT_EQ(ArrayShapeSizeError(PrimitiveType::kF32,
                                {int64_t{1} << 40, int64_t{1} << 40}),
            "shape has too many elements");
  // 2^60 f32 elements: 2^62 bytes, twice that overflows.
  EXPECT_EQ(ArrayShapeSizeError(PrimitiveType::kF32, {int64_t{1} << 60}),
            "shape is too large");
  EXPECT_EQ(ArrayShapeSizeError(PrimitiveType::kS8, {int64_t{1} << 61}), "");
  // A zero-sized dimension does not rescue an overflowing product.
  EXPECT_EQ(ArrayShapeSizeError(PrimitiveType::kS8,
                                {0, int64_t{1} << 40, int64_t{1} << 40}),
            "shape has too many elements");
}

TEST(ShapeTest, CompatibleIgnoresLayoutEqualityDoesNot) {
  Shape a = F32({2, 3});
  Shape b(PrimitiveType::kF32, {2, 3});
  EXPECT_TRUE(a.Compatible(b));
  EXPECT_FALSE(a == b);
  EXPECT_FALSE(a.Compatible(F32({3, 2})));
}

TEST(ShapeTest, ElementTypeNamesRoundTrip) {
  for (std::string_view name : {"pred", "s4", "s32", "u64", "bf16", "f16",
                                "f8e4m3fn", "c64", "token"}) {
    auto t = ParsePrimitiveType(name);
    ASSERT_TRUE(t.has_value()) << name;
    EXPECT_EQ(PrimitiveTypeName(*t), name);
  }
  EXPECT_FALSE(ParsePrimitiveType("tuple").has_value());
  EXPECT_FALSE(ParsePrimitiveType("f33").has_value());
}

TEST(SharedShapeTest, CopiesShareWritesCopyFirst) {
  SharedShape empty;
  EXPECT_EQ(empty.get().element_type(), PrimitiveType::kInvalid);
  SharedShape a(F32({8}));
  SharedShape b = a;
  EXPECT_TRUE(a.SharesWith(b));
  b.Mutable().set_dimension(0, 4);  // b gets its own copy
  EXPECT_FALSE(a.SharesWith(b));
  EXPECT_EQ(a.get(), F32({8}));
  EXPECT_EQ(b.get(), F32({4}));
  // Not shared: Set and Mutable write in place (references stay valid).
  const Shape* where = &b.get();
  b.Set(F32({2}));
  EXPECT_EQ(&b.get(), where);
  EXPECT_EQ(b.get(), F32({2}));
  SharedShape c = b;
  c.Set(F32({1}));  // shared: c gets a new one, b keeps its value
  EXPECT_EQ(b.get(), F32({2}));
  EXPECT_EQ(c.get(), F32({1}));
  b = std::move(c);
  EXPECT_EQ(b.get(), F32({1}));
}

// The parser gives instructions spelled alike one shape; changing one
// instruction's shape leaves the others alone.
TEST(SharedShapeTest, ParsedInstructionsShareUntilWritten) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseHloModule(R"(
HloModule m
ENTRY main {
  p = (f32[8]{0}, s32[]) parameter(0)
  a = f32[8]{0} get-tuple-element(p), index=0
  b = f32[8]{0} negate(a)
  i = s32[] get-tuple-element(p), index=1
  c = (f32[8]{0}, s32[]) tuple(b, i)
  ROOT d = f32[8]{0} negate(b)
}
)");
  ASSERT_TRUE(m.ok()) << m.status();
  auto find = [&](std::string_view name) -> Instruction* {
    for (const auto& i : (*m)->entry()->instructions()) {
      if (i->name() == name) return i.get();
    }
    return nullptr;
  };
  Instruction* a = find("a");
  Instruction* b = find("b");
  Instruction* d = find("d");
  ASSERT_NE(d, nullptr);
  EXPECT_TRUE(a->shared_shape().SharesWith(b->shared_shape()));
  EXPECT_TRUE(b->shared_shape().SharesWith(d->shared_shape()));
  EXPECT_TRUE(find("p")->shared_shape().SharesWith(find("c")->shared_shape()));
  b->mutable_shape().set_dimension(0, 4);
  EXPECT_EQ(b->shape().ToString(), "f32[4]{0}");
  EXPECT_EQ(a->shape().ToString(), "f32[8]{0}");
  EXPECT_EQ(d->shape().ToString(), "f32[8]{0}");
  d->set_shape(F32({2}));
  EXPECT_EQ(a->shape().ToString(), "f32[8]{0}");
  EXPECT_EQ(d->shape().ToString(), "f32[2]{0}");
}

TEST(ReplicaGroupsTest, ExpandsIotaWithTranspose) {
  ReplicaGroups g;
  g.format = ReplicaGroups::Format::kIota;
  g.iota_num_groups = 2;
  g.iota_group_size = 4;
  g.iota_reshape_dims = {4, 2};
  g.iota_transpose_perm = {1, 0};
  auto groups = g.Groups();
  ASSERT_TRUE(groups.has_value());
  EXPECT_THAT(*groups,
              ElementsAre(ElementsAre(0, 2, 4, 6), ElementsAre(1, 3, 5, 7)));
  EXPECT_EQ(g.ToString(), "[2,4]<=[4,2]T(1,0)");
  EXPECT_EQ(g.GroupSize(), 4);
}

TEST(ReplicaGroupsTest, RejectsInconsistentIota) {
  ReplicaGroups g;
  g.format = ReplicaGroups::Format::kIota;
  g.iota_num_groups = 3;
  g.iota_group_size = 4;
  g.iota_reshape_dims = {8};
  EXPECT_FALSE(g.Groups().has_value());
  g.iota_num_groups = 2;
  g.iota_transpose_perm = {1};  // out of range for rank 1
  EXPECT_FALSE(g.Groups().has_value());
}

TEST(ReplicaGroupsTest, ExplicitPrintsWithoutSpaces) {
  ReplicaGroups g;
  g.format = ReplicaGroups::Format::kExplicit;
  g.explicit_groups = {{0, 1}, {2, 3}};
  EXPECT_EQ(g.ToString(), "{{0,1},{2,3}}");
}

TEST(ReplicaGroupsTest, ExpandsMeshForm) {
  ReplicaGroups g;
  g.format = ReplicaGroups::Format::kMesh;
  g.mesh_text = "mesh['x'=2] {'x'}";
  EXPECT_THAT(*g.Groups(), ElementsAre(ElementsAre(0, 1)));
  EXPECT_EQ(g.GroupSize(), 2);
  g.mesh_text = "mesh['a'=2,'b'=4] {'b'}";
  EXPECT_THAT(*g.Groups(),
              ElementsAre(ElementsAre(0, 1, 2, 3), ElementsAre(4, 5, 6, 7)));
  g.mesh_text = "mesh['a'=2,'b'=4] {'a'}";
  EXPECT_THAT(*g.Groups(), ElementsAre(ElementsAre(0, 4), ElementsAre(1, 5),
                                       ElementsAre(2, 6), ElementsAre(3, 7)));
  g.mesh_text = "mesh['a'=2,'b'=2], device_ids=(3,2,1,0) {'b'}";
  EXPECT_THAT(*g.Groups(), ElementsAre(ElementsAre(3, 2), ElementsAre(1, 0)));
  g.mesh_text = "mesh['a'=2] {'zz'}";  // unknown axis
  EXPECT_FALSE(g.Groups().has_value());
  g.mesh_text = "mesh['a'=2";  // truncated
  EXPECT_FALSE(g.Groups().has_value());
}

TEST(LiteralTest, Bf16RoundsToNearestEven) {
  EXPECT_EQ(FloatToBF16(1.0f), 0x3f80);
  // 1 + 2^-8 is exactly halfway between two bf16 values: ties to even (1.0).
  EXPECT_EQ(FloatToBF16(1.00390625f), 0x3f80);
  // 1 + 3*2^-8 ties up to the even neighbour 1 + 2^-6.
  EXPECT_EQ(FloatToBF16(1.01171875f), 0x3f82);
  EXPECT_EQ(BF16ToFloat(0x3f80), 1.0f);
  EXPECT_TRUE(std::isnan(BF16ToFloat(FloatToBF16(NAN))));
}

TEST(LiteralTest, F16Conversions) {
  EXPECT_EQ(FloatToF16(1.0f), 0x3c00);
  EXPECT_EQ(FloatToF16(65504.0f), 0x7bff);
  EXPECT_EQ(FloatToF16(65520.0f), 0x7c00);  // rounds to inf
  EXPECT_EQ(FloatToF16(-2.0f), 0xc000);
  EXPECT_EQ(FloatToF16(5.9604644775390625e-08f), 0x0001);  // min subnormal
  EXPECT_EQ(F16ToFloat(0x3c00), 1.0f);
  EXPECT_EQ(F16ToFloat(0x0001), 5.9604644775390625e-08f);
  for (uint32_t bits = 0; bits < 0x7c00; bits += 37) {
    EXPECT_EQ(FloatToF16(F16ToFloat(bits)), bits) << bits;
  }
}

TEST(LiteralTest, F16EncodesEdgeCases) {
  EXPECT_EQ(FloatToF16(-1e6f), 0xfc00);  // past the range: -inf
  EXPECT_EQ(FloatToF16(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(FloatToF16(NAN), 0x7e00);
  EXPECT_EQ(FloatToF16(-NAN), 0xfe00);
  EXPECT_EQ(FloatToF16(-0.0f), 0x8000);
  EXPECT_EQ(FloatToF16(65519.0f), 0x7bff);  // just below the tie to inf
  // Ties to even: 1 + 2^-11 rounds down, 1 + 3*2^-11 up.
  EXPECT_EQ(FloatToF16(1.00048828125f), 0x3c00);
  EXPECT_EQ(FloatToF16(1.00146484375f), 0x3c02);
  // Half the smallest subnormal ties to zero; a little more rounds up.
  EXPECT_EQ(FloatToF16(2.98023223876953125e-08f), 0x0000);
  EXPECT_EQ(FloatToF16(3.0e-08f), 0x0001);
}

TEST(LiteralTest, IntegralElementsAsDoubleAndInt64) {
  Literal u(Shape::Scalar(PrimitiveType::kU64));
  u.Set<uint64_t>(0, std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(u.GetAsDouble(0), 18446744073709551615.0);
  EXPECT_EQ(u.GetAsInt64(0), -1);  // wraps
  Literal s(Shape::Scalar(PrimitiveType::kS4));
  s.Set<int8_t>(0, -8);
  EXPECT_EQ(s.GetAsDouble(0), -8.0);
  EXPECT_EQ(s.GetAsInt64(0), -8);
  Literal f(Shape::Scalar(PrimitiveType::kF32));
  f.Set<float>(0, -2.75f);
  EXPECT_EQ(f.GetAsDouble(0), -2.75);
  EXPECT_EQ(f.GetAsInt64(0), -2);
  f.Set<float>(0, 1e30f);
  EXPECT_EQ(f.GetAsInt64(0), std::numeric_limits<int64_t>::max());
}

TEST(LiteralTest, TypedAccessAndEquality) {
  Literal a(Shape(PrimitiveType::kS32, {3}));
  a.Set<int32_t>(0, -5);
  a.Set<int32_t>(2, 7);
  EXPECT_EQ(a.GetAsInt64(0), -5);
  EXPECT_EQ(a.GetAsDouble(2), 7.0);
  Literal b(Shape(PrimitiveType::kS32, {3}));
  EXPECT_FALSE(a.BitwiseEqual(b));
  b.Set<int32_t>(0, -5);
  b.Set<int32_t>(2, 7);
  EXPECT_TRUE(a.BitwiseEqual(b));
  EXPECT_TRUE(Literal::Elided(F32({20})).elided());
}

// A module with main: p0 -> negate -> add(neg, p0) -> root tuple.
struct SmallModule {
  std::unique_ptr<Module> module = std::make_unique<Module>("m");
  Computation* main = nullptr;
  Instruction* p0 = nullptr;
  Instruction* neg = nullptr;
  Instruction* add = nullptr;
  Instruction* root = nullptr;

  SmallModule() {
    auto c = std::make_unique<Computation>("main");
    main = module->AddComputation(std::move(c));
    module->set_entry(main);
    auto param =
        std::make_unique<Instruction>(Opcode::kParameter, "p0", F32({4}));
    p0 = main->AddInstruction(std::move(param));
    neg = main->AddInstruction(Opcode::kNegate, "neg", F32({4}), {p0});
    add = main->AddInstruction(Opcode::kAdd, "add", F32({4}), {neg, p0});
    root = main->AddInstruction(Opcode::kTuple, "t", Shape::Tuple({F32({4})}),
                                {add});
    main->set_root(root);
  }
};

TEST(InstructionTest, UsersTrackOperands) {
  SmallModule m;
  EXPECT_THAT(m.p0->users(), ElementsAre(m.neg, m.add));
  EXPECT_THAT(m.neg->users(), ElementsAre(m.add));
  m.add->ReplaceOperandWith(0, m.p0);
  EXPECT_TRUE(m.neg->users().empty());
  EXPECT_THAT(m.p0->users(), ElementsAre(m.neg, m.add));
  EXPECT_THAT(m.add->operands(), ElementsAre(m.p0, m.p0));
}

// A user is listed once however often it reads a value, whichever of the
// user's operands and the value's users is the shorter list.
TEST(InstructionTest, RepeatedOperandsListTheUserOnce) {
  SmallModule m;
  // Few operands, many users (p0 is read by neg, add and 100 adds).
  for (int k = 0; k < 100; ++k) {
    m.main->AddInstruction(Opcode::kAdd, "a" + std::to_string(k), F32({4}),
                           {m.p0, m.p0});
  }
  EXPECT_EQ(m.p0->user_count(), 102);
  // Many operands, few users (neg is read by add only).
  std::vector<Instruction*> ops(50, m.p0);
  ops.push_back(m.neg);
  ops.push_back(m.neg);
  auto* wide = m.main->AddInstruction(
      Opcode::kTuple, "wide", Shape::Tuple(std::vector<Shape>(52, F32({4}))),
      ops);
  EXPECT_THAT(m.neg->users(), ElementsAre(m.add, wide));
  EXPECT_EQ(m.p0->user_count(), 103);
  EXPECT_EQ(m.p0->users().back(), wide);
}

TEST(InstructionTest, ReplaceAllUsesWithChecksShapes) {
  SmallModule m;
  ASSERT_TRUE(m.neg->ReplaceAllUsesWith(m.p0).ok());
  EXPECT_THAT(m.add->operands(), ElementsAre(m.p0, m.p0));
  auto* other = m.main->AddInstruction(Opcode::kParameter, "p1", F32({5}), {});
  absl::Status s = m.add->ReplaceAllUsesWith(other);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr("f32[5]"));
}

TEST(InstructionTest, ControlDependenciesAreSymmetric) {
  SmallModule m;
  m.add->AddControlPredecessor(m.neg);
  m.add->AddControlPredecessor(m.neg);
  EXPECT_THAT(m.add->control_predecessors(), ElementsAre(m.neg));
  EXPECT_THAT(m.neg->control_successors(), ElementsAre(m.add));
  m.add->DropAllControlDependencies();
  EXPECT_TRUE(m.neg->control_successors().empty());
}

TEST(ComputationTest, RemoveInstructionRefusesLiveOnes) {
  SmallModule m;
  EXPECT_FALSE(m.main->RemoveInstruction(m.neg).ok());   // used by add
  EXPECT_FALSE(m.main->RemoveInstruction(m.root).ok());  // root
  m.add->ReplaceOperandWith(0, m.p0);
  ASSERT_TRUE(m.main->RemoveInstruction(m.neg).ok());
  EXPECT_EQ(m.main->instruction_count(), 3);
  EXPECT_THAT(m.p0->users(), ElementsAre(m.add));
}

// The stored order as instruction names.
std::vector<std::string> Order(const Computation& c) {
  std::vector<std::string> names;
  for (const auto& inst : c.instructions()) names.push_back(inst->name());
  return names;
}

Instruction* AddConstantBefore(Computation& c, const std::string& name,
                               const Instruction* before) {
  return c.AddInstruction(
      std::make_unique<Instruction>(Opcode::kConstant, name, F32({})), before);
}

TEST(ComputationTest, InsertsBeforeKeepTheOrderOfRepeatedInserts) {
  SmallModule m;
  // Queued inserts land before their anchor, in the order they were made;
  // one anchored on a queued instruction lands before that one.
  Instruction* a = AddConstantBefore(*m.main, "a", m.add);
  AddConstantBefore(*m.main, "b", m.add);
  AddConstantBefore(*m.main, "c", a);
  AddConstantBefore(*m.main, "d", m.p0);
  AddConstantBefore(*m.main, "e", a);
  EXPECT_EQ(m.main->instruction_count(), 9);
  EXPECT_THAT(Order(*m.main),
              ElementsAre("d", "p0", "neg", "c", "e", "a", "b", "add", "t"));
  // After the merge, new inserts go before the anchor's current place.
  AddConstantBefore(*m.main, "f", a);
  EXPECT_THAT(Order(*m.main), ElementsAre("d", "p0", "neg", "c", "e", "f", "a",
                                          "b", "add", "t"));
}

TEST(ComputationTest, RemovalsLeaveTheOrderOnItsNextRead) {
  SmallModule m;
  Instruction* a = AddConstantBefore(*m.main, "a", m.neg);
  AddConstantBefore(*m.main, "b", a);
  m.add->ReplaceOperandWith(0, m.p0);
  ASSERT_TRUE(m.main->RemoveInstruction(m.neg).ok());  // an anchor
  ASSERT_TRUE(m.main->RemoveInstruction(a).ok());      // queued, an anchor
  EXPECT_EQ(m.main->instruction_count(), 4);
  // Removing twice is an error, not a double free.
  absl::Status twice = m.main->RemoveInstruction(a);
  EXPECT_FALSE(twice.ok());
  EXPECT_THAT(std::string(twice.message()), ::testing::HasSubstr("already"));
  EXPECT_THAT(Order(*m.main), ElementsAre("p0", "b", "add", "t"));
  // Inserting before an anchor that is still there, after removals.
  AddConstantBefore(*m.main, "g", m.root);
  EXPECT_THAT(Order(*m.main), ElementsAre("p0", "b", "add", "g", "t"));
  EXPECT_THAT(m.main->MakeInstructionPostOrder().size(), 5);
}

TEST(ComputationTest, InsertsBeforeManyAnchorsStayLinear) {
  // 20k anchors, each with an insert before it, then one read: one merge.
  auto module = std::make_unique<Module>("m");
  Computation* c = module->AddComputation(std::make_unique<Computation>("c"));
  std::vector<Instruction*> anchors;
  for (int i = 0; i < 20000; ++i) {
    anchors.push_back(AddConstantBefore(*c, absl::StrCat("x", i), nullptr));
  }
  for (int i = 0; i < 20000; ++i) {
    AddConstantBefore(*c, absl::StrCat("y", i), anchors[i]);
  }
  const auto& order = c->instructions();
  ASSERT_EQ(order.size(), 40000u);
  EXPECT_EQ(order[0]->name(), "y0");
  EXPECT_EQ(order[1]->name(), "x0");
  EXPECT_EQ(order[39998]->name(), "y19999");
}

TEST(ComputationTest, PostOrderPutsOperandsFirst) {
  SmallModule m;
  // Reverse the stored order; post-order must still be a valid order.
  ASSERT_TRUE(m.main->SetInstructionOrder({m.root, m.add, m.neg, m.p0}).ok());
  auto order = m.main->MakeInstructionPostOrder();
  EXPECT_THAT(order, ElementsAre(m.p0, m.neg, m.add, m.root));
  EXPECT_FALSE(m.main->SetInstructionOrder({m.root, m.add}).ok());
}

TEST(ModuleTest, UniqueNamesAndChannelIds) {
  SmallModule m;
  EXPECT_EQ(m.module->UniqueInstructionName("fresh"), "fresh");
  EXPECT_EQ(m.module->UniqueInstructionName("add"), "add.1");
  EXPECT_EQ(m.module->UniqueInstructionName("add"), "add.2");
  m.add->mutable_attrs().channel_id = 7;
  m.module->InvalidateNameCache();
  EXPECT_EQ(m.module->NextChannelId(), 8);
  EXPECT_EQ(m.module->NextChannelId(), 9);
}

TEST(ModuleTest, SourceLocationFromStackFrames) {
  Module module("m");
  auto& sf = module.stack_frames();
  sf.file_names = {"model.py"};
  sf.function_names = {"layer"};
  sf.file_locations.push_back({1, 1, 42, 42, 8, 9});
  sf.frames.push_back({1, 0});
  OpMetadata md;
  md.stack_frame_id = 1;
  SourceLocation loc = module.GetSourceLocation(md);
  EXPECT_EQ(loc.file, "model.py");
  EXPECT_EQ(loc.line, 42);
  md.stack_frame_id = 5;  // out of range: unknown, no crash
  EXPECT_FALSE(module.GetSourceLocation(md).known());
}

TEST(CloneTest, CloneComputationGetsFreshNamesAndChannels) {
  SmallModule m;
  m.add->mutable_attrs().channel_id = 3;
  auto clone = CloneComputation(*m.main, "clone");
  ASSERT_TRUE(clone.ok()) << clone.status();
  Computation* c = *clone;
  EXPECT_EQ(c->name(), "main.clone");
  EXPECT_EQ(c->instruction_count(), 4);
  EXPECT_EQ(c->root()->name(), "t.clone");
  for (const auto& inst : c->instructions()) {
    EXPECT_EQ(inst->parent(), c);
    for (Instruction* op : inst->operands()) EXPECT_EQ(op->parent(), c);
    if (inst->opcode() == Opcode::kAdd) {
      EXPECT_EQ(inst->attrs().channel_id, 4);
    }
  }
  auto again = CloneComputation(*m.main, "clone");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->name(), "main.clone.1");
  EXPECT_EQ((*again)->root()->name(), "t.clone.1");
}

TEST(CloneTest, CloneModuleIsIndependent) {
  SmallModule m;
  auto callee = std::make_unique<Computation>("callee");
  Computation* cal = m.module->AddComputation(std::move(callee),
                                              /*before=*/m.main);
  auto* x = cal->AddInstruction(Opcode::kParameter, "x", F32({4}), {});
  cal->set_root(x);
  auto* call = m.main->AddInstruction(Opcode::kCall, "call", F32({4}), {m.p0});
  call->mutable_called_computations().push_back(cal);
  auto copy = CloneModule(*m.module);
  ASSERT_EQ(copy->computations().size(), 2);
  Computation* main2 = copy->entry();
  ASSERT_NE(main2, nullptr);
  EXPECT_EQ(main2->name(), "main");
  EXPECT_EQ(main2->instructions().back()->name(), "call");
  EXPECT_EQ(main2->instructions().back()->to_apply(),
            copy->computations()[0].get());
  EXPECT_EQ(main2->parameter(0)->name(), "p0");
}

TEST(ModuleTest, SortComputationsCalleesFirst) {
  SmallModule m;
  auto callee = std::make_unique<Computation>("callee");
  Computation* cal = m.module->AddComputation(std::move(callee));  // after main
  auto* x = cal->AddInstruction(Opcode::kParameter, "x", F32({4}), {});
  cal->set_root(x);
  auto* call = m.main->AddInstruction(Opcode::kCall, "call", F32({4}), {m.p0});
  call->mutable_called_computations().push_back(cal);
  m.module->SortComputationsCalleesFirst();
  EXPECT_EQ(m.module->computations()[0]->name(), "callee");
  EXPECT_EQ(m.module->computations()[1]->name(), "main");
  EXPECT_FALSE(m.module->RemoveComputation(cal).ok());
}

}  // namespace
}  // namespace hloverlap
