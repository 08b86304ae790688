#!/usr/bin/env python3
"""Simulator fidelity: time compute-only training steps on one GPU, dump
XLA's final modules, fit the simulator's preset on one set and check it on
another (docs/SIMULATOR.md, "Fidelity").

Two parts, run on two machines:

  device  (the GPU machine, one H200; JAX there, no hloverlap binary needed)
      For every step of TRAIN and VALIDATION (transformer training steps of
      bench/jax_bridge_bench.py's model -- scanned layers, RMSNorm, causal
      attention, GELU MLP, gradient accumulation in a fori_loop, SGD
      update -- at other layer counts, widths, sequence lengths, batch
      sizes, accumulation counts, with and without remat), on one GPU (no
      collectives), compiled with the JAX bridge's XLA options (the
      `bridge` group of jax_bridge_bench.py: cuBLAS GEMMs, latency hiding
      scheduler on, XLA's pipelining and double buffering off, command
      buffers off; python/hloverlap/xla.py BRIDGE_XLA_OPTIONS per
      compile):
        * XLA's final module, `compiled.as_text()` (the executable's
          optimized HLO, what `hloverlap sim` reads);
        * the step time: steps dispatched back to back (params donated
          and chained, so the GPU runs them without host gaps once a step
          outlasts its dispatch), wall time / steps, median of 3 repeats;
          also the blocked per-step median (dispatch + sync each step);
        * optionally (time permitting) a profile of two steps per config
          (jax.profiler, Perfetto JSON): per-kernel device times, for
          diagnosis only (the fit uses step times).
      Writes OUT/steps.json, OUT/modules.tar.gz (one NAME.hlo per step),
      OUT/profiles.tar.gz.
  fit     (here, with the hloverlap binary)
      Fits the preset's factors (kernel_overhead_us, memory_efficiency,
      compute_efficiency, ... see FIT_KEYS) on TRAIN only, by minimizing
      the squared relative error of `hloverlap sim` against the measured
      step times, then prints the table of every step (predicted vs
      measured, error) with the validation error, and writes the preset.

Usage:
  device: XLA_FLAGS=... is set by the script itself (before JAX starts)
    python3 bench/sim_fidelity.py device --out $OUT [--budget-s 420]
  here:
    python3 bench/sim_fidelity.py fit --data bench/calibration/sim_fidelity \
        --bin build/hloverlap [--write-preset src/sim/sim_preset.inc]

The collective part of issue 18 (calibration at group size 2, step times of
the corpus programs) needs two GPUs: `device --collectives` runs
bench/calibrate_gpu.py's collective sweep and the corpus steps when two are
visible, and says so and skips them otherwise.
"""
import argparse
import json
import os
import statistics
import sys
import tarfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# --- the steps ---------------------------------------------------------------
# (layers, d_model, seq, batch, accum, remat). heads = d_model / 128. Two
# disjoint sets, each spanning deep/shallow, narrow/wide, short/long, small
# and large batches, accumulation 1..4, remat on and off. VALIDATION also
# holds ANCHORS §1c's compute-only "perf" (8, 2048, 1024, 1, 4) and seed
# (8, 2048, 1024, 4, 4) steps, measured there at 44.1 and 139.9 ms with
# these options.
TRAIN = [
    (2, 512, 256, 1, 1, False),
    (4, 1024, 512, 2, 2, False),
    (8, 2048, 512, 1, 4, False),
    (12, 768, 512, 4, 1, True),
    (6, 1536, 1024, 2, 2, True),
    (4, 3072, 512, 1, 2, False),
    (2, 2048, 2048, 2, 1, True),
    (8, 512, 1024, 8, 2, False),
    (4, 768, 256, 4, 4, True),
    (12, 1024, 256, 2, 1, False),
    (6, 2048, 512, 4, 1, False),
    (2, 1536, 1024, 4, 4, False),
    (8, 1024, 2048, 1, 1, True),
    (4, 512, 512, 2, 1, False),
    (16, 768, 256, 1, 2, False),
]
VALIDATION = [
    (8, 2048, 1024, 1, 4, False),  # ANCHORS §1c perf, compute only
    (8, 2048, 1024, 4, 4, False),  # ANCHORS §1c seed size, compute only
    (3, 1024, 1024, 2, 2, False),
    (6, 768, 1024, 2, 1, False),
    (8, 2048, 1024, 1, 2, True),
    (10, 512, 512, 4, 2, True),
    (4, 1536, 512, 4, 2, False),
    (2, 3072, 1024, 2, 1, False),
    (6, 1024, 512, 4, 4, True),
    (12, 512, 256, 2, 1, False),
    (4, 2048, 2048, 1, 1, False),
    (8, 1536, 256, 4, 1, True),
    (2, 768, 2048, 2, 2, False),
    (5, 1024, 768, 2, 3, False),
    (16, 512, 512, 1, 1, False),
]


def step_name(t):
  layers, d, seq, batch, accum, remat = t
  return "L%d_d%d_s%d_b%d_a%d%s" % (layers, d, seq, batch, accum,
                                    "_remat" if remat else "")


def step_cfg(t):
  """The jax_bridge_bench.build config of one step: one GPU, GSPMD mode
  (plain jit, nothing to partition), FSDP program (no collectives on one
  device)."""
  layers, d, seq, batch, accum, remat = t
  return dict(layers=layers, d=d, heads=max(1, d // 128), seq=seq, mb=batch,
              accum=accum, remat=remat, mode="gspmd", par="fsdp", ndev=1)


def all_steps():
  return ([("train", t) for t in TRAIN] +
          [("validation", t) for t in VALIDATION])


# --- device part ---------------------------------------------------------------
def import_bridge_bench():
  """bench/jax_bridge_bench.py (the model, the bridge group's options)."""
  sys.path.insert(0, HERE)
  sys.path.insert(0, os.path.join(ROOT, "python"))
  import jax_bridge_bench as jbb  # pylint: disable=g-import-not-at-top
  return jbb


def ensure_bridge_flags(jbb):
  """Re-executes this script with the bridge group's process flags
  (jax_bridge_bench.BRIDGE_FLAGS: command buffers off, XLA's pipelining and
  double buffering off) in XLA_FLAGS unless they are set: XLA reads them
  once, and importing the bench imported JAX already."""
  want = " ".join(jbb.BRIDGE_FLAGS)
  if os.environ.get("XLA_FLAGS") != want:
    os.environ["XLA_FLAGS"] = want
    os.execv(sys.executable, [sys.executable] + sys.argv)


class Clock:
  """The device part's time budget: work past it is skipped (the outputs
  are written either way)."""

  def __init__(self, budget_s):
    self.t0 = time.time()
    self.budget_s = budget_s

  def left(self):
    return self.budget_s - (time.time() - self.t0)


def gpu_step_ms(call, params, x, jax, copy_tree, target_s=0.3, repeats=3):
  """Step time with steps dispatched back to back: (wall time of n chained
  steps) / n, median of `repeats`; and the blocked per-step median."""
  p = copy_tree(params)
  blocked = []
  for i in range(4):  # 2 warm-up steps, then 2 blocked ones
    t0 = time.perf_counter()
    l, p = call(p, x)
    jax.block_until_ready((l, p))
    if i >= 2:
      blocked.append(1e3 * (time.perf_counter() - t0))
  est_s = max(min(blocked) / 1e3, 1e-5)
  n = int(min(max(target_s / est_s, 3), 400))
  per = []
  for _ in range(repeats):
    jax.block_until_ready(p)
    t0 = time.perf_counter()
    for _ in range(n):
      l, p = call(p, x)
    jax.block_until_ready((l, p))
    per.append(1e3 * (time.perf_counter() - t0) / n)
  for _ in range(3):
    t0 = time.perf_counter()
    l, p = call(p, x)
    jax.block_until_ready((l, p))
    blocked.append(1e3 * (time.perf_counter() - t0))
  del p
  return dict(step_ms=round(statistics.median(per), 4),
              step_ms_repeats=[round(v, 4) for v in per], chained_steps=n,
              blocked_ms_med=round(statistics.median(blocked), 4),
              blocked_ms=[round(v, 3) for v in blocked])


def compile_step(jbb, jax, t, opts):
  """(compiled, params, x, record) of one step."""
  rec = dict(name=step_name(t), cfg=step_cfg(t))
  fn, jk, params, x = jbb.build(step_cfg(t))
  t0 = time.perf_counter()
  lowered = jax.jit(fn, **jk).lower(params, x)
  dropped = []
  compiled = jbb.X.compile_dropping_unknown(
      lambda o: lowered.compile(compiler_options=o), opts, dropped)
  rec["compile_s"] = round(time.perf_counter() - t0, 2)
  rec["dropped_xla_options"] = dropped
  return compiled, params, x, rec


def profile_step(jax, call, params, x, copy_tree, log_dir):
  """Two steps under jax.profiler (Perfetto JSON where this JAX writes it)."""
  p = copy_tree(params)
  l, p = call(p, x)
  jax.block_until_ready((l, p))
  try:
    jax.profiler.start_trace(log_dir, create_perfetto_trace=True)
  except TypeError:
    jax.profiler.start_trace(log_dir)
  try:
    for _ in range(2):
      l, p = call(p, x)
      jax.block_until_ready((l, p))
  finally:
    jax.profiler.stop_trace()
  del p


def device_main(args, jax=None, jbb=None):
  """The device part; `jax` / `jbb` (jax_bridge_bench) may be fakes (the
  local dry run, bench/sim_fidelity_dryrun.py)."""
  if jbb is None:
    jbb = import_bridge_bench()
    ensure_bridge_flags(jbb)
  if jax is None:
    import jax  # pylint: disable=g-import-not-at-top,redefined-outer-name
  from concurrent.futures import ThreadPoolExecutor, wait  # pylint: disable=g-import-not-at-top
  out = args.out
  mod_dir = os.path.join(args.scratch, "modules")
  prof_dir = os.path.join(args.scratch, "profiles")
  os.makedirs(out, exist_ok=True)
  os.makedirs(mod_dir, exist_ok=True)
  os.makedirs(prof_dir, exist_ok=True)
  clock = Clock(args.budget_s)
  opts = dict(jbb.X.BRIDGE_XLA_OPTIONS)
  env = dict(jax=jax.__version__, devices=[str(d) for d in jax.devices()],
             device_kind=jax.devices()[0].device_kind,
             xla_flags=" ".join(jbb.BRIDGE_FLAGS), per_compile=opts,
             method="step_ms: n chained steps dispatched back to back, "
             "wall / n, median of 3 (with --rounds: one such time per "
             "round over all steps, median over rounds); blocked_ms: one "
             "step, dispatch + sync")
  records = []

  def save():
    with open(os.path.join(out, "steps.json"), "w") as f:
      json.dump(dict(env=env, steps=records), f, indent=1, default=str)

  steps = all_steps()
  if args.only:
    steps = [s for s in steps if step_name(s[1]) in args.only.split(",")]

  def work(item):
    which, t = item
    try:
      c, params, x, rec = compile_step(jbb, jax, t, opts)
      rec["set"] = which
      text = jbb.compiled_text(c)
      with open(os.path.join(mod_dir, rec["name"] + ".hlo"), "w") as f:
        f.write(text)
      rec["module"] = rec["name"] + ".hlo"
      return c, params, x, rec
    except Exception as e:  # pylint: disable=broad-except
      return None, None, None, dict(name=step_name(t), set=which,
                                    cfg=step_cfg(t), error=repr(e)[:1500])

  # Compiles in parallel (XLA compiles without the GIL), at most half the
  # budget: steps not compiled by then are reported, not waited for.
  t0 = time.time()
  pool = ThreadPoolExecutor(max_workers=args.jobs)
  futures = [pool.submit(work, item) for item in steps]
  done, _ = wait(futures, timeout=max(clock.left() * 0.5, 1))
  compiled = []
  for f, (which, t) in zip(futures, steps):
    if f in done:
      compiled.append(f.result())
    else:
      f.cancel()
      compiled.append((None, None, None, dict(
          name=step_name(t), set=which, cfg=step_cfg(t),
          error="skipped: not compiled within the budget")))
  pool.shutdown(wait=False, cancel_futures=True)
  env["compile_wall_s"] = round(time.time() - t0, 1)
  print("compiled %d steps in %.1f s" % (len(compiled), time.time() - t0),
        flush=True)
  records.extend(rec for _, _, _, rec in compiled)
  # Rounds over every step in turn (--rounds; 1: three repeats of each step
  # in a row): a step's time is the median over rounds, so that a slow
  # period of the host (launch-bound steps vary by +-20% from one period
  # to the next) does not land on one step only.
  rounds = max(1, getattr(args, "rounds", 1))
  env["rounds"] = rounds
  for r in range(rounds):
    for c, params, x, rec in compiled:
      if c is None or "error" in rec:
        continue
      if clock.left() < 30:
        if "step_ms" not in rec:
          rec["error"] = "skipped: device budget spent"
        continue
      try:
        m = gpu_step_ms(c, params, x, jax, jbb.copy_tree,
                        repeats=3 if rounds == 1 else 1)
      except Exception as e:  # pylint: disable=broad-except
        rec["error"] = repr(e)[:1500]
        continue
      if rounds == 1:
        rec.update(m)
      else:
        rec.setdefault("round_ms", []).append(m["step_ms"])
        rec.setdefault("blocked_ms", []).extend(m["blocked_ms"])
        rec["chained_steps"] = m["chained_steps"]
        rec["step_ms"] = round(statistics.median(rec["round_ms"]), 4)
        rec["step_ms_repeats"] = rec["round_ms"]
        rec["blocked_ms_med"] = round(statistics.median(rec["blocked_ms"]),
                                      4)
      print(json.dumps({k: rec.get(k) for k in ("name", "set", "compile_s",
                                                 "step_ms", "blocked_ms_med",
                                                 "error")}), flush=True)
    save()
  env["timing_done_s"] = round(time.time() - clock.t0, 1)
  if not args.no_profile:
    for c, params, x, rec in compiled:
      if c is None or "step_ms" not in rec or clock.left() < 40:
        continue
      d = os.path.join(prof_dir, rec["name"])
      try:
        profile_step(jax, c, params, x, jbb.copy_tree, d)
        rec["profile"] = rec["name"]
      except Exception as e:  # pylint: disable=broad-except
        rec["profile_error"] = repr(e)[:500]
        break
  env["wall_s"] = round(time.time() - clock.t0, 1)
  save()
  with tarfile.open(os.path.join(out, "modules.tar.gz"), "w:gz") as tf:
    tf.add(mod_dir, arcname="modules")
  with tarfile.open(os.path.join(out, "profiles.tar.gz"), "w:gz") as tf:
    xplanes = 0
    for root, _, files in sorted(os.walk(prof_dir)):
      for fn in sorted(files):
        full = os.path.join(root, fn)
        # Perfetto JSON; one raw XPlane (in case this JAX wrote no JSON).
        if fn.endswith(".json.gz") or (fn.endswith(".xplane.pb") and
                                       xplanes == 0):
          xplanes += fn.endswith(".xplane.pb")
          tf.add(full, arcname=os.path.relpath(full, prof_dir))
  if args.collectives:
    if len(jax.devices()) < 2:
      print("collectives: %d GPU visible; the group-size-2 calibration and "
            "the corpus step times need two (not run)" % len(jax.devices()))
    else:
      import subprocess  # pylint: disable=g-import-not-at-top
      subprocess.run([sys.executable, os.path.join(HERE, "calibrate_gpu.py"),
                      "--only-collectives", "--group-sizes", "2", "--out",
                      os.path.join(out, "collectives_h200_x2.json")],
                     check=False)
  print("done in %.1f s" % (time.time() - clock.t0), flush=True)
  return records


# --- fit part ------------------------------------------------------------------
# The preset keys fitted (sim/sim_types.h says what each is), their starting
# points and bounds. The first fits started from the per-kernel profiles of
# the training steps (small fusions ~1 us on the GPU, small cuBLAS GEMMs
# ~4 us, large fusions ~0.85 x 4.3 TB/s, large GEMMs ~0.95 x 790 TFLOP/s,
# launches ~5 us); these are the result of the last fit (training steps
# only), so a refit converges in a few rounds.
FIT_KEYS = [
    ("kernel_overhead_us", 2.0, 0.0, 10.0),
    ("gemm_overhead_us", 1.7, 0.0, 20.0),
    ("memory_efficiency", 0.85, 0.3, 1.0),
    ("compute_efficiency", 1.0, 0.3, 1.0),
    ("async_compute_contention", 0.45, 0.0, 1.0),
    ("host_launch_us", 4.65, 0.0, 30.0),
    ("gemm_host_launch_us", 2.43, 0.0, 30.0),
    ("host_step_us", 1120.0, 0.0, 5000.0),
    ("host_max_lead_us", 636.0, 0.0, 20000.0),
]


def spec_text(params):
  return "".join("%s %.6g\n" % (k, v) for k, v in params.items())


class Simulator:
  """`hloverlap sim --format=json` of every module under a preset."""

  def __init__(self, binary, modules_dir, tmp):
    self.binary, self.dir, self.tmp = binary, modules_dir, tmp
    self.calls = 0

  def predict(self, names, params):
    import subprocess  # pylint: disable=g-import-not-at-top
    spec = os.path.join(self.tmp, "spec.txt")
    with open(spec, "w") as f:
      f.write(spec_text(params))
    out = {}
    for n in names:
      r = subprocess.run([self.binary, "sim", os.path.join(self.dir, n + ".hlo"),
                          "--format=json", "--gpu-spec=" + spec],
                         capture_output=True, text=True, check=True)
      out[n] = json.loads(r.stdout)
      self.calls += 1
    return out


def relative_errors(pred, measured):
  return {n: (pred[n]["step_time_ms"] - measured[n]) / measured[n]
          for n in pred}


def fit(sim, names, measured, rounds=40, log=print, loss_kind="l1"):
  """Coordinate search with step halving on the relative errors of the
  training steps, summed as absolute values (l1: robust to the few
  launch-bound steps whose times vary by +-20% from run to run) or squares
  (l2); deterministic, each key bounded."""
  params = {k: v for k, v, _, _ in FIT_KEYS}
  bounds = {k: (lo, hi) for k, _, lo, hi in FIT_KEYS}
  step = {k: 0.3 * max(v, 1e-3) for k, v in params.items()}

  def loss(p):
    e = relative_errors(sim.predict(names, p), measured)
    if loss_kind == "l1":
      return sum(abs(x) for x in e.values())
    return sum(x * x for x in e.values())

  best = loss(params)
  for r in range(rounds):
    improved = False
    for k in params:
      for sign in (1, -1):
        q = dict(params)
        lo, hi = bounds[k]
        q[k] = min(hi, max(lo, params[k] + sign * step[k]))
        if q[k] == params[k]:
          continue
        l = loss(q)
        if l < best:
          best, params, improved = l, q, True
          break
    if not improved:
      step = {k: v / 2 for k, v in step.items()}
      if max(step[k] / max(abs(params[k]), 1e-3) for k in step) < 0.01:
        break
    log("round %d: loss %.4f %s" % (r, best,
                                   spec_text(params).replace("\n", "; ")))
  return params


def fit_main(args):
  import tempfile  # pylint: disable=g-import-not-at-top
  with open(os.path.join(args.data, "steps.json")) as f:
    data = json.load(f)
  steps = [s for s in data["steps"] if "step_ms" in s]
  measured = {s["name"]: s["step_ms"] for s in steps}
  train = [s["name"] for s in steps if s["set"] == "train"]
  val = [s["name"] for s in steps if s["set"] == "validation"]
  with tempfile.TemporaryDirectory() as tmp:
    with tarfile.open(os.path.join(args.data, "modules.tar.gz")) as tf:
      tf.extractall(tmp)
    sim = Simulator(args.bin, os.path.join(tmp, "modules"), tmp)
    if args.preset:
      params = {}
      with open(args.preset) as f:
        for line in f:
          line = line.split("#")[0].split()
          if len(line) == 2:
            params[line[0]] = float(line[1])
    else:
      params = fit(sim, train, measured, loss_kind=args.loss,
                   log=lambda m: print(m, file=sys.stderr))
    pred = sim.predict(train + val, params)
  err = relative_errors(pred, measured)
  by = {s["name"]: s for s in steps}
  lines = ["| set | step | layers | d_model | seq | batch | accum | remat | "
           "measured ms | range over rounds | predicted ms | launch-bound | "
           "error |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]

  def spread(n):  # the measured times' range (rounds, else repeats)
    r = by[n].get("round_ms") or by[n].get("step_ms_repeats") or [measured[n]]
    return min(r), max(r)

  def launch_share(n):  # the predicted step's compute stream idle on launches
    p = pred[n]
    return p.get("launch_bound_ms", 0) / max(p["step_time_ms"], 1e-9)

  def in_range(n):
    lo, hi = spread(n)
    return lo <= pred[n]["step_time_ms"] <= hi

  for n in train + val:
    c = by[n]["cfg"]
    lo, hi = spread(n)
    lines.append("| %s | %s | %d | %d | %d | %d | %d | %s | %.2f | "
                 "%.2f..%.2f (%+.0f/%+.0f%%) | %.2f | %.0f%% | %+.1f%% |" % (
                     by[n]["set"], n, c["layers"], c["d"], c["seq"], c["mb"],
                     c["accum"], "yes" if c["remat"] else "no", measured[n],
                     lo, hi, 100 * (lo / measured[n] - 1),
                     100 * (hi / measured[n] - 1), pred[n]["step_time_ms"],
                     100 * launch_share(n), 100 * err[n]))

  def summary(names, label):
    e = [abs(err[n]) for n in names]
    worst = max(names, key=lambda n: abs(err[n]))
    return ("%s: %d steps, mean |error| %.1f%%, worst %+.1f%% (%s), "
            "within 5%%: %d, within the measured range: %d" % (
                label, len(e), 100 * sum(e) / len(e), 100 * err[worst], worst,
                sum(x <= 0.05 for x in e), sum(in_range(n) for n in names)))
  lines += ["", summary(train, "training"), summary(val, "validation")]
  print("\n".join(lines))
  print("\npreset:\n" + spec_text(params))
  if args.write_preset:
    with open(args.write_preset, "w") as f:
      f.write(spec_text(params))
  return params, err


def main():
  ap = argparse.ArgumentParser()
  sub = ap.add_subparsers(dest="cmd", required=True)
  d = sub.add_parser("device")
  d.add_argument("--out", default=os.environ.get("OUT", "/tmp/sim_fidelity"))
  d.add_argument("--budget-s", type=float, default=420)
  d.add_argument("--jobs", type=int, default=4)
  d.add_argument("--only", default="")
  d.add_argument("--no-profile", action="store_true")
  d.add_argument("--rounds", type=int, default=1,
                 help="time every step once per round, N rounds (the step "
                 "time: the median over rounds)")
  d.add_argument("--collectives", action="store_true")
  d.add_argument("--scratch", default="/tmp/sim_fidelity")
  f = sub.add_parser("fit")
  f.add_argument("--data", default=os.path.join(HERE, "calibration",
                                                "sim_fidelity"))
  f.add_argument("--bin", default=os.path.join(ROOT, "build", "hloverlap"))
  f.add_argument("--preset", help="evaluate this preset (key value lines) "
                 "instead of fitting one")
  f.add_argument("--write-preset", help="write the fitted key value lines")
  f.add_argument("--loss", choices=["l1", "l2"], default="l1")
  args = ap.parse_args()
  if args.cmd == "fit":
    fit_main(args)
    return
  if args.cmd == "device":
    records = device_main(args)
    # A compile still running past the budget must not hold the exit.
    if any("not compiled within" in r.get("error", "") for r in records):
      sys.stdout.flush()
      os._exit(0)  # pylint: disable=protected-access


if __name__ == "__main__":
  main()
