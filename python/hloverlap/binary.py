"""Finding and running the `hloverlap` binary.

The binary is looked up in this order:
  1. `Options.binary` (or the `binary=` argument of `find_binary`);
  2. the environment variable `HLOVERLAP_BIN`;
  3. the binary installed inside the package (`hloverlap/_bin/hloverlap`,
     put there by `pip install .`: the one built with this package, the
     same version);
  4. `hloverlap` on `PATH`;
  5. in a clone (the package used from the source tree, PYTHONPATH=python),
     the clone's own build: `<clone>/build/hloverlap`.
A path that is given but does not name an executable file is an error (no
silent fallback to the next place).

`run_opt(hlo_text, options)` writes the text to a temporary file, runs
`hloverlap opt IN -o OUT --remarks=R --remarks-format=json [options]`, and
returns the optimized text with the parsed remarks. Exit status 2 (user
error: malformed HLO, bad flag) and 3 (internal error) raise
`HloverlapError` carrying the status, the command and stderr; the
diagnostics name the input file (`before.hlo:12:3: ...`), so on an error
the temporary folder is kept (the message says where) instead of deleted.
"""

import json
import os
import shutil
import subprocess
import tempfile
import time
from typing import Dict, List, Mapping, NamedTuple, Optional, Tuple

from hloverlap.options import Options, as_options

ENV_VAR = "HLOVERLAP_BIN"


class HloverlapError(RuntimeError):
  """`hloverlap opt` failed."""

  def __init__(self, message: str, returncode: Optional[int] = None,
               stderr: str = "", args: Optional[List[str]] = None):
    super().__init__(message)
    self.returncode = returncode
    self.stderr = stderr
    self.cmd = list(args or [])


class BinaryNotFoundError(HloverlapError):
  pass


def _is_exe(path: str) -> bool:
  return os.path.isfile(path) and os.access(path, os.X_OK)


def packaged_binary() -> Optional[str]:
  """The binary `pip install` put inside the package, if there is one."""
  path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin",
                      "hloverlap")
  return path if _is_exe(path) else None


def clone_binary() -> Optional[str]:
  """`<clone>/build/hloverlap` when this package is used from a clone of
  the source tree (`python/hloverlap` beside the top CMakeLists.txt)."""
  root = os.path.dirname(os.path.dirname(os.path.dirname(
      os.path.abspath(__file__))))
  if not os.path.isfile(os.path.join(root, "CMakeLists.txt")):
    return None
  path = os.path.join(root, "build", "hloverlap")
  return path if _is_exe(path) else None


def find_binary(binary: Optional[str] = None,
                env: Optional[Mapping[str, str]] = None) -> str:
  """The path of the hloverlap binary (see the module comment)."""
  env = os.environ if env is None else env
  if binary:
    if _is_exe(binary):
      return os.path.abspath(binary)
    found = shutil.which(binary) if os.sep not in binary else None
    if found:
      return found
    raise BinaryNotFoundError(
        "hloverlap binary {!r} (Options.binary) is not an executable file"
        .format(binary))
  from_env = env.get(ENV_VAR)
  if from_env:
    if _is_exe(from_env):
      return os.path.abspath(from_env)
    raise BinaryNotFoundError("{}={!r} is not an executable file".format(
        ENV_VAR, from_env))
  packaged = packaged_binary()
  if packaged:
    return packaged
  found = shutil.which("hloverlap", path=env.get("PATH"))
  if found:
    return found
  in_clone = clone_binary()
  if in_clone:
    return in_clone
  raise BinaryNotFoundError(
      "hloverlap binary not found: install the package with `pip install .` "
      "(it builds the binary), pass Options(binary=PATH), set {} or put "
      "'hloverlap' on PATH (in a clone, build it with: cmake -S . -B build "
      "-G Ninja && ninja -C build hloverlap; the package then finds "
      "build/hloverlap)".format(ENV_VAR))


# (path, mtime_ns, size) -> catalog; a rebuilt binary is asked again.
_CATALOGS: Dict[tuple, dict] = {}


def catalog(exe: str) -> dict:
  """What the binary declares: {"presets": {name: pipeline text},
  "passes": {name: {option: declaration}}} from `hloverlap opt
  --list-presets --json` and `--list-passes --json` (cached per binary
  file). The presets and option ranges are declared once, in the binary;
  the package reads them from there."""
  st = os.stat(exe)
  key = (os.path.realpath(exe), st.st_mtime_ns, st.st_size)
  if key not in _CATALOGS:
    out = {}
    for what in ("presets", "passes"):
      args = [exe, "opt", "--list-" + what, "--json"]
      try:
        proc = subprocess.run(args, capture_output=True, text=True,
                              timeout=60)
        data = json.loads(proc.stdout) if proc.returncode == 0 else None
      except (OSError, ValueError, subprocess.TimeoutExpired) as e:
        raise HloverlapError("cannot read the {} of {}: {}".format(
            what, exe, e), None, "", args)
      if not isinstance(data, dict) or not isinstance(data.get(what), list):
        raise HloverlapError(
            "{} --list-{} --json (exit {}) printed no {} list: {}".format(
                exe, what, proc.returncode, what, proc.stderr.strip()[-500:]),
            proc.returncode, proc.stderr, args)
      out[what] = data[what]
    _CATALOGS[key] = {
        "presets": {p["name"]: p["pipeline"] for p in out["presets"]},
        "passes": {p["name"]: {o["name"]: o for o in p.get("options", [])}
                   for p in out["passes"]},
    }
  return _CATALOGS[key]


def known_presets(exe: str) -> Dict[str, str]:
  """The binary's presets: {name: pipeline text} (see `catalog`)."""
  return catalog(exe)["presets"]


class OptResult(NamedTuple):
  text: str  # the optimized module
  remarks: List[dict]  # one dict per remark (the tool's JSON lines)
  stderr: str
  args: List[str]  # the full command
  seconds: float


def parse_remarks(json_lines: str) -> List[dict]:
  """The remarks of a `--remarks-format=json` file (one object per line)."""
  out = []
  for n, line in enumerate(json_lines.splitlines(), 1):
    line = line.strip()
    if not line:
      continue
    try:
      obj = json.loads(line)
    except ValueError as e:
      raise HloverlapError("remarks line {}: not JSON ({}): {!r}".format(
          n, e, line[:200]))
    if not isinstance(obj, dict):
      raise HloverlapError("remarks line {}: not an object".format(n))
    out.append(obj)
  return out


def format_remark(r: Mapping[str, object]) -> str:
  """One remark as the tool's text format prints it (close enough)."""
  s = "{}: {}: {}".format(r.get("kind", "?"), r.get("pass", "?"),
                          r.get("message", ""))
  where = r.get("instruction")
  if where:
    loop = r.get("loop")
    s += " [{}{}]".format(where, " in loop " + str(loop) if loop else "")
  metrics = r.get("metrics")
  if isinstance(metrics, Mapping) and metrics:
    s += " (" + ", ".join("{}={}".format(k, v)
                          for k, v in sorted(metrics.items())) + ")"
  return s


def write_remarks(opts: Options, remarks: List[dict]) -> None:
  """The remarks where Options.remarks asks for them ("-": stderr), in
  Options.remarks_format; nothing when it asks for none."""
  if opts.remarks is None:
    return
  if opts.remarks_format == "json":
    payload = "".join(json.dumps(r, sort_keys=True) + "\n" for r in remarks)
  else:
    payload = "".join(format_remark(r) + "\n" for r in remarks)
  if opts.remarks == "-":
    import sys  # pylint: disable=g-import-not-at-top
    sys.stderr.write(payload)
  else:
    with open(opts.remarks, "w") as f:
      f.write(payload)


def summarize_remarks(remarks: List[dict]) -> Dict[str, int]:
  """Counts by kind: {'passed': n, 'missed': m, 'failure': k}."""
  counts: Dict[str, int] = {}
  for r in remarks:
    k = str(r.get("kind", "?"))
    counts[k] = counts.get(k, 0) + 1
  return counts


def check_options(options=None) -> Tuple[Options, str]:
  """(Options, binary path): `options` (an Options, a dict of its fields or
  None) validated once against the catalog of the binary they name. The
  bridge calls this once per compile and hands both to `run_checked`."""
  opts = as_options(options)
  exe = find_binary(opts.binary)
  opts.validate(catalog(exe))
  return opts, exe


def run_opt(hlo_text: str, options=None) -> OptResult:
  """Runs `hloverlap opt` on `hlo_text` with `options` (an Options or dict)."""
  opts, exe = check_options(options)
  return run_checked(hlo_text, opts, exe)


def run_checked(hlo_text: str, opts: Options, exe: str) -> OptResult:
  """`run_opt` with options already validated for `exe` (check_options)."""
  tmp = None
  work = opts.keep_dir
  if work is None:
    tmp = tempfile.mkdtemp(prefix="hloverlap-")
    work = tmp
  else:
    os.makedirs(work, exist_ok=True)
  try:
    in_path = os.path.join(work, "before.hlo")
    out_path = os.path.join(work, "after.hlo")
    rem_path = os.path.join(work, "remarks.json")
    with open(in_path, "w") as f:
      f.write(hlo_text)
    if os.path.exists(rem_path):
      os.remove(rem_path)
    args = [exe] + opts.to_args(in_path, out_path, remarks_path=rem_path)
    t0 = time.perf_counter()
    try:
      proc = subprocess.run(args, capture_output=True, text=True,
                            timeout=opts.timeout_s)
    except subprocess.TimeoutExpired as e:
      raise HloverlapError("hloverlap opt timed out after {} s".format(
          opts.timeout_s), None, str(e.stderr or ""), args)
    except OSError as e:
      raise HloverlapError("cannot run {}: {}".format(exe, e), None, "", args)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
      kind = {2: "rejected the input or options",
              3: "failed internally"}.get(proc.returncode, "failed")
      # The diagnostics point into before.hlo: keep it for the user.
      tmp = None
      raise HloverlapError(
          "hloverlap opt {} (exit {}): {}\n(the module and the command's "
          "files are kept in {})".format(
              kind, proc.returncode, proc.stderr.strip()[-2000:], work),
          proc.returncode, proc.stderr, args)
    with open(out_path) as f:
      out_text = f.read()
    remarks = []
    if os.path.exists(rem_path):
      with open(rem_path) as f:
        remarks = parse_remarks(f.read())
    write_remarks(opts, remarks)
    return OptResult(out_text, remarks, proc.stderr, args, seconds)
  finally:
    if tmp is not None:
      shutil.rmtree(tmp, ignore_errors=True)
