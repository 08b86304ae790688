#!/usr/bin/env python3
"""End-to-end check of the JAX bridge (python/hloverlap) against jax.jit.

One command on the GPU machine (JAX 0.11.2; no GPU is needed for part 1):

  HLOVERLAP_BIN=PATH python3 bench/bridge_device_check.py --out DIR

  1. cpu: on the CPU backend with 2 and 4 host devices (one child process
     each: JAX_PLATFORMS=cpu, XLA_FLAGS=--xla_force_host_platform_device_count=N),
     training steps with gradient accumulation (an outer fori_loop, not
     unrolled) over a scanned transformer, sharded with jit shardings
     (GSPMD): FSDP, FSDP with jax.checkpoint, data parallel, tensor
     parallel; and FSDP written with shard_map (the other route). For each:
       - jax.jit and hloverlap.jax.jit (fallback=None) compile times;
       - one step from the same inputs, compared leaf by leaf: bit-identical,
         else elements that differ and the largest distance in ulps of the
         leaf's dtype;
       - the route alone (hloverlap with no passes) against jax.jit, and, if
         the default preset differs, each of its passes alone (which
         rewrite changes XLA's rounding);
       - `hloverlap verify` of hloverlap's input and output modules (the
         reference interpreter, N devices): bit-identical or not;
       - caller-side behaviour as jax.jit: output shardings, donated input
         consumed or not, no recompile for new arrays of the same shapes,
         a compile for other shapes.
  2. mock: through JAX's mock GPU client (one GPU, N mocked processes), the
     GSPMD FSDP step compiled by jax.jit and by the bridge for 2, 4 and 8
     devices (compile only: a mocked program cannot run).

Results: DIR/bridge_device_check.json (every record) and
DIR/bridge_device_check.md (the tables). `--only cpu|mock`, `--devices`.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))

SMALL = dict(layers=4, d=256, heads=4, seq=64, mb=2, accum=4)
PROGRAMS = {
    "fsdp": dict(par="fsdp", mode="gspmd"),
    "fsdp_remat": dict(par="fsdp", mode="gspmd", remat=True),
    "dp": dict(par="dp", mode="gspmd"),
    "tp": dict(par="tp", mode="gspmd"),
    "shardmap_fsdp": dict(par="fsdp", mode="shardmap"),
}
# hloverlap pipelines tried one by one when the default preset's result
# is not bit-identical to jax.jit.
DECOMPOSE = {
    "cleanup": dict(preset="cleanup"),
    "hoist": dict(preset=None, passes="inline,tuple-simplify,dce,"
                  "collective-hoist,tuple-simplify,dce"),
    "pipeliner": dict(preset="pipeline"),
}


# --- the model -------------------------------------------------------------
def build(cfg, devices=None, abstract=False):
  """(fn, jit_kwargs, params, xs, make_xs) of one training step."""
  import numpy as np
  import jax
  import jax.numpy as jnp
  from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
  try:
    from jax import shard_map
  except ImportError:
    from jax.experimental.shard_map import shard_map
  devs = devices or jax.devices()
  n = len(devs)
  L, D, H, S, B = cfg["layers"], cfg["d"], cfg["heads"], cfg["seq"], cfg["mb"]
  F = 4 * D
  dt = jnp.bfloat16
  mesh = Mesh(np.array(devs), ("x",))
  par = cfg["par"]
  shapes = {"wqkv": (L, D, 3 * D), "wo": (L, D, D), "w1": (L, D, F),
            "w2": (L, F, D)}
  if par == "tp":
    wspecs = {"wqkv": P(None, None, "x"), "wo": P(None, "x", None),
              "w1": P(None, None, "x"), "w2": P(None, "x", None)}
    xspec = P(None, None, None, None)
    batch = B
  else:
    w = P(None, "x", None) if par == "fsdp" else P(None, None, None)
    wspecs = {k: w for k in shapes}
    xspec = P(None, "x", None, None)
    batch = B * n
  wsh = {k: NamedSharding(mesh, s) for k, s in wspecs.items()}
  xsh = NamedSharding(mesh, xspec)
  explicit = cfg["mode"] == "shardmap"

  def put(v, s):
    if abstract:
      return jax.ShapeDtypeStruct(v.shape, v.dtype, sharding=s)
    return jax.device_put(v, s)

  ks = jax.random.split(jax.random.PRNGKey(cfg.get("seed", 0)), 6)
  if abstract:
    params = {k: put(jax.ShapeDtypeStruct(s, dt), wsh[k])
              for k, s in shapes.items()}
  else:
    params = {k: put((jax.random.normal(ks[i], s, jnp.float32) *
                      (1.0 / np.sqrt(s[1]))).astype(dt), wsh[k])
              for i, (k, s) in enumerate(shapes.items())}

  def make_xs(accum, seed):
    shape = (accum, batch, S, D)
    if abstract:
      return put(jax.ShapeDtypeStruct(shape, dt), xsh)
    return put(jax.random.normal(jax.random.PRNGKey(seed), shape,
                                 jnp.float32).astype(dt), xsh)

  def rms(h):
    hf = h.astype(jnp.float32)
    return (hf * jax.lax.rsqrt(jnp.mean(hf * hf, -1, keepdims=True) + 1e-6)
            ).astype(h.dtype)

  def layer(h, w):
    def g(a):
      if explicit and par == "fsdp":
        return jax.lax.all_gather(a, "x", axis=0, tiled=True)
      return a
    wq, wo, w1, w2 = (g(w[k]) for k in ("wqkv", "wo", "w1", "w2"))
    q, k_, v = jnp.split(rms(h) @ wq, 3, axis=-1)
    sh = lambda t: t.reshape(t.shape[0], t.shape[1], H, t.shape[-1] // H)
    a = jax.nn.dot_product_attention(sh(q), sh(k_), sh(v), is_causal=True)
    h = h + a.reshape(h.shape[:-1] + (-1,)) @ wo
    return h + jax.nn.gelu(rms(h) @ w1) @ w2, None

  def loss_fn(p, xb):
    body = jax.checkpoint(layer) if cfg.get("remat") else layer
    h, _ = jax.lax.scan(body, xb, p)
    return jnp.mean(jnp.square(h.astype(jnp.float32)))

  def train_step(p, xs):
    def micro(i, carry):
      l, g = carry
      li, gi = jax.value_and_grad(loss_fn)(p, xs[i])
      if explicit:
        li = jax.lax.pmean(li, "x")
      return l + li, jax.tree.map(jnp.add, g, gi)
    m = xs.shape[0]
    l, g = jax.lax.fori_loop(0, m, micro, (jnp.float32(0),
                                           jax.tree.map(jnp.zeros_like, p)),
                             unroll=False)
    newp = jax.tree.map(lambda a, b: (a.astype(jnp.float32) - 1e-3 *
                                      b.astype(jnp.float32) / m).astype(a.dtype),
                        p, g)
    return l / m, newp

  if explicit:
    fn = shard_map(train_step, mesh=mesh, in_specs=(wspecs, xspec),
                   out_specs=(P(), wspecs))
    jk = dict(donate_argnums=(0,))
  else:
    fn = train_step
    jk = dict(in_shardings=(wsh, xsh), out_shardings=(None, wsh),
              donate_argnums=(0,))
  return fn, jk, params, make_xs(cfg["accum"], 1), make_xs


# --- comparing results -----------------------------------------------------
def _ordered(a):
  """Integers whose differences are distances in ulps (sign-magnitude)."""
  import numpy as np
  bits = {2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]
  u = a.view(bits).astype(np.int64)
  sign = 1 << (8 * a.dtype.itemsize - 1)
  return np.where(u >= sign, -(u - sign), u)


def compare(out, ref):
  """Leaf-by-leaf comparison of two pytrees of arrays."""
  import numpy as np
  import jax
  la = [np.asarray(x) for x in jax.tree.leaves(out)]
  lb = [np.asarray(x) for x in jax.tree.leaves(ref)]
  leaves = []
  for i, (a, b) in enumerate(zip(la, lb)):
    same = a.shape == b.shape and a.dtype == b.dtype and \
        a.tobytes() == b.tobytes()
    rec = dict(leaf=i, dtype=str(a.dtype), size=int(a.size),
               bit_identical=bool(same))
    if not same and a.shape == b.shape:
      ua, ub = _ordered(np.ascontiguousarray(a)), _ordered(
          np.ascontiguousarray(b))
      d = np.abs(ua - ub)
      rec.update(n_diff=int((d != 0).sum()), max_ulp=int(d.max()),
                 max_abs=float(np.max(np.abs(a.astype(np.float64) -
                                             b.astype(np.float64)))))
    leaves.append(rec)
  return dict(bit_identical=all(r["bit_identical"] for r in leaves),
              max_ulp=max([r.get("max_ulp", 0) for r in leaves] or [0]),
              leaves=leaves,
              loss=[float(la[0]), float(lb[0])] if la and la[0].size == 1
              else None)


def copy_tree(t):
  import jax
  return jax.tree.map(lambda a: a.copy(), t)


def module_dir(keep):
  """Where the bridge kept the modules it ran: `keep` for a fixed preset;
  under the default `plan` preset, the chosen candidate's folder
  (cand-<name>, named as bridge.json's plan.chosen)."""
  if os.path.exists(os.path.join(keep, "before.hlo")):
    return keep
  try:
    with open(os.path.join(keep, "bridge.json")) as f:
      chosen = json.load(f)["plan"]["chosen"]
  except (OSError, KeyError, TypeError, ValueError):
    return keep
  return os.path.join(keep, "cand-" + re.sub(r"[^\w.-]+", "_", chosen))


def run_verify(binary, a, b, n, timeout=300):
  t0 = time.time()
  try:
    r = subprocess.run([binary, "verify", a, b, "--devices=%d" % n],
                       capture_output=True, text=True, timeout=timeout)
    out = (r.stdout + r.stderr).strip().splitlines()
    return dict(rc=r.returncode, bit_identical=r.returncode == 0,
                seconds=round(time.time() - t0, 1), tail=out[-3:])
  except subprocess.TimeoutExpired:
    return dict(rc="timeout", seconds=timeout)


def _hlo_counts(text):
  import re
  return {k: len(re.findall(p, text)) for k, p in {
      "all-gather-start": r" all-gather-start\(",
      "all-reduce-start": r" all-reduce-start\(",
      "reduce-scatter": r" reduce-scatter\(",
      "async-start": r" async-start\(", "fusion": r" fusion\(",
      "while": r" while\("}.items()}


def _optimized_text(bc):
  try:
    return "\n".join(m.to_string() for m in bc.executable.hlo_modules())
  except Exception as e:  # noqa
    return "unavailable: %r" % e


# --- part 1: CPU backend ---------------------------------------------------
def cpu_child(out_dir, programs, log):
  import jax
  import hloverlap
  import hloverlap.jax as hjax
  n = len(jax.devices())
  binary = hloverlap.find_binary()
  for name in programs:
    cfg = dict(SMALL, **PROGRAMS[name])
    rec = dict(part="cpu", program=name, devices=n, cfg=cfg)
    keep = os.path.join(out_dir, "cpu%d_%s" % (n, name))
    try:
      fn, jk, params, xs, make_xs = build(cfg)
      t0 = time.perf_counter()
      ref_c = jax.jit(fn, **jk).lower(params, xs).compile()
      rec["jit_compile_s"] = round(time.perf_counter() - t0, 3)
      p = copy_tree(params)
      ref = ref_c(p, xs)
      jax.block_until_ready(ref)
      rec["jit_donated_input_deleted"] = bool(
          jax.tree.leaves(p)[0].is_deleted())
      # hloverlap, default options.
      f = hjax.jit(fn, fallback=None,
                   options=hloverlap.Options(keep_dir=keep), **jk)
      t0 = time.perf_counter()
      bc = f.compile_for(params, xs)
      rec["bridge_compile_s"] = round(time.perf_counter() - t0, 3)
      rec.update(route=bc.route, route_reason=bc.route_reason,
                 stage=bc.stage, timings=bc.timings,
                 remarks=bc.remark_counts(), aliases=bc.aliases,
                 fixes=len(bc.fixes), dropped=bc.dropped_xla_options)
      p = copy_tree(params)
      out = f(p, xs)
      jax.block_until_ready(out)
      rec["bridge_donated_input_deleted"] = bool(
          jax.tree.leaves(p)[0].is_deleted())
      rec["vs_jit"] = compare(out, ref)
      rec["out_shardings_as_jit"] = all(
          a.sharding.is_equivalent_to(b.sharding, a.ndim)
          for a, b in zip(jax.tree.leaves(out), jax.tree.leaves(ref)))
      # Caller-side compile rules.
      xs2 = make_xs(cfg["accum"], 7)
      out2 = f(copy_tree(params), xs2)
      ref2 = ref_c(copy_tree(params), xs2)
      rec["new_arrays_same_shapes"] = dict(
          compiles=f.compiles, bit_identical=compare(out2, ref2)[
              "bit_identical"])
      f(copy_tree(params), make_xs(2, 8))
      rec["other_shapes_compiles"] = f.compiles
      # The route alone (no hloverlap pass).
      f0 = hjax.jit(fn, fallback=None, options=hloverlap.Options(
          preset=None, keep_dir=keep + "_route_only"), **jk)
      rec["route_only_vs_jit"] = compare(f0(copy_tree(params), xs), ref)
      del rec["route_only_vs_jit"]["leaves"]
      if not rec["vs_jit"]["bit_identical"]:
        dec = {}
        for dname, o in DECOMPOSE.items():
          fd = hjax.jit(fn, fallback=None, options=hloverlap.Options(
              keep_dir=keep + "_" + dname, **o), **jk)
          c = compare(fd(copy_tree(params), xs), ref)
          dec[dname] = dict(bit_identical=c["bit_identical"],
                            max_ulp=c["max_ulp"],
                            remarks=fd.last.remark_counts())
        rec["decomposition"] = dec
        with open(os.path.join(keep, "jit_optimized.hlo"), "w") as fh:
          fh.write(ref_c.as_text())
        with open(os.path.join(keep, "bridge_optimized.hlo"), "w") as fh:
          fh.write(_optimized_text(bc))
      # The reference interpreter on hloverlap's input and output (the
      # chosen candidate's, under the default `plan` preset).
      mods = module_dir(keep)
      rec["verify_hloverlap"] = run_verify(
          binary, os.path.join(mods, "before.hlo"),
          os.path.join(mods, "after.hlo"), n)
      rec["verify_route_text"] = run_verify(
          binary, os.path.join(mods, "before.hlo"),
          os.path.join(mods, "after_route.hlo"), n)
    except Exception as e:  # noqa
      rec["error"] = repr(e)[:3000]
      rec["traceback"] = traceback.format_exc()[-3000:]
    log(rec)


# --- part 2: mock GPU client -------------------------------------------------
def mock_child(out_dir, programs, log):
  import jax
  import hloverlap
  import hloverlap.jax as hjax
  n = int(os.environ["CHECK_MOCK_N"])
  jax.config.update("mock_num_gpu_processes", n)
  devs = jax.devices()
  for name in programs:
    cfg = dict(SMALL, **PROGRAMS[name])
    rec = dict(part="mock", program=name, devices=len(devs),
               kind=devs[0].device_kind)
    try:
      fn, jk, params, xs, _ = build(cfg, devs, abstract=True)
      t0 = time.perf_counter()
      jc = jax.jit(fn, **jk).lower(params, xs).compile()
      rec["jit_compile_s"] = round(time.perf_counter() - t0, 3)
      rec["jit_hlo"] = _hlo_counts(jc.as_text())
      f = hjax.jit(fn, fallback=None, options=hloverlap.Options(
          keep_dir=os.path.join(out_dir, "mock%d_%s" % (n, name))), **jk)
      t0 = time.perf_counter()
      bc = f.compile_for(params, xs)
      rec["bridge_compile_s"] = round(time.perf_counter() - t0, 3)
      rec.update(route=bc.route, stage=bc.stage, timings=bc.timings,
                 remarks=bc.remark_counts(), aliases=bc.aliases,
                 dropped=bc.dropped_xla_options)
      rec["bridge_hlo"] = _hlo_counts(_optimized_text(bc))
    except Exception as e:  # noqa
      rec["error"] = repr(e)[:3000]
      rec["traceback"] = traceback.format_exc()[-3000:]
    log(rec)


# --- part 3: why, and errors ------------------------------------------------
def _collective_counts(path):
  import re
  with open(path) as f:
    t = f.read()
  return {k: len(re.findall(r" %s\(" % k, t))
          for k in ("all-gather", "all-reduce", "reduce-scatter")}


def _pipeliner_trace(dump_dir):
  """XLA's collective-pipeliner runs in a dump: (pass, collectives before
  and after it)."""
  from hloverlap import gspmd
  files = gspmd.dump_files(dump_dir, None)
  out = []
  for i, f in enumerate(files):
    if f.after.startswith("collective-pipeliner") and i > 0:
      out.append(dict(ran=f.after, before=_collective_counts(files[i - 1].path),
                      after=_collective_counts(f.path)))
  return dict(passes=sorted({f.after for f in files} |
                            {f.before for f in files}), pipeliner_runs=out)


def extra_cpu_child(out_dir, programs, log):
  """CPU, FSDP: (1) the same comparison with XLA's CPU fusion pass off on
  both sides (is the difference XLA's fusion of the pipelined module?);
  (2) errors and the fallback, on the real thing."""
  import warnings
  import jax
  import hloverlap
  import hloverlap.jax as hjax
  from hloverlap import gspmd
  from hloverlap.errors import BridgeError, BridgeFallbackWarning
  n = len(jax.devices())
  cfg = dict(SMALL, **PROGRAMS["fsdp"])
  fn, jk, params, xs, _ = build(cfg)
  ref = jax.jit(fn, **jk)(copy_tree(params), xs)
  nofuse = {"xla_disable_hlo_passes": "fusion"}
  rec = dict(part="extra", check="fusion_off", devices=n)
  try:
    ref_nf = jax.jit(fn, **jk).lower(params, xs).compile(
        compiler_options=nofuse)(copy_tree(params), xs)
    f = hjax.jit(fn, fallback=None, options=hloverlap.Options(
        xla_options=nofuse), **jk)
    c = compare(f(copy_tree(params), xs), ref_nf)
    rec.update(bridge_vs_jit_both_fusion_off=dict(
        bit_identical=c["bit_identical"], max_ulp=c["max_ulp"]),
        jit_fusion_off_vs_jit=compare(ref_nf, ref)["bit_identical"],
        xla_options=f.last.xla_options.get("xla_disable_hlo_passes"))
  except Exception as e:  # noqa
    rec["error"] = repr(e)[:2000]
  log(rec)
  # Errors: (a) this XLA's partitioner under another name -> fallback.
  rec = dict(part="extra", check="pass_names_differ_fallback", devices=n)
  old = gspmd.PARTITIONER_PASS
  try:
    gspmd.PARTITIONER_PASS = "spmd-partitioning-renamed"
    f = hjax.jit(fn, options=hloverlap.Options(), **jk)
    with warnings.catch_warnings(record=True) as w:
      warnings.simplefilter("always")
      out = f(copy_tree(params), xs)
    rec["warnings"] = [str(x.message) for x in w
                       if issubclass(x.category, BridgeFallbackWarning)]
    rec["route"] = f.last.route
    jit_same = hjax._jit_compile(jax.jit(fn, **jk).lower(params, xs),
                                 f.last.xla_options)
    rec["fallback_vs_jit_bit_identical"] = compare(
        out, jit_same(copy_tree(params), xs))["bit_identical"]
  except Exception as e:  # noqa
    rec["error"] = repr(e)[:2000]
  finally:
    gspmd.PARTITIONER_PASS = old
  log(rec)
  # (b) the partitioning passes not disabled (names XLA does not know):
  # XLA partitions the partitioned module again and fails; fallback=None.
  rec = dict(part="extra", check="xla_compile_error_raised", devices=n)
  old = gspmd.DISABLE_PARTITIONING
  try:
    gspmd.DISABLE_PARTITIONING = ("no-such-pass",)
    f = hjax.jit(fn, fallback=None, options=hloverlap.Options(), **jk)
    try:
      f(copy_tree(params), xs)
      rec["raised"] = False
    except BridgeError as e:
      rec.update(raised=True, stage=e.stage, message=str(e)[:3000],
                 keep_dir_files=sorted(os.listdir(e.keep_dir)))
  except Exception as e:  # noqa
    rec["error"] = repr(e)[:2000]
  finally:
    gspmd.DISABLE_PARTITIONING = old
  log(rec)


def extra_mock_child(out_dir, programs, log):
  """Mock GPUs, GSPMD FSDP: which XLA pipeliner passes run in jax.jit's
  compile and in the bridge's compile of hloverlap's output, and what they
  change."""
  import jax
  import hloverlap
  import hloverlap.jax as hjax
  from hloverlap import gspmd
  n = int(os.environ["CHECK_MOCK_N"])
  jax.config.update("mock_num_gpu_processes", n)
  devs = jax.devices()
  cfg = dict(SMALL, **PROGRAMS["fsdp"])
  rec = dict(part="extra", check="mock_pipeliner_trace", devices=n)
  try:
    fn, jk, params, xs, _ = build(cfg, devs, abstract=True)
    keep = os.path.join(out_dir, "xmock%d_fsdp" % n)
    f = hjax.jit(fn, fallback=None, options=hloverlap.Options(keep_dir=keep),
                 **jk)
    bc = f.compile_for(params, xs)
    rec["jit_dump"] = _pipeliner_trace(os.path.join(keep, "xla_dump"))
    d2 = os.path.join(keep, "route_dump")
    exe = hjax.compile_hlo_text(bc.hlo_after, bc.devices, dict(
        bc.xla_options, **gspmd.dump_options(d2)), use_shardy=bc.use_shardy)
    rec["route_dump"] = _pipeliner_trace(d2)
    d3 = os.path.join(keep, "route_dump_no_xla_pipeliner")
    o3 = dict(bc.xla_options, **gspmd.dump_options(d3))
    o3["xla_disable_hlo_passes"] += (",collective-pipeliner-forward,"
                                     "collective-pipeliner-backward")
    hjax.compile_hlo_text(bc.hlo_after, bc.devices, o3,
                          use_shardy=bc.use_shardy)
    rec["route_dump_xla_pipeliner_disabled"] = _pipeliner_trace(d3)
    rec["route_xla_options"] = bc.xla_options
    with open(os.path.join(keep, "bridge_optimized.hlo"), "w") as fh:
      fh.write("\n".join(m.to_string() for m in exe.hlo_modules()))
    jc = hjax._jit_compile(jax.jit(fn, **jk).lower(params, xs), {
        k: v for k, v in bc.xla_options.items()
        if k != "xla_disable_hlo_passes"})
    with open(os.path.join(keep, "jit_optimized.hlo"), "w") as fh:
      fh.write(jc.as_text())
  except Exception as e:  # noqa
    rec["error"] = repr(e)[:2000]
    rec["traceback"] = traceback.format_exc()[-2000:]
  log(rec)
  # Compile times at the benchmark's size (ANCHORS §1a perf configuration).
  perf = dict(layers=8, d=2048, heads=16, seq=1024, mb=1, accum=4)
  for name in ("fsdp", "shardmap_fsdp"):
    rec = dict(part="mock", program="perf_" + name, devices=n,
               kind=devs[0].device_kind)
    try:
      fn, jk, params, xs, _ = build(dict(perf, **PROGRAMS[name]), devs,
                                    abstract=True)
      t0 = time.perf_counter()
      jc = jax.jit(fn, **jk).lower(params, xs).compile()
      rec["jit_compile_s"] = round(time.perf_counter() - t0, 3)
      rec["jit_hlo"] = _hlo_counts(jc.as_text())
      f = hjax.jit(fn, fallback=None, **jk)
      t0 = time.perf_counter()
      bc = f.compile_for(params, xs)
      rec["bridge_compile_s"] = round(time.perf_counter() - t0, 3)
      rec.update(route=bc.route, stage=bc.stage, timings=bc.timings,
                 remarks=bc.remark_counts())
      rec["bridge_hlo"] = _hlo_counts(_optimized_text(bc))
    except Exception as e:  # noqa
      rec["error"] = repr(e)[:2000]
    log(rec)


# --- driver ----------------------------------------------------------------
def spawn(part, out_dir, env_extra, programs, timeout):
  env = dict(os.environ, **env_extra)
  cmd = [sys.executable, __file__, "--child", part, "--out", out_dir,
         "--programs", ",".join(programs)]
  t0 = time.time()
  try:
    r = subprocess.run(cmd, env=env, capture_output=True, text=True,
                       timeout=timeout)
    return dict(rc=r.returncode, wall_s=round(time.time() - t0, 1),
                stderr_tail=r.stderr[-2500:] if r.returncode else "")
  except subprocess.TimeoutExpired as e:
    return dict(rc="timeout", wall_s=timeout,
                stderr_tail=str(e.stderr or "")[-2500:])


def table(records):
  lines = ["| devices | program | route (stage) | vs jax.jit | route alone |"
           " interpreter: hloverlap in = out | jit compile s | bridge "
           "compile s (jit dump + hloverlap + XLA) |", "|" + "---|" * 8]
  for r in records:
    if r.get("part") != "cpu":
      continue
    if "error" in r:
      lines.append("| %d | %s | error: %s |||||" % (
          r["devices"], r["program"], r["error"][:200].replace("|", "/")))
      continue
    v = r.get("vs_jit", {})
    vs = "bit-identical" if v.get("bit_identical") else \
        "max %d ulp" % v.get("max_ulp", -1)
    ro = r.get("route_only_vs_jit", {})
    t = r.get("timings", {})
    lines.append("| %d | %s | %s (%s) | %s | %s | %s | %.2f | %.2f (%s + %s "
                 "+ %s) |" % (
                     r["devices"], r["program"], r.get("route"),
                     r.get("stage") or "lowering", vs,
                     "bit-identical" if ro.get("bit_identical") else
                     "max %s ulp" % ro.get("max_ulp"),
                     r.get("verify_hloverlap", {}).get("bit_identical"),
                     r.get("jit_compile_s", 0), r.get("bridge_compile_s", 0),
                     t.get("jit_compile_s", "-"), t.get("hloverlap_s"),
                     t.get("xla_compile_s")))
  lines += ["", "| mock GPUs | program | route (stage) | jit compile s | "
            "bridge compile s | async all-gathers jit / bridge |",
            "|" + "---|" * 6]
  for r in records:
    if r.get("part") != "mock" or "jit_hlo" not in r and "error" not in r:
      continue
    if "error" in r:
      lines.append("| %d | %s | error: %s |||" % (
          r["devices"], r["program"], r["error"][:200].replace("|", "/")))
      continue
    lines.append("| %d | %s | %s (%s) | %.2f | %.2f | %s / %s |" % (
        r["devices"], r["program"], r["route"], r["stage"],
        r["jit_compile_s"], r["bridge_compile_s"],
        r["jit_hlo"]["all-gather-start"], r["bridge_hlo"]["all-gather-start"]))
  return "\n".join(lines) + "\n"


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/check"))
  ap.add_argument("--only", choices=["cpu", "mock", "extra"], default=None)
  ap.add_argument("--devices", default=None,
                  help="comma list (cpu: 2,4; mock: 2,4,8)")
  ap.add_argument("--programs", default=None)
  ap.add_argument("--child", default=None)
  ap.add_argument("--timeout", type=int, default=400)
  ap.add_argument("--cpu-xla-flags", default="",
                  help="more XLA_FLAGS for the CPU children, e.g. "
                  "--xla_cpu_experimental_ynn_fusion_type= (YNNPACK off)")
  args = ap.parse_args()
  os.makedirs(args.out, exist_ok=True)
  if args.child:
    path = os.path.join(args.out, "records.%d.jsonl" % os.getpid())

    def log(rec):
      with open(path, "a") as f:
        f.write(json.dumps(rec, default=str) + "\n")
      print(json.dumps(rec, default=str)[:600], flush=True)
    progs = args.programs.split(",")
    {"cpu": cpu_child, "mock": mock_child, "extra_cpu": extra_cpu_child,
     "extra_mock": extra_mock_child}[args.child](args.out, progs, log)
    return
  t0 = time.time()
  runs = []
  procs = []
  import threading
  if args.only in (None, "cpu"):
    for n in [int(x) for x in (args.devices or "2,4").split(",")]:
      procs.append(("cpu", n, dict(
          JAX_PLATFORMS="cpu",
          XLA_FLAGS="--xla_force_host_platform_device_count=%d %s" % (
              n, args.cpu_xla_flags)),
          args.programs.split(",") if args.programs else list(PROGRAMS)))
  if args.only in (None, "mock"):
    mock_flags = "--xla_gpu_shard_autotuning=false --xla_gpu_autotune_level=0"
    for n in [int(x) for x in (args.devices or "2,4,8").split(",")] \
        if args.only == "mock" else [2, 4, 8]:
      procs.append(("mock", n, dict(CHECK_MOCK_N=str(n), XLA_FLAGS=mock_flags),
                    args.programs.split(",") if args.programs else
                    ["fsdp", "shardmap_fsdp"]))

  if args.only in (None, "extra"):
    procs.append(("extra_cpu", 2, dict(
        JAX_PLATFORMS="cpu",
        XLA_FLAGS="--xla_force_host_platform_device_count=2"), ["fsdp"]))
    procs.append(("extra_mock", 2, dict(
        CHECK_MOCK_N="2", XLA_FLAGS="--xla_gpu_shard_autotuning=false "
        "--xla_gpu_autotune_level=0"), ["fsdp"]))

  def go(part, n, env, progs):
    r = spawn(part, args.out, env, progs, args.timeout)
    r.update(part="_child_" + part, devices=n)
    runs.append(r)
  # The CPU children in parallel; the mock ones after each other (one GPU).
  threads = [threading.Thread(target=go, args=p) for p in procs
             if p[0] in ("cpu", "extra_cpu")]
  for t in threads:
    t.start()
  for p in procs:
    if p[0] in ("mock", "extra_mock"):
      go(*p)
  for t in threads:
    t.join()
  records = []
  for fn in sorted(os.listdir(args.out)):
    if fn.startswith("records.") and fn.endswith(".jsonl"):
      with open(os.path.join(args.out, fn)) as f:
        records += [json.loads(l) for l in f if l.strip()]
  records.sort(key=lambda r: (r.get("part", ""), r.get("devices", 0),
                              list(PROGRAMS).index(r["program"])
                              if r.get("program") in PROGRAMS else 99))
  import jax
  summary = dict(jax=jax.__version__, wall_s=round(time.time() - t0, 1),
                 cpu_xla_flags=args.cpu_xla_flags,
                 children=runs, records=records)
  with open(os.path.join(args.out, "bridge_device_check.json"), "w") as f:
    json.dump(summary, f, indent=1, default=str)
  md = table(records)
  with open(os.path.join(args.out, "bridge_device_check.md"), "w") as f:
    f.write(md)
  print(md)
  for r in runs:
    if r.get("rc"):
      print("child", r["part"], r["devices"], "rc", r["rc"],
            r.get("stderr_tail", "")[-800:])


if __name__ == "__main__":
  main()
