"""JAX entry points: run hloverlap on a JAX lowering, compile the result with
XLA, call it on jax.Arrays.

    import hloverlap
    import hloverlap.jax as hjax

    step = hjax.jit(train_step, donate_argnums=(0,),
                    options=hloverlap.Options(
                        loops=["op_name~fori_loop:pipeline=off"],
                        memory_budget="4GiB", remarks="remarks.json"))
    loss, params = step(params, batch)      # same call as jax.jit(train_step)

    # or, from a lowering:
    compiled = hjax.compile(jax.jit(f).lower(*args), options)
    out = compiled(*args)

What happens (the route of ../shared/docs/ANCHORS.md §4):
  1. `lowered.as_text(dialect="hlo")` -- JAX's lowering (shard_map programs
     carry their collectives explicitly here);
  2. `hloverlap opt --preset=pipeline ...` (hloverlap.binary.run_opt);
  3. `hloverlap.text.make_route_legal` (copy -> reshape, if any);
  4. `jaxlib._hlo.hlo_module_from_text` -> HloModuleProto ->
     `mlir.hlo_to_stablehlo` -> `backend.compile_and_load` with
     num_partitions = #devices, SPMD partitioning on, and
     `hloverlap.xla.BRIDGE_XLA_OPTIONS` (XLA's collective pipelining off,
     its latency hiding scheduler on) as per-compile option overrides;
  5. calls: `execute_sharded` on the flattened jax.Arrays, outputs
     reassembled into jax.Arrays with the lowering's output pytree.

Donation: the lowering's buffer donors stay in the module, but
`execute_sharded` does not consume the caller's arrays (measured on jaxlib
0.11.2: a donated input is still valid after the call), so memory use is
that of jax.jit without donation. Arguments must be jax.Arrays laid out as
jax.jit would lay them out (pass `in_shardings` to `jit` to have them
placed). `use_shardy` defaults to JAX's `jax_use_shardy_partitioner` (JAX
0.11 lowers shard_map for Shardy; XLA's GSPMD partitioner rejects that text).

Coverage: shard_map programs (explicit collectives in JAX's lowering). GSPMD
programs (shardings on jax.jit only) get no collectives until XLA's SPMD
partitioner runs, so there is nothing to pipeline in the lowering, and their
lowering does not compile through this route either (RET_CHECK "Unexpected
custom call named 'xla.sdy.*' in the XLA partitioner" on
xla.sdy.FuncResultSharding, jaxlib 0.11.2); see docs/BENCHMARKS.md.
"""

import os
import time
import warnings
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from hloverlap import text as hlo
from hloverlap import xla as xla_opts
from hloverlap.binary import OptResult, run_opt, summarize_remarks
from hloverlap.options import Options, as_options

__all__ = ["jit", "compile", "hlo_text_of", "compile_hlo_text",
           "BridgeCompiled", "BridgeJitted"]


def _jax():
  import jax  # pylint: disable=g-import-not-at-top
  return jax


def hlo_text_of(lowered, debug_info: bool = True) -> str:
  """The HLO text of a jax.stages.Lowered.

  With debug_info the instructions carry metadata (op_name="jit(f)/while/
  body/...", source lines), so `op_name~REGEX` loop selectors and remarks can
  refer to the program; XLA ignores metadata when compiling.
  """
  if debug_info:
    try:
      return lowered.as_text(dialect="hlo", debug_info=True)
    except TypeError:
      pass
  try:
    return lowered.as_text(dialect="hlo")
  except Exception:  # older spellings
    return lowered.compiler_ir("hlo").as_hlo_text()


def _xla_modules():
  """(hlo module, mlir module, xla_client, backend getter) of this jaxlib."""
  from jax._src import xla_bridge  # pylint: disable=g-import-not-at-top
  from jax._src.lib import xla_client as xc  # pylint: disable=g-import-not-at-top
  try:
    import jaxlib._hlo as jh  # pylint: disable=g-import-not-at-top
  except ImportError:
    jh = None
  mlir = None
  for name in ("jaxlib._jax", "jaxlib.xla_extension"):
    try:
      mod = __import__(name, fromlist=["mlir"])
      mlir = getattr(mod, "mlir", None)
      if mlir is not None:
        break
    except ImportError:
      continue
  if jh is None or not hasattr(jh, "hlo_module_from_text"):
    raise RuntimeError("this jaxlib has no jaxlib._hlo.hlo_module_from_text "
                       "(the bridge needs jaxlib 0.11)")
  if mlir is None or not hasattr(mlir, "hlo_to_stablehlo"):
    raise RuntimeError("this jaxlib has no mlir.hlo_to_stablehlo")
  return jh, mlir, xc, xla_bridge.get_backend


def hlo_text_to_stablehlo(text: str):
  jh, mlir, _, _ = _xla_modules()
  proto = jh.hlo_module_from_text(text).as_serialized_hlo_module_proto()
  return mlir.hlo_to_stablehlo(proto)


def compile_hlo_text(text: str, devices: Sequence[Any],
                     xla_options: Optional[Dict[str, object]] = None,
                     use_shardy: Optional[bool] = None,
                     dropped: Optional[List[str]] = None):
  """Compiles a (pre-partitioning) HLO module text for `devices` (route §4).

  Returns jaxlib's LoadedExecutable. XLA options this XLA does not know are
  dropped (listed in `dropped`), see xla.compile_dropping_unknown.
  """
  return xla_opts.compile_dropping_unknown(
      lambda o: _compile_hlo_text(text, devices, o, use_shardy),
      xla_options or {}, dropped)


def _compile_hlo_text(text, devices, xla_options, use_shardy):
  import numpy as np  # pylint: disable=g-import-not-at-top
  _, _, xc, get_backend = _xla_modules()
  stable = hlo_text_to_stablehlo(text)
  opts = xc.CompileOptions()
  eb = opts.executable_build_options
  n = len(devices)
  eb.num_replicas = 1
  eb.num_partitions = n
  eb.use_spmd_partitioning = True
  eb.device_assignment = xc.DeviceAssignment.create(
      np.array([d.id for d in devices]).reshape(1, n))
  if use_shardy is None:
    use_shardy = jax_uses_shardy()
  if use_shardy is not None and hasattr(eb, "use_shardy_partitioner"):
    eb.use_shardy_partitioner = bool(use_shardy)
  if xla_options:
    opts.env_option_overrides = xla_opts.overrides_list(xla_options)
  backend = get_backend()
  return backend.compile_and_load(stable, xc.DeviceList(tuple(devices)), opts)


def jax_uses_shardy() -> Optional[bool]:
  """JAX's jax_use_shardy_partitioner (None if this JAX has no such flag).

  The route must compile with the partitioner JAX lowered for: JAX 0.11
  lowers shard_map for Shardy (xla.sdy.* custom-calls around a call), and
  XLA's GSPMD partitioner rejects those (RET_CHECK "Unexpected custom call
  named 'xla.sdy.*' in the XLA partitioner", measured on jaxlib 0.11.2).
  """
  try:
    v = getattr(_jax().config, "jax_use_shardy_partitioner", None)
  except Exception:  # pylint: disable=broad-except
    return None
  return None if v is None else bool(v)


def _devices_of(lowered, text: str) -> List[Any]:
  jax = _jax()
  low = getattr(lowered, "_lowering", None)
  ca = getattr(low, "compile_args", None) or {}
  da = ca.get("device_assignment") if isinstance(ca, dict) else None
  if da:
    return list(da)
  n = hlo.device_count(text) or 1
  return list(jax.devices()[:n])


def _kept_var_idx(lowered) -> Optional[Sequence[int]]:
  low = getattr(lowered, "_lowering", None)
  ca = getattr(low, "compile_args", None) or {}
  kept = ca.get("kept_var_idx") if isinstance(ca, dict) else None
  return sorted(kept) if kept is not None else None


def _entry_param_count(text: str) -> Optional[int]:
  layout = hlo.header_attribute(text, "entry_computation_layout")
  if not layout:
    return None
  # {(p0, p1, ...)->result}: count top-level commas of the parameter list.
  inner = layout[1:-1]
  if not inner.startswith("("):
    return None
  depth, count, i, empty = 0, 0, 0, True
  for i, c in enumerate(inner):
    if c in "([{":
      depth += 1
      if depth == 2:
        empty = False
    elif c in ")]}":
      depth -= 1
      if depth == 0:
        break
    elif depth == 1:
      if c == ",":
        count += 1
      elif not c.isspace():
        empty = False
  return 0 if empty else count + 1


class BridgeCompiled:
  """A compiled function: call it like the jax.jit function (dynamic args)."""

  def __init__(self, executable, lowered, devices, opt: Optional[OptResult],
               hlo_before: str, hlo_after: str, xla_options: Dict[str, object],
               fixes: List[str], compile_seconds: float):
    self.executable = executable
    self.lowered = lowered
    self.devices = list(devices)
    self.opt_result = opt
    self.remarks = list(opt.remarks) if opt is not None else []
    self.hlo_before = hlo_before
    self.hlo_after = hlo_after
    self.xla_options = dict(xla_options)
    self.fixes = list(fixes)
    self.compile_seconds = compile_seconds
    self.in_tree = lowered.in_tree
    self.out_tree = lowered.out_tree
    self._kept = _kept_var_idx(lowered)
    self._out_info = _jax().tree_util.tree_leaves(lowered.out_info)
    self._out_shardings = None  # resolved on the first call
    self.sharding_source = None  # how output shardings were found

  def remark_counts(self) -> Dict[str, int]:
    return summarize_remarks(self.remarks)

  # -- outputs --------------------------------------------------------------
  def _resolve_out_shardings(self, per_out) -> List[Any]:
    jax = _jax()
    Sharding = jax.sharding.Sharding
    # 1. what the lowering knows (out_shardings given to jit).
    shs = [getattr(o, "sharding", None) for o in self._out_info]
    if all(isinstance(s, Sharding) for s in shs):
      self.sharding_source = "lowering"
      return shs
    # 2. the executable's output shardings.
    try:
      from jax._src import sharding_impls  # pylint: disable=g-import-not-at-top
      ops = self.executable.get_output_shardings()
      if ops is not None and len(ops) == len(self._out_info):
        gs = [sharding_impls.GSPMDSharding(tuple(self.devices), op)
              for op in ops]
        self.sharding_source = "executable"
        return [s if isinstance(s, Sharding) else g for s, g in zip(shs, gs)]
    except Exception:  # pylint: disable=broad-except
      pass
    # 3. a 1-D mesh over the devices, the sharded dim found from the shapes.
    try:
      import numpy as np  # pylint: disable=g-import-not-at-top
      from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
      mesh = Mesh(np.array(self.devices), ("_hloverlap",))
      n = len(self.devices)
      out = []
      for s, info, arrs in zip(shs, self._out_info, per_out):
        if isinstance(s, Sharding):
          out.append(s)
          continue
        g = tuple(info.shape)
        l = tuple(arrs[0].shape)
        spec = [None] * len(g)
        diff = [i for i in range(len(g)) if g[i] != l[i]]
        if len(diff) > 1 or (diff and g[diff[0]] != l[diff[0]] * n):
          raise ValueError("not a 1-D sharding")
        if diff:
          spec[diff[0]] = "_hloverlap"
        out.append(NamedSharding(mesh, P(*spec)))
      self.sharding_source = "shapes"
      return out
    except Exception:  # pylint: disable=broad-except
      pass
    # 4. ask JAX (one more compile of the original lowering).
    self.sharding_source = "jax-compile"
    return list(_jax().tree_util.tree_leaves(
        self.lowered.compile().output_shardings))

  def __call__(self, *args, **kwargs):
    jax = _jax()
    leaves, tree = jax.tree_util.tree_flatten((args, kwargs))
    if tree != self.in_tree:
      raise TypeError(
          "hloverlap: called with a different argument structure than the "
          "lowering (static arguments must be left out):\n  got {}\n  "
          "lowered {}".format(tree, self.in_tree))
    if self._kept is not None and len(self._kept) != len(leaves):
      leaves = [leaves[i] for i in self._kept]
    leaves = [x if isinstance(x, jax.Array) else jax.device_put(x)
              for x in leaves]
    results = self.executable.execute_sharded(leaves)
    per_out = results.disassemble_into_single_device_arrays()
    if self._out_shardings is None:
      self._out_shardings = self._resolve_out_shardings(per_out)
    outs = [jax.make_array_from_single_device_arrays(
                tuple(info.shape), sh, list(arrs))
            for info, sh, arrs in zip(self._out_info, self._out_shardings,
                                      per_out)]
    return jax.tree_util.tree_unflatten(self.out_tree, outs)


def compile(lowered, options=None, *, donate: bool = True,  # pylint: disable=redefined-builtin
            use_shardy: Optional[bool] = None,
            allow_xla_pipelining: bool = False,
            on_error: str = "raise") -> BridgeCompiled:
  """hloverlap + XLA compile of a jax.stages.Lowered (see module comment).

  options: hloverlap.Options or a dict of its fields. donate=False drops the
  lowering's buffer donation. on_error="xla" compiles JAX's own text through
  the same route (XLA without its pipelining) when hloverlap fails, with a
  warning, instead of raising.
  """
  opts = as_options(options)
  t0 = time.perf_counter()
  before = hlo_text_of(lowered)
  xla_options = xla_opts.bridge_options(opts.xla_options,
                                        allow_xla_pipelining)
  if not allow_xla_pipelining:
    on = xla_opts.pipelining_flags_on(os.environ.get("XLA_FLAGS", ""))
    if on:
      raise ValueError(
          "XLA_FLAGS turns XLA's own collective pipelining on ({}); it applies "
          "to every compile of the process and cannot be overridden per "
          "compile in this jaxlib. Unset it, or pass "
          "allow_xla_pipelining=True".format(", ".join(on)))
  if use_shardy is None:
    use_shardy = jax_uses_shardy()
  try:
    opt = run_opt(before, opts)
    after = opt.text
  except Exception as e:  # pylint: disable=broad-except
    if on_error != "xla":
      raise
    warnings.warn("hloverlap failed, compiling JAX's text unchanged: {}"
                  .format(e))
    opt, after = None, before
  fixes: List[str] = []
  if opts.route_fixups:
    after, fixes = hlo.make_route_legal(after)
  if not donate:
    after = hlo.strip_buffer_donor(after)
  if opts.keep_dir:
    with open(os.path.join(opts.keep_dir, "after_route.hlo"), "w") as f:
      f.write(after)
  devices = _devices_of(lowered, before)
  dropped: List[str] = []
  exe = compile_hlo_text(after, devices, xla_options, use_shardy=use_shardy,
                         dropped=dropped)
  for k in dropped:
    xla_options.pop(k, None)
  c = BridgeCompiled(exe, lowered, devices, opt, before, after, xla_options,
                     fixes, time.perf_counter() - t0)
  c.dropped_xla_options = dropped
  c.use_shardy = use_shardy
  return c


def _normalize_static(static_argnums, nargs: int) -> Tuple[int, ...]:
  if static_argnums is None:
    return ()
  if isinstance(static_argnums, int):
    static_argnums = (static_argnums,)
  return tuple(sorted({i + nargs if i < 0 else i for i in static_argnums}))


class BridgeJitted:
  """What `jit` returns: call it like the jax.jit function."""

  def __init__(self, fn: Callable, options, jit_kwargs: Dict[str, Any],
               compile_kwargs: Dict[str, Any]):
    self.fn = fn
    self.options = as_options(options)
    self.jit_kwargs = dict(jit_kwargs)
    self.jit_kwargs.setdefault("keep_unused", True)
    self.compile_kwargs = dict(compile_kwargs)
    self._jitted = _jax().jit(fn, **self.jit_kwargs)
    self._cache: Dict[Any, BridgeCompiled] = {}
    self.last: Optional[BridgeCompiled] = None

  def lower(self, *args, **kwargs):
    return self._jitted.lower(*args, **kwargs)

  def _split(self, args, kwargs):
    statics = _normalize_static(self.jit_kwargs.get("static_argnums"),
                                len(args))
    names = self.jit_kwargs.get("static_argnames") or ()
    if isinstance(names, str):
      names = (names,)
    dyn_args = tuple(a for i, a in enumerate(args) if i not in statics)
    dyn_kwargs = {k: v for k, v in kwargs.items() if k not in names}
    static_key = (tuple(args[i] for i in statics if i < len(args)),
                  tuple(sorted((k, kwargs[k]) for k in names if k in kwargs)))
    return dyn_args, dyn_kwargs, static_key

  def _key(self, dyn_args, dyn_kwargs, static_key):
    jax = _jax()
    leaves, tree = jax.tree_util.tree_flatten((dyn_args, dyn_kwargs))
    sig = []
    for x in leaves:
      if isinstance(x, jax.Array):
        sig.append((tuple(x.shape), str(x.dtype), x.sharding,
                    bool(getattr(x, "weak_type", False))))
      elif hasattr(x, "shape") and hasattr(x, "dtype"):
        sig.append((tuple(x.shape), str(x.dtype)))
      else:
        sig.append(type(x))
    return (static_key, tree, tuple(sig))

  def compile_for(self, *args, **kwargs) -> BridgeCompiled:
    dyn_args, dyn_kwargs, static_key = self._split(args, kwargs)
    key = self._key(dyn_args, dyn_kwargs, static_key)
    c = self._cache.get(key)
    if c is None:
      c = compile(self.lower(*args, **kwargs), self.options,
                  **self.compile_kwargs)
      self._cache[key] = c
    self.last = c
    return c

  def __call__(self, *args, **kwargs):
    c = self.compile_for(*args, **kwargs)
    dyn_args, dyn_kwargs, _ = self._split(args, kwargs)
    return c(*dyn_args, **dyn_kwargs)


def jit(fn: Callable, *, options=None, donate: bool = True,
        use_shardy: Optional[bool] = None, allow_xla_pipelining: bool = False,
        on_error: str = "raise", **jit_kwargs) -> BridgeJitted:
  """Like jax.jit(fn, **jit_kwargs), compiled through hloverlap.

  jit_kwargs go to jax.jit (in_shardings, out_shardings, static_argnums,
  static_argnames, donate_argnums, ...); keep_unused defaults to True so the
  executable's parameters are exactly the flattened dynamic arguments.
  """
  return BridgeJitted(fn, options, jit_kwargs,
                      dict(donate=donate, use_shardy=use_shardy,
                           allow_xla_pipelining=allow_xla_pipelining,
                           on_error=on_error))
