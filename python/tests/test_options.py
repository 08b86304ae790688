"""Option mapping: hloverlap.Options -> `hloverlap opt` arguments."""
import unittest

from hloverlap.options import Options, OptionsError, as_options


# As `hloverlap.binary.catalog` returns it.
CATALOG = {
    "presets": {"cleanup": "inline,tuple-simplify,dce",
                "hoist-pipeline": "inline,dce", "auto-rewrite": "auto-rewrite-plan",
                "fake-preset": "dce"},
    "passes": {"collective-pipeliner": {
        "depth": {"name": "depth", "type": "int", "min": 1, "max": 64}}},
}


class OptionsTest(unittest.TestCase):

  def test_defaults(self):
    self.assertEqual(Options().to_args("in.hlo", "out.hlo"),
                     ["opt", "in.hlo", "-o", "out.hlo",
                      "--preset=auto-rewrite", "--no-xla-flags-env"])
    self.assertNotIn("--no-xla-flags-env",
                     Options(xla_flags_env=True).to_args("a", "b"))

  def test_everything(self):
    o = Options(loops=["innermost:pipeline=depth=2",
                       "op_name~fori_loop:pipeline=off,double-buffer=off"],
                pipeline_depth=2, memory_budget="512MiB", remarks="r.txt",
                remarks_format="text", verify=False, extra_args=["--x"])
    self.assertEqual(o.to_args("a", "b"), [
        "opt", "a", "-o", "b", "--preset=auto-rewrite",
        "--loop=innermost:pipeline=depth=2",
        "--loop=op_name~fori_loop:pipeline=off,double-buffer=off",
        "--pipeline-depth=2", "--memory-budget=512MiB", "--remarks=r.txt",
        "--remarks-format=text", "--no-verify", "--no-xla-flags-env", "--x"])

  def test_bridge_remarks_path_is_json(self):
    o = Options(remarks="mine.txt", remarks_format="text")
    args = o.to_args("a", "b", remarks_path="/tmp/r.json")
    self.assertIn("--remarks=/tmp/r.json", args)
    self.assertIn("--remarks-format=json", args)
    self.assertNotIn("--remarks=mine.txt", args)

  def test_passes_replace_preset(self):
    o = Options(preset=None, passes=["inline", "collective-pipeliner"])
    self.assertIn("--passes=inline,collective-pipeliner", o.to_args("a", "b"))
    self.assertFalse(any(a.startswith("--preset") for a in o.to_args("a", "b")))
    with self.assertRaises(OptionsError):
      Options(preset="pipeline", passes="dce").validate()  # both fixed
    # The default preset is the bridge's planner: fixed passes replace it.
    Options(passes="dce").validate()
    self.assertFalse(Options(passes="dce").plans())
    self.assertTrue(Options().plans())

  def test_no_pipeline(self):
    for o in (Options(preset=None), Options(preset=None, passes=""),
              Options(preset=None, passes=[])):
      self.assertEqual(o.to_args("a", "b"),
                       ["opt", "a", "-o", "b", "--no-xla-flags-env"])

  def test_loops_dict_in_order(self):
    o = Options(loops={"all": "pipeline=off", "innermost": "pipeline=on"})
    self.assertEqual(o.loop_rules(),
                     ["all:pipeline=off", "innermost:pipeline=on"])

  def test_memory_budget_int(self):
    self.assertIn("--memory-budget=1048576",
                  Options(memory_budget=1 << 20).to_args("a", "b"))

  def test_invalid(self):
    for bad in [dict(loops=["innermost"]), dict(loops=[":x"]),
                dict(preset="fast"), dict(remarks_format="yaml"),
                dict(pipeline_depth=0), dict(pipeline_depth=65),
                dict(pipeline_depth=True), dict(memory_budget=-1),
                dict(memory_budget=" ")]:
      with self.subTest(bad=bad), self.assertRaises(OptionsError):
        Options(**bad).validate(CATALOG)

  def test_presets_and_depth_range_are_the_binarys(self):
    # What the binary declares decides (hloverlap.binary.catalog).
    Options(preset="fake-preset").validate(CATALOG)
    with self.assertRaisesRegex(OptionsError, "known: .*fake-preset"):
      Options(preset="xla-gpu").validate({"presets": {"fake-preset": ""},
                                          "passes": {}})
    narrow = {"presets": CATALOG["presets"], "passes": {
        "collective-pipeliner": {"depth": {"min": 1, "max": 8}}}}
    with self.assertRaisesRegex(OptionsError, r"\[1, 8\]"):
      Options(pipeline_depth=9).validate(narrow)
    Options(pipeline_depth=9).validate(CATALOG)

  def test_as_options(self):
    self.assertEqual(as_options(None), Options())
    o = Options(preset="cleanup")
    self.assertIs(as_options(o), o)
    self.assertEqual(as_options({"memory_budget": "1G"}).memory_budget, "1G")
    with self.assertRaisesRegex(OptionsError, "unknown option"):
      as_options({"membudget": 1})
    with self.assertRaises(OptionsError):
      as_options(3)


if __name__ == "__main__":
  unittest.main()
