#!/usr/bin/env python3
"""XLA's buffer assignment of the bridge candidates whose peak the simulator
misses (docs/SIMULATOR.md, "Peak memory"): the GSPMD `pipeline` candidates,
with and without XLA's while-loop double buffering.

On the GPU machine (one H200: JAX's mock GPU client compiles for N GPUs,
nothing runs), one command:

  HLOVERLAP_BIN=.device/bin/hloverlap python3 bench/peak_probe.py \\
      --out $OUT [--jobs small_gspmd_fsdp:2:pipeline:db,...]

Each job (program of bench/plan_rank.py, width, fixed preset, `db` for
XLA's double buffering) compiles in a fresh process through
hloverlap.jax.compile with `--xla_dump_to`, and packs into
OUT/<job>.tar.xz: XLA's buffer assignment, memory-usage report and final
module of every compile (xd/), the executable's final module (final.hlo)
and its memory analysis (stats.json). Here, then:

  hloverlap sim final.hlo --memory-report xd/<...>memory-usage-report.txt

compares the liveness peak with XLA's, and the buffer assignment's peak
buffers say which values XLA keeps live where the simulator's liveness
differs.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tarfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_JOBS = ("small_gspmd_fsdp:2:pipeline:db,small_gspmd_fsdp:2:pipeline,"
                "perf_gspmd:8:pipeline:db,perf_gspmd:8:pipeline,"
                "perf_shardmap:8:pipeline:db")
DOUBLE_BUFFER_KEY = "xla_gpu_enable_while_loop_double_buffering"


def child(program, width, preset, db, dest):
  sys.path.insert(0, os.path.join(ROOT, "python"))
  sys.path.insert(0, HERE)
  import jax
  jax.config.update("mock_num_gpu_processes", width)
  import hloverlap
  import hloverlap.jax as hjax
  from bridge_device_check import build
  from plan_rank import PROGRAMS
  cfg = dict(PROGRAMS[program])
  cfg.pop("widths", None)
  fn, jk, params, xs, _ = build(cfg, jax.devices(), abstract=True)
  lowered = jax.jit(fn, **jk).lower(params, xs)
  opts = hloverlap.Options(preset=preset, plan_cache=False,
                           xla_options={DOUBLE_BUFFER_KEY: True} if db else {},
                           keep_dir=os.path.join(dest, "keep"))
  exe = hjax.compile(lowered, opts, fallback=None).executable
  st = exe.get_compiled_memory_stats()
  stats = {k: getattr(st, k) for k in dir(st)
           if k.endswith("bytes") and not k.startswith("_")}
  with open(os.path.join(dest, "final.hlo"), "w") as f:
    f.write(exe.hlo_modules()[0].to_string())
  with open(os.path.join(dest, "stats.json"), "w") as f:
    json.dump(stats, f, indent=1)


def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--out", required=True)
  ap.add_argument("--jobs", default=DEFAULT_JOBS,
                  help="program:width:preset[:db], comma-separated")
  ap.add_argument("--timeout", type=float, default=400)
  ap.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
  args = ap.parse_args()
  if args.child:
    p, w, preset, db, dest = args.child
    child(p, int(w), preset, db == "1", dest)
    return 0
  from plan_rank import MOCK_XLA_FLAGS  # pylint: disable=g-import-not-at-top
  os.makedirs(args.out, exist_ok=True)
  failed = 0
  for job in args.jobs.split(","):
    parts = job.split(":")
    program, width, preset = parts[0], int(parts[1]), parts[2]
    db = len(parts) > 3 and parts[3] == "db"
    tag = "{}_w{}_{}{}".format(program, width, preset, "_db" if db else "")
    dest = os.path.join("/tmp/peak_probe", tag)
    os.makedirs(dest, exist_ok=True)
    env = dict(os.environ, XLA_FLAGS="{} --xla_dump_to={}/xd".format(
        MOCK_XLA_FLAGS, dest))
    t = time.time()
    r = subprocess.run([sys.executable, __file__, "--out", args.out,
                        "--child", program, str(width), preset,
                        "1" if db else "0", dest],
                       env=env, capture_output=True, text=True,
                       timeout=args.timeout)
    print("{} rc={} {:.1f}s".format(tag, r.returncode, time.time() - t),
          flush=True)
    if r.returncode:
      failed += 1
      print(r.stderr[-3000:], flush=True)
    with tarfile.open(os.path.join(args.out, tag + ".tar.xz"), "w:xz") as tf:
      for p in sorted(glob.glob(os.path.join(dest, "xd", "*"))):
        b = os.path.basename(p)
        if ("buffer-assignment" in b or "memory-usage" in b or
            b.endswith("after_optimizations.txt")):
          tf.add(p, arcname="xd/" + b)
      for b in ("final.hlo", "stats.json"):
        if os.path.exists(os.path.join(dest, b)):
          tf.add(os.path.join(dest, b), arcname=b)
  return 1 if failed else 0


if __name__ == "__main__":
  sys.exit(main())
