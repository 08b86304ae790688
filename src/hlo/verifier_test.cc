#include "hlo/verifier.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "hlo/module.h"
#include "hlo/parser.h"

namespace hloverlap {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

Shape F32(absl::InlinedVector<int64_t, 6> dims) {
  return Shape(PrimitiveType::kF32, std::move(dims));
}
Shape BF16(absl::InlinedVector<int64_t, 6> dims) {
  return Shape(PrimitiveType::kBF16, std::move(dims));
}
Shape S32(absl::InlinedVector<int64_t, 6> dims) {
  return Shape(PrimitiveType::kS32, std::move(dims));
}
Shape U32() { return Shape::Scalar(PrimitiveType::kU32); }
Shape Pred() { return Shape::Scalar(PrimitiveType::kPred); }
Shape Tuple(std::vector<Shape> elements) {
  return Shape::Tuple(std::move(elements));
}

// Builds modules instruction by instruction.
class VerifierTest : public ::testing::Test {
 protected:
  Computation* NewComputation(const std::string& name) {
    return module_->AddComputation(std::make_unique<Computation>(name));
  }
  Computation* Entry() {
    if (entry_ == nullptr) {
      entry_ = NewComputation("main");
      module_->set_entry(entry_);
    }
    return entry_;
  }
  Instruction* Param(Computation* c, int64_t number, Shape shape,
                     std::string name = "") {
    if (name.empty()) name = c->name() + ".p" + std::to_string(number);
    auto inst = std::make_unique<Instruction>(Opcode::kParameter,
                                              std::move(name), shape);
    inst->mutable_attrs().parameter_number = number;
    return c->AddInstruction(std::move(inst));
  }
  Instruction* Add(Computation* c, Opcode op, std::string name, Shape shape,
                   std::vector<Instruction*> operands = {}) {
    return c->AddInstruction(op, std::move(name), std::move(shape), operands);
  }
  // (T, T) -> T add reducer.
  Computation* Reducer(const std::string& name,
                       PrimitiveType t = PrimitiveType::kF32) {
    Computation* r = NewComputation(name);
    Instruction* a = Param(r, 0, Shape::Scalar(t));
    Instruction* b = Param(r, 1, Shape::Scalar(t));
    r->set_root(Add(r, Opcode::kAdd, name + ".add", Shape::Scalar(t), {a, b}));
    return r;
  }
  std::vector<std::string> Verify() {
    return VerifyModuleAll(*module_, options_);
  }

  std::unique_ptr<Module> module_ = std::make_unique<Module>("m");
  Computation* entry_ = nullptr;
  VerifierOptions options_;
};

// --- Valid modules --------------------------------------------------------

TEST_F(VerifierTest, ValidModuleHasNoProblems) {
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({8}));
  Instruction* q = Param(c, 1, F32({8}));
  Instruction* add = Add(c, Opcode::kAdd, "add.1", F32({8}), {p, q});
  Instruction* cmp = Add(c, Opcode::kCompare, "cmp",
                         Shape(PrimitiveType::kPred, {8}), {add, q});
  c->set_root(Add(c, Opcode::kTuple, "t",
                  Tuple({F32({8}), Shape(PrimitiveType::kPred, {8})}),
                  {add, cmp}));
  EXPECT_THAT(Verify(), IsEmpty());
  EXPECT_TRUE(VerifyModule(*module_).ok());
}

// The quick pass proves only modules stored in the usual order (callees
// before callers, operands before users); others go to the full checks,
// which accept them when they are sound.
TEST_F(VerifierTest, UnusualOrderGoesToTheFullChecks) {
  Computation* c = Entry();           // listed first ...
  Computation* sum = Reducer("sum");  // ... its callee after it
  Instruction* p = Param(c, 0, F32({}));
  Instruction* call = Add(c, Opcode::kCall, "call", F32({}), {p, p});
  call->mutable_called_computations() = {sum};
  c->set_root(call);
  EXPECT_FALSE(verifier_internal::QuickPassAccepts(*module_));
  EXPECT_THAT(Verify(), IsEmpty());

  // Callee first, but a user stored before its operand.
  auto m = std::make_unique<Module>("m2");
  Computation* r = m->AddComputation(std::make_unique<Computation>("main"));
  m->set_entry(r);
  Instruction* q = r->AddInstruction(Opcode::kParameter, "q", F32({4}), {});
  Instruction* neg = r->AddInstruction(Opcode::kNegate, "neg", F32({4}), {q});
  Instruction* abs = r->AddInstruction(Opcode::kAbs, "abs", F32({4}), {neg});
  r->set_root(abs);
  EXPECT_TRUE(verifier_internal::QuickPassAccepts(*m));
  ASSERT_TRUE(r->SetInstructionOrder({abs, q, neg}).ok());
  EXPECT_FALSE(verifier_internal::QuickPassAccepts(*m));
  EXPECT_THAT(VerifyModuleAll(*m), IsEmpty());
  EXPECT_THAT(verifier_internal::FullChecks(*m), IsEmpty());
}

TEST_F(VerifierTest, VerifyModuleSummarizesProblems) {
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({8}));
  Instruction* a = Add(c, Opcode::kNegate, "a", F32({4}), {p});
  c->set_root(Add(c, Opcode::kNegate, "b", F32({5}), {a}));
  absl::Status s = VerifyModule(*module_);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("computation main, instruction a: expected result "
                        "shape f32[8] (operand f32[8]), found f32[4] (and 1 "
                        "more problem)"));
}

// --- Operand counts ---------------------------------------------------------

TEST_F(VerifierTest, OperandCountUnaryBinaryTernary) {
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({8}));
  Add(c, Opcode::kNegate, "neg", F32({8}), {p, p});
  Add(c, Opcode::kMultiply, "mul", F32({8}), {p});
  Add(c, Opcode::kSelect, "sel", F32({8}), {p, p});
  Add(c, Opcode::kIota, "iota", F32({8}), {p});
  c->set_root(p);
  EXPECT_THAT(
      Verify(),
      ElementsAre(
          "computation main, instruction neg: expected 1 operand for negate, "
          "found 2",
          "computation main, instruction mul: expected 2 operands for "
          "multiply, found 1",
          "computation main, instruction sel: expected 3 operands for "
          "select, found 2",
          "computation main, instruction iota: expected 0 operands for iota, "
          "found 1"));
}

TEST_F(VerifierTest, OperandCountDynamicSliceAndUpdate) {
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({8, 4}));
  Instruction* i = Param(c, 1, S32({}));
  Instruction* v = Param(c, 2, S32({2}));
  auto* ds = Add(c, Opcode::kDynamicSlice, "ds", F32({2, 4}), {p, i});
  ds->mutable_attrs().dynamic_slice_sizes = {2, 4};
  auto* ds_vec = Add(c, Opcode::kDynamicSlice, "ds_vec", F32({2, 4}), {p, v});
  ds_vec->mutable_attrs().dynamic_slice_sizes = {2, 4};
  Add(c, Opcode::kDynamicUpdateSlice, "dus", F32({8, 4}), {p, p, i});
  c->set_root(p);
  EXPECT_THAT(
      Verify(),
      ElementsAre(
          "computation main, instruction ds: expected 3 operands for "
          "dynamic-slice (operand and 2 scalar indices for f32[8,4]) or 2 "
          "with an index vector, found 2",
          "computation main, instruction dus: expected 4 operands for "
          "dynamic-update-slice (operand, update and 2 scalar indices for "
          "f32[8,4]) or 3 with an index vector, found 3"));
}

TEST_F(VerifierTest, OperandCountReduceCallAndCollectives) {
  Computation* sum = Reducer("sum");
  Computation* callee = NewComputation("callee");
  Instruction* cp = Param(callee, 0, F32({}));
  callee->set_root(cp);
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({8}));
  Instruction* red = Add(c, Opcode::kReduce, "red", F32({}), {p});
  red->mutable_called_computations() = {sum};
  Instruction* call = Add(c, Opcode::kCall, "call", F32({}), {p, p});
  call->mutable_called_computations() = {callee};
  Instruction* ar = Add(c, Opcode::kAllReduce, "ar", F32({8}), {});
  ar->mutable_called_computations() = {sum};
  c->set_root(p);
  EXPECT_THAT(
      Verify(),
      ElementsAre(
          "computation main, instruction red: expected an even number (2k > "
          "0) of operands for reduce (k inputs, k init values), found 1",
          "computation main, instruction call: expected 1 operands (the "
          "parameters of callee callee), found 2",
          "computation main, instruction ar: expected at least 1 operand for "
          "all-reduce, found 0"));
}

// --- Structure ------------------------------------------------------------

TEST_F(VerifierTest, OperandFromAnotherComputation) {
  Computation* other = NewComputation("other");
  Instruction* op = Param(other, 0, F32({8}));
  other->set_root(op);
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({8}));
  c->set_root(Add(c, Opcode::kAdd, "add", F32({8}), {p, op}));
  EXPECT_THAT(Verify(),
              ElementsAre("computation main, instruction add: operand 1 "
                          "(other.p0) is defined in computation other, not "
                          "in this computation"));
}

TEST_F(VerifierTest, UserNotInModule) {
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({8}));
  c->set_root(p);
  auto orphan =
      std::make_unique<Instruction>(Opcode::kNegate, "orphan", F32({8}));
  orphan->AppendOperand(p);
  EXPECT_THAT(Verify(),
              ElementsAre("computation main, instruction main.p0: user list "
                          "contains something that is not an instruction of "
                          "this module"));
  orphan->DetachOperands();
}

TEST_F(VerifierTest, RootMustBelongToComputation) {
  Computation* other = NewComputation("other");
  Instruction* op = Param(other, 0, F32({8}));
  other->set_root(op);
  Computation* c = Entry();
  Param(c, 0, F32({8}));
  c->set_root(op);
  EXPECT_THAT(Verify(),
              ElementsAre("computation main: root instruction does not "
                          "belong to the computation"));
}

TEST_F(VerifierTest, MissingRoot) {
  Computation* c = Entry();
  Param(c, 0, F32({8}));
  EXPECT_THAT(Verify(),
              ElementsAre("computation main: has no root instruction"));
}

TEST_F(VerifierTest, ParameterNumbersWithGap) {
  Computation* c = Entry();
  Instruction* p0 = Param(c, 0, F32({8}), "p0");
  Param(c, 2, F32({8}), "p2");
  c->set_root(p0);
  EXPECT_THAT(Verify(),
              ElementsAre("computation main: parameters must be numbered "
                          "0..1 without gaps: parameter 1 is missing (next is "
                          "2, p2)"));
}

TEST_F(VerifierTest, ParameterNumbersDuplicated) {
  Computation* c = Entry();
  Instruction* p0 = Param(c, 0, F32({8}), "p0");
  Param(c, 0, F32({8}), "p0b");
  c->set_root(p0);
  EXPECT_THAT(Verify(),
              ElementsAre("computation main, instruction p0b: parameter "
                          "number 0 is also used by p0"));
}

TEST_F(VerifierTest, CalledComputationNotInModule) {
  auto stray = std::make_unique<Computation>("stray");
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({8}));
  Instruction* call = Add(c, Opcode::kCall, "call", F32({8}), {p});
  call->mutable_called_computations() = {stray.get()};
  c->set_root(call);
  EXPECT_THAT(Verify(),
              ElementsAre("computation main, instruction call: called "
                          "computation 0 is not a computation of this "
                          "module"));
}

TEST_F(VerifierTest, MissingCalledComputations) {
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({8}));
  Instruction* w = Add(c, Opcode::kWhile, "while", F32({8}), {p});
  Instruction* r = Add(c, Opcode::kReduce, "red", F32({}), {p, p});
  r->mutable_called_computations() = {nullptr};
  c->set_root(w);
  EXPECT_THAT(
      Verify(),
      ElementsAre("computation main, instruction while: expected 2 called "
                  "computations (condition, body), found 0",
                  "computation main, instruction red: called computation 0 "
                  "is missing"));
}

TEST_F(VerifierTest, NothingCallsTheEntry) {
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({8}));
  Instruction* call = Add(c, Opcode::kCall, "call", F32({8}), {p});
  call->mutable_called_computations() = {c};
  c->set_root(call);
  EXPECT_THAT(
      Verify(),
      ElementsAre(
          "computation main: calls computation main, which is on the call "
          "path leading here (recursive call graph)",
          "computation main, instruction call: calls the entry computation "
          "main"));
}

TEST_F(VerifierTest, RecursiveCallGraph) {
  Computation* a = NewComputation("a");
  Computation* b = NewComputation("b");
  Instruction* ap = Param(a, 0, F32({}));
  Instruction* acall = Add(a, Opcode::kCall, "acall", F32({}), {ap});
  acall->mutable_called_computations() = {b};
  a->set_root(acall);
  Instruction* bp = Param(b, 0, F32({}));
  Instruction* bcall = Add(b, Opcode::kCall, "bcall", F32({}), {bp});
  bcall->mutable_called_computations() = {a};
  b->set_root(bcall);
  Computation* c = Entry();
  c->set_root(Param(c, 0, F32({})));
  EXPECT_THAT(Verify(),
              ElementsAre("computation b: calls computation a, which is on "
                          "the call path leading here (recursive call "
                          "graph)"));
}

TEST_F(VerifierTest, NamesUniqueInModule) {
  Computation* other = NewComputation("main2");
  Instruction* op = Param(other, 0, F32({8}), "x");
  other->set_root(op);
  Computation* dup = NewComputation("main2");
  dup->set_root(Param(dup, 0, F32({8}), "y"));
  Computation* c = Entry();
  c->set_root(Param(c, 0, F32({8}), "x"));
  EXPECT_THAT(
      Verify(),
      ElementsAre("computation main2: name is not unique in the module "
                  "(another computation has it)",
                  "computation main, instruction x: name is not unique in the "
                  "module (also used by an instruction of computation "
                  "main2)"));
}

TEST_F(VerifierTest, OperandCycle) {
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({8}));
  Instruction* a = Add(c, Opcode::kNegate, "a", F32({8}), {p});
  Instruction* b = Add(c, Opcode::kNegate, "b", F32({8}), {a});
  a->ReplaceOperandWith(0, b);
  c->set_root(b);
  EXPECT_THAT(Verify(), ElementsAre(HasSubstr(
                            "which depends on it (cycle through operands or "
                            "control predecessors)")));
}

// Not in a topological stored order, but acyclic: accepted (the cycle check
// only searches when some edge points forwards).
TEST_F(VerifierTest, StoredOrderNotTopologicalIsAccepted) {
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({8}));
  Instruction* a = Add(c, Opcode::kNegate, "a", F32({8}), {p});
  Instruction* later = Add(c, Opcode::kNegate, "later", F32({8}), {p});
  Instruction* b = Add(c, Opcode::kNegate, "b", F32({8}), {later});
  a->ReplaceOperandWith(0, b);  // a (stored 2nd) now reads b (stored 4th)
  a->AddControlPredecessor(later);
  c->set_root(a);
  EXPECT_THAT(Verify(), IsEmpty());
}

// Users and control successors beyond the length that is scanned are found
// through the verifier's edge index; a cycle through such a value is found.
TEST_F(VerifierTest, WideFanOutEdgesAndCycle) {
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({8}));
  std::vector<Instruction*> users;
  for (int k = 0; k < 40; ++k) {
    users.push_back(
        Add(c, Opcode::kNegate, "n" + std::to_string(k), F32({8}), {p}));
    if (k > 0) users.back()->AddControlPredecessor(users.front());
  }
  Instruction* t = Add(c, Opcode::kTuple, "t",
                       Shape::Tuple(std::vector<Shape>(40, F32({8}))), users);
  c->set_root(t);
  EXPECT_THAT(Verify(), IsEmpty());

  users.front()->AddControlPredecessor(users.back());
  EXPECT_THAT(Verify(), ElementsAre(HasSubstr(
                            "which depends on it (cycle through operands or "
                            "control predecessors)")));
}

TEST_F(VerifierTest, ControlPredecessorInAnotherComputation) {
  Computation* other = NewComputation("other");
  Instruction* op = Param(other, 0, F32({8}));
  other->set_root(op);
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({8}));
  Instruction* n = Add(c, Opcode::kNegate, "n", F32({8}), {p});
  n->AddControlPredecessor(op);
  c->set_root(n);
  EXPECT_THAT(Verify(),
              ElementsAre("computation main, instruction n: control "
                          "predecessor other.p0 is not in this computation"));
}

TEST_F(VerifierTest, AsyncComputationWithTwoStarts) {
  Computation* wrapped = NewComputation("wrapped");
  Instruction* wp = Param(wrapped, 0, F32({4}));
  wrapped->set_root(Add(wrapped, Opcode::kNegate, "wneg", F32({4}), {wp}));
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({4}));
  const Shape start_shape = Tuple({Tuple({F32({4})}), F32({4})});
  Instruction* s1 = Add(c, Opcode::kAsyncStart, "s1", start_shape, {p});
  s1->mutable_called_computations() = {wrapped};
  Instruction* s2 = Add(c, Opcode::kAsyncStart, "s2", start_shape, {p});
  s2->mutable_called_computations() = {wrapped};
  Instruction* d1 = Add(c, Opcode::kAsyncDone, "d1", F32({4}), {s1});
  Instruction* d2 = Add(c, Opcode::kAsyncDone, "d2", F32({4}), {s2});
  c->set_root(
      Add(c, Opcode::kTuple, "t", Tuple({F32({4}), F32({4})}), {d1, d2}));
  EXPECT_THAT(Verify(),
              ElementsAre("computation main, instruction s2: wrapped "
                          "computation wrapped is already called by "
                          "async-start s1 (each async computation needs its "
                          "own async-start)"));
}

// --- Shape rules ----------------------------------------------------------

TEST_F(VerifierTest, ElementwiseShapes) {
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({8}));
  Instruction* q = Param(c, 1, F32({4}));
  Add(c, Opcode::kAdd, "add", F32({8}), {p, q});
  Add(c, Opcode::kCompare, "cmp", F32({8}), {p, p});
  Add(c, Opcode::kConvert, "cvt", BF16({4}), {p});
  Add(c, Opcode::kExponential, "exp", BF16({8}), {p});
  c->set_root(p);
  EXPECT_THAT(
      Verify(),
      ElementsAre(
          "computation main, instruction add: add: operands must have the "
          "same dimensions, found lhs f32[8] and rhs f32[4]",
          "computation main, instruction cmp: expected result shape pred[8] "
          "(operands f32[8], f32[8]), found f32[8]",
          "computation main, instruction cvt: expected result shape bf16[8] "
          "(operand f32[8] converted to bf16), found bf16[4]",
          "computation main, instruction exp: expected result shape f32[8] "
          "(operand f32[8]), found bf16[8]"));
}

TEST_F(VerifierTest, SelectAndClamp) {
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({8}));
  Instruction* pred = Param(c, 1, S32({8}));
  Add(c, Opcode::kSelect, "sel", F32({8}), {pred, p, p});
  Add(c, Opcode::kClamp, "clamp", F32({8}), {p, p, p});
  c->set_root(p);
  EXPECT_THAT(Verify(),
              ElementsAre("computation main, instruction sel: select: "
                          "predicate must be a pred array, found s32[8]"));
}

TEST_F(VerifierTest, Broadcast) {
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({4}));
  auto* ok = Add(c, Opcode::kBroadcast, "ok", F32({2, 4}), {p});
  ok->mutable_attrs().dimensions = {1};
  auto* bad = Add(c, Opcode::kBroadcast, "bad", F32({2, 4}), {p});
  bad->mutable_attrs().dimensions = {0};
  auto* wild = Add(c, Opcode::kBroadcast, "wild", F32({2, 4}), {p});
  wild->mutable_attrs().dimensions = {std::numeric_limits<int64_t>::min()};
  c->set_root(p);
  EXPECT_THAT(
      Verify(),
      ElementsAre(
          "computation main, instruction bad: broadcast: operand dimension 0 "
          "(size 4) of f32[4] maps to result dimension 0 of size 2",
          HasSubstr("computation main, instruction wild: broadcast: "
                    "dimensions={-9223372036854775808}: operand dimension 0 "
                    "maps to result dimension -9223372036854775808, out of "
                    "range for result rank 2")));
}

TEST_F(VerifierTest, ReshapeAndTranspose) {
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({2, 6}));
  Add(c, Opcode::kReshape, "reshape", F32({3, 5}), {p});
  auto* t = Add(c, Opcode::kTranspose, "t", F32({6, 2}), {p});
  t->mutable_attrs().dimensions = {1, 0};
  auto* t2 = Add(c, Opcode::kTranspose, "t2", F32({2, 6}), {p});
  t2->mutable_attrs().dimensions = {1, 0};
  auto* t3 = Add(c, Opcode::kTranspose, "t3", F32({2, 6}), {p});
  t3->mutable_attrs().dimensions = {0, 7};
  c->set_root(p);
  EXPECT_THAT(
      Verify(),
      ElementsAre(
          "computation main, instruction reshape: reshape: operand f32[2,6] "
          "has 12 elements but f32[3,5] has 15",
          "computation main, instruction t2: expected result shape f32[6,2] "
          "(operand f32[2,6] transposed by dimensions={1,0}), found f32[2,6]",
          "computation main, instruction t3: transpose dimensions {0,7}: "
          "dimension 7 is out of range for f32[2,6] (rank 2)"));
}

TEST_F(VerifierTest, Slice) {
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({10, 8}));
  auto* ok = Add(c, Opcode::kSlice, "ok", F32({4, 4}), {p});
  ok->mutable_attrs().slice = {{0, 10, 3}, {2, 6, 1}};
  auto* wrong = Add(c, Opcode::kSlice, "wrong", F32({3, 4}), {p});
  wrong->mutable_attrs().slice = {{0, 10, 3}, {2, 6, 1}};
  auto* oob = Add(c, Opcode::kSlice, "oob", F32({10, 1}), {p});
  oob->mutable_attrs().slice = {{0, 10, 1}, {8, 9, 1}};
  c->set_root(p);
  EXPECT_THAT(
      Verify(),
      ElementsAre(
          "computation main, instruction wrong: expected result shape "
          "f32[4,4] (operand f32[10,8] slice={[0:10:3], [2:6]}), found "
          "f32[3,4]",
          "computation main, instruction oob: slice dimension 1: limit 9 is "
          "out of range [8, 8] for operand f32[10,8]"));
}

TEST_F(VerifierTest, DynamicSliceAndUpdateSlice) {
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({8, 4}));
  Instruction* i = Param(c, 1, S32({}));
  Instruction* f = Param(c, 2, F32({}));
  Instruction* u = Param(c, 3, F32({1, 5}));
  auto* big = Add(c, Opcode::kDynamicSlice, "big", F32({2, 5}), {p, i, i});
  big->mutable_attrs().dynamic_slice_sizes = {2, 5};
  auto* fidx = Add(c, Opcode::kDynamicSlice, "fidx", F32({2, 4}), {p, i, f});
  fidx->mutable_attrs().dynamic_slice_sizes = {2, 4};
  Add(c, Opcode::kDynamicUpdateSlice, "dus", F32({8, 4}), {p, u, i, i});
  c->set_root(p);
  EXPECT_THAT(
      Verify(),
      ElementsAre(
          "computation main, instruction big: dynamic-slice dimension 1: "
          "slice size 5 is out of range [0, 4] for operand f32[8,4]",
          "computation main, instruction fidx: dynamic-slice: index 1 must "
          "be an integer scalar, found f32[]",
          "computation main, instruction dus: dynamic-update-slice dimension "
          "1: update f32[1,5] does not fit in operand f32[8,4]"));
}

TEST_F(VerifierTest, ConcatenateAndPad) {
  Computation* c = Entry();
  Instruction* a = Param(c, 0, F32({2, 3}));
  Instruction* b = Param(c, 1, F32({5, 3}));
  Instruction* zero = Param(c, 2, F32({}));
  auto* cat = Add(c, Opcode::kConcatenate, "cat", F32({8, 3}), {a, b});
  cat->mutable_attrs().dimensions = {0};
  auto* nodim = Add(c, Opcode::kConcatenate, "nodim", F32({7, 3}), {a, b});
  (void)nodim;
  auto* pad = Add(c, Opcode::kPad, "pad", F32({7, 5}), {a, zero});
  pad->mutable_attrs().padding = {{1, 2, 1}, {-1, 0, 1}};
  c->set_root(a);
  EXPECT_THAT(
      Verify(),
      ElementsAre(
          "computation main, instruction cat: expected result shape f32[7,3] "
          "(operands f32[2,3], f32[5,3] concatenated along dimension 0), "
          "found f32[8,3]",
          "computation main, instruction nodim: concatenate needs exactly "
          "one dimension in dimensions=, found {}",
          "computation main, instruction pad: expected result shape f32[6,4] "
          "(operand f32[2,3] padding=1_2_1x-1_0_1), found f32[7,5]"));
}

TEST_F(VerifierTest, Iota) {
  Computation* c = Entry();
  auto* ok = Add(c, Opcode::kIota, "ok", S32({4, 8}));
  ok->mutable_attrs().iota_dimension = 1;
  auto* bad = Add(c, Opcode::kIota, "bad", S32({4, 8}));
  bad->mutable_attrs().iota_dimension = 2;
  c->set_root(ok);
  EXPECT_THAT(Verify(),
              ElementsAre("computation main, instruction bad: iota: "
                          "iota_dimension=2 is out of range for s32[4,8] "
                          "(rank 2)"));
}

TEST_F(VerifierTest, DotMessageNamesOperandsAndContraction) {
  Computation* region = NewComputation("region_0.1");
  Instruction* lhs = Param(region, 0, F32({8, 4}));
  Instruction* rhs = Param(region, 1, F32({4, 16}));
  Instruction* dot =
      Add(region, Opcode::kDot, "dot.3", F32({8, 15}), {lhs, rhs});
  dot->mutable_attrs().dot->lhs_contracting_dims = {1};
  dot->mutable_attrs().dot->rhs_contracting_dims = {0};
  region->set_root(dot);
  Computation* c = Entry();
  c->set_root(Param(c, 0, F32({})));
  EXPECT_THAT(
      Verify(),
      ElementsAre("computation region_0.1, instruction dot.3: expected "
                  "result shape f32[8,16] (lhs f32[8,4] contracting {1}, rhs "
                  "f32[4,16] contracting {0}), found f32[8,15]"));
}

TEST_F(VerifierTest, DotContractingMismatchAndWideningOk) {
  Computation* c = Entry();
  Instruction* lhs = Param(c, 0, BF16({2, 8, 4}));
  Instruction* rhs = Param(c, 1, BF16({2, 5, 16}));
  Instruction* rhs_ok = Param(c, 2, BF16({2, 4, 16}));
  for (auto [name, r] : {std::pair{"bad", rhs}, std::pair{"wide", rhs_ok}}) {
    Instruction* dot = Add(c, Opcode::kDot, name, F32({2, 8, 16}), {lhs, r});
    auto& d = dot->mutable_attrs().dot.mutable_value();
    d.lhs_batch_dims = {0};
    d.rhs_batch_dims = {0};
    d.lhs_contracting_dims = {2};
    d.rhs_contracting_dims = {1};
  }
  c->set_root(lhs);
  EXPECT_THAT(Verify(),
              ElementsAre("computation main, instruction bad: dot: lhs "
                          "contracting dimension 2 (size 4) does not match "
                          "rhs contracting dimension 1 (size 5) (lhs "
                          "bf16[2,8,4], rhs bf16[2,5,16])"));
}

TEST_F(VerifierTest, Reduce) {
  Computation* sum = Reducer("sum");
  Computation* isum = Reducer("isum", PrimitiveType::kS32);
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({4, 8}));
  Instruction* zero = Param(c, 1, F32({}));
  auto* ok = Add(c, Opcode::kReduce, "ok", F32({4}), {p, zero});
  ok->mutable_attrs().dimensions = {1};
  ok->mutable_called_computations() = {sum};
  auto* dims = Add(c, Opcode::kReduce, "dims", F32({8}), {p, zero});
  dims->mutable_attrs().dimensions = {1};
  dims->mutable_called_computations() = {sum};
  auto* sig = Add(c, Opcode::kReduce, "sig", F32({4}), {p, zero});
  sig->mutable_attrs().dimensions = {1};
  sig->mutable_called_computations() = {isum};
  c->set_root(ok);
  EXPECT_THAT(
      Verify(),
      ElementsAre(
          "computation main, instruction dims: expected result shape f32[4] "
          "(inputs f32[4,8], f32[] reduced over {1} by sum), found f32[8]",
          "computation main, instruction sig: reducer (s32[], s32[]) -> "
          "s32[]: accumulator 0 s32[] does not match init value type f32"));
}

TEST_F(VerifierTest, VariadicReduce) {
  Computation* argmax = NewComputation("argmax");
  Instruction* a0 = Param(argmax, 0, F32({}));
  Instruction* a1 = Param(argmax, 1, S32({}));
  Param(argmax, 2, F32({}));
  Param(argmax, 3, S32({}));
  argmax->set_root(Add(argmax, Opcode::kTuple, "argmax.t",
                       Tuple({F32({}), S32({})}), {a0, a1}));
  Computation* c = Entry();
  Instruction* v = Param(c, 0, F32({4, 8}));
  Instruction* i = Param(c, 1, S32({4, 8}));
  Instruction* fz = Param(c, 2, F32({}));
  Instruction* iz = Param(c, 3, S32({}));
  auto* ok = Add(c, Opcode::kReduce, "ok", Tuple({F32({4}), S32({4})}),
                 {v, i, fz, iz});
  ok->mutable_attrs().dimensions = {1};
  ok->mutable_called_computations() = {argmax};
  auto* bad = Add(c, Opcode::kReduce, "bad", F32({4}), {v, i, fz, iz});
  bad->mutable_attrs().dimensions = {1};
  bad->mutable_called_computations() = {argmax};
  c->set_root(ok);
  EXPECT_THAT(Verify(),
              ElementsAre(HasSubstr("computation main, instruction bad: "
                                    "expected result shape (f32[4], s32[4]) "
                                    "(inputs f32[4,8], s32[4,8], f32[], s32[] "
                                    "reduced over {1} by argmax), found "
                                    "f32[4]")));
}

TEST_F(VerifierTest, TupleAndGetTupleElement) {
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({4}));
  Instruction* q = Param(c, 1, S32({}));
  Instruction* t =
      Add(c, Opcode::kTuple, "t", Tuple({F32({4}), F32({})}), {p, q});
  Instruction* ok = Add(c, Opcode::kGetTupleElement, "ok", F32({4}), {t});
  ok->mutable_attrs().tuple_index = 0;
  Instruction* oob = Add(c, Opcode::kGetTupleElement, "oob", F32({4}), {t});
  oob->mutable_attrs().tuple_index = 7;
  Instruction* wrong = Add(c, Opcode::kGetTupleElement, "wrong", F32({4}), {t});
  wrong->mutable_attrs().tuple_index = 1;
  Instruction* notuple =
      Add(c, Opcode::kGetTupleElement, "notuple", F32({4}), {p});
  (void)notuple;
  c->set_root(t);
  EXPECT_THAT(
      Verify(),
      ElementsAre(
          "computation main, instruction t: expected result shape (f32[4], "
          "s32[]) (a tuple of the operand shapes), found (f32[4], f32[])",
          "computation main, instruction oob: get-tuple-element: index=7 is "
          "out of range for operand (f32[4], f32[]) with 2 elements",
          "computation main, instruction wrong: expected result shape f32[] "
          "(element 1 of (f32[4], f32[])), found f32[4]",
          "computation main, instruction notuple: get-tuple-element: operand "
          "must be a tuple, found f32[4]"));
}

TEST_F(VerifierTest, WhileSignatures) {
  const Shape state = Tuple({S32({}), F32({4})});
  Computation* cond = NewComputation("cond");
  Instruction* cp = Param(cond, 0, state);
  Instruction* ci = Add(cond, Opcode::kGetTupleElement, "ci", S32({}), {cp});
  cond->set_root(Add(cond, Opcode::kCompare, "lt", Pred(), {ci, ci}));
  Computation* body = NewComputation("body");
  Instruction* bp = Param(body, 0, state);
  Instruction* bi = Add(body, Opcode::kGetTupleElement, "bi", S32({}), {bp});
  body->set_root(Add(body, Opcode::kTuple, "bt", Tuple({S32({})}), {bi}));
  Computation* c = Entry();
  Instruction* init = Param(c, 0, state);
  Instruction* w = Add(c, Opcode::kWhile, "while.1", state, {init});
  w->mutable_called_computations() = {cond, body};
  c->set_root(w);
  EXPECT_THAT(Verify(),
              ElementsAre("computation main, instruction while.1: while: body "
                          "returns (s32[]), expected the loop state (s32[], "
                          "f32[4]) (condition cond, body body)"));
}

TEST_F(VerifierTest, WhileResultMustEqualState) {
  const Shape state = Tuple({S32({})});
  Computation* cond = NewComputation("cond");
  Param(cond, 0, state);
  cond->set_root(Add(cond, Opcode::kConstant, "true", Pred()));
  Computation* body = NewComputation("body");
  body->set_root(Param(body, 0, state));
  Computation* c = Entry();
  Instruction* init = Param(c, 0, state);
  Instruction* w = Add(c, Opcode::kWhile, "w", Tuple({F32({})}), {init});
  w->mutable_called_computations() = {cond, body};
  c->set_root(w);
  EXPECT_THAT(Verify(),
              ElementsAre("computation main, instruction w: expected result "
                          "shape (s32[]) (the shape of the loop state "
                          "operand), found (f32[])"));
}

TEST_F(VerifierTest, WhileConditionMustReturnPred) {
  const Shape state = S32({});
  Computation* cond = NewComputation("cond");
  cond->set_root(Param(cond, 0, state));
  Computation* body = NewComputation("body");
  body->set_root(Param(body, 0, state));
  Computation* c = Entry();
  Instruction* w = Add(c, Opcode::kWhile, "w", state, {Param(c, 0, state)});
  w->mutable_called_computations() = {cond, body};
  c->set_root(w);
  EXPECT_THAT(Verify(),
              ElementsAre(HasSubstr("while: condition must return pred[], "
                                    "found s32[]")));
}

TEST_F(VerifierTest, CallSignature) {
  Computation* callee = NewComputation("callee");
  Instruction* cp = Param(callee, 0, F32({2}));
  callee->set_root(Add(callee, Opcode::kNegate, "cn", F32({2}), {cp}));
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({3}));
  Instruction* q = Param(c, 1, F32({2}));
  Instruction* bad_arg = Add(c, Opcode::kCall, "bad_arg", F32({2}), {p});
  bad_arg->mutable_called_computations() = {callee};
  Instruction* bad_res = Add(c, Opcode::kCall, "bad_res", F32({3}), {q});
  bad_res->mutable_called_computations() = {callee};
  c->set_root(q);
  EXPECT_THAT(
      Verify(),
      ElementsAre("computation main, instruction bad_arg: call: argument 0 "
                  "f32[3] does not match callee parameter 0 f32[2]",
                  "computation main, instruction bad_res: expected result "
                  "shape f32[2] (the root shape of callee callee), found "
                  "f32[3]"));
}

TEST_F(VerifierTest, Conditional) {
  Computation* t = NewComputation("t");
  t->set_root(Param(t, 0, F32({2})));
  Computation* f = NewComputation("f");
  Instruction* fp = Param(f, 0, S32({}));
  f->set_root(Add(f, Opcode::kConvert, "fc", F32({}), {fp}));
  Computation* c = Entry();
  Instruction* pred = Param(c, 0, Pred());
  Instruction* a = Param(c, 1, F32({2}));
  Instruction* b = Param(c, 2, S32({}));
  Instruction* cond =
      Add(c, Opcode::kConditional, "cond", F32({2}), {pred, a, b});
  cond->mutable_called_computations() = {t, f};
  Instruction* few = Add(c, Opcode::kConditional, "few", F32({2}), {pred, a});
  few->mutable_called_computations() = {t, f};
  c->set_root(cond);
  EXPECT_THAT(
      Verify(),
      ElementsAre("computation main, instruction cond: conditional: branch "
                  "1 returns f32[] but branch 0 returns f32[2]",
                  "computation main, instruction few: expected 3 operands "
                  "for conditional (selector and one per branch), found 2"));
}

TEST_F(VerifierTest, AllGatherWithGroupSize) {
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({4, 8}));
  auto* ok = Add(c, Opcode::kAllGather, "ok", F32({16, 8}), {p});
  ok->mutable_attrs().dimensions = {0};
  ok->mutable_attrs().replica_groups->format = ReplicaGroups::Format::kIota;
  ok->mutable_attrs().replica_groups->iota_num_groups = 1;
  ok->mutable_attrs().replica_groups->iota_group_size = 4;
  ok->mutable_attrs().replica_groups->iota_reshape_dims = {4};
  auto* bad = Add(c, Opcode::kAllGather, "bad", F32({8, 8}), {p});
  bad->mutable_attrs().dimensions = {0};
  bad->mutable_attrs().replica_groups = ok->attrs().replica_groups;
  auto* mesh = Add(c, Opcode::kAllGather, "mesh", F32({4, 8}), {p});
  mesh->mutable_attrs().dimensions = {0};
  mesh->mutable_attrs().replica_groups->format = ReplicaGroups::Format::kMesh;
  mesh->mutable_attrs().replica_groups->mesh_text = "mesh['x'=2,'y'=3] {'x'}";
  c->set_root(p);
  EXPECT_THAT(
      Verify(),
      ElementsAre(
          "computation main, instruction bad: expected result shape f32[16,8] "
          "(operand f32[4,8], dimensions={0}, group size 4), found f32[8,8]",
          "computation main, instruction mesh: expected result shape f32[8,8] "
          "(operand f32[4,8], dimensions={0}, group size 2), found f32[4,8]"));
}

TEST_F(VerifierTest, AllGatherWithoutGroupSize) {
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({4, 8}));
  auto* ok = Add(c, Opcode::kAllGather, "ok", F32({12, 8}), {p});
  ok->mutable_attrs().dimensions = {0};
  auto* bad = Add(c, Opcode::kAllGather, "bad", F32({6, 8}), {p});
  bad->mutable_attrs().dimensions = {0};
  auto* other_dim = Add(c, Opcode::kAllGather, "other", F32({8, 9}), {p});
  other_dim->mutable_attrs().dimensions = {0};
  auto* nodim = Add(c, Opcode::kAllGather, "nodim", F32({8, 8}), {p});
  nodim->mutable_attrs().dimensions = {0, 1};
  c->set_root(p);
  EXPECT_THAT(
      Verify(),
      ElementsAre(
          "computation main, instruction bad: all-gather: result dimension 0 "
          "(size 6) is not a multiple of operand dimension 0 (size 4), found "
          "operand f32[4,8] and result f32[6,8]",
          "computation main, instruction other: expected result shape "
          "f32[8,8] (operand f32[4,8], dimensions={0}, group size 2 derived "
          "from the result (replica groups give none)), found f32[8,9]",
          "computation main, instruction nodim: all-gather needs exactly one "
          "dimension in dimensions=, found {0,1}"));
}

TEST_F(VerifierTest, ReduceScatter) {
  Computation* sum = Reducer("sum");
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({6, 8}));
  auto* ok = Add(c, Opcode::kReduceScatter, "ok", F32({3, 8}), {p});
  ok->mutable_attrs().dimensions = {0};
  ok->mutable_called_computations() = {sum};
  auto* nodiv = Add(c, Opcode::kReduceScatter, "nodiv", F32({4, 8}), {p});
  nodiv->mutable_attrs().dimensions = {0};
  nodiv->mutable_called_computations() = {sum};
  auto* grouped = Add(c, Opcode::kReduceScatter, "grouped", F32({6, 2}), {p});
  grouped->mutable_attrs().dimensions = {1};
  grouped->mutable_attrs().replica_groups->format =
      ReplicaGroups::Format::kExplicit;
  grouped->mutable_attrs().replica_groups->explicit_groups = {{0, 1}, {2, 3}};
  grouped->mutable_called_computations() = {sum};
  c->set_root(p);
  EXPECT_THAT(
      Verify(),
      ElementsAre(
          "computation main, instruction nodiv: reduce-scatter: operand "
          "dimension 0 (size 6) is not a multiple of result dimension 0 "
          "(size 4), found operand f32[6,8] and result f32[4,8]",
          "computation main, instruction grouped: expected result shape "
          "f32[6,4] (operand f32[6,8], dimensions={1}, group size 2), found "
          "f32[6,2]"));
}

TEST_F(VerifierTest, ReplicaAndPartitionGroupsSpanPartitions) {
  module_->set_num_partitions(2);
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({4}));
  auto* ag = Add(c, Opcode::kAllGather, "ag", F32({8}), {p});
  ag->mutable_attrs().dimensions = {0};
  ag->mutable_attrs().channel_id = 1;
  ag->mutable_attrs().replica_groups->format = ReplicaGroups::Format::kExplicit;
  ag->mutable_attrs().replica_groups->explicit_groups = {{0}};
  c->set_root(ag);
  EXPECT_THAT(Verify(), IsEmpty());
}

TEST_F(VerifierTest, AllReduceAndReducer) {
  Computation* sum = Reducer("sum");
  Computation* isum = Reducer("isum", PrimitiveType::kS32);
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({4}));
  Instruction* q = Param(c, 1, F32({2}));
  auto* ok =
      Add(c, Opcode::kAllReduce, "ok", Tuple({F32({4}), F32({2})}), {p, q});
  ok->mutable_called_computations() = {sum};
  auto* bad = Add(c, Opcode::kAllReduce, "bad", F32({2}), {p});
  bad->mutable_called_computations() = {sum};
  auto* types = Add(c, Opcode::kAllReduce, "types", F32({4}), {p});
  types->mutable_called_computations() = {isum};
  c->set_root(p);
  EXPECT_THAT(
      Verify(),
      ElementsAre("computation main, instruction bad: expected result shape "
                  "f32[4] (operands f32[4]), found f32[2]",
                  "computation main, instruction types: to_apply isum: "
                  "reducer (s32[], s32[]) -> s32[]: accumulator 0 s32[] does "
                  "not match init value type f32"));
}

TEST_F(VerifierTest, AllToAllAndCollectivePermute) {
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({4, 6}));
  auto* a2a = Add(c, Opcode::kAllToAll, "a2a", F32({4, 6}), {p});
  a2a->mutable_attrs().dimensions = {1};
  a2a->mutable_attrs().replica_groups->format = ReplicaGroups::Format::kIota;
  a2a->mutable_attrs().replica_groups->iota_num_groups = 1;
  a2a->mutable_attrs().replica_groups->iota_group_size = 4;
  auto* tuple_a2a = Add(c, Opcode::kAllToAll, "tuple_a2a", F32({4, 6}), {p, p});
  (void)tuple_a2a;
  auto* cp = Add(c, Opcode::kCollectivePermute, "cp", F32({4, 5}), {p});
  (void)cp;
  c->set_root(p);
  EXPECT_THAT(
      Verify(),
      ElementsAre(
          "computation main, instruction a2a: all-to-all: split dimension 1 "
          "(size 6) of operand f32[4,6] is not divisible by the group size 4",
          "computation main, instruction tuple_a2a: expected result shape "
          "(f32[4,6], f32[4,6]) (operands f32[4,6], f32[4,6]), found "
          "f32[4,6]",
          "computation main, instruction cp: expected result shape f32[4,6] "
          "(operands f32[4,6]), found f32[4,5]"));
}

TEST_F(VerifierTest, NativeAsyncCollectives) {
  Computation* sum = Reducer("sum");
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({4}));
  auto* ags =
      Add(c, Opcode::kAllGatherStart, "ags", Tuple({F32({4}), F32({8})}), {p});
  ags->mutable_attrs().dimensions = {0};
  auto* agd = Add(c, Opcode::kAllGatherDone, "agd", F32({8}), {ags});
  auto* ars = Add(c, Opcode::kAllReduceStart, "ars", F32({4}), {p});
  ars->mutable_called_computations() = {sum};
  auto* ard = Add(c, Opcode::kAllReduceDone, "ard", F32({4}), {ars});
  auto* cps = Add(c, Opcode::kCollectivePermuteStart, "cps",
                  Tuple({F32({4}), F32({4}), U32(), U32()}), {p});
  auto* cpd = Add(c, Opcode::kCollectivePermuteDone, "cpd", F32({4}), {cps});
  auto* cs =
      Add(c, Opcode::kCopyStart, "cs", Tuple({F32({4}), F32({4}), U32()}), {p});
  auto* cd = Add(c, Opcode::kCopyDone, "cd", F32({4}), {cs});
  c->set_root(Add(c, Opcode::kTuple, "t",
                  Tuple({F32({8}), F32({4}), F32({4}), F32({4})}),
                  {agd, ard, cpd, cd}));
  EXPECT_THAT(Verify(), IsEmpty());

  // Now break each pair.
  Instruction* bad_ags = Add(c, Opcode::kAllGatherStart, "bad_ags",
                             Tuple({F32({4}), F32({4})}), {p});
  bad_ags->mutable_attrs().dimensions = {0};
  bad_ags->mutable_attrs().replica_groups->format =
      ReplicaGroups::Format::kExplicit;
  bad_ags->mutable_attrs().replica_groups->explicit_groups = {{0, 1}};
  Add(c, Opcode::kAllGatherDone, "wrong_start", F32({4}), {ars});
  Add(c, Opcode::kAllReduceDone, "bad_ard", F32({2}), {ars});
  Add(c, Opcode::kCollectivePermuteStart, "bad_cps",
      Tuple({F32({4}), F32({5})}), {p});
  Add(c, Opcode::kCopyDone, "bad_cd", F32({5}), {cs});
  EXPECT_THAT(
      Verify(),
      ElementsAre(
          "computation main, instruction bad_ags: expected result shape "
          "(f32[4], f32[8]) (a lone operand may be in a 1-tuple; operand "
          "f32[4], dimensions={0}, group size 2), found (f32[4], f32[4])",
          "computation main, instruction wrong_start: operand ars is a "
          "all-reduce-start, expected all-gather-start",
          "computation main, instruction bad_ard: expected result shape "
          "f32[4] (from ars f32[4]), found f32[2]",
          "computation main, instruction bad_cps: expected result shape "
          "(f32[4], f32[4]) (a lone operand may be in a 1-tuple, context "
          "scalars may follow; operands f32[4]), found (f32[4], f32[5])",
          "computation main, instruction bad_cd: expected result shape f32[4] "
          "(from cs (f32[4], f32[4], u32[])), found f32[5]"));
}

TEST_F(VerifierTest, GenericAsync) {
  Computation* wrapped = NewComputation("wrapped_rs");
  Computation* sum = Reducer("sum");
  Instruction* wp = Param(wrapped, 0, F32({8}));
  Instruction* rs = Add(wrapped, Opcode::kReduceScatter, "rs", F32({4}), {wp});
  rs->mutable_attrs().dimensions = {0};
  rs->mutable_called_computations() = {sum};
  wrapped->set_root(rs);
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({8}));
  Instruction* start = Add(c, Opcode::kAsyncStart, "start",
                           Tuple({Tuple({F32({8})}), F32({4}), U32()}), {p});
  start->mutable_called_computations() = {wrapped};
  Instruction* update =
      Add(c, Opcode::kAsyncUpdate, "update", start->shape(), {start});
  Instruction* done = Add(c, Opcode::kAsyncDone, "done", F32({4}), {update});
  c->set_root(done);
  EXPECT_THAT(Verify(), IsEmpty());

  Computation* wrapped2 = NewComputation("wrapped2");
  Instruction* w2p = Param(wrapped2, 0, F32({8}));
  wrapped2->set_root(Add(wrapped2, Opcode::kNegate, "w2n", F32({8}), {w2p}));
  Instruction* bad_start = Add(c, Opcode::kAsyncStart, "bad_start",
                               Tuple({Tuple({F32({8})}), F32({4})}), {p});
  bad_start->mutable_called_computations() = {wrapped2};
  Add(c, Opcode::kAsyncDone, "bad_done", F32({8}), {start});
  Add(c, Opcode::kAsyncDone, "not_start", F32({8}), {p});
  EXPECT_THAT(
      Verify(),
      ElementsAre(
          "computation main, instruction bad_start: expected result shape "
          "((f32[8]), f32[8]) (the tuple of operand shapes, then the root "
          "shape of wrapped computation wrapped2, then optional context), "
          "found ((f32[8]), f32[4])",
          "computation main, instruction bad_done: expected result shape "
          "f32[4] (element 1 of start ((f32[8]), f32[4], u32[])), found "
          "f32[8]",
          "computation main, instruction not_start: operand main.p0 is a "
          "parameter, expected async-start or async-update"));
}

TEST_F(VerifierTest, AsyncStartOperandsMustMatchWrappedParameters) {
  Computation* wrapped = NewComputation("wrapped");
  Instruction* wp = Param(wrapped, 0, F32({8}));
  wrapped->set_root(wp);
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({4}));
  Instruction* start = Add(c, Opcode::kAsyncStart, "start",
                           Tuple({Tuple({F32({4})}), F32({8})}), {p});
  start->mutable_called_computations() = {wrapped};
  c->set_root(start);
  EXPECT_THAT(Verify(),
              ElementsAre("computation main, instruction start: async-start: "
                          "operand 0 f32[4] does not match wrapped computation "
                          "parameter 0 f32[8]"));
}

TEST_F(VerifierTest, BitcastKeepsBitSizeOnly) {
  // With layouts (XLA's layout-sensitive rule); without them any size is
  // accepted, as XLA's layout-insensitive verifier does.
  auto laid_out = [](Shape s) {
    s.SetDefaultLayout();
    return s;
  };
  Computation* c = Entry();
  Instruction* p = Param(c, 0, laid_out(F32({4, 2})));
  Add(c, Opcode::kBitcast, "ok", laid_out(S32({8})), {p});
  Add(c, Opcode::kBitcast, "halves", laid_out(BF16({16})), {p});
  Add(c, Opcode::kBitcast, "bad", laid_out(F32({9})), {p});
  Instruction* q = Param(c, 1, F32({4, 2}));
  Add(c, Opcode::kBitcast, "no_layouts", F32({9}), {q});
  c->set_root(p);
  EXPECT_THAT(Verify(),
              ElementsAre("computation main, instruction bad: bitcast must "
                          "keep the bit size: operand f32[4,2] has 256 bits, "
                          "result f32[9] has 288"));
}

TEST_F(VerifierTest, FusionAndCustomCallAreLenient) {
  Computation* fused = NewComputation("fused");
  fused->set_is_fusion_computation(true);
  Instruction* fp = Param(fused, 0, F32({4}));
  fused->set_root(Add(fused, Opcode::kNegate, "fn", F32({4}), {fp}));
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({4}));
  Instruction* f = Add(c, Opcode::kFusion, "fusion", BF16({7, 7}), {p});
  f->mutable_called_computations() = {fused};
  Instruction* cc = Add(c, Opcode::kCustomCall, "cc", F32({1, 2, 3}), {p, f});
  cc->mutable_attrs().custom_call_target = "__cublas$gemm";
  Instruction* q = Param(c, 1, F32({5}));
  Instruction* bad = Add(c, Opcode::kFusion, "bad", F32({5}), {q});
  bad->mutable_called_computations() = {fused};
  c->set_root(cc);
  EXPECT_THAT(Verify(),
              ElementsAre("computation main, instruction bad: operand 0 "
                          "f32[5] does not match parameter 0 f32[4] of fused "
                          "computation fused"));
}

TEST_F(VerifierTest, LayoutsComparedOnlyWhenAsked) {
  Shape a = F32({2, 3});
  a.SetDefaultLayout();
  Shape b = F32({2, 3});
  Layout l;
  l.minor_to_major = {0, 1};
  b.set_layout(l);
  Computation* c = Entry();
  Instruction* p = Param(c, 0, a);
  Instruction* t = Add(c, Opcode::kTuple, "t", Tuple({b}), {p});
  Instruction* n = Add(c, Opcode::kNegate, "n", b, {p});
  (void)n;
  c->set_root(t);
  EXPECT_THAT(Verify(), IsEmpty());
  options_.check_layouts = true;
  EXPECT_THAT(Verify(),
              ElementsAre("computation main, instruction t: expected result "
                          "shape (f32[2,3]{1,0}) (a tuple of the operand "
                          "shapes), found (f32[2,3]{0,1})"));
}

TEST_F(VerifierTest, OpcodesWithoutRulesAreAccepted) {
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({4, 4}));
  Instruction* i = Param(c, 1, S32({2, 1}));
  Add(c, Opcode::kGather, "gather", F32({9, 9, 9}), {p, i});
  Add(c, Opcode::kConvolution, "conv", F32({1}), {p, p});
  c->set_root(p);
  EXPECT_THAT(Verify(), IsEmpty());
}

TEST_F(VerifierTest, HostileAttributeValuesDoNotCrash) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({4, 4}));
  Instruction* z = Param(c, 1, F32({}));
  auto* t = Add(c, Opcode::kTranspose, "t", F32({4, 4}), {p});
  t->mutable_attrs().dimensions = {kMin, kMax};
  auto* s = Add(c, Opcode::kSlice, "s", F32({4, 4}), {p});
  s->mutable_attrs().slice = {{kMin, kMax, 0}, {kMax, kMin, kMin}};
  auto* pad = Add(c, Opcode::kPad, "pad", F32({4, 4}), {p, z});
  pad->mutable_attrs().padding = {{kMax, kMax, kMax}, {kMin, kMin, 0}};
  auto* gte = Add(c, Opcode::kGetTupleElement, "gte", F32({}), {p});
  gte->mutable_attrs().tuple_index = kMin;
  auto* red = Add(c, Opcode::kReduce, "red", F32({}), {p, z});
  red->mutable_attrs().dimensions = {kMax, kMin};
  auto* dot = Add(c, Opcode::kDot, "dot", F32({}), {p, p});
  dot->mutable_attrs().dot->lhs_contracting_dims = {kMin};
  dot->mutable_attrs().dot->rhs_contracting_dims = {kMax};
  auto* ds = Add(c, Opcode::kDynamicSlice, "ds", F32({}), {p, z, z});
  ds->mutable_attrs().dynamic_slice_sizes = {kMin};
  auto* iota = Add(c, Opcode::kIota, "iota", F32({}));
  iota->mutable_attrs().iota_dimension = kMax;
  auto* ag = Add(c, Opcode::kAllGather, "ag", F32({kMax, 4}), {p});
  ag->mutable_attrs().dimensions = {0};
  ag->mutable_attrs().replica_groups->format = ReplicaGroups::Format::kIota;
  ag->mutable_attrs().replica_groups->iota_group_size = kMax;
  auto* a2a = Add(c, Opcode::kAllToAll, "a2a", F32({4, 4}), {p});
  a2a->mutable_attrs().dimensions = {kMin};
  auto* mesh = Add(c, Opcode::kAllGather, "mesh", F32({4, 4}), {p});
  mesh->mutable_attrs().dimensions = {0};
  mesh->mutable_attrs().replica_groups->format = ReplicaGroups::Format::kMesh;
  mesh->mutable_attrs().replica_groups->mesh_text = "mesh['x'=99999999999] {'x";
  c->set_root(p);
  std::vector<std::string> problems = Verify();
  // One message per broken instruction except `mesh`, whose replica groups
  // cannot be read, so its group size is derived from the (consistent)
  // result; and no crash.
  EXPECT_EQ(problems.size(), 10u) << ::testing::PrintToString(problems);
}

TEST_F(VerifierTest, VerifyComputationAll) {
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({8}));
  c->set_root(p);
  Computation* body = NewComputation("body");
  Instruction* bp = Param(body, 0, F32({8}));
  body->set_root(Add(body, Opcode::kNegate, "bn", F32({7}), {bp}));
  EXPECT_THAT(VerifyComputationAll(*body),
              ElementsAre("computation body, instruction bn: expected result "
                          "shape f32[8] (operand f32[8]), found f32[7]"));
  EXPECT_THAT(VerifyComputationAll(*c), IsEmpty());
}

TEST_F(VerifierTest, OtherSimpleRules) {
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({4, 2}));
  Instruction* tok = Add(c, Opcode::kAfterAll, "tok", Shape::Token());
  auto* rev = Add(c, Opcode::kReverse, "rev", F32({4, 2}), {p});
  rev->mutable_attrs().dimensions = {2};
  Instruction* lo = Param(c, 1, F32({3}));
  Add(c, Opcode::kClamp, "clamp", F32({4, 2}), {lo, p, lo});
  Add(c, Opcode::kBitcastConvert, "bcc", S32({4, 2, 2}), {p});
  Add(c, Opcode::kPartitionId, "pid", S32({}));
  Add(c, Opcode::kAfterAll, "aa", F32({}), {tok});
  Add(c, Opcode::kAddDependency, "dep", F32({4}), {p, tok});
  Add(c, Opcode::kOptBarrier, "ob", F32({2, 4}), {p});
  Add(c, Opcode::kGetDimensionSize, "gds", U32(), {p});
  auto* lit = Add(c, Opcode::kConstant, "lit", F32({2}));
  lit->mutable_attrs().literal = std::make_unique<Literal>(F32({3}));
  c->set_root(p);
  EXPECT_THAT(
      Verify(),
      ElementsAre(
          "computation main, instruction rev: reverse dimensions {2}: "
          "dimension 2 is out of range for f32[4,2] (rank 2)",
          "computation main, instruction clamp: clamp: min f32[3] must be a "
          "scalar or have the shape of the operand f32[4,2]",
          "computation main, instruction bcc: expected result shape s32[4,2] "
          "(operand f32[4,2] bitcast to s32), found s32[4,2,2]",
          "computation main, instruction pid: expected result shape u32[] "
          "(partition-id is a u32 scalar), found s32[]",
          "computation main, instruction aa: expected result shape token[] "
          "(after-all gives a token), found f32[]",
          "computation main, instruction dep: expected result shape f32[4,2] "
          "(the shape of operand 0), found f32[4]",
          "computation main, instruction ob: expected result shape f32[4,2] "
          "(the operand's shape), found f32[2,4]",
          "computation main, instruction gds: expected result shape s32[] "
          "(get-dimension-size gives s32[]), found u32[]",
          "computation main, instruction lit: literal has shape f32[3], "
          "expected f32[2]"));
}

TEST_F(VerifierTest, DynamicShapesSkipArithmeticRules) {
  Shape bounded = F32({8});
  bounded.mutable_dim_kinds() = {DimKind::kBounded};
  Computation* c = Entry();
  Instruction* p = Param(c, 0, bounded);
  // Element counts of bounded shapes are only upper bounds: not compared.
  Add(c, Opcode::kReshape, "r", F32({2, 3}), {p});
  // Whole-shape rules still apply.
  Instruction* t = Add(c, Opcode::kTuple, "t", Tuple({F32({8})}), {p});
  c->set_root(t);
  EXPECT_THAT(Verify(),
              ElementsAre("computation main, instruction t: expected result "
                          "shape (f32[<=8]) (a tuple of the operand shapes), "
                          "found (f32[8])"));
}

TEST_F(VerifierTest, FusionOperandCountAndControlCycle) {
  Computation* fused = NewComputation("fused");
  Instruction* fp = Param(fused, 0, F32({4}));
  fused->set_root(fp);
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({4}));
  Instruction* f = Add(c, Opcode::kFusion, "fusion", F32({4}), {p, p});
  f->mutable_called_computations() = {fused};
  Instruction* a = Add(c, Opcode::kNegate, "a", F32({4}), {p});
  Instruction* b = Add(c, Opcode::kNegate, "b", F32({4}), {a});
  a->AddControlPredecessor(b);
  c->set_root(b);
  EXPECT_THAT(
      Verify(),
      ElementsAre("computation main, instruction fusion: expected 1 operands "
                  "(the parameters of fused computation fused), found 2",
                  HasSubstr("(cycle through operands or control "
                            "predecessors)")));
}

TEST_F(VerifierTest, AsyncUpdateAndDoneMustFollowTheirStart) {
  Computation* wrapped = NewComputation("wrapped");
  Instruction* wp = Param(wrapped, 0, F32({4}));
  wrapped->set_root(Add(wrapped, Opcode::kNegate, "wn", F32({4}), {wp}));
  Computation* other = NewComputation("other");
  other->set_root(Param(other, 0, F32({4})));
  Computation* c = Entry();
  Instruction* p = Param(c, 0, F32({4}));
  const Shape start_shape = Tuple({Tuple({F32({4})}), F32({4})});
  Instruction* start = Add(c, Opcode::kAsyncStart, "start", start_shape, {p});
  start->mutable_called_computations() = {wrapped};
  Instruction* update =
      Add(c, Opcode::kAsyncUpdate, "update", Tuple({F32({4})}), {start});
  (void)update;
  Instruction* done = Add(c, Opcode::kAsyncDone, "done", F32({4}), {start});
  done->mutable_called_computations() = {other};
  Add(c, Opcode::kAsyncUpdate, "bad_update", start_shape, {p});
  c->set_root(done);
  EXPECT_THAT(
      Verify(),
      ElementsAre(
          "computation main, instruction update: expected result shape "
          "((f32[4]), f32[4]) (the shape of start), found (f32[4])",
          "computation main, instruction done: calls other but its "
          "async-start start calls wrapped",
          "computation main, instruction bad_update: operand main.p0 is a "
          "parameter, expected async-start or async-update"));
}

TEST_F(VerifierTest, CombinedAndInPlaceCollectives) {
  Computation* c = Entry();
  Instruction* a = Param(c, 0, F32({4}));
  Instruction* b = Param(c, 1, BF16({2, 3}));
  Instruction* out = Param(c, 2, F32({8}));
  Instruction* offs = Param(c, 3, S32({1}));
  auto* ags = Add(
      c, Opcode::kAllGatherStart, "ags",
      Tuple({Tuple({F32({4}), BF16({2, 3})}), Tuple({F32({8}), BF16({4, 3})})}),
      {a, b});
  ags->mutable_attrs().dimensions = {0};
  auto* bad = Add(c, Opcode::kAllGather, "bad", Tuple({F32({8}), BF16({2, 6})}),
                  {a, b});
  bad->mutable_attrs().dimensions = {0};
  auto* cp =
      Add(c, Opcode::kCollectivePermute, "cp", F32({8}), {a, out, offs, offs});
  cp->mutable_attrs().raw.push_back({"slice_sizes", "{{4}}"});
  auto* cp_bad = Add(c, Opcode::kCollectivePermute, "cp_bad", F32({4}),
                     {a, out, offs, offs});
  cp_bad->mutable_attrs().raw.push_back({"slice_sizes", "{{4}}"});
  c->set_root(ags);
  EXPECT_THAT(
      Verify(),
      ElementsAre("computation main, instruction bad: expected result shape "
                  "(f32[8], bf16[4,3]) (operands f32[4], bf16[2,3], "
                  "dimensions={0}, group size 2 derived from the result "
                  "(replica groups give none)), found (f32[8], bf16[2,6])",
                  "computation main, instruction cp_bad: expected result "
                  "shape f32[8] (operands f32[4], f32[8], s32[1], s32[1], in "
                  "place), found f32[4]"));
}

// --- Text-based cases -------------------------------------------------------

namespace text {

std::vector<std::string> VerifyText(std::string_view text,
                                    const VerifierOptions& options = {}) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
  if (!module.ok()) {
    return {"parse error: " + std::string(module.status().message())};
  }
  return VerifyModuleAll(**module, options);
}

constexpr std::string_view kValidLoop = R"(
HloModule loop, num_partitions=2

%add (a: f32[], b: f32[]) -> f32[] {
  %add.a = f32[] parameter(0)
  %add.b = f32[] parameter(1)
  ROOT %add.s = f32[] add(%add.a, %add.b)
}

%cond (p: (s32[], f32[4,8], f32[2,8])) -> pred[] {
  %cond.p = (s32[], f32[4,8], f32[2,8]) parameter(0)
  %cond.i = s32[] get-tuple-element(%cond.p), index=0
  %n = s32[] constant(4)
  ROOT %lt = pred[] compare(%cond.i, %n), direction=LT
}

%body (p: (s32[], f32[4,8], f32[2,8])) -> (s32[], f32[4,8], f32[2,8]) {
  %p = (s32[], f32[4,8], f32[2,8]) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %w = f32[4,8]{1,0} get-tuple-element(%p), index=1
  %acc = f32[2,8]{1,0} get-tuple-element(%p), index=2
  %one = s32[] constant(1)
  %next = s32[] add(%i, %one)
  %zero = s32[] constant(0)
  %row = f32[1,8]{1,0} dynamic-slice(%w, %i, %zero), dynamic_slice_sizes={1,8}
  %ag = f32[2,8]{1,0} all-gather(%row), channel_id=1, replica_groups=[1,2]<=[2], dimensions={0}, use_global_device_ids=true
  %sum = f32[2,8]{1,0} add(%acc, %ag)
  %rs = f32[1,8]{1,0} reduce-scatter(%sum), channel_id=2, replica_groups={{0,1}}, use_global_device_ids=true, dimensions={0}, to_apply=%add
  %w2 = f32[4,8]{1,0} dynamic-update-slice(%w, %rs, %i, %zero)
  %dot = f32[2,4]{1,0} dot(%sum, %w2), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  %t = f32[4,2]{0,1} transpose(%dot), dimensions={1,0}
  %bc = f32[4,2,3]{2,1,0} broadcast(%t), dimensions={0,1}
  %r = f32[4,6]{1,0} reshape(%bc)
  %sl = f32[4,2]{1,0} slice(%r), slice={[0:4], [0:6:3]}
  %c0 = f32[] constant(0)
  %red = f32[2]{0} reduce(%sl, %c0), dimensions={0}, to_apply=%add
  %pad = f32[5]{0} pad(%red, %c0), padding=1_2
  ROOT %out = (s32[], f32[4,8], f32[2,8]) tuple(%next, %w2, %sum)
}

ENTRY %main (w: f32[4,8], acc: f32[2,8]) -> (s32[], f32[4,8], f32[2,8]) {
  %main.w = f32[4,8]{1,0} parameter(0)
  %main.acc = f32[2,8]{1,0} parameter(1)
  %main.zero = s32[] constant(0)
  %init = (s32[], f32[4,8], f32[2,8]) tuple(%main.zero, %main.w, %main.acc)
  ROOT %while = (s32[], f32[4,8], f32[2,8]) while(%init), condition=%cond, body=%body
}
)";

TEST(VerifierTextTest, ValidLoopModule) {
  EXPECT_THAT(VerifyText(kValidLoop), IsEmpty());
}

TEST(VerifierTextTest, AsyncSugarAndCompactGte) {
  // The parser synthesizes the wrapped computation of reduce-scatter-start
  // and the get-tuple-elements behind `%w#0`.
  constexpr std::string_view kText = R"(
HloModule sugar, is_scheduled=true, num_partitions=2

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main (x: f32[8], y: (f32[4], s32[])) -> (f32[4], f32[4], f32[16]) {
  %x = f32[8]{0} parameter(0)
  %y = (f32[4], s32[]) parameter(1)
  %rs-start = ((f32[8]{0}), f32[4]{0}) reduce-scatter-start(%x), channel_id=7, replica_groups=[1,2]<=[2], use_global_device_ids=true, dimensions={0}, to_apply=%add
  %rs-done = f32[4]{0} reduce-scatter-done(%rs-start)
  %ag-start = (f32[8]{0}, f32[16]{0}) all-gather-start(%x), channel_id=8, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
  %ag-done = f32[16]{0} all-gather-done(%ag-start)
  ROOT %t = (f32[4], f32[4], f32[16]) tuple(%rs-done, %y#0, %ag-done)
}
)";
  EXPECT_THAT(VerifyText(kText), IsEmpty());
}

TEST(VerifierTextTest, BrokenDot) {
  constexpr std::string_view kText = R"(
HloModule m

ENTRY %main (a: f32[8,4], b: f32[4,16]) -> f32[8,15] {
  %a = f32[8,4]{1,0} parameter(0)
  %b = f32[4,16]{1,0} parameter(1)
  ROOT %dot.3 = f32[8,15]{1,0} dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";
  EXPECT_THAT(VerifyText(kText),
              ElementsAre("computation main, instruction dot.3: expected "
                          "result shape f32[8,16] (lhs f32[8,4] contracting "
                          "{1}, rhs f32[4,16] contracting {0}), found "
                          "f32[8,15]"));
}

TEST(VerifierTextTest, BadAttributeValuesFromText) {
  constexpr std::string_view kText = R"(
HloModule m

ENTRY %main (a: f32[4], t: (f32[4], s32[])) -> f32[4] {
  %a = f32[4]{0} parameter(0)
  %t = (f32[4], s32[]) parameter(1)
  %g = f32[4]{0} get-tuple-element(%t), index=5
  %b = f32[2,4]{1,0} broadcast(%a), dimensions={7}
  %tr = f32[4]{0} transpose(%a), dimensions={1}
  %ds = f32[2]{0} dynamic-slice(%a, %a), dynamic_slice_sizes={2}
  ROOT %n = f32[4]{0} negate(%a)
}
)";
  EXPECT_THAT(
      VerifyText(kText),
      ElementsAre(
          "computation main, instruction g: get-tuple-element: index=5 is "
          "out of range for operand (f32[4], s32[]) with 2 elements",
          "computation main, instruction b: broadcast: dimensions={7}: "
          "operand dimension 0 maps to result dimension 7, out of range for "
          "result rank 2",
          "computation main, instruction tr: transpose dimensions {1}: "
          "dimension 1 is out of range for f32[4] (rank 1)",
          "computation main, instruction ds: dynamic-slice: index vector "
          "must have an integer type, found f32[4]"));
}

TEST(VerifierTextTest, WhileBodyMismatchFromText) {
  constexpr std::string_view kText = R"(
HloModule m

%cond (p: (s32[], f32[4])) -> pred[] {
  %cp = (s32[], f32[4]) parameter(0)
  ROOT %c = pred[] constant(false)
}

%body (p: (s32[], f32[4])) -> (s32[], f32[5]) {
  %p = (s32[], f32[4]) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %zero = f32[] constant(0)
  %z = f32[5]{0} broadcast(%zero), dimensions={}
  ROOT %t = (s32[], f32[5]) tuple(%i, %z)
}

ENTRY %main (x: (s32[], f32[4])) -> (s32[], f32[4]) {
  %x = (s32[], f32[4]) parameter(0)
  ROOT %w = (s32[], f32[4]) while(%x), condition=%cond, body=%body
}
)";
  EXPECT_THAT(VerifyText(kText),
              ElementsAre("computation main, instruction w: while: body "
                          "returns (s32[], f32[5]), expected the loop state "
                          "(s32[], f32[4]) (condition cond, body body)"));
}

TEST(VerifierTextTest, MeshGroupsFromText) {
  constexpr std::string_view kText = R"(
HloModule m, num_partitions=4

ENTRY %main (x: bf16[4,8]) -> bf16[8,8] {
  %x = bf16[4,8]{1,0} parameter(0)
  ROOT %ag = bf16[8,8]{1,0} all-gather(%x), channel_id=1, replica_groups=mesh['a'=2,'b'=2] {'a','b'}, dimensions={0}, use_global_device_ids=true
}
)";
  EXPECT_THAT(VerifyText(kText),
              ElementsAre("computation main, instruction ag: expected result "
                          "shape bf16[16,8] (operand bf16[4,8], "
                          "dimensions={0}, group size 4), found bf16[8,8]"));
}

// Text mutations the parser still accepts must never crash the verifier
// (the test binaries run under ASan+UBSan in CI).
TEST(VerifierTextTest, MutatedTextNeverCrashes) {
  const std::string base(kValidLoop);
  uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&state]() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  int parsed = 0;
  int with_problems = 0;
  for (int round = 0; round < 1000; ++round) {
    std::string text = base;
    const int edits = 1 + static_cast<int>(next() % 3);
    for (int e = 0; e < edits; ++e) {
      const size_t pos = next() % text.size();
      const char ch = text[pos];
      if (std::isdigit(static_cast<unsigned char>(ch))) {
        const char* kDigitEdits[] = {"0", "1", "2", "7", "9", "-1", "99", ""};
        text.replace(pos, 1, kDigitEdits[next() % 8]);
      } else if (ch == ',') {
        text.erase(pos, 1);
      } else if (ch == 'f' && pos + 2 < text.size() && text[pos + 1] == '3') {
        text.replace(pos, 3, next() % 2 ? "s32" : "bf16");
      }
    }
    absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
    if (!module.ok()) continue;
    ++parsed;
    if (!VerifyModuleAll(**module).empty()) ++with_problems;
  }
  EXPECT_GT(parsed, 100) << parsed << " of 1000 mutants parsed";
  EXPECT_GT(with_problems, 30)
      << with_problems << " of " << parsed << " parsed mutants have problems";
  std::printf("%d of 1000 mutants parsed, %d of them with problems\n", parsed,
              with_problems);
}

}  // namespace text

// --- Schedules ---------------------------------------------------------------

constexpr std::string_view kScheduledPair = R"(
HloModule m, is_scheduled=true, num_partitions=2

ENTRY main {
  x = f32[4] parameter(0)
  ags = (f32[4], f32[8]) all-gather-start(x), channel_id=1, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
  n = f32[4] negate(x)
  agd = f32[8] all-gather-done(ags)
  ROOT r = (f32[8], f32[4]) tuple(agd, n)
}
)";

std::unique_ptr<Module> Parse(std::string_view text) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

std::vector<Instruction*> Order(const Computation& c) {
  std::vector<Instruction*> order;
  for (const auto& i : c.instructions()) order.push_back(i.get());
  return order;
}

TEST(VerifierScheduleTest, ValidScheduleVerifies) {
  std::unique_ptr<Module> m = Parse(kScheduledPair);
  ASSERT_NE(m, nullptr);
  EXPECT_THAT(VerifyModuleAll(*m), IsEmpty());
  EXPECT_TRUE(VerifySchedule(*m->entry()).ok());
}

// What a scheduler that moved the done above its start would leave: the
// verifier (and so --verify-each) reports it; unscheduled, the same order is
// no schedule and verifies.
TEST(VerifierScheduleTest, DoneMovedAboveItsStart) {
  std::unique_ptr<Module> m = Parse(kScheduledPair);
  ASSERT_NE(m, nullptr);
  Computation* c = m->entry();
  std::vector<Instruction*> order = Order(*c);  // x ags n agd r
  std::swap(order[1], order[3]);                // x agd n ags r
  ASSERT_TRUE(c->SetInstructionOrder(order).ok());
  EXPECT_THAT(VerifyModuleAll(*m),
              ElementsAre("computation main, instruction agd: invalid "
                          "schedule: all-gather-done agd (position 1) runs "
                          "before its all-gather-start ags (position 3)"));
  absl::Status s = VerifySchedule(*c);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("invalid schedule of computation main: "
                        "all-gather-done agd (position 1)"));
  // A pass verifying a computation it builds leaves the order to the
  // scheduler.
  EXPECT_THAT(VerifyComputationAll(*c), IsEmpty());
  m->set_is_scheduled(false);
  EXPECT_THAT(VerifyModuleAll(*m), IsEmpty());
}

TEST(VerifierScheduleTest, RootBeforeItsOperands) {
  std::unique_ptr<Module> m = Parse(kScheduledPair);
  ASSERT_NE(m, nullptr);
  Computation* c = m->entry();
  std::vector<Instruction*> order = Order(*c);
  std::rotate(order.begin(), order.end() - 1, order.end());  // r first
  ASSERT_TRUE(c->SetInstructionOrder(order).ok());
  EXPECT_THAT(VerifyModuleAll(*m),
              ElementsAre("computation main, instruction r: invalid schedule: "
                          "r (position 0) uses agd (position 4) before it is "
                          "computed"));
}

// Fusion computations have no schedule of their own.
TEST(VerifierScheduleTest, FusionComputationOrderIsFree) {
  std::unique_ptr<Module> m = Parse(R"(
HloModule m, is_scheduled=true

fused {
  a = f32[4] parameter(0)
  n = f32[4] negate(a)
  ROOT e = f32[4] exponential(n)
}

ENTRY main {
  p = f32[4] parameter(0)
  ROOT f = f32[4] fusion(p), kind=kLoop, calls=fused
}
)");
  ASSERT_NE(m, nullptr);
  Computation* fused = m->FindComputation("fused");
  ASSERT_NE(fused, nullptr);
  std::vector<Instruction*> order = Order(*fused);
  std::reverse(order.begin(), order.end());
  ASSERT_TRUE(fused->SetInstructionOrder(order).ok());
  EXPECT_THAT(VerifyModuleAll(*m), IsEmpty());
  EXPECT_FALSE(VerifySchedule(*fused).ok());  // asked directly: checked
}

}  // namespace
}  // namespace hloverlap
