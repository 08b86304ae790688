"""The JAX entry points with JAX, jaxlib and the binary faked (CI has no JAX).

Checks what the bridge hands to XLA (text, compile options) and how it maps
arguments and results; the real thing runs in bench/jax_bridge_bench.py.
"""
import os
import stat
import sys
import tempfile
import types
import unittest
import warnings
from unittest import mock

import hloverlap
from hloverlap import binary

HERE = os.path.dirname(os.path.abspath(__file__))
FAKE = os.path.join(HERE, "fake_hloverlap.py")

HLO = """HloModule jit_f, buffer_donor={ (0, {}) }, entry_computation_layout={(f32[4]{0}, f32[4]{0})->(f32[4]{0}, f32[])}, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<[\\"x\\"=2]>}}

ENTRY %main (p: f32[4], q: f32[4]) -> (f32[4], f32[]) {
  %p = f32[4]{0} parameter(0)
  %q = f32[4]{0} parameter(1)
  ROOT %r = f32[4]{0} add(%p, %p)
}
"""


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


class Lowered:
  """jax.stages.Lowered of f(p, q) -> (r, s) with p, q: f32[4]."""

  def __init__(self, text, out_shardings=None, args=None):
    self.text = text
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


class FakeJaxEnv:
  """sys.modules entries for jax/jaxlib; records what the bridge does."""

  def __init__(self, out_shardings="named", fail_output_shardings=True):
    self.compiled = []  # (stablehlo, compile options, device list)
    self.executed = []
    self.jit_calls = []
    self.lower_calls = []
    env = self
    named = NamedSharding(None, ("x",)) if out_shardings == "named" else None

    jax = types.ModuleType("jax")
    jax.Array = Array
    jax.devices = lambda: DEVICES
    jax.device_put = lambda x, *a: Array(getattr(x, "shape", ()), tag=x)

    def make_array(shape, sharding, arrays):
      return Array(shape, sharding=sharding, tag=[a.tag for a in arrays])
    jax.make_array_from_single_device_arrays = make_array

    def jit(fn, **kw):
      env.jit_calls.append(kw)

      def lower(*args, **kwargs):
        env.lower_calls.append((args, kwargs))
        return Lowered(HLO, named, args)
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

    class Executable:

      def execute_sharded(self, leaves):
        env.executed.append(list(leaves))
        return Results(leaves)

      def get_output_shardings(self):
        if fail_output_shardings:
          raise RuntimeError("no")
        return None

    class Backend:

      def compile_and_load(self, module, devices, options):
        env.compiled.append((module, options, devices))
        return Executable()
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
    f.write("#!/bin/sh\nexec '{}' '{}' \"$@\"\n".format(sys.executable, FAKE))
  os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
  return path


class CompileTest(unittest.TestCase):

  def setUp(self):
    self.exe = _fake_exe()
    self.opts = hloverlap.Options(binary=self.exe,
                                  loops=["op_name~fori_loop:pipeline=off"])

  def test_route_and_options(self):
    env = FakeJaxEnv()
    with env as hjax:
      c = hjax.compile(Lowered(HLO), self.opts)
    self.assertEqual(len(env.compiled), 1)
    module, options, devices = env.compiled[0]
    kind, text = module
    self.assertEqual(kind, "stablehlo")
    self.assertTrue(text.startswith("HloModule jit_f, buffer_donor="))
    self.assertIn("--loop=op_name~fori_loop:pipeline=off", text)
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
    self.assertEqual(c.remark_counts(), {"passed": 1})
    self.assertEqual(c.hlo_before, HLO)
    self.assertEqual(c.fixes, [])

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
    self.assertIn("%c = f32[4]{0} reshape(%p)", text)
    self.assertNotIn(" copy(", text)

  def test_keep_dir(self):
    keep = tempfile.mkdtemp()
    env = FakeJaxEnv()
    with env as hjax:
      hjax.compile(Lowered(HLO), self.opts.replace(keep_dir=keep))
    self.assertEqual(sorted(os.listdir(keep)), [
        "after.hlo", "after_route.hlo", "before.hlo", "remarks.json"])

  def test_errors(self):
    env = FakeJaxEnv()
    with mock.patch.dict(os.environ, {"FAKE_HLOVERLAP_EXIT": "3"}):
      with env as hjax:
        with self.assertRaises(binary.HloverlapError):
          hjax.compile(Lowered(HLO), self.opts)
        self.assertEqual(env.compiled, [])
        with warnings.catch_warnings(record=True) as w:
          warnings.simplefilter("always")
          c = hjax.compile(Lowered(HLO), self.opts, on_error="xla")
        self.assertTrue(any("hloverlap failed" in str(x.message) for x in w))
        self.assertEqual(env.compiled[0][0][1], HLO)
        self.assertIsNone(c.opt_result)
    with env as hjax:
      with self.assertRaisesRegex(ValueError, "must stay off"):
        hjax.compile(Lowered(HLO), self.opts.replace(
            xla_options={"xla_gpu_enable_pipelined_all_gather": True}))


class JitTest(unittest.TestCase):

  def test_static_args_and_cache(self):
    exe = _fake_exe()
    env = FakeJaxEnv()
    with env as hjax:
      f = hjax.jit(lambda p, n, q: None, static_argnums=(1,),
                   donate_argnums=(0,),
                   options=hloverlap.Options(binary=exe))
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


if __name__ == "__main__":
  unittest.main()
