#!/usr/bin/env python3
"""Real-GPU benchmark of the JAX bridge (python/hloverlap).

For the perf configuration (ANCHORS §1a: 8 layers, d_model 2048, 1 x 1024
tokens per GPU per microbatch, 4 microbatches) and the seed-size
configuration (§1b: 4 x 1024 tokens per GPU per microbatch) it measures, in
one run, median step times (>= 10 timed steps after 2 warm-up steps) of
FSDP written both ways, with shard_map (explicit collectives) and with jit
shardings (GSPMD, prefixed gspmd_):

  xla_off       jax.jit, every XLA overlap feature off (group off)
  xla_seed      jax.jit with the seed's flags: XLA's collective pipelining,
                double buffering, latency hiding scheduler (group seed)
  xla_lhs       jax.jit with the bridge's XLA options but without hloverlap
                (latency hiding scheduler on, XLA's pipelining off; group
                bridge)
  hloverlap     hloverlap.jax.jit (group bridge): shard_map programs through
                JAX's lowering (ANCHORS §4), GSPMD ones through XLA's
                partitioned module (§4b); the bridge picks the route
  compute_only  the same per-GPU work on 1 GPU, no collectives: compiled in
                EVERY group with that group's options -- the bound each
                step of the group is reported against (x bound; ANCHORS §1c:
                the bound depends on the options, 41.6-51.5 ms for perf)
  comm_only     the same all-gathers / reduce-scatters, no compute (group off)

XLA's xla_gpu_enable_pipelined_* flags exist only as XLA_FLAGS in jaxlib
0.11.2 (per-compile overrides answer "No such compile option"), so every
group runs in its own child process with its XLA_FLAGS (GROUP_FLAGS) and
its per-compile options (GROUP_COMPILE_OPTIONS); both are written into every
record and under the table. Results are merged in DIR/results.json and
DIR/table.md.

Correctness: one training step of every 2-GPU variant from the same inputs,
outputs (loss and updated weights) compared bit for bit with jax.jit (XLA
defaults) of the same program, and with xla_lhs (same XLA options as the
bridge, without hloverlap's rewrite).

Usage (device machine, repository root):
  HLOVERLAP_BIN=.device/bridge/hloverlap python3 bench/jax_bridge_bench.py full --out DIR
                           # 2 GPUs: every variant, both configurations
  ... bound --out DIR      # 1 GPU: only the compute-only bound, in every
                           # group and in two more (XLA defaults; the
                           # bridge's options with command buffers on)
  ... --what '{"extra_bridge": [{"name": N, "configs": ["perf"],
               "modes": ["shardmap"], "options": {...}}]}'
                           # more hloverlap.Options variants (docs/BENCHMARKS.md)
  ... probe --out DIR      # quick: small-model bridge checks, both routes
Results: DIR/results.json (one record per variant), DIR/table.md.
"""
import argparse
import json
import os
import re
import sys
import time
import traceback

os.environ.setdefault("XLA_FLAGS", "--xla_gpu_enable_command_buffer=")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

import numpy as np  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

import hloverlap  # noqa: E402
import hloverlap.jax as hjax  # noqa: E402
from hloverlap import xla as X  # noqa: E402

try:
  from jax import shard_map
except ImportError:
  from jax.experimental.shard_map import shard_map

RECORDS = []
OUT = "/tmp"
RESULTS_NAME = "results.json"


def log(rec):
  RECORDS.append(rec)
  print(json.dumps(rec, default=str), flush=True)
  log_update()


# --- the model (as ../shared/experiments/corpus.py) ------------------------
def build(cfg):
  """(fn, jit_kwargs, params, x) of one training step."""
  devs = jax.devices()[: cfg.get("ndev", len(jax.devices()))]
  n = len(devs)
  L, D, H, S, B, M = (cfg["layers"], cfg["d"], cfg["heads"], cfg["seq"],
                      cfg["mb"], cfg["accum"])
  F = 4 * D
  dt = jnp.bfloat16
  mesh = Mesh(np.array(devs), ("x",))
  ks = jax.random.split(jax.random.PRNGKey(0), 6)
  shapes = {"wqkv": (L, D, 3 * D), "wo": (L, D, D), "w1": (L, D, F),
            "w2": (L, F, D)}
  params = {k: (jax.random.normal(ks[i], s, jnp.float32) *
                (1.0 / np.sqrt(s[1]))).astype(dt)
            for i, (k, s) in enumerate(shapes.items())}
  par = cfg["par"]  # fsdp | comm
  wspecs = {k: P(None, "x", None) for k in shapes}
  xspec = P(None, "x", None, None)
  params = {k: jax.device_put(v, NamedSharding(mesh, wspecs[k]))
            for k, v in params.items()}
  x = jax.device_put(
      jax.random.normal(ks[5], (M, B * n, S, D), jnp.float32).astype(dt),
      NamedSharding(mesh, xspec))
  explicit = cfg["mode"] == "shardmap"

  def rms(h):
    hf = h.astype(jnp.float32)
    return (hf * jax.lax.rsqrt(jnp.mean(hf * hf, -1, keepdims=True) + 1e-6)
            ).astype(h.dtype)

  def gather(w):
    if explicit:
      return jax.lax.all_gather(w, "x", axis=0, tiled=True)
    return w

  def layer(h, w):
    if par == "comm":  # communication only: gather weights, touch them
      s = sum(jnp.sum(gather(w[k])[:1, :1]).astype(jnp.float32) for k in w)
      return h + s.astype(h.dtype), None
    wq, wo, w1, w2 = (gather(w[k]) for k in ("wqkv", "wo", "w1", "w2"))
    a_in = rms(h)
    q, k_, v = jnp.split(a_in @ wq, 3, axis=-1)
    sh = lambda t: t.reshape(t.shape[0], t.shape[1], H, t.shape[-1] // H)
    a = jax.nn.dot_product_attention(sh(q), sh(k_), sh(v), is_causal=True)
    h = h + a.reshape(h.shape[:-1] + (-1,)) @ wo
    return h + jax.nn.gelu(rms(h) @ w1) @ w2, None

  # hoist=True (an experiment, not the benchmark's program): the weights
  # are all-gathered once per step, before the accumulation loop, instead
  # of once per layer per microbatch; gradients are still reduce-scattered
  # per layer (custom_vjp), as in the plain program.
  @jax.custom_vjp
  def use_gathered(w_local, w_full):
    return w_full

  def ug_fwd(w_local, w_full):
    return w_full, None

  def ug_bwd(_, g):
    return (jax.lax.psum_scatter(g, "x", scatter_dimension=0, tiled=True),
            jnp.zeros_like(g))
  use_gathered.defvjp(ug_fwd, ug_bwd)

  def layer_hoisted(h, w):
    wl, wf = w
    w = {k: use_gathered(wl[k], wf[k]) for k in wl}
    wq, wo, w1, w2 = (w[k] for k in ("wqkv", "wo", "w1", "w2"))
    a_in = rms(h)
    q, k_, v = jnp.split(a_in @ wq, 3, axis=-1)
    sh = lambda t: t.reshape(t.shape[0], t.shape[1], H, t.shape[-1] // H)
    a = jax.nn.dot_product_attention(sh(q), sh(k_), sh(v), is_causal=True)
    h = h + a.reshape(h.shape[:-1] + (-1,)) @ wo
    return h + jax.nn.gelu(rms(h) @ w1) @ w2, None

  def loss_fn(p, xb, pf=None):
    if pf is not None:
      h, _ = jax.lax.scan(layer_hoisted, xb, (p, pf))
    else:
      # remat=True: each layer's activations are recomputed in the backward
      # pass (jax.checkpoint, saving nothing), as the corpus' _remat case.
      body = jax.checkpoint(layer) if cfg.get("remat") else layer
      h, _ = jax.lax.scan(body, xb, p)
    return jnp.mean(jnp.square(h.astype(jnp.float32)))

  def grads(p, xb, pf=None):
    l, g = jax.value_and_grad(loss_fn)(p, xb, pf)
    if explicit:
      l = jax.lax.pmean(l, "x")
    return l, g

  def train_step(p, xs):
    g0 = jax.tree.map(jnp.zeros_like, p)
    pf = None
    if cfg.get("hoist"):
      pf = {k: jax.lax.all_gather(v, "x", axis=1, tiled=True)
            for k, v in p.items()}

    def body(i, carry):
      l, g = carry
      li, gi = grads(p, xs[i], pf)
      return l + li, jax.tree.map(jnp.add, g, gi)
    l, g = jax.lax.fori_loop(0, M, body, (jnp.float32(0), g0), unroll=False)
    newp = jax.tree.map(lambda a, b: (a.astype(jnp.float32) - 1e-3 *
                                      b.astype(jnp.float32) / M).astype(a.dtype),
                        p, g)
    return l / M, newp

  if explicit:
    fn = shard_map(train_step, mesh=mesh, in_specs=(wspecs, xspec),
                   out_specs=(P(), wspecs))
    jit_kwargs = dict(donate_argnums=(0,))
  else:
    fn = train_step
    ws = {k: NamedSharding(mesh, s) for k, s in wspecs.items()}
    jit_kwargs = dict(in_shardings=(ws, NamedSharding(mesh, xspec)),
                      out_shardings=(None, ws), donate_argnums=(0,))
  return fn, jit_kwargs, params, x


def copy_tree(t):
  return jax.tree.map(lambda a: a.copy(), t)


def time_steps(call, params, x, iters, warm=2):
  p = copy_tree(params)
  for _ in range(warm):
    l, p = call(p, x)
    jax.block_until_ready(p)
  ts = []
  for _ in range(iters):
    t0 = time.perf_counter()
    l, p = call(p, x)
    jax.block_until_ready((l, p))
    ts.append(1e3 * (time.perf_counter() - t0))
  del p
  s = sorted(ts)
  return dict(step_ms_med=round(s[len(s) // 2], 3), step_ms_min=round(s[0], 3),
              steps_ms=[round(t, 2) for t in ts], loss=float(l))


def one_step(call, params, x):
  l, p = call(copy_tree(params), x)
  return np.asarray(l), {k: np.asarray(v) for k, v in p.items()}


def compare(a, b):
  """Bitwise equality and max |difference| of two one_step results."""
  (la, pa), (lb, pb) = a, b
  eq = la.tobytes() == lb.tobytes()
  worst, worst_rel = abs(float(la) - float(lb)), 0.0
  for k in pa:
    x, y = pa[k], pb[k]
    eq = eq and x.tobytes() == y.tobytes()
    d = np.abs(x.astype(np.float32) - y.astype(np.float32))
    worst = max(worst, float(d.max()))
    worst_rel = max(worst_rel, float((d / (np.abs(y.astype(np.float32)) +
                                           1e-30)).max()))
  return dict(bit_identical=bool(eq), max_abs_diff=worst,
              max_rel_diff=worst_rel, loss_a=float(la), loss_b=float(lb))


DROPPED = set()


def jit_compiled(fn, jit_kwargs, params, x, xla_options):
  t0 = time.perf_counter()
  lowered = jax.jit(fn, **jit_kwargs).lower(params, x)
  if not xla_options:
    return lowered.compile(), time.perf_counter() - t0
  dropped = []
  c = X.compile_dropping_unknown(
      lambda o: lowered.compile(compiler_options=o), xla_options, dropped)
  DROPPED.update(dropped)
  return c, time.perf_counter() - t0


def save_text(name, text):
  with open(os.path.join(OUT, name), "w") as f:
    f.write(text)


def compiled_text(c):
  try:
    return c.as_text()
  except Exception:  # noqa
    try:
      return "\n".join(m.to_string() for m in c.executable.hlo_modules())
    except Exception as e:  # noqa
      return "unavailable: %r" % e


def hlo_stats(text):
  return {k: len(re.findall(p, text)) for k, p in {
      "all-gather-start": r" all-gather-start\(", "reduce-scatter": r" reduce-scatter\(",
      "all-reduce-start": r" all-reduce-start\(", "async-start": r" async-start\(",
      "while": r" while\(", "fusion": r" fusion\("}.items()}


def variant(cfg_name, cfg, name, iters, ref=None, ref2=None, save=None,
            kind="jit", xla_options=None, options=None, extra=None,
            keep_out=False, iters_override=None):
  rec = dict(config=cfg_name, variant=name, mode=cfg["mode"], par=cfg["par"],
             ndev=cfg.get("ndev", len(jax.devices())), kind=kind)
  rec.update(extra or {})
  try:
    fn, jk, params, x = build(cfg)
    if kind == "jit":
      call, cs = jit_compiled(fn, jk, params, x, xla_options)
      rec["xla_options"] = "defaults" if not xla_options else xla_options
      text = compiled_text(call) if save else None
    else:
      f = hjax.jit(fn, options=options, fallback=None, **jk)
      t0 = time.perf_counter()
      bc = f.compile_for(params, x)
      cs = time.perf_counter() - t0
      call = bc
      rec["remarks"] = bc.remark_counts()
      rec.update(route=bc.route, stage=bc.stage, timings=bc.timings,
                 aliases=bc.aliases)
      rec["hloverlap_s"] = round(bc.opt_result.seconds, 3) if bc.opt_result \
          else None
      plan = getattr(bc, "plan", None)
      if plan is not None:  # the planner (the default): its table, and
        # predicted beside measured below (the simulator's error)
        rec["plan"] = plan.as_dict()
        rec["plan_summary"] = plan.summary_line()
        chosen = plan.row(plan.chosen)
        rec["predicted_ms"] = chosen.predicted_ms if chosen else None
      rec["route_fixes"] = bc.fixes
      rec["dropped_xla_options"] = bc.dropped_xla_options
      rec["use_shardy"] = bc.use_shardy
      rec["hlo_ops_before"] = {k: v for k, v in hloverlap.text.opcode_counts(
          bc.hlo_before).items() if k in ("all-gather", "reduce-scatter",
                                          "all-reduce", "while")}
      rec["hlo_ops_after"] = {k: v for k, v in hloverlap.text.opcode_counts(
          bc.hlo_after).items() if k in ("all-gather", "reduce-scatter",
                                         "all-reduce", "while")}
      if save:
        save_text(save + ".hloverlap_in.hlo", bc.hlo_before)
        save_text(save + ".hloverlap_out.hlo", bc.hlo_after)
        with open(os.path.join(OUT, save + ".remarks.json"), "w") as fh:
          for r in bc.remarks:
            fh.write(json.dumps(r) + "\n")
      text = None
      if save:
        try:
          text = "\n".join(m.to_string() for m in bc.executable.hlo_modules())
        except Exception as e:  # noqa
          text = "unavailable: %r" % e
    rec["compile_s"] = round(cs, 2)
    if text:
      save_text(save + ".xla_optimized.hlo", text)
      rec["xla_hlo_stats"] = hlo_stats(text)
    if ref is not None or ref2 is not None or keep_out:
      out = one_step(call, params, x)
      if keep_out:
        rec["_out"] = out
      if kind != "jit":
        rec["sharding_source"] = call.sharding_source
      if ref is not None:
        rec["vs_jit_default"] = compare(out, ref)
      if ref2 is not None:
        rec["vs_xla_lhs"] = compare(out, ref2)
    if iters_override != 0:
      rec.update(time_steps(call, params, x, iters))
    del call
  except Exception as e:  # noqa
    rec["error"] = repr(e)[:1500]
    rec["traceback"] = traceback.format_exc()[-3000:]
  out = rec.pop("_out", None)
  log(rec)
  if out is not None:
    rec["_out"] = out
  return rec


def reference(cfg, xla_options=None):
  fn, jk, params, x = build(cfg)
  c, _ = jit_compiled(fn, jk, params, x, xla_options)
  out = one_step(c, params, x)
  del c
  return out


PERF = dict(layers=8, d=2048, heads=16, seq=1024, mb=1, accum=4,
            mode="shardmap", par="fsdp")
SEED = dict(PERF, mb=4)
SMALL = dict(layers=4, d=256, heads=4, seq=64, mb=2, accum=4,
             mode="shardmap", par="fsdp")


# --- variant groups: one child process per XLA_FLAGS setting ---------------
# XLA's collective pipelining (xla_gpu_enable_pipelined_*) cannot be set per
# compile in jaxlib 0.11.2 ("No such compile option"), so the groups that
# need it on or off run in their own process with XLA_FLAGS. Every group
# also compiles the compute-only step (the same per-GPU work on one GPU, no
# collectives) with exactly its own options, process flags and per-compile
# options alike: that is the bound its step times are measured against
# (ANCHORS §1c).
CB = ["--xla_gpu_enable_command_buffer="]
SEED_FLAGS = CB + [  # the seed's flags that XLA 0.11.2 accepts
    "--xla_gpu_enable_triton_gemm=false",
    "--xla_gpu_enable_latency_hiding_scheduler=true",
    "--xla_gpu_enable_all_gather_combine_by_dim=false",
    "--xla_gpu_enable_reduce_scatter_combine_by_dim=false",
    "--xla_gpu_enable_pipelined_all_gather=true",
    "--xla_gpu_enable_pipelined_reduce_scatter=true",
    "--xla_gpu_enable_pipelined_all_reduce=true",
    "--xla_gpu_enable_while_loop_double_buffering=true",
    "--xla_gpu_enable_highest_priority_async_stream=true",
    "--xla_gpu_disable_async_collectives=collectivebroadcast,alltoall,collectivepermute"]
OFF_FLAGS = CB + [
    "--xla_gpu_enable_latency_hiding_scheduler=false",
    "--xla_gpu_enable_pipelined_all_gather=false",
    "--xla_gpu_enable_pipelined_reduce_scatter=false",
    "--xla_gpu_enable_pipelined_all_reduce=false",
    "--xla_gpu_enable_while_loop_double_buffering=false"]
BRIDGE_FLAGS = CB + [  # XLA's pipelining off for the whole process
    "--xla_gpu_enable_pipelined_all_gather=false",
    "--xla_gpu_enable_pipelined_reduce_scatter=false",
    "--xla_gpu_enable_pipelined_all_reduce=false",
    "--xla_gpu_enable_while_loop_double_buffering=false"]
GROUP_FLAGS = {"off": OFF_FLAGS, "seed": SEED_FLAGS, "bridge": BRIDGE_FLAGS,
               "default": [], "bridge_cb_on": BRIDGE_FLAGS[1:]}
# The per-compile options of each group's jax.jit steps (the bridge group's
# hloverlap steps use the same: hloverlap.xla.BRIDGE_XLA_OPTIONS).
GROUP_COMPILE_OPTIONS = {"off": None, "seed": None,
                         "bridge": X.BRIDGE_XLA_OPTIONS, "default": None,
                         "bridge_cb_on": X.BRIDGE_XLA_OPTIONS}
GROUPS_FULL = ("bridge", "seed", "off")
GROUPS_BOUND = ("off", "default", "seed", "bridge", "bridge_cb_on")
CONFIGS = {"perf": PERF, "seed": SEED, "small": SMALL}
SCRATCH = "/tmp/jbb"


def group_options(group):
  """What a group's steps are compiled with, stated in every record."""
  return dict(xla_flags=" ".join(GROUP_FLAGS[group]) or "(none)",
              per_compile=GROUP_COMPILE_OPTIONS[group] or "(none)")


def digest(out, path):
  """sha1 per leaf (bitwise identity across processes) + a 1M-element sample
  of every leaf as float32 (differences across processes)."""
  import hashlib
  l, p = out
  rec = {"loss": float(l), "sha1": {k: hashlib.sha1(v.tobytes()).hexdigest()
                                    for k, v in p.items()}}
  np.savez(path, loss=np.float32(l), **{
      k: v.reshape(-1)[: 1 << 20].astype(np.float32) for k, v in p.items()})
  return rec


def child_group(cfg_name, group, iters, opts, what):
  base = CONFIGS[cfg_name]
  sm = dict(base, mode="shardmap")
  gs = dict(base, mode="gspmd")
  perf = cfg_name == "perf"
  copts = GROUP_COMPILE_OPTIONS[group]
  os.makedirs(SCRATCH, exist_ok=True)

  def run(name, cfg, **kw):
    rec = variant(cfg_name, cfg, name, iters, ref=kw.pop("ref", None),
                  ref2=kw.pop("ref2", None), keep_out=cfg.get("ndev") != 1,
                  extra=dict(kw.pop("extra", {}), group=group,
                             options=group_options(group)), **kw)
    out = rec.pop("_out", None)
    if out is not None:
      RECORDS[-1]["digest"] = digest(out, os.path.join(
          SCRATCH, "%s.%s.npz" % (cfg_name, name)))
      log_update()
    return rec

  # The bound: the same per-GPU work on one GPU, the group's options.
  run("compute_only", dict(gs, ndev=1), xla_options=copts)
  if what.get("bound_only"):
    return
  if group == "off":
    run("xla_off", sm, xla_options=copts)
    run("comm_only", dict(sm, par="comm"), xla_options=copts)
    run("gspmd_xla_off", gs, xla_options=copts)
  elif group == "seed":
    run("xla_seed", sm, save=cfg_name + ".xla_seed", xla_options=copts)
    run("gspmd_xla_seed", gs, xla_options=copts)
    if perf:
      run("hoisted_program_xla_seed", dict(sm, hoist=True), xla_options=copts)
  elif group == "bridge":
    for mode, cfg in (("shardmap", sm), ("gspmd", gs)):
      pre = "" if mode == "shardmap" else "gspmd_"
      ref = reference(cfg)
      ref_lhs = reference(cfg, copts)
      RECORDS.append(dict(config=cfg_name, variant=pre + "jit_default",
                          mode=mode, digest=digest(ref, os.path.join(
                              SCRATCH, "%s.%sjit_default.npz" % (
                                  cfg_name, pre)))))
      log_update()
      run(pre + "xla_lhs", cfg, xla_options=copts, ref=ref)
      run(pre + "hloverlap", cfg, save=cfg_name + "." + pre + "hloverlap",
          kind="bridge", options=opts, ref=ref, ref2=ref_lhs)
      for extra in what.get("extra_bridge", []):
        if cfg_name not in extra.get("configs", ["perf", "seed"]) or \
            mode not in extra.get("modes", ["shardmap", "gspmd"]):
          continue
        run(pre + "hloverlap_" + extra["name"], cfg, kind="bridge",
            options=opts.replace(**extra["options"]), ref=ref, ref2=ref_lhs)
    if perf and what.get("autotune0", True):
      # numerics: the same pair with GEMM autotuning off (default algorithms)
      at0 = dict(copts, xla_gpu_autotune_level=0)
      ref_at0 = reference(sm, at0)
      run("hloverlap_autotune0", sm, kind="bridge", iters_override=0,
          options=opts.replace(xla_options={"xla_gpu_autotune_level": 0}),
          ref=ref_at0, extra={"note": "vs_jit_default here: jax.jit with "
                              "the bridge's XLA options + autotune level 0"})


def log_update():
  with open(os.path.join(OUT, RESULTS_NAME), "w") as f:
    json.dump([{k: v for k, v in r.items() if k != "_out"} for r in RECORDS],
              f, indent=1, default=str)


def parent(cfg_names, iters, args, groups=GROUPS_FULL):
  import subprocess
  for cfg_name in cfg_names:
    for group in groups:
      env = dict(os.environ, XLA_FLAGS=" ".join(GROUP_FLAGS[group]))
      what = dict(args.what_json, bound_only=args.what == "bound")
      cmd = [sys.executable, __file__, "child", "--cfg", cfg_name, "--group",
             group, "--iters", str(iters), "--out", OUT,
             "--what", json.dumps(what)]
      for l in args.loop:
        cmd += ["--loop", l]
      if args.memory_budget:
        cmd += ["--memory-budget", args.memory_budget]
      t0 = time.time()
      try:
        r = subprocess.run(cmd, env=env, capture_output=True, text=True,
                           timeout=args.child_timeout)
        rc, tail = r.returncode, r.stderr[-1500:] if r.returncode else ""
      except subprocess.TimeoutExpired as e:
        rc, tail = "timeout", str(e.stderr or "")[-1500:]
      recs = []
      p = os.path.join(OUT, "child.%s.%s.json" % (cfg_name, group))
      if os.path.exists(p):
        recs = json.load(open(p))
      RECORDS.extend(recs)
      log(dict(config=cfg_name, variant="_group_" + group, rc=rc,
               wall_s=round(time.time() - t0, 1),
               xla_flags=env["XLA_FLAGS"], stderr_tail=tail))
    cross_compare(cfg_name)
  attach_bounds()
  table()


def cross_compare(cfg_name):
  """Every 2-GPU variant's one-step outputs vs jax.jit with XLA's defaults
  of the same program (shard_map or GSPMD), bitwise and by sampled
  differences, across processes."""
  for mode, pre in (("shardmap", ""), ("gspmd", "gspmd_")):
    ref_p = os.path.join(SCRATCH, "%s.%sjit_default.npz" % (cfg_name, pre))
    refd = [r for r in RECORDS if r.get("config") == cfg_name and
            r.get("variant") == pre + "jit_default" and "digest" in r]
    if not os.path.exists(ref_p) or not refd:
      continue
    ref = np.load(ref_p)
    rsha = refd[-1]["digest"]["sha1"]
    for r in RECORDS:
      if r.get("config") != cfg_name or "digest" not in r or \
          r.get("variant", "").endswith("jit_default") or \
          r.get("ndev") == 1 or r.get("par") == "comm" or \
          r.get("mode") != mode:
        continue
      p = os.path.join(SCRATCH, "%s.%s.npz" % (cfg_name, r["variant"]))
      if not os.path.exists(p):
        continue
      d = np.load(p)
      same = r["digest"]["sha1"] == rsha
      diffs = {k: float(np.max(np.abs(d[k] - ref[k]))) for k in ref.files
               if k in d.files}
      r["vs_jit_default_cross"] = dict(
          bit_identical=same, sampled_max_abs_diff=max(diffs.values()),
          loss=float(d["loss"]), ref_loss=float(ref["loss"]))
  log_update()


def attach_bounds():
  """bound_ms / x_bound: each step against the compute-only step of its
  own config compiled with its own group's options."""
  bounds = {(r["config"], r.get("group")): r["step_ms_med"] for r in RECORDS
            if r.get("variant") == "compute_only" and "step_ms_med" in r}
  for r in RECORDS:
    b = bounds.get((r.get("config"), r.get("group")))
    if b and "step_ms_med" in r:
      r["bound_ms"] = b
      r["x_bound"] = round(r["step_ms_med"] / b, 3)
  log_update()


def table():
  rows = [r for r in RECORDS if "step_ms_med" in r]
  lines = ["| config | variant | sharding | XLA options (group) | step ms "
           "(median) | compute-only ms, same options | x bound | "
           "bit-identical to jax.jit |", "|---|---|---|---|---|---|---|---|"]
  for r in rows:
    c = r.get("vs_jit_default_cross") or r.get("vs_jit_default") or {}
    lines.append("| %s | %s | %s | %s | %.1f | %s | %s | %s |" % (
        r["config"], r["variant"], r.get("mode"), r.get("group"),
        r["step_ms_med"], r.get("bound_ms", ""), r.get("x_bound", ""),
        c.get("bit_identical", "")))
  lines += ["", "Groups (the options of both sides of every x bound):"]
  for g in GROUP_FLAGS:
    o = group_options(g)
    lines.append("- %s: XLA_FLAGS `%s`; per-compile: %s" % (
        g, o["xla_flags"], "none" if isinstance(o["per_compile"], str) else
        ", ".join("%s=%s" % kv for kv in o["per_compile"].items())))
  with open(os.path.join(OUT, "table.md"), "w") as f:
    f.write("\n".join(lines) + "\n")
  print("\n".join(lines))


def probe(opts):
  """Quick: small-model shard_map and GSPMD steps through the bridge,
  compared with jax.jit (in-process XLA pipelining numbers are not valid:
  see the module comment)."""
  log(dict(variant="_env", jax=jax.__version__,
           devices=[str(d) for d in jax.devices()],
           xla_flags=os.environ.get("XLA_FLAGS"),
           shardy=getattr(jax.config, "jax_use_shardy_partitioner", None),
           hloverlap_bin=hloverlap.find_binary()))
  for mode in ("shardmap", "gspmd"):
    cfg = dict(SMALL, mode=mode)
    ref = reference(cfg)
    variant("small", cfg, "hloverlap_" + mode, 4, ref, kind="bridge",
            options=opts)
    variant("small", cfg, "route_only_" + mode, 4, ref, kind="bridge",
            options=opts.replace(preset=None))


def main():
  global OUT
  ap = argparse.ArgumentParser()
  ap.add_argument("what", choices=["probe", "full", "perf", "seed", "bound",
                                   "child"])
  ap.add_argument("--out", default=os.environ.get("OUT", "/tmp"))
  ap.add_argument("--iters", type=int, default=10)
  ap.add_argument("--cfg", default=None)
  ap.add_argument("--group", default=None)
  ap.add_argument("--what", dest="what_json", type=json.loads, default={})
  ap.add_argument("--child-timeout", type=int, default=300)
  ap.add_argument("--loop", action="append", default=[],
                  help="hloverlap --loop rule (repeatable)")
  ap.add_argument("--memory-budget", default=None)
  args = ap.parse_args()
  OUT = args.out
  os.makedirs(OUT, exist_ok=True)
  opts = hloverlap.Options(loops=args.loop, memory_budget=args.memory_budget)
  t0 = time.time()
  if args.what == "probe":
    probe(opts)
  elif args.what == "child":
    global RESULTS_NAME
    RESULTS_NAME = "child.%s.%s.json" % (args.cfg, args.group)
    child_group(args.cfg, args.group, args.iters, opts, args.what_json)
    return
  else:
    log(dict(variant="_env", jax=jax.__version__,
             devices=[str(d) for d in jax.devices()], loops=args.loop,
             hloverlap_bin=hloverlap.find_binary()))
    cfgs = {"full": ["perf", "seed"], "perf": ["perf"], "seed": ["seed"],
            "bound": ["perf", "seed"]}
    parent(cfgs[args.what], args.iters, args,
           GROUPS_BOUND if args.what == "bound" else GROUPS_FULL)
  log(dict(variant="_done", wall_s=round(time.time() - t0, 1),
           xla_options_unknown_to_this_xla=sorted(DROPPED)))


if __name__ == "__main__":
  main()
