"""XLA option sets of the bridge and the benchmark."""
import unittest

from hloverlap import xla


class XlaOptionsTest(unittest.TestCase):

  def test_bridge_turns_xla_pipelining_off(self):
    o = xla.bridge_options()
    for k in xla.PIPELINING_KEYS:
      self.assertIs(o[k], False)
    self.assertIs(o["xla_gpu_enable_latency_hiding_scheduler"], True)
    self.assertIs(o["xla_gpu_enable_while_loop_double_buffering"], False)

  def test_seed_flags_have_pipelining_on(self):
    for k in xla.PIPELINING_KEYS:
      self.assertIs(xla.SEED_XLA_OPTIONS[k], True)
    self.assertNotIn("xla_gpu_graph_level", xla.SEED_XLA_OPTIONS)
    self.assertNotIn("xla_gpu_enable_pipelined_collectives",
                     xla.SEED_XLA_OPTIONS)

  def test_user_options(self):
    o = xla.bridge_options({"--xla_gpu_enable_triton_gemm": True})
    self.assertIs(o["xla_gpu_enable_triton_gemm"], True)
    with self.assertRaises(ValueError):
      xla.bridge_options({"gpu_thing": 1})
    with self.assertRaisesRegex(ValueError, "must stay off"):
      xla.bridge_options({"xla_gpu_enable_pipelined_all_gather": "true"})
    o = xla.bridge_options({"xla_gpu_enable_pipelined_all_gather": True},
                           allow_xla_pipelining=True)
    self.assertIs(o["xla_gpu_enable_pipelined_all_gather"], True)

  def test_overrides_and_flags(self):
    self.assertEqual(xla.overrides_list({"a": True, "b": "x"}),
                     [("a", True), ("b", "x")])
    with self.assertRaises(ValueError):
      xla.overrides_list({"a": [1]})
    self.assertEqual(xla.as_xla_flags({"xla_a": False, "xla_b": "p,q"}),
                     "--xla_a=false --xla_b=p,q")


if __name__ == "__main__":
  unittest.main()
