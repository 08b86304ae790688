#include "hlo/verifier.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "hlo/absl_compat.h"
#include "hlo/diagnostic.h"
#include "hlo/opcode_traits.h"
#include "hlo/shape_inference.h"
#include "hlo/text_hash.h"

namespace hloverlap {
namespace {

absl::string_view Op(Opcode opcode) { return AsAbsl(OpcodeName(opcode)); }

bool AnyDynamic(const Shape& shape) {
  if (shape.IsTuple()) {
    for (const Shape& s : shape.tuple_shapes()) {
      if (AnyDynamic(s)) return true;
    }
    return false;
  }
  for (int64_t i = 0; i < shape.rank(); ++i) {
    if (shape.dim_kind(i) != DimKind::kStatic || shape.dimensions(i) < 0) {
      return true;
    }
  }
  return false;
}

// Same rank, dimensions and dimension kinds (element types aside): what the
// shape rules call SameDimensions, for the accept-early tests below.
bool SameDims(const Shape& a, const Shape& b) {
  if (&a == &b) return true;
  if (a.rank() != b.rank()) return false;
  for (int64_t i = 0; i < a.rank(); ++i) {
    if (a.dimensions(i) != b.dimensions(i) || a.dim_kind(i) != b.dim_kind(i)) {
      return false;
    }
  }
  return true;
}

// Whether `result` is what the elementwise rules infer from `like` (an
// array with no tuple elements): its dimensions with no layout. Then the
// comparison (ShapesMatch, layouts or not) succeeds exactly when `result`
// has like's element type, dimensions and dimension kinds.
bool IsPlainArray(const Shape& s) {
  return s.IsArray() && s.tuple_shapes().empty();
}

// Whether InferBroadcastShape(operand, result.dimensions(), dimensions)
// certainly succeeds and matches `result` (an array whose dimensions are
// static, as checked before the arithmetic rules): each operand dimension
// maps to a distinct result dimension of its size, and the element types
// agree (the rule gives the operand's type, the result's dimensions, no
// layout). False means "run the rule".
bool BroadcastSurelyMatches(const Shape& operand, const Shape& result,
                            absl::Span<const int64_t> dimensions) {
  if (!operand.IsArray() || !result.IsArray() ||
      operand.element_type() != result.element_type() ||
      !result.tuple_shapes().empty() || !result.dim_kinds().empty() ||
      static_cast<int64_t>(dimensions.size()) != operand.rank() ||
      result.rank() > 64) {
    return false;
  }
  for (int64_t d : result.dimensions()) {
    if (d < 0) return false;
  }
  uint64_t seen = 0;
  for (int64_t k = 0; k < operand.rank(); ++k) {
    const int64_t d = dimensions[k];
    if (d < 0 || d >= result.rank() || (seen >> d & 1) != 0 ||
        result.dimensions(d) != operand.dimensions(k)) {
      return false;
    }
    seen |= uint64_t{1} << d;
  }
  return true;
}

// Group size of a mesh replica-group spec "mesh['a'=2,'b'=4] {'b'}": the
// product of the sizes of the axes in braces; nullopt if not understood.
std::optional<int64_t> MeshGroupSize(std::string_view text) {
  const size_t open = text.find('[');
  const size_t close =
      text.find(']', open == std::string_view::npos ? 0 : open);
  if (open == std::string_view::npos || close == std::string_view::npos) {
    return std::nullopt;
  }
  auto trim = [](std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) {
      s.remove_prefix(1);
    }
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) {
      s.remove_suffix(1);
    }
    return s;
  };
  auto unquote = [&](std::string_view s) -> std::optional<std::string_view> {
    s = trim(s);
    if (s.size() < 2 || s.front() != '\'' || s.back() != '\'') {
      return std::nullopt;
    }
    return s.substr(1, s.size() - 2);
  };
  auto split = [](std::string_view s) {
    std::vector<std::string_view> parts;
    size_t start = 0;
    while (start <= s.size()) {
      size_t comma = s.find(',', start);
      if (comma == std::string_view::npos) comma = s.size();
      parts.push_back(s.substr(start, comma - start));
      start = comma + 1;
    }
    return parts;
  };
  std::map<std::string, int64_t, std::less<>> axes;
  for (std::string_view entry :
       split(text.substr(open + 1, close - open - 1))) {
    const size_t eq = entry.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    std::optional<std::string_view> name = unquote(entry.substr(0, eq));
    std::string_view number = trim(entry.substr(eq + 1));
    if (!name.has_value() || number.empty() || number.size() > 12) {
      return std::nullopt;
    }
    int64_t value = 0;
    for (char ch : number) {
      if (!std::isdigit(static_cast<unsigned char>(ch))) return std::nullopt;
      value = value * 10 + (ch - '0');
    }
    axes[std::string(*name)] = value;
  }
  const size_t lbrace = text.find('{', close);
  const size_t rbrace =
      text.find('}', lbrace == std::string_view::npos ? close : lbrace);
  if (lbrace == std::string_view::npos || rbrace == std::string_view::npos) {
    return std::nullopt;
  }
  int64_t size = 1;
  for (std::string_view entry :
       split(text.substr(lbrace + 1, rbrace - lbrace - 1))) {
    std::optional<std::string_view> name = unquote(entry);
    if (!name.has_value()) return std::nullopt;
    auto it = axes.find(*name);
    if (it == axes.end()) return std::nullopt;
    if (__builtin_mul_overflow(size, it->second, &size)) return std::nullopt;
  }
  if (size <= 0) return std::nullopt;
  return size;
}

// The -done that completes `start` (or continues through `start`, an
// async-update): all-gather-done for all-gather-start, ...
bool CompletesAsync(const Instruction& start, const Instruction& user) {
  const Opcode op = start.opcode();
  return (IsAsyncStart(op) || op == Opcode::kAsyncUpdate) &&
         Traits(op).async_done == user.opcode();
}

// The first schedule problem of `c`: where it is (the instruction that runs
// too early) and what it is.
struct ScheduleProblem {
  const Instruction* at = nullptr;
  std::string message;
};

// The schedule problem of the users of async start (or async-update) `i`
// of `c`: a use of its value before the done that completes it. `find(x)`
// is x's position in c (nullopt if not in c); `where(x)` names x for a
// message. Shared by FirstScheduleProblem and the quick pass, so both apply
// the same rule.
template <typename Find, typename Where>
std::optional<ScheduleProblem> AsyncUseProblem(const Computation& c,
                                               const Instruction* i,
                                               const Find& find,
                                               const Where& where) {
  auto bad = [](const Instruction* at, std::string message) {
    return ScheduleProblem{at, std::move(message)};
  };
  // The done that completes this start (through async-updates).
  const Instruction* done = nullptr;
  const Instruction* cur = i;
  for (int64_t guard = 0;
       cur != nullptr && done == nullptr && guard <= c.instruction_count();
       ++guard) {
    const Instruction* next = nullptr;
    for (const Instruction* u : cur->users()) {
      if (u == nullptr) continue;
      if (CompletesAsync(*cur, *u)) {
        done = u;
        break;
      }
      if (u->opcode() == Opcode::kAsyncUpdate && next == nullptr &&
          (cur->opcode() == Opcode::kAsyncStart ||
           cur->opcode() == Opcode::kAsyncUpdate)) {
        next = u;
      }
    }
    cur = next;
  }
  for (const Instruction* u : i->users()) {
    if (u == nullptr || CompletesAsync(*i, *u) ||
        u->opcode() == Opcode::kAsyncUpdate) {
      continue;
    }
    if (done == nullptr) {
      return bad(
          u, absl::StrCat(where(u), " uses the value of ", Op(i->opcode()), " ",
                          where(i), ", which has no matching done"));
    }
    const std::optional<int64_t> u_at = find(u);
    const std::optional<int64_t> done_at = find(done);
    if (!u_at.has_value() || !done_at.has_value()) {
      return bad(i, absl::StrCat("users of ", where(i),
                                 " are not all in the computation"));
    }
    if (*u_at < *done_at) {
      return bad(u, absl::StrCat(where(u), " uses the value of ",
                                 Op(i->opcode()), " ", where(i), " before its ",
                                 Op(done->opcode()), " ", where(done)));
    }
  }
  return std::nullopt;
}

std::optional<ScheduleProblem> FirstScheduleProblem(const Computation& c) {
  absl::flat_hash_map<const Instruction*, int64_t> pos;
  pos.reserve(c.instruction_count());
  for (const auto& i : c.instructions()) {
    if (i != nullptr) pos.emplace(i.get(), static_cast<int64_t>(pos.size()));
  }
  auto find = [&](const Instruction* i) -> std::optional<int64_t> {
    auto it = pos.find(i);
    if (it == pos.end()) return std::nullopt;
    return it->second;
  };
  auto where = [&](const Instruction* i) {
    auto it = pos.find(i);
    if (it == pos.end()) return absl::StrCat(i->name(), " (elsewhere)");
    return absl::StrCat(i->name(), " (position ", it->second, ")");
  };
  auto bad = [](const Instruction* at, std::string message) {
    return ScheduleProblem{at, std::move(message)};
  };
  for (const auto& up : c.instructions()) {
    const Instruction* i = up.get();
    if (i == nullptr) continue;
    const int64_t at = pos.find(i)->second;  // i is in c
    for (const Instruction* o : i->operands()) {
      if (o == nullptr) continue;
      auto it = pos.find(o);
      if (it == pos.end()) {
        return bad(i, absl::StrCat("operand ", o->name(), " of ", i->name(),
                                   " is not in the computation"));
      }
      if (it->second < at) continue;
      if (IsAsyncDone(i->opcode()) && IsAsyncStart(o->opcode())) {
        return bad(
            i, absl::StrCat(Op(i->opcode()), " ", where(i), " runs before its ",
                            Op(o->opcode()), " ", where(o)));
      }
      return bad(i, absl::StrCat(where(i), " uses ", where(o),
                                 " before it is computed"));
    }
    for (const Instruction* p : i->control_predecessors()) {
      if (p == nullptr) continue;
      auto it = pos.find(p);
      if (it != pos.end() && it->second > at) {
        return bad(
            i, absl::StrCat(where(i), " runs before its control predecessor ",
                            where(p)));
      }
    }
    if (!IsAsyncStart(i->opcode()) && i->opcode() != Opcode::kAsyncUpdate) {
      continue;
    }
    if (std::optional<ScheduleProblem> p = AsyncUseProblem(c, i, find, where)) {
      return p;
    }
  }
  return std::nullopt;
}

// Whether `c`'s instruction order is a schedule to check.
bool HasSchedule(const Computation& c) {
  return c.parent() != nullptr && c.parent()->is_scheduled() &&
         !c.IsFusionComputation();
}

// The slots of an open-addressing table with linear probing: a power of
// two of them (16 at least), at most half full, an entry's first probe at
// the top bits of its 64-bit hash. PointerMap and NameSet keep their
// entries here; an empty slot is a value-initialized Slot.
template <typename Slot>
class ProbedSlots {
 public:
  // Empties the table and sizes it for `n` entries.
  void Reserve(size_t n) {
    size_t capacity = 16;
    while (capacity < 2 * n) capacity *= 2;
    slots_.assign(capacity, Slot{});
    shift_ = 64 - __builtin_ctzll(capacity);
    size_ = 0;
  }
  bool empty() const { return slots_.empty(); }
  // Whether one more entry keeps the table at most half full (false before
  // Reserve).
  bool HasRoom() const { return 2 * (size_ + 1) <= slots_.size(); }
  // The first slot to probe for `hash`, and the slot after `k`.
  size_t Home(uint64_t hash) const { return hash >> shift_; }
  size_t Next(size_t k) const { return (k + 1) & (slots_.size() - 1); }
  const Slot& at(size_t k) const { return slots_[k]; }
  Slot& at(size_t k) { return slots_[k]; }
  // Stores an entry in the empty slot `k` that probing found.
  void Fill(size_t k, const Slot& slot) {
    slots_[k] = slot;
    ++size_;
  }

 private:
  std::vector<Slot> slots_;
  size_t size_ = 0;
  int shift_ = 64;
};

// Pointer -> V by open addressing on the pointer's bits, which are never
// dereferenced (an operand may be anything). Fixed capacity, at most half
// full: Insert fails (nullptr) past what Reserve allowed, and for a key
// already present.
template <typename K, typename V>
class PointerMap {
 public:
  void Reserve(size_t n) { table_.Reserve(n); }
  V* Insert(const K* key, V value) {
    if (key == nullptr || !table_.HasRoom()) return nullptr;
    size_t k = table_.Home(Hash(key));
    while (table_.at(k).key != nullptr) {
      if (table_.at(k).key == key) return nullptr;
      k = table_.Next(k);
    }
    table_.Fill(k, Slot{key, value});
    return &table_.at(k).value;
  }
  V* Find(const K* key) {
    return const_cast<V*>(std::as_const(*this).Find(key));
  }
  const V* Find(const K* key) const {
    if (key == nullptr || table_.empty()) return nullptr;
    for (size_t k = table_.Home(Hash(key));; k = table_.Next(k)) {
      if (table_.at(k).key == key) return &table_.at(k).value;
      if (table_.at(k).key == nullptr) return nullptr;
    }
  }

 private:
  struct Slot {
    const K* key = nullptr;
    V value{};
  };
  static uint64_t Hash(const K* key) {
    return reinterpret_cast<uintptr_t>(key) * 0x9e3779b97f4a7c15ull;
  }
  ProbedSlots<Slot> table_;
};

// A set of names, each known by an id (the caller maps ids back to names):
// 8-byte slots holding 32 bits of the hash and the id, so probing compares
// names only when the hash bits agree. At most half full.
class NameSet {
 public:
  void Reserve(size_t n) { table_.Reserve(n); }
  // False if a name equal to `name` is already in the set (or the set is
  // full); `name_of(id)` gives the name of an id inserted before.
  template <typename NameOf>
  bool Insert(std::string_view name, uint32_t id, const NameOf& name_of) {
    if (!table_.HasRoom()) return false;
    const uint64_t h = HashText(name);
    const uint32_t tag = static_cast<uint32_t>(h) | 1;  // 0: empty slot
    size_t k = table_.Home(h);
    while (table_.at(k).tag != 0) {
      if (table_.at(k).tag == tag && name_of(table_.at(k).id) == name) {
        return false;
      }
      k = table_.Next(k);
    }
    table_.Fill(k, Slot{tag, id});
    return true;
  }

 private:
  struct Slot {
    uint32_t tag = 0;
    uint32_t id = 0;
  };
  ProbedSlots<Slot> table_;
};

class Verifier {
 public:
  Verifier(const Module* module, const Computation* only,
           const VerifierOptions& options)
      : module_(module), options_(options), only_(only) {}

  // The index of the full checks (position_, user_edges_, control_edges_).
  void BuildIndex() {
    // Verifying one computation indexes only its instructions (its operands
    // and users must be there anyway): O(computation), not O(module), so
    // passes can verify what they rewrite.
    std::vector<const Computation*> indexed;
    if (only_ != nullptr) {
      indexed.push_back(only_);
    } else if (module_ != nullptr) {
      for (const auto& c : module_->computations()) {
        if (c != nullptr) indexed.push_back(c.get());
      }
    }
    size_t count = 0;
    for (const Computation* c : indexed) count += c->instructions().size();
    position_.Reserve(count);
    for (const Computation* c : indexed) {
      int32_t position = 0;
      for (const auto& inst : c->instructions()) {
        if (inst == nullptr) continue;
        position_.Insert(inst.get(), Position{c, position++});
        // Long lists get a set; short ones are scanned (HasEdge).
        if (inst->users().size() > kScanLimit) {
          for (const Instruction* u : inst->users()) {
            user_edges_.insert({inst.get(), u});
          }
        }
        if (inst->control_successors().size() > kScanLimit) {
          for (const Instruction* s : inst->control_successors()) {
            control_edges_.insert({inst.get(), s});
          }
        }
      }
    }
  }

  // Whether the module certainly has no problem, found by one walk over
  // each computation (see "Quick pass" below). False means "maybe": the
  // full checks then run from scratch and word the problems.
  bool QuickModuleClean();

  std::vector<std::string> TakeProblems() { return std::move(problems_); }

  void VerifyModuleWide();
  void VerifyComputation(const Computation& c);

 private:
  // --- Reporting ------------------------------------------------------------
  template <typename... Args>
  void Report(const Computation& c, const Instruction& i, const Args&... args) {
    problems_.push_back(absl::StrCat("computation ", c.name(), ", instruction ",
                                     i.name(), ": ", args...));
  }
  template <typename... Args>
  void ReportComputation(const Computation& c, const Args&... args) {
    problems_.push_back(absl::StrCat("computation ", c.name(), ": ", args...));
  }
  template <typename... Args>
  void ReportModule(const Args&... args) {
    problems_.push_back(absl::StrCat(
        "module ", module_ != nullptr ? module_->name() : "?", ": ", args...));
  }

  std::string Str(const Shape& s) const {
    return ShapeString(s, options_.check_layouts);
  }
  bool Matches(const Shape& expected, const Shape& actual) const {
    return ShapesMatch(expected, actual, options_.check_layouts);
  }

  // Reports an inference error, or a mismatch between the inferred and the
  // actual result shape. `explain()` says where the expected shape comes
  // from; it is called only for a mismatch (building it for every
  // instruction cost more than all the checks).
  template <typename Explain>
  void CheckResult(const Computation& c, const Instruction& i,
                   const absl::StatusOr<Shape>& inferred,
                   const Explain& explain) {
    if (!inferred.ok()) {
      Report(c, i, inferred.status().message());
      return;
    }
    if (!Matches(*inferred, i.shape())) {
      Report(c, i, "expected result shape ", Str(*inferred), " (", explain(),
             "), found ", Str(i.shape()));
    }
  }
  void CheckResult(const Computation& c, const Instruction& i,
                   const absl::StatusOr<Shape>& inferred,
                   const char* explanation) {
    CheckResult(c, i, inferred, [explanation] { return explanation; });
  }
  // CheckResult for a native start: `inferred` is an Infer*StartShape
  // result, accepted in every form XLA prints (NativeStartShapeMatches;
  // `context`: context scalars may follow the result part).
  template <typename Explain>
  void CheckStartResult(const Computation& c, const Instruction& i,
                        const absl::StatusOr<Shape>& inferred, bool context,
                        const Explain& explain) {
    if (!inferred.ok()) {
      Report(c, i, inferred.status().message());
      return;
    }
    if (!NativeStartShapeMatches(*inferred, i.shape(), context,
                                 options_.check_layouts)) {
      Report(c, i, "expected result shape ", Str(*inferred),
             " (a lone operand may be in a 1-tuple",
             context ? ", context scalars may follow; " : "; ", explain(),
             "), found ", Str(i.shape()));
    }
  }

  bool KnownComputation(const Computation* c) const {
    return c != nullptr && (c == only_ || (module_ != nullptr &&
                                           module_->ContainsComputation(c)));
  }
  // The callee's program shape, or nullptr (already reported) if unusable.
  const ProgramShape* Program(const Computation& c, const Instruction& i,
                              const Computation* callee);

  // --- Per instruction --------------------------------------------------
  void VerifyInstruction(const Computation& c, const Instruction& i);
  bool VerifyEdges(const Computation& c, const Instruction& i);
  // `known(callee)`: whether callee is a computation of the module (as
  // KnownComputation).
  template <typename Known>
  bool VerifyCalledComputations(const Computation& c, const Instruction& i,
                                const Known& known);
  bool VerifyCalledComputations(const Computation& c, const Instruction& i) {
    return VerifyCalledComputations(
        c, i, [this](const Computation* x) { return KnownComputation(x); });
  }
  bool VerifyOperandCount(const Computation& c, const Instruction& i);
  void VerifyShape(const Computation& c, const Instruction& i);

  void VerifyDot(const Computation& c, const Instruction& i);
  void VerifyReduce(const Computation& c, const Instruction& i);
  void VerifyWhile(const Computation& c, const Instruction& i);
  void VerifyCall(const Computation& c, const Instruction& i);
  void VerifyConditional(const Computation& c, const Instruction& i);
  void VerifyFusion(const Computation& c, const Instruction& i);
  void VerifyGatherScatter(const Computation& c, const Instruction& i,
                           bool gather, bool start);
  void VerifyAllReduce(const Computation& c, const Instruction& i);
  void VerifyAllToAll(const Computation& c, const Instruction& i);
  void VerifyCollectivePermute(const Computation& c, const Instruction& i,
                               bool start);
  void VerifyAsyncStart(const Computation& c, const Instruction& i);
  void VerifyAsyncUpdateOrDone(const Computation& c, const Instruction& i);
  void VerifyNativeDone(const Computation& c, const Instruction& i);
  void VerifyReducer(const Computation& c, const Instruction& i);

  std::optional<int64_t> GroupSize(const Instruction& i) const;

  // --- Per computation ------------------------------------------------------
  void VerifyParameters(const Computation& c);
  void VerifyAcyclic(const Computation& c);

  // --- Quick pass -----------------------------------------------------------
  // One walk per computation in stored order, checking everything the full
  // checks do but only as "clean or not", so that a clean module (nearly
  // every one) costs one visit per instruction and a few table probes:
  //  - every instruction is listed once, in the computation it names as
  //    parent, and its name is new in the module (NameSet);
  //  - every operand (and control predecessor) is listed earlier in the same
  //    computation: membership, same computation and acyclicity at once;
  //  - use lists: each distinct (operand, user) edge is found in the
  //    operand's users() (scanned; lists longer than kScanLimit are checked
  //    from the users' side after the walk, each user once), and the users()
  //    lengths of the computation add up to the number of distinct edges, so
  //    no list holds anything else (no stranger, no repeat);
  //  - called computations are known and listed before their caller (so the
  //    call graph has no cycle), async computations have one async-start;
  //  - the per-instruction rules (called computations, operand counts,
  //    shapes) are the full checks' own functions, run under the same
  //    conditions (here: operands usable, counts and callees fine).
  // Anything unusual (not in stored topological order, callees after their
  // callers) answers "maybe" rather than being proved.
  struct QuickEntry {
    int32_t computation = 0;     // ordinal in module_->computations()
    int32_t index = 0;           // position in the computation
    int32_t distinct_users = 0;  // instructions counted as its users
    int32_t mark = -1;  // the last user counted (its id); or a repeat stamp
  };
  struct QuickCallee {
    int32_t computation = 0;  // ordinal
    bool async_called = false;
  };
  bool QuickComputation(const Computation& c, int32_t ordinal);
  // The control edges of QuickComputation's computation (quick_controlled_
  // listed), both ways.
  bool QuickControlEdges(int32_t ordinal, size_t instructions);
  PointerMap<Instruction, QuickEntry> quick_index_;
  PointerMap<Computation, QuickCallee> quick_callees_;
  NameSet quick_names_;
  std::vector<const Instruction*> quick_by_id_;  // the names' ids
  // Per computation: instructions with long users() lists, with control
  // edges, async starts and updates.
  std::vector<const Instruction*> quick_long_users_;
  std::vector<const Instruction*> quick_controlled_;
  std::vector<const Instruction*> quick_async_;
  // Per position in the computation: the control predecessor entries that
  // name it, when its control_successors() is longer than kScanLimit.
  std::vector<int32_t> quick_control_counts_;

  const Module* module_;
  VerifierOptions options_;
  const Computation* only_;
  // Lists up to this long are scanned rather than indexed.
  static constexpr size_t kScanLimit = 16;
  bool Indexed(const Instruction* i) const {
    return position_.Find(i) != nullptr;
  }
  // Whether `to` is in `from`'s list (users or control successors), which
  // `index` holds as pairs when the list is longer than kScanLimit.
  static bool HasEdge(
      absl::Span<Instruction* const> list, const Instruction* from,
      const Instruction* to,
      const absl::flat_hash_set<
          std::pair<const Instruction*, const Instruction*>>& index) {
    if (list.size() > kScanLimit) return index.contains({from, to});
    return std::find(list.begin(), list.end(), to) != list.end();
  }

  // Every instruction verified, with its position in its computation's
  // stored order (acyclic when every edge points backwards).
  struct Position {
    const Computation* computation;
    int32_t index;
  };
  // Instruction -> Position (BuildIndex reserves room for every instruction;
  // an instruction listed twice keeps its first position).
  PointerMap<Instruction, Position> position_;
  // (operand, user) pairs of the users() lists longer than kScanLimit.
  absl::flat_hash_set<std::pair<const Instruction*, const Instruction*>>
      user_edges_;
  // (predecessor, successor) pairs of the long control_successors() lists.
  absl::flat_hash_set<std::pair<const Instruction*, const Instruction*>>
      control_edges_;
  // Callee signatures; null where the callee has none (missing parameter or
  // root). unique_ptr keeps returned pointers stable across rehashing.
  absl::flat_hash_map<const Computation*, std::unique_ptr<ProgramShape>>
      programs_;
  std::vector<std::string> problems_;
};

std::string OperandShapes(const Instruction& i) {
  std::string out;
  const int64_t n = i.operand_count();
  for (int64_t k = 0; k < n && k < 8; ++k) {
    if (k > 0) out += ", ";
    out += ShapeString(i.operand(k)->shape());
  }
  if (n > 8) absl::StrAppend(&out, ", ... (", n, " operands)");
  return out;
}

// Inline for the common operand counts: no allocation per instruction.
using ShapeList = absl::InlinedVector<const Shape*, 8>;

ShapeList OperandShapeList(const Instruction& i, int64_t from = 0) {
  ShapeList out;
  for (int64_t k = from; k < i.operand_count(); ++k) {
    out.push_back(&i.operand(k)->shape());
  }
  return out;
}

// --- Quick pass -------------------------------------------------------------

bool Verifier::QuickModuleClean() {
  if (module_ == nullptr || only_ != nullptr) return false;
  const Computation* entry = module_->entry();
  if (entry == nullptr || !KnownComputation(entry)) return false;
  const auto& comps = module_->computations();
  size_t total = 0;
  for (const auto& c : comps) {
    if (c == nullptr) return false;
    total += c->instructions().size();
  }
  constexpr size_t kMax = std::numeric_limits<int32_t>::max() / 4;
  if (total > kMax || comps.size() > kMax) return false;
  quick_callees_.Reserve(comps.size());
  NameSet computation_names;
  computation_names.Reserve(comps.size());
  for (size_t k = 0; k < comps.size(); ++k) {
    const Computation* c = comps[k].get();
    // Listed and in the module's set, so "known" here means known there.
    if (!module_->ContainsComputation(c) ||
        quick_callees_.Insert(c, QuickCallee{static_cast<int32_t>(k)}) ==
            nullptr ||
        !computation_names.Insert(c->name(), static_cast<uint32_t>(k),
                                  [&](uint32_t id) -> std::string_view {
                                    return comps[id]->name();
                                  })) {
      return false;
    }
  }
  quick_index_.Reserve(total);
  quick_names_.Reserve(total);
  quick_by_id_.reserve(total);
  for (size_t k = 0; k < comps.size(); ++k) {
    if (!QuickComputation(*comps[k], static_cast<int32_t>(k))) return false;
  }
  return problems_.empty();
}

bool Verifier::QuickComputation(const Computation& c, int32_t ordinal) {
  if (c.parent() != nullptr && c.parent() != module_) return false;
  quick_long_users_.clear();
  quick_controlled_.clear();
  quick_async_.clear();
  const bool scheduled = HasSchedule(c);
  auto name_of = [this](uint32_t id) -> std::string_view {
    return quick_by_id_[id]->name();
  };
  int32_t index = 0;
  int64_t parameters = 0;
  int64_t listed_users = 0;   // sum of the users() lengths
  int64_t counted_users = 0;  // distinct (operand, user) edges
  for (const auto& up : c.instructions()) {
    const Instruction* i = up.get();
    if (i == nullptr || i->parent() != &c) return false;
    const int32_t id = static_cast<int32_t>(quick_by_id_.size());
    if (quick_index_.Insert(i, QuickEntry{ordinal, index}) == nullptr) {
      return false;  // listed twice
    }
    quick_by_id_.push_back(i);
    if (!quick_names_.Insert(i->name(), static_cast<uint32_t>(id), name_of)) {
      return false;
    }
    const size_t user_count = i->users().size();
    listed_users += static_cast<int64_t>(user_count);
    if (user_count > kScanLimit) quick_long_users_.push_back(i);
    for (const Instruction* o : i->operands()) {
      QuickEntry* e = quick_index_.Find(o);
      if (e == nullptr || e->computation != ordinal || e->index >= index) {
        return false;
      }
      if (e->mark == id) continue;  // a repeated operand: one edge
      e->mark = id;
      ++e->distinct_users;
      ++counted_users;
      const UserList& users = o->users();
      if (users.size() <= kScanLimit &&
          std::find(users.begin(), users.end(), i) == users.end()) {
        return false;
      }
    }
    if (!i->control_predecessors().empty() ||
        !i->control_successors().empty()) {
      quick_controlled_.push_back(i);
    }
    const Opcode op = i->opcode();
    if (op == Opcode::kParameter) ++parameters;
    if (scheduled && (IsAsyncStart(op) || op == Opcode::kAsyncUpdate)) {
      quick_async_.push_back(i);
    }
    for (const Computation* callee : i->called_computations()) {
      QuickCallee* e = quick_callees_.Find(callee);
      if (e == nullptr || e->computation >= ordinal) return false;
      if (op == Opcode::kAsyncStart) {
        if (e->async_called) return false;
        e->async_called = true;
      }
    }
    // Every callee is in quick_callees_ (above), so known to the module.
    const bool callees_ok = VerifyCalledComputations(
        c, *i, [](const Computation*) { return true; });
    if (!callees_ok || !VerifyOperandCount(c, *i)) return false;
    VerifyShape(c, *i);
    if (!problems_.empty()) return false;
    ++index;
  }
  if (listed_users != counted_users) return false;

  QuickEntry* root = quick_index_.Find(c.root());
  if (root == nullptr || root->computation != ordinal) return false;

  // Parameters: as many parameter instructions as c.parameters() entries,
  // entry k listed in c with number k (so the numbers are 0..n-1, each once).
  const std::vector<Instruction*>& params = c.parameters();
  if (static_cast<int64_t>(params.size()) != parameters) return false;
  for (size_t k = 0; k < params.size(); ++k) {
    QuickEntry* e = quick_index_.Find(params[k]);
    if (e == nullptr || e->computation != ordinal ||
        params[k]->opcode() != Opcode::kParameter ||
        params[k]->parameter_number() != static_cast<int64_t>(k)) {
      return false;
    }
  }

  // Long users() lists, from the users' side: each user is listed, uses the
  // instruction and appears once; with the count of distinct edges equal to
  // the length, the list is exactly the instruction's users.
  for (const Instruction* o : quick_long_users_) {
    const QuickEntry* oe = quick_index_.Find(o);
    if (oe->distinct_users != static_cast<int64_t>(o->users().size())) {
      return false;
    }
    const int32_t stamp = -2 - 2 * oe->index;  // below every id and -1
    for (const Instruction* u : o->users()) {
      QuickEntry* ue = quick_index_.Find(u);
      if (ue == nullptr || ue->mark == stamp) return false;
      ue->mark = stamp;
      if (!u->IsUserOf(o)) return false;
    }
  }

  if (!QuickControlEdges(ordinal, c.instructions().size())) return false;

  // The schedule: operands and control predecessors run first (checked
  // above); uses of async values after their done.
  auto find = [&](const Instruction* x) -> std::optional<int64_t> {
    const QuickEntry* e = quick_index_.Find(x);
    if (e == nullptr || e->computation != ordinal) return std::nullopt;
    return e->index;
  };
  auto unnamed = [](const Instruction*) { return absl::string_view(); };
  for (const Instruction* i : quick_async_) {
    if (AsyncUseProblem(c, i, find, unnamed).has_value()) return false;
  }
  return true;
}

// Control edges, both ways, predecessors earlier in c. A long successor
// list is checked like a long users() list: its entries appear once and
// name this instruction as predecessor, and as many predecessor entries
// name it, so every one of them is in the list.
bool Verifier::QuickControlEdges(int32_t ordinal, size_t instructions) {
  if (!quick_controlled_.empty()) {
    quick_control_counts_.assign(instructions, 0);
  }
  for (const Instruction* i : quick_controlled_) {
    const int32_t at = quick_index_.Find(i)->index;
    for (const Instruction* p : i->control_predecessors()) {
      const QuickEntry* e = quick_index_.Find(p);
      if (e == nullptr || e->computation != ordinal || e->index >= at) {
        return false;
      }
      const auto& succ = p->control_successors();
      if (succ.size() > kScanLimit) {
        ++quick_control_counts_[e->index];
      } else if (std::find(succ.begin(), succ.end(), i) == succ.end()) {
        return false;
      }
    }
  }
  for (const Instruction* i : quick_controlled_) {
    const int32_t at = quick_index_.Find(i)->index;
    const auto& succ = i->control_successors();
    const bool long_list = succ.size() > kScanLimit;
    if (long_list &&
        quick_control_counts_[at] != static_cast<int64_t>(succ.size())) {
      return false;
    }
    const int32_t stamp = -3 - 2 * at;  // odd: apart from the users' stamps
    for (const Instruction* s : succ) {
      QuickEntry* e = quick_index_.Find(s);
      if (e == nullptr) return false;
      if (long_list) {
        if (e->mark == stamp) return false;
        e->mark = stamp;
      }
      const auto& pred = s->control_predecessors();
      if (std::find(pred.begin(), pred.end(), i) == pred.end()) return false;
    }
  }
  return true;
}

// --- Module-wide ------------------------------------------------------------

void Verifier::VerifyModuleWide() {
  if (module_ == nullptr) return;
  const Computation* entry = module_->entry();
  if (entry == nullptr) {
    ReportModule("has no entry computation");
  } else if (!KnownComputation(entry)) {
    ReportModule("the entry computation is not a computation of the module");
  }
  // Names.
  absl::flat_hash_map<std::string_view, const Computation*> comp_names;
  absl::flat_hash_map<std::string_view,
                      std::pair<const Computation*, const Instruction*>>
      inst_names;
  {
    size_t count = 0;
    for (const auto& c : module_->computations()) {
      if (c != nullptr) count += c->instructions().size();
    }
    comp_names.reserve(module_->computations().size());
    inst_names.reserve(count);
  }
  for (const auto& c : module_->computations()) {
    if (c == nullptr) {
      ReportModule("has a null computation");
      continue;
    }
    auto [it, inserted] = comp_names.emplace(c->name(), c.get());
    if (!inserted) {
      ReportComputation(*c,
                        "name is not unique in the module (another "
                        "computation has it)");
    }
    for (const auto& inst : c->instructions()) {
      if (inst == nullptr) continue;
      auto [jt, fresh] =
          inst_names.emplace(inst->name(), std::make_pair(c.get(), inst.get()));
      if (!fresh) {
        Report(*c, *inst,
               "name is not unique in the module (also used by an "
               "instruction of computation ",
               jt->second.first->name(), ")");
      }
    }
  }
  // Async computations: exactly one async-start each.
  absl::flat_hash_map<const Computation*, const Instruction*> async_callers;
  for (const auto& c : module_->computations()) {
    if (c == nullptr) continue;
    for (const auto& inst : c->instructions()) {
      if (inst == nullptr || inst->opcode() != Opcode::kAsyncStart) continue;
      for (const Computation* callee : inst->called_computations()) {
        if (!KnownComputation(callee)) continue;
        auto [it, fresh] = async_callers.emplace(callee, inst.get());
        if (!fresh) {
          Report(*c, *inst, "wrapped computation ", callee->name(),
                 " is already called by async-start ", it->second->name(),
                 " (each async computation needs its own async-start)");
        }
      }
    }
  }
  // Call-graph cycles (iterative DFS, colors: 0 new, 1 on stack, 2 done).
  absl::flat_hash_map<const Computation*, int> color;
  for (const auto& root : module_->computations()) {
    if (root == nullptr || color[root.get()] != 0) continue;
    std::vector<std::pair<const Computation*, std::vector<const Computation*>>>
        stack;
    auto push = [&](const Computation* comp) {
      color[comp] = 1;
      std::vector<const Computation*> callees;
      for (const auto& inst : comp->instructions()) {
        if (inst == nullptr) continue;
        for (const Computation* callee : inst->called_computations()) {
          if (KnownComputation(callee)) callees.push_back(callee);
        }
      }
      std::reverse(callees.begin(), callees.end());
      stack.push_back({comp, std::move(callees)});
    };
    push(root.get());
    while (!stack.empty()) {
      auto& [comp, pending] = stack.back();
      if (pending.empty()) {
        color[comp] = 2;
        stack.pop_back();
        continue;
      }
      const Computation* next = pending.back();
      pending.pop_back();
      int& col = color[next];
      if (col == 1) {
        ReportComputation(*comp, "calls computation ", next->name(),
                          ", which is on the call path leading here "
                          "(recursive call graph)");
      } else if (col == 0) {
        push(next);
      }
    }
  }
}

// --- Per computation
// ----------------------------------------------------------

void Verifier::VerifyComputation(const Computation& c) {
  const size_t problems_before = problems_.size();
  if (c.root() == nullptr) {
    ReportComputation(c, "has no root instruction");
  } else if (!Indexed(c.root()) || c.root()->parent() != &c) {
    ReportComputation(c,
                      "root instruction does not belong to the "
                      "computation");
  }
  if (module_ != nullptr && c.parent() != nullptr && c.parent() != module_) {
    ReportComputation(c, "its parent is module ", c.parent()->name(),
                      ", not this module");
  }
  VerifyParameters(c);
  for (const auto& inst : c.instructions()) {
    if (inst == nullptr) {
      ReportComputation(c, "has a null instruction");
      continue;
    }
    VerifyInstruction(c, *inst);
  }
  VerifyAcyclic(c);
  // The schedule only where the graph itself is sound (a cycle or a foreign
  // operand is reported once, above), and only when the whole module is
  // verified: a pass checking a computation it is building (a new loop body
  // in a scheduled module) leaves ordering it to the scheduler.
  if (only_ == nullptr && problems_.size() == problems_before &&
      HasSchedule(c)) {
    if (std::optional<ScheduleProblem> p = FirstScheduleProblem(c)) {
      Report(c, *p->at, "invalid schedule: ", p->message);
    }
  }
}

void Verifier::VerifyParameters(const Computation& c) {
  std::map<int64_t, const Instruction*> numbered;
  bool ok = true;
  for (const auto& inst : c.instructions()) {
    if (inst == nullptr || inst->opcode() != Opcode::kParameter) continue;
    const int64_t n = inst->parameter_number();
    if (n < 0) {
      Report(c, *inst, "parameter number ", n, " is negative");
      ok = false;
      continue;
    }
    auto [it, fresh] = numbered.emplace(n, inst.get());
    if (!fresh) {
      Report(c, *inst, "parameter number ", n, " is also used by ",
             it->second->name());
      ok = false;
    }
  }
  int64_t expected = 0;
  for (const auto& [n, inst] : numbered) {
    if (n != expected) {
      ReportComputation(c, "parameters must be numbered 0..",
                        numbered.size() - 1, " without gaps: parameter ",
                        expected, " is missing (next is ", n, ", ",
                        inst->name(), ")");
      ok = false;
      break;
    }
    ++expected;
  }
  if (!ok) return;
  const auto& params = c.parameters();
  bool in_sync = params.size() == numbered.size();
  for (size_t k = 0; in_sync && k < params.size(); ++k) {
    in_sync = params[k] == numbered[static_cast<int64_t>(k)];
  }
  if (!in_sync) {
    ReportComputation(c, "parameter list (", params.size(),
                      " entries) does not match its ", numbered.size(),
                      " parameter instructions");
  }
}

void Verifier::VerifyAcyclic(const Computation& c) {
  // Stored in a topological order (as parsed, and as most passes leave it):
  // every edge inside c points backwards, so there is no cycle.
  auto earlier = [&](const Instruction* from, int32_t index) {
    if (from == nullptr || from->parent() != &c) return true;
    const Position* at = position_.Find(from);
    if (at == nullptr) return true;
    // Listed in another computation (reported elsewhere): let the search
    // below decide.
    return at->computation == &c && at->index < index;
  };
  bool ordered = true;
  for (const auto& inst : c.instructions()) {
    if (inst == nullptr || inst->parent() != &c) continue;
    const Position* at = position_.Find(inst.get());
    if (at == nullptr) continue;
    if (at->computation != &c) {
      ordered = false;  // Listed twice: the search below decides.
      break;
    }
    const int32_t index = at->index;
    for (const Instruction* o : inst->operands()) {
      ordered = ordered && earlier(o, index);
    }
    for (const Instruction* p : inst->control_predecessors()) {
      ordered = ordered && earlier(p, index);
    }
    if (!ordered) break;
  }
  if (ordered) return;

  // Iterative DFS over operands and control predecessors inside c.
  absl::flat_hash_map<const Instruction*, int> color;
  auto preds = [&](const Instruction* inst) {
    std::vector<const Instruction*> out;
    for (const Instruction* o : inst->operands()) {
      if (o != nullptr && Indexed(o) && o->parent() == &c) {
        out.push_back(o);
      }
    }
    for (const Instruction* p : inst->control_predecessors()) {
      if (p != nullptr && Indexed(p) && p->parent() == &c) {
        out.push_back(p);
      }
    }
    return out;
  };
  for (const auto& start : c.instructions()) {
    if (start == nullptr || start->parent() != &c || color[start.get()] != 0) {
      continue;
    }
    std::vector<std::pair<const Instruction*, std::vector<const Instruction*>>>
        stack;
    color[start.get()] = 1;
    stack.push_back({start.get(), preds(start.get())});
    while (!stack.empty()) {
      auto& [inst, pending] = stack.back();
      if (pending.empty()) {
        color[inst] = 2;
        stack.pop_back();
        continue;
      }
      const Instruction* next = pending.back();
      pending.pop_back();
      int& col = color[next];
      if (col == 1) {
        Report(c, *inst, "depends on ", next->name(),
               ", which depends on it (cycle through operands or control "
               "predecessors)");
        return;  // One cycle report per computation is enough.
      }
      if (col == 0) {
        col = 1;
        stack.push_back({next, preds(next)});
      }
    }
  }
}

// --- Per instruction
// ----------------------------------------------------------

void Verifier::VerifyInstruction(const Computation& c, const Instruction& i) {
  if (i.parent() != &c) {
    Report(c, i, "its parent is ",
           i.parent() == nullptr
               ? std::string("null")
               : absl::StrCat("computation ", i.parent()->name()),
           ", not this computation");
  }
  const bool edges_ok = VerifyEdges(c, i);
  const bool callees_ok = VerifyCalledComputations(c, i);
  if (!edges_ok) return;  // Operands unusable: no count/shape rules.
  const bool count_ok = VerifyOperandCount(c, i);
  if (!count_ok || !callees_ok) return;
  VerifyShape(c, i);
}

bool Verifier::VerifyEdges(const Computation& c, const Instruction& i) {
  bool usable = true;
  for (int64_t k = 0; k < i.operand_count(); ++k) {
    const Instruction* o = i.operand(k);
    if (o == nullptr) {
      Report(c, i, "operand ", k, " is null");
      usable = false;
      continue;
    }
    if (!Indexed(o)) {
      Report(c, i, "operand ", k, " is not an instruction of this module");
      usable = false;
      continue;
    }
    if (o->parent() != &c) {
      Report(c, i, "operand ", k, " (", o->name(), ") is defined in ",
             o->parent() == nullptr
                 ? std::string("no computation")
                 : absl::StrCat("computation ", o->parent()->name()),
             ", not in this computation");
    }
    if (!HasEdge(o->users(), o, &i, user_edges_)) {
      Report(c, i, "uses ", o->name(), " as operand ", k, " but is not in ",
             o->name(), "'s user list");
    }
  }
  const UserList& users = i.users();
  absl::flat_hash_set<const Instruction*> seen_users;  // long lists only
  for (size_t k = 0; k < users.size(); ++k) {
    const Instruction* u = users[k];
    if (u == nullptr || !Indexed(u)) {
      Report(c, i,
             "user list contains something that is not an "
             "instruction of this module");
      continue;
    }
    const bool repeated = users.size() > kScanLimit
                              ? !seen_users.insert(u).second
                              : std::find(users.begin(), users.begin() + k,
                                          u) != users.begin() + k;
    if (repeated) {
      Report(c, i, "user ", u->name(), " is listed twice");
      continue;
    }
    if (!u->IsUserOf(&i)) {
      Report(c, i, "lists ", u->name(),
             " as a user, but it does not use this instruction");
    }
  }
  for (const Instruction* p : i.control_predecessors()) {
    if (p == nullptr || !Indexed(p)) {
      Report(c, i, "control predecessor is not an instruction of this module");
      continue;
    }
    if (p->parent() != &c) {
      Report(c, i, "control predecessor ", p->name(),
             " is not in this computation");
    }
    if (!HasEdge(p->control_successors(), p, &i, control_edges_)) {
      Report(c, i, "has control predecessor ", p->name(),
             " but is not among its control successors");
    }
  }
  for (const Instruction* s : i.control_successors()) {
    if (s == nullptr || !Indexed(s)) {
      Report(c, i, "control successor is not an instruction of this module");
      continue;
    }
    const auto& sp = s->control_predecessors();
    if (std::find(sp.begin(), sp.end(), &i) == sp.end()) {
      Report(c, i, "has control successor ", s->name(),
             " but is not among its control predecessors");
    }
  }
  return usable;
}

template <typename Known>
bool Verifier::VerifyCalledComputations(const Computation& c,
                                        const Instruction& i,
                                        const Known& known) {
  bool ok = true;
  const auto& called = i.called_computations();
  for (size_t k = 0; k < called.size(); ++k) {
    const Computation* callee = called[k];
    if (callee == nullptr) {
      Report(c, i, "called computation ", k, " is missing");
      ok = false;
    } else if (!known(callee)) {
      Report(c, i, "called computation ", k,
             " is not a computation of this module");
      ok = false;
    } else if (module_ != nullptr && callee == module_->entry()) {
      Report(c, i, "calls the entry computation ", callee->name());
      ok = false;
    }
  }
  const Opcode op = i.opcode();
  auto expect = [&](size_t n, std::string_view what) {
    if (called.size() != n) {
      Report(c, i, "expected ", n, " called computation", n == 1 ? "" : "s",
             " (", AsAbsl(what), "), found ", called.size());
      ok = false;
    }
  };
  if (op == Opcode::kWhile) {
    expect(2, "condition, body");
  } else if (op == Opcode::kSelectAndScatter) {
    expect(2, "select, scatter");
  } else if (op == Opcode::kConditional) {
    if (called.empty()) {
      Report(c, i, "expected at least 1 branch computation, found 0");
      ok = false;
    }
  } else if (Traits(op).callees == CalleeForm::kToApply) {
    expect(1, "to_apply");
  } else if (Traits(op).callees == CalleeForm::kCalls) {
    expect(1, "calls");
  } else if (op == Opcode::kAsyncUpdate || op == Opcode::kAsyncDone) {
    if (called.size() > 1) {
      Report(c, i, "expected at most 1 called computation, found ",
             called.size());
      ok = false;
    }
  }
  return ok;
}

bool Verifier::VerifyOperandCount(const Computation& c, const Instruction& i) {
  const Opcode op = i.opcode();
  const int64_t n = i.operand_count();
  const int64_t fixed = Traits(op).arity;
  if (fixed >= 0) {
    if (n != fixed) {
      Report(c, i, "expected ", fixed, " operand", fixed == 1 ? "" : "s",
             " for ", Op(op), ", found ", n);
      return false;
    }
    return true;
  }
  if (Traits(op).arity == kAtLeastOne && n < 1) {
    Report(c, i, "expected at least 1 operand for ", Op(op), ", found 0");
    return false;
  }
  switch (op) {
    case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice: {
      const int64_t base = op == Opcode::kDynamicSlice ? 1 : 2;
      if (n < base) {
        Report(c, i, "expected at least ", base, " operands for ", Op(op),
               ", found ", n);
        return false;
      }
      const Shape& operand = i.operand(0)->shape();
      const int64_t rank = operand.IsArray() ? operand.rank() : 0;
      const bool vector_form = n == base + 1 &&
                               i.operand(base)->shape().IsArray() &&
                               i.operand(base)->shape().rank() == 1;
      if (n != base + rank && !vector_form) {
        Report(c, i, "expected ", base + rank, " operands for ", Op(op), " (",
               base == 1 ? "operand" : "operand, update", " and ", rank,
               " scalar indices for ", ShapeString(operand), ") or ", base + 1,
               " with an index vector, found ", n);
        return false;
      }
      return true;
    }
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
      if (n < 2 || n % 2 != 0) {
        Report(c, i, "expected an even number (2k > 0) of operands for ",
               Op(op), " (k inputs, k init values), found ", n);
        return false;
      }
      return true;
    case Opcode::kScatter:
      if (n < 3 || n % 2 != 1) {
        Report(c, i,
               "expected 2k+1 operands for scatter (k operands, "
               "indices, k updates), found ",
               n);
        return false;
      }
      return true;
    case Opcode::kCall: {
      const Computation* callee = i.to_apply();
      if (KnownComputation(callee) && n != callee->num_parameters()) {
        Report(c, i, "expected ", callee->num_parameters(),
               " operands (the parameters of callee ", callee->name(),
               "), found ", n);
        return false;
      }
      return true;
    }
    case Opcode::kConditional: {
      const int64_t branches = i.called_computations().size();
      if (n != 1 + branches) {
        Report(c, i, "expected ", 1 + branches,
               " operands for conditional (selector and one per branch), "
               "found ",
               n);
        return false;
      }
      return true;
    }
    default:
      return true;
  }
}

const ProgramShape* Verifier::Program(const Computation& c,
                                      const Instruction& i,
                                      const Computation* callee) {
  if (!KnownComputation(callee)) return nullptr;  // Reported already.
  auto it = programs_.find(callee);
  if (it == programs_.end()) {
    absl::StatusOr<ProgramShape> p = GetProgramShape(*callee);
    std::unique_ptr<ProgramShape> value;
    if (p.ok()) value = std::make_unique<ProgramShape>(*std::move(p));
    it = programs_.emplace(callee, std::move(value)).first;
  }
  // A callee without a signature (missing parameter/root) is reported with
  // the callee; here it only stops the signature check.
  return it->second.get();
}

std::optional<int64_t> Verifier::GroupSize(const Instruction& i) const {
  const ReplicaGroups& rg = i.attrs().replica_groups;
  std::optional<int64_t> size;
  switch (rg.format) {
    case ReplicaGroups::Format::kExplicit: {
      const auto& groups = rg.explicit_groups;
      if (groups.empty() || groups[0].empty()) break;
      bool equal = true;
      for (const auto& g : groups)
        equal = equal && g.size() == groups[0].size();
      if (equal) size = static_cast<int64_t>(groups[0].size());
      break;
    }
    case ReplicaGroups::Format::kIota:
      if (rg.iota_group_size > 0) size = rg.iota_group_size;
      break;
    case ReplicaGroups::Format::kMesh:
      size = rg.GroupSize();
      if (!size.has_value() || *size <= 0) size = MeshGroupSize(rg.mesh_text);
      break;
    case ReplicaGroups::Format::kNone:
      break;
  }
  if (!size.has_value()) return std::nullopt;
  // With a channel id and replica ids (not global device ids), all-gather,
  // all-reduce and reduce-scatter groups span every partition.
  const Opcode op = i.opcode();
  const bool replica_and_partition =
      i.attrs().channel_id.has_value() && !i.attrs().use_global_device_ids &&
      (op == Opcode::kAllGather || op == Opcode::kAllGatherStart ||
       op == Opcode::kReduceScatter || op == Opcode::kAllReduce ||
       op == Opcode::kAllReduceStart);
  if (replica_and_partition && module_ != nullptr &&
      module_->num_partitions() > 1) {
    int64_t scaled = 0;
    if (__builtin_mul_overflow(*size, module_->num_partitions(), &scaled)) {
      return std::nullopt;
    }
    size = scaled;
  }
  return size;
}

void Verifier::VerifyShape(const Computation& c, const Instruction& i) {
  const Opcode op = i.opcode();
  const Shape& shape = i.shape();
  auto operand_shape = [&](int64_t k) -> const Shape& {
    return i.operand(k)->shape();
  };

  switch (op) {
    case Opcode::kTuple: {
      CheckResult(c, i, InferTupleShape(OperandShapeList(i)),
                  "a tuple of the operand shapes");
      return;
    }
    case Opcode::kGetTupleElement: {
      CheckResult(c, i,
                  InferGetTupleElementShape(operand_shape(0), i.tuple_index()),
                  [&] {
                    return absl::StrCat("element ", i.tuple_index(), " of ",
                                        Str(operand_shape(0)));
                  });
      return;
    }
    case Opcode::kWhile:
      VerifyWhile(c, i);
      return;
    case Opcode::kCall:
      VerifyCall(c, i);
      return;
    case Opcode::kConditional:
      VerifyConditional(c, i);
      return;
    case Opcode::kFusion:
      VerifyFusion(c, i);
      return;
    case Opcode::kAsyncStart:
      VerifyAsyncStart(c, i);
      return;
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
      VerifyAsyncUpdateOrDone(c, i);
      return;
    case Opcode::kAllGatherDone:
    case Opcode::kAllReduceDone:
    case Opcode::kCollectivePermuteDone:
    case Opcode::kCopyDone:
      VerifyNativeDone(c, i);
      return;
    case Opcode::kCopyStart:
      CheckResult(c, i, InferCopyStartShape(operand_shape(0)), [&] {
        return absl::StrCat("(dest, src, u32[]) for operand ",
                            Str(operand_shape(0)));
      });
      return;
    case Opcode::kAddDependency:
      if (!Matches(operand_shape(0), shape)) {
        Report(c, i, "expected result shape ", Str(operand_shape(0)),
               " (the shape of operand 0), found ", Str(shape));
      }
      return;
    case Opcode::kOptBarrier:
      if (!Matches(operand_shape(0), shape)) {
        Report(c, i, "expected result shape ", Str(operand_shape(0)),
               " (the operand's shape), found ", Str(shape));
      }
      return;
    case Opcode::kPartitionId:
    case Opcode::kReplicaId:
      CheckResult(c, i, Shape::Scalar(PrimitiveType::kU32),
                  [&] { return absl::StrCat(Op(op), " is a u32 scalar"); });
      return;
    case Opcode::kGetDimensionSize:
      CheckResult(c, i, Shape::Scalar(PrimitiveType::kS32),
                  "get-dimension-size gives s32[]");
      return;
    case Opcode::kAfterAll:
      CheckResult(c, i, Shape::Token(), "after-all gives a token");
      return;
    case Opcode::kParameter:
      return;  // No rule (and none below).
    case Opcode::kConstant: {
      const Literal* literal = i.literal();
      if (literal != nullptr &&
          literal->shape().element_type() != PrimitiveType::kInvalid &&
          !literal->shape().Compatible(shape)) {
        Report(c, i, "literal has shape ", ShapeString(literal->shape()),
               ", expected ", ShapeString(shape));
      }
      return;
    }
    default:
      break;
  }
  // Rules that only relate whole shapes (above) run on dynamic shapes too;
  // the arithmetic ones (below) do not.
  if (AnyDynamic(shape)) return;
  for (const Instruction* o : i.operands()) {
    if (AnyDynamic(o->shape())) return;
  }

  switch (op) {
    case Opcode::kConvert:
      // Accepted early where InferConvertShape certainly gives the operand's
      // dimensions with the result's element type.
      if (IsPlainArray(operand_shape(0)) && IsArrayType(shape.element_type()) &&
          shape.tuple_shapes().empty() && SameDims(operand_shape(0), shape)) {
        return;
      }
      CheckResult(
          c, i, InferConvertShape(operand_shape(0), shape.element_type()), [&] {
            return absl::StrCat(
                "operand ", Str(operand_shape(0)), " converted to ",
                AsAbsl(PrimitiveTypeName(shape.element_type())));
          });
      return;
    case Opcode::kBitcastConvert:
      CheckResult(
          c, i,
          InferBitcastConvertShape(operand_shape(0), shape.element_type()),
          [&] {
            return absl::StrCat(
                "operand ", Str(operand_shape(0)), " bitcast to ",
                AsAbsl(PrimitiveTypeName(shape.element_type())));
          });
      return;
    case Opcode::kBitcast: {
      // Element types may differ; the bit size may not once layouts are
      // assigned. Without layouts (both sides), XLA's layout-insensitive
      // verifier accepts any bitcast, and so do we.
      const Shape& o = operand_shape(0);
      if (!o.IsArray() || !shape.IsArray()) return;
      if (!o.has_layout() || !shape.has_layout()) return;
      int64_t in_bits = 0;
      int64_t out_bits = 0;
      if (__builtin_mul_overflow(o.ElementCount(),
                                 PrimitiveTypeBitWidth(o.element_type()),
                                 &in_bits) ||
          __builtin_mul_overflow(shape.ElementCount(),
                                 PrimitiveTypeBitWidth(shape.element_type()),
                                 &out_bits)) {
        return;
      }
      if (in_bits != out_bits) {
        Report(c, i, "bitcast must keep the bit size: operand ", Str(o),
               " has ", in_bits, " bits, result ", Str(shape), " has ",
               out_bits);
      }
      return;
    }
    case Opcode::kSelect:
      CheckResult(c, i,
                  InferSelectShape(operand_shape(0), operand_shape(1),
                                   operand_shape(2)),
                  [&] { return absl::StrCat("operands ", OperandShapes(i)); });
      return;
    case Opcode::kClamp:
      CheckResult(
          c, i,
          InferClampShape(operand_shape(0), operand_shape(1), operand_shape(2)),
          [&] { return absl::StrCat("operands ", OperandShapes(i)); });
      return;
    case Opcode::kStochasticConvert: {
      absl::StatusOr<Shape> s =
          InferBinaryElementwiseShape(op, operand_shape(0), operand_shape(1));
      if (s.ok()) s->set_element_type(shape.element_type());
      CheckResult(c, i, s,
                  [&] { return absl::StrCat("operands ", OperandShapes(i)); });
      return;
    }
    case Opcode::kBroadcast:
      if (!shape.IsArray()) {
        Report(c, i, "broadcast result must be an array, found ", Str(shape));
        return;
      }
      if (BroadcastSurelyMatches(operand_shape(0), shape, i.dimensions())) {
        return;
      }
      CheckResult(c, i,
                  InferBroadcastShape(operand_shape(0), shape.dimensions(),
                                      i.dimensions()),
                  [&] {
                    return absl::StrCat("operand ", Str(operand_shape(0)),
                                        " broadcast with dimensions=",
                                        DimsString(i.dimensions()));
                  });
      return;
    case Opcode::kReshape:
      if (!shape.IsArray()) {
        Report(c, i, "reshape result must be an array, found ", Str(shape));
        return;
      }
      CheckResult(
          c, i, InferReshapeShape(operand_shape(0), shape.dimensions()),
          [&] { return absl::StrCat("operand ", Str(operand_shape(0))); });
      return;
    case Opcode::kTranspose:
      CheckResult(
          c, i, InferTransposeShape(operand_shape(0), i.dimensions()), [&] {
            return absl::StrCat(
                "operand ", Str(operand_shape(0)),
                " transposed by dimensions=", DimsString(i.dimensions()));
          });
      return;
    case Opcode::kReverse:
      CheckResult(
          c, i, InferReverseShape(operand_shape(0), i.dimensions()),
          [&] { return absl::StrCat("operand ", Str(operand_shape(0))); });
      return;
    case Opcode::kSlice: {
      CheckResult(
          c, i, InferSliceShape(operand_shape(0), i.attrs().slice), [&] {
            std::string ranges;
            for (const SliceRange& r : i.attrs().slice) {
              absl::StrAppend(
                  &ranges, ranges.empty() ? "" : ", ", "[", r.start, ":",
                  r.limit,
                  r.stride != 1 ? absl::StrCat(":", r.stride) : std::string(),
                  "]");
            }
            return absl::StrCat("operand ", Str(operand_shape(0)), " slice={",
                                ranges, "}");
          });
      return;
    }
    case Opcode::kDynamicSlice: {
      ShapeList indices = OperandShapeList(i, 1);
      CheckResult(c, i,
                  InferDynamicSliceShape(operand_shape(0), indices,
                                         i.attrs().dynamic_slice_sizes),
                  [&] {
                    return absl::StrCat(
                        "operand ", Str(operand_shape(0)),
                        " dynamic_slice_sizes=",
                        DimsString(i.attrs().dynamic_slice_sizes));
                  });
      return;
    }
    case Opcode::kDynamicUpdateSlice: {
      ShapeList indices = OperandShapeList(i, 2);
      CheckResult(c, i,
                  InferDynamicUpdateSliceShape(operand_shape(0),
                                               operand_shape(1), indices),
                  [&] {
                    return absl::StrCat("the operand's shape; update ",
                                        Str(operand_shape(1)));
                  });
      return;
    }
    case Opcode::kConcatenate: {
      if (i.dimensions().size() != 1) {
        Report(c, i,
               "concatenate needs exactly one dimension in "
               "dimensions=, found ",
               DimsString(i.dimensions()));
        return;
      }
      CheckResult(c, i,
                  InferConcatenateShape(OperandShapeList(i), i.dimensions()[0]),
                  [&] {
                    return absl::StrCat("operands ", OperandShapes(i),
                                        " concatenated along dimension ",
                                        i.dimensions()[0]);
                  });
      return;
    }
    case Opcode::kPad: {
      CheckResult(
          c, i,
          InferPadShape(operand_shape(0), operand_shape(1), i.attrs().padding),
          [&] {
            std::string padding;
            for (const PaddingDim& p : i.attrs().padding) {
              absl::StrAppend(&padding, padding.empty() ? "" : "x", p.low, "_",
                              p.high, "_", p.interior);
            }
            return absl::StrCat("operand ", Str(operand_shape(0)),
                                " padding=", padding);
          });
      return;
    }
    case Opcode::kIota:
      CheckResult(c, i, InferIotaShape(shape, i.attrs().iota_dimension),
                  "iota");
      return;
    case Opcode::kDot:
      VerifyDot(c, i);
      return;
    case Opcode::kReduce:
      VerifyReduce(c, i);
      return;
    case Opcode::kAllGather:
      VerifyGatherScatter(c, i, /*gather=*/true, /*start=*/false);
      return;
    case Opcode::kAllGatherStart:
      VerifyGatherScatter(c, i, /*gather=*/true, /*start=*/true);
      return;
    case Opcode::kReduceScatter:
      VerifyGatherScatter(c, i, /*gather=*/false, /*start=*/false);
      return;
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
      VerifyAllReduce(c, i);
      return;
    case Opcode::kAllToAll:
      VerifyAllToAll(c, i);
      return;
    case Opcode::kCollectivePermute:
      VerifyCollectivePermute(c, i, /*start=*/false);
      return;
    case Opcode::kCollectivePermuteStart:
      VerifyCollectivePermute(c, i, /*start=*/true);
      return;
    default:
      break;
  }
  if (IsElementwiseUnary(op)) {
    // Accepted early, without building the inferred shape, where the rule
    // (InferUnaryElementwiseShape's default case: WithoutLayouts(operand))
    // certainly matches.
    const Shape& o = operand_shape(0);
    if (op != Opcode::kReal && op != Opcode::kImag && op != Opcode::kAbs &&
        op != Opcode::kIsFinite && op != Opcode::kNot &&
        op != Opcode::kPopcnt && op != Opcode::kCountLeadingZeros &&
        op != Opcode::kConvert && op != Opcode::kBitcastConvert &&
        IsPlainArray(o) && (&o == &shape || o.Compatible(shape))) {
      return;
    }
    CheckResult(c, i, InferUnaryElementwiseShape(op, operand_shape(0)), [&] {
      return absl::StrCat("operand ", Str(operand_shape(0)));
    });
    return;
  }
  if (IsElementwiseBinary(op)) {
    // Accepted early where InferBinaryElementwiseShape certainly gives
    // WithoutLayouts(lhs) and it matches: arrays of one element type with
    // the same dimensions.
    const Shape& l = operand_shape(0);
    const Shape& r = operand_shape(1);
    if (op != Opcode::kCompare && op != Opcode::kComplex &&
        op != Opcode::kStochasticConvert && IsPlainArray(l) && r.IsArray() &&
        l.element_type() == r.element_type() && SameDims(l, r) &&
        (&l == &shape || l.Compatible(shape))) {
      return;
    }
    CheckResult(
        c, i,
        InferBinaryElementwiseShape(op, operand_shape(0), operand_shape(1)),
        [&] { return absl::StrCat("operands ", OperandShapes(i)); });
    return;
  }
  // No rule for the other opcodes (fusion results, custom-call, gather,
  // scatter, convolution, sort, ...): accepted.
}

void Verifier::VerifyDot(const Computation& c, const Instruction& i) {
  const DotDimensionNumbers& d = i.attrs().dot;
  const Shape& lhs = i.operand(0)->shape();
  const Shape& rhs = i.operand(1)->shape();
  if (!i.shape().IsArray()) {
    Report(c, i, "dot result must be an array, found ", Str(i.shape()));
    return;
  }
  auto side = [](const Shape& s, const DimensionVector& batch,
                 const DimensionVector& contracting) {
    std::string out = ShapeString(s);
    if (!batch.empty()) absl::StrAppend(&out, " batch ", DimsString(batch));
    absl::StrAppend(&out, " contracting ", DimsString(contracting));
    return out;
  };
  CheckResult(c, i, InferDotShape(lhs, rhs, d, i.shape().element_type()), [&] {
    return absl::StrCat(
        "lhs ", side(lhs, d.lhs_batch_dims, d.lhs_contracting_dims), ", rhs ",
        side(rhs, d.rhs_batch_dims, d.rhs_contracting_dims));
  });
}

void Verifier::VerifyReduce(const Computation& c, const Instruction& i) {
  const ProgramShape* reducer = Program(c, i, i.to_apply());
  if (reducer == nullptr) return;
  CheckResult(c, i,
              InferReduceShape(OperandShapeList(i), i.dimensions(), *reducer),
              [&] {
                return absl::StrCat(
                    "inputs ", OperandShapes(i), " reduced over ",
                    DimsString(i.dimensions()), " by ", i.to_apply()->name());
              });
}

void Verifier::VerifyWhile(const Computation& c, const Instruction& i) {
  const ProgramShape* cond = Program(c, i, i.while_condition());
  const ProgramShape* body = Program(c, i, i.while_body());
  if (cond == nullptr || body == nullptr) return;
  const Shape& init = i.operand(0)->shape();
  absl::StatusOr<Shape> state = InferWhileShape(init, *cond, *body);
  if (!state.ok()) {
    Report(c, i, state.status().message(), " (condition ",
           i.while_condition()->name(), ", body ", i.while_body()->name(), ")");
    return;
  }
  if (options_.check_layouts) {
    if (!Matches(init, body->result)) {
      Report(c, i, "body ", i.while_body()->name(), " returns ",
             Str(body->result), ", expected the loop state ", Str(init));
    }
    if (!Matches(init, body->parameters[0])) {
      Report(c, i, "body ", i.while_body()->name(), " parameter ",
             Str(body->parameters[0]), ", expected the loop state ", Str(init));
    }
    if (!Matches(init, cond->parameters[0])) {
      Report(c, i, "condition ", i.while_condition()->name(), " parameter ",
             Str(cond->parameters[0]), ", expected the loop state ", Str(init));
    }
  }
  CheckResult(c, i, state, "the shape of the loop state operand");
}

void Verifier::VerifyCall(const Computation& c, const Instruction& i) {
  const ProgramShape* callee = Program(c, i, i.to_apply());
  if (callee == nullptr) return;
  ShapeList args = OperandShapeList(i);
  if (options_.check_layouts) {
    for (size_t k = 0; k < args.size() && k < callee->parameters.size(); ++k) {
      if (!Matches(callee->parameters[k], *args[k])) {
        Report(c, i, "argument ", k, " ", Str(*args[k]),
               " does not match parameter ", k, " ", Str(callee->parameters[k]),
               " of callee ", i.to_apply()->name());
      }
    }
  }
  CheckResult(c, i, InferCallShape(args, *callee), [&] {
    return absl::StrCat("the root shape of callee ", i.to_apply()->name());
  });
}

void Verifier::VerifyConditional(const Computation& c, const Instruction& i) {
  std::vector<ProgramShape> branches;
  for (const Computation* b : i.called_computations()) {
    const ProgramShape* p = Program(c, i, b);
    if (p == nullptr) return;
    branches.push_back(*p);
  }
  CheckResult(c, i,
              InferConditionalShape(i.operand(0)->shape(),
                                    OperandShapeList(i, 1), branches),
              "the root shape of the branches");
}

void Verifier::VerifyFusion(const Computation& c, const Instruction& i) {
  // No rule for the result (as XLA); operands must match the parameters,
  // read in place: a fused computation has one caller, so its program
  // shape (Program) would be copied for one use. Like Program, a callee
  // without a signature (missing parameter or root) stops the check.
  const Computation* fused = i.to_apply();
  if (!KnownComputation(fused) || fused->root() == nullptr) return;
  const std::vector<Instruction*>& params = fused->parameters();
  if (std::find(params.begin(), params.end(), nullptr) != params.end()) return;
  if (static_cast<size_t>(i.operand_count()) != params.size()) {
    Report(c, i, "expected ", params.size(),
           " operands (the parameters of fused computation ", fused->name(),
           "), found ", i.operand_count());
    return;
  }
  for (int64_t k = 0; k < i.operand_count(); ++k) {
    const Shape& param = params[k]->shape();
    const Shape& arg = i.operand(k)->shape();
    if (&arg != &param && !arg.Compatible(param)) {
      Report(c, i, "operand ", k, " ", Str(i.operand(k)->shape()),
             " does not match parameter ", k, " ", Str(param),
             " of fused computation ", fused->name());
    }
  }
}

void Verifier::VerifyGatherScatter(const Computation& c, const Instruction& i,
                                   bool gather, bool start) {
  const std::string_view name = OpcodeName(i.opcode());
  if (i.dimensions().size() != 1) {
    Report(c, i, AsAbsl(name),
           " needs exactly one dimension in dimensions=, "
           "found ",
           DimsString(i.dimensions()));
    return;
  }
  const int64_t dim = i.dimensions()[0];
  ShapeList ops = OperandShapeList(i);
  std::optional<int64_t> size = GroupSize(i);
  std::string size_text;
  if (size.has_value()) {
    size_text = absl::StrCat("group size ", *size);
  } else {
    // No group size from the replica groups: derive it from operand 0 and
    // the matching result, which must be a whole multiple.
    const Shape* result = &i.shape();
    if (start) {
      result = result->IsTuple() && result->tuple_size() == 2
                   ? &result->tuple_shapes(1)
                   : nullptr;
    }
    if (result != nullptr && result->IsTuple()) {
      result = result->tuple_size() > 0 ? &result->tuple_shapes(0) : nullptr;
    }
    const Shape& o = *ops[0];
    if (result != nullptr && result->IsArray() && o.IsArray() && dim >= 0 &&
        dim < o.rank() && dim < result->rank()) {
      const int64_t od = o.dimensions(dim);
      const int64_t rd = result->dimensions(dim);
      const int64_t big = gather ? rd : od;
      const int64_t small = gather ? od : rd;
      if (small > 0 && big % small != 0) {
        Report(c, i, AsAbsl(name), ": ", gather ? "result" : "operand",
               " dimension ", dim, " (size ", big, ") is not a multiple of ",
               gather ? "operand" : "result", " dimension ", dim, " (size ",
               small, "), found operand ", Str(o), " and result ",
               Str(*result));
        return;
      }
      size = small > 0 ? std::max<int64_t>(big / small, 1) : 1;
      size_text = absl::StrCat("group size ", *size,
                               " derived from the result (replica groups "
                               "give none)");
    } else {
      size = 1;
      size_text = "unknown group size";
    }
  }
  auto explanation = [&] {
    return absl::StrCat("operand", ops.size() == 1 ? " " : "s ",
                        OperandShapes(i), ", dimensions={", dim, "}, ",
                        size_text);
  };
  if (gather && start) {
    CheckStartResult(c, i, InferAllGatherStartShape(ops, dim, *size),
                     /*context=*/false, explanation);
  } else if (gather) {
    CheckResult(c, i, InferAllGatherShape(ops, dim, *size), explanation);
  } else {
    VerifyReducer(c, i);
    CheckResult(c, i, InferReduceScatterShape(ops, dim, *size), explanation);
  }
}

void Verifier::VerifyReducer(const Computation& c, const Instruction& i) {
  const ProgramShape* reducer = Program(c, i, i.to_apply());
  if (reducer == nullptr) return;
  // A binary scalar reduction (T, T) -> T; T is the operands' element type
  // when they all share one.
  if (reducer->parameters.size() != 2 || !reducer->parameters[0].IsScalar()) {
    Report(c, i, "to_apply ", i.to_apply()->name(), " ", reducer->ToString(),
           " must be a binary scalar reduction (T, T) -> T");
    return;
  }
  PrimitiveType t = reducer->parameters[0].element_type();
  bool same_type = true;
  for (const Instruction* o : i.operands()) {
    same_type =
        same_type && o->shape().IsArray() &&
        o->shape().element_type() == i.operand(0)->shape().element_type();
  }
  if (same_type && i.operand_count() > 0) {
    t = i.operand(0)->shape().element_type();
  }
  const PrimitiveType types[] = {t};
  absl::Status s = CheckReducerShape(*reducer, types, types);
  if (!s.ok()) {
    Report(c, i, "to_apply ", i.to_apply()->name(), ": ", s.message());
  }
}

void Verifier::VerifyAllReduce(const Computation& c, const Instruction& i) {
  VerifyReducer(c, i);
  auto explanation = [&] {
    return absl::StrCat("operands ", OperandShapes(i));
  };
  if (i.opcode() == Opcode::kAllReduceStart &&
      AllReduceStartHasOperandPart(i.shape())) {
    CheckStartResult(c, i, InferAllReduceStartShape(OperandShapeList(i)),
                     /*context=*/false, explanation);
    return;
  }
  CheckResult(c, i, InferAllReduceShape(OperandShapeList(i)), explanation);
}

void Verifier::VerifyAllToAll(const Computation& c, const Instruction& i) {
  std::optional<int64_t> split;
  if (i.dimensions().size() > 1) {
    Report(c, i,
           "all-to-all takes at most one split dimension, found "
           "dimensions=",
           DimsString(i.dimensions()));
    return;
  }
  if (i.dimensions().size() == 1) split = i.dimensions()[0];
  if (split.has_value() && i.operand_count() != 1) {
    Report(c, i,
           "all-to-all with a split dimension takes one operand, "
           "found ",
           i.operand_count());
    return;
  }
  CheckResult(c, i,
              InferAllToAllShape(OperandShapeList(i), split, GroupSize(i)),
              [&] { return absl::StrCat("operands ", OperandShapes(i)); });
}

void Verifier::VerifyCollectivePermute(const Computation& c,
                                       const Instruction& i, bool start) {
  const bool in_place = i.FindRawAttribute("slice_sizes") != nullptr;
  ShapeList ops = OperandShapeList(i);
  auto explanation = [&] {
    return absl::StrCat("operands ", OperandShapes(i),
                        in_place ? ", in place" : "");
  };
  if (!start) {
    CheckResult(c, i, InferCollectivePermuteShape(ops, in_place), explanation);
    return;
  }
  // The start tuple may carry context scalars after (operand, result).
  CheckStartResult(c, i, InferCollectivePermuteStartShape(ops, in_place),
                   /*context=*/true, explanation);
}

void Verifier::VerifyAsyncStart(const Computation& c, const Instruction& i) {
  const Computation* wrapped = i.to_apply();
  const ProgramShape* program = Program(c, i, wrapped);
  if (program == nullptr) return;
  absl::StatusOr<Shape> expected =
      InferAsyncStartShape(OperandShapeList(i), *program);
  if (!expected.ok()) {
    Report(c, i, expected.status().message());
    return;
  }
  const Shape& shape = i.shape();
  const bool ok = shape.IsTuple() && shape.tuple_size() >= 2 &&
                  shape.tuple_shapes(0).IsTuple() &&
                  Matches(expected->tuple_shapes(0), shape.tuple_shapes(0)) &&
                  Matches(program->result, shape.tuple_shapes(1));
  if (!ok) {
    Report(c, i, "expected result shape ", Str(*expected),
           " (the tuple of operand shapes, then the root shape of wrapped "
           "computation ",
           wrapped->name(), ", then optional context), found ", Str(shape));
  }
}

void Verifier::VerifyAsyncUpdateOrDone(const Computation& c,
                                       const Instruction& i) {
  const Instruction* start = i.operand(0);
  if (start->opcode() != Opcode::kAsyncStart &&
      start->opcode() != Opcode::kAsyncUpdate) {
    Report(c, i, "operand ", start->name(), " is a ", Op(start->opcode()),
           ", expected async-start or async-update");
    return;
  }
  // Older printers put calls= on update/done too: it must be the start's.
  if (!i.called_computations().empty() &&
      start->called_computations() != i.called_computations()) {
    Report(c, i, "calls ", i.to_apply() != nullptr ? i.to_apply()->name() : "?",
           " but its async-start ", start->name(), " calls ",
           start->to_apply() != nullptr ? start->to_apply()->name() : "none");
  }
  if (i.opcode() == Opcode::kAsyncUpdate) {
    CheckResult(c, i, InferAsyncUpdateShape(start->shape()),
                [&] { return absl::StrCat("the shape of ", start->name()); });
  } else {
    CheckResult(c, i, InferAsyncDoneShape(start->shape()), [&] {
      return absl::StrCat("element 1 of ", start->name(), " ",
                          Str(start->shape()));
    });
  }
}

void Verifier::VerifyNativeDone(const Computation& c, const Instruction& i) {
  Opcode want = Opcode::kCopyStart;
  switch (i.opcode()) {
    case Opcode::kAllGatherDone:
      want = Opcode::kAllGatherStart;
      break;
    case Opcode::kAllReduceDone:
      want = Opcode::kAllReduceStart;
      break;
    case Opcode::kCollectivePermuteDone:
      want = Opcode::kCollectivePermuteStart;
      break;
    default:
      break;
  }
  const Instruction* start = i.operand(0);
  if (start->opcode() != want) {
    Report(c, i, "operand ", start->name(), " is a ", Op(start->opcode()),
           ", expected ", Op(want));
    return;
  }
  CheckResult(c, i, InferNativeDoneShape(i.opcode(), start->shape()), [&] {
    return absl::StrCat("from ", start->name(), " ", Str(start->shape()));
  });
}

}  // namespace

namespace verifier_internal {

bool QuickPassAccepts(const Module& module, const VerifierOptions& options) {
  Verifier quick(&module, nullptr, options);
  return quick.QuickModuleClean();
}

std::vector<std::string> FullChecks(const Module& module,
                                    const VerifierOptions& options) {
  Verifier verifier(&module, nullptr, options);
  verifier.BuildIndex();
  verifier.VerifyModuleWide();
  for (const auto& c : module.computations()) {
    if (c != nullptr) verifier.VerifyComputation(*c);
  }
  return verifier.TakeProblems();
}

}  // namespace verifier_internal

std::vector<std::string> VerifyModuleAll(const Module& module,
                                         const VerifierOptions& options) {
  if (verifier_internal::QuickPassAccepts(module, options)) {
#if defined(HLOVERLAP_VERIFIER_CROSSCHECK)
    // Sanitized builds (CI's second stage runs every test so): a module the
    // quick pass accepts must be one the full checks accept. A difference
    // is reported as the first problem, failing whatever test verified it.
    std::vector<std::string> full =
        verifier_internal::FullChecks(module, options);
    if (!full.empty()) {
      full.insert(full.begin(),
                  "internal error: the verifier's quick pass accepted a "
                  "module its full checks reject (a verifier bug)");
    }
    return full;
#else
    return {};
#endif
  }
  return verifier_internal::FullChecks(module, options);
}

absl::Status VerifyModule(const Module& module,
                          const VerifierOptions& options) {
  std::vector<std::string> problems = VerifyModuleAll(module, options);
  if (problems.empty()) return absl::OkStatus();
  std::string message = problems[0];
  if (problems.size() > 1) {
    absl::StrAppend(&message, " (and ", problems.size() - 1, " more problem",
                    problems.size() == 2 ? "" : "s", ")");
  }
  return absl::InvalidArgumentError(message);
}

std::vector<std::string> VerifyComputationAll(const Computation& computation,
                                              const VerifierOptions& options) {
  Verifier verifier(computation.parent(), &computation, options);
  verifier.BuildIndex();
  verifier.VerifyComputation(computation);
  return verifier.TakeProblems();
}

absl::Status VerifySchedule(const Computation& computation) {
  std::optional<ScheduleProblem> p = FirstScheduleProblem(computation);
  if (!p.has_value()) return absl::OkStatus();
  return AtInstruction(absl::InvalidArgumentError(
                           absl::StrCat("invalid schedule of computation ",
                                        computation.name(), ": ", p->message)),
                       p->at);
}

}  // namespace hloverlap
