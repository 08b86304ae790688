"""JAX entry points: run hloverlap on a JAX training step, compile the
result with XLA, call it on jax.Arrays -- for shard_map and GSPMD programs.

    import hloverlap
    import hloverlap.jax as hjax

    step = hjax.jit(train_step, in_shardings=..., out_shardings=...,
                    donate_argnums=(0,),
                    options=hloverlap.Options(
                        loops=["op_name~fori_loop:pipeline=off"],
                        memory_budget="4GiB", remarks="remarks.json"))
    loss, params = step(params, batch)      # same call as jax.jit(train_step)

    # or, from a lowering:
    compiled = hjax.compile(jax.jit(f).lower(*args), options)
    out = compiled(*args)

Two routes; the bridge picks one from JAX's lowering
(hloverlap.text.detect_route), the caller does not:

  shard_map (ANCHORS §4): the collectives are explicit in JAX's lowering.
    1. `lowered.as_text(dialect="hlo")`;
    2. `hloverlap opt --preset=... --no-xla-flags-env` (binary.run_opt);
    3. `text.make_route_legal` (copy -> reshape), donors -> aliases;
    4. `jaxlib._hlo.hlo_module_from_text` -> HloModuleProto ->
       `mlir.hlo_to_stablehlo` -> `backend.compile_and_load` with
       num_partitions = #devices, SPMD partitioning on, and
       `hloverlap.xla.BRIDGE_XLA_OPTIONS` as per-compile overrides.
  gspmd (ANCHORS §4b, hloverlap.gspmd): jit shardings only, so XLA's SPMD
    partitioner creates the collectives.
    1. `lowered.compile(...)` once, as jax.jit would (same XLA options),
       dumping XLA's partitioned module; that executable is also the
       fallback and gives jit's input and output shardings;
    2. the module before XLA's collective pipeliner (gspmd.pick_stage),
       shardings stripped;
    3.-4. as above, compiled with the partitioning passes disabled
       (gspmd.DISABLE_PARTITIONING).

Calls: `execute_sharded` on the flattened jax.Arrays (placed on jit's input
shardings where jit knows them), outputs reassembled into jax.Arrays with
jit's output shardings and the lowering's output pytree. Donation: the
module's input/output aliases are kept, and buffer donors are turned into
aliases where shapes (and, before partitioning, Shardy shardings) match, as
XLA would; an aliased donated input is consumed as by jax.jit.

Errors (hloverlap.errors): a stage that fails raises BridgeError naming the
user's function (file:line), the stage, the user's line the failing
instruction came from, and the folder with the files for a report; with
fallback="jit" (the default) the bridge warns (BridgeFallbackWarning,
saying what was lost) and runs jax.jit's compile of the step instead.
`use_shardy` defaults to JAX's `jax_use_shardy_partitioner`.
"""

import contextlib
import json
import os
import re
import shutil
import tempfile
import time
import traceback
import warnings
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from hloverlap import gspmd
from hloverlap import text as hlo
from hloverlap import xla as xla_opts
from hloverlap.binary import OptResult, run_opt, summarize_remarks
from hloverlap.errors import require_jax
from hloverlap.errors import (BridgeError, BridgeFallbackWarning, UserSite,
                              source_hint)
from hloverlap.options import Options, as_options

__all__ = ["jit", "compile", "hlo_text_of", "compile_hlo_text",
           "BridgeCompiled", "FallbackCompiled", "BridgeJitted",
           "BridgeError", "BridgeFallbackWarning"]


def _jax():
  require_jax()
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
  """Compiles an HLO module text for `devices` (routes §4 / §4b).

  Returns jaxlib's LoadedExecutable. XLA options this XLA does not know are
  dropped (listed in `dropped`), see xla.compile_dropping_unknown. For a
  partitioned module pass gspmd.disable_partitioning(xla_options).
  """
  return compile_stablehlo(hlo_text_to_stablehlo(text), devices, xla_options,
                           use_shardy, dropped)


def compile_stablehlo(stable, devices: Sequence[Any],
                      xla_options: Optional[Dict[str, object]] = None,
                      use_shardy: Optional[bool] = None,
                      dropped: Optional[List[str]] = None):
  return xla_opts.compile_dropping_unknown(
      lambda o: _compile_stablehlo(stable, devices, o, use_shardy),
      xla_options or {}, dropped)


def _compile_stablehlo(stable, devices, xla_options, use_shardy):
  import numpy as np  # pylint: disable=g-import-not-at-top
  _, _, xc, get_backend = _xla_modules()
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



def _leaves(tree) -> Optional[List[Any]]:
  if tree is None:
    return None
  try:
    return list(_jax().tree_util.tree_leaves(
        tree, is_leaf=lambda x: x is None))
  except TypeError:  # a tree_leaves without is_leaf
    return list(_jax().tree_util.tree_leaves(tree))


def _same_sharding(a, b, ndim: int) -> bool:
  if a is b or a == b:
    return True
  try:
    return bool(a.is_equivalent_to(b, ndim))
  except Exception:  # pylint: disable=broad-except
    return False



def executable_hlo_text(executable) -> str:
  """XLA's final module of a compiled executable: the optimized HLO that XLA
  runs (fused, scheduled, with its async wrappers and cuBLAS custom-calls),
  what `hloverlap sim` predicts a step from. jaxlib's LoadedExecutable
  (`hlo_modules()`) or a jax.stages.Compiled (`as_text()`)."""
  modules = getattr(executable, "hlo_modules", None)
  if modules is not None:
    texts = []
    for m in modules():
      to_string = getattr(m, "to_string", None)
      texts.append(to_string() if to_string is not None else str(m))
    return "\n".join(texts)
  return executable.as_text()


class BridgeCompiled:
  """A compiled step: call it like the jax.jit function (dynamic args).

  route: "shard_map" or "gspmd" (route_reason says why); stage: the XLA
  dump stage hloverlap worked on (gspmd), else None; hlo_before /
  hlo_after: hloverlap's input and output; lowering_text: JAX's lowering;
  timings: seconds per stage (jit_compile_s is the GSPMD route's jax.jit
  compile that dumps XLA's partitioned module).
  """

  def __init__(self, executable, lowered, devices, opt: Optional[OptResult],
               hlo_before: str, hlo_after: str, xla_options: Dict[str, object],
               fixes: List[str], compile_seconds: float, *,
               route: str = "shard_map", route_reason: str = "",
               stage: Optional[str] = None, lowering_text: Optional[str] = None,
               in_shardings: Optional[List[Any]] = None,
               out_shardings: Optional[List[Any]] = None,
               aliases: Sequence[Tuple[int, int]] = (),
               timings: Optional[Dict[str, float]] = None,
               keep_dir: Optional[str] = None):
    self.executable = executable
    self.lowered = lowered
    self.devices = list(devices)
    self.opt_result = opt
    self.remarks = list(opt.remarks) if opt is not None else []
    self.hlo_before = hlo_before
    self.hlo_after = hlo_after
    self.lowering_text = lowering_text
    self.xla_options = dict(xla_options)
    self.fixes = list(fixes)
    self.compile_seconds = compile_seconds
    self.route = route
    self.route_reason = route_reason
    self.stage = stage
    self.aliases = list(aliases)
    self.timings = dict(timings or {})
    self.keep_dir = keep_dir
    self.error = None
    self.dropped_xla_options: List[str] = []
    self.use_shardy = None
    self.in_tree = lowered.in_tree
    self.out_tree = lowered.out_tree
    self._kept = _kept_var_idx(lowered)
    self._out_info = _jax().tree_util.tree_leaves(lowered.out_info)
    self._in_shardings = in_shardings
    self._out_shardings = out_shardings  # else resolved on the first call
    self.sharding_source = "jit-compile" if out_shardings else None
    self._final_hlo: Optional[str] = None

  def remark_counts(self) -> Dict[str, int]:
    return summarize_remarks(self.remarks)

  def final_hlo(self) -> str:
    """XLA's final module of the step compiled from hloverlap's output (the
    executable's optimized HLO): `hloverlap sim` on it predicts the step as
    XLA runs it; hlo_after is the module before XLA fused it."""
    if self._final_hlo is None:
      self._final_hlo = executable_hlo_text(self.executable)
    return self._final_hlo

  def summary(self) -> Dict[str, Any]:
    """What the compile did, as JSON-able values (also in bridge.json)."""
    return dict(route=self.route, route_reason=self.route_reason,
                stage=self.stage, remarks=self.remark_counts(),
                fixes=len(self.fixes), aliases=self.aliases,
                dropped_xla_options=self.dropped_xla_options,
                xla_options=self.xla_options, timings=self.timings,
                hloverlap_args=self.opt_result.args[1:]
                if self.opt_result else None)

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

  def _place(self, leaves):
    """Non-Arrays onto devices; Arrays onto jit's input sharding where it
    is known and they are not on it (jax.jit would reshard or refuse)."""
    jax = _jax()
    shs = self._in_shardings
    if shs is not None and len(shs) != len(leaves):
      shs = None
    out = []
    for i, x in enumerate(leaves):
      s = shs[i] if shs is not None else None
      if not isinstance(x, jax.Array):
        x = jax.device_put(x, s) if s is not None else jax.device_put(x)
      elif s is not None and not _same_sharding(
          getattr(x, "sharding", None), s, len(getattr(x, "shape", ()))):
        x = jax.device_put(x, s)
      out.append(x)
    return out

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
    leaves = self._place(leaves)
    results = self.executable.execute_sharded(leaves)
    per_out = results.disassemble_into_single_device_arrays()
    if self._out_shardings is None:
      self._out_shardings = self._resolve_out_shardings(per_out)
    outs = [jax.make_array_from_single_device_arrays(
                tuple(info.shape), sh, list(arrs))
            for info, sh, arrs in zip(self._out_info, self._out_shardings,
                                      per_out)]
    return jax.tree_util.tree_unflatten(self.out_tree, outs)


class FallbackCompiled:
  """jax.jit's own compile of the step, used when the bridge failed
  (`error` is the BridgeError; the warning said what was lost)."""

  route = "jax.jit"

  def __init__(self, compiled, error: BridgeError, xla_options, seconds):
    self.compiled = compiled
    self.error = error
    self.xla_options = dict(xla_options)
    self.compile_seconds = seconds
    self.remarks: List[dict] = []
    self.opt_result = None
    self.stage = None
    self.keep_dir = error.keep_dir
    self.timings = {"total_s": seconds}

  def remark_counts(self) -> Dict[str, int]:
    return {}

  def final_hlo(self) -> str:
    """XLA's final module of jax.jit's own compile."""
    return executable_hlo_text(self.compiled)

  def summary(self) -> Dict[str, Any]:
    return dict(route=self.route, failed_stage=self.error.stage,
                error=str(self.error), timings=self.timings)

  def __call__(self, *args, **kwargs):
    return self.compiled(*args, **kwargs)


# --- one compile ------------------------------------------------------------
class _StageFailed(Exception):

  def __init__(self, stage: str, cause: BaseException,
               module_text: Optional[str] = None,
               module_path: Optional[str] = None, fallback=None):
    super().__init__(stage)
    self.stage = stage
    self.cause = cause
    self.module_text = module_text
    self.module_path = module_path
    self.fallback = fallback  # an already compiled jax.jit executable


@contextlib.contextmanager
def _stage(name: str, module_text: Optional[str] = None,
           module_path: Optional[str] = None, fallback=None):
  try:
    yield
  except _StageFailed:
    raise
  except Exception as e:  # pylint: disable=broad-except
    raise _StageFailed(name, e, module_text, module_path, fallback) from e


@contextlib.contextmanager
def _without_persistent_cache():
  """A persistent-cache hit would compile nothing, hence dump nothing."""
  cfg = getattr(_jax(), "config", None)
  old = None
  try:
    if getattr(cfg, "jax_compilation_cache_dir", None):
      old = cfg.jax_enable_compilation_cache
      cfg.update("jax_enable_compilation_cache", False)
  except Exception:  # pylint: disable=broad-except
    old = None
  try:
    yield
  finally:
    if old is not None:
      try:
        cfg.update("jax_enable_compilation_cache", old)
      except Exception:  # pylint: disable=broad-except
        pass


def _jit_compile(lowered, xla_options, dropped=None):
  return xla_opts.compile_dropping_unknown(
      lambda o: lowered.compile(compiler_options=o), xla_options, dropped)


def _write(path: str, text: str) -> None:
  with open(path, "w") as f:
    f.write(text)


def _what_is_lost(opts: Options) -> str:
  what = ("--passes=" + opts.passes_arg() if opts.passes_arg() is not None
          else "--preset=" + str(opts.preset))
  return ("hloverlap's rewrites ({}: hoisted / pipelined collectives); the "
          "step is compiled by XLA alone, with the same XLA options "
          "(its latency hiding scheduler, its own collective pipelining "
          "as XLA_FLAGS set it)".format(what))


def compile(lowered, options=None, *, donate: bool = True,  # pylint: disable=redefined-builtin
            use_shardy: Optional[bool] = None,
            allow_xla_pipelining: bool = False,
            fallback: Optional[str] = "jit", fn: Optional[Callable] = None,
            route: str = "auto"):
  """hloverlap + XLA compile of a jax.stages.Lowered (see module comment).

  options: hloverlap.Options or a dict of its fields. donate=False drops
  the module's buffer donation. fallback="jit": when a stage fails, warn
  and return jax.jit's compile of the lowering (a FallbackCompiled);
  fallback=None: raise BridgeError. fn: the user's function (named in
  errors). route: "auto" (detect), "shard_map" or "gspmd".
  """
  if fallback not in (None, "jit"):
    raise ValueError("fallback must be 'jit' or None, not {!r}".format(
        fallback))
  opts = as_options(options)
  opts.validate()
  t0 = time.perf_counter()
  before = hlo_text_of(lowered)
  site = UserSite.of(fn, before)
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
  devices = _devices_of(lowered, before)
  if route == "auto":
    decision = hlo.detect_route(before, len(devices))
  elif route in ("shard_map", "gspmd"):
    decision = hlo.RouteDecision(route, "chosen by the caller")
  else:
    raise ValueError("route must be 'auto', 'shard_map' or 'gspmd'")
  work = opts.keep_dir or tempfile.mkdtemp(prefix="hloverlap-{}-".format(
      re.sub(r"[^\w.-]+", "_", site.name)[:40]))
  os.makedirs(work, exist_ok=True)
  record: Dict[str, Any] = dict(function=str(site), route=decision.route,
                                route_reason=decision.reason,
                                devices=len(devices))
  state: Dict[str, Any] = {}
  try:
    c = _compile_route(lowered, before, decision, opts, xla_options,
                       devices, use_shardy, donate, work, state)
  except _StageFailed as f:
    hint = source_hint(str(f.cause), f.module_text, f.module_path)
    err = BridgeError(site, f.stage, "{}: {}".format(
        type(f.cause).__name__, f.cause), decision.route,
                      state.get("route_detail"), work, hint)
    record.update(failed_stage=f.stage, error=str(err),
                  traceback=traceback.format_exception(
                      type(f.cause), f.cause, f.cause.__traceback__)[-12:])
    _write(os.path.join(work, "bridge.json"),
           json.dumps(record, indent=1, default=str))
    if fallback is None:
      raise err from f.cause
    t1 = time.perf_counter()
    fb = f.fallback
    if fb is None:
      try:
        fb = _jit_compile(lowered, xla_options)
      except Exception as e2:  # pylint: disable=broad-except
        raise BridgeError(site, f.stage, "{}\n(and jax.jit's own compile, "
                          "the fallback, failed too: {})".format(
                              err.cause, e2), decision.route,
                          state.get("route_detail"), work, hint) from e2
    warnings.warn(err.fallback_message(_what_is_lost(opts)),
                  BridgeFallbackWarning, stacklevel=3)
    return FallbackCompiled(fb, err, xla_options,
                            time.perf_counter() - t1 +
                            state.get("jit_compile_s", 0.0))
  c.compile_seconds = time.perf_counter() - t0
  c.timings["total_s"] = round(c.compile_seconds, 3)
  c.use_shardy = use_shardy
  c.keep_dir = opts.keep_dir
  if opts.keep_dir:
    record.update(c.summary())
    _write(os.path.join(work, "bridge.json"),
           json.dumps(record, indent=1, default=str))
  else:
    shutil.rmtree(work, ignore_errors=True)
  return c


def _compile_route(lowered, jax_text, decision, opts, xla_options, devices,
                   use_shardy, donate, work, state) -> BridgeCompiled:
  timings: Dict[str, float] = {}
  stage_label, jit_exe, fb = None, None, None
  in_shardings = out_shardings = None
  route_opts = dict(xla_options)
  dropped: List[str] = []
  if decision.route == "gspmd":
    dump_dir = os.path.join(work, "xla_dump")
    shutil.rmtree(dump_dir, ignore_errors=True)
    t = time.perf_counter()
    with _stage("dump"):
      with _without_persistent_cache():
        jit_exe = _jit_compile(lowered, dict(xla_options,
                                             **gspmd.dump_options(dump_dir)),
                               dropped)
    timings["jit_compile_s"] = round(time.perf_counter() - t, 3)
    state["jit_compile_s"] = timings["jit_compile_s"]
    fb = jit_exe
    with _stage("dump", fallback=fb):
      files = gspmd.dump_files(dump_dir, hlo.module_name(jax_text))
      try:
        stage = gspmd.pick_stage(files, len(devices))
      except gspmd.StageNotFound as e:
        names = sorted(os.listdir(dump_dir)) if os.path.isdir(dump_dir) \
            else []
        raise gspmd.StageNotFound("{} [dump files: {}]".format(
            e, ", ".join(names[:8]) or "none")) from None
      stage_label = stage.label
      state["route_detail"] = "XLA's partitioned module, dump stage " + \
          stage.label
      with open(stage.path) as f:
        partitioned = f.read()
      _write(os.path.join(work, "partitioned.hlo"), partitioned)
      in_shardings = _leaves(getattr(jit_exe, "input_shardings", None))
      out_shardings = _leaves(getattr(jit_exe, "output_shardings", None))
    hlo_in = hlo.strip_shardings(partitioned)
    route_opts = gspmd.disable_partitioning(
        {k: v for k, v in xla_options.items() if k not in dropped})
  else:
    hlo_in = jax_text
  in_path = os.path.join(work, "before.hlo")
  t = time.perf_counter()
  with _stage("hloverlap", hlo_in, in_path, fb):
    opt = run_opt(hlo_in, opts.replace(keep_dir=work))
  timings["hloverlap_s"] = round(time.perf_counter() - t, 3)
  after = opt.text
  out_path = os.path.join(work, "after.hlo")
  t = time.perf_counter()
  fixes: List[str] = []
  aliases: List[Tuple[int, int]] = []
  with _stage("route-fixups", after, out_path, fb):
    if opts.route_fixups:
      after, fixes = hlo.make_route_legal(after)
    if not donate:
      after = hlo.strip_buffer_donor(after)
    elif decision.route == "gspmd":
      after, aliases = hlo.donors_to_aliases(after)
    else:
      after, aliases = hlo.donors_to_aliases(
          after, *hlo.shard_map_sharding_keys(after))
  route_path = os.path.join(work, "after_route.hlo")
  _write(route_path, after)
  with _stage("stablehlo", after, route_path, fb):
    stable = hlo_text_to_stablehlo(after)
  timings["prepare_s"] = round(time.perf_counter() - t, 3)
  t = time.perf_counter()
  with _stage("xla-compile", after, route_path, fb):
    exe = compile_stablehlo(stable, devices, route_opts, use_shardy, dropped)
  timings["xla_compile_s"] = round(time.perf_counter() - t, 3)
  for k in dropped:
    route_opts.pop(k, None)
  c = BridgeCompiled(exe, lowered, devices, opt, hlo_in, after, route_opts,
                     fixes, 0.0, route=decision.route,
                     route_reason=decision.reason, stage=stage_label,
                     lowering_text=jax_text, in_shardings=in_shardings,
                     out_shardings=out_shardings, aliases=aliases,
                     timings=timings)
  c.dropped_xla_options = sorted(set(dropped))
  return c


# --- jit ----------------------------------------------------------------------
def _normalize_static(static_argnums, nargs: int) -> Tuple[int, ...]:
  if static_argnums is None:
    return ()
  if isinstance(static_argnums, int):
    static_argnums = (static_argnums,)
  return tuple(sorted({i + nargs if i < 0 else i for i in static_argnums}))


class BridgeJitted:
  """What `jit` returns: call it like the jax.jit function.

  One compile per argument signature (static arguments, pytree structure,
  and each leaf's shape, dtype, sharding and weak type), as jax.jit;
  `compiles` counts them, `last` is the latest compiled step (a
  BridgeCompiled, or a FallbackCompiled after a fallback).
  """

  def __init__(self, fn: Callable, options, jit_kwargs: Dict[str, Any],
               compile_kwargs: Dict[str, Any]):
    self.fn = fn
    self.options = as_options(options)
    self.jit_kwargs = dict(jit_kwargs)
    self.jit_kwargs.setdefault("keep_unused", True)
    self.compile_kwargs = dict(compile_kwargs)
    self._jitted = _jax().jit(fn, **self.jit_kwargs)
    self._cache: Dict[Any, Any] = {}
    self.last = None
    self.compiles = 0
    try:
      self.__wrapped__ = fn
      self.__name__ = getattr(fn, "__name__", "step")
      self.__qualname__ = getattr(fn, "__qualname__", self.__name__)
    except Exception:  # pylint: disable=broad-except
      pass

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
        sig.append((tuple(x.shape), str(x.dtype),
                    getattr(x, "sharding", None)))
      else:
        sig.append(type(x))
    return (static_key, tree, tuple(sig))

  def compile_for(self, *args, **kwargs):
    dyn_args, dyn_kwargs, static_key = self._split(args, kwargs)
    key = self._key(dyn_args, dyn_kwargs, static_key)
    c = self._cache.get(key)
    if c is None:
      c = compile(self.lower(*args, **kwargs), self.options, fn=self.fn,
                  **self.compile_kwargs)
      self.compiles += 1
      self._cache[key] = c
    self.last = c
    return c

  def __call__(self, *args, **kwargs):
    c = self.compile_for(*args, **kwargs)
    dyn_args, dyn_kwargs, _ = self._split(args, kwargs)
    return c(*dyn_args, **dyn_kwargs)


def jit(fn: Callable, *, options=None, donate: bool = True,
        use_shardy: Optional[bool] = None, allow_xla_pipelining: bool = False,
        fallback: Optional[str] = "jit", **jit_kwargs) -> BridgeJitted:
  """Like jax.jit(fn, **jit_kwargs), compiled through hloverlap.

  jit_kwargs go to jax.jit (in_shardings, out_shardings, static_argnums,
  static_argnames, donate_argnums, ...); keep_unused defaults to True so the
  executable's parameters are exactly the flattened dynamic arguments.
  shard_map and GSPMD programs alike (the route is detected). fallback:
  "jit" (warn and run jax.jit's compile when a stage fails) or None (raise
  hloverlap.errors.BridgeError).
  """
  require_jax("hloverlap.jax.jit")
  return BridgeJitted(fn, options, jit_kwargs,
                      dict(donate=donate, use_shardy=use_shardy,
                           allow_xla_pipelining=allow_xla_pipelining,
                           fallback=fallback))
