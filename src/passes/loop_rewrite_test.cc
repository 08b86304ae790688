// LoopRewrite::AppendLoopState, CopyLoop, ReplaceAtCommit and
// Commit(what): the appended state, an edited copy, the rollback of a
// commit that does not verify and of an uncommitted rewrite.
#include "passes/loop_rewrite.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "hlo/ir_util.h"
#include "hlo/parser.h"
#include "hlo/printer.h"
#include "hlo/verifier.h"

namespace hloverlap {
namespace {

// A counted loop; `r` reads its state through get-tuple-element.
constexpr char kComputations[] = R"(
HloModule m

cond {
  p = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[2] get-tuple-element(p), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  y = f32[2] add(x, x)
  ROOT t = (s32[], f32[2]) tuple(j, y)
}
)";
constexpr char kLoop[] = R"(
ENTRY main {
  x = f32[2] parameter(0)
  e = f32[4] parameter(1)
  z = s32[] constant(0)
  s = (s32[], f32[2]) tuple(z, x), metadata={op_name="init"}
  w = (s32[], f32[2]) while(s), condition=cond, body=body
  ROOT r = f32[2] get-tuple-element(w), index=1
}
)";
// The loop is the entry's root: its users see the state through a tuple.
constexpr char kRootLoop[] = R"(
ENTRY main {
  x = f32[2] parameter(0)
  e = f32[4] parameter(1)
  z = s32[] constant(0)
  s = (s32[], f32[2]) tuple(z, x)
  ROOT w = (s32[], f32[2]) while(s), condition=cond, body=body
}
)";

std::unique_ptr<Module> Parse(const char* entry) {
  absl::StatusOr<std::unique_ptr<Module>> m =
      ParseHloModule(std::string(kComputations) + entry);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

Instruction* Find(const Computation& c, std::string_view name) {
  for (const auto& i : c.instructions()) {
    if (i->name() == name) return i.get();
  }
  return nullptr;
}

TEST(LoopRewrite, AppendLoopStateCarriesNewElements) {
  std::unique_ptr<Module> m = Parse(kLoop);
  ASSERT_NE(m, nullptr);
  Computation* entry = m->entry();
  Instruction* w = Find(*entry, "w");
  LoopRewrite txn(*m);
  absl::StatusOr<AppendedState> st =
      txn.AppendLoopState(w, {Find(*entry, "e")});
  ASSERT_TRUE(st.ok()) << st.status();
  ASSERT_EQ(st->reads.size(), 1u);
  EXPECT_EQ(st->reads[0]->name(), "e.carried");
  EXPECT_EQ(st->map.at(w->while_body()->root())->operand_count(), 3);
  ASSERT_TRUE(txn.Commit("does not verify: ").ok());
  EXPECT_TRUE(VerifyModule(*m).ok()) << VerifyModule(*m);
  const std::string text = PrintModule(*m);
  // Same names, the old loop and computations gone, the element appended
  // and passed through; the init tuple keeps its metadata.
  EXPECT_NE(text.find("%e.carried = f32[4] get-tuple-element(%p.1), index=2"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("ROOT %t = (s32[], f32[2], f32[4]) "
                      "tuple(%j, %y, %e.carried)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("%s = (s32[], f32[2], f32[4]) tuple(%z, %x.1, %e), "
                      "metadata={op_name=\"init\"}"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("%w = (s32[], f32[2], f32[4]) while(%s), "
                      "condition=%cond, body=%body"),
            std::string::npos)
      << text;
  EXPECT_EQ(m->computations().size(), 3u);
}

TEST(LoopRewrite, AppendLoopStateBridgesARootLoop) {
  std::unique_ptr<Module> m = Parse(kRootLoop);
  ASSERT_NE(m, nullptr);
  Computation* entry = m->entry();
  LoopRewrite txn(*m);
  ASSERT_TRUE(txn.AppendLoopState(entry->root(), {Find(*entry, "e")}).ok());
  ASSERT_TRUE(txn.Commit("does not verify: ").ok());
  ASSERT_TRUE(VerifyModule(*m).ok()) << VerifyModule(*m);
  // The entry's result is still the old state, read from the new loop.
  EXPECT_EQ(entry->root()->opcode(), Opcode::kTuple);
  EXPECT_EQ(entry->root()->shape().tuple_size(), 2);
  EXPECT_EQ(entry->root()->operand(1)->operand(0)->shape().tuple_size(), 3);
  EXPECT_EQ(m->computations().size(), 3u);
}

// AppendLoopStateOptions: a fresh init tuple right before the loop (the
// old one goes at commit), the read named and placed before an instruction
// of the body.
TEST(LoopRewrite, AppendLoopStateOptionsNameAndPlace) {
  std::unique_ptr<Module> m = Parse(kLoop);
  ASSERT_NE(m, nullptr);
  Computation* entry = m->entry();
  Instruction* w = Find(*entry, "w");
  AppendLoopStateOptions options;
  options.init_name = "s.grown";
  options.read_names = {"acc"};
  options.reads_before = Find(*w->while_body(), "y");
  LoopRewrite txn(*m);
  absl::StatusOr<AppendedState> st =
      txn.AppendLoopState(w, {Find(*entry, "e")}, options);
  ASSERT_TRUE(st.ok()) << st.status();
  ASSERT_TRUE(txn.Commit("does not verify: ").ok());
  EXPECT_TRUE(VerifyModule(*m).ok()) << VerifyModule(*m);
  const std::string text = PrintModule(*m);
  EXPECT_NE(text.find("  %acc = f32[4] get-tuple-element(%p.1), index=2\n"
                      "  %y = f32[2] add(%x, %x)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  %s.grown = (s32[], f32[2], f32[4]) "
                      "tuple(%z, %x.1, %e)\n"
                      "  %w = (s32[], f32[2], f32[4]) while(%s.grown)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("%s ="), std::string::npos) << text;
}

TEST(LoopRewrite, AppendLoopStateReadsBeforeOutsideTheBodyFails) {
  std::unique_ptr<Module> m = Parse(kLoop);
  ASSERT_NE(m, nullptr);
  const std::string before = PrintModule(*m);
  Computation* entry = m->entry();
  AppendLoopStateOptions options;
  options.reads_before = Find(*entry, "r");
  {
    LoopRewrite txn(*m);
    absl::StatusOr<AppendedState> st =
        txn.AppendLoopState(Find(*entry, "w"), {Find(*entry, "e")}, options);
    EXPECT_FALSE(st.ok());
  }
  EXPECT_EQ(PrintModule(*m), before);
}

TEST(LoopRewrite, AppendLoopStateCommitThatDoesNotVerifyRollsBack) {
  std::unique_ptr<Module> m = Parse(kLoop);
  ASSERT_NE(m, nullptr);
  const std::string before = PrintModule(*m);
  Computation* entry = m->entry();
  LoopRewrite txn(*m);
  absl::StatusOr<AppendedState> st =
      txn.AppendLoopState(Find(*entry, "w"), {Find(*entry, "e")});
  ASSERT_TRUE(st.ok()) << st.status();
  // A body that no longer type-checks: the new element read as f32[2].
  st->reads[0]->mutable_shape() = st->reads[0]->operand(0)->shape();
  absl::Status s = txn.Commit("rewritten loop does not verify: ");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("rewritten loop does not verify"),
            std::string::npos)
      << s;
  EXPECT_EQ(PrintModule(*m), before);
  EXPECT_TRUE(VerifyModule(*m).ok());
}

TEST(LoopRewrite, NotCommittedRollsBack) {
  std::unique_ptr<Module> m = Parse(kLoop);
  ASSERT_NE(m, nullptr);
  const std::string before = PrintModule(*m);
  {
    Computation* entry = m->entry();
    LoopRewrite txn(*m);
    ASSERT_TRUE(
        txn.AppendLoopState(Find(*entry, "w"), {Find(*entry, "e")}).ok());
  }
  EXPECT_EQ(PrintModule(*m), before);
  // A copy and a replacement at commit, not committed.
  {
    Computation* entry = m->entry();
    LoopRewrite txn(*m);
    ASSERT_TRUE(txn.CopyLoop(Find(*entry, "w")).ok());
    ASSERT_TRUE(
        txn.ReplaceAtCommit(Find(*entry, "r"), Find(*entry, "x.1")).ok());
  }
  EXPECT_EQ(PrintModule(*m), before);
  EXPECT_EQ(m->computations().size(), 3u);
}

TEST(LoopRewrite, CopyLoopEditedAndCommittedReplacesTheLoop) {
  std::unique_ptr<Module> m = Parse(kLoop);
  ASSERT_NE(m, nullptr);
  Computation* entry = m->entry();
  Instruction* w = Find(*entry, "w");
  Instruction* r = Find(*entry, "r");
  LoopRewrite txn(*m);
  absl::StatusOr<AppendedState> st = txn.CopyLoop(w);
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_TRUE(st->reads.empty());
  EXPECT_EQ(st->loop->name(), "w");
  // The copy doubles twice per iteration; `r` is read again after the loop.
  Instruction* y = st->map.at(Find(*w->while_body(), "y"));
  Instruction* y2 =
      st->body->AddInstruction(Opcode::kAdd, "y2", y->shape(), {y, y});
  st->body->root()->ReplaceOperandWith(1, y2);
  Instruction* r2 =
      txn.Add(*entry, NewGetTupleElement(*m, "r2", st->loop, 1), nullptr);
  ASSERT_TRUE(txn.ReplaceAtCommit(r, r2).ok());
  ASSERT_TRUE(txn.Commit("copied loop does not verify: ").ok());
  EXPECT_TRUE(VerifyModule(*m).ok()) << VerifyModule(*m);
  const std::string text = PrintModule(*m);
  EXPECT_NE(text.find("ROOT %t = (s32[], f32[2]) tuple(%j, %y2)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("ROOT %r2 = f32[2] get-tuple-element(%w), index=1"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("%r ="), std::string::npos) << text;
  EXPECT_EQ(m->computations().size(), 3u);
}

TEST(LoopRewrite, ReplaceAtCommitNeedsTheSameShape) {
  std::unique_ptr<Module> m = Parse(kLoop);
  ASSERT_NE(m, nullptr);
  Computation* entry = m->entry();
  LoopRewrite txn(*m);
  EXPECT_FALSE(txn.ReplaceAtCommit(Find(*entry, "r"), Find(*entry, "e")).ok());
}

TEST(LoopRewrite, CopyLoopWithNewStateUsedWholeRollsBack) {
  std::unique_ptr<Module> m = Parse(kRootLoop);
  ASSERT_NE(m, nullptr);
  const std::string before = PrintModule(*m);
  Computation* entry = m->entry();
  LoopRewrite txn(*m);
  absl::StatusOr<AppendedState> st = txn.CopyLoop(Find(*entry, "w"));
  ASSERT_TRUE(st.ok()) << st.status();
  // A consistent copy with one more element, but the entry's root is the
  // loop itself: its users would see another state.
  const Shape s32 = Shape::Scalar(PrimitiveType::kS32);
  Instruction* z = Find(*entry, "z");
  ASSERT_NE(z, nullptr);
  Instruction* init =
      txn.Add(*entry, NewTuple("s2", {z, Find(*entry, "x.1"), z}), st->loop);
  st->loop->ReplaceOperandWith(0, init);
  Instruction* root = st->body->root();
  root->AppendOperand(root->operand(0));
  for (Instruction* i :
       {st->loop, st->body->parameter(0), root, st->condition->parameter(0)}) {
    i->mutable_shape().mutable_tuple_shapes().push_back(s32);
  }
  absl::Status s = txn.Commit("copied loop does not verify: ");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message())
                .find("w changes its state but is used "
                      "whole"),
            std::string::npos)
      << s;
  EXPECT_EQ(PrintModule(*m), before);
  EXPECT_TRUE(VerifyModule(*m).ok());
}

}  // namespace
}  // namespace hloverlap
