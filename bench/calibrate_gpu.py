#!/usr/bin/env python3
"""Measures the constants of hloverlap's GPU cost model on the machine it runs on.

Writes one JSON file (default: calibration.json, or --out) with
  gemm:        bf16 GEMM time and TFLOP/s at the transformer shapes of the corpus
               (and one large square GEMM for the peak rate);
  hbm:         device-memory copy bandwidth (read + write bytes / time);
  collectives: all-gather, reduce-scatter and all-reduce time from 1 KiB to
               1 GiB over all visible GPUs (group size = device count), through
               XLA's NCCL runtime, as `hloverlap` models them.

Method. GEMMs and the copy are dispatched N times back to back (JAX
dispatches asynchronously, so the GPU runs them without gaps); time per op is
(t(N2) - t(N1)) / (N2 - N1), median over repeats, which cancels the constant
launch/sync overhead. Collectives run K times inside one jitted `fori_loop`
(per-call dispatch would dominate small sizes), same difference method; they
need glue to feed their output back as the
next input (a slice after all-gather, a concatenate after reduce-scatter);
that glue is a device-memory copy of the same size, ~1/10 of the NVLink
transfer time at large sizes, and is included (stated in the output).

Collective byte size convention (as in XLA's cost tables): all-gather = output
bytes, reduce-scatter = input bytes, all-reduce = buffer bytes.

Usage (2 GPUs):  python3 bench/calibrate_gpu.py --out calibration.json
      (8 GPUs, issue 8: ... --only-collectives --group-sizes 2,4,8)
Needs JAX with GPUs; takes ~2-3 minutes on 2 x H200.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import time


def timed(fn, *args, repeats=5):
  import jax
  out = fn(*args)
  jax.block_until_ready(out)
  ts = []
  for _ in range(repeats):
    t0 = time.perf_counter()
    out = fn(*args)
    jax.block_until_ready(out)
    ts.append(time.perf_counter() - t0)
  return statistics.median(ts)


def per_iteration(make, k1, k2, *args, repeats=5):
  """make(k) -> jitted fn running the op k times; returns seconds per op."""
  t1 = timed(make(k1), *args, repeats=repeats)
  t2 = timed(make(k2), *args, repeats=repeats)
  return max((t2 - t1) / (k2 - k1), 0.0)


def back_to_back(fn, args, n1=10, n2=60, repeats=5):
  """Seconds per call of fn: n calls dispatched back to back (JAX dispatches
  asynchronously, so the GPU runs them without gaps once each call takes
  longer than its host-side dispatch), difference of two counts."""
  import jax

  def run(n):
    ts = []
    for _ in range(repeats):
      jax.block_until_ready(fn(*args))
      t0 = time.perf_counter()
      # One stream executes the calls in order: the last one finishing means
      # all did. Earlier outputs are dropped as we go (1 GiB buffers).
      for _ in range(n):
        out = fn(*args)
      jax.block_until_ready(out)
      ts.append(time.perf_counter() - t0)
    return statistics.median(ts)

  return max((run(n2) - run(n1)) / (n2 - n1), 0.0)


def gemm_rates(jax, jnp):
  shapes = [
      # (m, k, n): the corpus' per-layer GEMMs (batch*seq x d_model x ...).
      (4096, 2048, 6144),
      (4096, 2048, 2048),
      (4096, 2048, 8192),
      (4096, 8192, 2048),
      (2048, 4096, 6144),
      (8192, 8192, 8192),
  ]
  res = []
  f = jax.jit(lambda a, b: a @ b)
  for m, k, n in shapes:
    a = jnp.ones((m, k), jnp.bfloat16) * 0.01
    b = jnp.ones((k, n), jnp.bfloat16) * 0.01
    t = back_to_back(f, (a, b))
    flops = 2.0 * m * k * n
    res.append({"m": m, "k": k, "n": n, "seconds": t,
                "tflops": flops / t / 1e12 if t > 0 else None})
    print(f"gemm {m}x{k}x{n}: {t*1e6:.1f} us, "
          f"{flops / max(t, 1e-12) / 1e12:.0f} TFLOP/s", flush=True)
  return res


def hbm_bandwidth(jax, jnp):
  res = []
  f = jax.jit(lambda x: x * 1.0001)
  for mib in (64, 256, 1024):  # 1 GiB in + 1 GiB out per call
    n = mib * (1 << 20) // 2
    x = jnp.ones((n,), jnp.bfloat16)
    t = back_to_back(f, (x,))
    bw = 2 * n * 2 / t
    res.append({"bytes": n * 2, "seconds": t, "gb_per_s": bw / 1e9})
    print(f"hbm copy {mib} MiB: {bw/1e9:.0f} GB/s", flush=True)
  return res


def collective_times(jax, jnp, group_size=None):
  import numpy as np
  from jax.sharding import Mesh, PartitionSpec as P
  try:
    from jax import shard_map
  except ImportError:
    from jax.experimental.shard_map import shard_map
  devs = jax.devices()[:group_size] if group_size else jax.devices()
  g = len(devs)
  mesh = Mesh(np.array(devs), ("x",))
  sizes = [1 << s for s in range(10, 31, 2)]  # 1 KiB .. 1 GiB
  out = {"group_size": g, "all-gather": [], "reduce-scatter": [],
         "all-reduce": []}

  def sm(f):
    # The loop carry goes from device-varying to replicated (psum) and back;
    # JAX's varying-axes type check would reject that carry, and it is
    # irrelevant to timing.
    try:
      return shard_map(f, mesh=mesh, in_specs=P("x"), out_specs=P("x"),
                       check_vma=False)
    except TypeError:
      return shard_map(f, mesh=mesh, in_specs=P("x"), out_specs=P("x"),
                       check_rep=False)

  for size in sizes:
    # Per-device element counts for each op's size convention (bf16).
    for op in ("all-gather", "reduce-scatter", "all-reduce"):
      elems = size // 2
      if op == "all-gather":
        local = max(elems // g, 1)  # output = size
      else:
        local = max(elems, g)  # input / buffer = size
      x = jnp.ones((local * g,), jnp.bfloat16)

      def make(iters, op=op, local=local):
        def step(c):
          if op == "all-gather":
            full = jax.lax.all_gather(c, "x", tiled=True)
            return full[:local]
          if op == "reduce-scatter":
            part = jax.lax.psum_scatter(c, "x", tiled=True)
            return jnp.concatenate([part] * g) * 0.5
          return jax.lax.psum(c, "x") * 0.5

        def f(x):
          return jax.lax.fori_loop(0, iters, lambda i, c: step(c), x)
        return jax.jit(sm(f))

      # Enough iterations that the difference is milliseconds, far above
      # host timing jitter (~50 us).
      if size <= (1 << 20):
        k1, k2 = 10, 310
      elif size <= (16 << 20):
        k1, k2 = 5, 105
      else:
        k1, k2 = 1, 11
      t = per_iteration(make, k1, k2, x, repeats=7)
      out[op].append({"bytes": size, "seconds": t})
      print(f"{op} {size} B: {t*1e6:.1f} us "
            f"({size / max(t, 1e-12) / 1e9:.1f} GB/s algbw)", flush=True)
  return out


def main():
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("--out", default="calibration.json")
  ap.add_argument("--skip-collectives", action="store_true")
  ap.add_argument("--only-collectives", action="store_true")
  ap.add_argument("--group-sizes", default=None,
                  help="comma-separated collective group sizes (the first N "
                       "devices each), e.g. 2,4,8 on an 8-GPU host; default: "
                       "all visible devices. With several, the output has "
                       "`collectives_by_group` (one entry per size) and "
                       "`collectives` is the largest group.")
  args = ap.parse_args()
  os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
  import jax
  import jax.numpy as jnp
  devs = jax.devices()
  result = {
      "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
      "command": " ".join([os.path.basename(sys.executable)] + sys.argv),
      "jax": jax.__version__,
      "devices": [d.device_kind for d in devs],
      "host": platform.node(),
      "method": "per-op time = (t(N2)-t(N1))/(N2-N1): GEMM and copy "
                "dispatched back to back, collectives in one jitted fori_loop "
                "(including a same-size glue copy)",
  }
  if not args.only_collectives:
    result["gemm"] = gemm_rates(jax, jnp)
    result["hbm"] = hbm_bandwidth(jax, jnp)
  if not args.skip_collectives and len(devs) > 1:
    sizes = ([int(g) for g in args.group_sizes.split(",")]
             if args.group_sizes else [len(devs)])
    bad = [g for g in sizes if g < 2 or g > len(devs)]
    if bad:
      ap.error("--group-sizes %s: this host has %d devices" % (bad, len(devs)))
    by_group = [collective_times(jax, jnp, g) for g in sizes]
    result["collectives"] = by_group[-1]
    if len(by_group) > 1:
      result["collectives_by_group"] = by_group
  with open(args.out, "w") as f:
    json.dump(result, f, indent=1)
  print("wrote", args.out)


if __name__ == "__main__":
  main()
