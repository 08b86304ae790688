#!/usr/bin/env python3
"""Runs the collective pipeliner over the shared corpus (lit helper).

  pipeline_corpus.py HLOVERLAP CORPUS stages [--stages=00,01,...]
      [--cases=small|all] [--jobs=N]
    For every stage file of every case: `hloverlap opt --preset=pipeline
    --verify-each` must exit 0, and its output must parse and verify
    (`hloverlap opt OUT`). Prints one line per file and `ALL OK` at the end.

  pipeline_corpus.py HLOVERLAP CORPUS equivalence [--cases=small]
    For every small case (not big_*): pipelines stage 03 and checks with
    `hloverlap verify` on as many devices as the module has partitions
    (2 for ../shared/corpus, 4 and 8 for tests/corpus/wide) that the
    outputs are bit-identical.
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile
import time


def run(cmd):
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr, time.time() - t0


def stage_files(corpus, stages, cases):
    out = []
    for case in sorted(os.listdir(corpus)):
        cdir = os.path.join(corpus, case)
        if not os.path.isdir(cdir):
            continue
        if cases == "small" and case.startswith("big_"):
            continue
        for f in sorted(os.listdir(cdir)):
            if f.endswith(".hlo") and f[:2] in stages:
                out.append((case, f, os.path.join(cdir, f)))
    return out


def check_stage(tool, tmp, case, name, path):
    out = os.path.join(tmp, "%s_%s" % (case, name))
    rc, text, secs = run([tool, "opt", "--preset=pipeline", "--verify-each",
                          path, "-o", out, "--remarks=" + out + ".remarks"])
    if rc != 0:
        return False, "%s/%s: opt exit %d (%.1fs): %s" % (
            case, name, rc, secs, text.strip()[-2000:])
    rc, text, secs2 = run([tool, "opt", out, "-o", os.devnull])
    if rc != 0:
        return False, "%s/%s: output does not parse/verify (exit %d): %s" % (
            case, name, rc, text.strip()[-2000:])
    with open(out + ".remarks") as f:
        remarks = f.read()
    failures = remarks.count(": failure: ")
    os.remove(out)
    return True, "ok %s/%s (%.1fs, %d failure remarks)" % (case, name, secs,
                                                           failures)


def check_equivalence(tool, tmp, case, name, path):
    out = os.path.join(tmp, "%s_%s" % (case, name))
    rc, text, secs = run([tool, "opt", "--preset=pipeline", path, "-o", out,
                          "--remarks=" + out + ".remarks"])
    if rc != 0:
        return False, "%s: opt exit %d: %s" % (case, rc, text.strip()[-2000:])
    with open(out + ".remarks") as f:
        passed = f.read().count(": passed: ")
    rc, text, secs = run([tool, "verify", path, out])
    os.remove(out)
    devices = re.search(r"(\d+) devices", text)
    if rc != 0:
        return False, "%s: verify exit %d: %s" % (case, rc,
                                                  text.strip()[-2000:])
    return True, "ok %s: %d collectives pipelined, bit-identical on %s " \
        "devices (%.1fs)" % (case, passed,
                             devices.group(1) if devices else "?", secs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tool")
    ap.add_argument("corpus")
    ap.add_argument("mode", choices=["stages", "equivalence"])
    ap.add_argument("--stages", default="00,01,02,03,04,09")
    ap.add_argument("--cases", default="all", choices=["all", "small"])
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    if args.mode == "equivalence":
        files = stage_files(args.corpus, ["03"], "small")
        check = check_equivalence
    else:
        files = stage_files(args.corpus, args.stages.split(","), args.cases)
        check = check_stage
    if not files:
        print("no corpus files found in", args.corpus)
        return 1
    ok_all = True
    with tempfile.TemporaryDirectory() as tmp, \
            concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futs = [pool.submit(check, args.tool, tmp, *f) for f in files]
        for fut in futs:
            ok, line = fut.result()
            ok_all &= ok
            print(line if ok else "FAIL " + line, flush=True)
    print("ALL OK (%d files)" % len(files) if ok_all else "SOME FAILED")
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
