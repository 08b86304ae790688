"""The JAX entry points with JAX, jaxlib and the binary faked (CI has no JAX).

Checks what the bridge hands to XLA (text, compile options) and how it maps
arguments and results; the real thing runs in bench/jax_bridge_bench.py.
"""
import json
import os
import stat
import sys
import tempfile
import types
import unittest
import warnings
from unittest import mock

import hloverlap
from hloverlap.errors import BridgeError, BridgeFallbackWarning
from tests import fixtures

HERE = os.path.dirname(os.path.abspath(__file__))
FAKE = os.path.join(HERE, "fake_hloverlap.py")

HLO = fixtures.SHARD_MAP
# These tests check the routes with one fixed preset (one compile); the
# planner (the default, preset="plan") is tested in test_plan.py.
FIXED = "hoist-pipeline"


# --- a tiny pytree implementation (tuples, lists, dicts, leaves) ----------
class TreeDef:

  def __init__(self, kind, children=(), keys=()):
    self.kind, self.children, self.keys = kind, tuple(children), tuple(keys)

  def _t(self):
    return (self.kind, self.keys, tuple(c._t() for c in self.children))

  def __eq__(self, o):
    return isinstance(o, TreeDef) and self._t() == o._t()

  def __hash__(self):
    return hash(self._t())

  def __repr__(self):
    return "TreeDef{}".format(self._t())


def tree_flatten(x):
  if isinstance(x, (tuple, list)):
    leaves, kids = [], []
    for c in x:
      l, t = tree_flatten(c)
      leaves += l
      kids.append(t)
    return leaves, TreeDef(type(x).__name__, kids)
  if isinstance(x, dict):
    keys = sorted(x)
    leaves, kids = [], []
    for k in keys:
      l, t = tree_flatten(x[k])
      leaves += l
      kids.append(t)
    return leaves, TreeDef("dict", kids, keys)
  return [x], TreeDef("leaf")


def tree_unflatten(t, leaves):
  it = iter(leaves)

  def build(t):
    if t.kind == "leaf":
      return next(it)
    kids = [build(c) for c in t.children]
    if t.kind == "dict":
      return dict(zip(t.keys, kids))
    return tuple(kids) if t.kind == "tuple" else list(kids)
  return build(t)


class Sharding:
  pass


class NamedSharding(Sharding):

  def __init__(self, mesh, spec):
    self.mesh, self.spec = mesh, spec

  def __eq__(self, o):
    return isinstance(o, NamedSharding) and self.spec == o.spec

  def __hash__(self):
    return hash(self.spec)


class Array:

  def __init__(self, shape, dtype="float32", sharding=None, tag=None):
    self.shape, self.dtype, self.sharding, self.tag = (tuple(shape), dtype,
                                                       sharding, tag)


class Device:

  def __init__(self, i):
    self.id = i


DEVICES = [Device(0), Device(1)]


class Info:

  def __init__(self, shape, sharding=None):
    self.shape, self.sharding = shape, sharding


X = NamedSharding(None, ("x",))  # P("x")
REPL = NamedSharding(None, ())  # P()


class Compiled:
  """jax.stages.Compiled of jax.jit's own compile (the GSPMD dump compile
  and the fallback)."""

  def __init__(self, env, options):
    self.env, self.options = env, options
    self.input_shardings = ((X, X), {})
    self.output_shardings = (X, REPL)

  def __call__(self, *args, **kwargs):
    self.env.fallback_calls.append(args)
    return ("jit", args)

  def as_text(self):
    return "// jax.jit's final module\n"


class Lowered:
  """jax.stages.Lowered of f(p, q) -> (r, s) with p, q: f32[4]."""

  def __init__(self, text, out_shardings=None, args=None, env=None):
    self.text = text
    self.env = env
    self.in_tree = tree_flatten(((Array((4,)), Array((4,))), {}))[1]
    self.out_tree = tree_flatten((0, 0))[1]
    self.out_info = (Info((4,), out_shardings), Info((), out_shardings))
    self._lowering = types.SimpleNamespace(compile_args={
        "device_assignment": DEVICES, "kept_var_idx": {0, 1}})
    self.lower_args = args

  def as_text(self, dialect=None, debug_info=False):
    assert dialect == "hlo"
    assert debug_info  # metadata for op_name selectors
    return self.text

  def compile(self, compiler_options=None):
    env = self.env
    if env is None:
      raise RuntimeError("no jit compile in this test")
    opts = dict(compiler_options or {})
    env.jit_compiles.append(opts)
    if env.jit_compile_error:
      raise RuntimeError(env.jit_compile_error)
    d = opts.get("xla_dump_to")
    if d:
      os.makedirs(d, exist_ok=True)
      for name, text in fixtures.dump_files(env.dump).items():
        with open(os.path.join(d, name), "w") as f:
          f.write(text)
    return Compiled(env, opts)


class FakeJaxEnv:
  """sys.modules entries for jax/jaxlib; records what the bridge does."""

  def __init__(self, out_shardings="named", fail_output_shardings=True,
               text=HLO, dump="gpu", compile_error=None,
               jit_compile_error=None):
    self.compiled = []  # (stablehlo, compile options, device list)
    self.executed = []
    self.jit_calls = []
    self.lower_calls = []
    self.jit_compiles = []  # compiler_options of Lowered.compile
    self.fallback_calls = []
    self.deserialized = []
    self.dump = dump
    self.jit_compile_error = jit_compile_error
    env = self
    named = NamedSharding(None, ("x",)) if out_shardings == "named" else None

    jax = types.ModuleType("jax")
    jax.Array = Array
    jax.devices = lambda: DEVICES
    jax.device_put = lambda x, *a: Array(getattr(x, "shape", ()),
                                         sharding=a[0] if a else None,
                                         tag=("put", x))

    def make_array(shape, sharding, arrays):
      return Array(shape, sharding=sharding, tag=[a.tag for a in arrays])
    jax.make_array_from_single_device_arrays = make_array

    def jit(fn, **kw):
      env.jit_calls.append(kw)

      def lower(*args, **kwargs):
        env.lower_calls.append((args, kwargs))
        return Lowered(text, named, args, env)
      return types.SimpleNamespace(lower=lower)
    jax.jit = jit
    tu = types.ModuleType("jax.tree_util")
    tu.tree_flatten, tu.tree_unflatten = tree_flatten, tree_unflatten
    tu.tree_leaves = lambda x: tree_flatten(x)[0]
    jax.tree_util = tu
    sh = types.ModuleType("jax.sharding")
    sh.Sharding, sh.NamedSharding = Sharding, NamedSharding
    sh.Mesh = lambda devs, names: ("mesh", tuple(names))
    sh.PartitionSpec = lambda *spec: tuple(spec)
    jax.sharding = sh
    src = types.ModuleType("jax._src")
    xb = types.ModuleType("jax._src.xla_bridge")

    class Results:

      def __init__(self, leaves):
        self.leaves = leaves

      def disassemble_into_single_device_arrays(self):
        # outputs: r (sharded f32[4] -> [2] per device), s (f32[]).
        return [[Array((2,), tag="r0"), Array((2,), tag="r1")],
                [Array((), tag="s0"), Array((), tag="s1")]]

    class FinalModule:

      def __init__(self, text):
        self.text = text

      def to_string(self):
        return self.text

    class Executable:

      def __init__(self, module=None):
        self.module = module

      def hlo_modules(self):
        # XLA's final module: what XLA made of the module handed to it.
        return [FinalModule("// optimized by XLA\n" + self.module[1])]

      def execute_sharded(self, leaves):
        env.executed.append(list(leaves))
        return Results(leaves)

      def serialize(self):
        return ("exe:" + self.module[1]).encode()

      def get_output_shardings(self):
        if fail_output_shardings:
          raise RuntimeError("no")
        return None

    class Backend:

      def deserialize_executable(self, data, devices, options):
        env.deserialized.append(data)
        return Executable(("stablehlo", data.decode()[len("exe:"):]))

      def compile_and_load(self, module, devices, options):
        env.compiled.append((module, options, devices))
        if compile_error:
          raise RuntimeError(compile_error)
        return Executable(module)
    xb.get_backend = Backend
    src.xla_bridge = xb
    lib = types.ModuleType("jax._src.lib")
    xc = types.ModuleType("jax._src.lib.xla_client")

    class CompileOptions:

      def __init__(self):
        self.executable_build_options = types.SimpleNamespace(
            use_shardy_partitioner=None)
        self.env_option_overrides = []
    xc.CompileOptions = CompileOptions
    xc.DeviceAssignment = types.SimpleNamespace(
        create=lambda a: ("assignment", a.tolist()))
    xc.DeviceList = lambda devs: ("devices", tuple(d.id for d in devs))
    lib.xla_client = xc
    src.lib = lib
    si = types.ModuleType("jax._src.sharding_impls")
    src.sharding_impls = si
    jaxlib = types.ModuleType("jaxlib")
    jh = types.ModuleType("jaxlib._hlo")

    class HloModule:

      def __init__(self, text):
        self.text = text

      def as_serialized_hlo_module_proto(self):
        return ("proto", self.text)
    jh.hlo_module_from_text = HloModule
    jj = types.ModuleType("jaxlib._jax")
    jj.mlir = types.SimpleNamespace(
        hlo_to_stablehlo=lambda proto: ("stablehlo", proto[1]))
    jaxlib._hlo, jaxlib._jax = jh, jj
    np = types.ModuleType("numpy")  # what compile_hlo_text uses of numpy

    class NdArray:

      def __init__(self, v):
        self.v = list(v)

      def reshape(self, r, c):
        assert r * c == len(self.v)
        return NdArray([self.v[i * c:(i + 1) * c] for i in range(r)])

      def tolist(self):
        return self.v
    np.array = NdArray
    self.modules = {"numpy": np,
        "jax": jax, "jax.tree_util": tu, "jax.sharding": sh, "jax._src": src,
        "jax._src.xla_bridge": xb, "jax._src.lib": lib,
        "jax._src.lib.xla_client": xc, "jax._src.sharding_impls": si,
        "jaxlib": jaxlib, "jaxlib._hlo": jh, "jaxlib._jax": jj}

  def __enter__(self):
    self._patch = mock.patch.dict(sys.modules, self.modules)
    self._patch.__enter__()
    import hloverlap.jax as hjax  # pylint: disable=g-import-not-at-top
    return hjax

  def __exit__(self, *exc):
    self._patch.__exit__(*exc)


def _fake_exe():
  tmp = tempfile.mkdtemp()
  path = os.path.join(tmp, "hloverlap")
  with open(path, "w") as f:
    f.write("#!/bin/sh\nexec '{}' -S -E '{}' \"$@\"\n".format(sys.executable, FAKE))
  os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
  return path


class _TmpCase(unittest.TestCase):
  """Every temporary folder of a test (the bridge's work folders too) in
  one that is removed afterwards."""

  def setUp(self):
    self._tmp = tempfile.TemporaryDirectory()
    self._old_tempdir = tempfile.tempdir
    tempfile.tempdir = self._tmp.name
    self.exe = _fake_exe()

  def tearDown(self):
    tempfile.tempdir = self._old_tempdir
    self._tmp.cleanup()


def _user_step(p, q):  # the "user's function" named in errors
  return p, q


USER_LINE = _user_step.__code__.co_firstlineno


class CompileTest(_TmpCase):
  """The shard_map route (JAX's lowering carries the collectives)."""

  def setUp(self):
    super().setUp()
    self.opts = hloverlap.Options(binary=self.exe, preset=FIXED,
                                  loops=["op_name~fori_loop:pipeline=off"])

  def test_route_and_options(self):
    env = FakeJaxEnv()
    with env as hjax:
      c = hjax.compile(Lowered(HLO), self.opts)
    self.assertEqual((c.route, c.stage), ("shard_map", None))
    self.assertIn("shard_map glue", c.route_reason)
    self.assertEqual(len(env.compiled), 1)
    self.assertEqual(env.jit_compiles, [])  # no dump compile on this route
    module, options, devices = env.compiled[0]
    kind, text = module
    self.assertEqual(kind, "stablehlo")
    self.assertIn("--loop=op_name~fori_loop:pipeline=off", text)
    self.assertIn("--no-xla-flags-env", text)
    eb = options.executable_build_options
    self.assertEqual((eb.num_replicas, eb.num_partitions,
                      eb.use_spmd_partitioning), (1, 2, True))
    self.assertEqual(eb.device_assignment, ("assignment", [[0, 1]]))
    self.assertIsNone(eb.use_shardy_partitioner)
    self.assertEqual(devices, ("devices", (0, 1)))
    ov = dict(options.env_option_overrides)
    self.assertIs(ov["xla_gpu_enable_pipelined_all_gather"], False)
    self.assertIs(ov["xla_gpu_enable_pipelined_reduce_scatter"], False)
    self.assertIs(ov["xla_gpu_enable_latency_hiding_scheduler"], True)
    self.assertNotIn("xla_disable_hlo_passes", ov)  # XLA partitions here
    self.assertEqual(c.remark_counts(), {"passed": 1})
    self.assertEqual(c.hlo_before, HLO)
    self.assertEqual(c.fixes, [])
    for k in ("hloverlap_s", "prepare_s", "xla_compile_s", "total_s"):
      self.assertIn(k, c.timings)

  def test_final_hlo_is_the_executables_optimized_module(self):
    # final_hlo(): XLA's final module of the program compiled from
    # hloverlap's output (what `hloverlap sim` predicts the step from), not
    # hloverlap's own, unfused output; asked once.
    env = FakeJaxEnv()
    with env as hjax:
      c = hjax.compile(Lowered(HLO), self.opts)
    final = c.final_hlo()
    self.assertEqual(final, "// optimized by XLA\n" + env.compiled[0][0][1])
    self.assertNotEqual(final, c.hlo_after)
    self.assertIs(c.final_hlo(), final)

  def test_donor_becomes_alias_when_shardings_match(self):
    # p (donated) and r have the same shape and Shardy sharding.
    env = FakeJaxEnv()
    with env as hjax:
      c = hjax.compile(Lowered(HLO), self.opts)
    text = env.compiled[0][0][1]
    self.assertTrue(text.startswith(
        "HloModule jit_f, input_output_alias={ {0}: (0, {}, may-alias) }, "
        "entry_computation_layout"), text[:200])
    self.assertNotIn("buffer_donor", text.split("\n")[0])
    self.assertEqual(c.aliases, [(0, 0)])
    # Before partitioning the tool compares Shardy shardings too.
    self.assertIn("donors-to-aliases{match=shardy}", text)

  def test_call_maps_arguments_and_results(self):
    env = FakeJaxEnv()
    with env as hjax:
      c = hjax.compile(Lowered(HLO, NamedSharding(None, ("x",))), self.opts)
      p, q = Array((4,), tag="p"), Array((4,), tag="q")
      r, s = c(p, q)
      self.assertEqual([x.tag for x in env.executed[0]], ["p", "q"])
      self.assertEqual((r.shape, r.tag), ((4,), ["r0", "r1"]))
      self.assertEqual((s.shape, s.tag), ((), ["s0", "s1"]))
      self.assertEqual(c.sharding_source, "lowering")
      with self.assertRaisesRegex(TypeError, "argument structure"):
        c(p)
      with self.assertRaisesRegex(TypeError, "argument structure"):
        c(p, q, Array((4,)))
      # Non-Array leaves are put on a device first.
      c(types.SimpleNamespace(shape=(4,)), q)
      self.assertIsInstance(env.executed[-1][0], Array)

  def test_output_shardings_from_shapes(self):
    env = FakeJaxEnv(out_shardings=None)
    with env as hjax:
      c = hjax.compile(Lowered(HLO, None), self.opts)
      r, s = c(Array((4,)), Array((4,)))
    self.assertEqual(c.sharding_source, "shapes")
    self.assertEqual(r.sharding.spec, ("_hloverlap",))
    self.assertEqual(s.sharding.spec, ())

  def test_shardy_follows_jax_config(self):
    env = FakeJaxEnv()
    env.modules["jax"].config = types.SimpleNamespace(
        jax_use_shardy_partitioner=True)
    with env as hjax:
      c = hjax.compile(Lowered(HLO), self.opts)
    self.assertIs(env.compiled[0][1].executable_build_options
                  .use_shardy_partitioner, True)
    self.assertIs(c.use_shardy, True)

  def test_process_flags_with_xla_pipelining_refused(self):
    env = FakeJaxEnv()
    with mock.patch.dict(os.environ, {
        "XLA_FLAGS": "--xla_gpu_enable_pipelined_all_gather=true"}):
      with env as hjax:
        with self.assertRaisesRegex(ValueError, "XLA_FLAGS"):
          hjax.compile(Lowered(HLO), self.opts)
        hjax.compile(Lowered(HLO), self.opts, allow_xla_pipelining=True)
    self.assertEqual(len(env.compiled), 1)

  def test_process_flags_do_not_reach_hloverlap(self):
    # XLA_FLAGS with XLA's pipelining off must not switch hloverlap's off.
    env = FakeJaxEnv()
    with mock.patch.dict(os.environ, {
        "XLA_FLAGS": "--xla_gpu_enable_pipelined_all_gather=false"}):
      with env as hjax:
        hjax.compile(Lowered(HLO), self.opts)
    self.assertIn("--no-xla-flags-env", env.compiled[0][0][1])

  def test_unknown_xla_options_dropped(self):
    env = FakeJaxEnv()
    backend = env.modules["jax._src.xla_bridge"].get_backend
    orig = backend.compile_and_load

    def picky(self_, module, devices, options):
      for k, _ in options.env_option_overrides:
        if k == "xla_gpu_enable_pipelined_all_gather":
          raise RuntimeError("INVALID_ARGUMENT: No such compile option: "
                             "'xla_gpu_enable_pipelined_all_gather'")
      return orig(self_, module, devices, options)
    backend.compile_and_load = picky
    with env as hjax:
      c = hjax.compile(Lowered(HLO), self.opts)
    self.assertEqual(c.dropped_xla_options,
                     ["xla_gpu_enable_pipelined_all_gather"])
    self.assertNotIn("xla_gpu_enable_pipelined_all_gather", c.xla_options)

  def test_donate_false_and_shardy(self):
    env = FakeJaxEnv()
    with env as hjax:
      hjax.compile(Lowered(HLO), self.opts, donate=False, use_shardy=True)
    text = env.compiled[0][0][1]
    self.assertNotIn("buffer_donor", text)
    self.assertNotIn("input_output_alias", text)
    self.assertTrue(text.startswith("HloModule jit_f, entry_computation_layout"))
    eb = env.compiled[0][1].executable_build_options
    self.assertIs(eb.use_shardy_partitioner, True)

  def test_copy_fixup(self):
    env = FakeJaxEnv()
    with mock.patch.dict(os.environ, {"FAKE_HLOVERLAP_COPY": "1"}):
      with env as hjax:
        c = hjax.compile(Lowered(HLO), self.opts)
    self.assertEqual(len(c.fixes), 1)
    text = env.compiled[0][0][1]
    self.assertIn("%copy.9 = f32[4]{0} reshape(%p)", text)
    self.assertNotIn(" copy(", text)

  def test_keep_dir(self):
    keep = tempfile.mkdtemp()
    env = FakeJaxEnv()
    with env as hjax:
      c = hjax.compile(Lowered(HLO), self.opts.replace(keep_dir=keep))
    self.assertEqual(sorted(os.listdir(keep)), [
        "after.hlo", "after_route.hlo", "before.hlo", "bridge.json",
        "remarks.json", "route-fixups"])  # the copy-to-reshape run's files
    with open(os.path.join(keep, "bridge.json")) as f:
      self.assertIn('"route": "shard_map"', f.read())
    self.assertEqual(c.keep_dir, keep)

  def test_work_files_removed_without_keep_dir(self):
    env = FakeJaxEnv()
    before = set(os.listdir(tempfile.gettempdir()))
    with env as hjax:
      hjax.compile(Lowered(HLO), self.opts)
    new = set(os.listdir(tempfile.gettempdir())) - before
    self.assertEqual([n for n in new if n.startswith("hloverlap-")], [])

  def test_route_override_and_bad_arguments(self):
    env = FakeJaxEnv()
    with env as hjax:
      with self.assertRaisesRegex(ValueError, "route must be"):
        hjax.compile(Lowered(HLO), self.opts, route="spmd")
      with self.assertRaisesRegex(ValueError, "fallback must be"):
        hjax.compile(Lowered(HLO), self.opts, fallback="xla")
      with self.assertRaisesRegex(ValueError, "must stay off"):
        hjax.compile(Lowered(HLO), self.opts.replace(
            xla_options={"xla_gpu_enable_pipelined_all_gather": True}))


class GspmdRouteTest(_TmpCase):
  """jit shardings only: XLA's partitioned module goes through hloverlap."""

  def setUp(self):
    super().setUp()
    self.opts = hloverlap.Options(binary=self.exe, preset=FIXED)

  def _compile(self, env, opts=None, **kw):
    with env as hjax:
      c = hjax.compile(Lowered(fixtures.GSPMD, None, env=env),
                       opts or self.opts, fn=_user_step, **kw)
    return c

  def test_detected_and_dumped_with_the_route_options(self):
    env = FakeJaxEnv(text=fixtures.GSPMD)
    c = self._compile(env)
    self.assertEqual(c.route, "gspmd")
    self.assertIn("outside shard_map", c.route_reason)
    self.assertEqual(len(env.jit_compiles), 1)
    dump = env.jit_compiles[0]
    self.assertTrue(dump["xla_dump_to"].endswith("xla_dump"))
    self.assertIs(dump["xla_dump_hlo_as_text"], True)
    self.assertIn("spmd-partitioning", dump["xla_dump_hlo_pass_re"])
    self.assertIn("reduce-scatter-creator", dump["xla_dump_hlo_pass_re"])
    # The dump compile uses the XLA options the route compile uses.
    self.assertIs(dump["xla_gpu_enable_latency_hiding_scheduler"], True)
    self.assertIs(dump["xla_gpu_enable_pipelined_all_gather"], False)
    self.assertIn("jit_compile_s", c.timings)

  def test_stage_before_the_pipeliner_position(self):
    for dump, stage, mark in [
        ("gpu", "before_reduce_scatter_creator", "// stage 03\n"),
        ("gpu_pipeliner", "before_collective_pipeliner",
         "// stage 03 pipeliner\n"),
        ("cpu", "after_spmd_partitioning", "// stage 02\n")]:
      with self.subTest(dump=dump):
        env = FakeJaxEnv(text=fixtures.GSPMD, dump=dump)
        c = self._compile(env)
        self.assertEqual(c.stage, stage)
        self.assertIn(mark, c.hlo_before)

  def test_module_handed_to_xla(self):
    env = FakeJaxEnv(text=fixtures.GSPMD)
    c = self._compile(env, self.opts.replace(xla_options={
        "xla_disable_hlo_passes": "foo,spmd-partitioning"}))
    self.assertEqual(len(env.compiled), 1)
    (kind, text), options, devices = env.compiled[0]
    self.assertEqual(kind, "stablehlo")
    self.assertNotIn("sharding=", text)  # stripped
    self.assertIn("%c.1 = f32[2]{0} reshape(%r.1)", text)  # copy fixed
    self.assertEqual(len(c.fixes), 1)
    self.assertIn("--no-xla-flags-env", text)  # hloverlap's flags
    # The donor became an alias (per-device shapes match).
    self.assertTrue(text.startswith(
        "HloModule jit_g, input_output_alias={ {0}: (0, {}, may-alias) }"),
        text[:120])
    self.assertEqual(c.aliases, [(0, 0)])
    # XLA's per-device module: shapes and layouts alone decide.
    self.assertIn("donors-to-aliases", text)
    self.assertNotIn("match=shardy", text)
    eb = options.executable_build_options
    self.assertEqual((eb.num_replicas, eb.num_partitions,
                      eb.use_spmd_partitioning), (1, 2, True))
    ov = dict(options.env_option_overrides)
    self.assertEqual(ov["xla_disable_hlo_passes"],
                     "shardy-xla,sharding-propagation,spmd-partitioning,foo")
    self.assertIs(ov["xla_gpu_enable_latency_hiding_scheduler"], True)

  def test_call_uses_jit_shardings(self):
    env = FakeJaxEnv(text=fixtures.GSPMD)
    with env as hjax:
      c = hjax.compile(Lowered(fixtures.GSPMD, None, env=env), self.opts)
      p = Array((4,), sharding=X, tag="p")
      q = Array((4,), sharding=REPL, tag="q")  # not jit's: resharded
      r, s = c(p, q)
      leaves = env.executed[0]
      self.assertEqual(leaves[0].tag, "p")
      self.assertEqual(leaves[1].tag[0], "put")
      self.assertIs(leaves[1].sharding, X)
      self.assertEqual(c.sharding_source, "jit-compile")
      self.assertIs(r.sharding, X)
      self.assertIs(s.sharding, REPL)
      c(types.SimpleNamespace(shape=(4,)), q)  # host values are placed
      self.assertIs(env.executed[-1][0].sharding, X)

  def test_route_only_when_forced(self):
    env = FakeJaxEnv(text=HLO)
    with env as hjax:
      c = hjax.compile(Lowered(HLO, None, env=env), self.opts,
                       route="gspmd")
    self.assertEqual((c.route, c.route_reason), ("gspmd",
                                                 "chosen by the caller"))


class FallbackAndErrorTest(_TmpCase):
  """Failures name the user's function, the stage and the user's line."""

  def setUp(self):
    super().setUp()
    self.opts = hloverlap.Options(binary=self.exe, preset=FIXED)

  def _fail(self, env, **kw):
    with env as hjax:
      with self.assertRaises(BridgeError) as cm:
        hjax.compile(Lowered(env_text(env), None, env=env), self.opts,
                     fn=_user_step, fallback=None, **kw)
    return cm.exception

  def _check_names_user(self, err, stage):
    msg = str(err)
    self.assertIn("hloverlap.jax.jit(_user_step at ", msg)
    self.assertIn("test_jax_bridge.py:{}".format(USER_LINE), msg)
    self.assertIn("stage '{}' failed".format(stage), msg)
    self.assertEqual(err.stage, stage)
    self.assertTrue(os.path.isdir(err.keep_dir), err.keep_dir)
    self.assertIn("files kept for a report: " + err.keep_dir, msg)
    self.assertIn("bridge.json", os.listdir(err.keep_dir))

  def test_xla_compile_error_points_at_user_line(self):
    env = FakeJaxEnv(text=fixtures.GSPMD, compile_error=(
        "INTERNAL: RET_CHECK failure: instruction %ar.1 is not supported"))
    err = self._fail(env)
    self._check_names_user(err, "xla-compile")
    self.assertIn("route gspmd: XLA's partitioned module, dump stage "
                  "before_reduce_scatter_creator", str(err))
    self.assertIn("in the user's code: /home/u/train.py:57 in layer "
                  "(instruction ar.1)", str(err))
    for f in ("partitioned.hlo", "before.hlo", "after.hlo",
              "after_route.hlo", "xla_dump"):
      self.assertIn(f, os.listdir(err.keep_dir))

  def test_hloverlap_rejects_module(self):
    env = FakeJaxEnv(text=fixtures.GSPMD)
    with mock.patch.dict(os.environ, {"FAKE_HLOVERLAP_FAIL_AT": "r.1"}):
      err = self._fail(env)
    self._check_names_user(err, "hloverlap")
    self.assertIn("cannot handle %r.1", str(err))
    self.assertIn("in the user's code: /home/u/train.py:57 in layer "
                  "(instruction r.1)", str(err))

  def test_pass_names_differ(self):
    env = FakeJaxEnv(text=fixtures.GSPMD, dump="renamed")
    err = self._fail(env)
    self._check_names_user(err, "dump")
    self.assertIn("names its passes differently", str(err))
    self.assertIn("spmd-partitioner-v2", str(err))  # what it saw
    self.assertEqual(env.compiled, [])  # never compiled the module

  def test_nothing_dumped(self):
    env = FakeJaxEnv(text=fixtures.GSPMD, dump="none")
    err = self._fail(env)
    self.assertIn("no dump was written", str(err))

  def test_fallback_to_jit_with_warning(self):
    env = FakeJaxEnv(text=fixtures.GSPMD, compile_error="INTERNAL: boom")
    with env as hjax:
      with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        c = hjax.compile(Lowered(fixtures.GSPMD, None, env=env), self.opts,
                         fn=_user_step)
      out = c(Array((4,)), Array((4,)))
    msgs = [str(x.message) for x in w
            if issubclass(x.category, BridgeFallbackWarning)]
    self.assertEqual(len(msgs), 1, [str(x.message) for x in w])
    self.assertIn("_user_step at ", msgs[0])
    self.assertIn("stage 'xla-compile' failed", msgs[0])
    self.assertIn("lost: hloverlap's rewrites (--preset=hoist-pipeline",
                  msgs[0])
    self.assertIn("fallback=None", msgs[0])
    self.assertEqual(c.route, "jax.jit")
    self.assertEqual(c.error.stage, "xla-compile")
    # The dump compile is jax.jit's own compile: reused, not compiled again.
    self.assertEqual(len(env.jit_compiles), 1)
    self.assertEqual(out[0], "jit")
    self.assertEqual(len(env.fallback_calls), 1)
    self.assertEqual(c.final_hlo(), "// jax.jit's final module\n")

  def test_shard_map_fallback_compiles_jit(self):
    env = FakeJaxEnv()
    with mock.patch.dict(os.environ, {"FAKE_HLOVERLAP_EXIT": "3"}):
      with env as hjax:
        with self.assertRaises(BridgeError) as cm:
          hjax.compile(Lowered(HLO, env=env), self.opts, fallback=None)
        self.assertEqual(env.compiled, [])
        self.assertIn("failed internally (exit 3)", str(cm.exception))
        with warnings.catch_warnings(record=True) as w:
          warnings.simplefilter("always")
          c = hjax.compile(Lowered(HLO, env=env), self.opts)
    self.assertTrue(any(issubclass(x.category, BridgeFallbackWarning)
                        for x in w))
    self.assertEqual(c.route, "jax.jit")
    self.assertEqual(len(env.jit_compiles), 1)
    self.assertNotIn("xla_dump_to", env.jit_compiles[0])
    self.assertIs(env.jit_compiles[0][
        "xla_gpu_enable_latency_hiding_scheduler"], True)

  def test_fallback_that_fails_too(self):
    env = FakeJaxEnv(text=fixtures.GSPMD, jit_compile_error="bad program")
    with env as hjax:
      with self.assertRaises(BridgeError) as cm:
        hjax.compile(Lowered(fixtures.GSPMD, None, env=env), self.opts)
    self.assertIn("stage 'dump' failed", str(cm.exception))
    self.assertIn("the fallback, failed too", str(cm.exception))


def env_text(env):
  return fixtures.GSPMD if env.dump is not None else HLO


class JitTest(_TmpCase):

  def test_static_args_and_cache(self):
    exe = self.exe
    env = FakeJaxEnv()
    with env as hjax:
      f = hjax.jit(lambda p, n, q: None, static_argnums=(1,),
                   donate_argnums=(0,),
                   options=hloverlap.Options(binary=exe, preset=FIXED))
      p, q = Array((4,), tag="p"), Array((4,), tag="q")
      r, _ = f(p, 3, q)
      f(p, 3, q)
      self.assertEqual(len(env.compiled), 1)
      self.assertEqual([x.tag for x in env.executed[1]], ["p", "q"])
      f(p, 4, q)
      self.assertEqual(len(env.compiled), 2)
      self.assertEqual(env.lower_calls[0][0][1], 3)
      self.assertEqual(env.jit_calls[0]["keep_unused"], True)
      self.assertEqual(env.jit_calls[0]["donate_argnums"], (0,))
      self.assertIs(f.last, f.compile_for(p, 4, q))
      self.assertEqual(r.tag, ["r0", "r1"])

  def test_gspmd_recompiles_only_for_new_signatures(self):
    exe = self.exe
    env = FakeJaxEnv(text=fixtures.GSPMD)
    with env as hjax:
      f = hjax.jit(_user_step, in_shardings=(X, X), out_shardings=(X, REPL),
                   donate_argnums=(0,), options=hloverlap.Options(binary=exe, preset=FIXED),
                   fallback=None)
      f(Array((4,), sharding=X, tag="p1"), Array((4,), sharding=X))
      f(Array((4,), sharding=X, tag="p2"), Array((4,), sharding=X))
      self.assertEqual((f.compiles, len(env.lower_calls),
                        len(env.jit_compiles), len(env.compiled)),
                       (1, 1, 1, 1))
      self.assertEqual(env.executed[1][0].tag, "p2")  # new arrays, same exe
      f(Array((8,), sharding=X), Array((8,), sharding=X))  # other shapes
      self.assertEqual((f.compiles, len(env.jit_compiles)), (2, 2))
      f(Array((4,), "bfloat16", sharding=X), Array((4,), sharding=X))
      self.assertEqual(f.compiles, 3)  # other dtype
      self.assertEqual(f.last.route, "gspmd")
      self.assertEqual(env.jit_calls[0]["in_shardings"], (X, X))
      self.assertEqual(env.jit_calls[0]["out_shardings"], (X, REPL))

  def test_fallback_is_cached_and_warns_once(self):
    exe = self.exe
    env = FakeJaxEnv(text=fixtures.GSPMD, dump="renamed")
    with env as hjax:
      f = hjax.jit(_user_step, options=hloverlap.Options(binary=exe, preset=FIXED))
      with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        f(Array((4,)), Array((4,)))
        f(Array((4,)), Array((4,)))
    self.assertEqual(sum(issubclass(x.category, BridgeFallbackWarning)
                         for x in w), 1)
    self.assertEqual((f.compiles, len(env.fallback_calls)), (1, 2))
    self.assertEqual(f.last.error.stage, "dump")


if __name__ == "__main__":
  unittest.main()


class PlanTest(unittest.TestCase):
  """The default (preset="plan"): every candidate compiled, its final
  module simulated (the fake `sim` reads FAKE_SIM_STEPS), the fastest
  kept; the choice cached on disk."""

  STEPS = {"--preset=cleanup": 60.0, "collective-hoist,tuple": 53.0,
           "--preset=pipeline": 62.0, "--preset=hoist-pipeline": 54.0}

  def setUp(self):
    self.exe = _fake_exe()
    self.cache = tempfile.mkdtemp()
    self.opts = hloverlap.Options(binary=self.exe, plan_cache=self.cache,
                                  plan_max_modules=None)
    self.env_patch = mock.patch.dict(os.environ, {
        "FAKE_SIM_STEPS": json.dumps(self.STEPS)})
    self.env_patch.start()

  def tearDown(self):
    self.env_patch.stop()

  def test_chooses_the_fastest_final_module(self):
    env = FakeJaxEnv()
    with env as hjax:
      c = hjax.compile(Lowered(HLO), self.opts)
    self.assertEqual(c.plan.chosen, "hoist")
    # the step runs the chosen candidate's executable.
    self.assertIn("collective-hoist", c.executable.module[1])
    self.assertIn("no rewrite: 60.0 ms", c.plan.summary_line())
    names = [r.candidate for r in c.plan.rows]
    self.assertIn("hoist+xla-db", names)
    # every candidate compiled once (the fake opt's outputs all differ).
    self.assertEqual(len(env.compiled), len(names))
    db = [o for _, o, _ in env.compiled
          if ("xla_gpu_enable_while_loop_double_buffering", True)
          in o.env_option_overrides]
    self.assertEqual(len(db), sum(1 for n in names if "xla-db" in n))
    self.assertIn("plan", c.summary())
    self.assertIn("hloverlap plan: hoist", c.summary()["plan_summary"])

  def test_pruned_by_the_unfused_estimate(self):
    # the fake sim prices the unfused modules as their final ones: the
    # default keeps the best 3 modules (and cleanup's).
    env = FakeJaxEnv()
    keep = tempfile.mkdtemp()
    with env as hjax:
      c = hjax.compile(Lowered(HLO), self.opts.replace(plan_max_modules=3,
                                                       keep_dir=keep))
    # the estimate is taken after the xla-gpu tail, as auto-rewrite's
    with open(os.path.join(keep, "cand-pipeline", "estimate",
                           "tail.hlo")) as f:
      self.assertIn("--passes=async-collectives,latency-hiding-scheduler",
                    f.read())
    rows = {r.candidate: r for r in c.plan.rows}
    self.assertIn("not compiled", rows["pipeline"].why_not)
    self.assertEqual(rows["pipeline"].estimate_ms, 62.0)
    self.assertIsNone(rows["pipeline"].predicted_ms)
    self.assertEqual(c.plan.chosen, "hoist")
    self.assertEqual(len(env.compiled),
                     sum(1 for r in c.plan.rows if r.predicted_ms is not None
                         and r.same_as is None))

  def test_per_loop_double_buffering_is_hloverlaps(self):
    # XLA's flag would unroll every loop; a program that sets double
    # buffering per loop gets hloverlap's pass, which reads the rules.
    env = FakeJaxEnv()
    with env as hjax:
      c = hjax.compile(Lowered(HLO), self.opts.replace(
          loops=["innermost:double-buffer=on"]))
    names = [r.candidate for r in c.plan.rows]
    self.assertIn("hoist+db", names)
    self.assertNotIn("hoist+xla-db", names)
    for _, o, _ in env.compiled:
      self.assertNotIn(("xla_gpu_enable_while_loop_double_buffering", True),
                       o.env_option_overrides)

  def test_bridge_json_has_the_table(self):
    keep = tempfile.mkdtemp()
    with FakeJaxEnv() as hjax:
      hjax.compile(Lowered(HLO), self.opts.replace(keep_dir=keep))
    with open(os.path.join(keep, "bridge.json")) as f:
      rec = json.load(f)
    rows = {r["candidate"]: r for r in rec["plan"]["rows"]}
    self.assertEqual(rows["hoist"]["predicted_ms"], 53.0)
    self.assertTrue(rows["hoist"]["chosen"])
    self.assertTrue(os.path.exists(os.path.join(keep, "cand-hoist",
                                                "final.hlo")))

  def test_cached_second_start_compiles_nothing(self):
    env = FakeJaxEnv()
    with env as hjax:
      hjax.compile(Lowered(HLO), self.opts)
      n = len(env.compiled)
      c = hjax.compile(Lowered(HLO), self.opts)
    self.assertEqual(len(env.compiled), n)  # no planning, no compile
    self.assertEqual(len(env.deserialized), 1)
    self.assertTrue(c.plan.from_cache)
    self.assertEqual(c.plan.chosen, "hoist")
    self.assertIn("collective-hoist", c.executable.module[1])

  def test_other_options_plan_again(self):
    env = FakeJaxEnv()
    with env as hjax:
      hjax.compile(Lowered(HLO), self.opts)
      n = len(env.compiled)
      hjax.compile(Lowered(HLO), self.opts.replace(memory_budget="1G"))
    self.assertGreater(len(env.compiled), n + 1)
    self.assertEqual(env.deserialized, [])

  def test_no_candidate_simulates_falls_back(self):
    os.environ["FAKE_SIM_STEPS"] = json.dumps({"optimized": None})
    env = FakeJaxEnv()
    with env as hjax, warnings.catch_warnings(record=True) as w:
      warnings.simplefilter("always")
      hjax.compile(Lowered(HLO, env=env), self.opts)
    msg = "\n".join(str(x.message) for x in w)
    self.assertIn("stage 'plan' failed", msg)
    self.assertIn("no candidate could be chosen", msg)

  def test_fixed_preset_warns_when_the_plan_is_faster(self):
    env = FakeJaxEnv()
    with env as hjax:
      hjax.compile(Lowered(HLO), self.opts)
      with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        hjax.compile(Lowered(HLO), self.opts.replace(preset="pipeline"))
        hjax.compile(Lowered(HLO), self.opts.replace(preset="hoist-pipeline"))
    msgs = [str(x.message) for x in w if x.category is hjax.PlanWarning]
    self.assertEqual(len(msgs), 1)  # pipeline 62 vs 53; hoist-pipeline 54
    self.assertIn("preset 'pipeline' is predicted at 62.0 ms", msgs[0])

  def test_options_checked(self):
    for bad in (dict(plan_by="guess"), dict(plan_measure_top=0),
                dict(plan_budget_s=-1), dict(plan_threads=0),
                dict(memory_budget="12XB")):
      with self.subTest(bad=bad), self.assertRaises(
          hloverlap.options.OptionsError):
        self.opts.replace(**bad).validate()

