"""bench/sim_fidelity.py: the device part's logic with a faked JAX (the real
run needs a GPU), the fit part's arithmetic."""
import argparse
import importlib.util
import json
import os
import tarfile
import tempfile
import unittest

_BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "bench", "sim_fidelity.py")


def _load():
  spec = importlib.util.spec_from_file_location("sim_fidelity", _BENCH)
  mod = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(mod)
  return mod


class _Compiled:

  def __init__(self, cfg, options):
    self.cfg, self.options = cfg, options

  def as_text(self):
    return "HloModule jit_train_step, is_scheduled=true\n// %r\n" % (
        sorted(self.cfg.items()),)

  def __call__(self, p, x):
    return 0.5, p


class _FakeJax:
  __version__ = "fake"

  class _Dev:
    device_kind = "Fake GPU"

  class profiler:  # pylint: disable=invalid-name
    started = []

    @staticmethod
    def start_trace(log_dir, create_perfetto_trace=False):
      os.makedirs(os.path.join(log_dir, "plugins", "profile", "r"))
      with open(os.path.join(log_dir, "plugins", "profile", "r",
                             "perfetto_trace.json.gz"), "w") as f:
        f.write("{}")
      _FakeJax.profiler.started.append((log_dir, create_perfetto_trace))

    @staticmethod
    def stop_trace():
      pass

  def devices(self):
    return [self._Dev()]

  def block_until_ready(self, x):
    return x

  def jit(self, fn, **kw):
    cfg = fn

    class _Lowered:

      def compile(self, compiler_options=None):
        if compiler_options.get("xla_unknown"):
          raise RuntimeError("No such compile option: 'xla_unknown'")
        return _Compiled(cfg, compiler_options)

    class _Jitted:

      def lower(self, params, x):
        return _Lowered()

    return _Jitted()


class _FakeBench:
  BRIDGE_FLAGS = ["--xla_gpu_enable_command_buffer="]

  class X:  # pylint: disable=invalid-name
    BRIDGE_XLA_OPTIONS = {"xla_gpu_enable_triton_gemm": False,
                          "xla_unknown": True}

    @staticmethod
    def compile_dropping_unknown(fn, options, dropped):
      opts = dict(options)
      try:
        return fn(opts)
      except RuntimeError:
        del opts["xla_unknown"]
        dropped.append("xla_unknown")
        return fn(opts)

  @staticmethod
  def build(cfg):
    if cfg["layers"] == 16 and cfg["d"] == 768:
      raise ValueError("out of memory (planted)")
    return cfg, {}, {"w": 1}, 2

  @staticmethod
  def compiled_text(c):
    return c.as_text()

  @staticmethod
  def copy_tree(t):
    return dict(t)


class DeviceDryRunTest(unittest.TestCase):

  def test_rounds_time_every_step_once_per_round(self):
    sf = _load()
    with tempfile.TemporaryDirectory() as d:
      args = argparse.Namespace(
          out=os.path.join(d, "out"), scratch=os.path.join(d, "scratch"),
          budget_s=300, jobs=3, only="", no_profile=True, collectives=False,
          rounds=3)
      sf.device_main(args, jax=_FakeJax(), jbb=_FakeBench())
      with open(os.path.join(args.out, "steps.json")) as f:
        data = json.load(f)
      self.assertEqual(data["env"]["rounds"], 3)
      for s in data["steps"]:
        if "error" in s:
          continue
        self.assertEqual(len(s["round_ms"]), 3)
        self.assertEqual(s["step_ms"], sorted(s["round_ms"])[1])

  def test_writes_steps_modules_and_profiles(self):
    sf = _load()
    with tempfile.TemporaryDirectory() as d:
      args = argparse.Namespace(
          out=os.path.join(d, "out"), scratch=os.path.join(d, "scratch"),
          budget_s=300, jobs=3, only="", no_profile=False, collectives=True)
      sf.device_main(args, jax=_FakeJax(), jbb=_FakeBench())
      with open(os.path.join(args.out, "steps.json")) as f:
        data = json.load(f)
      steps = data["steps"]
      self.assertEqual(len(steps), len(sf.TRAIN) + len(sf.VALIDATION))
      self.assertEqual([s["name"] for s in steps],
                       [sf.step_name(t) for _, t in sf.all_steps()])
      failed = [s for s in steps if "error" in s]
      self.assertEqual([s["name"] for s in failed], ["L16_d768_s256_b1_a2"])
      ok = [s for s in steps if "error" not in s]
      for s in ok:
        self.assertGreater(s["step_ms"], 0)
        self.assertEqual(s["dropped_xla_options"], ["xla_unknown"])
        self.assertEqual(s["profile"], s["name"])
        self.assertIn(s["set"], ("train", "validation"))
      self.assertEqual(data["env"]["xla_flags"],
                       "--xla_gpu_enable_command_buffer=")
      with tarfile.open(os.path.join(args.out, "modules.tar.gz")) as tf:
        names = sorted(m.name for m in tf.getmembers() if m.isfile())
        self.assertEqual(names, sorted("modules/" + s["module"] for s in ok))
        text = tf.extractfile("modules/" + ok[0]["module"]).read().decode()
        self.assertIn("'remat', False", text)
      with tarfile.open(os.path.join(args.out, "profiles.tar.gz")) as tf:
        self.assertEqual(len(tf.getmembers()), len(ok))

  def test_sets_are_disjoint_and_varied(self):
    sf = _load()
    self.assertFalse(set(sf.TRAIN) & set(sf.VALIDATION))
    for s in (sf.TRAIN, sf.VALIDATION):
      self.assertEqual({t[5] for t in s}, {False, True})  # remat
      self.assertGreater(len({t[0] for t in s}), 3)  # layers
      self.assertGreater(len({t[1] for t in s}), 3)  # width
      self.assertGreater(len({t[2] for t in s}), 2)  # sequence
      self.assertGreater(len({t[3] for t in s}), 2)  # batch


if __name__ == "__main__":
  unittest.main()
