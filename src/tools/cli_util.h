// Shared helpers of the `hloverlap` command line: the command registry,
// exit codes, reading and verifying input modules, diagnostics, output.
//
// Every subcommand lives in its own src/tools/<name>_command.{h,cc} with a
//   void Register<Name>Command(CLI::App& app, CommandContext& ctx);
// that adds a CLI11 subcommand with AddCommand (the work to do becomes
// ctx's action when the command line names the subcommand) and declares its
// options, those several commands share through tools/common_options.h.
// main.cc calls each Register function (one line per command) and then
// RunApp, which parses the command line, runs the action and maps errors
// and exceptions to exit codes:
//   0  ok
//   1  a check ran and failed / the compared modules differ (kExitDifferent)
//   2  user error: bad flags, missing file, parse or verify failure; a
//      diagnostic `file:line:col: message` goes to stderr
//   3  internal error (an internal Status or any exception), reported
#ifndef HLOVERLAP_TOOLS_CLI_UTIL_H_
#define HLOVERLAP_TOOLS_CLI_UTIL_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hlo/module.h"
#include "hlo/parser.h"
#include "passes/remarks.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace hloverlap {

inline constexpr int kExitOk = 0;
inline constexpr int kExitDifferent = 1;
inline constexpr int kExitUserError = 2;
inline constexpr int kExitInternalError = 3;

// The version printed by `hloverlap --version`.
std::string_view HloverlapVersion();

// Shared state of one invocation: the action chosen by the subcommand that
// was parsed, and what went wrong while the commands were declared.
class CommandContext {
 public:
  // Called from a subcommand's CLI11 callback; the action runs after the
  // whole command line parsed. It returns an exit code (kExit*).
  void SetAction(std::function<int()> action) { action_ = std::move(action); }
  bool has_action() const { return action_ != nullptr; }
  int RunAction() const { return action_(); }

  // A Register function's internal error (a flag it could not declare,
  // such as a pass option that was renamed): RunApp reports the first one
  // and exits with kExitInternalError before parsing. OK is ignored.
  void AddRegistrationError(absl::Status status) {
    registration_error_.Update(std::move(status));
  }
  const absl::Status& registration_error() const { return registration_error_; }

 private:
  std::function<int()> action_;
  absl::Status registration_error_;
};

// Creates the top-level app (name, description, --version, help on every
// subcommand, exactly one subcommand required).
std::unique_ptr<CLI::App> MakeApp();

// Adds the subcommand `name` of `app`; when the command line chose it,
// `action` becomes ctx's action (it runs after the whole line parsed). A
// Register function keeps the command's options in a shared_ptr that
// `action` and the options' bindings share:
//   auto options = std::make_shared<OptCommandOptions>();
//   CLI::App* cmd = AddCommand(app, ctx, "opt", "Parse and verify ...",
//                              [options] { return RunOptCommand(*options); });
//   cmd->add_option("-o,--output", options->output, ...);
// A command that reads one module (its input and --no-verify) is declared
// with AddModuleCommand (common_options.h), which does the above.
CLI::App* AddCommand(CLI::App& app, CommandContext& ctx, std::string name,
                     std::string description, std::function<int()> action);

// Parses argv and runs the chosen action. Never throws; returns the exit
// code.
int RunApp(CLI::App& app, CommandContext& ctx, int argc, char** argv);

// Exit code for a non-OK status: kExitUserError for user-input errors
// (InvalidArgument, NotFound, FailedPrecondition, OutOfRange,
// PermissionDenied, Unimplemented, ResourceExhausted), kExitInternalError
// otherwise.
int ExitCodeForStatus(const absl::Status& status);

// Prints `message` and a newline to stderr.
void PrintError(std::string_view message);

// Prints the remarks marked `warn` (RemarkSink::WarningsText) to stderr.
void PrintRemarkWarnings(const RemarkSink& remarks);
// Prints the status message to stderr (internal errors prefixed with
// "internal error: ") and returns ExitCodeForStatus(status).
int ReportStatus(const absl::Status& status);

// The bytes of an input file: a regular file of 64 MiB or more is mapped
// (read-only, every page mapped in one call: no copy, and the memory is the
// page cache's); stdin, gzip data and smaller files are read into memory
// (ReadInputFile). Reading is the cheaper of the two for the files users
// have (the largest corpus module is 2.2 MB): the copy lands in heap pages
// a cold process faults in as 2 MiB pages anyway (malloc_tuning.h), while a
// mapping costs a page table entry per 4 KiB page to set up and tear down,
// ~1.2 ms of a cold `opt` of that module on the build VM (of ~27 ms;
// docs/BENCHMARKS.md). HLOVERLAP_MAP_INPUTS_FROM=BYTES in the environment
// moves the threshold (the tests map small files with it).
// As with any mapped file (LLVM's MemoryBuffer maps source files too), a
// file truncated by another process while it is being read is not
// supported.
class InputText {
 public:
  InputText() = default;
  InputText(InputText&& other) noexcept;
  InputText& operator=(InputText&& other) noexcept;
  ~InputText();

  // Errors as ReadInputFile's (they name the file).
  static absl::StatusOr<InputText> Read(const std::string& path);

  std::string_view view() const {
    return mapped_ != nullptr ? std::string_view(mapped_, mapped_size_)
                              : std::string_view(owned_);
  }
  bool mapped() const { return mapped_ != nullptr; }

 private:
  void Unmap();
  std::string owned_;
  const char* mapped_ = nullptr;
  size_t mapped_size_ = 0;
};

// A module read from a file, with the text it came from (for locating
// diagnostics after parsing).
struct LoadedModule {
  std::unique_ptr<Module> module;
  std::string filename;  // as given; "<stdin>" for "-"
  InputText text;
};

struct LoadOptions {
  bool verify = true;
  ParseOptions parse;  // filename is filled in by LoadModule
};

// Reads `path` ("-" = stdin, .gz transparently), parses and (optionally)
// verifies it. Errors are user errors with `file:line:col: message`
// diagnostics (verifier errors are located at the offending instruction's
// definition when it can be found in the text), or `file: message` for I/O
// errors.
absl::StatusOr<LoadedModule> LoadModule(const std::string& path,
                                        const LoadOptions& options = {});

// Keeps `loaded` (module and input text) until the process exits without
// ever destroying it, for a command that is done with its module: freeing
// the tens of thousands of blocks of a large module costs about as much CPU
// as verifying it, while the kernel takes the pages back at exit at once
// (clang's -disable-free does the same). The memory stays reachable from a
// global, so leak checkers do not report it.
void KeepUntilExit(LoadedModule loaded);

// Verifies `module`, returning InvalidArgument whose message lists every
// problem, one per line, each located in `text` when possible
// ("file:line:col: computation c, instruction i: ..."). At most
// `max_messages` lines are listed, then a count of the rest.
absl::Status VerifyWithLocations(const Module& module, std::string_view text,
                                 std::string_view filename,
                                 int max_messages = 20);

// 1-based line/column of the definition of instruction `name` in `text`
// (`%name = ` or `name = ` at the start of a line, after indentation and
// optional `ROOT`), or nullopt.
struct TextLocation {
  int64_t line = 0;
  int64_t column = 0;
};
std::optional<TextLocation> FindInstructionDefinition(std::string_view text,
                                                      std::string_view name);

// Checks, before any work, that `path` ("-" or empty = stdout: always
// fine) can be written later: its folder exists and is writable, and the
// path itself, if it exists, is a writable file and not a folder. Creates
// and changes nothing. Errors are user errors naming `flag` and the path
// ("--remarks=/no/dir/r.txt: folder /no/dir does not exist").
absl::Status CheckOutputPath(const std::string& path, std::string_view flag);

// Writes `contents` to `path` ("-" or empty = stdout). Errors name the
// file.
absl::Status WriteOutputFile(const std::string& path,
                             std::string_view contents);

// An output file ("-" or empty = stdout) written in pieces, unbuffered (the
// pieces are large: PrintModuleTo hands over 256 KiB at a time).
//
// An existing non-empty regular file is overwritten in place and cut to the
// written length when closed, not truncated when opened: truncating to zero
// frees every block (on ext4 mounted with `discard`, each freed extent is a
// synchronous discard request) and makes ext4 start writeback of the new
// data at close (its "auto_da_alloc" heuristic for truncate-and-rewrite),
// ~1-2 ms of a cold `opt` of a 2 MB module rewriting its output
// (docs/BENCHMARKS.md). Either way the file holds exactly the new text once
// Close() succeeds; a write error leaves it cut at what was written.
class OutputFile {
 public:
  // Creates the file or opens it for overwriting. Errors name it.
  static absl::StatusOr<std::unique_ptr<OutputFile>> Open(
      const std::string& path);
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();

  // False once a write failed (later writes are dropped).
  bool Write(std::string_view piece);
  // Closes the file (not stdout); the first error, naming the file.
  absl::Status Close();

 private:
  OutputFile(int fd, std::string name, bool cut_at_close)
      : fd_(fd), name_(std::move(name)), cut_at_close_(cut_at_close) {}
  int fd_;
  std::string name_;
  bool cut_at_close_;     // overwriting an existing file in place
  uint64_t written_ = 0;  // bytes written (where Close() cuts the file)
  bool failed_ = false;
};

}  // namespace hloverlap

#endif  // HLOVERLAP_TOOLS_CLI_UTIL_H_
