#!/usr/bin/env python3
"""The bridge under jax.distributed: two processes x two CPU devices, one
command (README "Use from JAX", multi-host).

  HLOVERLAP_BIN=PATH PYTHONPATH=python python3 bench/multihost_check.py

Starts two processes on this machine (JAX_PLATFORMS=cpu,
--xla_force_host_platform_device_count=2, gloo CPU collectives, the
coordinator on 127.0.0.1). Each calls jax.distributed.initialize, builds the
same FSDP training step (gradient accumulation fori_loop around a scanned
model, jit shardings) over the 4 global devices, runs it with jax.jit and
with hloverlap.jax.jit (fallback=None), and compares its addressable shards
of every output bit for bit. Exit status 0 when both processes report every
shard identical; each process's lines are printed with its id.
"""
import argparse
import os
import socket
import subprocess
import sys


def child(pid, nproc, port, local):
  import numpy as np
  import jax
  jax.config.update("jax_cpu_collectives_implementation", "gloo")
  jax.distributed.initialize(coordinator_address="127.0.0.1:%d" % port,
                             num_processes=nproc, process_id=pid)
  import jax.numpy as jnp
  from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
  import hloverlap
  import hloverlap.jax as hjax
  devs = jax.devices()
  assert len(devs) == nproc * local, devs
  mesh = Mesh(np.array(devs), ("x",))
  L, D, S, B, M = 2, 128, 16, 2 * len(devs), 2
  wsh = NamedSharding(mesh, P(None, "x", None))
  xsh = NamedSharding(mesh, P(None, "x", None, None))
  rng = np.random.default_rng(0)  # the same global values in every process
  host = {"w1": rng.standard_normal((L, D, 4 * D), np.float32) / np.sqrt(D),
          "w2": rng.standard_normal((L, 4 * D, D), np.float32) / np.sqrt(D)}
  xs_host = rng.standard_normal((M, B, S, D), np.float32)

  def put(a, sh):
    a = a.astype(jnp.bfloat16)
    return jax.make_array_from_callback(a.shape, sh, lambda idx: a[idx])

  def layer(h, w):
    return h + jax.nn.gelu(h @ w["w1"]) @ w["w2"], None

  def loss_fn(p, xb):
    h, _ = jax.lax.scan(layer, xb, p)
    return jnp.mean(jnp.square(h.astype(jnp.float32)))

  def train_step(p, xs):
    def micro(i, carry):
      l, g = carry
      li, gi = jax.value_and_grad(loss_fn)(p, xs[i])
      return l + li, jax.tree.map(jnp.add, g, gi)
    l, g = jax.lax.fori_loop(0, xs.shape[0], micro,
                             (jnp.float32(0), jax.tree.map(jnp.zeros_like, p)))
    return l, jax.tree.map(lambda a, b: (a.astype(jnp.float32) - 1e-3 * b
                                         ).astype(a.dtype), p, g)

  jk = dict(in_shardings=({k: wsh for k in host}, xsh),
            out_shardings=(None, {k: wsh for k in host}))
  params = {k: put(v, wsh) for k, v in host.items()}
  xs = put(xs_host, xsh)
  ref = jax.jit(train_step, **jk)(params, xs)
  f = hjax.jit(train_step, fallback=None, **jk)
  out = f(params, xs)
  shards = differ = 0
  for a, b in zip(jax.tree.leaves(out), jax.tree.leaves(ref)):
    for sa, sb in zip(a.addressable_shards, b.addressable_shards):
      shards += 1
      if not np.array_equal(np.asarray(sa.data), np.asarray(sb.data)):
        differ += 1
  print("process %d: route %s, %d addressable shards, %d differ from "
        "jax.jit" % (pid, getattr(f.last, "route", "?"), shards, differ),
        flush=True)
  jax.distributed.shutdown()
  return 0 if differ == 0 and shards > 0 else 1


def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("--processes", type=int, default=2)
  ap.add_argument("--local-devices", type=int, default=2)
  ap.add_argument("--timeout", type=int, default=600)
  ap.add_argument("--child", type=int, default=-1, help=argparse.SUPPRESS)
  ap.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
  args = ap.parse_args()
  if args.child >= 0:
    return child(args.child, args.processes, args.port, args.local_devices)
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
  env = dict(os.environ, JAX_PLATFORMS="cpu",
             XLA_FLAGS=(os.environ.get("XLA_FLAGS", "") +
                        " --xla_force_host_platform_device_count=%d" %
                        args.local_devices).strip())
  procs = [subprocess.Popen(
      [sys.executable, os.path.abspath(__file__), "--child", str(i),
       "--processes", str(args.processes), "--local-devices",
       str(args.local_devices), "--port", str(port)], env=env)
           for i in range(args.processes)]
  codes = []
  for p in procs:
    try:
      codes.append(p.wait(timeout=args.timeout))
    except subprocess.TimeoutExpired:
      p.kill()
      codes.append(124)
  ok = all(c == 0 for c in codes)
  print("multi-host check: %s (exit codes %s)" % ("OK" if ok else "FAILED",
                                                  codes))
  return 0 if ok else 1


if __name__ == "__main__":
  sys.exit(main())
