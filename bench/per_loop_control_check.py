#!/usr/bin/env python3
"""Per-loop control from JAX code, through both bridge routes (issue 26
item 10): the seed's own case.

One command on the GPU machine (no GPU needed with --cpu):

  HLOVERLAP_BIN=PATH PYTHONPATH=python python3 bench/per_loop_control_check.py
  HLOVERLAP_BIN=PATH PYTHONPATH=python python3 bench/per_loop_control_check.py --cpu 2

The training step: gradient accumulation in a `fori_loop` (not unrolled)
around `value_and_grad` of a `scan` over layers, FSDP. The JAX code asks,
with `jax.experimental.xla_metadata.set_xla_metadata`, for double buffering
OFF for the accumulation loop and ON for the layer loop:

    with set_xla_metadata(_hloverlap_double_buffer="off"):
      fori_loop(0, m, micro, ...)          # micro: value_and_grad(loss)
    # in loss:
    with set_xla_metadata(_hloverlap_double_buffer="on"):
      scan(layer, x, params)

set_xla_metadata tags every op of its scope, so the layer scans carry the
outer "off" too unless their own scope set "on". hloverlap's rule
(src/passes/loop_policy.h): an attribute counts only for the outermost loop
of the scope that set it; a nested loop's own value wins.

For each route (gspmd: jit shardings; shard_map: explicit collectives) and
each configuration (the bridge's default, and an explicit pipeline that
ends with hloverlap's double-buffer pass: DB_PASSES), it prints per loop of
hloverlap's input:
  - the loop, its op_name and what it is (forward / backward scan, ...);
  - the _hloverlap_* attributes on its while instruction;
  - the loop-policy remarks (LoopAttributeApplied / LoopAttributeInherited)
    and the double-buffer pass's decision (DoubleBuffered,
    DoubleBufferingOff, NotInnermost, ...);
and whether the step's results equal jax.jit's. Exit status 0 when, on
every route run, the accumulation loop is not double-buffered by request
(its attribute applied "off") and the layer loop's "on" applied; 1 else.
Results also go to --out DIR/per_loop_control_check.json.
"""
import argparse
import json

# The pipeliner and hloverlap's double-buffer pass, route-legal (no async
# conversion or scheduling: XLA does those after the bridge).
DB_PASSES = ("inline,tuple-simplify,dce,collective-pipeliner,tuple-simplify,"
             "dce,double-buffer")
import os
import re
import sys


def build(route, n_dev, accum=4, layers=4, d=256, seq=64, mb=2):
  import numpy as np
  import jax
  import jax.numpy as jnp
  from jax.experimental.xla_metadata import set_xla_metadata
  from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
  try:
    from jax import shard_map
  except ImportError:
    from jax.experimental.shard_map import shard_map
  devs = jax.devices()[:n_dev]
  mesh = Mesh(np.array(devs), ("x",))
  explicit = route == "shard_map"
  wspec = P(None, "x", None)
  xspec = P(None, "x", None, None)
  shapes = {"w1": (layers, d, 4 * d), "w2": (layers, 4 * d, d)}
  wsh = {k: NamedSharding(mesh, wspec) for k in shapes}
  xsh = NamedSharding(mesh, xspec)
  ks = jax.random.split(jax.random.PRNGKey(0), 3)
  params = {k: jax.device_put((jax.random.normal(ks[i], s, jnp.float32) /
                               np.sqrt(s[1])).astype(jnp.bfloat16), wsh[k])
            for i, (k, s) in enumerate(shapes.items())}
  xs = jax.device_put(jax.random.normal(
      ks[2], (accum, mb * n_dev, seq, d), jnp.float32).astype(jnp.bfloat16),
                      xsh)

  def layer(h, w):
    w1, w2 = w["w1"], w["w2"]
    if explicit:
      w1 = jax.lax.all_gather(w1, "x", axis=0, tiled=True)
      w2 = jax.lax.all_gather(w2, "x", axis=0, tiled=True)
    return h + jax.nn.gelu(h @ w1) @ w2, None

  def loss_fn(p, xb):
    # The layer loop: double buffering on (its own scope).
    with set_xla_metadata(_hloverlap_double_buffer="on"):
      h, _ = jax.lax.scan(layer, xb, p)
    return jnp.mean(jnp.square(h.astype(jnp.float32)))

  def train_step(p, xs):
    def micro(i, carry):
      l, g = carry
      li, gi = jax.value_and_grad(loss_fn)(p, xs[i])
      if explicit:
        li = jax.lax.pmean(li, "x")
      return l + li, jax.tree.map(jnp.add, g, gi)
    # The accumulation loop: double buffering off.
    with set_xla_metadata(_hloverlap_double_buffer="off"):
      l, g = jax.lax.fori_loop(0, xs.shape[0], micro,
                               (jnp.float32(0),
                                jax.tree.map(jnp.zeros_like, p)),
                               unroll=False)
    newp = jax.tree.map(lambda a, b: (a.astype(jnp.float32) - 1e-3 *
                                      b.astype(jnp.float32)).astype(a.dtype),
                        p, g)
    return l, newp

  if explicit:
    fn = shard_map(train_step, mesh=mesh,
                   in_specs=({k: wspec for k in shapes}, xspec),
                   out_specs=(P(), {k: wspec for k in shapes}))
    jk = {}
  else:
    fn = train_step
    jk = dict(in_shardings=(wsh, xsh), out_shardings=(None, wsh))
  return fn, jk, params, xs


_WHILE = re.compile(r"^\s*(?:ROOT\s+)?%?(\S+)\s*=.*\swhile\(")
_ATTR = re.compile(r'(_hloverlap_\w+)="([^"]*)"')
_OPNAME = re.compile(r'op_name="([^"]*)"')


def loops_of(text):
  """[(name, op_name, {attribute: value})] of the while instructions."""
  out = []
  for line in text.split("\n"):
    m = _WHILE.match(line)
    if not m:
      continue
    fa = line[line.find("frontend_attributes={"):] if (
        "frontend_attributes={" in line) else ""
    fa = fa[:fa.find("}") + 1]
    op = _OPNAME.search(line)
    out.append((m.group(1), op.group(1) if op else "",
                dict(_ATTR.findall(fa))))
  return out


def role(op_name):
  if "transpose(" in op_name:
    return "backward scan (transpose(jvp))"
  if "jvp(" in op_name:
    return "forward scan (jvp)"
  return "accumulation fori_loop" if op_name else "?"


def same(a, b):
  import numpy as np
  import jax
  la, lb = jax.tree.leaves(a), jax.tree.leaves(b)
  return len(la) == len(lb) and all(
      np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(la, lb))


def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("--cpu", type=int, default=0,
                  help="run on N CPU devices instead of the GPUs")
  ap.add_argument("--devices", type=int, default=0,
                  help="devices to use (default: all)")
  ap.add_argument("--out", default="per_loop_control_out")
  args = ap.parse_args()
  if args.cpu:
    os.environ["JAX_PLATFORMS"] = "cpu"
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                               " --xla_force_host_platform_device_count=%d"
                               % args.cpu)
  import jax
  import hloverlap
  import hloverlap.jax as hjax
  n = args.devices or len(jax.devices())
  os.makedirs(args.out, exist_ok=True)
  records, ok = [], True
  print("jax %s, %d %s devices, hloverlap %s" % (
      jax.__version__, n, jax.devices()[0].platform, hloverlap.find_binary()))
  for route in ("gspmd", "shard_map"):
    for passes in (None, DB_PASSES):
      label = "%s, %s" % (route, "--passes=" + passes if passes
                          else "bridge default")
      keep = os.path.join(args.out, "%s_%s" % (
          route, "double_buffer_pass" if passes else "default"))
      rec = dict(route=route, passes=passes, keep_dir=keep, loops=[])
      print("\n== %s" % label)
      try:
        fn, jk, params, xs = build(route, n)
        ref = jax.jit(fn, **jk)(params, xs)
        opts = hloverlap.Options(keep_dir=keep)
        if passes:
          opts = hloverlap.Options(keep_dir=keep, preset=None, passes=passes)
        f = hjax.jit(fn, fallback=None, options=opts, **jk)
        out = f(params, xs)
        bc = f.last
        rec["bridge_route"] = getattr(bc, "route", None)
        rec["equal_to_jax_jit"] = same(out, ref)
        # hloverlap's input (the bridge keeps it; files vary by planner).
        before = getattr(bc, "hlo_before", None) or open(
            os.path.join(keep, "before.hlo")).read()
        remarks = list(getattr(bc, "remarks", []))
        rec["jax_lowered_instructions_with_attribute"] = len(
            re.findall(r"_hloverlap_double_buffer=", before))
        outer_ok = inner_ok = False
        for name, op_name, attrs in loops_of(before):
          mine = [r for r in remarks if r.get("instruction") == name and (
              r.get("pass") in ("loop-policy", "double-buffer"))]
          lp = {"loop": name, "op_name": op_name, "what": role(op_name),
                "attributes": attrs,
                "decisions": ["%s: %s: %s" % (r.get("pass"), r.get("name"),
                                              r.get("message"))
                              for r in mine]}
          rec["loops"].append(lp)
          print("  %s [%s] %s" % (name, lp["what"], op_name))
          print("    attributes: %s" % (attrs or "none"))
          for d in lp["decisions"] or ["(no loop-policy/double-buffer "
                                       "remark)"]:
            print("    " + d)
          names = {r.get("name") for r in mine}
          applied = " ".join(r.get("message", "") for r in mine
                             if r.get("name") == "LoopAttributeApplied")
          if lp["what"] == "accumulation fori_loop":
            outer_ok = "double buffering off" in applied and (
                "DoubleBuffered" not in names)
          elif "double buffering on" in applied:
            inner_ok = True
        rec["accumulation_loop_off"] = outer_ok
        rec["layer_loop_on"] = inner_ok
        print("  bridge route %s; equal to jax.jit: %s; accumulation loop "
              "off: %s; layer loop on: %s" % (
                  rec["bridge_route"], rec["equal_to_jax_jit"], outer_ok,
                  inner_ok))
        ok = ok and outer_ok and inner_ok
      except Exception as e:  # pylint: disable=broad-except
        rec["error"] = "%s: %s" % (type(e).__name__, e)
        print("  FAILED: " + rec["error"][:2000])
        ok = False
      records.append(rec)
  with open(os.path.join(args.out, "per_loop_control_check.json"), "w") as f:
    json.dump(records, f, indent=1)
  print("\n%s (details in %s)" % ("OK" if ok else "NOT OK", args.out))
  return 0 if ok else 1


if __name__ == "__main__":
  sys.exit(main())
