# lit configuration for hloverlap's text tests.
#
# Tests are `tests/<area>/<name>.hlo` files with `// RUN:` lines, checked with
# FileCheck. Substitutions:
#   %hloverlap      the built `hloverlap` binary
#   %exit<N>        run the rest of the line and require exit status N
#                   (N in 0..3), e.g. `%exit2 %hloverlap opt %s 2>&1 | FileCheck %s`
#   %python         the Python interpreter running lit
#   %corpus         ../shared/corpus beside the source tree
#   %src            the source tree root
# FileCheck, not and count come from the LLVM 14 tools folder.
import os
import sys

import lit.formats

config.name = "hloverlap"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".hlo"]
# tests/corpus/wide holds corpus modules (data), not tests.
config.excludes = ["Inputs", "inputs", "wide"]

src = getattr(config, "hloverlap_source_dir",
              os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
config.test_source_root = os.path.join(src, "tests")
binary_dir = getattr(config, "hloverlap_binary_dir", None)
if binary_dir:
    config.test_exec_root = os.path.join(binary_dir, "tests")
tools_dir = getattr(config, "hloverlap_tools_dir", binary_dir or "")
llvm_tools_dir = getattr(config, "llvm_tools_dir", "/usr/lib/llvm-14/bin")
if not llvm_tools_dir or not os.path.isdir(llvm_tools_dir):
    llvm_tools_dir = "/usr/lib/llvm-14/bin"

config.environment["PATH"] = os.pathsep.join(
    [llvm_tools_dir, tools_dir, config.environment.get("PATH", os.environ.get(
        "PATH", "/usr/bin:/bin"))])
# Sanitizer builds: fail loudly on any report, keep the output short.
config.environment["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0"
config.environment["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"

hloverlap = os.path.join(tools_dir, "hloverlap")
python = sys.executable or "python3"
exit_helper = os.path.join(src, "tests", "tools", "expect_exit.py")

config.substitutions.append(("%hloverlap", hloverlap))
for code in range(4):
    config.substitutions.append(
        ("%exit{}".format(code), '"{}" "{}" {}'.format(python, exit_helper,
                                                      code)))
config.substitutions.append(("%python", '"{}"'.format(python)))
config.substitutions.append(
    ("%corpus", os.path.join(os.path.dirname(src), "shared", "corpus")))
config.substitutions.append(("%src", src))

# Features for REQUIRES: lines.
if getattr(config, "sanitized", False):
    config.available_features.add("sanitized")
if os.path.isdir(os.path.join(os.path.dirname(src), "shared", "corpus")):
    config.available_features.add("corpus")
