"""JAX entry points: run hloverlap on a JAX training step, compile the
result with XLA, call it on jax.Arrays -- for shard_map and GSPMD programs.

    import hloverlap
    import hloverlap.jax as hjax

    step = hjax.jit(train_step, in_shardings=..., out_shardings=...,
                    donate_argnums=(0,),
                    options=hloverlap.Options(
                        loops=["outermost:pipeline=off"],
                        memory_budget="4GiB", remarks="remarks.json"))
    loss, params = step(params, batch)      # same call as jax.jit(train_step)

    # or, from a lowering:
    compiled = hjax.compile(jax.jit(f).lower(*args), options)
    out = compiled(*args)

What is compiled is chosen on what XLA will run (Options.preset="plan", the
default; hloverlap.plan): every candidate (cleanup, hoist, pipeline,
hoist-pipeline; XLA's double buffering off/on; pipeliner depth 2) goes
through steps 2-4 below, in threads, and `hloverlap sim` of each
executable's optimized module (with XLA's memory analysis) decides;
`compiled.plan` keeps the table. A fixed preset runs steps 2-4 once.

Two routes; the bridge picks one from JAX's lowering
(hloverlap.text.detect_route), the caller does not:

  shard_map (ANCHORS §4): the collectives are explicit in JAX's lowering.
    1. `lowered.as_text(dialect="hlo")`;
    2. `hloverlap opt --preset=... --no-xla-flags-env` (binary.run_opt);
    3. `hloverlap opt --passes=copy-to-reshape,donors-to-aliases{...}`
       (the tool's route fixups, src/passes/route_fixups.h: copies ->
       reshapes, buffer donors -> aliases; or strip-buffer-donor without
       donation);
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
       shardings stripped (`hloverlap opt --passes=strip-shardings`);
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
import dataclasses
import hashlib
import json
import logging
import os
import re
import shutil
import tempfile
import time
import traceback
import warnings
from typing import (Any, Callable, Dict, List, Mapping, Optional, Sequence,
                    Tuple)

from hloverlap import gspmd
from hloverlap import text as hlo
from hloverlap import xla as xla_opts
from hloverlap import plan as plan_mod
from hloverlap import sim as sim_mod
from hloverlap.binary import (OptResult, check_options, known_presets,
                              run_checked, summarize_remarks, write_remarks)
from hloverlap.errors import require_jax
from hloverlap.errors import (BridgeError, BridgeFallbackWarning, UserSite,
                              source_hint)
from hloverlap.options import Options, as_options, parse_byte_size

__all__ = ["jit", "compile", "hlo_text_of", "compile_hlo_text",
           "BridgeCompiled", "FallbackCompiled", "BridgeJitted",
           "BridgeError", "BridgeFallbackWarning", "PlanWarning"]


_LOG = logging.getLogger("hloverlap")
# What XLA:GPU does to a candidate after hloverlap, as the CLI planner
# models it (the tail of the xla-gpu preset).
ESTIMATE_TAIL = "async-collectives,latency-hiding-scheduler"


class PlanWarning(UserWarning):
  """A fixed preset that the planner's cached choice beats by more than
  10% (hloverlap.plan.WARN_SLOWER_FRACTION)."""


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
  _, _, xc, get_backend = _xla_modules()
  opts = _compile_options(devices, xla_options, use_shardy)
  backend = get_backend()
  return backend.compile_and_load(stable, xc.DeviceList(tuple(devices)), opts)


def _compile_options(devices, xla_options, use_shardy):
  """jaxlib CompileOptions of the route: one replica, one partition per
  device, SPMD partitioning on (ANCHORS §4)."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  _, _, xc, _ = _xla_modules()
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
  return opts


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

  def __init__(self, *, executable, lowered, devices,
               opt: Optional[OptResult], hlo_before: str, hlo_after: str,
               xla_options: Dict[str, object], fixes: Sequence[str],
               compile_seconds: float, route: str, route_reason: str,
               stage: Optional[str], lowering_text: Optional[str],
               in_shardings: Optional[List[Any]],
               out_shardings: Optional[List[Any]],
               aliases: Sequence[Tuple[int, int]],
               timings: Mapping[str, float], keep_dir: Optional[str],
               dropped_xla_options: Sequence[str],
               use_shardy: Optional[bool],
               plan: Optional[plan_mod.Plan] = None,
               final_hlo: Optional[str] = None):
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
    self.timings = dict(timings)
    self.keep_dir = keep_dir
    self.error = None
    self.dropped_xla_options = list(dropped_xla_options)
    self.use_shardy = use_shardy
    self.in_tree = lowered.in_tree
    self.out_tree = lowered.out_tree
    self._kept = _kept_var_idx(lowered)
    self._out_info = _jax().tree_util.tree_leaves(lowered.out_info)
    self._in_shardings = in_shardings
    self._out_shardings = out_shardings  # else resolved on the first call
    self.sharding_source = "jit-compile" if out_shardings else None
    self._final_hlo = final_hlo
    self.plan = plan  # the planner's table

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
                if self.opt_result else None,
                plan=self.plan.as_dict() if self.plan is not None else None,
                plan_summary=self.plan.summary_line()
                if self.plan is not None else None)

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
  plan = None

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
  """A stage of the bridge failed; `route` is what was known of the route
  by then (the GSPMD dump compile, its stage and time), or None."""

  def __init__(self, stage: str, cause: BaseException,
               module_text: Optional[str] = None,
               module_path: Optional[str] = None,
               route: Optional["_Route"] = None):
    super().__init__("{}: {}: {}".format(stage, type(cause).__name__, cause))
    self.stage = stage
    self.cause = cause
    self.module_text = module_text
    self.module_path = module_path
    self.route = route

  @property
  def fallback(self):
    """An already compiled jax.jit executable (GSPMD route), or None."""
    return self.route.fallback if self.route is not None else None


@contextlib.contextmanager
def _stage(name: str, module_text: Optional[str] = None,
           module_path: Optional[str] = None,
           route: Optional["_Route"] = None):
  try:
    yield
  except _StageFailed:
    raise
  except Exception as e:  # pylint: disable=broad-except
    raise _StageFailed(name, e, module_text, module_path, route) from e


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
  opts, exe = check_options(options)
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
  job = _Job(lowered=lowered, jax_text=before, decision=decision, opts=opts,
             exe=exe, xla_options=xla_options, devices=devices,
             use_shardy=use_shardy, donate=donate, work=work)
  record: Dict[str, Any] = dict(function=str(site), route=decision.route,
                                route_reason=decision.reason,
                                devices=len(devices))
  try:
    run = _run_plan(job) if opts.plans() else _run_fixed(job)
  except _StageFailed as f:
    return _fall_back(job, f, site, record, fallback)
  c = _compiled(job, run, time.perf_counter() - t0)
  if c.plan is not None:
    record["plan"] = c.plan.as_dict()
    _LOG.info("%s", c.plan.summary_line())
  else:
    _warn_if_plan_faster(job)
  if opts.keep_dir:
    record.update(c.summary())
    _write(os.path.join(work, "bridge.json"),
           json.dumps(record, indent=1, default=str))
  else:
    shutil.rmtree(work, ignore_errors=True)
  return c


def _fall_back(job: "_Job", f: _StageFailed, site: UserSite,
               record: Dict[str, Any], fallback: Optional[str]):
  """A failed stage: bridge.json, then BridgeError (fallback=None) or
  jax.jit's compile with a warning (a FallbackCompiled)."""
  detail = f.route.detail if f.route is not None else None
  dump_s = (f.route.timings.get("jit_compile_s", 0.0)
            if f.route is not None else 0.0)
  hint = source_hint(str(f.cause), f.module_text, f.module_path)
  err = BridgeError(site, f.stage, "{}: {}".format(
      type(f.cause).__name__, f.cause), job.decision.route, detail, job.work,
                    hint)
  record.update(failed_stage=f.stage, error=str(err),
                traceback=traceback.format_exception(
                    type(f.cause), f.cause, f.cause.__traceback__)[-12:])
  _write(os.path.join(job.work, "bridge.json"),
         json.dumps(record, indent=1, default=str))
  if fallback is None:
    raise err from f.cause
  t1 = time.perf_counter()
  fb = f.fallback
  if fb is None:
    try:
      fb = _jit_compile(job.lowered, job.xla_options)
    except Exception as e2:  # pylint: disable=broad-except
      raise BridgeError(site, f.stage, "{}\n(and jax.jit's own compile, "
                        "the fallback, failed too: {})".format(
                            err.cause, e2), job.decision.route, detail,
                        job.work, hint) from e2
  warnings.warn(err.fallback_message(_what_is_lost(job.opts)),
                BridgeFallbackWarning, stacklevel=4)
  return FallbackCompiled(fb, err, job.xla_options,
                          time.perf_counter() - t1 + dump_s)


@dataclasses.dataclass(frozen=True)
class _Job:
  """One compile's inputs, the same for the route and every candidate:
  the options (validated once, binary.check_options) and the binary."""
  lowered: Any
  jax_text: str  # JAX's lowering
  decision: hlo.RouteDecision
  opts: Options
  exe: str  # the hloverlap binary
  xla_options: Dict[str, object]  # the bridge's (xla.bridge_options)
  devices: List[Any]
  use_shardy: Optional[bool]
  donate: bool
  work: str  # the folder of the compile's files


@dataclasses.dataclass(frozen=True)
class _Route:
  """What every candidate of one compile shares: the module hloverlap
  reads, the XLA options of the route's compile, and (GSPMD) jax.jit's
  dump compile with its shardings."""
  decision: Any
  jax_text: str
  hlo_in: str
  xla_options: Dict[str, object]
  stage: Optional[str] = None
  fallback: Any = None  # jax.jit's executable (the GSPMD dump compile)
  in_shardings: Optional[List[Any]] = None
  out_shardings: Optional[List[Any]] = None
  dropped: List[str] = dataclasses.field(default_factory=list)
  timings: Dict[str, float] = dataclasses.field(default_factory=dict)

  @property
  def detail(self) -> Optional[str]:
    """What hloverlap works on, for error messages (GSPMD route)."""
    if self.stage is None:
      return None
    return "XLA's partitioned module, dump stage " + self.stage


@dataclasses.dataclass
class _Built:
  """One candidate after hloverlap and the route fixups."""
  opt: OptResult
  after: str  # the module text handed to XLA
  fixes: List[str]
  aliases: List[Tuple[int, int]]
  route_path: str
  timings: Dict[str, float]


@dataclasses.dataclass(frozen=True)
class _RouteRun:
  """What a route's run made (one fixed pipeline, the planner's choice or
  a cached choice): BridgeCompiled is built from it."""
  route: _Route
  built: _Built
  executable: Any
  xla_used: Dict[str, object]  # the XLA options the compile took
  dropped: List[str]  # the ones XLA did not know
  plan: Optional[plan_mod.Plan] = None
  final_hlo: Optional[str] = None  # XLA's final module, where known
  timings: Dict[str, float] = dataclasses.field(default_factory=dict)


def _compiled(job: _Job, run: _RouteRun, seconds: float) -> BridgeCompiled:
  route, built = run.route, run.built
  timings = dict(route.timings)
  timings.update(built.timings)
  timings.update(run.timings)
  timings["total_s"] = round(seconds, 3)
  return BridgeCompiled(
      executable=run.executable, lowered=job.lowered, devices=job.devices,
      opt=built.opt, hlo_before=route.hlo_in, hlo_after=built.after,
      xla_options=run.xla_used, fixes=built.fixes, compile_seconds=seconds,
      route=route.decision.route, route_reason=route.decision.reason,
      stage=route.stage, lowering_text=route.jax_text,
      in_shardings=route.in_shardings, out_shardings=route.out_shardings,
      aliases=built.aliases, timings=timings, keep_dir=job.opts.keep_dir,
      dropped_xla_options=sorted(set(run.dropped) | set(route.dropped)),
      use_shardy=job.use_shardy, plan=run.plan, final_hlo=run.final_hlo)


def _prepare_route(job: _Job) -> _Route:
  """The module hloverlap works on (GSPMD: XLA's partitioned module, from a
  jax.jit compile that dumps it; shard_map: JAX's lowering)."""
  if job.decision.route != "gspmd":
    return _Route(job.decision, job.jax_text, job.jax_text,
                  dict(job.xla_options))
  dropped: List[str] = []
  dump_dir = os.path.join(job.work, "xla_dump")
  shutil.rmtree(dump_dir, ignore_errors=True)
  t = time.perf_counter()
  with _stage("dump"):
    with _without_persistent_cache():
      jit_exe = _jit_compile(job.lowered, dict(
          job.xla_options, **gspmd.dump_options(dump_dir)), dropped)
  dumped = _Route(job.decision, job.jax_text, job.jax_text, {},
                  fallback=jit_exe, dropped=dropped, timings={
                      "jit_compile_s": round(time.perf_counter() - t, 3)})
  with _stage("dump", route=dumped):
    files = gspmd.dump_files(dump_dir, hlo.module_name(job.jax_text))
    try:
      stage = gspmd.pick_stage(files, len(job.devices))
    except gspmd.StageNotFound as e:
      names = sorted(os.listdir(dump_dir)) if os.path.isdir(dump_dir) \
          else []
      raise gspmd.StageNotFound("{} [dump files: {}]".format(
          e, ", ".join(names[:8]) or "none")) from None
  dumped = dataclasses.replace(dumped, stage=stage.label)
  with _stage("dump", route=dumped):
    with open(stage.path) as f:
      partitioned = f.read()
    _write(os.path.join(job.work, "partitioned.hlo"), partitioned)
    in_shardings = _leaves(getattr(jit_exe, "input_shardings", None))
    out_shardings = _leaves(getattr(jit_exe, "output_shardings", None))
  route_opts = gspmd.disable_partitioning(
      {k: v for k, v in job.xla_options.items() if k not in dropped})
  # Partitioning is off in the route's compile: the shardings are only
  # annotations, dropped by the tool's strip-shardings pass.
  folder = os.path.join(job.work, "strip-shardings")
  with _stage("hloverlap", partitioned, os.path.join(folder, "before.hlo"),
              dumped):
    stripped = _run_route_passes(job, partitioned, ["strip-shardings"],
                                 folder).text
  return dataclasses.replace(
      dumped, hlo_in=stripped, xla_options=route_opts,
      in_shardings=in_shardings, out_shardings=out_shardings)


def _run_route_passes(job: _Job, module_text: str, passes: Sequence[str],
                      folder: str) -> OptResult:
  """A cheap `hloverlap opt` of the route's own passes (route_fixups.h:
  value identities, proven by their lit tests, so not verified again here)
  on `module_text`, its files in `folder`."""
  return run_checked(module_text, job.opts.replace(
      preset=None, passes=",".join(passes), loops=[], remarks=None,
      memory_budget=None, pipeline_depth=None, verify=False, extra_args=(),
      keep_dir=folder), job.exe)


def _build(job: _Job, route: _Route, opts: Options, work: str) -> _Built:
  """hloverlap opt (`opts`: the job's, or a candidate's), then the fixups
  the StableHLO route needs."""
  timings: Dict[str, float] = {}
  in_path = os.path.join(work, "before.hlo")
  t = time.perf_counter()
  with _stage("hloverlap", route.hlo_in, in_path, route):
    opt = run_checked(route.hlo_in, opts.replace(keep_dir=work), job.exe)
  timings["hloverlap_s"] = round(time.perf_counter() - t, 3)
  after = opt.text
  out_path = os.path.join(work, "after.hlo")
  t = time.perf_counter()
  fixes: List[str] = []
  aliases: List[Tuple[int, int]] = []
  passes = ["copy-to-reshape"] if opts.route_fixups else []
  if not job.donate:
    passes.append("strip-buffer-donor")
  elif route.decision.route == "gspmd":  # XLA's per-device module
    passes.append("donors-to-aliases")
  else:  # before partitioning: shapes are global, shardings must agree too
    passes.append("donors-to-aliases{match=shardy}")
  with _stage("route-fixups", after, out_path, route):
    fixed = _run_route_passes(job, after, passes,
                              os.path.join(work, "route-fixups"))
    after = fixed.text
    fixes = [str(r.get("message", "")) for r in fixed.remarks
             if r.get("name") == "CopyAsReshape"]
    aliases = [(int(m.get("output", -1)), int(m.get("parameter", -1)))
               for m in (r.get("metrics") or {} for r in fixed.remarks
                         if r.get("name") == "DonorAliased")]
  route_path = os.path.join(work, "after_route.hlo")
  _write(route_path, after)
  timings["prepare_s"] = round(time.perf_counter() - t, 3)
  return _Built(opt, after, fixes, aliases, route_path, timings)


def _compile_built(job: _Job, route: _Route, built: _Built,
                   extra_xla: Optional[Mapping[str, object]] = None):
  """XLA's compile of a built candidate: (executable, XLA options used,
  options XLA did not know)."""
  opts = dict(route.xla_options, **dict(extra_xla or {}))
  dropped: List[str] = []
  t = time.perf_counter()
  with _stage("stablehlo", built.after, built.route_path, route):
    stable = hlo_text_to_stablehlo(built.after)
  built.timings["prepare_s"] = round(
      built.timings.get("prepare_s", 0.0) + time.perf_counter() - t, 3)
  t = time.perf_counter()
  with _stage("xla-compile", built.after, built.route_path, route):
    exe = compile_stablehlo(stable, job.devices, opts, job.use_shardy,
                            dropped)
  built.timings["xla_compile_s"] = round(time.perf_counter() - t, 3)
  for k in dropped:
    opts.pop(k, None)
  return exe, opts, dropped


def _run_fixed(job: _Job) -> _RouteRun:
  """One fixed preset (or pass list): the route, hloverlap, XLA."""
  route = _prepare_route(job)
  built = _build(job, route, job.opts, job.work)
  exe, used, dropped = _compile_built(job, route, built)
  return _RouteRun(route, built, exe, used, dropped)


# --- planning (hloverlap.plan) --------------------------------------------
def _slug(name: str) -> str:
  return re.sub(r"[^\w.-]+", "_", name)


def _peak_bytes(exe) -> Optional[int]:
  """The executable's peak device memory from XLA's memory analysis
  (arguments + outputs - aliased + temporaries + code, or XLA's own peak
  where this jaxlib reports one)."""
  try:
    st = exe.get_compiled_memory_stats()
  except Exception:  # pylint: disable=broad-except
    return None
  peak = getattr(st, "peak_memory_in_bytes", 0) or 0
  if peak > 0:
    return int(peak)
  parts = [getattr(st, k, 0) or 0 for k in (
      "argument_size_in_bytes", "output_size_in_bytes",
      "temp_size_in_bytes", "generated_code_size_in_bytes")]
  total = sum(parts) - (getattr(st, "alias_size_in_bytes", 0) or 0)
  return int(total) if total > 0 else None


def _device_memory_bytes(devices) -> Optional[int]:
  try:
    stats = devices[0].memory_stats() or {}
    limit = stats.get("bytes_limit")
    return int(limit) if limit else None
  except Exception:  # pylint: disable=broad-except
    return None


_VERSIONS: Dict[str, str] = {}


def _tool_version(exe: str) -> str:
  """`hloverlap --version` plus the binary's size and mtime (a rebuilt
  binary plans again)."""
  import subprocess  # pylint: disable=g-import-not-at-top
  st = os.stat(exe)
  key = "{}:{}:{}".format(exe, st.st_size, st.st_mtime_ns)
  if key not in _VERSIONS:
    try:
      out = subprocess.run([exe, "--version"], capture_output=True,
                           text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
      out = "?"
    _VERSIONS[key] = "{} ({} bytes, mtime {})".format(out, st.st_size,
                                                       st.st_mtime_ns)
  return _VERSIONS[key]


def _jaxlib_version() -> str:
  try:
    import jaxlib  # pylint: disable=g-import-not-at-top
    return str(getattr(jaxlib, "__version__", "?"))
  except ImportError:
    return "?"


def _process_count() -> int:
  try:
    return int(_jax().process_count())
  except Exception:  # pylint: disable=broad-except
    return 1


def _process_index() -> int:
  try:
    return int(_jax().process_index())
  except Exception:  # pylint: disable=broad-except
    return 0


def _agree():
  """Under jax.distributed: a function that replaces a list of ints by
  process 0's (every process compiles the same candidate, or their
  collectives would deadlock); None with one process."""
  if _process_count() <= 1:
    return None
  import numpy as np  # pylint: disable=g-import-not-at-top
  from jax.experimental import multihost_utils  # pylint: disable=g-import-not-at-top

  def agree(values: List[int]) -> List[int]:
    arr = np.full((65,), -1, np.int32)
    arr[0] = len(values)
    arr[1:1 + len(values)] = values[:64]
    out = np.asarray(multihost_utils.broadcast_one_to_all(arr))
    return [int(v) for v in out[1:1 + int(out[0])]]
  return agree


def _plan_key(job: _Job, cands) -> str:
  opts, devices = job.opts, job.devices
  return plan_mod.cache_key(dict(
      module=hashlib.sha256(job.jax_text.encode()).hexdigest(),
      route=job.decision.route, devices=len(devices),
      device_kind=str(getattr(devices[0], "device_kind", "?")),
      processes=_process_count(), hloverlap=_tool_version(job.exe),
      jaxlib=_jaxlib_version(), xla_options=job.xla_options,
      donate=job.donate, use_shardy=job.use_shardy, loops=opts.loop_rules(),
      memory_budget=opts.memory_budget, plan_by=opts.plan_by,
      pipeline_depth=opts.pipeline_depth, extra_args=list(opts.extra_args),
      sim_args=list(opts.sim_args),
      route_fixups=opts.route_fixups, verify=opts.verify,
      max_modules=opts.plan_max_modules,
      candidates=[c.spec() for c in cands]))


def _serialize(exe) -> Optional[bytes]:
  _, _, _, get_backend = _xla_modules()
  for how in (lambda: exe.serialize(),
              lambda: get_backend().serialize_executable(exe)):
    try:
      data = how()
      if data:
        return bytes(data)
    except Exception:  # pylint: disable=broad-except
      continue
  return None


def _deserialize(data: bytes, devices, xla_options, use_shardy):
  _, _, xc, get_backend = _xla_modules()
  backend = get_backend()
  opts = _compile_options(devices, xla_options, use_shardy)
  try:
    return backend.deserialize_executable(
        data, xc.DeviceList(tuple(devices)), opts)
  except TypeError:
    return backend.deserialize_executable(data, opts)


def _fresh_inputs(exe, lowered, devices, kept, known_shardings=None):
  """A maker of fresh random arguments with the executable's parameter
  shapes, types and shardings (the planner never runs the caller's
  buffers: they may be donated). The shardings: jax.jit's (GSPMD route),
  else the executable's parameter shardings."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  jax = _jax()
  infos = _jax().tree_util.tree_leaves(lowered.args_info)
  if kept is not None and len(kept) < len(infos):
    infos = [infos[i] for i in kept]
  shardings = known_shardings
  if shardings is None or len(shardings) != len(infos):
    shardings = _parameter_shardings(exe, devices)
  if shardings is None or len(shardings) != len(infos):
    raise RuntimeError("the executable's parameter shardings are unknown "
                       "(cannot place inputs to time it)")
  rng = np.random.default_rng(0)
  host = []
  for info in infos:
    dt = np.dtype(info.dtype)
    shape = tuple(info.shape)
    if np.issubdtype(dt, np.floating) or dt.name == "bfloat16":
      host.append((rng.standard_normal(shape, np.float32) * 0.02).astype(dt))
    else:
      host.append(np.zeros(shape, dt))
  # make_array_from_callback: each process places its own shards (the same
  # seed on every process gives the same global value).
  return lambda: [jax.make_array_from_callback(h.shape, s, lambda i, h=h: h[i])
                  for h, s in zip(host, shardings)]


def _time_executable(exe, make_inputs, steps: int) -> float:
  """The median wall time of `steps` calls (one warm-up first), each on
  fresh inputs placed before its clock starts."""
  samples = []
  for i in range(steps + 1):
    args = make_inputs()
    for a in args:
      a.block_until_ready()
    t = time.perf_counter()
    out = exe.execute_sharded(args)
    for arrs in out.disassemble_into_single_device_arrays():
      for a in arrs:
        a.block_until_ready()
    if i:
      samples.append(time.perf_counter() - t)
  return plan_mod.median_ms(samples)


def _candidates(job: _Job) -> List[plan_mod.Candidate]:
  """The planner's candidates for this program (plan.candidates): with
  per-loop double buffering asked for, hloverlap's double-buffer pass
  instead of XLA's flag, which would unroll every loop."""
  per_loop = None
  if plan_mod.asks_per_loop_double_buffering(job.jax_text,
                                             job.opts.loop_rules()):
    per_loop = known_presets(job.exe)
  return plan_mod.candidates(job.opts.allow_reassociation,
                             per_loop_double_buffer=per_loop)


def _candidate_options(opts: Options, c: plan_mod.Candidate) -> Options:
  """The caller's options with a candidate's pipeline: its preset or
  passes, its depth (else the caller's), its loop rules before the
  caller's (which win); remarks are the chosen candidate's, written after
  the choice."""
  return opts.replace(preset=c.preset, passes=c.passes, remarks=None,
                      pipeline_depth=(c.pipeline_depth
                                      if c.pipeline_depth is not None
                                      else opts.pipeline_depth),
                      loops=list(c.loops) + opts.loop_rules())


def _sim_args(opts: Options, devices) -> List[str]:
  """`hloverlap sim` arguments: the GPU preset of the devices' kind (the
  simulator models the H200 and the H100), then Options.sim_args."""
  args = list(opts.sim_args)
  if not any(a == "--gpu" or a.startswith("--gpu=") for a in args):
    kind = str(getattr(devices[0], "device_kind", "")).upper()
    if "H100" in kind:
      args.insert(0, "--gpu=h100")
  return args


def _run_plan(job: _Job) -> _RouteRun:
  """Options.preset == "plan": every candidate through hloverlap and XLA,
  judged on the module XLA will execute (hloverlap.plan); a restarted job
  takes the cached choice."""
  cands = _candidates(job)
  folder = plan_mod.cache_dir(job.opts.plan_cache)
  key = _plan_key(job, cands)
  cached = plan_mod.load_cached(folder, key)
  agree = _agree()
  name = (cached.get("chosen") or {}).get("name") if cached else None
  idx = next((i for i, c in enumerate(cands) if c.name == name), -1)
  if agree is not None:  # process 0's cached choice, else everyone plans
    idx = agree([idx])[0]
  if idx >= 0:
    if name != cands[idx].name:
      cached = None  # this process's cache disagrees with process 0's
    return _run_cached(job, cached, cands[idx], folder, key)
  route = _prepare_route(job)
  t = time.perf_counter()
  plan, kept = _plan(job, route, cands, agree)
  plan.key = key
  _write(os.path.join(job.work, "plan.json"),
         json.dumps(plan.as_dict(), indent=1, default=str))
  if plan.chosen is None or plan.chosen not in kept:
    errs = "; ".join("{}: {}".format(r.candidate, r.error or r.why_not)
                     for r in plan.rows if r.error or r.why_not)
    raise _StageFailed("plan", RuntimeError(
        "no candidate could be chosen ({})".format(errs[:2000])),
                       route=route)
  pb, cc = kept[plan.chosen]
  exe, used, dropped = cc.executable
  run = _RouteRun(route, pb.payload, exe, used, dropped, plan=plan,
                  final_hlo=cc.final_text,
                  timings={"plan_s": round(time.perf_counter() - t, 3)})
  write_remarks(job.opts, pb.payload.opt.remarks)
  blobs = {}
  data = _serialize(exe) if folder else None
  if data:
    blobs["exe-p{}".format(_process_index())] = data
  chosen = next(c for c in cands if c.name == plan.chosen)
  plan_mod.store_cached(folder, key, dict(
      plan=plan.as_dict(), chosen=chosen.spec(), after=pb.payload.after,
      remarks=pb.payload.opt.remarks, xla_options=used,
      dropped=sorted(set(dropped) | set(route.dropped)), stage=route.stage,
      route=job.decision.route, fixes=pb.payload.fixes,
      aliases=pb.payload.aliases), blobs)
  return run


def _plan(job: _Job, route: _Route, cands, agree):
  """plan_mod.run with the bridge's steps: (Plan, {name: (Built,
  Compiled)})."""
  opts = job.opts

  def build(c: plan_mod.Candidate) -> plan_mod.Built:
    sub = os.path.join(job.work, "cand-" + _slug(c.name))
    os.makedirs(sub, exist_ok=True)
    b = _build(job, route, _candidate_options(opts, c), sub)
    return plan_mod.Built(b.after, b, b.timings.get("hloverlap_s", 0.0))

  def compile_(c: plan_mod.Candidate, pb: plan_mod.Built):
    t = time.perf_counter()
    exe, used, dropped = _compile_built(job, route, pb.payload,
                                        dict(c.xla_options))
    return plan_mod.Compiled((exe, used, dropped), executable_hlo_text(exe),
                             _peak_bytes(exe), time.perf_counter() - t)

  sim_args = _sim_args(opts, job.devices)

  def simulate(c: plan_mod.Candidate, cc: plan_mod.Compiled):
    path = os.path.join(job.work, "cand-" + _slug(c.name), "final.hlo")
    return sim_mod.simulate(cc.final_text, job.exe, args=sim_args,
                            path=path)

  def estimate(c: plan_mod.Candidate, pb: plan_mod.Built) -> float:
    """The CLI planner's estimate, before any XLA compile: the xla-gpu tail
    (async conversion, latency-hiding scheduler) on the candidate's module,
    then `hloverlap sim` of it, compute priced as XLA will fuse it (what
    `--preset=auto-rewrite` predicts; a module with synchronous
    collectives would count all communication as exposed)."""
    sub = os.path.join(job.work, "cand-" + _slug(c.name), "estimate")
    tail = run_checked(pb.text, opts.replace(
        preset=None, passes=ESTIMATE_TAIL, loops=[], remarks=None,
        memory_budget=None, pipeline_depth=None, keep_dir=sub), job.exe).text
    return sim_mod.simulate(tail, job.exe, args=sim_args,
                            path=os.path.join(sub, "tail.hlo")).step_ms

  measure = None
  if opts.plan_by == "measure":
    makers: Dict[str, Any] = {}

    def measure(c: plan_mod.Candidate, cc: plan_mod.Compiled) -> float:
      exe = cc.executable[0]
      if "inputs" not in makers:
        makers["inputs"] = _fresh_inputs(exe, job.lowered, job.devices,
                                         _kept_var_idx(job.lowered),
                                         route.in_shardings)
      return _time_executable(exe, makers["inputs"], opts.plan_measure_steps)
  budget = opts.memory_budget
  try:
    return plan_mod.run(
        cands, build, compile_, simulate, estimate=estimate,
        max_modules=opts.plan_max_modules,
        # Every process must hold the candidate process 0 chooses: no
        # time cut-off (which differs per process) under jax.distributed.
        budget_s=opts.plan_budget_s if agree is None else None,
        threads=opts.plan_threads,
        device_memory_bytes=_device_memory_bytes(job.devices),
        memory_budget_bytes=(parse_byte_size(budget) if budget is not None
                             else None),
        measure=measure, measure_top=opts.plan_measure_top, agree=agree)
  except _StageFailed:
    raise
  except Exception as e:  # pylint: disable=broad-except
    raise _StageFailed("plan", e, route=route) from e


def _run_cached(job: _Job, cached, cand, folder, key) -> _RouteRun:
  """A restarted job: the cached choice `cand` without planning; its
  executable from the cache (nothing compiled), else one compile of it.
  `cached` is this process's cache record, or None when only process 0's
  choice is known here."""
  t = time.perf_counter()
  exe = None
  data = plan_mod.load_blob(folder, key, "exe-p{}".format(_process_index())) \
      if cached is not None else None
  if data:
    try:
      exe = _deserialize(data, job.devices, cached.get("xla_options") or {},
                         job.use_shardy)
    except Exception:  # pylint: disable=broad-except
      exe = None
  if cached is not None:
    plan = plan_mod.Plan.from_dict(cached.get("plan", {}))
  else:
    plan = plan_mod.Plan(cand.name, [plan_mod.PlanRow(
        cand.name, chosen=True, why_not="process 0's cached choice")])
  plan.from_cache = True
  plan.key = key
  if exe is None:
    route = _prepare_route(job)
    built = _build(job, route, _candidate_options(job.opts, cand), job.work)
    exe, used, dropped = _compile_built(job, route, built,
                                        dict(cand.xla_options))
  else:
    after = cached.get("after", "")
    remarks = list(cached.get("remarks", []))
    opt = OptResult(after, remarks, "", ["(cached plan {})".format(key)], 0.0)
    built = _Built(opt, after, list(cached.get("fixes", [])),
                   [tuple(a) for a in cached.get("aliases", [])], "", {})
    used = dict(cached.get("xla_options") or {})
    dropped = list(cached.get("dropped") or [])
    route = _Route(job.decision, job.jax_text, job.jax_text, used,
                   stage=cached.get("stage"),
                   in_shardings=_parameter_shardings(exe, job.devices))
  write_remarks(job.opts, built.opt.remarks)
  return _RouteRun(route, built, exe, used, dropped, plan=plan,
                   timings={"plan_s": round(time.perf_counter() - t, 3)})


def _parameter_shardings(exe, devices) -> Optional[List[Any]]:
  """jax Shardings of the executable's parameters (None if this JAX cannot
  build them from XLA's OpShardings)."""
  try:
    ops = exe.get_parameter_shardings()
  except Exception:  # pylint: disable=broad-except
    return None
  if ops is None:
    return None
  try:
    from jax._src import sharding_impls  # pylint: disable=g-import-not-at-top
    return [sharding_impls.GSPMDSharding(tuple(devices), op) for op in ops]
  except Exception:  # pylint: disable=broad-except
    pass
  try:  # newer JAX: a NamedSharding from an OpSharding
    from jax._src import sharding_impls  # pylint: disable=g-import-not-at-top
    import numpy as np  # pylint: disable=g-import-not-at-top
    mesh = _jax().sharding.Mesh(np.array(devices), ("_hloverlap",))
    return [sharding_impls._gspmd_to_named_sharding_via_mesh(op, mesh)  # pylint: disable=protected-access
            for op in ops]
  except Exception:  # pylint: disable=broad-except
    return None


def _warn_if_plan_faster(job: _Job) -> None:
  """A fixed preset, and a plan of the same step on disk whose best is more
  than WARN_SLOWER_FRACTION faster than that preset's candidate: say so."""
  opts = job.opts
  try:
    as_plan = dataclasses.replace(
        job, opts=opts.replace(preset="plan", passes=None))
    cands = _candidates(as_plan)
    key = _plan_key(as_plan, cands)
    cached = plan_mod.load_cached(plan_mod.cache_dir(opts.plan_cache), key)
    if cached is None:
      return
    plan = plan_mod.Plan.from_dict(cached.get("plan", {}))
    mine = plan.row(opts.preset or "")
    best = plan.row(plan.chosen or "")
    if (mine is None or best is None or not mine.predicted_ms or
        not best.predicted_ms):
      return
    if best.predicted_ms < mine.predicted_ms * (
        1 - plan_mod.WARN_SLOWER_FRACTION):
      warnings.warn(
          "hloverlap: preset {!r} is predicted at {:.1f} ms, the planner's "
          "choice {!r} at {:.1f} ms ({:.0f}% faster); Options(preset='plan') "
          "(the default) uses it".format(
              opts.preset, mine.predicted_ms, best.candidate,
              best.predicted_ms,
              100 * (1 - best.predicted_ms / mine.predicted_ms)),
          PlanWarning, stacklevel=4)
  except Exception:  # pylint: disable=broad-except
    return


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
