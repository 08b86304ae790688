"""`hloverlap sim` from Python: a step predicted from a module's text.

    r = simulate(final_text)           # XLA's optimized module of a compile
    r.step_ms, r.exposed_comm_ms, r.peak_bytes

The bridge's planner calls it on each candidate's final module (the
executable's optimized HLO), which is what the simulator is calibrated on;
on an unfused module the same command gives the CLI planner's estimate.
"""

import json
import os
import shutil
import subprocess
import tempfile
from typing import Any, Dict, NamedTuple, Optional, Sequence

from hloverlap.binary import HloverlapError, find_binary


class SimResult(NamedTuple):
  step_ms: float
  exposed_comm_ms: Optional[float] = None
  compute_ms: Optional[float] = None
  peak_bytes: Optional[int] = None
  raw: Optional[Dict[str, Any]] = None  # the tool's JSON


def simulate(text: str, binary: Optional[str] = None,
             args: Sequence[str] = (), timeout_s: float = 300.0,
             path: Optional[str] = None) -> SimResult:
  """`hloverlap sim --format=json` of `text` (written to `path` if given,
  else to a temporary file). Raises HloverlapError when the tool fails."""
  exe = find_binary(binary)
  tmp = None
  if path is None:
    tmp = tempfile.mkdtemp(prefix="hloverlap-sim-")
    path = os.path.join(tmp, "module.hlo")
  try:
    with open(path, "w") as f:
      f.write(text)
    cmd = [exe, "sim", path, "--format=json"] + list(args)
    try:
      proc = subprocess.run(cmd, capture_output=True, text=True,
                            timeout=timeout_s)
    except subprocess.TimeoutExpired as e:
      raise HloverlapError("hloverlap sim timed out after {} s".format(
          timeout_s), None, str(e.stderr or ""), cmd)
    if proc.returncode != 0:
      raise HloverlapError("hloverlap sim failed (exit {}): {}".format(
          proc.returncode, proc.stderr.strip()[-1500:]), proc.returncode,
                           proc.stderr, cmd)
    try:
      d = json.loads(proc.stdout)
      step = float(d["step_time_ms"])
    except (ValueError, KeyError, TypeError) as e:
      raise HloverlapError("hloverlap sim printed no step: {}".format(e),
                           proc.returncode, proc.stderr, cmd)
    return SimResult(step, _num(d.get("exposed_communication_ms")),
                     _num(d.get("compute_ms")),
                     _int(d.get("peak_memory_bytes")), d)
  finally:
    if tmp is not None:
      shutil.rmtree(tmp, ignore_errors=True)


def _num(v) -> Optional[float]:
  return float(v) if isinstance(v, (int, float)) else None


def _int(v) -> Optional[int]:
  return int(v) if isinstance(v, (int, float)) else None
