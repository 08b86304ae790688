#!/usr/bin/env python3
"""Measures NCCL collectives alone and beside compute, for the simulator's
collective table and contention shares (issue 25; docs/SIMULATOR.md,
"Multi-GPU steps (issue 25)").

One command on a 2-GPU machine (JAX with GPUs):

    python3 bench/nccl_contention.py --out nccl_contention.json

writes one JSON file:

  compute_alone   per-op time of a compute-bound kernel (bf16 GEMM chain,
                  the corpus' 4096x2048x8192 shape and 8192^3) and of a
                  memory-bound one (elementwise over 256 MiB: read + write),
                  on one GPU. This part runs on 1 GPU too.
  collectives     all-gather, reduce-scatter, all-reduce and all-to-all,
                  1 KiB .. 1 GiB, over the first --group-size GPUs (default
                  2), alone. Layout of bench/calibrate_gpu.py's
                  `collectives` (bytes: all-gather output, reduce-scatter
                  input, all-reduce buffer, all-to-all buffer). Unlike
                  calibrate_gpu.py there is no same-size glue copy: the
                  loop carries the collective's input and updates one
                  element of it in place each iteration (so XLA cannot hoist
                  the collective), and one element of the output is summed.
  overlap         for each collective kind and size from 1 MiB, beside each
                  compute kind, in one jitted loop body (the latency hiding
                  scheduler puts the collective's start before the compute
                  and its done after; `overlapped_in_schedule` says whether
                  it did): the per-iteration time of the collective alone,
                  the compute alone, both, and
                    compute_share    = (both - compute) / collective, with
                                       compute ~2x the collective (it covers
                                       it): the share of its rate a kernel
                                       loses beside a collective, the
                                       simulator's collective_sm_share
                                       (GEMMs) / collective_hbm_share
                                       (memory-bound kernels);
                    collective_slowdown = (both - collective) / compute, with
                                       compute ~0.5x the collective: how much
                                       the collective loses beside compute
                                       (0: none; the simulator assumes 0).
  contention      the medians of compute_share by compute kind over sizes
                  >= 16 MiB, and `preset_lines` to paste into a --gpu-spec
                  file / src/sim/sim_preset.inc.

With --table-out FILE it also writes the collective times in the
simulator's table format (`kind group_size bytes time_us`;
analysis/gpu_collective_table.inc; all-to-all rows as comments, the table
has no all-to-all kind yet).

Method: per-iteration time = (t(K2) - t(K1)) / (K2 - K1) of a jitted
fori_loop run K1 and K2 times, median over --repeats (bench/calibrate_gpu.py's
method). XLA_FLAGS are set before JAX starts: latency hiding scheduler on,
XLA's pipelining and double buffering off, command buffers off, the
collective stream at the highest priority (the JAX bridge's options;
--no-priority turns the last off).

With fewer than 2 GPUs it measures compute_alone, writes the file, says
why the rest was skipped and exits 0.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import time

KINDS = ("all-gather", "reduce-scatter", "all-reduce", "all-to-all")


def xla_flags(priority):
  flags = [
      "--xla_gpu_enable_latency_hiding_scheduler=true",
      "--xla_gpu_enable_pipelined_all_gather=false",
      "--xla_gpu_enable_pipelined_reduce_scatter=false",
      "--xla_gpu_enable_pipelined_all_reduce=false",
      "--xla_gpu_enable_while_loop_double_buffering=false",
      "--xla_gpu_enable_command_buffer=",
  ]
  if priority:
    flags.append("--xla_gpu_enable_highest_priority_async_stream=true")
  return " ".join(flags)


def timed(fn, args, repeats):
  import jax
  jax.block_until_ready(fn(*args))
  ts = []
  for _ in range(repeats):
    t0 = time.perf_counter()
    jax.block_until_ready(fn(*args))
    ts.append(time.perf_counter() - t0)
  return statistics.median(ts)


def per_iteration(make, args, k1, k2, repeats):
  """make(k) -> jitted fn running its body k times; seconds per body."""
  t1 = timed(make(k1), args, repeats)
  t2 = timed(make(k2), args, repeats)
  return max((t2 - t1) / (k2 - k1), 0.0)


def loop_counts(seconds_guess):
  """K1, K2 so that the difference is ~20 ms or more (host jitter ~50 us)."""
  k = int(min(max(0.02 / max(seconds_guess, 1e-6), 10), 2000))
  return max(k // 10, 1), k + max(k // 10, 1)


class Bench:
  def __init__(self, jax, jnp, devices, repeats):
    import numpy as np
    from jax.sharding import Mesh, PartitionSpec as P
    try:
      from jax import shard_map
    except ImportError:
      from jax.experimental.shard_map import shard_map
    self.jax, self.jnp, self.P = jax, jnp, P
    self.g = len(devices)
    self.mesh = Mesh(np.array(devices), ("x",))
    self.shard_map = shard_map
    self.repeats = repeats

  def sm(self, f, n_in):
    P = self.P
    specs = tuple(P("x") for _ in range(n_in))
    try:
      return self.shard_map(f, mesh=self.mesh, in_specs=specs,
                            out_specs=P(), check_vma=False)
    except TypeError:
      return self.shard_map(f, mesh=self.mesh, in_specs=specs,
                            out_specs=P(), check_rep=False)

  # --- the loop bodies ----------------------------------------------------
  def collective(self, kind, x):
    jax = self.jax
    if kind == "all-gather":
      return jax.lax.all_gather(x, "x", tiled=True)
    if kind == "reduce-scatter":
      return jax.lax.psum_scatter(x, "x", tiled=True)
    if kind == "all-reduce":
      return jax.lax.psum(x, "x")
    return jax.lax.all_to_all(x, "x", 0, 0, tiled=True)

  def compute(self, kind, c, w, n):
    jnp = self.jnp
    for _ in range(n):
      if kind == "gemm":
        c = jnp.dot(c, w, preferred_element_type=jnp.bfloat16)
      else:
        c = c * jnp.bfloat16(0.999) + jnp.bfloat16(1e-3)
        # One kernel per op: XLA would fuse the elementwise chain into one.
        c = self.jax.lax.optimization_barrier(c)
    return c

  def program(self, coll_kind, comp_kind, n_comp, iters):
    """A jitted loop: per iteration, one collective (if coll_kind) and
    n_comp compute ops (if comp_kind), independent of each other."""
    jax, jnp = self.jax, self.jnp

    def f(x, c, w):
      def body(i, carry):
        x, c, s = carry
        if coll_kind:
          # In place: the collective's input changes every iteration.
          x = x.at[0].set(i.astype(x.dtype))
          y = self.collective(coll_kind, x)
          s = s + y[0].astype(jnp.float32)
        if comp_kind:
          c = self.compute(comp_kind, c, w, n_comp)
        return x, c, s
      x, c, s = jax.lax.fori_loop(0, iters, body, (x, c, jnp.float32(0)))
      return s + c[0, 0].astype(jnp.float32) + x[0].astype(jnp.float32)
    return jax.jit(self.sm(f, 3))

  def inputs(self, coll_bytes, coll_kind, comp_kind, comp_shape):
    jnp = self.jnp
    elems = max(coll_bytes // 2, self.g)
    if coll_kind == "all-gather":
      local = max(elems // self.g, 1)  # output = coll_bytes
    else:
      local = max(elems - elems % self.g, self.g)  # input / buffer
    x = jnp.ones((local * self.g,), jnp.bfloat16)
    m, k = comp_shape
    c = jnp.full((m * self.g, k), 0.01, jnp.bfloat16)
    # The GEMM's weight (unused by the memory-bound kernel: kept tiny).
    wk = k if comp_kind == "gemm" else 1
    w = jnp.full((wk * self.g, wk), 1.0 / wk, jnp.bfloat16)
    return x, c, w

  def time(self, coll_kind, coll_bytes, comp_kind, n_comp, comp_shape,
           guess_s):
    args = self.inputs(coll_bytes, coll_kind or "all-reduce", comp_kind,
                       comp_shape)
    k1, k2 = loop_counts(guess_s)
    return per_iteration(
        lambda k: self.program(coll_kind, comp_kind, n_comp, k), args, k1,
        k2, self.repeats)

  def scheduled_overlap(self, coll_kind, comp_kind, n_comp, comp_shape,
                        coll_bytes):
    """Whether XLA put compute between the collective's start and done."""
    try:
      args = self.inputs(coll_bytes, coll_kind, comp_kind, comp_shape)
      text = self.program(coll_kind, comp_kind, n_comp, 2).lower(
          *args).compile().as_text()
    except Exception as e:  # pylint: disable=broad-except
      return "unknown: %r" % (e,)
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines)
                  if "-start" in l and "=" in l and "start(" in l), None)
    done = next((i for i, l in enumerate(lines)
                 if "-done" in l and "done(" in l), None)
    if start is None or done is None:
      return False
    between = lines[start + 1:done]
    return any(("custom-call" in l or "fusion(" in l) for l in between)


COMPUTE_SHAPES = {"gemm": (4096, 2048), "memory": (8192, 16384)}


def compute_alone(bench, repeats):
  """Per-op time of each compute kind on one GPU (no collective)."""
  out = []
  for kind, shape in COMPUTE_SHAPES.items():
    n = 8
    t = bench.time(None, 0, kind, n, shape, 1e-3) / n
    m, k = shape
    rec = {"kind": kind, "shape": [m, k], "seconds": t}
    if kind == "gemm":
      rec["tflops"] = 2.0 * m * k * k / max(t, 1e-12) / 1e12
    else:
      rec["gb_per_s"] = 2.0 * m * k * 2 / max(t, 1e-12) / 1e9
    out.append(rec)
    print("compute %s %s: %.1f us per op" % (kind, shape, t * 1e6),
          flush=True)
  return out


def main():
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("--out", default="nccl_contention.json")
  ap.add_argument("--table-out", default=None)
  ap.add_argument("--group-size", type=int, default=2)
  ap.add_argument("--repeats", type=int, default=5)
  ap.add_argument("--min-log2", type=int, default=10)  # 1 KiB
  ap.add_argument("--max-log2", type=int, default=30)  # 1 GiB
  ap.add_argument("--no-priority", action="store_true")
  args = ap.parse_args()
  os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
  os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " +
                             xla_flags(not args.no_priority)).strip()
  try:
    import jax  # pylint: disable=g-import-not-at-top
    import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
  except ImportError as e:
    print("nccl_contention.py needs JAX with GPUs (%s)" % e, file=sys.stderr)
    return 2
  devs = [d for d in jax.devices() if d.platform == "gpu"]
  result = {
      "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
      "command": " ".join([os.path.basename(sys.executable)] + sys.argv),
      "jax": jax.__version__,
      "devices": [d.device_kind for d in jax.devices()],
      "host": platform.node(),
      "xla_flags": os.environ["XLA_FLAGS"],
      "method": "per-iteration time = (t(K2)-t(K1))/(K2-K1) of a jitted "
                "fori_loop, median over repeats; collectives without glue "
                "(in-place one-element update of the input, one element "
                "of the output summed)",
  }

  def write():
    with open(args.out, "w") as f:
      json.dump(result, f, indent=1)
    print("wrote", args.out)

  if not devs:
    print("no GPU visible: nothing measured", file=sys.stderr)
    result["skipped"] = "no GPU"
    write()
    return 0
  one = Bench(jax, jnp, devs[:1], args.repeats)
  result["compute_alone"] = compute_alone(one, args.repeats)
  g = args.group_size
  if len(devs) < max(g, 2):
    msg = ("collectives and overlap need %d GPUs; %d visible: only "
           "compute_alone was measured" % (max(g, 2), len(devs)))
    print(msg)
    result["skipped"] = msg
    write()
    return 0
  bench = Bench(jax, jnp, devs[:g], args.repeats)
  per_op = {r["kind"]: r["seconds"] for r in result["compute_alone"]}
  sizes = [1 << s for s in range(args.min_log2, args.max_log2 + 1, 2)]
  coll = {"group_size": g}
  for kind in KINDS:
    coll[kind] = []
    for size in sizes:
      t = bench.time(kind, size, None, 0, COMPUTE_SHAPES["gemm"],
                     max(size / 200e9, 20e-6))
      coll[kind].append({"bytes": size, "seconds": t})
      print("%s %d B: %.1f us (%.1f GB/s algbw)" % (
          kind, size, t * 1e6, size / max(t, 1e-12) / 1e9), flush=True)
  result["collectives"] = coll
  write()  # the alone figures are kept even if the overlap part fails

  overlap = []
  for kind in KINDS:
    for rec in coll[kind]:
      size, t_coll = rec["bytes"], rec["seconds"]
      if size < (1 << 20) or t_coll <= 0:
        continue
      for comp in COMPUTE_SHAPES:
        shape = COMPUTE_SHAPES[comp]
        row = {"collective": kind, "bytes": size, "compute": comp,
               "collective_alone_s": t_coll}
        for label, factor in (("cover", 2.0), ("short", 0.5)):
          n = max(1, int(round(factor * t_coll / per_op[comp])))
          t_comp = bench.time(None, 0, comp, n, shape, n * per_op[comp])
          t_both = bench.time(kind, size, comp, n, shape,
                              max(t_comp, t_coll))
          row[label] = {"compute_ops": n, "compute_alone_s": t_comp,
                        "both_s": t_both}
        cov, short = row["cover"], row["short"]
        row["compute_share"] = (cov["both_s"] - cov["compute_alone_s"]) / t_coll
        row["collective_slowdown"] = (
            (short["both_s"] - t_coll) / max(short["compute_alone_s"], 1e-12))
        row["overlapped_in_schedule"] = bench.scheduled_overlap(
            kind, comp, cov["compute_ops"], shape, size)
        overlap.append(row)
        print("%s %d B beside %s: compute share %.3f, collective slowdown "
              "%.3f, overlapped in schedule: %s" % (
                  kind, size, comp, row["compute_share"],
                  row["collective_slowdown"], row["overlapped_in_schedule"]),
              flush=True)
  result["overlap"] = overlap

  def median_share(comp):
    v = [r["compute_share"] for r in overlap
         if r["compute"] == comp and r["bytes"] >= (16 << 20) and
         r["overlapped_in_schedule"] is True]
    return statistics.median(v) if v else None
  sm, hbm = median_share("gemm"), median_share("memory")
  result["contention"] = {
      "collective_sm_share": sm, "collective_hbm_share": hbm,
      "preset_lines": ["collective_sm_share %.4f" % max(sm, 0.0)
                       if sm is not None else "# collective_sm_share: n/a",
                       "collective_hbm_share %.4f" % max(hbm, 0.0)
                       if hbm is not None else "# collective_hbm_share: n/a"],
  }
  print("\n".join(result["contention"]["preset_lines"]))
  write()
  if args.table_out:
    with open(args.table_out, "w") as f:
      f.write("# kind group_size bytes time_us (bench/nccl_contention.py, "
              "%s)\n" % result["date"])
      for kind in KINDS:
        for rec in coll[kind]:
          f.write("%s%s %d %d %.2f\n" % ("# " if kind == "all-to-all" else "",
                                         kind, g, rec["bytes"],
                                         rec["seconds"] * 1e6))
    print("wrote", args.table_out)
  return 0


if __name__ == "__main__":
  sys.exit(main())
