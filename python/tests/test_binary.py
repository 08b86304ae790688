"""Finding and running the hloverlap binary (a fake one; the real one when
HLOVERLAP_BIN is set, as ctest does)."""
import json
import os
import stat
import sys
import tempfile
import unittest
from unittest import mock

from hloverlap import binary
from hloverlap.options import Options

HERE = os.path.dirname(os.path.abspath(__file__))
FAKE = os.path.join(HERE, "fake_hloverlap.py")
SRC = os.path.dirname(os.path.dirname(HERE))

SMALL = """HloModule m, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

ENTRY %main (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  ROOT %r = f32[4]{0} add(%p, %p)
}
"""


def _fake_exe(tmp):
  """An executable wrapper around fake_hloverlap.py (any python3)."""
  path = os.path.join(tmp, "hloverlap")
  with open(path, "w") as f:
    f.write("#!/bin/sh\nexec '{}' '{}' \"$@\"\n".format(sys.executable, FAKE))
  os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
  return path


def _read(path):
  with open(path) as f:
    return f.read()


class FindBinaryTest(unittest.TestCase):

  def setUp(self):
    self.tmp = tempfile.mkdtemp()
    self.exe = _fake_exe(self.tmp)

  def test_order(self):
    other = tempfile.mkdtemp()
    other_exe = _fake_exe(other)
    env = {"HLOVERLAP_BIN": other_exe, "PATH": self.tmp}
    self.assertEqual(binary.find_binary(self.exe, env), self.exe)
    self.assertEqual(binary.find_binary(None, env), other_exe)
    self.assertEqual(binary.find_binary(None, {"PATH": self.tmp}), self.exe)

  def test_packaged_binary_after_env_before_path(self):
    packaged = _fake_exe(tempfile.mkdtemp())
    other = _fake_exe(tempfile.mkdtemp())
    with mock.patch.object(binary, "packaged_binary", lambda: packaged):
      self.assertEqual(binary.find_binary(None, {"PATH": self.tmp}), packaged)
      self.assertEqual(
          binary.find_binary(None, {"HLOVERLAP_BIN": other,
                                    "PATH": self.tmp}), other)
      self.assertEqual(binary.find_binary(self.exe, {}), self.exe)
    # A source tree has none.
    self.assertIsNone(binary.packaged_binary())

  def test_errors(self):
    with self.assertRaisesRegex(binary.BinaryNotFoundError, "Options.binary"):
      binary.find_binary("/nonexistent/hloverlap", {})
    with self.assertRaisesRegex(binary.BinaryNotFoundError, "HLOVERLAP_BIN"):
      binary.find_binary(None, {"HLOVERLAP_BIN": "/nonexistent",
                                "PATH": self.tmp})
    with mock.patch.object(binary, "clone_binary", lambda: None):
      with self.assertRaisesRegex(binary.BinaryNotFoundError, "not found"):
        binary.find_binary(None, {"PATH": tempfile.mkdtemp()})
    plain = os.path.join(self.tmp, "plain")
    open(plain, "w").close()
    with self.assertRaises(binary.BinaryNotFoundError):
      binary.find_binary(plain, {})


class RunOptFakeTest(unittest.TestCase):

  def setUp(self):
    self.tmp = tempfile.mkdtemp()
    self.exe = _fake_exe(self.tmp)

  def test_flags_and_remarks(self):
    user_remarks = os.path.join(self.tmp, "user.json")
    r = binary.run_opt(SMALL, Options(binary=self.exe,
                                      loops=["innermost:pipeline=depth=2"],
                                      memory_budget="1GiB",
                                      remarks=user_remarks))
    self.assertTrue(r.text.startswith("HloModule m"))
    self.assertIn("--preset=auto-rewrite", r.text)
    self.assertIn("--loop=innermost:pipeline=depth=2", r.text)
    self.assertIn("--memory-budget=1GiB", r.text)
    self.assertIn("--remarks-format=json", r.text)
    self.assertEqual(len(r.remarks), 1)
    self.assertEqual(r.remarks[0]["kind"], "passed")
    self.assertEqual(binary.summarize_remarks(r.remarks), {"passed": 1})
    self.assertEqual(json.loads(_read(user_remarks))["loop"], "while.1")
    self.assertEqual(r.args[0], self.exe)

  def test_text_remarks_for_user(self):
    user_remarks = os.path.join(self.tmp, "user.txt")
    binary.run_opt(SMALL, {"binary": self.exe, "remarks": user_remarks,
                           "remarks_format": "text"})
    self.assertEqual(
        _read(user_remarks),
        "passed: collective-pipeliner: prefetched all-gather 1 iteration "
        "ahead [ag in loop while.1] (bytes_moved=16, depth=1)\n")

  def test_keep_dir(self):
    keep = os.path.join(self.tmp, "keep")
    binary.run_opt(SMALL, Options(binary=self.exe, keep_dir=keep))
    self.assertEqual(sorted(os.listdir(keep)),
                     ["after.hlo", "before.hlo", "remarks.json"])

  def test_failure(self):
    with mock.patch.dict(os.environ, {"FAKE_HLOVERLAP_EXIT": "2"}):
      with self.assertRaises(binary.HloverlapError) as cm:
        binary.run_opt(SMALL, Options(binary=self.exe))
    self.assertEqual(cm.exception.returncode, 2)
    self.assertIn("rejected the input", str(cm.exception))
    self.assertIn("expected 'HloModule'", cm.exception.stderr)

  def test_bad_remarks(self):
    with self.assertRaises(binary.HloverlapError):
      binary.parse_remarks('{"kind": "passed"}\nnot json\n')
    with self.assertRaises(binary.HloverlapError):
      binary.parse_remarks('[1]\n')
    self.assertEqual(binary.parse_remarks("\n\n"), [])


def _post_optimization_opcodes(module_text):
  """Opcodes of XLA's optimized modules, which the StableHLO route cannot
  take (fusions, async start/done pairs)."""
  from hloverlap import text  # pylint: disable=g-import-not-at-top
  return sorted(op for op in text.opcode_counts(module_text)
                if op == "fusion" or op.endswith(("-start", "-done")))


def _real_binary():
  p = os.environ.get("HLOVERLAP_BIN")
  if p and os.path.isfile(p) and os.access(p, os.X_OK):
    return p
  return None


class CatalogTest(unittest.TestCase):

  def setUp(self):
    self.tmp = tempfile.mkdtemp()
    self.exe = _fake_exe(self.tmp)
    self.log = os.path.join(self.tmp, "list.log")

  def test_read_from_the_binary_once(self):
    with mock.patch.dict(os.environ, {"FAKE_HLOVERLAP_LIST_LOG": self.log}):
      presets = binary.known_presets(self.exe)
      self.assertIn("fake-preset", presets)
      self.assertEqual(binary.catalog(self.exe)["passes"][
          "collective-pipeliner"]["depth"]["max"], 64)
      binary.known_presets(self.exe)
      # A preset only the binary knows is accepted; run_opt asks it.
      binary.run_opt(SMALL, Options(binary=self.exe, preset="fake-preset"))
    self.assertEqual(_read(self.log).split(),
                     ["--list-presets", "--list-passes"])

  def test_unknown_preset_is_caught_before_the_run(self):
    with self.assertRaisesRegex(Exception, "unknown preset 'fast'"):
      binary.run_opt(SMALL, Options(binary=self.exe, preset="fast"))


@unittest.skipUnless(_real_binary(), "HLOVERLAP_BIN not set (ctest sets it)")
class RunOptRealTest(unittest.TestCase):

  def test_catalog_of_the_real_binary(self):
    c = binary.catalog(_real_binary())
    self.assertIn("hoist-pipeline", c["presets"])
    self.assertIn("collective-pipeliner", c["presets"]["hoist-pipeline"])
    depth = c["passes"]["collective-pipeliner"]["depth"]
    self.assertEqual((depth["min"], depth["max"]), (1, 64))
    Options().validate(c)  # the default preset is the binary's

  def test_seed_example_pipelines(self):
    src = _read(os.path.join(SRC, "examples", "seed_scenario.hlo"))
    r = binary.run_opt(src, Options(
        preset="hoist-pipeline", loops=["op_name~fori_loop:pipeline=off"]))
    self.assertTrue(r.text.startswith("HloModule"))
    kinds = binary.summarize_remarks(r.remarks)
    self.assertGreater(kinds.get("passed", 0), 0, r.remarks)
    self.assertEqual(_post_optimization_opcodes(r.text), [])

  def test_default_plans_and_stays_on_the_route(self):
    # auto-rewrite: one AutoPlanChoice, and whatever it chose is a module
    # the StableHLO route takes (no async -start/-done).
    src = _read(os.path.join(SRC, "examples", "seed_scenario.hlo"))
    r = binary.run_opt(src, Options())
    names = [x.get("name") for x in r.remarks]
    self.assertEqual(names.count("AutoPlanChoice"), 1, r.remarks)
    self.assertEqual(_post_optimization_opcodes(r.text), [])

  def test_user_error(self):
    with self.assertRaises(binary.HloverlapError) as cm:
      binary.run_opt("HloModule m\nENTRY e {\n  ROOT x = f32[] foo()\n}\n")
    self.assertEqual(cm.exception.returncode, 2)

  def test_bad_loop_rule_from_tool(self):
    with self.assertRaises(binary.HloverlapError) as cm:
      binary.run_opt(SMALL, Options(loops=["nonsense~x:pipeline=maybe"]))
    self.assertEqual(cm.exception.returncode, 2)


if __name__ == "__main__":
  unittest.main()
