#!/usr/bin/env python3
"""Installs hloverlap with pip into a fresh virtual environment and checks
that the installed package finds and runs its own binary.

  check_pip_install.py --source DIR [--binary BUILT] [--keep]

pip runs as a user types it (`python -m pip install DIR`, build isolation
on) with its index pointed at an unreachable address, so any download
attempt fails the check. With --binary the wheel packages that built binary
(the in-tree backend's HLOVERLAP_PREBUILT_BINARY; ctest uses this, seconds);
without it the backend builds the tool with CMake (minutes). Checked:
  - the `hloverlap` console script runs and prints the package's version;
  - with HLOVERLAP_BIN unset and the venv's bin/ not on PATH,
    hloverlap.find_binary() is the binary inside the installed package, and
    `import hloverlap.jax` works (jax itself is imported lazily);
  - hloverlap.__version__, the package metadata and `hloverlap --version`
    are the same number;
  - hloverlap.run_opt runs that binary on a small module.
Exit status 0 when everything holds.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

CHECK = r"""
import importlib.metadata, os, subprocess, sys
import hloverlap, hloverlap.jax
exe = hloverlap.find_binary()
venv = sys.argv[1]
assert exe.startswith(os.path.join(venv, "lib")), exe
assert os.path.basename(os.path.dirname(exe)) == "_bin", exe
meta = importlib.metadata.version("hloverlap")
tool = subprocess.run([exe, "--version"], capture_output=True, text=True,
                      check=True).stdout.split()
assert tool == ["hloverlap", hloverlap.__version__] and meta == tool[1], (
    tool, hloverlap.__version__, meta)
text = ('HloModule m\n\nENTRY %main (p: f32[4]) -> f32[4] {\n'
        '  %p = f32[4]{0} parameter(0)\n'
        '  ROOT %r = f32[4]{0} add(%p, %p)\n}\n')
r = hloverlap.run_opt(text, hloverlap.Options(preset="cleanup"))
assert r.args[0] == exe and "add(" in r.text, r
print("ok: {} {} (metadata {}), run_opt through it".format(exe, tool[1], meta))
"""


def run(cmd, env, **kw):
  shown = [c if len(c) < 80 else c[:40] + "..." for c in cmd]
  print("+ " + " ".join(shown), flush=True)
  return subprocess.run(cmd, env=env, check=True, **kw)


def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--source", required=True)
  ap.add_argument("--binary", help="package this built binary (no CMake)")
  ap.add_argument("--python", default=sys.executable)
  ap.add_argument("--keep", action="store_true", help="keep the venv")
  args = ap.parse_args()
  tmp = tempfile.mkdtemp(prefix="hloverlap-pip-")
  venv = os.path.join(tmp, "venv")
  try:
    env = {k: v for k, v in os.environ.items()
           if k not in ("HLOVERLAP_BIN", "PYTHONPATH", "PIP_NO_INDEX",
                        "PIP_FIND_LINKS", "VIRTUAL_ENV")}
    # Any attempt to reach a package index fails at once.
    env["PIP_INDEX_URL"] = "http://127.0.0.1:9/simple"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["PIP_NO_CACHE_DIR"] = "1"
    if args.binary:
      env["HLOVERLAP_PREBUILT_BINARY"] = os.path.abspath(args.binary)
    # The base interpreter's pip (Debian's python3-pip) runs inside the venv
    # and installs into it; no ensurepip copy (seconds saved).
    run([args.python, "-m", "venv", "--without-pip", "--system-site-packages",
         venv], env)
    py = os.path.join(venv, "bin", "python")
    run([py, "-m", "pip", "install", os.path.abspath(args.source)], env)
    version = run([os.path.join(venv, "bin", "hloverlap"), "--version"], env,
                  capture_output=True, text=True).stdout.strip()
    print(version)
    # Not through PATH, not through HLOVERLAP_BIN: from the package.
    bare = {k: v for k, v in env.items() if k != "HLOVERLAP_PREBUILT_BINARY"}
    bare["PATH"] = "/usr/bin:/bin"
    run([py, "-c", CHECK, venv], bare, cwd=tmp)
    return 0
  except subprocess.CalledProcessError as e:
    print("FAILED: {} (exit {})".format(" ".join(e.cmd), e.returncode))
    return 1
  finally:
    if args.keep:
      print("kept " + tmp)
    else:
      shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
  sys.exit(main())
