// semantic_fuzzer: finds miscompiles, crashes and hangs of hloverlap's pass
// pipelines by running mutated small modules through every preset and
// comparing the results on the reference interpreter.
//
//   semantic_fuzzer [--seed=1] [--time-budget=60] [--mutants=N] [--jobs=1]
//                   [--out=fuzz-out] [--seeds=DIR|FILE,...] [...]
//
// Mutants. Each mutant is a seed module (a small .hlo from tests/passes,
// tests/tools, tests/interp, examples; one that parses, verifies and runs
// on 2 devices) with 1-3 structure-preserving mutations applied through the
// IR API (fuzz/mutator.h): loop bounds, steps and start values (also as
// wrapping arithmetic, converts, `partition-id * 0 + v`), the counter's
// integer type s8 ... u64 along its whole chain, comparison directions,
// known_trip_count removed / exact / contradicting, loops sharing bodies,
// control dependencies, collectives with a second user, an extra enclosing
// loop, a tuple element appearing twice. The mutant is printed and parsed
// again; one that does not verify is counted and skipped. Mutant i of
// --seed=S is a pure function of (S, i, the seed files), so
// `--only=i --seed=S` regenerates it.
//
// Oracle (fuzz/oracle.h). The mutant runs on the reference interpreter on 2
// devices with seeded inputs; one that does not finish within
// --max-iterations (all loops) or --mutant-time-limit is skipped (counted).
// Then every variant (each preset and --loop policies that force
// pipelining depth 2, sinking and double buffering) runs on it, and must
//   - not crash, hang (--stage-time-limit) or exhaust memory,
//   - not return an internal error (exit 3 in `hloverlap opt`),
//   - give a module that verifies, prints, parses and verifies again,
//   - terminate and be bit-identical to the mutant on every device.
// A mutant whose text does not survive print -> parse -> print unchanged
// is a finding too (printer/parser round trip).
//
// Isolation. The driver never runs the library itself: it forks one process
// per mutant (before any thread exists; the interpreter starts threads in
// the child), which regenerates the mutant, checks it and reports each step
// over a pipe. The child has an alarm per step and an address-space limit
// (--memory-limit-mb), so a crash, hang or runaway allocation is reported
// with the step it happened in, and the remaining variants are checked in a
// new child.
//
// Findings. Each finding prints one line and, for the first
// --max-reproducers of each kind (class and mutation kinds), writes
// OUT/<class>-s<seed>-m<index>/ with mutant.hlo, reduced.hlo (greedily
// reduced: entry outputs zeroed, loop state made invariant, loops and
// control edges dropped, while the same finding class persists) and
// repro.sh (the `hloverlap opt ... && hloverlap verify ...` commands).
// Exit status: 0 no finding, 1 findings, 2 usage error.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <new>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "fuzz/mutator.h"
#include "fuzz/oracle.h"
#include "hlo/clone.h"
#include "hlo/parser.h"
#include "hlo/printer.h"
#include "hlo/verifier.h"
#include "passes/pass.h"

#ifndef HLOVERLAP_SOURCE_DIR
#define HLOVERLAP_SOURCE_DIR "."
#endif

#if defined(__SANITIZE_ADDRESS__)
#define HLOVERLAP_FUZZ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HLOVERLAP_FUZZ_ASAN 1
#endif
#endif

namespace hloverlap::fuzz {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kOomExit = 97;

struct Config {
  uint64_t seed = 1;
  double time_budget = 60;  // seconds; 0: none
  int64_t mutants = 0;      // 0: no limit
  int jobs = 1;
  std::string out = "fuzz-out";
  std::vector<std::string> seed_paths;
  int64_t max_seed_bytes = 16 * 1024;
  std::vector<Variant> variants;
  std::vector<MutationKind> kinds;
  int max_mutations = 3;
  OracleOptions oracle;
  int mutant_time_limit = 5;  // seconds, the mutant's own run
  int stage_time_limit = 30;  // seconds, each pipeline / output check
  int64_t memory_limit_mb = 4096;
  int max_reproducers = 1;
  // Finding classes reported as KNOWN, not failing the run ("trip-count"
  // also covers every finding on a mutant with a trip-count mismatch).
  std::set<std::string> known;
  double reduce_seconds = 30;  // per reproducer; 0: no reduction
  std::optional<int64_t> only;
  bool verbose = false;
  // Test of the fuzzer itself: the child crashes, hangs or exhausts memory
  // in the pipeline step of variant 1 ("crash", "hang", "oom").
  std::string self_test;
};

// --- Child side: messages to the parent --------------------------------------

int g_out_fd = -1;

void Send(std::string_view tag, std::string_view payload = "") {
  std::string line = absl::StrCat(std::string(tag), " ");
  for (char ch : payload) line += (ch == '\n' || ch == '\r') ? ' ' : ch;
  line += '\n';
  size_t off = 0;
  while (off < line.size()) {
    ssize_t n = write(g_out_fd, line.data() + off, line.size() - off);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      _exit(98);
    }
    off += n;
  }
}

void OnOutOfMemory() {
  static const char kMsg[] = "O out of memory\n";
  ssize_t ignored = write(g_out_fd, kMsg, sizeof(kMsg) - 1);
  (void)ignored;
  _exit(kOomExit);
}

void ChildSetup(const Config& cfg, int fd) {
  g_out_fd = fd;
  std::set_new_handler(OnOutOfMemory);
#ifndef HLOVERLAP_FUZZ_ASAN
  if (cfg.memory_limit_mb > 0) {
    rlimit r;
    r.rlim_cur = r.rlim_max = static_cast<rlim_t>(cfg.memory_limit_mb) << 20;
    setrlimit(RLIMIT_AS, &r);
  }
#endif
  rlimit core{0, 0};
  setrlimit(RLIMIT_CORE, &core);
}

void Stage(std::string_view name, int seconds) {
  Send("S", name);
  alarm(std::max(1, seconds));
}

bool ReadFile(const std::string& path, std::string& text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  text = ss.str();
  return true;
}

bool WriteFile(const std::string& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary);
  out.write(text.data(), text.size());
  return static_cast<bool>(out);
}

struct SeedFile {
  std::string path;     // as found
  std::string display;  // relative to the source dir when inside it
  std::string text;
  int weight = 1;
};

// Builds mutant `index`: text and mutation descriptions; false when no
// mutation applied or the result is invalid (reason in `why`).
bool BuildMutant(const Config& cfg, const std::vector<SeedFile>& seeds,
                 int64_t index, std::string& text, std::string& seed_name,
                 std::vector<AppliedMutation>& applied, std::string& why) {
  Rng rng(MixSeed(cfg.seed, static_cast<uint64_t>(index)));
  int64_t total = 0;
  for (const SeedFile& s : seeds) total += s.weight;
  int64_t pick = static_cast<int64_t>(rng.Below(total));
  const SeedFile* seed = &seeds.back();
  for (const SeedFile& s : seeds) {
    if (pick < s.weight) {
      seed = &s;
      break;
    }
    pick -= s.weight;
  }
  seed_name = seed->display;
  absl::StatusOr<std::unique_ptr<Module>> m =
      ParseAndVerify(seed->text, seed->display);
  if (!m.ok()) {
    why = "seed does not parse";
    return false;
  }
  applied = MutateModule(**m, rng, cfg.kinds, cfg.max_mutations);
  if (applied.empty()) {
    why = "no mutation applies";
    return false;
  }
  if (absl::Status s = VerifyModule(**m); !s.ok()) {
    why = absl::StrCat("mutant does not verify: ",
                       std::string(s.message()).substr(0, 200));
    return false;
  }
  text = PrintModule(**m);
  return true;
}

// --self-test: a fault where a pass would have one.
void SelfTestFault(const std::string& kind) {
  if (kind == "crash") {
    raise(SIGSEGV);
  } else if (kind == "hang") {
    for (;;) pause();  // until the step's alarm
  } else if (kind == "oom") {
    std::vector<std::unique_ptr<char[]>> hog;
    for (;;) {
      hog.emplace_back(new char[64 << 20]);
      std::memset(hog.back().get(), 1, 64 << 20);
    }
  }
}

// The checks of one mutant, from variant `first_variant` on (a previous
// child crashed at the one before).
int RunMutantChild(const Config& cfg, const std::vector<SeedFile>& seeds,
                   int64_t index, int first_variant, const std::string& work) {
  std::string text, seed_name, why;
  std::vector<AppliedMutation> applied;
  Stage("generate", cfg.stage_time_limit);
  if (!BuildMutant(cfg, seeds, index, text, seed_name, applied, why)) {
    Send(why.rfind("mutant does not verify", 0) == 0 ? "I" : "N", why);
    return 0;
  }
  Send("B", seed_name);
  for (const AppliedMutation& a : applied) {
    Send("D", absl::StrCat(std::string(MutationKindName(a.kind)), ": ",
                           a.description));
  }
  if (!WriteFile(absl::StrCat(work, "/", index, ".hlo"), text)) {
    Send("X", "cannot write the mutant to the work folder");
    return 1;
  }
  // Printer/parser round trip of a module that verified.
  absl::StatusOr<std::unique_ptr<Module>> reparsed =
      ParseAndVerify(text, "mutant.hlo");
  if (!reparsed.ok()) {
    Send("F",
         absl::StrCat("print-roundtrip\t-\tthe printed mutant does not "
                      "parse and verify: ",
                      std::string(reparsed.status().message()).substr(0, 300)));
    Send("E");
    return 0;
  }
  if (PrintModule(**reparsed) != text) {
    Send("F",
         "print-roundtrip\t-\tprint(parse(print(m))) differs from print(m)");
    Send("E");
    return 0;
  }
  // The trip-count analysis against the exact count.
  Stage("analysis", cfg.stage_time_limit);
  std::vector<std::string> wrong = TripCountMismatches(**reparsed);
  if (!wrong.empty()) {
    Send("A");
    if (first_variant == 0) {
      Send("F", absl::StrCat("trip-count\t-\t", absl::StrJoin(wrong, "; ")));
    }
  }
  if (first_variant == 0) {
    Stage("sim-mutant", cfg.stage_time_limit);
    if (std::optional<Outcome> sim = CheckSimulator(**reparsed)) {
      Send("F", absl::StrCat(sim->finding_class, "\t-\t", sim->message));
    }
  }
  Stage("run-mutant", cfg.mutant_time_limit);
  Execution ref = Execute(**reparsed, cfg.oracle);
  alarm(0);
  switch (ref.kind) {
    case Execution::Kind::kOk:
      break;
    case Execution::Kind::kIterationLimit:
      Send("K", absl::StrCat("nonterminating: ", ref.error));
      return 0;
    case Execution::Kind::kMemoryLimit:
      Send("K", absl::StrCat("memory: ", ref.error));
      return 0;
    case Execution::Kind::kError:
      Send("K", absl::StrCat("error: ", ref.error));
      return 0;
  }
  Send("T", absl::StrCat(ref.seconds));
  reparsed->reset();
  const int run_limit = static_cast<int>(std::ceil(
      std::max<double>(2.0 * cfg.mutant_time_limit, 20 * ref.seconds + 5)));
  for (size_t v = first_variant; v < cfg.variants.size(); ++v) {
    const Variant& variant = cfg.variants[v];
    Send("V", absl::StrCat(v));
    Outcome o = CheckVariant(
        text, variant, ref, cfg.oracle, [&](std::string_view stage) {
          Stage(stage,
                stage == "run-output" ? run_limit : cfg.stage_time_limit);
          if (v == 1 && stage == "opt") SelfTestFault(cfg.self_test);
        });
    alarm(0);
    switch (o.kind) {
      case Outcome::Kind::kIdentical:
        Send("R", "identical");
        break;
      case Outcome::Kind::kUnchanged:
        Send("R", "unchanged");
        break;
      case Outcome::Kind::kRefused:
        Send("R", absl::StrCat("refused ", o.message));
        break;
      case Outcome::Kind::kFinding:
        Send("F", absl::StrCat(o.finding_class, "\t", v, "\t", o.message));
        break;
    }
  }
  Send("E");
  return 0;
}

// --- Reduction candidates (child side) ---------------------------------------

Instruction* ZeroOf(Module& m, Computation* comp, const Shape& shape,
                    const Instruction* before) {
  auto c = std::make_unique<Instruction>(Opcode::kConstant,
                                         m.UniqueInstructionName("reduce.zero"),
                                         Shape::Scalar(shape.element_type()));
  c->mutable_attrs().literal =
      std::make_unique<Literal>(Shape::Scalar(shape.element_type()));
  Instruction* zero = comp->AddInstruction(std::move(c), before);
  if (shape.rank() == 0) return zero;
  auto b = std::make_unique<Instruction>(
      Opcode::kBroadcast, m.UniqueInstructionName("reduce.zeros"), shape);
  b->AppendOperand(zero);
  b->mutable_attrs().has_dimensions = true;
  return comp->AddInstruction(std::move(b), before);
}

// Applies reduction candidate `c` of `m`; false when there is no such
// candidate. Candidates, in order: each array element of the entry root
// tuple replaced by zeros; each loop replaced by its initial state; each
// body root element made invariant (not loop counters); each instruction's
// control predecessors dropped; each known_trip_count removed.
bool ApplyReduction(Module& m, int64_t c) {
  Computation* entry = m.entry();
  if (entry == nullptr) return false;
  Instruction* root = entry->root();
  if (root != nullptr && root->opcode() == Opcode::kTuple) {
    for (int64_t j = 0; j < root->operand_count(); ++j) {
      const Shape& s = root->operand(j)->shape();
      if (!s.IsArray() || root->operand(j)->opcode() == Opcode::kConstant ||
          root->operand(j)->opcode() == Opcode::kBroadcast) {
        continue;
      }
      if (c-- == 0) {
        root->ReplaceOperandWith(j, ZeroOf(m, entry, s, root));
        return true;
      }
    }
  }
  std::vector<Instruction*> whiles;
  std::vector<Instruction*> with_control;
  for (const auto& comp : m.computations()) {
    for (const auto& i : comp->instructions()) {
      if (i->opcode() == Opcode::kWhile) whiles.push_back(i.get());
      if (!i->control_predecessors().empty()) with_control.push_back(i.get());
    }
  }
  for (Instruction* w : whiles) {
    if (c-- == 0) {
      if (w->operand_count() != 1 || w->operand(0)->shape() != w->shape()) {
        return true;  // nothing to do; the check fails and moves on
      }
      w->DropAllControlDependencies();
      return w->ReplaceAllUsesWith(w->operand(0)).ok();
    }
  }
  for (Instruction* w : whiles) {
    Computation* body = w->while_body();
    Instruction* r = body ? body->root() : nullptr;
    if (r == nullptr || r->opcode() != Opcode::kTuple ||
        body->num_parameters() != 1) {
      continue;
    }
    const std::optional<int64_t> counter = CounterIndex(*w);
    for (int64_t j = 0; j < r->operand_count(); ++j) {
      const Instruction* op = r->operand(j);
      if (j == counter ||
          (op->opcode() == Opcode::kGetTupleElement &&
           op->operand(0) == body->parameter(0) && op->tuple_index() == j)) {
        continue;
      }
      if (c-- == 0) {
        auto g = std::make_unique<Instruction>(
            Opcode::kGetTupleElement, m.UniqueInstructionName("reduce.gte"),
            r->shape().tuple_shapes(j));
        g->AppendOperand(body->parameter(0));
        g->mutable_attrs().tuple_index = j;
        r->ReplaceOperandWith(j, body->AddInstruction(std::move(g), r));
        return true;
      }
    }
  }
  for (Instruction* i : with_control) {
    if (c-- == 0) {
      std::vector<Instruction*> preds = i->control_predecessors();
      for (Instruction* p : preds) i->RemoveControlPredecessor(p);
      return true;
    }
  }
  for (Instruction* w : whiles) {
    if (!BackendConfigTripCount(*w)) continue;
    if (c-- == 0) {
      w->mutable_attrs().while_config->set_known_trip_count(std::nullopt);
      return true;
    }
  }
  return false;
}

// Child: applies candidate `c` to `text`, re-checks `variant`, reports
// "C <class>" (the finding class, or "none") and writes the candidate to
// `path`; "Z" when there is no candidate `c`.
int RunReduceChild(const Config& cfg, const std::string& text,
                   const Variant& variant, int64_t c, const std::string& path) {
  Stage("generate", cfg.stage_time_limit);
  absl::StatusOr<std::unique_ptr<Module>> m = ParseAndVerify(text, "in.hlo");
  if (!m.ok()) {
    Send("Z");
    return 0;
  }
  if (!ApplyReduction(**m, c)) {
    Send("Z");
    return 0;
  }
  absl::StatusOr<PassPipeline> dce = BuildPipeline("dce");
  PassContext ctx;
  if (dce.ok()) (void)dce->Run(**m, ctx);
  if (!VerifyModule(**m).ok()) {
    Send("C", "none");
    return 0;
  }
  const std::string candidate = PrintModule(**m);
  absl::StatusOr<std::unique_ptr<Module>> again =
      ParseAndVerify(candidate, "candidate.hlo");
  if (!again.ok() || !WriteFile(path, candidate)) {
    Send("C", "none");
    return 0;
  }
  Stage("run-mutant", cfg.mutant_time_limit);
  Execution ref = Execute(**again, cfg.oracle);
  alarm(0);
  if (ref.kind != Execution::Kind::kOk) {
    Send("C", "none");
    return 0;
  }
  const int run_limit = static_cast<int>(std::ceil(
      std::max<double>(2.0 * cfg.mutant_time_limit, 20 * ref.seconds + 5)));
  Send("V", "0");
  Outcome o = CheckVariant(
      candidate, variant, ref, cfg.oracle, [&](std::string_view stage) {
        Stage(stage, stage == "run-output" ? run_limit : cfg.stage_time_limit);
      });
  alarm(0);
  Send("C", o.kind == Outcome::Kind::kFinding ? o.finding_class : "none");
  return 0;
}

// --- Seed screening (child side) ---------------------------------------------

int RunScreenChild(const Config& cfg, const std::string& text) {
  // Seeds are small: one that runs for seconds makes slow mutants.
  Stage("screen", std::min(cfg.mutant_time_limit, 2));
  absl::StatusOr<std::unique_ptr<Module>> m = ParseAndVerify(text, "seed.hlo");
  if (!m.ok()) {
    Send("X", "does not parse and verify");
    return 0;
  }
  int64_t loops = 0, collectives = 0;
  for (const auto& comp : (*m)->computations()) {
    for (const auto& i : comp->instructions()) {
      loops += i->opcode() == Opcode::kWhile;
      collectives += IsCollective(i->opcode());
    }
  }
  Execution e = Execute(**m, cfg.oracle);
  if (e.kind != Execution::Kind::kOk) {
    Send("X", absl::StrCat("does not run: ", e.error));
    return 0;
  }
  Send("U", absl::StrCat(loops, " ", collectives));
  return 0;
}

// --- Parent side -------------------------------------------------------------

// A child process and what it has said so far.
struct Child {
  pid_t pid = -1;
  int fd = -1;
  std::string buffer;
  std::vector<std::pair<char, std::string>> messages;
  std::string stage = "start";
  int variant = -1;
  Clock::time_point last = Clock::now();
};

template <typename F>
std::optional<Child> Spawn(F body) {
  int fds[2];
  if (pipe(fds) != 0) return std::nullopt;
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return std::nullopt;
  }
  if (pid == 0) {
    close(fds[0]);
    int rc = body(fds[1]);
    _exit(rc);
  }
  close(fds[1]);
  fcntl(fds[0], F_SETFL, O_NONBLOCK);
  Child c;
  c.pid = pid;
  c.fd = fds[0];
  return c;
}

void ParseLines(Child& c) {
  size_t nl;
  while ((nl = c.buffer.find('\n')) != std::string::npos) {
    std::string line = c.buffer.substr(0, nl);
    c.buffer.erase(0, nl + 1);
    if (line.empty()) continue;
    const char tag = line[0];
    std::string payload = line.size() > 2 ? line.substr(2) : "";
    if (tag == 'S') c.stage = payload;
    if (tag == 'V') {
      int v = 0;
      if (absl::SimpleAtoi(payload, &v)) c.variant = v;
    }
    c.messages.emplace_back(tag, std::move(payload));
  }
}

// Reads what is available; true at end of file.
bool Drain(Child& c) {
  char buf[4096];
  for (;;) {
    ssize_t n = read(c.fd, buf, sizeof(buf));
    if (n > 0) {
      c.buffer.append(buf, n);
      c.last = Clock::now();
      continue;
    }
    if (n == 0) {
      ParseLines(c);
      return true;
    }
    if (errno == EINTR) continue;
    ParseLines(c);
    return false;  // EAGAIN
  }
}

// How a child ended, as a word: "ok", "crash (signal 11, SIGSEGV)",
// "timeout", "out-of-memory", "exit N".
std::string Termination(int status, bool killed_by_watchdog) {
  if (killed_by_watchdog) return "timeout";
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    if (sig == SIGALRM) return "timeout";
    const char* name = strsignal(sig);
    return absl::StrCat("crash (signal ", sig, ", ", name ? name : "?", ")");
  }
  if (WIFEXITED(status)) {
    if (WEXITSTATUS(status) == 0) return "ok";
    if (WEXITSTATUS(status) == kOomExit) return "out-of-memory";
    return absl::StrCat("exit ", WEXITSTATUS(status));
  }
  return "unknown";
}

// Runs one child to completion (used for screening and reduction; mutants
// run through the pool in Fuzz()). Returns the termination word.
template <typename F>
std::string RunToEnd(const Config& cfg, F body, Child* out) {
  std::optional<Child> c = Spawn(body);
  if (!c) return "spawn failed";
  const double watchdog = 3.0 * cfg.stage_time_limit + 60;
  bool killed = false;
  for (;;) {
    pollfd p{c->fd, POLLIN, 0};
    poll(&p, 1, 200);
    if (Drain(*c)) break;
    if (std::chrono::duration<double>(Clock::now() - c->last).count() >
        watchdog) {
      kill(c->pid, SIGKILL);
      killed = true;
    }
  }
  close(c->fd);
  int status = 0;
  waitpid(c->pid, &status, 0);
  std::string t = Termination(status, killed);
  if (out) *out = std::move(*c);
  return t;
}

struct FindingRecord {
  std::string cls;
  int variant = -1;  // -1: not a variant's (round trip, crash in generation)
  std::string stage;
  std::string message;
  int64_t index = 0;
  std::string seed_name;
  std::vector<std::string> mutations;
  std::string kinds;  // sorted mutation kinds, "+"-joined
  // The mutant has a loop whose trip count the analysis states wrongly: the
  // likely root cause of every finding on it.
  bool trip_count_cause = false;
  bool known = false;  // of a class given with --known
  std::string Signature() const {
    return absl::StrCat(
        cls, " [",
        trip_count_cause && cls != "trip-count" ? "trip-count" : kinds, "]");
  }
};

struct Stats {
  int64_t mutants = 0;
  int64_t invalid = 0;
  int64_t not_applicable = 0;
  int64_t checked = 0;  // mutants that ran and went through the variants
  std::map<std::string, int64_t> skipped;  // reason -> count
  int64_t variant_runs = 0;
  std::map<std::string, int64_t> outcomes;  // identical, unchanged, refused
  std::map<std::string, int64_t> by_kind;   // mutation kind -> mutants
  std::vector<FindingRecord> findings;
};

class Fuzzer {
 public:
  Fuzzer(Config cfg, std::vector<SeedFile> seeds)
      : cfg_(std::move(cfg)), seeds_(std::move(seeds)) {}

  int Run();

 private:
  struct Active {
    Child child;
    int64_t index;
    int first_variant;
  };
  bool Budget() const {
    if (cfg_.only) return next_ <= *cfg_.only;
    if (cfg_.mutants > 0 && next_ >= cfg_.mutants) return false;
    if (cfg_.time_budget > 0 && Elapsed() >= cfg_.time_budget) return false;
    return true;
  }
  double Elapsed() const {
    return std::chrono::duration<double>(Clock::now() - start_).count();
  }
  void Launch(int64_t index, int first_variant);
  void Finish(Active& a, int status, bool killed);
  void Report(FindingRecord f);
  void WriteReproducer(const FindingRecord& f);
  std::string Reduce(const FindingRecord& f, const std::string& text);

  Config cfg_;
  std::vector<SeedFile> seeds_;
  std::string work_;
  Clock::time_point start_ = Clock::now();
  int64_t next_ = 0;
  std::vector<Active> active_;
  Stats stats_;
  std::map<std::string, int> reproducers_;  // signature -> written
};

void Fuzzer::Launch(int64_t index, int first_variant) {
  std::optional<Child> c = Spawn([&](int fd) {
    ChildSetup(cfg_, fd);
    return RunMutantChild(cfg_, seeds_, index, first_variant, work_);
  });
  if (!c) {
    std::fprintf(stderr, "semantic_fuzzer: fork failed: %s\n",
                 std::strerror(errno));
    return;
  }
  active_.push_back({std::move(*c), index, first_variant});
}

void Fuzzer::Finish(Active& a, int status, bool killed) {
  const std::string end = Termination(status, killed);
  FindingRecord base;
  base.index = a.index;
  std::vector<std::string> kinds;
  bool ended = false, checked = false;
  for (const auto& [tag, payload] : a.child.messages) {
    switch (tag) {
      case 'B':
        base.seed_name = payload;
        break;
      case 'D':
        base.mutations.push_back(payload);
        kinds.push_back(payload.substr(0, payload.find(':')));
        break;
      case 'A':
        base.trip_count_cause = true;
        break;
      default:
        break;
    }
  }
  std::sort(kinds.begin(), kinds.end());
  kinds.erase(std::unique(kinds.begin(), kinds.end()), kinds.end());
  base.kinds = absl::StrJoin(kinds, "+");
  const bool first_run = a.first_variant == 0;
  if (first_run) {
    ++stats_.mutants;
    for (const std::string& k : kinds) ++stats_.by_kind[k];
  }
  for (const auto& [tag, payload] : a.child.messages) {
    switch (tag) {
      case 'I':
        ++stats_.invalid;
        break;
      case 'N':
        ++stats_.not_applicable;
        break;
      case 'K':
        ++stats_.skipped[payload.substr(0, payload.find(':'))];
        if (cfg_.verbose) {
          std::printf("skipped mutant %lld (%s): %s\n",
                      static_cast<long long>(a.index), base.seed_name.c_str(),
                      payload.c_str());
        }
        break;
      case 'T':
        checked = true;
        break;
      case 'R': {
        ++stats_.variant_runs;
        ++stats_.outcomes[payload.substr(0, payload.find(' '))];
        break;
      }
      case 'F': {
        std::vector<std::string> parts = absl::StrSplit(payload, '\t');
        FindingRecord f = base;
        f.cls = parts[0];
        int v = -1;
        if (parts.size() > 1 && absl::SimpleAtoi(parts[1], &v)) f.variant = v;
        f.message = parts.size() > 2 ? parts[2] : "";
        if (f.variant >= 0) ++stats_.variant_runs;
        Report(std::move(f));
        break;
      }
      case 'E':
        ended = true;
        break;
      default:
        break;
    }
  }
  if (checked && first_run) ++stats_.checked;
  if (end == "ok" || ended) return;
  // The child died: where?
  const std::string& stage = a.child.stage;
  if (stage == "run-mutant" || stage == "start") {
    if (end == "timeout" || end == "out-of-memory") {
      ++stats_.skipped[end == "timeout" ? "timeout" : "memory"];
      return;
    }
  }
  FindingRecord f = base;
  f.stage = stage;
  f.variant = (stage == "opt" || stage == "check-output" || stage == "sim" ||
               stage == "run-output")
                  ? a.child.variant
                  : -1;
  f.cls = end == "timeout"         ? "hang"
          : end == "out-of-memory" ? "out-of-memory"
                                   : "crash";
  f.message = absl::StrCat(end, " in ", stage);
  const int variant = f.variant;
  if (variant >= 0) ++stats_.variant_runs;
  Report(std::move(f));
  // Check the remaining variants in a new child.
  if (variant >= 0 && variant + 1 < static_cast<int>(cfg_.variants.size())) {
    Launch(a.index, variant + 1);
  }
}

void Fuzzer::Report(FindingRecord f) {
  f.known = cfg_.known.contains(f.cls) ||
            (f.trip_count_cause && cfg_.known.contains("trip-count"));
  const std::string sig = f.Signature();
  const int written = reproducers_[sig];
  const std::string variant =
      f.variant >= 0 ? cfg_.variants[f.variant].CommandLine() : "-";
  if (written < cfg_.max_reproducers || cfg_.verbose) {
    std::printf("%s %s: seed=%llu mutant=%lld %s [%s] %s: %s\n",
                f.known ? "KNOWN" : "FINDING", f.cls.c_str(),
                static_cast<unsigned long long>(cfg_.seed),
                static_cast<long long>(f.index), f.seed_name.c_str(),
                absl::StrJoin(f.mutations, "; ").c_str(), variant.c_str(),
                f.message.c_str());
    std::fflush(stdout);
  }
  if (written < cfg_.max_reproducers) {
    reproducers_[sig] = written + 1;
    WriteReproducer(f);
  }
  stats_.findings.push_back(std::move(f));
}

void Fuzzer::WriteReproducer(const FindingRecord& f) {
  std::string text;
  if (!ReadFile(absl::StrCat(work_, "/", f.index, ".hlo"), text)) return;
  const std::string dir =
      absl::StrCat(cfg_.out, "/", f.cls, "-s", cfg_.seed, "-m", f.index);
  std::error_code ec;
  fs::create_directories(dir, ec);
  WriteFile(dir + "/mutant.hlo", text);
  std::string input = "mutant.hlo";
  if (f.variant >= 0 && cfg_.reduce_seconds > 0 && !f.known) {
    std::string reduced = Reduce(f, text);
    if (!reduced.empty() && reduced != text) {
      WriteFile(dir + "/reduced.hlo", reduced);
      input = "reduced.hlo";
    }
  }
  std::string sh = "#!/bin/sh\n";
  absl::StrAppend(&sh, "# semantic_fuzzer finding: ", f.cls, ": ", f.message,
                  "\n# seed file: ", f.seed_name, "\n");
  for (const std::string& m : f.mutations) {
    absl::StrAppend(&sh, "# mutation: ", m, "\n");
  }
  absl::StrAppend(&sh, "# regenerate: semantic_fuzzer --seed=", cfg_.seed,
                  " --only=", f.index, "\n");
  absl::StrAppend(&sh, "cd \"$(dirname \"$0\")\"\nH=${HLOVERLAP:-hloverlap}\n");
  if (f.variant >= 0) {
    absl::StrAppend(&sh, "\"$H\" opt ", cfg_.variants[f.variant].CommandLine(),
                    " ", input, " -o out.hlo || exit\n");
    absl::StrAppend(&sh, "\"$H\" verify ", input, " out.hlo --devices=2",
                    " --max-iterations=", 2 * cfg_.oracle.max_iterations + 100,
                    cfg_.oracle.input_seed != 0
                        ? absl::StrCat(" --seed=", cfg_.oracle.input_seed)
                        : "",
                    "\n");
  } else {
    absl::StrAppend(&sh, "\"$H\" opt ", input, " -o out.hlo || exit\n",
                    "\"$H\" opt out.hlo | cmp - out.hlo\n");
  }
  WriteFile(dir + "/repro.sh", sh);
  chmod((dir + "/repro.sh").c_str(), 0755);
}

std::string Fuzzer::Reduce(const FindingRecord& f, const std::string& text) {
  const auto t0 = Clock::now();
  std::string current = text;
  const Variant& variant = cfg_.variants[f.variant];
  const std::string path = absl::StrCat(work_, "/reduce.hlo");
  int64_t c = 0;
  while (std::chrono::duration<double>(Clock::now() - t0).count() <
         cfg_.reduce_seconds) {
    Child child;
    std::string end = RunToEnd(
        cfg_,
        [&](int fd) {
          ChildSetup(cfg_, fd);
          return RunReduceChild(cfg_, current, variant, c, path);
        },
        &child);
    bool none = false, same = false;
    for (const auto& [tag, payload] : child.messages) {
      if (tag == 'Z') none = true;
      if (tag == 'C') same = payload == f.cls;
    }
    if (none) break;
    // A crash / hang / OOM in the same step reproduces those classes.
    if (end != "ok" &&
        (f.cls == "crash" || f.cls == "hang" || f.cls == "out-of-memory")) {
      const std::string want = f.cls == "crash"  ? "crash"
                               : f.cls == "hang" ? "timeout"
                                                 : "out-of-memory";
      same = end.rfind(want, 0) == 0 && child.stage == f.stage;
    }
    std::string candidate;
    if (same && ReadFile(path, candidate) &&
        candidate.size() < current.size()) {
      current = std::move(candidate);
    } else {
      ++c;
    }
  }
  return current;
}

int Fuzzer::Run() {
  work_ = cfg_.out + "/.work";
  std::error_code ec;
  fs::create_directories(work_, ec);
  if (ec) {
    std::fprintf(stderr, "semantic_fuzzer: cannot create %s: %s\n",
                 work_.c_str(), ec.message().c_str());
    return 2;
  }
  if (cfg_.only) next_ = *cfg_.only;
  for (;;) {
    while (static_cast<int>(active_.size()) < cfg_.jobs && Budget()) {
      Launch(next_++, 0);
    }
    if (active_.empty()) break;
    std::vector<pollfd> fds;
    for (const Active& a : active_) fds.push_back({a.child.fd, POLLIN, 0});
    poll(fds.data(), fds.size(), 200);
    const double watchdog =
        std::max(cfg_.stage_time_limit, 2 * cfg_.mutant_time_limit) * 3.0 + 30;
    for (size_t i = 0; i < active_.size();) {
      Active& a = active_[i];
      bool eof = Drain(a.child);
      bool killed = false;
      if (!eof &&
          std::chrono::duration<double>(Clock::now() - a.child.last).count() >
              watchdog) {
        kill(a.child.pid, SIGKILL);
        killed = true;
        eof = true;
      }
      if (!eof) {
        ++i;
        continue;
      }
      close(a.child.fd);
      int status = 0;
      waitpid(a.child.pid, &status, 0);
      Active done = std::move(a);
      active_.erase(active_.begin() + i);
      Finish(done, status, killed);
      const std::string file = absl::StrCat(work_, "/", done.index, ".hlo");
      if (cfg_.only) {
        fs::copy_file(file,
                      absl::StrCat(cfg_.out, "/mutant-", done.index, ".hlo"),
                      fs::copy_options::overwrite_existing, ec);
      }
      std::remove(file.c_str());
    }
  }
  if (cfg_.only) {
    std::printf("mutant %lld of seed %llu written to %s/mutant-%lld.hlo\n",
                static_cast<long long>(*cfg_.only),
                static_cast<unsigned long long>(cfg_.seed), cfg_.out.c_str(),
                static_cast<long long>(*cfg_.only));
  }
  // Summary.
  std::map<std::string, int64_t> sigs;
  int64_t known = 0;
  for (const FindingRecord& f : stats_.findings) {
    ++sigs[absl::StrCat(f.known ? "(known) " : "", f.Signature())];
    known += f.known;
  }
  const int64_t new_findings =
      static_cast<int64_t>(stats_.findings.size()) - known;
  std::string skipped;
  int64_t skipped_total = 0;
  for (const auto& [k, n] : stats_.skipped) {
    absl::StrAppend(&skipped, skipped.empty() ? "" : ", ", k, " ", n);
    skipped_total += n;
  }
  std::string outcomes;
  for (const auto& [k, n] : stats_.outcomes) {
    absl::StrAppend(&outcomes, outcomes.empty() ? "" : ", ", k, " ", n);
  }
  std::printf("mutation kinds:");
  for (const auto& [k, n] : stats_.by_kind) {
    std::printf(" %s %lld", k.c_str(), static_cast<long long>(n));
  }
  std::printf("\n");
  for (const auto& [sig, n] : sigs) {
    std::printf("  %lld x %s\n", static_cast<long long>(n), sig.c_str());
  }
  std::printf(
      "semantic_fuzzer: seed %llu, %lld mutants in %.0f s: %lld checked, "
      "%lld invalid, %lld without an applicable mutation, %lld skipped "
      "(%s); %lld variant runs (%s); %lld findings, %lld known, in %zu "
      "kinds%s\n",
      static_cast<unsigned long long>(cfg_.seed),
      static_cast<long long>(stats_.mutants), Elapsed(),
      static_cast<long long>(stats_.checked),
      static_cast<long long>(stats_.invalid),
      static_cast<long long>(stats_.not_applicable),
      static_cast<long long>(skipped_total), skipped.c_str(),
      static_cast<long long>(stats_.variant_runs), outcomes.c_str(),
      static_cast<long long>(new_findings), static_cast<long long>(known),
      sigs.size(),
      stats_.findings.empty() ? "" : absl::StrCat(" (", cfg_.out, ")").c_str());
  fs::remove_all(work_, ec);
  return new_findings == 0 ? 0 : 1;
}

// --- Setup -------------------------------------------------------------------

std::vector<SeedFile> FindSeeds(const Config& cfg) {
  std::vector<std::string> paths;
  for (const std::string& p : cfg.seed_paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      for (const auto& e : fs::recursive_directory_iterator(p, ec)) {
        if (e.is_regular_file() && e.path().extension() == ".hlo" &&
            e.file_size() <= static_cast<uintmax_t>(cfg.max_seed_bytes)) {
          paths.push_back(e.path().string());
        }
      }
    } else if (fs::is_regular_file(p, ec)) {
      paths.push_back(p);
    }
  }
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  const std::string src =
      fs::weakly_canonical(HLOVERLAP_SOURCE_DIR).string() + "/";
  std::vector<SeedFile> seeds;
  for (const std::string& p : paths) {
    SeedFile s;
    s.path = p;
    std::string canon = fs::weakly_canonical(p).string();
    s.display = canon.rfind(src, 0) == 0 ? canon.substr(src.size()) : p;
    if (ReadFile(p, s.text)) seeds.push_back(std::move(s));
  }
  // Sorted by display name, so the seed list (and every mutant) does not
  // depend on how the paths were given.
  std::sort(seeds.begin(), seeds.end(),
            [](const SeedFile& a, const SeedFile& b) {
              return a.display < b.display;
            });
  return seeds;
}

// Keeps the seeds that parse, verify and run; loops and collectives make a
// seed more likely to be picked.
std::vector<SeedFile> ScreenSeeds(const Config& cfg,
                                  std::vector<SeedFile> seeds) {
  std::vector<SeedFile> usable;
  for (SeedFile& s : seeds) {
    Child child;
    std::string end = RunToEnd(
        cfg,
        [&](int fd) {
          ChildSetup(cfg, fd);
          return RunScreenChild(cfg, s.text);
        },
        &child);
    bool ok = false;
    for (const auto& [tag, payload] : child.messages) {
      if (tag != 'U') continue;
      std::vector<std::string> w = absl::StrSplit(payload, ' ');
      int64_t loops = 0, colls = 0;
      if (w.size() == 2 && absl::SimpleAtoi(w[0], &loops) &&
          absl::SimpleAtoi(w[1], &colls)) {
        ok = true;
        s.weight = 1 + 3 * (loops > 0) + (colls > 0);
      }
    }
    if (ok) {
      usable.push_back(std::move(s));
    } else if (cfg.verbose) {
      std::string why = end;
      for (const auto& [tag, payload] : child.messages) {
        if (tag == 'X') why = payload;
      }
      std::printf("seed %s skipped: %s\n", s.display.c_str(), why.c_str());
    }
  }
  return usable;
}

int Usage(const std::string& error) {
  if (!error.empty())
    std::fprintf(stderr, "semantic_fuzzer: %s\n", error.c_str());
  std::fprintf(
      stderr,
      "usage: semantic_fuzzer [options]\n"
      "  --seed=N               random seed (default 1)\n"
      "  --time-budget=SECONDS  stop starting mutants after this (default 60;"
      " 0: none)\n"
      "  --mutants=N            stop after N mutants (default: no limit)\n"
      "  --only=I               check mutant I only\n"
      "  --jobs=N               mutants checked in parallel (default 1)\n"
      "  --out=DIR              reproducers (default fuzz-out)\n"
      "  --seeds=PATH,...       seed files or folders (default: tests/passes,"
      " tests/tools, tests/interp, examples)\n"
      "  --max-seed-bytes=N     larger seed files are ignored (default "
      "16384)\n"
      "  --variants='V;V;...'   pipelines, each '--preset=P [--loop=R]...' "
      "or '--passes=a,b [--loop=R]...'\n"
      "  --mutations=K,...      mutation kinds (default all: %s)\n"
      "  --max-mutations=N      mutations per mutant, 1..N (default 3)\n"
      "  --max-iterations=N     while-loop iterations (per device, all loops) "
      "before a run counts as non-terminating (default 50000)\n"
      "  --mutant-time-limit=S  seconds for the mutant's own run (default "
      "5)\n"
      "  --stage-time-limit=S   seconds for a pipeline or check (default "
      "30)\n"
      "  --memory-limit-mb=N    address space of each check (default 4096)\n"
      "  --input-seed=N         seed of the random inputs (default 0)\n"
      "  --max-reproducers=N    reproducers written per finding kind "
      "(default 1)\n"
      "  --reduce-seconds=S     reduction time per reproducer (default 30; "
      "0: none)\n"
      "  --known=CLASS,...      report findings of these classes as KNOWN "
      "without failing (trip-count: also every finding on a mutant whose "
      "trip count the analysis gets wrong)\n"
      "  --verbose              every finding line, skipped seeds\n"
      "  --self-test=crash|hang|oom  tests the fuzzer: each mutant's check "
      "of variant 1 faults so\n",
      [] {
        std::vector<std::string> names;
        for (MutationKind k : AllMutationKinds()) {
          names.emplace_back(MutationKindName(k));
        }
        return absl::StrJoin(names, ",");
      }()
          .c_str());
  return 2;
}

int Main(int argc, char** argv) {
  Config cfg;
  cfg.variants = DefaultVariants();
  cfg.kinds = AllMutationKinds();
  bool seeds_given = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") return Usage("");
    if (arg == "--verbose") {
      cfg.verbose = true;
      continue;
    }
    const size_t eq = arg.find('=');
    if (arg.rfind("--", 0) != 0 || eq == std::string::npos) {
      return Usage(absl::StrCat("unknown argument '", arg, "'"));
    }
    const std::string key = arg.substr(2, eq - 2);
    const std::string value = arg.substr(eq + 1);
    auto int_flag = [&](auto& field) {
      int64_t v = 0;
      if (!absl::SimpleAtoi(value, &v) || v < 0) return false;
      field = static_cast<std::remove_reference_t<decltype(field)>>(v);
      return true;
    };
    bool ok = true;
    if (key == "seed") {
      ok = absl::SimpleAtoi(value, &cfg.seed);
    } else if (key == "time-budget") {
      ok = absl::SimpleAtod(value, &cfg.time_budget) && cfg.time_budget >= 0;
    } else if (key == "mutants") {
      ok = int_flag(cfg.mutants);
    } else if (key == "only") {
      int64_t v = 0;
      ok = int_flag(v);
      cfg.only = v;
    } else if (key == "jobs") {
      ok = int_flag(cfg.jobs) && cfg.jobs >= 1 && cfg.jobs <= 64;
    } else if (key == "out") {
      cfg.out = value;
    } else if (key == "seeds") {
      seeds_given = true;
      for (absl::string_view p :
           absl::StrSplit(value, ',', absl::SkipEmpty())) {
        cfg.seed_paths.emplace_back(p);
      }
    } else if (key == "max-seed-bytes") {
      ok = int_flag(cfg.max_seed_bytes);
    } else if (key == "variants") {
      cfg.variants.clear();
      for (absl::string_view v :
           absl::StrSplit(value, ';', absl::SkipEmpty())) {
        absl::StatusOr<Variant> parsed = ParseVariant(std::string(v));
        if (!parsed.ok()) return Usage(std::string(parsed.status().message()));
        cfg.variants.push_back(*std::move(parsed));
      }
    } else if (key == "mutations") {
      cfg.kinds.clear();
      for (absl::string_view k :
           absl::StrSplit(value, ',', absl::SkipEmpty())) {
        std::optional<MutationKind> kind = ParseMutationKind(std::string(k));
        if (!kind)
          return Usage(absl::StrCat("unknown mutation kind '", k, "'"));
        cfg.kinds.push_back(*kind);
      }
    } else if (key == "max-mutations") {
      ok = int_flag(cfg.max_mutations) && cfg.max_mutations >= 1;
    } else if (key == "max-iterations") {
      ok = int_flag(cfg.oracle.max_iterations);
    } else if (key == "mutant-time-limit") {
      ok = int_flag(cfg.mutant_time_limit) && cfg.mutant_time_limit >= 1;
    } else if (key == "stage-time-limit") {
      ok = int_flag(cfg.stage_time_limit) && cfg.stage_time_limit >= 1;
    } else if (key == "memory-limit-mb") {
      ok = int_flag(cfg.memory_limit_mb);
    } else if (key == "input-seed") {
      ok = absl::SimpleAtoi(value, &cfg.oracle.input_seed);
    } else if (key == "max-reproducers") {
      ok = int_flag(cfg.max_reproducers);
    } else if (key == "self-test") {
      cfg.self_test = value;
      ok = value == "crash" || value == "hang" || value == "oom";
    } else if (key == "known") {
      for (absl::string_view k :
           absl::StrSplit(value, ',', absl::SkipEmpty())) {
        cfg.known.insert(std::string(k));
      }
    } else if (key == "reduce-seconds") {
      ok = absl::SimpleAtod(value, &cfg.reduce_seconds);
    } else {
      return Usage(absl::StrCat("unknown flag '--", key, "'"));
    }
    if (!ok)
      return Usage(absl::StrCat("bad value for --", key, ": '", value, "'"));
  }
  if (cfg.variants.empty() || cfg.kinds.empty()) {
    return Usage("no variants or no mutation kinds");
  }
  if (!seeds_given) {
    for (const char* d :
         {"tests/passes", "tests/tools", "tests/interp", "examples"}) {
      cfg.seed_paths.push_back(absl::StrCat(HLOVERLAP_SOURCE_DIR, "/", d));
    }
  }
  if (cfg.time_budget == 0 && cfg.mutants == 0 && !cfg.only) {
    return Usage("give --time-budget or --mutants");
  }
  const auto t0 = Clock::now();
  std::vector<SeedFile> seeds = FindSeeds(cfg);
  const size_t found = seeds.size();
  seeds = ScreenSeeds(cfg, std::move(seeds));
  std::printf(
      "semantic_fuzzer: %zu seed files of %zu usable (%.1f s), %zu "
      "variants, seed %llu\n",
      seeds.size(), found,
      std::chrono::duration<double>(Clock::now() - t0).count(),
      cfg.variants.size(), static_cast<unsigned long long>(cfg.seed));
  if (seeds.empty()) {
    std::fprintf(stderr, "semantic_fuzzer: no usable seed files\n");
    return 2;
  }
  return Fuzzer(std::move(cfg), std::move(seeds)).Run();
}

}  // namespace
}  // namespace hloverlap::fuzz

int main(int argc, char** argv) { return hloverlap::fuzz::Main(argc, argv); }
