"""Option mapping: hloverlap.Options -> `hloverlap opt` arguments."""
import os
import subprocess
import tempfile
import unittest

from hloverlap.options import Options, OptionsError, as_options
from hloverlap.options import parse_byte_size


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


# Spellings of sizes, valid and not, for parse_byte_size and the binary.
SIZES = ["4096", "0", "-0", "512M", "512m", "1.5GiB", "0.5KB", "2T", "64K",
         "1kib", "1e6", "1E+3K", ".5K", "5.K", "1b", "12XB", "-1", "1e30",
         "8388608T", "8388607T", "nan", "inf", "1 K", "+5", "0x10", "1_000",
         "1e", "K", "", "1.2.3", "1GiBB", "١٢"]


def _real_binary():
  p = os.environ.get("HLOVERLAP_BIN")
  return p if p and os.path.isfile(p) and os.access(p, os.X_OK) else None


class ByteSizeTest(unittest.TestCase):

  def test_values(self):
    self.assertEqual(parse_byte_size("4096"), 4096)
    self.assertEqual(parse_byte_size("1.5GiB"), 1536 << 20)
    self.assertEqual(parse_byte_size(" 512m "), 512 << 20)
    self.assertEqual(parse_byte_size("0.5KB"), 512)
    self.assertEqual(parse_byte_size("1E+3K"), 1024000)
    self.assertEqual(parse_byte_size(7), 7)
    for bad in ("1 K", "+5", "0x10", "1_000", "8388608T", "١٢", "nan"):
      with self.subTest(bad=bad), self.assertRaises(OptionsError):
        parse_byte_size(bad)

  def test_to_args_drops_spaces_as_the_parser_does(self):
    self.assertIn("--memory-budget=1G",
                  Options(memory_budget=" 1G ").to_args("a", "b"))

  @unittest.skipUnless(_real_binary(), "HLOVERLAP_BIN not set (ctest sets it)")
  def test_the_binary_agrees(self):
    # src/support/byte_size.h owns the grammar: the binary accepts exactly
    # the spellings parse_byte_size accepts.
    with tempfile.TemporaryDirectory() as d:
      path = os.path.join(d, "m.hlo")
      with open(path, "w") as f:
        f.write("HloModule m\n\nENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n")
      for size in SIZES:
        with self.subTest(size=size):
          proc = subprocess.run(
              [_real_binary(), "opt", path, "-o", os.devnull,
               "--no-xla-flags-env", "--memory-budget=" + size],
              capture_output=True, text=True, timeout=60)
          try:
            parse_byte_size(size)
            python_accepts = True
          except OptionsError:
            python_accepts = False
          self.assertEqual(proc.returncode == 0, python_accepts,
                           proc.stderr[-300:])


if __name__ == "__main__":
  unittest.main()
