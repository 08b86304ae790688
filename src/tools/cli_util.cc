// Shared helpers of the `hloverlap` command line (see cli_util.h).
#include "tools/cli_util.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <new>
#include <utility>

#include "CLI/CLI.hpp"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "hlo/absl_compat.h"
#include "hlo/verifier.h"
#include "tools/phase_report.h"

#ifndef HLOVERLAP_VERSION
#define HLOVERLAP_VERSION "0.1.0"
#endif

namespace hloverlap {

std::string_view HloverlapVersion() { return HLOVERLAP_VERSION; }

std::unique_ptr<CLI::App> MakeApp() {
  auto app = std::make_unique<CLI::App>(
      "hloverlap: hides collective communication behind computation in XLA "
      "HLO training loops (pipelining all-gathers and reduce-scatters across "
      "while-loop iterations, nested loops included), and explains what it "
      "finds and does.",
      "hloverlap");
  app->set_version_flag("--version",
                        absl::StrCat("hloverlap ", AsAbsl(HloverlapVersion())));
  app->require_subcommand(1);
  app->fallthrough(false);
  app->set_help_all_flag("--help-all", "Help for every subcommand");
  return app;
}

int RunApp(CLI::App& app, CommandContext& ctx, int argc, char** argv) {
  if (!ctx.registration_error().ok()) {
    PrintError(absl::StrCat("hloverlap: internal error: ",
                            ctx.registration_error().message()));
    return kExitInternalError;
  }
  try {
    // A first word that is neither a flag nor a command: say so plainly
    // (CLI11 would only say that a subcommand is required).
    if (argc > 1 && argv[1] != nullptr && argv[1][0] != '-') {
      std::string word = argv[1];
      std::vector<std::string> names;
      bool known = false;
      for (const CLI::App* sub : app.get_subcommands({})) {
        names.push_back(sub->get_name());
        if (sub->check_name(word)) known = true;
      }
      if (!known) {
        std::string list;
        for (const std::string& n : names) {
          absl::StrAppend(&list, list.empty() ? "" : ", ", n);
        }
        PrintError(absl::StrCat("hloverlap: unknown command '", word,
                                "' (commands: ", list,
                                "; see hloverlap --help)"));
        return kExitUserError;
      }
    }
    // `--flag=` with nothing after '=': CLI11 would take the next word (the
    // input file) as the value. A flag given an empty value is an error.
    for (int i = 1; i < argc; ++i) {
      const std::string_view arg = argv[i] == nullptr ? "" : argv[i];
      if (arg == "--") break;
      if (arg.size() > 3 && arg.substr(0, 2) == "--" &&
          arg.find('=') == arg.size() - 1) {
        PrintError(absl::StrCat(
            "hloverlap: ", AsAbsl(arg),
            " has an empty value: give a value after '=' or leave the flag "
            "out"));
        return kExitUserError;
      }
    }
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      // --help / --version are "errors" with exit code 0.
      int code = app.exit(e);
      return code == 0 ? kExitOk : kExitUserError;
    }
    if (!ctx.has_action()) {
      PrintError("hloverlap: no command given (see hloverlap --help)");
      return kExitUserError;
    }
    return ctx.RunAction();
  } catch (const std::bad_alloc&) {
    PrintError("hloverlap: internal error: out of memory");
    return kExitInternalError;
  } catch (const std::exception& e) {
    PrintError(absl::StrCat("hloverlap: internal error: ", e.what()));
    return kExitInternalError;
  } catch (...) {
    PrintError("hloverlap: internal error: unknown exception");
    return kExitInternalError;
  }
}

int ExitCodeForStatus(const absl::Status& status) {
  if (status.ok()) return kExitOk;
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kUnimplemented:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kAlreadyExists:
      return kExitUserError;
    default:
      return kExitInternalError;
  }
}

void PrintError(std::string_view message) {
  std::fflush(stdout);
  std::string line(message);
  line.push_back('\n');
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

void PrintRemarkWarnings(const RemarkSink& remarks) {
  std::string text = remarks.WarningsText();
  if (text.empty()) return;
  text.pop_back();  // PrintError ends the line
  PrintError(text);
}

int ReportStatus(const absl::Status& status) {
  if (status.ok()) return kExitOk;
  int code = ExitCodeForStatus(status);
  if (code == kExitInternalError) {
    PrintError(absl::StrCat("internal error: ", status.message()));
  } else {
    PrintError(AsStd(status.message()));
  }
  return code;
}

std::optional<TextLocation> FindInstructionDefinition(std::string_view text,
                                                      std::string_view name) {
  if (name.empty()) return std::nullopt;
  int64_t line = 1;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view l = text.substr(pos, end - pos);
    size_t i = 0;
    while (i < l.size() && (l[i] == ' ' || l[i] == '\t')) ++i;
    if (l.substr(i, 5) == "ROOT ") {
      i += 5;
      while (i < l.size() && l[i] == ' ') ++i;
    }
    size_t name_start = i;
    if (i < l.size() && l[i] == '%') ++i;
    if (l.substr(i, name.size()) == name) {
      size_t j = i + name.size();
      while (j < l.size() && l[j] == ' ') ++j;
      if (j < l.size() && l[j] == '=') {
        return TextLocation{line, static_cast<int64_t>(name_start) + 1};
      }
    }
    pos = end + 1;
    ++line;
  }
  return std::nullopt;
}

namespace {

// The instruction named in a verifier message ("..., instruction NAME: ...").
std::string_view InstructionNameInMessage(std::string_view message) {
  constexpr std::string_view kKey = "instruction ";
  size_t p = message.find(kKey);
  if (p == std::string_view::npos) return {};
  p += kKey.size();
  if (p < message.size() && message[p] == '%') ++p;
  size_t e = p;
  while (e < message.size() && message[e] != ':' && message[e] != ',' &&
         message[e] != ' ' && message[e] != '\n') {
    ++e;
  }
  return message.substr(p, e - p);
}

}  // namespace

absl::Status VerifyWithLocations(const Module& module, std::string_view text,
                                 std::string_view filename, int max_messages) {
  std::vector<std::string> problems = VerifyModuleAll(module);
  if (problems.empty()) return absl::OkStatus();
  std::string out;
  int shown = 0;
  for (const std::string& p : problems) {
    if (shown == max_messages) {
      absl::StrAppend(&out, "\n", AsAbsl(filename), ": ",
                      problems.size() - shown, " more verifier errors");
      break;
    }
    if (shown > 0) out.push_back('\n');
    std::optional<TextLocation> loc =
        FindInstructionDefinition(text, InstructionNameInMessage(p));
    if (loc) {
      absl::StrAppend(&out, AsAbsl(filename), ":", loc->line, ":", loc->column,
                      ": ", p);
    } else {
      absl::StrAppend(&out, AsAbsl(filename), ": ", p);
    }
    ++shown;
  }
  return absl::InvalidArgumentError(out);
}

InputText::InputText(InputText&& other) noexcept
    : owned_(std::move(other.owned_)),
      mapped_(std::exchange(other.mapped_, nullptr)),
      mapped_size_(std::exchange(other.mapped_size_, 0)) {}

InputText& InputText::operator=(InputText&& other) noexcept {
  if (this != &other) {
    Unmap();
    owned_ = std::move(other.owned_);
    mapped_ = std::exchange(other.mapped_, nullptr);
    mapped_size_ = std::exchange(other.mapped_size_, 0);
  }
  return *this;
}

InputText::~InputText() { Unmap(); }

void InputText::Unmap() {
  if (mapped_ != nullptr) {
    ::munmap(const_cast<char*>(mapped_), mapped_size_);
    mapped_ = nullptr;
    mapped_size_ = 0;
  }
}

absl::StatusOr<InputText> InputText::Read(const std::string& path) {
  // Below this, reading costs less than a mapping (cli_util.h); above it,
  // a second copy of the text in the heap is the larger cost. Tests set
  // HLOVERLAP_MAP_INPUTS_FROM (bytes) to map small files.
  off_t map_at_least = off_t{64} << 20;
  if (const char* from = std::getenv("HLOVERLAP_MAP_INPUTS_FROM");
      from != nullptr && from[0] != '\0') {
    char* end = nullptr;
    const long long bytes = std::strtoll(from, &end, 10);
    if (end != nullptr && *end == '\0' && bytes >= 0) map_at_least = bytes;
  }
  InputText text;
  const int fd = path == "-" ? -1 : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    struct stat st;
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
        st.st_size >= map_at_least) {
      void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ,
                       MAP_PRIVATE | MAP_POPULATE, fd, 0);
      if (p != MAP_FAILED) {
        text.mapped_ = static_cast<const char*>(p);
        text.mapped_size_ = static_cast<size_t>(st.st_size);
      }
    }
    ::close(fd);
  }
  // Gzip data (by magic or name) is decompressed by ReadInputFile.
  const std::string_view v = text.view();
  if (text.mapped() &&
      ((v.size() >= 2 && static_cast<unsigned char>(v[0]) == 0x1f &&
        static_cast<unsigned char>(v[1]) == 0x8b) ||
       absl::EndsWith(path, ".gz"))) {
    text.Unmap();
  }
  if (!text.mapped()) {
    // Also gives the errors: missing file, directory, stdin read errors.
    absl::StatusOr<std::string> data = ReadInputFile(path);
    if (!data.ok()) return data.status();
    text.owned_ = *std::move(data);
  }
  return text;
}

absl::StatusOr<LoadedModule> LoadModule(const std::string& path,
                                        const LoadOptions& options) {
  LoadedModule loaded;
  loaded.filename = path == "-" ? "<stdin>" : path;
  absl::StatusOr<InputText> text = InputText::Read(path);
  if (!text.ok()) {
    std::string msg(text.status().message());
    if (!absl::StrContains(msg, loaded.filename)) {
      msg = absl::StrCat(loaded.filename, ": ", msg);
    }
    return absl::Status(text.status().code(), msg);
  }
  loaded.text = *std::move(text);
  MarkPhase("read");
  ParseOptions parse = options.parse;
  parse.filename = loaded.filename;
  absl::StatusOr<std::unique_ptr<Module>> module =
      ParseHloModule(loaded.text.view(), parse);
  if (!module.ok()) return module.status();
  loaded.module = *std::move(module);
  MarkPhase("parse");
  if (loaded.module == nullptr) {
    return absl::InternalError(
        absl::StrCat(loaded.filename, ": parser returned no module"));
  }
  if (options.verify) {
    absl::Status st = VerifyWithLocations(*loaded.module, loaded.text.view(),
                                          loaded.filename);
    if (!st.ok()) return st;
    MarkPhase("verify");
  }
  return loaded;
}

void KeepUntilExit(LoadedModule loaded) {
  static std::vector<LoadedModule>* const kept =
      new std::vector<LoadedModule>();
  kept->push_back(std::move(loaded));
}

absl::Status CheckOutputPath(const std::string& path, std::string_view flag) {
  if (path.empty() || path == "-") return absl::OkStatus();
  const std::string what = absl::StrCat(
      AsAbsl(flag), flag.substr(0, 2) == "--" ? "=" : " ", path, ": ");
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, "is a folder, not a file"));
    }
    if (::access(path.c_str(), W_OK) != 0) {
      return absl::PermissionDeniedError(
          absl::StrCat(what, "cannot be written (permission denied)"));
    }
    return absl::OkStatus();
  }
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? std::string(".")
                          : slash == 0               ? std::string("/")
                                                     : path.substr(0, slash);
  if (::stat(dir.c_str(), &st) != 0) {
    return absl::NotFoundError(
        absl::StrCat(what, "folder ", dir, " does not exist"));
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, dir, " is not a folder"));
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return absl::PermissionDeniedError(absl::StrCat(
        what, "cannot create a file in ", dir, " (permission denied)"));
  }
  return absl::OkStatus();
}

absl::Status WriteOutputFile(const std::string& path,
                             std::string_view contents) {
  absl::StatusOr<std::unique_ptr<OutputFile>> file = OutputFile::Open(path);
  if (!file.ok()) return file.status();
  (*file)->Write(contents);
  return (*file)->Close();
}

absl::StatusOr<std::unique_ptr<OutputFile>> OutputFile::Open(
    const std::string& path) {
  if (path.empty() || path == "-") {
    // Whatever went through stdio (or std::cout, synced with it) first.
    std::fflush(stdout);
    return std::unique_ptr<OutputFile>(
        new OutputFile(1, "<stdout>", /*cut_at_close=*/false));
  }
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot open for writing"));
  }
  // Only a regular file with old contents needs cutting; anything else (a
  // pipe, a terminal, /dev/null) is written as it is.
  struct stat st;
  const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  return std::unique_ptr<OutputFile>(
      new OutputFile(fd, path, regular && st.st_size > 0));
}

OutputFile::~OutputFile() {
  if (fd_ > 2) {
    // Not closed: an early return; the file still holds only new text.
    if (cut_at_close_) (void)::ftruncate(fd_, static_cast<off_t>(written_));
    ::close(fd_);
  }
}

bool OutputFile::Write(std::string_view piece) {
  while (!failed_ && !piece.empty()) {
    const ssize_t n = ::write(fd_, piece.data(), piece.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      failed_ = true;
      break;
    }
    written_ += static_cast<uint64_t>(n);
    piece.remove_prefix(static_cast<size_t>(n));
  }
  return !failed_;
}

absl::Status OutputFile::Close() {
  bool ok = !failed_;
  if (fd_ > 2) {
    if (cut_at_close_) {
      ok = ::ftruncate(fd_, static_cast<off_t>(written_)) == 0 && ok;
    }
    ok = ::close(fd_) == 0 && ok;
    fd_ = -1;
  }
  if (ok) return absl::OkStatus();
  if (name_ == "<stdout>")
    return absl::UnavailableError("<stdout>: write failed");
  return absl::DataLossError(absl::StrCat(name_, ": write failed"));
}

CLI::App* AddCommand(CLI::App& app, CommandContext& ctx, std::string name,
                     std::string description, std::function<int()> action) {
  CLI::App* cmd = app.add_subcommand(std::move(name), std::move(description));
  cmd->callback(
      [&ctx, action = std::move(action)]() { ctx.SetAction(action); });
  return cmd;
}

}  // namespace hloverlap
