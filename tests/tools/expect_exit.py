#!/usr/bin/env python3
"""Runs a command and requires a given exit status (lit helper: %exit<N>).

usage: expect_exit.py N COMMAND [ARGS...]

Exits 0 when COMMAND exits with status N; otherwise prints the actual status
to stderr and exits 1. A command killed by a signal (a crash) always fails.
stdin/stdout/stderr are inherited, so the command's output can be piped into
FileCheck.
"""
import subprocess
import sys


def main():
    if len(sys.argv) < 3:
        sys.stderr.write(__doc__)
        return 1
    want = int(sys.argv[1])
    try:
        got = subprocess.call(sys.argv[2:])
    except OSError as e:
        sys.stderr.write("expect_exit: cannot run %s: %s\n" % (sys.argv[2], e))
        return 1
    if got != want:
        sys.stderr.write("expect_exit: expected exit status %d, got %d: %s\n" %
                         (want, got, " ".join(sys.argv[2:])))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
