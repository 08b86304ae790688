"""The package's imports go one way: no module imports (at its top or
inside a function) a module that imports it back, and every module imports
alone in a fresh interpreter."""
import ast
import os
import subprocess
import sys
import unittest

PACKAGE = os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "hloverlap")


def package_imports(path: str):
  """The hloverlap modules a file imports, anywhere in it."""
  with open(path) as f:
    tree = ast.parse(f.read(), path)
  out = set()
  for node in ast.walk(tree):
    if isinstance(node, ast.ImportFrom) and node.module:
      if node.module == "hloverlap":
        out.update(a.name for a in node.names)
      elif node.module.startswith("hloverlap."):
        out.add(node.module.split(".")[1])
    elif isinstance(node, ast.Import):
      out.update(a.name.split(".")[1] for a in node.names
                 if a.name.startswith("hloverlap."))
  return out


def modules():
  return sorted(n[:-3] for n in os.listdir(PACKAGE)
                if n.endswith(".py") and n != "__init__.py")


def find_cycle(graph):
  """A list of modules that import each other in a circle, or None."""
  state = {}

  def visit(m, path):
    state[m] = "open"
    for n in sorted(graph.get(m, ())):
      if state.get(n) == "open":
        return path[path.index(n):] + [n]
      if n not in state:
        found = visit(n, path + [n])
        if found:
          return found
    state[m] = "done"
    return None
  for m in sorted(graph):
    if m not in state:
      found = visit(m, [m])
      if found:
        return found
  return None


class ImportsTest(unittest.TestCase):

  def test_no_cycle(self):
    names = set(modules())
    graph = {m: package_imports(os.path.join(PACKAGE, m + ".py")) & names
             for m in names}
    self.assertIsNone(find_cycle(graph), graph)

  def test_finds_a_cycle(self):
    self.assertEqual(find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}),
                     ["a", "b", "c", "a"])
    self.assertIsNone(find_cycle({"a": {"b"}, "b": set(), "c": {"a"}}))

  def test_each_module_imports_alone(self):
    root = os.path.dirname(PACKAGE)
    for m in modules():
      with self.subTest(module=m):
        proc = subprocess.run(
            [sys.executable, "-c", "import hloverlap.{}".format(m)],
            cwd=root, capture_output=True, text=True, timeout=120,
            env=dict(os.environ, PYTHONPATH=root))
        self.assertEqual(proc.returncode, 0, proc.stderr)


if __name__ == "__main__":
  unittest.main()
