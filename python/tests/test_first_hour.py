"""A new user's first hour with the package (issue 26, "Python"): using the
JAX bridge without JAX, finding a clone's own build, and errors for bad
HLO that point at a file that still exists."""
import os
import re
import sys
import tempfile
import unittest
from unittest import mock

from hloverlap import binary
from hloverlap import errors
from hloverlap.options import Options

from tests.test_binary import SMALL, _fake_exe

SRC = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


class WithoutJaxTest(unittest.TestCase):

  def test_jit_says_what_to_install(self):
    # sys.modules[name] = None makes `import jax` fail as if not installed.
    with mock.patch.dict(sys.modules, {"jax": None}):
      import hloverlap.jax as hjax  # pylint: disable=g-import-not-at-top
      with self.assertRaises(errors.JaxNotFoundError) as cm:
        hjax.jit(lambda x: x)
    self.assertIn("hloverlap.jax.jit needs JAX", str(cm.exception))
    self.assertIn("pip install jax", str(cm.exception))
    # Still an ImportError for code that catches those.
    self.assertIsInstance(cm.exception, ImportError)


class CloneBuildTest(unittest.TestCase):

  def test_clone_build_is_found_after_path(self):
    fake_root = tempfile.mkdtemp()
    exe = _fake_exe(fake_root)
    with mock.patch.object(binary, "clone_binary", lambda: exe):
      self.assertEqual(binary.find_binary(None, {"PATH": tempfile.mkdtemp()}),
                       exe)
      on_path = _fake_exe(tempfile.mkdtemp())
      self.assertEqual(
          binary.find_binary(None, {"PATH": os.path.dirname(on_path)}),
          on_path)

  def test_clone_binary_is_build_hloverlap_of_this_tree(self):
    built = os.path.join(SRC, "build", "hloverlap")
    if not os.access(built, os.X_OK):
      self.skipTest("no build/hloverlap in this tree")
    self.assertEqual(binary.clone_binary(), built)


class BadHloErrorTest(unittest.TestCase):

  def test_error_names_a_file_that_still_exists(self):
    exe = _fake_exe(tempfile.mkdtemp())
    with mock.patch.dict(os.environ, {"FAKE_HLOVERLAP_EXIT": "2"}):
      with self.assertRaises(binary.HloverlapError) as cm:
        binary.run_opt(SMALL, Options(binary=exe))
    m = re.search(r"kept in (\S+)\)", str(cm.exception))
    self.assertIsNotNone(m, str(cm.exception))
    self.assertTrue(os.path.isfile(os.path.join(m.group(1), "before.hlo")))
    with open(os.path.join(m.group(1), "before.hlo")) as f:
      self.assertEqual(f.read(), SMALL)


if __name__ == "__main__":
  unittest.main()
