// Mutations of the semantic fuzzer (see mutator.h).
#include "fuzz/mutator.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "hlo/while_backend_config.h"

namespace hloverlap::fuzz {

static_assert(std::endian::native == std::endian::little,
              "integer literals are written as little-endian bytes");

uint64_t Rng::Next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

int64_t Rng::Range(int64_t lo, int64_t hi) {
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  if (span == ~uint64_t{0}) return static_cast<int64_t>(Next());
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + Below(span + 1));
}

uint64_t MixSeed(uint64_t a, uint64_t b) {
  Rng r(a ^ (b * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull));
  return r.Next();
}

namespace {

constexpr MutationKind kAllKinds[] = {
    MutationKind::kBound,          MutationKind::kStep,
    MutationKind::kStart,          MutationKind::kCounterType,
    MutationKind::kDirection,      MutationKind::kKnownTripCount,
    MutationKind::kShareBody,      MutationKind::kControlDep,
    MutationKind::kCollectiveUser, MutationKind::kNest,
    MutationKind::kTupleDuplicate, MutationKind::kCallStart,
};
static_assert(sizeof(kAllKinds) / sizeof(kAllKinds[0]) == kNumMutationKinds);

// --- Integers at a type's width ----------------------------------------------
//
// A value of an integer type is held as its bit pattern in the low `width`
// bits of a uint64_t (the rest zero), which makes wrapping arithmetic plain
// uint64_t arithmetic followed by Mask.

constexpr PrimitiveType kCounterTypes[] = {
    PrimitiveType::kS8,  PrimitiveType::kS16, PrimitiveType::kS32,
    PrimitiveType::kS64, PrimitiveType::kU8,  PrimitiveType::kU16,
    PrimitiveType::kU32, PrimitiveType::kU64,
};

bool IsCounterType(PrimitiveType t) {
  return std::find(std::begin(kCounterTypes), std::end(kCounterTypes), t) !=
         std::end(kCounterTypes);
}

int Width(PrimitiveType t) { return PrimitiveTypeBitWidth(t); }

uint64_t Mask(uint64_t bits, PrimitiveType t) {
  const int w = Width(t);
  return w >= 64 ? bits : bits & ((uint64_t{1} << w) - 1);
}

// The value as a 64-bit two's complement pattern (sign- or zero-extended).
uint64_t Extend(uint64_t bits, PrimitiveType t) {
  const int w = Width(t);
  if (w >= 64 || !IsSignedIntegralType(t)) return bits;
  const uint64_t sign = uint64_t{1} << (w - 1);
  return (bits ^ sign) - sign;
}

uint64_t ConvertBits(uint64_t bits, PrimitiveType from, PrimitiveType to) {
  return Mask(Extend(bits, from), to);
}

std::string ValueString(uint64_t bits, PrimitiveType t) {
  if (IsSignedIntegralType(t)) {
    return absl::StrCat(static_cast<int64_t>(Extend(bits, t)));
  }
  return absl::StrCat(bits);
}

uint64_t MaxBits(PrimitiveType t) {
  return IsSignedIntegralType(t) ? Mask(~uint64_t{0}, t) >> 1
                                 : Mask(~uint64_t{0}, t);
}
uint64_t MinBits(PrimitiveType t) {
  return IsSignedIntegralType(t) ? MaxBits(t) + 1 : 0;
}

bool Holds(uint64_t a, uint64_t b, ComparisonDirection dir, PrimitiveType t) {
  int c;
  if (IsSignedIntegralType(t)) {
    const int64_t x = static_cast<int64_t>(Extend(a, t));
    const int64_t y = static_cast<int64_t>(Extend(b, t));
    c = x < y ? -1 : x > y ? 1 : 0;
  } else {
    c = a < b ? -1 : a > b ? 1 : 0;
  }
  switch (dir) {
    case ComparisonDirection::kEq:
      return c == 0;
    case ComparisonDirection::kNe:
      return c != 0;
    case ComparisonDirection::kLt:
      return c < 0;
    case ComparisonDirection::kLe:
      return c <= 0;
    case ComparisonDirection::kGt:
      return c > 0;
    case ComparisonDirection::kGe:
      return c >= 0;
  }
  return false;
}

std::string DirectionName(ComparisonDirection d) {
  return std::string(ComparisonDirectionName(d));
}

// The direction that means the same with the operands swapped.
ComparisonDirection Swapped(ComparisonDirection d) {
  using D = ComparisonDirection;
  constexpr D kSwapped[] = {D::kEq, D::kNe, D::kGt, D::kGe, D::kLt, D::kLe};
  return kSwapped[static_cast<int>(d)];
}

std::string TypeName(PrimitiveType t) {
  return std::string(PrimitiveTypeName(t));
}
std::string OpName(Opcode op) { return std::string(OpcodeName(op)); }

bool IsIntScalar(const Shape& s) {
  return s.IsArray() && s.rank() == 0 && !s.is_dynamic() &&
         IsCounterType(s.element_type());
}

// Reads a scalar integer constant's bit pattern.
std::optional<uint64_t> ReadIntConstant(const Instruction& c) {
  const Literal* lit = c.literal();
  if (c.opcode() != Opcode::kConstant || lit == nullptr || lit->elided() ||
      !IsIntScalar(c.shape())) {
    return std::nullopt;
  }
  const int64_t bytes = PrimitiveTypeByteSize(c.shape().element_type());
  if (static_cast<int64_t>(lit->data().size()) < bytes || bytes > 8) {
    return std::nullopt;
  }
  uint64_t v = 0;
  std::memcpy(&v, lit->data().data(), bytes);
  return Mask(v, c.shape().element_type());
}

// --- Constant folding at the types' widths -----------------------------------

// Resolves get-tuple-element(param, j) of a loop condition or body to the
// initial value of state element j when j is invariant (the body passes it
// through unchanged).
struct FoldEnv {
  const Instruction* param = nullptr;
  const Instruction* init = nullptr;  // the while's operand
  const Instruction* body_root = nullptr;
  const Instruction* body_param = nullptr;
};

std::optional<uint64_t> Fold(const Instruction& x, const FoldEnv* env,
                             int depth = 0) {
  if (depth > 24 || !IsIntScalar(x.shape())) return std::nullopt;
  const PrimitiveType t = x.shape().element_type();
  auto op = [&](int64_t i) -> std::optional<uint64_t> {
    if (i >= x.operand_count()) return std::nullopt;
    return Fold(*x.operand(i), env, depth + 1);
  };
  switch (x.opcode()) {
    case Opcode::kConstant:
      return ReadIntConstant(x);
    case Opcode::kConvert:
    case Opcode::kCopy:
    case Opcode::kReshape: {
      if (x.operand_count() != 1 || !IsIntScalar(x.operand(0)->shape())) {
        return std::nullopt;
      }
      auto a = op(0);
      if (!a) return std::nullopt;
      return ConvertBits(*a, x.operand(0)->shape().element_type(), t);
    }
    case Opcode::kNegate: {
      auto a = op(0);
      if (!a) return std::nullopt;
      return Mask(uint64_t{0} - *a, t);
    }
    case Opcode::kAdd:
    case Opcode::kSubtract:
    case Opcode::kMultiply: {
      if (x.operand_count() != 2) return std::nullopt;
      auto a = op(0);
      auto b = op(1);
      if (x.opcode() == Opcode::kMultiply && ((a && *a == 0) || (b && *b == 0)))
        return 0;
      if (!a || !b) return std::nullopt;
      const uint64_t r = x.opcode() == Opcode::kAdd        ? *a + *b
                         : x.opcode() == Opcode::kSubtract ? *a - *b
                                                           : *a * *b;
      return Mask(r, t);
    }
    case Opcode::kGetTupleElement: {
      if (env == nullptr || x.operand_count() != 1 ||
          x.operand(0) != env->param || env->init == nullptr ||
          env->body_root == nullptr) {
        return std::nullopt;
      }
      const int64_t j = x.tuple_index();
      const Instruction* r = env->body_root;
      if (r->opcode() != Opcode::kTuple || j < 0 || j >= r->operand_count()) {
        return std::nullopt;
      }
      const Instruction* pass = r->operand(j);
      if (pass->opcode() != Opcode::kGetTupleElement ||
          pass->operand(0) != env->body_param || pass->tuple_index() != j) {
        return std::nullopt;  // not invariant
      }
      if (env->init->opcode() != Opcode::kTuple ||
          j >= env->init->operand_count()) {
        return std::nullopt;
      }
      return Fold(*env->init->operand(j), nullptr, depth + 1);
    }
    case Opcode::kParameter: {
      // A parameter of a computation one `call` calls: its operand.
      const Computation* comp = x.parent();
      const Module* m = comp != nullptr ? comp->parent() : nullptr;
      if (m == nullptr || comp == m->entry()) return std::nullopt;
      const Instruction* site = nullptr;
      for (const auto& other : m->computations()) {
        for (const auto& i : other->instructions()) {
          for (const Computation* callee : i->called_computations()) {
            if (callee != comp) continue;
            if (site != nullptr || i->opcode() != Opcode::kCall) {
              return std::nullopt;
            }
            site = i.get();
          }
        }
      }
      const int64_t n = x.parameter_number();
      if (site == nullptr || n < 0 || n >= site->operand_count() ||
          !IsIntScalar(site->operand(n)->shape()) ||
          site->operand(n)->shape().element_type() != t) {
        return std::nullopt;
      }
      return Fold(*site->operand(n), nullptr, depth + 1);
    }
    default:
      return std::nullopt;
  }
}

// --- The counted loop form ---------------------------------------------------

struct LoopView {
  Instruction* loop = nullptr;
  Computation* cond = nullptr;
  Computation* body = nullptr;
  Instruction* cond_param = nullptr;
  Instruction* body_param = nullptr;
  int64_t k = -1;  // counter's state index
  Instruction* cmp = nullptr;
  int cmp_iv = 0;  // operand index of the counter in cmp
  Instruction* update = nullptr;
  int update_iv = 0;  // operand index of the counter in update
  PrimitiveType type = PrimitiveType::kInvalid;

  Instruction* bound() const { return cmp->operand(1 - cmp_iv); }
  Instruction* step() const { return update->operand(1 - update_iv); }
  Instruction* init() const { return loop->operand(0); }
  Instruction* init_tuple() const {
    return init()->opcode() == Opcode::kTuple ? init() : nullptr;
  }
  FoldEnv cond_env() const {
    return {cond_param, init(), body->root(), body_param};
  }
  FoldEnv body_env() const {
    return {body_param, init(), body->root(), body_param};
  }
};

bool IsGte(const Instruction* x, const Instruction* tuple, int64_t index) {
  return x->opcode() == Opcode::kGetTupleElement && x->operand_count() == 1 &&
         x->operand(0) == tuple && x->tuple_index() == index;
}

std::optional<LoopView> MatchLoop(Instruction* w) {
  if (w->opcode() != Opcode::kWhile || w->operand_count() != 1 ||
      w->called_computations().size() != 2 || !w->shape().IsTuple()) {
    return std::nullopt;
  }
  LoopView v;
  v.loop = w;
  v.cond = w->while_condition();
  v.body = w->while_body();
  if (v.cond == nullptr || v.body == nullptr || v.cond->num_parameters() != 1 ||
      v.body->num_parameters() != 1) {
    return std::nullopt;
  }
  v.cond_param = v.cond->parameter(0);
  v.body_param = v.body->parameter(0);
  Instruction* cmp = v.cond->root();
  Instruction* root = v.body->root();
  if (v.cond_param == nullptr || v.body_param == nullptr || cmp == nullptr ||
      root == nullptr || cmp->opcode() != Opcode::kCompare ||
      cmp->operand_count() != 2 || root->opcode() != Opcode::kTuple ||
      root->operand_count() != w->shape().tuple_size()) {
    return std::nullopt;
  }
  for (int side = 0; side < 2; ++side) {
    Instruction* g = cmp->operand(side);
    if (g->opcode() != Opcode::kGetTupleElement ||
        g->operand(0) != v.cond_param)
      continue;
    const int64_t k = g->tuple_index();
    if (k < 0 || k >= root->operand_count()) continue;
    if (IsGte(cmp->operand(1 - side), v.cond_param, k)) continue;
    Instruction* u = root->operand(k);
    if ((u->opcode() != Opcode::kAdd && u->opcode() != Opcode::kSubtract) ||
        u->operand_count() != 2) {
      continue;
    }
    int uiv = -1;
    if (IsGte(u->operand(0), v.body_param, k)) {
      uiv = 0;
    } else if (u->opcode() == Opcode::kAdd &&
               IsGte(u->operand(1), v.body_param, k)) {
      uiv = 1;
    }
    if (uiv < 0 || !IsIntScalar(w->shape().tuple_shapes(k))) continue;
    v.k = k;
    v.cmp = cmp;
    v.cmp_iv = side;
    v.update = u;
    v.update_iv = uiv;
    v.type = w->shape().tuple_shapes(k).element_type();
    return v;
  }
  return std::nullopt;
}

// --- Module helpers ----------------------------------------------------------

std::vector<Computation*> MutableComputations(Module& m) {
  std::vector<Computation*> out;
  for (const auto& c : m.computations()) {
    if (!c->IsFusionComputation() && c->execution_thread().empty()) {
      out.push_back(c.get());
    }
  }
  return out;
}

std::vector<Instruction*> Whiles(Module& m) {
  std::vector<Instruction*> out;
  for (Computation* c : MutableComputations(m)) {
    for (const auto& i : c->instructions()) {
      if (i->opcode() == Opcode::kWhile) out.push_back(i.get());
    }
  }
  return out;
}

std::vector<LoopView> CountedLoops(Module& m) {
  std::vector<LoopView> out;
  for (Instruction* w : Whiles(m)) {
    if (auto v = MatchLoop(w)) out.push_back(*v);
  }
  return out;
}

int64_t CallerCount(Module& m, const Computation* c) {
  int64_t n = 0;
  for (const auto& comp : m.computations()) {
    for (const auto& i : comp->instructions()) {
      for (const Computation* called : i->called_computations()) {
        n += called == c;
      }
    }
  }
  return n;
}

// Context of one mutation: the module, the random source, and the loops
// whose trip count the mutation may have changed.
struct Ctx {
  Module& m;
  Rng& rng;
  absl::flat_hash_set<const Instruction*>& touched;

  std::string Name(std::string_view base) {
    return m.UniqueInstructionName(base);
  }
  Instruction* Add(Computation* comp, Opcode op, Shape shape,
                   std::vector<Instruction*> operands,
                   const Instruction* before) {
    auto inst = std::make_unique<Instruction>(
        op, Name(absl::StrCat("fuzz.", OpName(op))), std::move(shape));
    for (Instruction* o : operands) inst->AppendOperand(o);
    return comp->AddInstruction(std::move(inst), before);
  }
  Instruction* IntConstant(Computation* comp, PrimitiveType t, uint64_t bits,
                           const Instruction* before) {
    Instruction* c = Add(comp, Opcode::kConstant, Shape::Scalar(t), {}, before);
    auto lit = std::make_unique<Literal>(Shape::Scalar(t));
    const int64_t bytes = PrimitiveTypeByteSize(t);
    bits = Mask(bits, t);
    std::memcpy(lit->mutable_data().data(), &bits, bytes);
    c->mutable_attrs().literal = std::move(lit);
    return c;
  }
  // `w` and every loop nested in it: their starts may come from its state.
  void Touch(Instruction* w) {
    std::vector<const Computation*> todo(w->called_computations().begin(),
                                         w->called_computations().end());
    absl::flat_hash_set<const Computation*> seen;
    touched.insert(w);
    while (!todo.empty()) {
      const Computation* comp = todo.back();
      todo.pop_back();
      if (comp == nullptr || !seen.insert(comp).second) continue;
      for (const auto& i : comp->instructions()) {
        if (i->opcode() == Opcode::kWhile) touched.insert(i.get());
        for (const Computation* callee : i->called_computations()) {
          todo.push_back(callee);
        }
      }
    }
  }
  // Every while using `comp` as condition or body.
  void TouchLoopsUsing(const Computation* comp) {
    for (Instruction* w : Whiles(m)) {
      if (w->while_condition() == comp || w->while_body() == comp) Touch(w);
    }
  }
  void TouchLoop(const LoopView& v) {
    Touch(v.loop);
    TouchLoopsUsing(v.cond);
    TouchLoopsUsing(v.body);
  }

  // An interesting value of type t: small, near the limits, the middle of
  // an unsigned range, or random bits.
  uint64_t ChooseValue(PrimitiveType t) {
    switch (rng.Below(10)) {
      case 0:
      case 1:
      case 2:
        return Mask(static_cast<uint64_t>(rng.Range(-3, 20)), t);
      case 3:
        return Mask(MaxBits(t) - rng.Below(7), t);
      case 4:
        return Mask(MinBits(t) + rng.Below(7), t);
      case 5:
        return IsSignedIntegralType(t)
                   ? Mask(static_cast<uint64_t>(rng.Range(-100, 100)), t)
                   : Mask((MaxBits(t) >> 1) + 1 + rng.Range(-2, 2), t);
      case 6:
        return Mask(rng.Next(), t);
      default:
        return rng.Below(9);
    }
  }

  // Adds (before `before`) an expression of type t whose value is `bits`,
  // in one of several forms; `form` describes it.
  Instruction* BuildScalar(Computation* comp, PrimitiveType t, uint64_t bits,
                           const Instruction* before, std::string& form) {
    bits = Mask(bits, t);
    const std::string v = ValueString(bits, t);
    switch (rng.Below(8)) {
      case 0: {  // add of two wrapping constants
        const uint64_t a =
            Mask(rng.Chance(0.5) ? MaxBits(t) - rng.Below(4) : rng.Next(), t);
        const uint64_t b = Mask(bits - a, t);
        form = absl::StrCat("add(", ValueString(a, t), ", ", ValueString(b, t),
                            ")=", v);
        return Add(
            comp, Opcode::kAdd, Shape::Scalar(t),
            {IntConstant(comp, t, a, before), IntConstant(comp, t, b, before)},
            before);
      }
      case 1: {  // subtract
        const uint64_t b = Mask(rng.Next(), t);
        const uint64_t a = Mask(bits + b, t);
        form = absl::StrCat("subtract(", ValueString(a, t), ", ",
                            ValueString(b, t), ")=", v);
        return Add(
            comp, Opcode::kSubtract, Shape::Scalar(t),
            {IntConstant(comp, t, a, before), IntConstant(comp, t, b, before)},
            before);
      }
      case 2: {  // convert of another width / signedness
        for (int attempt = 0; attempt < 8; ++attempt) {
          const PrimitiveType from = rng.Pick(std::vector<PrimitiveType>(
              std::begin(kCounterTypes), std::end(kCounterTypes)));
          if (from == t) continue;
          uint64_t src;
          if (Width(from) > Width(t)) {
            src = Mask(bits | (rng.Next() << Width(t)), from);
          } else {
            src = Mask(bits, from);
            if (ConvertBits(src, from, t) != bits) continue;
          }
          form = absl::StrCat("convert(", TypeName(from), " ",
                              ValueString(src, from), ")=", v);
          return Add(comp, Opcode::kConvert, Shape::Scalar(t),
                     {IntConstant(comp, from, src, before)}, before);
        }
        break;
      }
      case 3: {  // negate
        form =
            absl::StrCat("negate(", ValueString(Mask(0 - bits, t), t), ")=", v);
        return Add(comp, Opcode::kNegate, Shape::Scalar(t),
                   {IntConstant(comp, t, 0 - bits, before)}, before);
      }
      case 4: {  // convert(partition-id) * 0 + v: constant, but not literally
        Instruction* pid = Add(comp, Opcode::kPartitionId,
                               Shape::Scalar(PrimitiveType::kU32), {}, before);
        Instruction* conv =
            Add(comp, Opcode::kConvert, Shape::Scalar(t), {pid}, before);
        Instruction* zero =
            Add(comp, Opcode::kMultiply, Shape::Scalar(t),
                {conv, IntConstant(comp, t, 0, before)}, before);
        form = absl::StrCat("partition-id*0+", v);
        return Add(comp, Opcode::kAdd, Shape::Scalar(t),
                   {zero, IntConstant(comp, t, bits, before)}, before);
      }
      default:
        break;
    }
    form = v;
    return IntConstant(comp, t, bits, before);
  }
};

// --- Mutations ---------------------------------------------------------------

template <typename T>
const T* PickOrNull(Rng& rng, const std::vector<T>& v) {
  return v.empty() ? nullptr : &v[rng.Below(v.size())];
}

std::optional<std::string> MutateBound(Ctx& c) {
  std::vector<LoopView> loops = CountedLoops(c.m);
  const LoopView* v = PickOrNull(c.rng, loops);
  if (v == nullptr) return std::nullopt;
  const PrimitiveType t = v->type;
  const FoldEnv cenv = v->cond_env();
  const FoldEnv benv = v->body_env();
  std::optional<uint64_t> old = Fold(*v->bound(), &cenv);
  uint64_t bits = c.ChooseValue(t);
  std::string why;
  if (c.rng.Chance(0.4)) {
    // A chosen trip count n: bound = start + n * step.
    auto start = v->init_tuple()
                     ? Fold(*v->init_tuple()->operand(v->k), nullptr)
                     : std::nullopt;
    auto step = Fold(*v->step(), &benv);
    if (start && step) {
      const uint64_t n =
          c.rng.Pick(std::vector<uint64_t>{0, 1, 2, 3, 4, 5, 7, 8, 9, 16, 31});
      const uint64_t s =
          v->update->opcode() == Opcode::kSubtract ? 0 - *step : *step;
      bits = Mask(*start + n * s, t);
      why = absl::StrCat(" (start + ", n, " steps)");
    }
  }
  std::string form;
  Instruction* b = c.BuildScalar(v->cond, t, bits, v->cmp, form);
  v->cmp->ReplaceOperandWith(1 - v->cmp_iv, b);
  c.TouchLoop(*v);
  return absl::StrCat("bound of ", v->loop->name(), ": ", TypeName(t), " ",
                      old ? ValueString(*old, t) : std::string("?"), " -> ",
                      form, why);
}

std::optional<std::string> MutateStep(Ctx& c) {
  std::vector<LoopView> loops = CountedLoops(c.m);
  const LoopView* v = PickOrNull(c.rng, loops);
  if (v == nullptr) return std::nullopt;
  const PrimitiveType t = v->type;
  const FoldEnv benv = v->body_env();
  std::optional<uint64_t> old = Fold(*v->step(), &benv);
  uint64_t bits;
  if (c.rng.Chance(0.05)) {
    bits = 0;
  } else if (c.rng.Chance(0.7)) {
    int64_t s = c.rng.Range(1, 7);
    if (c.rng.Chance(0.3)) s = -s;
    bits = Mask(static_cast<uint64_t>(s), t);
  } else {
    bits = c.ChooseValue(t);
  }
  std::string form;
  Instruction* s = c.BuildScalar(v->body, t, bits, v->update, form);
  v->update->ReplaceOperandWith(1 - v->update_iv, s);
  c.TouchLoop(*v);
  return absl::StrCat("step of ", v->loop->name(), ": ", TypeName(t), " ",
                      old ? ValueString(*old, t) : std::string("?"), " -> ",
                      form);
}

std::optional<std::string> MutateStart(Ctx& c) {
  std::vector<LoopView> loops;
  for (const LoopView& v : CountedLoops(c.m)) {
    if (v.init_tuple() != nullptr) loops.push_back(v);
  }
  const LoopView* v = PickOrNull(c.rng, loops);
  if (v == nullptr) return std::nullopt;
  const PrimitiveType t = v->type;
  Instruction* init = v->init_tuple();
  std::optional<uint64_t> old = Fold(*init->operand(v->k), nullptr);
  const uint64_t bits = old && c.rng.Chance(0.3) ? *old : c.ChooseValue(t);
  std::string form;
  Instruction* s = c.BuildScalar(init->parent(), t, bits, init, form);
  init->ReplaceOperandWith(v->k, s);
  c.TouchLoop(*v);
  for (Instruction* u : init->users()) {
    if (u->opcode() == Opcode::kWhile) c.Touch(u);
  }
  return absl::StrCat("start of ", v->loop->name(), ": ", TypeName(t), " ",
                      old ? ValueString(*old, t) : std::string("?"), " -> ",
                      form);
}

// Changes the counter of `v` to type `to` on its whole chain (see the header
// comment, kCounterType).
std::optional<std::string> MutateCounterType(Ctx& c) {
  std::vector<LoopView> loops;
  for (const LoopView& v : CountedLoops(c.m)) {
    bool ok = CallerCount(c.m, v.cond) == 1 && CallerCount(c.m, v.body) == 1 &&
              v.loop->parent()->root() != v.loop;
    for (const Instruction* u : v.loop->users()) {
      ok &= u->opcode() == Opcode::kGetTupleElement;
    }
    for (const Instruction* u : v.cond_param->users()) {
      ok &= u->opcode() == Opcode::kGetTupleElement;
    }
    for (const Instruction* u : v.body_param->users()) {
      ok &= u->opcode() == Opcode::kGetTupleElement;
    }
    if (ok) loops.push_back(v);
  }
  const LoopView* pv = PickOrNull(c.rng, loops);
  if (pv == nullptr) return std::nullopt;
  const LoopView v = *pv;
  const PrimitiveType from = v.type;
  PrimitiveType to = from;
  while (to == from) {
    to = kCounterTypes[c.rng.Below(std::size(kCounterTypes))];
  }
  // Keep the values (wrapped) or move them near the new type's limits.
  const bool keep_values = c.rng.Chance(0.4);
  const FoldEnv cenv = v.cond_env();
  const FoldEnv benv = v.body_env();
  absl::flat_hash_set<const Instruction*> retyped;
  std::string values;

  auto set_type = [&](Instruction* x) {
    Shape s = x->shape();
    s.set_element_type(to);
    x->set_shape(std::move(s));
    retyped.insert(x);
  };
  auto convert = [&](Instruction* x, PrimitiveType t,
                     const Instruction* before) {
    Shape s = x->shape();
    s.set_element_type(t);
    return c.Add(x->parent(), Opcode::kConvert, std::move(s), {x}, before);
  };
  // Users of `x` (now of type `to`) read it through a convert back to
  // `from`, except the compare, the update and the body root's counter slot.
  Instruction* const body_root = v.body->root();
  auto convert_other_users = [&](Instruction* x) {
    std::vector<Instruction*> users(x->users().begin(), x->users().end());
    for (Instruction* u : users) {
      if (u == v.cmp || u == v.update) continue;
      for (int64_t i = 0; i < u->operand_count(); ++i) {
        if (u->operand(i) != x || (u == body_root && i == v.k)) continue;
        u->ReplaceOperandWith(i, convert(x, from, u));
      }
    }
    if (x->parent()->root() == x) {
      x->parent()->set_root(convert(x, from, nullptr));
    }
  };
  // Operand `i` of `x` (a chain instruction) becomes type `to`: a constant
  // expression is rebuilt at the new type, anything else converted.
  auto retype_slot = [&](Instruction* x, int64_t i, const FoldEnv* env,
                         const std::string& what) {
    Instruction* op = x->operand(i);
    if (retyped.contains(op)) return;
    std::optional<uint64_t> val = Fold(*op, env);
    if (val && op->opcode() != Opcode::kGetTupleElement) {
      const uint64_t bits = keep_values ? ConvertBits(*val, from, to)
                                        : (what == "step" && c.rng.Chance(0.6)
                                               ? Mask(c.rng.Below(7) + 1, to)
                                               : c.ChooseValue(to));
      std::string form;
      x->ReplaceOperandWith(i, c.BuildScalar(x->parent(), to, bits, x, form));
      absl::StrAppend(&values, " ", what, "=", form);
    } else {
      x->ReplaceOperandWith(i, convert(op, to, x));
      absl::StrAppend(&values, " ", what, "=convert(", op->name(), ")");
    }
  };

  // State shapes.
  auto state_shape = [&](const Shape& s) {
    Shape r = s;
    r.mutable_tuple_shapes()[v.k].set_element_type(to);
    return r;
  };
  const Shape new_state = state_shape(v.loop->shape());
  Instruction* old_init = v.init();
  v.loop->set_shape(new_state);
  v.cond_param->set_shape(new_state);
  v.body_param->set_shape(new_state);
  body_root->set_shape(state_shape(body_root->shape()));
  // Counter reads in the condition and the body.
  for (Instruction* param : {v.cond_param, v.body_param}) {
    std::vector<Instruction*> gtes(param->users().begin(),
                                   param->users().end());
    for (Instruction* g : gtes) {
      if (g->tuple_index() == v.k) set_type(g);
    }
    for (Instruction* g : gtes) {
      if (g->tuple_index() == v.k) convert_other_users(g);
    }
  }
  // The compare and the update.
  v.cmp->mutable_attrs().comparison_type.clear();
  retype_slot(v.cmp, 1 - v.cmp_iv, &cenv, "bound");
  set_type(v.update);
  retype_slot(v.update, 1 - v.update_iv, &benv, "step");
  convert_other_users(v.update);
  // A new initial tuple (the old one may have other users).
  Computation* caller = v.loop->parent();
  std::vector<Instruction*> elems;
  for (int64_t j = 0; j < new_state.tuple_size(); ++j) {
    if (old_init->opcode() == Opcode::kTuple) {
      elems.push_back(old_init->operand(j));
    } else {
      elems.push_back(c.Add(caller, Opcode::kGetTupleElement,
                            old_init->shape().tuple_shapes(j), {old_init},
                            v.loop));
      elems.back()->mutable_attrs().tuple_index = j;
    }
  }
  Instruction* init = c.Add(caller, Opcode::kTuple, new_state, elems, v.loop);
  retype_slot(init, v.k, nullptr, "start");
  v.loop->ReplaceOperandWith(0, init);
  // Results: the counter's get-tuple-elements read through a convert.
  std::vector<Instruction*> results(v.loop->users().begin(),
                                    v.loop->users().end());
  for (Instruction* g : results) {
    if (g->tuple_index() != v.k) continue;
    set_type(g);
    convert_other_users(g);
  }
  c.TouchLoop(v);
  return absl::StrCat("counter of ", v.loop->name(), ": ", TypeName(from),
                      " -> ", TypeName(to), keep_values ? " (values kept)" : "",
                      values);
}

std::optional<std::string> MutateDirection(Ctx& c) {
  std::vector<LoopView> loops = CountedLoops(c.m);
  const LoopView* v = PickOrNull(c.rng, loops);
  if (v == nullptr) return std::nullopt;
  c.TouchLoop(*v);
  const ComparisonDirection old = v->cmp->attrs().comparison_direction;
  switch (c.rng.Below(3)) {
    case 0: {  // same meaning, operands swapped
      Instruction* a = v->cmp->operand(0);
      Instruction* b = v->cmp->operand(1);
      v->cmp->ReplaceOperandWith(0, b);
      v->cmp->ReplaceOperandWith(1, a);
      v->cmp->mutable_attrs().comparison_direction = Swapped(old);
      return absl::StrCat("compare of ", v->loop->name(),
                          ": operands swapped, ", DirectionName(old), " -> ",
                          DirectionName(Swapped(old)));
    }
    case 1: {  // same meaning, add <-> subtract of the negated step
      Instruction* iv = v->update->operand(v->update_iv);
      Instruction* neg = c.Add(v->body, Opcode::kNegate, v->step()->shape(),
                               {v->step()}, v->update);
      const Opcode op = v->update->opcode() == Opcode::kAdd ? Opcode::kSubtract
                                                            : Opcode::kAdd;
      Instruction* u =
          c.Add(v->body, op, v->update->shape(), {iv, neg}, v->update);
      if (!v->update->ReplaceAllUsesWith(u).ok()) return std::nullopt;
      return absl::StrCat("update of ", v->loop->name(), ": ",
                          OpName(v->update->opcode()), " -> ", OpName(op),
                          " of the negated step");
    }
    default: {
      const ComparisonDirection d =
          static_cast<ComparisonDirection>(c.rng.Below(6));
      v->cmp->mutable_attrs().comparison_direction = d;
      return absl::StrCat("direction of ", v->loop->name(), ": ",
                          DirectionName(old), " -> ", DirectionName(d));
    }
  }
}

// Sets the while's known_trip_count to n (nullopt: removes it), keeping the
// config's other members (while_backend_config.h). A backend_config that is
// not a JSON object is replaced by one.
void SetTripCount(Instruction* w, std::optional<int64_t> n) {
  InstructionAttributes& a = w->mutable_attrs();
  if (!a.while_config->present() && !a.backend_config.empty()) {
    if (!n) return;
    a.backend_config.clear();
  }
  a.while_config->set_known_trip_count(n);
}

std::optional<std::string> MutateKnownTripCount(Ctx& c) {
  std::vector<Instruction*> loops = Whiles(c.m);
  if (loops.empty()) return std::nullopt;
  Instruction* w = loops[c.rng.Below(loops.size())];
  std::optional<int64_t> exact = ExactTripCount(*w);
  std::optional<int64_t> old = BackendConfigTripCount(*w);
  std::optional<int64_t> n;
  std::string what;
  if (!exact) {
    if (!old) return std::nullopt;  // only a count we can prove is written
    what = "removed";
  } else {
    switch (c.rng.Below(6)) {
      case 0:
        what = "removed";
        break;
      case 1:
      case 2:
        n = *exact;
        what = "exact";
        break;
      case 3:
        n = *exact + 1;
        what = "contradicting";
        break;
      case 4:
        n = *exact > 0 ? *exact - 1 : 2;
        what = "contradicting";
        break;
      default:
        n = c.rng.Range(0, 40);
        what = n == *exact ? "exact" : "contradicting";
        break;
    }
  }
  SetTripCount(w, n);
  return absl::StrCat("known_trip_count of ", w->name(), ": ",
                      old ? absl::StrCat(*old) : std::string("none"), " -> ",
                      n ? absl::StrCat(*n) : std::string("none"), " (", what,
                      exact ? absl::StrCat(", exact ", *exact) : "", ")");
}

std::optional<std::string> MutateShareBody(Ctx& c) {
  std::vector<LoopView> loops = CountedLoops(c.m);
  const LoopView* pv = PickOrNull(c.rng, loops);
  if (pv == nullptr) return std::nullopt;
  const LoopView v = *pv;
  Computation* comp = v.loop->parent();
  std::vector<Instruction*> users(v.loop->users().begin(),
                                  v.loop->users().end());
  const bool was_root = comp->root() == v.loop;
  const Instruction* before = nullptr;  // after the loop: at the end
  if (comp->parent()->is_scheduled()) {
    // Keep the schedule valid: insert right before the first user.
    for (const auto& i : comp->instructions()) {
      if (std::find(users.begin(), users.end(), i.get()) != users.end()) {
        before = i.get();
        break;
      }
    }
  }
  std::vector<Instruction*> elems;
  const Shape& s = v.loop->shape();
  for (int64_t j = 0; j < s.tuple_size(); ++j) {
    Instruction* g = c.Add(comp, Opcode::kGetTupleElement, s.tuple_shapes(j),
                           {v.loop}, before);
    g->mutable_attrs().tuple_index = j;
    elems.push_back(g);
  }
  std::optional<uint64_t> start =
      v.init_tuple() ? Fold(*v.init_tuple()->operand(v.k), nullptr)
                     : std::nullopt;
  // Mostly the same start (the second loop runs as often as the first);
  // otherwise any value, which may not terminate (skipped then).
  const uint64_t bits =
      start && c.rng.Chance(0.75) ? *start : c.ChooseValue(v.type);
  std::string form;
  elems[v.k] = c.BuildScalar(comp, v.type, bits, before, form);
  Instruction* init = c.Add(comp, Opcode::kTuple, s, elems, before);
  auto w2 = std::make_unique<Instruction>(
      Opcode::kWhile, c.Name(absl::StrCat(v.loop->name(), ".again")), s);
  w2->AppendOperand(init);
  w2->CopyAttributesFrom(*v.loop);
  Instruction* second = comp->AddInstruction(std::move(w2), before);
  for (Instruction* u : users) u->ReplaceOperandsWith(v.loop, second);
  if (was_root) comp->set_root(second);
  c.Touch(second);
  return absl::StrCat("second loop ", second->name(), " shares ",
                      v.cond->name(), "/", v.body->name(), " with ",
                      v.loop->name(), ", start ", form);
}

bool Interesting(const Instruction* i) {
  return IsCollective(i->opcode()) || IsAsyncStart(i->opcode()) ||
         IsAsyncDone(i->opcode()) || i->opcode() == Opcode::kWhile ||
         i->opcode() == Opcode::kDynamicUpdateSlice ||
         i->opcode() == Opcode::kDynamicSlice;
}

std::optional<std::string> MutateControlDep(Ctx& c) {
  std::vector<Computation*> comps;
  for (Computation* comp : MutableComputations(c.m)) {
    if (comp->instruction_count() >= 3) comps.push_back(comp);
  }
  if (comps.empty()) return std::nullopt;
  Computation* comp = comps[c.rng.Below(comps.size())];
  std::vector<Instruction*> order = comp->MakeInstructionPostOrder();
  absl::flat_hash_map<const Instruction*, size_t> stored;
  for (size_t i = 0; i < comp->instructions().size(); ++i) {
    stored[comp->instructions()[i].get()] = i;
  }
  std::vector<size_t> interesting;
  for (size_t i = 0; i < order.size(); ++i) {
    if (Interesting(order[i])) interesting.push_back(i);
  }
  for (int attempt = 0; attempt < 20; ++attempt) {
    size_t a = c.rng.Below(order.size());
    size_t b = c.rng.Below(order.size());
    if (!interesting.empty() && c.rng.Chance(0.6)) {
      (c.rng.Chance(0.5) ? a : b) =
          interesting[c.rng.Below(interesting.size())];
    }
    if (a == b) continue;
    if (a > b) std::swap(a, b);
    Instruction* pred = order[a];
    Instruction* succ = order[b];
    if (succ->opcode() == Opcode::kParameter || stored[pred] > stored[succ] ||
        succ->IsUserOf(pred)) {
      continue;
    }
    const auto& preds = succ->control_predecessors();
    if (std::find(preds.begin(), preds.end(), pred) != preds.end()) continue;
    succ->AddControlPredecessor(pred);
    return absl::StrCat("control edge ", pred->name(), " -> ", succ->name(),
                        " in ", comp->name());
  }
  return std::nullopt;
}

std::optional<std::string> MutateCollectiveUser(Ctx& c) {
  std::vector<Instruction*> colls;
  for (Computation* comp : MutableComputations(c.m)) {
    for (const auto& i : comp->instructions()) {
      if (IsCollective(i->opcode()) && i->shape().IsArray()) {
        colls.push_back(i.get());
      }
    }
  }
  if (colls.empty()) return std::nullopt;
  Instruction* coll = colls[c.rng.Below(colls.size())];
  Computation* comp = coll->parent();
  Instruction* root = comp->root();
  // Loop counters of loops using this computation as body stay untouched.
  absl::flat_hash_set<int64_t> counters;
  for (const LoopView& v : CountedLoops(c.m)) {
    if (v.body == comp) counters.insert(v.k);
  }
  std::vector<int64_t> slots;
  if (root != nullptr && root->opcode() == Opcode::kTuple) {
    for (int64_t j = 0; j < root->operand_count(); ++j) {
      if (!counters.contains(j) && root->operand(j) != coll &&
          root->operand(j)->shape() == coll->shape() &&
          root->shape().tuple_shapes(j) == coll->shape()) {
        slots.push_back(j);
      }
    }
  }
  const PrimitiveType t = coll->shape().element_type();
  const bool can_add = t != PrimitiveType::kPred && !IsComplexType(t);
  c.TouchLoopsUsing(comp);
  if (!slots.empty() && c.rng.Chance(0.8)) {
    const int64_t j = slots[c.rng.Below(slots.size())];
    Instruction* old = root->operand(j);
    if (can_add && c.rng.Chance(0.6)) {
      Instruction* sum =
          c.Add(comp, Opcode::kAdd, coll->shape(), {old, coll}, root);
      root->ReplaceOperandWith(j, sum);
      return absl::StrCat(coll->name(), " gets a second user: element ", j,
                          " of ", root->name(), " adds it");
    }
    root->ReplaceOperandWith(j, coll);
    return absl::StrCat(coll->name(), " gets a second user: it is element ", j,
                        " of ", root->name());
  }
  c.Add(comp, Opcode::kCopy, coll->shape(), {coll}, nullptr);
  return absl::StrCat(coll->name(), " gets a second user: a dead copy");
}

std::optional<std::string> MutateNest(Ctx& c) {
  std::vector<Instruction*> loops;
  for (Instruction* w : Whiles(c.m)) {
    if (!w->parent()->parent()->is_scheduled()) loops.push_back(w);
  }
  if (loops.empty()) return std::nullopt;
  Instruction* w = loops[c.rng.Below(loops.size())];
  std::optional<LoopView> view = MatchLoop(w);
  // Nested, the loop's start is no longer a constant: a known_trip_count
  // that contradicted its provable count would become a promise nothing can
  // disprove (removed below, through `touched`).
  const std::optional<int64_t> ktc = BackendConfigTripCount(*w);
  const bool contradicted = ktc && ExactTripCount(*w) != ktc;
  const bool reset = view && view->init_tuple() != nullptr && c.rng.Chance(0.7);
  Computation* caller = w->parent();
  const Shape& s = w->shape();
  const PrimitiveType ct =
      c.rng.Chance(0.8) ? PrimitiveType::kS32
                        : kCounterTypes[c.rng.Below(std::size(kCounterTypes))];
  const int64_t n = c.rng.Range(0, 3);
  const Shape outer = Shape::Tuple({Shape::Scalar(ct), s, s});

  auto new_comp = [&](std::string_view base) {
    return c.m.AddComputation(
        std::make_unique<Computation>(c.m.UniqueComputationName(base)), caller);
  };
  auto param = [&](Computation* comp) {
    Instruction* p = c.Add(comp, Opcode::kParameter, outer, {}, nullptr);
    p->mutable_attrs().parameter_number = 0;
    return p;
  };
  auto gte = [&](Instruction* t, int64_t j) {
    Instruction* g = c.Add(t->parent(), Opcode::kGetTupleElement,
                           t->shape().tuple_shapes(j), {t}, nullptr);
    g->mutable_attrs().tuple_index = j;
    return g;
  };
  // Outer condition: i < n.
  Computation* oc = new_comp(absl::StrCat(w->name(), ".outer_cond"));
  Instruction* cp = param(oc);
  Instruction* lt =
      c.Add(oc, Opcode::kCompare, Shape::Scalar(PrimitiveType::kPred),
            {gte(cp, 0), c.IntConstant(oc, ct, n, nullptr)}, nullptr);
  lt->mutable_attrs().comparison_direction = ComparisonDirection::kLt;
  oc->set_root(lt);
  // Outer body: the loop from the carried state (counter reset) or from the
  // initial state, i + 1, the initial state passed on.
  Computation* ob = new_comp(absl::StrCat(w->name(), ".outer_body"));
  Instruction* bp = param(ob);
  Instruction* i = gte(bp, 0);
  Instruction* s0 = gte(bp, 1);
  Instruction* inner_init = s0;
  if (reset) {
    Instruction* acc = gte(bp, 2);
    std::vector<Instruction*> elems;
    for (int64_t j = 0; j < s.tuple_size(); ++j) {
      elems.push_back(gte(j == view->k ? s0 : acc, j));
    }
    inner_init = c.Add(ob, Opcode::kTuple, s, elems, nullptr);
  }
  auto inner = std::make_unique<Instruction>(Opcode::kWhile, w->name(), s);
  inner->AppendOperand(inner_init);
  inner->CopyAttributesFrom(*w);
  Instruction* inner_w = ob->AddInstruction(std::move(inner));
  Instruction* next = c.Add(ob, Opcode::kAdd, Shape::Scalar(ct),
                            {i, c.IntConstant(ob, ct, 1, nullptr)}, nullptr);
  ob->set_root(c.Add(ob, Opcode::kTuple, outer, {next, s0, inner_w}, nullptr));
  // The caller: the outer loop replaces `w`.
  Instruction* init =
      c.Add(caller, Opcode::kTuple, outer,
            {c.IntConstant(caller, ct, 0, w), w->operand(0), w->operand(0)}, w);
  auto ow = std::make_unique<Instruction>(
      Opcode::kWhile, c.Name(absl::StrCat(w->name(), ".outer")), outer);
  ow->AppendOperand(init);
  ow->mutable_called_computations() = {oc, ob};
  if (c.rng.Chance(0.3)) SetTripCount(ow.get(), n);
  Instruction* outer_w = caller->AddInstruction(std::move(ow), w);
  Instruction* result =
      c.Add(caller, Opcode::kGetTupleElement, s, {outer_w}, w);
  result->mutable_attrs().tuple_index = 2;
  std::vector<Instruction*> preds = w->control_predecessors();
  std::vector<Instruction*> succs = w->control_successors();
  for (Instruction* p : preds) outer_w->AddControlPredecessor(p);
  for (Instruction* q : succs) q->AddControlPredecessor(result);
  w->DropAllControlDependencies();
  const std::string name = w->name();
  if (!w->ReplaceAllUsesWith(result).ok()) return std::nullopt;
  if (!caller->RemoveInstruction(w).ok()) return std::nullopt;
  inner_w->set_name(name);
  if (contradicted) c.touched.insert(inner_w);
  c.m.SortComputationsCalleesFirst();
  return absl::StrCat(
      name, " wrapped in an outer loop ", outer_w->name(), " (", TypeName(ct),
      ", ", n, " iterations, ",
      reset ? "counter reset, rest carried" : "initial state each time", ")");
}

std::optional<std::string> MutateCallStart(Ctx& c) {
  std::vector<LoopView> loops;
  for (const LoopView& v : CountedLoops(c.m)) {
    Instruction* w = v.loop;
    if (v.init_tuple() != nullptr && !w->parent()->parent()->is_scheduled() &&
        w->control_predecessors().empty() && w->control_successors().empty()) {
      loops.push_back(v);
    }
  }
  const LoopView* pv = PickOrNull(c.rng, loops);
  if (pv == nullptr) return std::nullopt;
  const LoopView v = *pv;
  Instruction* w = v.loop;
  Computation* caller = w->parent();
  const Shape& s = w->shape();
  Computation* fn = c.m.AddComputation(
      std::make_unique<Computation>(
          c.m.UniqueComputationName(absl::StrCat(w->name(), ".fn"))),
      caller);
  Instruction* state = c.Add(fn, Opcode::kParameter, s, {}, nullptr);
  state->mutable_attrs().parameter_number = 0;
  Instruction* start =
      c.Add(fn, Opcode::kParameter, Shape::Scalar(v.type), {}, nullptr);
  start->mutable_attrs().parameter_number = 1;
  std::vector<Instruction*> elems;
  for (int64_t j = 0; j < s.tuple_size(); ++j) {
    if (j == v.k) {
      elems.push_back(start);
      continue;
    }
    Instruction* g = c.Add(fn, Opcode::kGetTupleElement, s.tuple_shapes(j),
                           {state}, nullptr);
    g->mutable_attrs().tuple_index = j;
    elems.push_back(g);
  }
  Instruction* init = c.Add(fn, Opcode::kTuple, s, elems, nullptr);
  auto inner = std::make_unique<Instruction>(Opcode::kWhile, w->name(), s);
  inner->AppendOperand(init);
  inner->CopyAttributesFrom(*w);
  Instruction* inner_w = fn->AddInstruction(std::move(inner));
  fn->set_root(inner_w);
  Instruction* start_value = v.init_tuple()->operand(v.k);
  Instruction* call =
      c.Add(caller, Opcode::kCall, s, {w->operand(0), start_value}, w);
  call->mutable_called_computations() = {fn};
  const std::string name = w->name();
  if (!w->ReplaceAllUsesWith(call).ok()) return std::nullopt;
  if (!caller->RemoveInstruction(w).ok()) return std::nullopt;
  inner_w->set_name(name);
  c.m.SortComputationsCalleesFirst();
  return absl::StrCat(name, " moved into ", fn->name(), ", called by ",
                      call->name(), " with its start ", start_value->name(),
                      " as parameter 1");
}

std::optional<std::string> MutateTupleDuplicate(Ctx& c) {
  struct Candidate {
    Instruction* tuple;
    const char* what;
  };
  std::vector<Candidate> tuples;
  for (Instruction* w : Whiles(c.m)) {
    Instruction* r = w->while_body() ? w->while_body()->root() : nullptr;
    if (r && r->opcode() == Opcode::kTuple) tuples.push_back({r, "body root"});
    if (w->operand_count() == 1 && w->operand(0)->opcode() == Opcode::kTuple) {
      tuples.push_back({w->operand(0), "loop init"});
    }
  }
  Instruction* er = c.m.entry() ? c.m.entry()->root() : nullptr;
  if (er && er->opcode() == Opcode::kTuple)
    tuples.push_back({er, "entry root"});
  for (int attempt = 0; attempt < 8 && !tuples.empty(); ++attempt) {
    const Candidate& t = tuples[c.rng.Below(tuples.size())];
    std::vector<std::pair<int64_t, int64_t>> pairs;
    const int64_t n = t.tuple->operand_count();
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        if (i != j && t.tuple->operand(i) != t.tuple->operand(j) &&
            t.tuple->operand(i)->shape() == t.tuple->shape().tuple_shapes(j)) {
          pairs.push_back({i, j});
        }
      }
    }
    if (pairs.empty()) continue;
    auto [i, j] = pairs[c.rng.Below(pairs.size())];
    t.tuple->ReplaceOperandWith(j, t.tuple->operand(i));
    c.TouchLoopsUsing(t.tuple->parent());
    for (Instruction* u : t.tuple->users()) {
      if (u->opcode() == Opcode::kWhile) c.Touch(u);
    }
    return absl::StrCat(t.what, " ", t.tuple->name(), ": element ", j,
                        " := element ", i);
  }
  return std::nullopt;
}

}  // namespace

std::string_view MutationKindName(MutationKind kind) {
  switch (kind) {
    case MutationKind::kBound:
      return "bound";
    case MutationKind::kStep:
      return "step";
    case MutationKind::kStart:
      return "start";
    case MutationKind::kCounterType:
      return "counter-type";
    case MutationKind::kDirection:
      return "direction";
    case MutationKind::kKnownTripCount:
      return "known-trip-count";
    case MutationKind::kShareBody:
      return "share-body";
    case MutationKind::kControlDep:
      return "control-dep";
    case MutationKind::kCollectiveUser:
      return "collective-user";
    case MutationKind::kNest:
      return "nest";
    case MutationKind::kTupleDuplicate:
      return "tuple-duplicate";
    case MutationKind::kCallStart:
      return "call-start";
  }
  return "?";
}

std::optional<MutationKind> ParseMutationKind(std::string_view name) {
  for (MutationKind k : kAllKinds) {
    if (MutationKindName(k) == name) return k;
  }
  return std::nullopt;
}

std::vector<MutationKind> AllMutationKinds() {
  return std::vector<MutationKind>(std::begin(kAllKinds), std::end(kAllKinds));
}

std::optional<int64_t> BackendConfigTripCount(const Instruction& w) {
  return w.attrs().while_config->known_trip_count();
}

std::optional<int64_t> CounterIndex(const Instruction& while_instr) {
  std::optional<LoopView> v = MatchLoop(const_cast<Instruction*>(&while_instr));
  return v ? std::optional<int64_t>(v->k) : std::nullopt;
}

std::optional<int64_t> ExactTripCount(const Instruction& while_instr,
                                      int64_t cap) {
  std::optional<LoopView> v = MatchLoop(const_cast<Instruction*>(&while_instr));
  if (!v || v->init_tuple() == nullptr) return std::nullopt;
  const FoldEnv cenv = v->cond_env();
  const FoldEnv benv = v->body_env();
  auto start = Fold(*v->init_tuple()->operand(v->k), nullptr);
  auto step = Fold(*v->step(), &benv);
  auto bound = Fold(*v->bound(), &cenv);
  if (!start || !step || !bound) return std::nullopt;
  const PrimitiveType t = v->type;
  const ComparisonDirection dir = v->cmp->attrs().comparison_direction;
  const bool sub = v->update->opcode() == Opcode::kSubtract;
  uint64_t iv = *start;
  for (int64_t n = 0; n <= cap; ++n) {
    const bool go =
        v->cmp_iv == 0 ? Holds(iv, *bound, dir, t) : Holds(*bound, iv, dir, t);
    if (!go) return n;
    iv = Mask(sub ? iv - *step : iv + *step, t);
  }
  return std::nullopt;
}

std::optional<AppliedMutation> ApplyMutation(Module& module, MutationKind kind,
                                             Rng& rng) {
  absl::flat_hash_set<const Instruction*> touched;
  Ctx c{module, rng, touched};
  std::optional<std::string> d;
  switch (kind) {
    case MutationKind::kBound:
      d = MutateBound(c);
      break;
    case MutationKind::kStep:
      d = MutateStep(c);
      break;
    case MutationKind::kStart:
      d = MutateStart(c);
      break;
    case MutationKind::kCounterType:
      d = MutateCounterType(c);
      break;
    case MutationKind::kDirection:
      d = MutateDirection(c);
      break;
    case MutationKind::kKnownTripCount:
      d = MutateKnownTripCount(c);
      break;
    case MutationKind::kShareBody:
      d = MutateShareBody(c);
      break;
    case MutationKind::kControlDep:
      d = MutateControlDep(c);
      break;
    case MutationKind::kCollectiveUser:
      d = MutateCollectiveUser(c);
      break;
    case MutationKind::kNest:
      d = MutateNest(c);
      break;
    case MutationKind::kTupleDuplicate:
      d = MutateTupleDuplicate(c);
      break;
    case MutationKind::kCallStart:
      d = MutateCallStart(c);
      break;
  }
  if (!d) return std::nullopt;
  // A known_trip_count the mutation may have falsified, on a loop whose
  // count cannot be computed, is a broken promise: remove it.
  for (const Instruction* w : touched) {
    Instruction* loop = const_cast<Instruction*>(w);
    if (loop->parent() == nullptr || !BackendConfigTripCount(*loop)) continue;
    if (!ExactTripCount(*loop)) {
      SetTripCount(loop, std::nullopt);
      absl::StrAppend(&*d, "; known_trip_count of ", loop->name(),
                      " removed (no longer provable)");
    }
  }
  return AppliedMutation{kind, *std::move(d)};
}

std::vector<AppliedMutation> MutateModule(
    Module& module, Rng& rng, const std::vector<MutationKind>& kinds,
    int max_mutations) {
  std::vector<AppliedMutation> applied;
  if (kinds.empty()) return applied;
  const int want = 1 + static_cast<int>(rng.Below(std::max(1, max_mutations)));
  for (int attempt = 0; attempt < 4 * want && applied.size() < want;
       ++attempt) {
    if (auto m = ApplyMutation(module, kinds[rng.Below(kinds.size())], rng)) {
      applied.push_back(*std::move(m));
    }
  }
  return applied;
}

}  // namespace hloverlap::fuzz
