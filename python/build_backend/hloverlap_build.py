"""The PEP 517 build backend of hloverlap (pyproject.toml names it).

`pip install .` must work with only Debian's pip and no package index: pip
builds in an isolated environment and installs the backend's requirements
there first, which for setuptools means a download. This backend needs
nothing but the standard library (`requires = []`), so the isolated
environment stays empty and nothing is fetched. It

  1. builds the C++ tool with CMake (Release, `-DHLOVERLAP_BENCH=OFF`,
     Ninja when available) and installs it with `cmake --install --strip`
     into a staging folder;
  2. checks that `hloverlap --version` is the package's version
     (python/hloverlap/_version.py, which CMakeLists.txt reads too);
  3. writes the wheel by hand: the Python package from python/hloverlap,
     the binary as hloverlap/_bin/hloverlap (where hloverlap.binary looks
     first), and a `hloverlap` console script (hloverlap.__main__:main, a
     thin exec of that binary) for PATH.

Settings (pip's `--config-settings KEY=VALUE`, or the environment, for pip
versions that do not pass config settings to every hook):
  build-dir  / HLOVERLAP_BUILD_DIR        CMake build folder
                                          (default: build/pip in the source)
  cmake-args / HLOVERLAP_CMAKE_ARGS       extra CMake arguments (spaces)
  binary     / HLOVERLAP_PREBUILT_BINARY  package this binary, no CMake
                                          (the test suite uses it)
CMake's own environment variables apply as usual
(CMAKE_BUILD_PARALLEL_LEVEL, CMAKE_CXX_COMPILER_LAUNCHER, CXX).
"""

import base64
import hashlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import zipfile

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
PACKAGE_DIR = os.path.join(SOURCE_DIR, "python", "hloverlap")
NAME = "hloverlap"


class BuildError(RuntimeError):
  pass


# --- pyproject.toml ----------------------------------------------------------

def _parse_toml_subset(text):
  """The TOML this project's pyproject.toml uses: [tables], key = "string",
  key = ["strings", ...] (one line). For Pythons without tomllib."""
  def strip_comment(line):
    quoted = False
    for i, c in enumerate(line):
      if c == '"':
        quoted = not quoted
      elif c == "#" and not quoted:
        return line[:i].strip()
    return line.strip()

  data = {}
  table = data
  for n, raw in enumerate(text.splitlines(), 1):
    line = strip_comment(raw)
    if not line:
      continue
    m = re.fullmatch(r"\[([A-Za-z0-9_.-]+)\]", line)
    if m:
      table = data
      for part in m.group(1).split("."):
        table = table.setdefault(part, {})
      continue
    m = re.fullmatch(r'([A-Za-z0-9_-]+|"[^"]+")\s*=\s*(.+)', line)
    if not m:
      raise BuildError("pyproject.toml:{}: cannot read {!r}".format(n, raw))
    key, value = m.group(1).strip('"'), m.group(2).strip()
    if value.startswith('"') and value.endswith('"'):
      table[key] = value[1:-1]
    elif value.startswith("[") and value.endswith("]"):
      table[key] = re.findall(r'"([^"]*)"', value)
    else:
      raise BuildError("pyproject.toml:{}: unsupported value {!r}".format(
          n, value))
  return data


def _pyproject():
  path = os.path.join(SOURCE_DIR, "pyproject.toml")
  with open(path, "rb") as f:
    raw = f.read()
  try:
    import tomllib  # Python 3.11+
    return tomllib.loads(raw.decode("utf-8"))
  except ImportError:
    return _parse_toml_subset(raw.decode("utf-8"))


def _version():
  with open(os.path.join(PACKAGE_DIR, "_version.py")) as f:
    m = re.search(r'^__version__ = "([0-9]+\.[0-9]+\.[0-9]+)"', f.read(),
                  re.MULTILINE)
  if not m:
    raise BuildError("python/hloverlap/_version.py has no __version__")
  return m.group(1)


def _metadata():
  """METADATA (core metadata 2.1) from the [project] table."""
  project = _pyproject().get("project", {})
  if project.get("name") != NAME:
    raise BuildError("pyproject.toml: [project] name must be " + NAME)
  lines = ["Metadata-Version: 2.1", "Name: " + NAME,
           "Version: " + _version()]
  if project.get("description"):
    lines.append("Summary: " + project["description"])
  if project.get("requires-python"):
    lines.append("Requires-Python: " + project["requires-python"])
  for c in project.get("classifiers", []):
    lines.append("Classifier: " + c)
  body = ""
  readme = project.get("readme")
  if isinstance(readme, str) and os.path.isfile(
      os.path.join(SOURCE_DIR, readme)):
    lines.append("Description-Content-Type: text/markdown")
    with open(os.path.join(SOURCE_DIR, readme), encoding="utf-8") as f:
      body = "\n" + f.read()
  return "\n".join(lines) + "\n" + body


def _entry_points():
  scripts = _pyproject().get("project", {}).get("scripts", {})
  return "[console_scripts]\n" + "".join(
      "{} = {}\n".format(k, v) for k, v in sorted(scripts.items()))


def _dist_info():
  return "{}-{}.dist-info".format(NAME, _version())


def _wheel_tag():
  plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
  return "py3-none-" + plat


def _dist_info_files():
  return {
      "METADATA": _metadata(),
      "WHEEL": ("Wheel-Version: 1.0\nGenerator: hloverlap_build\n"
                "Root-Is-Purelib: false\nTag: {}\n".format(_wheel_tag())),
      "entry_points.txt": _entry_points(),
      "top_level.txt": NAME + "\n",
  }


# --- building the binary ------------------------------------------------------

def _setting(config_settings, key, env):
  value = (config_settings or {}).get(key)
  if isinstance(value, list):  # pip passes repeated settings as a list
    value = " ".join(value)
  return value if value else os.environ.get(env, "")


def _run(cmd):
  sys.stderr.write("hloverlap_build: " + " ".join(shlex.quote(c)
                                                   for c in cmd) + "\n")
  try:
    subprocess.run(cmd, check=True, stdout=sys.stderr)
  except FileNotFoundError:
    raise BuildError("{} not found: install the build dependencies first "
                     "(bash scripts/install-deps.sh on Debian 12)".format(
                         cmd[0]))
  except subprocess.CalledProcessError as e:
    raise BuildError("{} failed with exit status {} (the output is above; "
                     "missing libraries: bash scripts/install-deps.sh)".format(
                         " ".join(cmd[:3]), e.returncode))


def _build_binary(config_settings, staging):
  """Builds and installs bin/hloverlap into `staging`; returns its path."""
  build_dir = _setting(config_settings, "build-dir", "HLOVERLAP_BUILD_DIR")
  if not build_dir:
    build_dir = os.path.join(SOURCE_DIR, "build", "pip")
  build_dir = os.path.abspath(build_dir)
  configure = ["cmake", "-S", SOURCE_DIR, "-B", build_dir,
               "-DCMAKE_BUILD_TYPE=Release", "-DHLOVERLAP_BENCH=OFF"]
  if shutil.which("ninja") and not os.path.exists(
      os.path.join(build_dir, "CMakeCache.txt")):
    configure += ["-G", "Ninja"]
  configure += shlex.split(
      _setting(config_settings, "cmake-args", "HLOVERLAP_CMAKE_ARGS"))
  _run(configure)
  _run(["cmake", "--build", build_dir, "--target", "hloverlap"])
  _run(["cmake", "--install", build_dir, "--prefix", staging, "--strip"])
  return os.path.join(staging, "bin", "hloverlap")


def _check_version(exe):
  try:
    out = subprocess.run([exe, "--version"], check=True, capture_output=True,
                         text=True, timeout=60).stdout
  except (OSError, subprocess.SubprocessError) as e:
    raise BuildError("cannot run {} --version: {}".format(exe, e))
  if out.split() != [NAME, _version()]:
    raise BuildError(
        "{} --version says {!r}, the package is {}: the binary and "
        "python/hloverlap/_version.py disagree".format(exe, out.strip(),
                                                       _version()))


# --- the wheel ----------------------------------------------------------------

def _record_line(name, data):
  digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest())
  return "{},sha256={},{}".format(name, digest.rstrip(b"=").decode(),
                                  len(data))


def _add(zf, records, name, data, executable=False):
  info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
  info.compress_type = zipfile.ZIP_DEFLATED
  info.external_attr = ((0o755 if executable else 0o644) | 0o100000) << 16
  zf.writestr(info, data)
  records.append(_record_line(name, data))


def _package_files():
  for root, dirs, files in os.walk(PACKAGE_DIR):
    dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", "_bin"))
    for f in sorted(files):
      if f.endswith(".py"):
        path = os.path.join(root, f)
        yield os.path.relpath(path, os.path.dirname(PACKAGE_DIR)), path


def _write_wheel(wheel_directory, exe):
  name = "{}-{}-{}.whl".format(NAME, _version(), _wheel_tag())
  path = os.path.join(wheel_directory, name)
  records = []
  dist_info = _dist_info()
  with zipfile.ZipFile(path, "w") as zf:
    for arcname, src in _package_files():
      with open(src, "rb") as f:
        _add(zf, records, arcname.replace(os.sep, "/"), f.read())
    with open(exe, "rb") as f:
      _add(zf, records, NAME + "/_bin/hloverlap", f.read(), executable=True)
    for fname, text in _dist_info_files().items():
      _add(zf, records, dist_info + "/" + fname, text.encode("utf-8"))
    record_name = dist_info + "/RECORD"
    records.append(record_name + ",,")
    zf.writestr(zipfile.ZipInfo(record_name, date_time=(2020, 1, 1, 0, 0, 0)),
                "\n".join(records) + "\n")
  return name


# --- PEP 517 hooks ------------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
  return []


def get_requires_for_build_sdist(config_settings=None):
  return []


def prepare_metadata_for_build_wheel(metadata_directory,
                                     config_settings=None):
  target = os.path.join(metadata_directory, _dist_info())
  os.makedirs(target, exist_ok=True)
  for fname, text in _dist_info_files().items():
    with open(os.path.join(target, fname), "w", encoding="utf-8") as f:
      f.write(text)
  return _dist_info()


def build_wheel(wheel_directory, config_settings=None,
                metadata_directory=None):
  prebuilt = _setting(config_settings, "binary", "HLOVERLAP_PREBUILT_BINARY")
  with tempfile.TemporaryDirectory(prefix="hloverlap-wheel-") as staging:
    exe = os.path.abspath(prebuilt) if prebuilt else _build_binary(
        config_settings, staging)
    if not os.path.isfile(exe):
      raise BuildError("no binary at " + exe)
    _check_version(exe)
    return _write_wheel(wheel_directory, exe)


def build_sdist(sdist_directory, config_settings=None):
  """The source tree (git's files when it is a checkout) and PKG-INFO."""
  base = "{}-{}".format(NAME, _version())
  try:
    files = subprocess.run(["git", "-C", SOURCE_DIR, "ls-files", "-z"],
                           check=True, capture_output=True).stdout
    names = sorted(n for n in files.decode().split("\0") if n)
  except (OSError, subprocess.CalledProcessError):
    names = []
    for root, dirs, fs in os.walk(SOURCE_DIR):
      dirs[:] = [d for d in dirs
                 if not d.startswith((".", "build")) and d != "__pycache__"]
      names += [os.path.relpath(os.path.join(root, f), SOURCE_DIR)
                for f in fs]
    names.sort()
  name = base + ".tar.gz"
  with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as tf:
    for n in names:
      path = os.path.join(SOURCE_DIR, n)
      if os.path.isfile(path):
        tf.add(path, arcname=base + "/" + n, recursive=False)
    pkg_info = _metadata().encode("utf-8")
    info = tarfile.TarInfo(base + "/PKG-INFO")
    info.size = len(pkg_info)
    tf.addfile(info, io.BytesIO(pkg_info))
  return name
