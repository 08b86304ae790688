"""XLA option sets of the bridge and the benchmark."""
import unittest

from hloverlap import xla

# The per-kind switches of XLA's pipeliner.
PIPELINING = ("xla_gpu_enable_pipelined_all_gather",
              "xla_gpu_enable_pipelined_reduce_scatter",
              "xla_gpu_enable_pipelined_all_reduce")

class XlaOptionsTest(unittest.TestCase):

  def test_bridge_turns_xla_pipelining_off(self):
    o = xla.bridge_options()
    self.assertEqual(xla.pipelining_options_on(o), [])
    for k in PIPELINING:
      self.assertIs(o[k], False)
    self.assertIs(o["xla_gpu_enable_latency_hiding_scheduler"], True)
    self.assertIs(o["xla_gpu_enable_while_loop_double_buffering"], False)

  def test_seed_flags_have_pipelining_on(self):
    self.assertEqual(xla.pipelining_options_on(xla.SEED_XLA_OPTIONS),
                     list(PIPELINING))
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



class ProcessFlagsTest(unittest.TestCase):

  def test_pipelining_flags_on(self):
    self.assertEqual(xla.pipelining_flags_on(""), [])
    self.assertEqual(xla.pipelining_flags_on(
        "--xla_gpu_enable_pipelined_all_gather=true "
        "--xla_gpu_enable_pipelined_reduce_scatter=false "
        "--xla_gpu_enable_pipelined_all_reduce "
        "--xla_gpu_enable_latency_hiding_scheduler=true"),
        ["xla_gpu_enable_pipelined_all_gather",
         "xla_gpu_enable_pipelined_all_reduce"])

  def test_newer_and_older_pipelining_flags(self):
    # The binary's table knows the flags a hand-kept list missed: the
    # per-kind modes and the all-kinds switch.
    self.assertEqual(xla.pipelining_flags_on(
        "--xla_gpu_pipeline_all_gather=ON --xla_gpu_pipeline_all_reduce=off "
        "--xla_gpu_pipeline_reduce_scatter=explicit "
        "--xla_gpu_enable_pipelined_collectives=1"),
        ["xla_gpu_pipeline_all_gather", "xla_gpu_pipeline_reduce_scatter",
         "xla_gpu_enable_pipelined_collectives"])
    self.assertEqual(xla.pipelining_flags_on(
        "--xla_gpu_enable_pipelined_collectives=false "
        "--xla_gpu_enable_while_loop_double_buffering=true"), [])


class FlagTableTest(unittest.TestCase):
  """The table is the binary's (`opt --list-xla-flags --json`)."""

  def test_table_from_binary(self):
    table = xla.xla_flag_table()
    self.assertEqual(table["xla_gpu_enable_pipelined_all_gather"]["pass"],
                     "collective-pipeliner")
    self.assertIn("", table["xla_gpu_enable_pipelined_all_reduce"][
        "pipelining_values"])  # a bare --flag is true
    self.assertEqual(
        table["xla_gpu_enable_latency_hiding_scheduler"]["pipelining_values"],
        [])
    pipelining = sorted(n for n, f in table.items() if f["pipelining_values"])
    self.assertEqual(len(pipelining), 7, pipelining)

  def test_user_option_spellings(self):
    with self.assertRaisesRegex(ValueError, "xla_gpu_pipeline_all_gather"):
      xla.bridge_options({"xla_gpu_pipeline_all_gather": "default"})
    xla.bridge_options({"xla_gpu_pipeline_all_gather": "off",
                        "xla_gpu_enable_pipelined_all_reduce": 0})


class DropUnknownTest(unittest.TestCase):

  def test_drops_and_retries(self):
    calls = []

    def compile_fn(o):
      calls.append(sorted(o))
      for k in ("xla_b", "xla_c"):
        if k in o:
          raise RuntimeError(
              "INVALID_ARGUMENT: No such compile option: '{}'".format(k))
      return "exe"
    dropped = []
    def bad_value(o):
      if "xla_e" in o:
        raise RuntimeError("INVALID_ARGUMENT: While setting option xla_e, "
                           "'x' is not a valid enum value.")
      return "ok"
    self.assertEqual(xla.compile_dropping_unknown(bad_value, {"xla_e": "x"},
                                                  dropped), "ok")
    self.assertEqual(dropped, ["xla_e"])
    dropped = []
    self.assertEqual(xla.compile_dropping_unknown(
        compile_fn, {"xla_a": 1, "xla_b": 2, "xla_c": 3}, dropped), "exe")
    self.assertEqual(dropped, ["xla_b", "xla_c"])
    self.assertEqual(calls[-1], ["xla_a"])

  def test_other_errors_propagate(self):
    def boom(o):
      raise RuntimeError("INTERNAL: out of memory")
    with self.assertRaisesRegex(RuntimeError, "out of memory"):
      xla.compile_dropping_unknown(boom, {"xla_a": 1})

    def unknown_not_ours(o):
      raise RuntimeError("No such compile option: 'xla_zzz'")
    with self.assertRaises(RuntimeError):
      xla.compile_dropping_unknown(unknown_not_ours, {"xla_a": 1})


if __name__ == "__main__":
  unittest.main()
