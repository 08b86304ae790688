#!/usr/bin/env python3
"""Keeps the layering of src/ true: every #include "LAYER/..." of a source
file names its own layer or one beneath it.

    support <- hlo <- analysis <- passes
                  hlo <- interp
                  analysis <- sim
    tools uses every layer

Unit tests (src/**/*_test.cc) link every layer and may include any of them;
bench/, fuzz/, python/ and tests/ are outside the layering. No file under
src/ may include from those (or climb out of src/ with "../").

    check_layering.py [--root REPO]   # exit 1 and one line per offending
                                      # include: src/hlo/x.cc:12: ...
    check_layering.py --self-test     # the check fails on a bad include
"""

import argparse
import os
import re
import shutil
import sys
import tempfile

# Layer -> the layers its files may include (itself included).
ALLOWED = {
    "support": {"support"},
    "hlo": {"support", "hlo"},
    "analysis": {"support", "hlo", "analysis"},
    "passes": {"support", "hlo", "analysis", "passes"},
    "interp": {"support", "hlo", "interp"},
    "sim": {"support", "hlo", "analysis", "sim"},
    "tools": {"support", "hlo", "analysis", "passes", "interp", "sim",
              "tools"},
}
# Top-level folders of the repository that src/ must not reach into.
OUTSIDE = {"bench", "fuzz", "python", "tests", "scripts", "examples", "docs"}

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SOURCE_SUFFIXES = (".h", ".cc", ".inc")


def check(root):
    """Offending includes under root/src, as 'path:line: message' lines."""
    src = os.path.join(root, "src")
    problems = []
    if not os.path.isdir(src):
        return ["%s: no src/ folder" % root]
    for dirpath, _, files in sorted(os.walk(src)):
        rel_dir = os.path.relpath(dirpath, src)
        layer = rel_dir.split(os.sep)[0]
        for name in sorted(files):
            if not name.endswith(SOURCE_SUFFIXES):
                continue
            path = os.path.join(dirpath, name)
            shown = os.path.relpath(path, root)
            if layer not in ALLOWED:
                problems.append("%s:1: file in %s/, which is not a layer "
                                "(add it to scripts/check_layering.py)" %
                                (shown, layer))
                continue
            is_test = name.endswith("_test.cc")
            with open(path, encoding="utf-8", errors="replace") as f:
                for lineno, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    target = m.group(1)
                    top = target.split("/")[0]
                    if top == ".." or top in OUTSIDE:
                        problems.append(
                            '%s:%d: #include "%s" reaches outside src/' %
                            (shown, lineno, target))
                    elif top in ALLOWED and not is_test and \
                            top not in ALLOWED[layer]:
                        problems.append(
                            '%s:%d: #include "%s": %s/ may not include %s/ '
                            "(layers: support <- hlo <- analysis <- passes; "
                            "hlo <- interp; analysis <- sim; tools uses all)" %
                            (shown, lineno, target, layer, top))
    return problems


def self_test():
    """The check passes on a good tree and names each bad include."""
    made = []

    def tree(files):
        d = tempfile.mkdtemp(prefix="check_layering_")
        made.append(d)
        for rel, text in files.items():
            p = os.path.join(d, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as f:
                f.write(text)
        return d

    good = {
        "src/hlo/a.h": '#include "support/byte_size.h"\n'
                       '#include "absl/status/status.h"\n',
        "src/passes/p.cc": '#include "analysis/x.h"\n#include "hlo/a.h"\n',
        "src/tools/t.cc": '#include "passes/p.h"\n#include "sim/s.h"\n',
        "src/hlo/a_test.cc": '#include "passes/p.h"\n',  # tests link all
    }
    failures = []
    p = check(tree(good))
    if p:
        failures.append("good tree reported: %s" % p)
    cases = [
        ({"src/hlo/bad.cc": '// x\n#include "passes/pass.h"\n'},
         'src/hlo/bad.cc:2: #include "passes/pass.h": hlo/ may not include '
         "passes/"),
        ({"src/interp/e.cc": '#include "analysis/a.h"\n'},
         "src/interp/e.cc:1: #include \"analysis/a.h\": interp/ may not "
         "include analysis/"),
        ({"src/sim/s.cc": '  #  include "passes/p.h"\n'},
         "src/sim/s.cc:1:"),
        ({"src/analysis/a.cc": '#include "tools/cli_util.h"\n'},
         "analysis/ may not include tools/"),
        ({"src/support/b.cc": '#include "hlo/shape.h"\n'},
         "support/ may not include hlo/"),
        ({"src/hlo/c.cc": '#include "../tests/x.h"\n'},
         "reaches outside src/"),
        ({"src/passes/d.h": '#include "bench/b.h"\n'},
         "reaches outside src/"),
        ({"src/newlayer/n.cc": "\n"}, "which is not a layer"),
    ]
    for files, expected in cases:
        p = check(tree(dict(good, **files)))
        if len(p) != 1 or expected not in p[0]:
            failures.append("expected one problem with %r, got %r" %
                            (expected, p))
    for d in made:
        shutil.rmtree(d, ignore_errors=True)
    for f in failures:
        print("self-test: " + f, file=sys.stderr)
    if not failures:
        print("self-test: %d bad trees rejected, good tree accepted" %
              len(cases))
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    problems = check(os.path.abspath(args.root))
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
