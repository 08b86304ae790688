"""Issue 25's bench scripts: bench/collective_table.py (the calibration's
glue taken out), bench/sim_multi_gpu.py (reading XLA's tuple-wrapped async
shapes), bench/nccl_contention.py (no GPU: a message and a file, exit 0).
The device parts need GPUs and are not run here."""
import importlib.util
import json
import os
import sys
import tempfile
import types
import unittest
from unittest import mock

_BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "bench")


def _load(name):
  spec = importlib.util.spec_from_file_location(
      name, os.path.join(_BENCH, name + ".py"))
  mod = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(mod)
  return mod


class CollectiveTableTest(unittest.TestCase):

  def test_glue_kernel_is_taken_out(self):
    ct = _load("collective_table")
    b = 1 << 30
    cal = {"collectives": {"group_size": 2,
                           "all-gather": [{"bytes": b, "seconds": 2e-3}],
                           "reduce-scatter": [{"bytes": b, "seconds": 2e-3}],
                           "all-reduce": [{"bytes": b, "seconds": 4e-3}]}}
    rows = {k: t for k, g, n, t in ct.rows(cal)}
    rate = 4.3e12 * 0.85 / 1e6  # bytes per us
    overhead = 2.69141
    self.assertAlmostEqual(rows["all-gather"], 2000 - overhead - b / rate, 6)
    self.assertAlmostEqual(rows["reduce-scatter"],
                           2000 - overhead - 1.5 * b / rate, 6)
    self.assertAlmostEqual(rows["all-reduce"], 4000 - overhead - 2 * b / rate,
                           6)
    cal["glue"] = False  # measured without glue: as is
    rows = {k: t for k, g, n, t in ct.rows(cal)}
    self.assertAlmostEqual(rows["all-gather"], 2000, 6)

  def test_time_below_its_glue_is_an_error(self):
    ct = _load("collective_table")
    cal = {"collectives": {"group_size": 2, "all-reduce": [
        {"bytes": 1 << 30, "seconds": 1e-4}]}}
    with self.assertRaises(ValueError):
      ct.rows(cal)


class SimMultiGpuTest(unittest.TestCase):

  def test_unwraps_single_operand_async_shapes_only(self):
    sm = _load("sim_multi_gpu")
    text = ("  %a = ((bf16[8,4]{1,0}), bf16[16,4]{1,0}) all-gather-start(%x)\n"
            "  %r = ((f32[]), f32[]) all-reduce-start(%y)\n"
            "  %c = ((bf16[8]{0}, bf16[4]{0}), (bf16[16]{0}, bf16[8]{0})) "
            "all-gather-start(%p, %q)\n")
    out = sm.unwrap_async_tuples(text)
    self.assertIn("%a = (bf16[8,4]{1,0}, bf16[16,4]{1,0}) all-gather-start(",
                  out)
    self.assertIn("%r = f32[] all-reduce-start(", out)
    self.assertIn("%c = ((bf16[8]{0}, bf16[4]{0}), (bf16[16]{0}, "
                  "bf16[8]{0})) all-gather-start(", out)

  def test_every_step_has_a_module_spec_and_a_measurement(self):
    sm = _load("sim_multi_gpu")
    self.assertGreaterEqual(len(sm.STEPS), 13)
    for name, spec, measured, where in sm.STEPS:
      self.assertRegex(spec, r"^(corpus|plan):")
      self.assertGreater(measured, 0)
      self.assertTrue(where)
    self.assertEqual(sm.FIT, [])  # all validation (docs/SIMULATOR.md)


class NcclContentionTest(unittest.TestCase):

  def _fake_jax(self, devices):
    jax = types.ModuleType("jax")
    jax.__version__ = "fake"
    jax.devices = lambda: devices
    jnp = types.ModuleType("jax.numpy")
    jax.numpy = jnp
    return {"jax": jax, "jax.numpy": jnp}

  def test_no_gpu_writes_a_file_and_exits_cleanly(self):
    nc = _load("nccl_contention")
    with tempfile.TemporaryDirectory() as tmp:
      out = os.path.join(tmp, "c.json")
      with mock.patch.dict(sys.modules, self._fake_jax([])), \
           mock.patch.object(sys, "argv", ["nccl_contention.py", "--out", out]), \
           mock.patch.dict(os.environ, {"XLA_FLAGS": ""}):
        self.assertEqual(nc.main(), 0)
        self.assertIn("--xla_gpu_enable_latency_hiding_scheduler=true",
                      os.environ["XLA_FLAGS"])
      with open(out) as f:
        result = json.load(f)
      self.assertEqual(result["skipped"], "no GPU")
      self.assertNotIn("collectives", result)

  def test_loop_counts_give_tens_of_milliseconds(self):
    nc = _load("nccl_contention")
    for guess in (20e-6, 1e-3, 5e-3):
      k1, k2 = nc.loop_counts(guess)
      self.assertGreater(k2, k1)
      self.assertGreaterEqual((k2 - k1) * guess, 0.019)


if __name__ == "__main__":
  unittest.main()
