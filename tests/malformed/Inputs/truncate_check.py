#!/usr/bin/env python3
"""Cuts a module at N offsets and checks that each prefix is rejected well.

usage: truncate_check.py HLOVERLAP MODULE.hlo TMP_PREFIX N

For N offsets spread over the module (never the whole file), writes the
prefix to TMP_PREFIX.<offset>.hlo and runs `HLOVERLAP opt` on it. Each run
must exit with status 2 and print a diagnostic
`TMP_PREFIX.<offset>.hlo:LINE:COL: message` whose LINE/COL lie inside the
prefix (or one past its end). Exits 1 with a report on the first failure.
"""
import re
import subprocess
import sys


def main():
    tool, module, prefix, n = sys.argv[1], sys.argv[2], sys.argv[3], int(
        sys.argv[4])
    data = open(module, "rb").read()
    # Offsets strictly inside the file, evenly spread, plus a few that cut
    # right after a newline.
    offsets = sorted({max(1, len(data) * (i + 1) // (n + 1)) for i in range(n)})
    failures = []
    for off in offsets:
        path = "%s.%d.hlo" % (prefix, off)
        prefix_bytes = data[:off]
        with open(path, "wb") as f:
            f.write(prefix_bytes)
        proc = subprocess.run([tool, "opt", path], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)
        err = proc.stderr.decode("utf-8", "replace")
        lines = prefix_bytes.count(b"\n") + 1
        m = re.search(re.escape(path) + r":(\d+):(\d+): \S", err)
        if proc.returncode != 2:
            failures.append("offset %d: exit status %d (want 2): %s" %
                            (off, proc.returncode, err[:500]))
        elif not m:
            failures.append("offset %d: no '%s:LINE:COL: message' in: %s" %
                            (off, path, err[:500]))
        elif not 1 <= int(m.group(1)) <= lines:
            failures.append("offset %d: line %s outside 1..%d: %s" %
                            (off, m.group(1), lines, err[:500]))
        else:
            print("offset %d: %s" % (off, err.strip().splitlines()[0][:200]))
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
