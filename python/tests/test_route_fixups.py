"""The route fixups as passes of the tool (src/passes/route_fixups.h)
against the Python text edits they replace (hloverlap.text): the same
module text, byte for byte, on JAX lowerings and XLA dumps of the shared
corpus. Needs the real binary (HLOVERLAP_BIN; ctest sets it)."""
import glob
import os
import subprocess
import tempfile
import unittest

from hloverlap import text

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
CORPUS = os.path.join(os.path.dirname(ROOT), "shared", "corpus")
STAGES = ("00_jax_lowered", "01_before_optimizations",
          "02_after_spmd_partitioner", "03_before_collective_pipeliner",
          "04_after_collective_pipeliner")


def _real_binary():
  p = os.environ.get("HLOVERLAP_BIN")
  return p if p and os.path.isfile(p) and os.access(p, os.X_OK) else None


def _modules():
  out = []
  for d in sorted(glob.glob(os.path.join(CORPUS, "*"))):
    if os.path.basename(d).startswith("big_"):
      continue  # the same programs, larger
    out += [os.path.join(d, s + ".hlo") for s in STAGES
            if os.path.isfile(os.path.join(d, s + ".hlo"))]
  # A Shardy shard_map lowering (copies, shardings) from the lit tests.
  out.append(os.path.join(ROOT, "tests", "bridge",
                          "sdy_manual_computation_body.hlo"))
  return out


@unittest.skipUnless(_real_binary(), "HLOVERLAP_BIN not set (ctest sets it)")
@unittest.skipUnless(os.path.isdir(CORPUS), "no shared corpus")
class RouteFixupPassesTest(unittest.TestCase):

  def opt(self, module_text: str, passes: str, where: str = "") -> str:
    with tempfile.TemporaryDirectory() as d:
      src, out = os.path.join(d, "in.hlo"), os.path.join(d, "out.hlo")
      with open(src, "w") as f:
        f.write(module_text)
      # No passes: parse and print.
      flags = ["--passes=" + passes] if passes else []
      proc = subprocess.run(
          [_real_binary(), "opt", src, "-o", out, "--no-verify",
           "--no-xla-flags-env"] + flags,
          capture_output=True, text=True, timeout=300)
      self.assertEqual(proc.returncode, 0, where + ": " + proc.stderr[-1000:])
      with open(out) as f:
        return f.read()

  def test_same_text_as_the_python_edits(self):
    modules = _modules()
    self.assertGreater(len(modules), 10)
    copies = 0
    for path in modules:
      with open(path) as f:
        original = f.read()
      # What the bridge hands the edits: the tool's printed module.
      printed = self.opt(original, "", path)
      with self.subTest(module=path, edit="copy-to-reshape"):
        try:
          expected, fixes = text.make_route_legal(printed)
        except ValueError:  # post-optimization opcodes: not a bridge input
          expected, fixes = None, []
        if expected is not None:
          self.assertEqual(self.opt(printed, "copy-to-reshape"), expected)
        copies += len(fixes)
      with self.subTest(module=path, edit="strip-buffer-donor"):
        self.assertEqual(self.opt(printed, "strip-buffer-donor"),
                         text.strip_buffer_donor(printed))
      with self.subTest(module=path, edit="strip-shardings"):
        # The bridge strips XLA's dump text, then the tool reads it.
        self.assertEqual(self.opt(original, "strip-shardings"),
                         self.opt(text.strip_shardings(original), ""))
    self.assertGreater(copies, 0)  # the corpus has copies to rewrite


if __name__ == "__main__":
  unittest.main()
