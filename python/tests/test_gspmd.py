"""The GSPMD route's dump handling (no JAX)."""
import os
import shutil
import tempfile
import unittest

from hloverlap import gspmd
from tests import fixtures


def _write(case, files):
  d = tempfile.mkdtemp()
  case.addCleanup(shutil.rmtree, d, True)
  for name, text in files.items():
    with open(os.path.join(d, name), "w") as f:
      f.write(text)
  return d


class DumpNameTest(unittest.TestCase):

  def test_parse(self):
    f = gspmd.parse_dump_name("/d/module_0001.jit_train_step.0012."
                              "collective-optimizations.after_dce.before_"
                              "reduce-scatter-creator.txt")
    self.assertEqual((f.module, f.step, f.pipeline, f.after, f.before),
                     ("jit_train_step", 12, "collective-optimizations",
                      "dce", "reduce-scatter-creator"))
    self.assertIsNone(gspmd.parse_dump_name(
        "module_0001.jit_f.before_optimizations.txt"))
    self.assertIsNone(gspmd.parse_dump_name(
        "module_0001.jit_f.0012.buffer-assignment.txt"))
    odd = gspmd.parse_dump_name("x.after_a.before_b.txt")
    self.assertEqual((odd.module, odd.after, odd.before), ("", "a", "b"))


class PickStageTest(unittest.TestCase):

  def _pick(self, kind, n=2):
    d = _write(self, fixtures.dump_files(kind))
    return gspmd.pick_stage(gspmd.dump_files(d, "jit_g"), n)

  def test_preference_order(self):
    self.assertEqual(self._pick("gpu_pipeliner").label,
                     "before_collective_pipeliner")
    s = self._pick("gpu")
    self.assertEqual(s.label, "before_reduce_scatter_creator")
    self.assertTrue(s.path.endswith(
        ".0031.collective-optimizations.after_dce.before_"
        "reduce-scatter-creator.txt"))
    self.assertIn("spmd-partitioning", s.passes_seen)
    self.assertEqual(self._pick("cpu").label, "after_spmd_partitioning")

  def test_pass_names_differ(self):
    with self.assertRaisesRegex(gspmd.StageNotFound,
                                "names its passes differently"):
      self._pick("renamed")
    with self.assertRaisesRegex(gspmd.StageNotFound, "no dump was written"):
      self._pick("none")

  def test_one_device_needs_no_partitioner(self):
    d = _write(self, {"module_0001.jit_g.0002.spmd-simplify.after_sharding-remover"
                ".before_x.txt": fixtures.GSPMD})
    s = gspmd.pick_stage(gspmd.dump_files(d, "jit_g"), 1)
    self.assertEqual(s.label, "after_sharding_remover")

  def test_other_modules_ignored(self):
    files = dict(fixtures.dump_files("gpu"))
    files["module_0002.jit_other.0031.collective-optimizations.after_dce."
          "before_collective-pipeliner-forward.txt"] = "x"
    d = _write(self, files)
    s = gspmd.pick_stage(gspmd.dump_files(d, "jit_g"), 2)
    self.assertEqual(s.label, "before_reduce_scatter_creator")


class OptionsTest(unittest.TestCase):

  def test_disable_partitioning_keeps_user_passes(self):
    self.assertEqual(gspmd.disable_partitioning({})["xla_disable_hlo_passes"],
                     "shardy-xla,sharding-propagation,spmd-partitioning")
    o = gspmd.disable_partitioning({"xla_disable_hlo_passes":
                                    "fusion, spmd-partitioning", "a": 1})
    self.assertEqual(o, {"xla_disable_hlo_passes": "shardy-xla,sharding-"
                         "propagation,spmd-partitioning,fusion", "a": 1})
    d = gspmd.dump_options("/d")
    self.assertEqual(d["xla_dump_to"], "/d")
    for p in ("spmd-partitioning", "collective-pipeliner-forward",
              "reduce-scatter-creator"):
      self.assertIn(p, d["xla_dump_hlo_pass_re"])


if __name__ == "__main__":
  unittest.main()
