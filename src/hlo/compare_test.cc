// Unit tests of CompareModules: identical modules compare equal, and each
// kind of difference is reported precisely (the first one found).
#include "hlo/compare.h"

#include <functional>
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/computation.h"
#include "hlo/literal.h"
#include "hlo/module.h"

namespace hloverlap {
namespace {

using ::testing::HasSubstr;

Shape F32(absl::InlinedVector<int64_t, 6> dims) {
  Shape s(PrimitiveType::kF32, std::move(dims));
  s.SetDefaultLayout();
  return s;
}

Instruction* Param(Computation* c, int64_t n, std::string name, Shape s) {
  auto i = std::make_unique<Instruction>(Opcode::kParameter, std::move(name),
                                         std::move(s));
  i->mutable_attrs().parameter_number = n;
  return c->AddInstruction(std::move(i));
}

// A small module touching most attribute kinds:
//   %add (x, y) -> f32[]
//   ENTRY %main (a, b) { constant, all-reduce, add, tuple }
std::unique_ptr<Module> MakeModule() {
  auto m = std::make_unique<Module>("m");
  m->set_entry_computation_layout("{(f32[4]{0}, f32[4]{0})->f32[4]{0}}");
  m->set_num_partitions(2);
  m->raw_header_attributes().push_back(
      {"input_output_alias", "{ {}: (0, {}, may-alias) }"});
  SetFrontendAttribute(m->frontend_attributes(), "k", "v");
  m->stack_frames().file_names = {"a.py"};

  Computation* add = m->AddComputation(std::make_unique<Computation>("add"));
  Instruction* x = Param(add, 0, "x", F32({}));
  Instruction* y = Param(add, 1, "y", F32({}));
  add->set_root(add->AddInstruction(Opcode::kAdd, "sum", F32({}), {x, y}));

  Computation* main = m->AddComputation(std::make_unique<Computation>("main"));
  m->set_entry(main);
  Instruction* a = Param(main, 0, "a", F32({4}));
  Instruction* b = Param(main, 1, "b", F32({4}));
  auto c = std::make_unique<Instruction>(Opcode::kConstant, "c", F32({4}));
  auto lit = std::make_unique<Literal>(F32({4}));
  for (int i = 0; i < 4; ++i) lit->Set<float>(i, i * 1.5f);
  c->mutable_attrs().literal = std::move(lit);
  Instruction* ci = main->AddInstruction(std::move(c));
  Instruction* ar =
      main->AddInstruction(Opcode::kAllReduce, "ar", F32({4}), {a});
  ar->mutable_called_computations().push_back(add);
  auto& at = ar->mutable_attrs();
  at.channel_id = 1;
  at.replica_groups->format = ReplicaGroups::Format::kExplicit;
  at.replica_groups->explicit_groups = {{0, 1}};
  at.use_global_device_ids = true;
  at.metadata.op_name = "jit(f)/psum";
  at.metadata.stack_frame_id = 1;
  at.backend_config = "{\"x\":1}";
  at.sharding = "{replicated}";
  SetFrontendAttribute(at.frontend_attributes, "b", "2");
  SetFrontendAttribute(at.frontend_attributes, "a", "1");
  at.raw.push_back({"mystery", "{1}"});
  at.raw.push_back({"alpha", "2"});
  Instruction* sum =
      main->AddInstruction(Opcode::kAdd, "s", F32({4}), {ar, ci});
  sum->AddControlPredecessor(b);
  main->set_root(sum);
  return m;
}

TEST(CompareTest, IdenticalModulesAreEqual) {
  auto a = MakeModule();
  auto b = MakeModule();
  EXPECT_TRUE(CompareModules(*a, *b).ok()) << CompareModules(*a, *b);
}

TEST(CompareTest, FrontendAndRawAttributeOrderDoesNotMatter) {
  auto a = MakeModule();
  auto b = MakeModule();
  Instruction* ar = b->entry()->instructions()[3].get();
  auto& at = ar->mutable_attrs();
  std::swap(at.raw[0], at.raw[1]);
  std::swap(at.frontend_attributes[0], at.frontend_attributes[1]);
  EXPECT_TRUE(CompareModules(*a, *b).ok()) << CompareModules(*a, *b);
}

Instruction* Find(Module& m, std::string_view comp, std::string_view name) {
  for (const auto& i : m.FindComputation(comp)->instructions()) {
    if (i->name() == name) return i.get();
  }
  return nullptr;
}

struct Mutation {
  std::string label;
  std::function<void(Module&)> mutate;
  std::string expected;  // exact message
};

class CompareMutationTest : public ::testing::TestWithParam<Mutation> {};

TEST_P(CompareMutationTest, ReportsFirstDifference) {
  auto a = MakeModule();
  auto b = MakeModule();
  GetParam().mutate(*b);
  absl::Status s = CompareModules(*a, *b);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(s.message()), GetParam().expected);
}

std::vector<Mutation> Mutations() {
  return {
      {"ModuleName", [](Module& m) { m.set_name("n"); },
       "module header: name m vs n"},
      {"Scheduled", [](Module& m) { m.set_is_scheduled(true); },
       "module header: is_scheduled false vs true"},
      {"Partitions", [](Module& m) { m.set_num_partitions(4); },
       "module header: num_partitions 2 vs 4"},
      {"EntryLayout",
       [](Module& m) { m.set_entry_computation_layout("{()->()}"); },
       "module header: entry_computation_layout "
       "{(f32[4]{0}, f32[4]{0})->f32[4]{0}} vs {()->()}"},
      {"HeaderFrontend",
       [](Module& m) { m.frontend_attributes()[0].value = "w"; },
       "module header: frontend attribute k \"v\" vs \"w\""},
      {"HeaderRaw", [](Module& m) { m.raw_header_attributes().clear(); },
       "module header: attribute input_output_alias only in first module"},
      {"StackFrames",
       [](Module& m) { m.stack_frames().file_names[0] = "b.py"; },
       "module stack frames: FileNames 1 \"a.py\" vs \"b.py\""},
      {"ComputationName",
       [](Module& m) { m.FindComputation("add")->set_name("add2"); },
       "module: computation 0 is %add vs %add2"},
      {"ExtraComputation",
       [](Module& m) {
         Computation* c =
             m.AddComputation(std::make_unique<Computation>("extra"));
         c->set_root(Param(c, 0, "p", F32({})));
       },
       "module: computation count 2 vs 3 (%extra only in second module)"},
      {"ExecutionThread",
       [](Module& m) { m.FindComputation("add")->set_execution_thread("t"); },
       "computation add: execution_thread \"\" vs \"t\""},
      {"Root", [](Module& m) { m.entry()->set_root(Find(m, "main", "ar")); },
       "computation main: root %s vs %ar"},
      {"InstructionName",
       [](Module& m) { Find(m, "main", "c")->set_name("c2"); },
       "computation main: instruction at position 2 is %c vs %c2"},
      {"Shape",
       [](Module& m) {
         Shape s(PrimitiveType::kF32, {4});  // layout dropped
         Find(m, "main", "s")->set_shape(s);
       },
       "computation main, instruction s: shape f32[4]{0} vs f32[4]"},
      {"Operand",
       [](Module& m) {
         Find(m, "main", "s")->ReplaceOperandWith(1, Find(m, "main", "a"));
       },
       "computation main, instruction s: operand 1 is %c vs %a"},
      {"ControlPredecessor",
       [](Module& m) {
         Find(m, "main", "s")->RemoveControlPredecessor(Find(m, "main", "b"));
       },
       "computation main, instruction s: control predecessor count 1 vs 0"},
      {"CalledComputation",
       [](Module& m) {
         Find(m, "main", "ar")->mutable_called_computations()[0] = m.entry();
       },
       "computation main, instruction ar: called computation 0 is %add vs "
       "%main"},
      {"ChannelId",
       [](Module& m) { Find(m, "main", "ar")->mutable_attrs().channel_id = 7; },
       "computation main, instruction ar: channel_id 1 vs 7"},
      {"ReplicaGroups",
       [](Module& m) {
         auto& rg = Find(m, "main", "ar")
                        ->mutable_attrs()
                        .replica_groups.mutable_value();
         rg.format = ReplicaGroups::Format::kIota;
         rg.iota_num_groups = 1;
         rg.iota_group_size = 2;
         rg.iota_reshape_dims = {2};
       },
       "computation main, instruction ar: replica_groups {{0,1}} vs "
       "[1,2]<={2}"},
      {"Literal",
       [](Module& m) {
         Find(m, "main", "c")->mutable_attrs().literal->Set<float>(2, 9.0f);
       },
       "computation main, instruction c: literal differs at element 2: "
       "{0, 1.5, 3, 4.5} vs {0, 1.5, 9, 4.5}"},
      {"LiteralElided",
       [](Module& m) {
         *Find(m, "main", "c")->mutable_attrs().literal =
             Literal::Elided(F32({4}));
       },
       "computation main, instruction c: literal with values vs elided"},
      {"Metadata",
       [](Module& m) {
         Find(m, "main", "ar")->mutable_attrs().metadata.stack_frame_id = 2;
       },
       "computation main, instruction ar: metadata stack_frame_id 1 vs 2"},
      {"BackendConfig",
       [](Module& m) {
         Find(m, "main", "ar")->mutable_attrs().backend_config = "{}";
       },
       "computation main, instruction ar: backend_config \"{\\\"x\\\":1}\" "
       "vs \"{}\""},
      {"BackendConfigForm",
       [](Module& m) {
         Find(m, "main", "ar")->mutable_attrs().backend_config_is_raw = false;
       },
       "computation main, instruction ar: backend_config form raw vs "
       "quoted"},
      {"Sharding",
       [](Module& m) {
         Find(m, "main", "ar")->mutable_attrs().sharding = "{manual}";
       },
       "computation main, instruction ar: sharding {replicated} vs "
       "{manual}"},
      {"FrontendAttribute",
       [](Module& m) {
         SetFrontendAttribute(
             Find(m, "main", "ar")->mutable_attrs().frontend_attributes, "c",
             "3");
       },
       "computation main, instruction ar: frontend attribute c only in "
       "second module"},
      {"RawAttribute",
       [](Module& m) {
         Find(m, "main", "ar")->mutable_attrs().raw[0].value = "{2}";
       },
       "computation main, instruction ar: attribute mystery {1} vs {2}"},
      {"Opcode",
       [](Module& m) {
         Computation* main = m.entry();
         auto* s = Find(m, "main", "s");
         auto mul =
             std::make_unique<Instruction>(Opcode::kMultiply, "s2", F32({4}));
         Instruction* added = main->AddInstruction(std::move(mul));
         added->AppendOperand(s->operand(0));
         added->AppendOperand(s->operand(1));
         main->set_root(added);
         s->DropAllControlDependencies();
         (void)main->RemoveInstruction(s);
         added->set_name("s");
       },
       "computation main, instruction s: opcode add vs multiply"},
      {"Dimensions",
       [](Module& m) {
         Find(m, "main", "ar")->mutable_attrs().has_dimensions = true;
       },
       "computation main, instruction ar: dimensions <absent> vs {}"},
  };
}

INSTANTIATE_TEST_SUITE_P(All, CompareMutationTest,
                         ::testing::ValuesIn(Mutations()),
                         [](const ::testing::TestParamInfo<Mutation>& info) {
                           return info.param.label;
                         });

TEST(CompareTest, InstructionOrderOption) {
  auto a = MakeModule();
  auto b = MakeModule();
  Computation* main = b->entry();
  std::vector<Instruction*> order;
  for (const auto& i : main->instructions()) order.push_back(i.get());
  std::swap(order[0], order[1]);
  ASSERT_TRUE(main->SetInstructionOrder(order).ok());
  absl::Status s = CompareModules(*a, *b);
  EXPECT_EQ(std::string(s.message()),
            "computation main: instruction at position 0 is %a vs %b");
  CompareOptions unordered;
  unordered.compare_instruction_order = false;
  EXPECT_TRUE(CompareModules(*a, *b, unordered).ok());
}

TEST(CompareTest, OptionsSkipMetadataAndBackendConfig) {
  auto a = MakeModule();
  auto b = MakeModule();
  Instruction* ar = Find(*b, "main", "ar");
  ar->mutable_attrs().metadata.op_name = "other";
  ar->mutable_attrs().backend_config = "{}";
  EXPECT_FALSE(CompareModules(*a, *b).ok());
  CompareOptions loose;
  loose.compare_metadata = false;
  loose.compare_backend_config = false;
  EXPECT_TRUE(CompareModules(*a, *b, loose).ok());
}

TEST(CompareTest, CompareInstructions) {
  auto a = MakeModule();
  auto b = MakeModule();
  EXPECT_TRUE(
      CompareInstructions(*Find(*a, "main", "ar"), *Find(*b, "main", "ar"))
          .ok());
  absl::Status s =
      CompareInstructions(*Find(*a, "main", "ar"), *Find(*b, "main", "s"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("instruction ar: name"));
}

}  // namespace
}  // namespace hloverlap
