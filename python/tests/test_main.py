"""`hloverlap` as the installed console script (hloverlap.__main__): it runs
the packaged binary (or HLOVERLAP_BIN) in place of itself, never the PATH
one (which may be the script itself)."""
import os
import subprocess
import sys
import tempfile
import unittest

from tests.test_binary import _fake_exe

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run_main(args, env):
  env = dict(env, PYTHONPATH=PYTHON_DIR)
  return subprocess.run([sys.executable, "-m", "hloverlap"] + args, env=env,
                        capture_output=True, text=True)


class MainTest(unittest.TestCase):

  def test_execs_the_binary_with_its_exit_status(self):
    exe = _fake_exe(tempfile.mkdtemp())
    base = {"PATH": "/usr/bin:/bin", "HLOVERLAP_BIN": exe}
    r = _run_main(["bogus"], base)
    self.assertEqual(r.returncode, 2)
    self.assertIn("usage: opt IN -o OUT", r.stderr)
    r = _run_main(["opt", "x"], dict(base, FAKE_HLOVERLAP_EXIT="3"))
    self.assertEqual(r.returncode, 3)

  def test_no_binary_is_a_clear_error_not_a_path_lookup(self):
    # An `hloverlap` on PATH is not used: it may be this very script.
    on_path = tempfile.mkdtemp()
    _fake_exe(on_path)
    r = _run_main(["--version"], {"PATH": on_path})
    self.assertEqual(r.returncode, 2)
    self.assertIn("the package has no binary", r.stderr)
    self.assertIn("pip install .", r.stderr)


if __name__ == "__main__":
  unittest.main()
