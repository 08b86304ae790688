#!/usr/bin/env python3
"""The bridge's planner on XLA's final modules, at widths no machine here has.

On the GPU machine (one H200 is enough: JAX's mock GPU client compiles for
N GPUs, nothing runs), one command:

  HLOVERLAP_BIN=.device/bin/hloverlap python3 bench/plan_rank.py collect \\
      --out DIR [--pack OUT] [--widths 2,4,8] [--programs perf_shardmap,...]

For each width (a child process with `mock_num_gpu_processes=N`) and
program (the perf configuration of ANCHORS §1a and the seed size, written
with shard_map and with jit shardings; small corpus-like programs for the
CLI planner's validation), it compiles
  * jax.jit with the bridge's XLA options (the reference), and
  * hloverlap.jax.compile with the default Options (preset="plan": every
    candidate through hloverlap and XLA, each executable's final module
    simulated, the choice made as the bridge makes it),
and records, per candidate, the predicted step, exposed communication,
peak memory (XLA's memory analysis), compile seconds, and the choice.
Every candidate's hloverlap output (unfused, `after.hlo`) and XLA's final
module of it (`final.hlo`) are kept, with jax.jit's final module, in
DIR/<program>_w<N>/ and packed per width into DIR/plan_rank_w<N>.tar.xz.

  HLOVERLAP_BIN=... python3 bench/plan_rank.py timing [--programs P,Q]

(GPU machine) the planning time of a first start (a fresh process: jax.jit
compile for reference, then the planner, which fills a plan cache) and of a
restarted job (a second fresh process: the planner from that cache).

  python3 bench/plan_rank.py table --in DIR [--hloverlap build/hloverlap]

(here, no GPU) simulates every kept final module again with the given
binary and prints the Markdown table of docs/BENCHMARKS.md ("The bridge's
planner on XLA's final modules"): per program and width, each candidate's
prediction, the planner's choice, default / best, and jax.jit.
"""
import argparse
import glob
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, HERE)

PERF = dict(layers=8, d=2048, heads=16, seq=1024, mb=1, accum=4)
SEED = dict(PERF, mb=4)
SMALL = dict(layers=4, d=256, heads=4, seq=64, mb=2, accum=4)
PROGRAMS = {
    "perf_shardmap": dict(PERF, par="fsdp", mode="shardmap"),
    "perf_gspmd": dict(PERF, par="fsdp", mode="gspmd"),
    "seed_shardmap": dict(SEED, par="fsdp", mode="shardmap", widths=[2]),
    "seed_gspmd": dict(SEED, par="fsdp", mode="gspmd", widths=[2]),
    "small_shardmap_fsdp": dict(SMALL, par="fsdp", mode="shardmap"),
    "small_gspmd_fsdp": dict(SMALL, par="fsdp", mode="gspmd"),
    "small_gspmd_dp": dict(SMALL, par="dp", mode="gspmd"),
}
MOCK_XLA_FLAGS = ("--xla_gpu_enable_command_buffer= "
                  "--xla_gpu_shard_autotuning=false "
                  "--xla_gpu_autotune_level=0")


def _gz(src, dst):
  with open(src, "rb") as f, gzip.open(dst, "wb", compresslevel=6) as g:
    shutil.copyfileobj(f, g)


def child(out, width, programs, threads):
  import jax
  import hloverlap
  import hloverlap.jax as hjax
  from hloverlap import xla as xla_opts
  from bridge_device_check import build
  jax.config.update("mock_num_gpu_processes", width)
  devs = jax.devices()
  assert len(devs) == width, (len(devs), width)
  records = []
  for name in programs:
    cfg = dict(PROGRAMS[name])
    if width not in cfg.pop("widths", [width]):
      continue
    dest = os.path.join(out, "{}_w{}".format(name, width))
    os.makedirs(dest, exist_ok=True)
    rec = dict(program=name, width=width, config=cfg,
               kind=devs[0].device_kind)
    try:
      fn, jk, params, xs, _ = build(cfg, devs, abstract=True)
      lowered = jax.jit(fn, **jk).lower(params, xs)
      t = time.perf_counter()
      jc = hjax._jit_compile(lowered, xla_opts.bridge_options())
      rec["jit_compile_s"] = round(time.perf_counter() - t, 3)
      rt = jc.runtime_executable()
      rec["jit_peak_bytes"] = hjax._peak_bytes(rt)
      with open(os.path.join(dest, "jit.final.hlo"), "w") as f:
        f.write(jc.as_text())
      if name.startswith("perf") and width == 2:
        with open(os.path.join(dest, "jit.final.to_string.hlo"), "w") as f:
          f.write(rt.hlo_modules()[0].to_string())
        st = rt.get_compiled_memory_stats()
        rec["memory_stats_fields"] = {
            k: getattr(st, k) for k in dir(st)
            if k.endswith("bytes") and not k.startswith("_")}
        rec["exe_api"] = [k for k in dir(rt) if not k.startswith("_")]
        try:
          t = time.perf_counter()
          data = hjax._serialize(rt)
          rec["serialize_s"] = round(time.perf_counter() - t, 3)
          rec["serialized_bytes"] = len(data) if data else None
          if data:
            t = time.perf_counter()
            hjax._deserialize(data, devs, xla_opts.bridge_options(), None)
            rec["deserialize_s"] = round(time.perf_counter() - t, 3)
        except Exception as e:  # noqa
          rec["serialize_error"] = repr(e)[:1000]
      kd = os.path.join("/tmp/plan_rank", "{}_w{}".format(name, width))
      shutil.rmtree(kd, ignore_errors=True)
      # Every candidate compiled (the table's columns); the default's
      # pruning is replayed from the recorded estimates (`table`).
      opts = hloverlap.Options(keep_dir=kd, plan_cache=False,
                               plan_budget_s=None, plan_threads=threads,
                               sim_args=SIM_ARGS, plan_max_modules=None)
      t = time.perf_counter()
      try:
        bc = hjax.compile(lowered, opts, fallback=None)
        rec["plan_summary"] = bc.plan.summary_line()
        rec["timings"] = bc.timings
      except Exception as e:  # noqa
        rec["bridge_error"] = repr(e)[:3000]
      rec["bridge_compile_s"] = round(time.perf_counter() - t, 3)
      pj = os.path.join(kd, "plan.json")
      if os.path.exists(pj):
        with open(pj) as f:
          rec["plan"] = json.load(f)
      for cand in sorted(glob.glob(os.path.join(kd, "cand-*"))):
        cd = os.path.join(dest, os.path.basename(cand)[5:])
        os.makedirs(cd, exist_ok=True)
        for fn_ in ("after_route.hlo", "final.hlo", "remarks.json"):
          src = os.path.join(cand, fn_)
          if os.path.exists(src):
            _gz(src, os.path.join(cd, fn_ + ".gz"))
      if os.path.exists(os.path.join(kd, "partitioned.hlo")):  # GSPMD
        _gz(os.path.join(kd, "partitioned.hlo"),
            os.path.join(dest, "partitioned.hlo.gz"))
      with open(os.path.join(dest, "jax_lowered.hlo"), "w") as f:
        f.write(hjax.hlo_text_of(lowered))
    except Exception as e:  # noqa
      rec["error"] = repr(e)[:3000]
      rec["traceback"] = traceback.format_exc()[-3000:]
    for fn_ in glob.glob(os.path.join(dest, "*.hlo")):
      _gz(fn_, fn_ + ".gz")
      os.remove(fn_)
    records.append(rec)
    print("RECORD " + json.dumps(rec, default=str), flush=True)
  return records


def collect(args):
  widths = [int(w) for w in args.widths.split(",")]
  programs = args.programs.split(",") if args.programs else list(PROGRAMS)
  os.makedirs(args.out, exist_ok=True)
  procs = {}
  for n in widths:
    env = dict(os.environ, XLA_FLAGS=MOCK_XLA_FLAGS, PYTHONUNBUFFERED="1")
    log = open(os.path.join(args.out, "child_w{}.log".format(n)), "w")
    procs[n] = (subprocess.Popen(
        [sys.executable, __file__, "child", "--out", args.out, "--width",
         str(n), "--programs", ",".join(programs), "--threads",
         str(args.threads)] + ["--sim-arg=" + a for a in SIM_ARGS],
        env=env, stdout=log, stderr=subprocess.STDOUT),
                log)
  records = []
  t0 = time.time()
  for n, (p, log) in procs.items():
    try:
      p.wait(timeout=max(1, args.timeout - (time.time() - t0)))
    except subprocess.TimeoutExpired:
      p.kill()
    log.close()
    with open(os.path.join(args.out, "child_w{}.log".format(n))) as f:
      for line in f:
        if line.startswith("RECORD "):
          records.append(json.loads(line[7:]))
  pack = args.pack or args.out
  os.makedirs(pack, exist_ok=True)
  with open(os.path.join(pack, "plan_rank.json"), "w") as f:
    json.dump(records, f, indent=1, default=str)
  for n in widths:
    with tarfile.open(os.path.join(pack, "plan_rank_w{}.tar.xz".format(
        n)), "w:xz") as tar:
      for d in sorted(glob.glob(os.path.join(args.out, "*_w{}".format(n)))):
        tar.add(d, arcname=os.path.basename(d))
  for r in records:
    print(json.dumps({k: r.get(k) for k in (
        "program", "width", "jit_compile_s", "bridge_compile_s",
        "plan_summary", "bridge_error", "error")}, default=str)[:1500])


# --- planning time and the cached restart ----------------------------------
def timing_child(program, width, cache, threads, what):
  """One process: `what` is "first" (jax.jit compile, then the planner,
  which fills `cache`) or "restart" (the planner again, from `cache`)."""
  import jax
  import hloverlap
  import hloverlap.jax as hjax
  from hloverlap import xla as xla_opts
  from bridge_device_check import build
  jax.config.update("mock_num_gpu_processes", width)
  cfg = dict(PROGRAMS[program])
  cfg.pop("widths", None)
  fn, jk, params, xs, _ = build(cfg, jax.devices(), abstract=True)
  rec = dict(program=program, width=width, what=what, threads=threads)
  t = time.perf_counter()
  lowered = jax.jit(fn, **jk).lower(params, xs)
  rec["lower_s"] = round(time.perf_counter() - t, 3)
  if what == "first":
    t = time.perf_counter()
    hjax._jit_compile(lowered, xla_opts.bridge_options())
    rec["jit_compile_s"] = round(time.perf_counter() - t, 3)
  opts = hloverlap.Options(plan_cache=cache, plan_threads=threads,
                           sim_args=SIM_ARGS)
  t = time.perf_counter()
  bc = hjax.compile(lowered, opts, fallback=None)
  rec["bridge_compile_s"] = round(time.perf_counter() - t, 3)
  rec["from_cache"] = bc.plan.from_cache
  rec["chosen"] = bc.plan.chosen
  rec["plan_summary"] = bc.plan.summary_line()
  rec["timings"] = bc.timings
  rec["table"] = bc.plan.table()
  print("RECORD " + json.dumps(rec), flush=True)


def timing(args):
  records = []
  for program in args.programs.split(","):
    cache = os.path.join("/tmp/plan_cache", program)
    shutil.rmtree(cache, ignore_errors=True)
    for what in ("first", "restart"):
      env = dict(os.environ, XLA_FLAGS=MOCK_XLA_FLAGS, PYTHONUNBUFFERED="1")
      r = subprocess.run(
          [sys.executable, __file__, "timing-child", "--program", program,
           "--width", str(args.width), "--cache", cache, "--threads",
           str(args.threads), "--what", what] +
          ["--sim-arg=" + a for a in SIM_ARGS], env=env,
          capture_output=True, text=True, timeout=args.timeout)
      got = [json.loads(l[7:]) for l in r.stdout.splitlines()
             if l.startswith("RECORD ")]
      if not got:
        got = [dict(program=program, what=what, rc=r.returncode,
                    stderr=r.stderr[-3000:])]
      records += got
      print(json.dumps({k: v for k, v in got[0].items() if k != "table"}),
            flush=True)
      if "table" in got[0]:
        print(got[0]["table"], flush=True)
  if args.json:
    with open(args.json, "w") as f:
      json.dump(records, f, indent=1)


# --- here: the table ---------------------------------------------------------
SIM_ARGS = []


def sim_ms(binary, path):
  out = subprocess.run([binary, "sim", path, "--format=json"] + SIM_ARGS,
                       capture_output=True, text=True)
  if out.returncode:
    return None, out.stderr.strip().splitlines()[-1:] or ["?"]
  d = json.loads(out.stdout)
  return d, None


def replay(rows, max_modules):
  """The planner's choice with pruning (`max_modules`), replayed on a
  recorded table in which every candidate was compiled: the same
  plan.run, fed the recorded estimates and predictions."""
  from hloverlap import plan as plan_mod
  by = {r["candidate"]: r for r in rows}
  cands = [c for c in plan_mod.candidates() if c.name in by]

  def module(c):
    r = by[c.name]
    base = c.name.replace("+xla-db", "")
    root = by.get(base, {}).get("same_as") or base
    return root if r.get("same_as") is None or "+xla-db" in c.name \
        else r["same_as"].replace("+xla-db", "")

  def build(c):
    return plan_mod.Built("module " + module(c), None)

  def compile_(c, b):
    r = by[c.name]
    if r.get("predicted_ms") is None:
      raise RuntimeError(r.get("error") or "not compiled")
    return plan_mod.Compiled(None, None, r.get("peak_bytes"))

  def simulate(c, cc):
    return plan_mod.Simulated(by[c.name]["predicted_ms"])

  def estimate(c, b):
    r = by[module(c)] if module(c) in by else by[c.name]
    v = r.get("estimate_ms") or by[c.name].get("estimate_ms")
    if v is None:
      raise RuntimeError("no estimate")
    return v
  plan, _ = plan_mod.run(cands, build, compile_, simulate, estimate=estimate,
                         max_modules=max_modules, threads=1)
  return plan


def table(args):
  """Per program and width: every candidate's prediction on its final
  module (the planner's own numbers, as recorded by `collect`), the
  default's choice (pruned to the best 3 modules by the unfused
  estimate), the choice with every candidate compiled, and jax.jit."""
  from hloverlap import plan as plan_mod
  with open(os.path.join(args.inp, "plan_rank.json")) as f:
    records = json.load(f)
  names = [c.name for c in plan_mod.candidates()]
  lines = ["| program | GPUs | jax.jit | " + " | ".join(names) +
           " | default (compiles) | default / best | default / jax.jit |"
           " planning s (all) |",
           "|---" * (len(names) + 7) + "|"]
  out = []

  def f(v):
    return "{:.1f}".format(v) if v is not None else "–"
  for rec in records:
    d = os.path.join(args.inp, "{}_w{}".format(rec["program"], rec["width"]))
    rows = (rec.get("plan") or {}).get("rows", [])
    if not rows:
      continue
    by = {r["candidate"]: r for r in rows}
    for r in rows:
      if r.get("same_as"):
        twin = by[r["same_as"]]
        r.setdefault("predicted_ms", twin.get("predicted_ms"))
    jit, _ = sim_ms(args.hloverlap, os.path.join(d, "jit.final.hlo.gz"))
    jit_ms = jit["step_time_ms"] if jit else None
    best = min(r["predicted_ms"] for r in rows if r.get("predicted_ms"))
    dflt = replay(rows, 3)
    ch = dflt.row(dflt.chosen)
    compiles = sum(1 for r in dflt.rows
                   if r.predicted_ms is not None and r.same_as is None)
    lines.append("| {} | {} | {} | {} | {} ({}) | {:+.1%} | {} | {} |".format(
        rec["program"], rec["width"], f(jit_ms),
        " | ".join(f(by.get(n, {}).get("predicted_ms")) for n in names),
        dflt.chosen, compiles, ch.predicted_ms / best - 1,
        "{:+.1%}".format(ch.predicted_ms / jit_ms - 1) if jit_ms else "–",
        f((rec.get("plan") or {}).get("planning_s"))))
    out.append(dict(program=rec["program"], width=rec["width"],
                    jit_ms=jit_ms, best_ms=best, default=dflt.chosen,
                    default_ms=ch.predicted_ms, default_compiles=compiles,
                    all_compiled_choice=(rec.get("plan") or {}).get("chosen"),
                    rows=rows))
  print("\n".join(lines))
  if args.json:
    with open(args.json, "w") as fh:
      json.dump(out, fh, indent=1)


def main():
  ap = argparse.ArgumentParser(description=__doc__,
                               formatter_class=argparse.RawTextHelpFormatter)
  sub = ap.add_subparsers(dest="cmd", required=True)
  c = sub.add_parser("collect")
  c.add_argument("--out", required=True)
  c.add_argument("--pack", default="",
                 help="folder for plan_rank.json and the per-width archives "
                 "(default: --out)")
  c.add_argument("--widths", default="2,4,8")
  c.add_argument("--programs", default="")
  c.add_argument("--threads", type=int, default=4)
  c.add_argument("--timeout", type=float, default=540)
  ch = sub.add_parser("child")
  ch.add_argument("--out", required=True)
  ch.add_argument("--width", type=int, required=True)
  ch.add_argument("--programs", required=True)
  ch.add_argument("--threads", type=int, default=4)
  tm = sub.add_parser("timing")
  tm.add_argument("--programs", default="perf_shardmap,perf_gspmd")
  tm.add_argument("--width", type=int, default=2)
  tm.add_argument("--threads", type=int, default=0)
  tm.add_argument("--timeout", type=float, default=300)
  tm.add_argument("--json")
  tc = sub.add_parser("timing-child")
  tc.add_argument("--program", required=True)
  tc.add_argument("--width", type=int, required=True)
  tc.add_argument("--cache", required=True)
  tc.add_argument("--threads", type=int, default=0)
  tc.add_argument("--what", required=True)
  t = sub.add_parser("table")
  t.add_argument("--in", dest="inp", required=True)
  t.add_argument("--hloverlap", default=os.path.join(ROOT, "build",
                                                     "hloverlap"))
  t.add_argument("--json")
  for p in (c, ch, tm, tc, t):
    p.add_argument("--sim-arg", action="append", default=[],
                   help="extra `hloverlap sim` argument (repeatable)")
  args = ap.parse_args()
  SIM_ARGS.extend(args.sim_arg)
  if args.cmd == "collect":
    collect(args)
  elif args.cmd == "child":
    child(args.out, args.width, args.programs.split(","), args.threads)
  elif args.cmd == "timing":
    timing(args)
  elif args.cmd == "timing-child":
    timing_child(args.program, args.width, args.cache, args.threads or None,
                 args.what)
  else:
    table(args)


if __name__ == "__main__":
  main()
