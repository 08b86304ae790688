// The verifier's quick pass never accepts a module its full checks reject.
//
// VerifyModuleAll answers "clean" from the quick pass alone when it can
// (verifier.h, verifier_internal). This test breaks modules on purpose, one
// way at a time and at many places, through the IR's public API, and checks
// after each break: if the quick pass accepts, the full checks find nothing.
// The breaks: an operand from another computation, an operand defined later
// (a cycle or an order the quick pass cannot prove), a control predecessor
// from later or from elsewhere, a name used twice (in one computation and
// across computations), a computation name used twice, a wrong result shape,
// a parameter number changed, a callee that is its caller or stored after
// it, two async-starts of one computation. The modules: corpus files with while
// loops, fusions, async collectives and a schedule, and small ones below.
//
// A break that leaves the module valid is fine either way; what must never
// happen is "quick: clean, full: problems". The test also checks that most
// breaks are caught (the full checks report something), so that it cannot
// pass by breaking nothing.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "hlo/module.h"
#include "hlo/parser.h"
#include "hlo/verifier.h"

namespace hloverlap {
namespace {

namespace fs = std::filesystem;

fs::path CorpusDir() {
  const char* env = std::getenv("HLOVERLAP_SOURCE_DIR");
  const fs::path src =
      env != nullptr && *env != '\0' ? fs::path(env) : fs::path(".");
  return src / ".." / "shared" / "corpus";
}

std::string ReadText(const fs::path& path) {
  absl::StatusOr<std::string> text = ReadInputFile(path.string());
  return text.ok() ? *text : std::string();
}

constexpr char kSmallScheduled[] = R"(
HloModule small, is_scheduled=true

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

cond {
  c.p = (s32[], f32[8]) parameter(0)
  c.i = s32[] get-tuple-element(c.p), index=0
  c.n = s32[] constant(4)
  ROOT c.lt = pred[] compare(c.i, c.n), direction=LT
}

body {
  b.p = (s32[], f32[8]) parameter(0)
  b.i = s32[] get-tuple-element(b.p), index=0
  b.x = f32[8] get-tuple-element(b.p), index=1
  b.one = s32[] constant(1)
  b.next = s32[] add(b.i, b.one)
  b.start = f32[8] all-reduce-start(b.x), replica_groups={{0,1}}, to_apply=add
  b.neg = f32[8] negate(b.x)
  b.done = f32[8] all-reduce-done(b.start)
  b.sum = f32[8] add(b.done, b.neg), control-predecessors={b.neg}
  ROOT b.t = (s32[], f32[8]) tuple(b.next, b.sum)
}

ENTRY main {
  p = f32[8] parameter(0)
  zero = s32[] constant(0)
  t = (s32[], f32[8]) tuple(zero, p)
  w = (s32[], f32[8]) while(t), condition=cond, body=body
  ROOT r = f32[8] get-tuple-element(w), index=1
}
)";

// Calls whose callees all have one signature, so a call redirected to its
// own computation or to a later one is still well typed: only the call
// graph is wrong.
constexpr char kSmallCalls[] = R"(
HloModule calls

g {
  y = f32[] parameter(0)
  ROOT n = f32[] negate(y)
}

f {
  x = f32[] parameter(0)
  c = f32[] call(x), to_apply=g
  ROOT e = f32[] exponential(c)
}

ENTRY main {
  p = f32[] parameter(0)
  r = f32[] call(p), to_apply=f
  ROOT s = f32[] call(r), to_apply=g
}
)";

struct Counts {
  int breaks = 0;
  int caught = 0;  // the full checks reported a problem
};

// Parses `text`, applies `edit` to instruction `k` of the whole module
// (computations in order, instructions in order), and compares the two
// halves of the verifier. Returns false when k is past the end.
template <typename Edit>
bool BreakAndCompare(const std::string& text, const std::string& what,
                     int64_t k, Edit edit, Counts* counts) {
  absl::StatusOr<std::unique_ptr<Module>> parsed = ParseHloModule(text);
  if (!parsed.ok()) {
    ADD_FAILURE() << parsed.status();
    return false;
  }
  Module& m = **parsed;
  std::vector<Instruction*> all;
  for (const auto& c : m.computations()) {
    for (const auto& i : c->instructions()) all.push_back(i.get());
  }
  if (k >= static_cast<int64_t>(all.size())) return false;
  if (!edit(m, all, all[k])) return true;  // not applicable here
  ++counts->breaks;
  for (bool layouts : {false, true}) {
    VerifierOptions options;
    options.check_layouts = layouts;
    const std::vector<std::string> full =
        verifier_internal::FullChecks(m, options);
    if (!full.empty() && !layouts) ++counts->caught;
    if (verifier_internal::QuickPassAccepts(m, options)) {
      EXPECT_TRUE(full.empty())
          << what << " at instruction " << k << " (" << all[k]->name()
          << "), check_layouts=" << layouts
          << ": the quick pass accepted, the full checks say: " << full[0];
    }
  }
  return true;
}

// The instruction `step` places after `i` in the module-wide list, or null.
Instruction* Later(const std::vector<Instruction*>& all, Instruction* i,
                   int64_t step) {
  for (size_t j = 0; j < all.size(); ++j) {
    if (all[j] == i) {
      return j + step < all.size() ? all[j + step] : nullptr;
    }
  }
  return nullptr;
}

// Another computation's instruction, or null.
Instruction* Foreign(const std::vector<Instruction*>& all, Instruction* i) {
  for (Instruction* other : all) {
    if (other->parent() != i->parent()) return other;
  }
  return nullptr;
}

// Runs every kind of break at instructions 0, stride, 2 * stride, ...
Counts BreakEverywhere(const std::string& text, int64_t stride) {
  Counts counts;
  struct Kind {
    const char* what;
    bool (*edit)(Module&, const std::vector<Instruction*>&, Instruction*);
  };
  const Kind kinds[] = {
      {"operand from another computation",
       [](Module&, const std::vector<Instruction*>& all, Instruction* i) {
         Instruction* f = Foreign(all, i);
         if (i->operand_count() == 0 || f == nullptr) return false;
         i->ReplaceOperandWith(0, f);
         return true;
       }},
      {"operand defined later",
       [](Module&, const std::vector<Instruction*>& all, Instruction* i) {
         Instruction* l = Later(all, i, 1);
         if (i->operand_count() == 0 || l == nullptr ||
             l->parent() != i->parent()) {
           return false;
         }
         i->ReplaceOperandWith(i->operand_count() - 1, l);
         return true;
       }},
      {"operand is itself",
       [](Module&, const std::vector<Instruction*>&, Instruction* i) {
         if (i->operand_count() == 0) return false;
         i->ReplaceOperandWith(0, i);
         return true;
       }},
      {"control predecessor defined later",
       [](Module&, const std::vector<Instruction*>& all, Instruction* i) {
         Instruction* l = Later(all, i, 2);
         if (l == nullptr || l->parent() != i->parent()) return false;
         i->AddControlPredecessor(l);
         return true;
       }},
      {"control predecessor from another computation",
       [](Module&, const std::vector<Instruction*>& all, Instruction* i) {
         Instruction* f = Foreign(all, i);
         if (f == nullptr) return false;
         i->AddControlPredecessor(f);
         return true;
       }},
      {"name used twice in a computation",
       [](Module&, const std::vector<Instruction*>& all, Instruction* i) {
         Instruction* l = Later(all, i, 1);
         if (l == nullptr || l->parent() != i->parent()) return false;
         l->set_name(i->name());
         return true;
       }},
      {"name used twice in the module",
       [](Module&, const std::vector<Instruction*>& all, Instruction* i) {
         Instruction* f = Foreign(all, i);
         if (f == nullptr) return false;
         f->set_name(i->name());
         return true;
       }},
      {"computation name used twice",
       [](Module& m, const std::vector<Instruction*>&, Instruction* i) {
         for (const auto& c : m.computations()) {
           if (c.get() != i->parent()) {
             c->set_name(i->parent()->name());
             return true;
           }
         }
         return false;
       }},
      {"result shape changed",
       [](Module&, const std::vector<Instruction*>&, Instruction* i) {
         Shape s = i->shape();
         if (s.IsTuple() || s.rank() == 0) return false;
         s.set_dimension(0, s.dimensions(0) + 1);
         i->set_shape(s);
         return true;
       }},
      {"callee is the caller (a recursive call graph)",
       [](Module&, const std::vector<Instruction*>&, Instruction* i) {
         auto& callees = i->mutable_called_computations();
         if (callees.empty()) return false;
         callees.back() = i->parent();
         return true;
       }},
      {"callee is a computation stored later",
       [](Module& m, const std::vector<Instruction*>&, Instruction* i) {
         auto& callees = i->mutable_called_computations();
         const auto& comps = m.computations();
         if (callees.empty() || comps.empty() ||
             comps.back().get() == callees.front()) {
           return false;
         }
         callees.front() = comps.back().get();
         return true;
       }},
      {"two async-starts of one computation",
       [](Module&, const std::vector<Instruction*>& all, Instruction* i) {
         if (i->opcode() != Opcode::kAsyncStart) return false;
         for (Instruction* other : all) {
           if (other != i && other->opcode() == Opcode::kAsyncStart &&
               !other->called_computations().empty()) {
             i->mutable_called_computations().front() =
                 other->called_computations().front();
             return true;
           }
         }
         return false;
       }},
      {"parameter renumbered",
       [](Module&, const std::vector<Instruction*>&, Instruction* i) {
         if (i->opcode() != Opcode::kParameter) return false;
         i->mutable_attrs().parameter_number += 1;
         return true;
       }},
  };
  for (const Kind& kind : kinds) {
    for (int64_t k = 0;; k += stride) {
      if (!BreakAndCompare(text, kind.what, k, kind.edit, &counts)) break;
    }
  }
  return counts;
}

TEST(VerifierQuickPass, NeverAcceptsWhatTheFullChecksRejectSmall) {
  Counts counts = BreakEverywhere(kSmallScheduled, 1);
  const Counts calls = BreakEverywhere(kSmallCalls, 1);
  counts.breaks += calls.breaks;
  counts.caught += calls.caught;
  EXPECT_GT(counts.breaks, 100);
  // Most breaks are real problems (the rest, such as an operand replaced by
  // one of the same shape defined later but not forming a cycle... are
  // fine either way).
  EXPECT_GT(counts.caught, counts.breaks * 3 / 4)
      << counts.caught << " of " << counts.breaks;
  std::printf("small module: %d breaks, %d caught by the full checks\n",
              counts.breaks, counts.caught);
}

TEST(VerifierQuickPass, NeverAcceptsWhatTheFullChecksRejectCorpus) {
  for (const char* file :
       {"shardmap_fsdp_accum/04_after_collective_pipeliner.hlo",
        "seed_gspmd_fsdp_accum/09_after_optimizations.hlo"}) {
    const std::string text = ReadText(CorpusDir() / file);
    if (text.empty()) {
      if (std::getenv("CI") != nullptr) ADD_FAILURE() << "no corpus: " << file;
      continue;
    }
    SCOPED_TRACE(file);
    // About 12 places per kind in each file (a parse each: the 09 file is
    // 2 MB).
    int64_t count = 0;
    {
      absl::StatusOr<std::unique_ptr<Module>> m = ParseHloModule(text);
      ASSERT_TRUE(m.ok()) << m.status();
      for (const auto& c : (*m)->computations()) {
        count += static_cast<int64_t>(c->instructions().size());
      }
    }
    const Counts counts =
        BreakEverywhere(text, std::max<int64_t>(1, count / 12));
    EXPECT_GT(counts.breaks, 60);
    EXPECT_GT(counts.caught, counts.breaks / 2)
        << counts.caught << " of " << counts.breaks;
    std::printf("%s: %d breaks, %d caught by the full checks\n", file,
                counts.breaks, counts.caught);
  }
}

}  // namespace
}  // namespace hloverlap
