#!/usr/bin/env python3
"""The bridge under jax.distributed: several processes, one program.

One command (any machine with JAX; CPU devices, gloo, 127.0.0.1):

  HLOVERLAP_BIN=build/hloverlap python3 bench/distributed_check.py \\
      [--processes 2] [--devices-per-process 2] [--out FILE.json]

starts N processes (`jax.distributed.initialize` on 127.0.0.1, each with
D CPU devices), and in each one trains one step of the gradient
accumulation program (an outer fori_loop over a scanned transformer, FSDP
over all N x D devices) written with jit shardings (GSPMD) and with
shard_map, through
  * jax.jit (the reference),
  * hloverlap.jax.jit with a fixed preset (hoist-pipeline),
  * hloverlap.jax.jit with the planner (the default, plan_by="predict"),
  * hloverlap.jax.jit with the planner timing candidates
    (plan_by="measure": the candidates are run on fresh random inputs,
    in the same order on every process),
and checks that every process's output shards equal jax.jit's (bit for bit,
or within bf16 rounding of the largest value where a rewritten module rounds
differently in XLA; the reference interpreter then runs hloverlap's input and
output of the chosen candidate on all devices and must find them
bit-identical where it can run them) and that every process compiled the
same candidate (process 0's
choice is broadcast; processes that chose differently would deadlock in
their collectives). Prints one line per process and program and
`N passed, M failed`; exit status 0 iff nothing failed.
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, HERE)

SMALL = dict(layers=2, d=128, heads=4, seq=32, mb=1, accum=2)
PROGRAMS = {"gspmd_fsdp": dict(SMALL, par="fsdp", mode="gspmd"),
            "shardmap_fsdp": dict(SMALL, par="fsdp", mode="shardmap")}
VARIANTS = {
    "fixed": dict(preset="hoist-pipeline"),
    "plan": dict(),
    "plan_measure": dict(plan_by="measure", plan_measure_top=2,
                         plan_measure_steps=2),
}


def concrete(tree, seed):
  """Arrays with the abstract values' shapes and shardings, the same data
  on every process (each process fills its own shards)."""
  import numpy as np
  import jax
  leaves, treedef = jax.tree_util.tree_flatten(tree)
  out = []
  for i, a in enumerate(leaves):
    host = (np.random.default_rng(seed + i).standard_normal(a.shape) *
            0.05).astype(a.dtype)
    out.append(jax.make_array_from_callback(a.shape, a.sharding,
                                            lambda idx, h=host: h[idx]))
  return jax.tree_util.tree_unflatten(treedef, out)


def shards(tree):
  import numpy as np
  import jax
  return [[np.asarray(s.data) for s in sorted(
      x.addressable_shards, key=lambda s: s.device.id)]
          for x in jax.tree_util.tree_leaves(tree)]


def same(a, b):
  if len(a) != len(b):
    return False
  for la, lb in zip(a, b):
    for x, y in zip(la, lb):
      if x.shape != y.shape or x.tobytes() != y.tobytes():
        return False
  return True


def diff(a, b):
  """Elements that differ and the largest |difference| (as float64)."""
  import numpy as np
  n = worst = 0
  for la, lb in zip(a, b):
    for x, y in zip(la, lb):
      if x.shape != y.shape:
        return dict(shape_mismatch=True)
      xf, yf = x.astype(np.float64), y.astype(np.float64)
      both_nan = np.isnan(xf) & np.isnan(yf)
      n += int(np.count_nonzero(~((xf == yf) | both_nan)))
      d = np.where(both_nan, 0.0, np.abs(xf - yf))
      worst = max(worst, float(np.nanmax(d)) if d.size else 0.0)
  scale = max((float(np.max(np.abs(y.astype(np.float64))))
               for lb in b for y in lb if y.size), default=0.0)
  return dict(differing=n, max_abs=worst, ref_max_abs=scale)


# A rewritten module may round differently in XLA (its fusions change); the
# reference interpreter proves the rewrite itself exact. Outputs pass when
# bit-identical or within this fraction of the largest |value| (bf16's
# unit roundoff, 2^-8).
ROUNDING = 2.0 ** -8


def within_rounding(d):
  return (not d.get("shape_mismatch") and
          d["max_abs"] <= ROUNDING * max(d["ref_max_abs"], 1e-30))


def verify(binary, keep, cand, devices):
  """The reference interpreter on hloverlap's input and output of the
  chosen candidate (bit-identical or not)."""
  import re
  d = os.path.join(keep, "cand-" + re.sub(r"[^\w.-]+", "_", cand))
  a, b = os.path.join(d, "before.hlo"), os.path.join(d, "after.hlo")
  if not (os.path.exists(a) and os.path.exists(b)):
    return "no files"
  r = subprocess.run([binary, "verify", a, b, "--devices={}".format(devices)],
                     capture_output=True, text=True, timeout=600)
  last = (r.stdout.strip().splitlines() or ["?"])[-1]
  return "rc={} {}".format(r.returncode, last[:200])


def worker(args):
  import jax
  jax.distributed.initialize(coordinator_address=args.coordinator,
                             num_processes=args.processes,
                             process_id=args.process_id)
  import hloverlap
  import hloverlap.jax as hjax
  from bridge_device_check import build
  pid = jax.process_index()
  records = []
  for name, cfg in PROGRAMS.items():
    rec = dict(process=pid, program=name, devices=len(jax.devices()),
               local_devices=len(jax.local_devices()))
    try:
      fn, jk, aparams, axs, _ = build(cfg, jax.devices(), abstract=True)
      jk = {k: v for k, v in jk.items() if k != "donate_argnums"}
      params, xs = concrete(aparams, 1), concrete(axs, 100)
      ref = shards(jax.jit(fn, **jk)(params, xs))
      for vname, extra in VARIANTS.items():
        keep = "/tmp/distributed_check/p{}_{}_{}".format(pid, name, vname)
        opts = hloverlap.Options(plan_cache=False, sim_args=args.sim_arg,
                                 keep_dir=keep, **extra)
        f = hjax.jit(fn, options=opts, fallback=None, **jk)
        t = time.perf_counter()
        out = shards(f(params, xs))
        c = f.last
        chosen = c.plan.chosen if getattr(c, "plan", None) else None
        rec[vname] = dict(
            bit_identical=same(out, ref), diff=diff(out, ref),
            interpreter=(verify(hloverlap.find_binary(), keep, chosen,
                                len(jax.devices()))
                         if chosen and pid == 0 else None),
            seconds=round(time.perf_counter() - t, 2),
            route=c.route,
            chosen=c.plan.chosen if getattr(c, "plan", None) else None,
            plan=c.plan.summary_line() if getattr(c, "plan", None) else None)
    except Exception as e:  # noqa
      rec["error"] = repr(e)[:2000]
      rec["traceback"] = traceback.format_exc()[-3000:]
    print("RECORD " + json.dumps(rec), flush=True)
    records.append(rec)
  jax.distributed.shutdown()


def free_port():
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    return s.getsockname()[1]


def main():
  ap = argparse.ArgumentParser(description=__doc__,
                               formatter_class=argparse.RawTextHelpFormatter)
  ap.add_argument("--processes", type=int, default=2)
  ap.add_argument("--devices-per-process", type=int, default=2)
  ap.add_argument("--out")
  ap.add_argument("--sim-arg", action="append", default=[],
                  help="extra `hloverlap sim` argument (repeatable)")
  ap.add_argument("--timeout", type=float, default=500)
  ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
  ap.add_argument("--process-id", type=int, default=0, help=argparse.SUPPRESS)
  ap.add_argument("--coordinator", help=argparse.SUPPRESS)
  args = ap.parse_args()
  if args.worker:
    worker(args)
    return 0
  coord = "127.0.0.1:{}".format(free_port())
  env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONUNBUFFERED="1",
             XLA_FLAGS="--xla_force_host_platform_device_count={}".format(
                 args.devices_per_process),
             JAX_CPU_COLLECTIVES_IMPLEMENTATION="gloo")
  procs = [subprocess.Popen(
      [sys.executable, __file__, "--worker", "--process-id", str(i),
       "--processes", str(args.processes), "--coordinator", coord] +
      ["--sim-arg=" + a for a in args.sim_arg],
      env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
           for i in range(args.processes)]
  records, logs = [], []
  t0 = time.time()
  for p in procs:
    try:
      out, _ = p.communicate(timeout=max(1, args.timeout - (time.time() - t0)))
    except subprocess.TimeoutExpired:
      p.kill()
      out, _ = p.communicate()
    logs.append(out)
    records += [json.loads(l[7:]) for l in out.splitlines()
                if l.startswith("RECORD ")]
  passed = failed = 0
  for r in records:
    if "error" in r:
      failed += 1
      print("process {} {}: ERROR {}".format(r["process"], r["program"],
                                              r["error"][:300]))
      continue
    for v in VARIANTS:
      exact = r[v]["bit_identical"]
      ok = exact or within_rounding(r[v]["diff"])
      interp = r[v].get("interpreter") or ""
      if interp.startswith("rc=1"):  # the interpreter found a difference
        ok = False
      passed += ok
      failed += not ok
      print("process {} {} {}: {} {} route={} chosen={} {:.1f}s{}".format(
          r["process"], r["program"], v,
          "bit-identical" if exact else
          "within rounding" if ok else "DIFFERENT", r[v]["diff"],
          r[v]["route"], r[v]["chosen"], r[v]["seconds"],
          "; interpreter: " + r[v]["interpreter"]
          if r[v].get("interpreter") else ""))
  for prog in PROGRAMS:
    for v in ("plan", "plan_measure"):
      chosen = {r[v]["chosen"] for r in records
                if r["program"] == prog and v in r}
      ok = len(chosen) == 1 and None not in chosen
      passed += ok
      failed += not ok
      print("{} {}: every process compiled {}".format(
          prog, v, chosen.pop() if ok else "DIFFERENT: " + str(chosen)))
  if len(records) != args.processes * len(PROGRAMS):
    failed += 1
    print("missing records ({} of {}); logs:".format(
        len(records), args.processes * len(PROGRAMS)))
    for i, l in enumerate(logs):
      print("--- process {}\n{}".format(i, l[-4000:]))
  if args.out:
    with open(args.out, "w") as f:
      json.dump(dict(records=records, passed=passed, failed=failed), f,
                indent=1)
  print("{} passed, {} failed".format(passed, failed))
  return 0 if failed == 0 else 1


if __name__ == "__main__":
  sys.exit(main())
