"""XLA debug options used by the bridge and the benchmark.

The bridge compiles hloverlap's output with XLA's own collective pipelining
switched off (hloverlap has already moved the collectives across loop
iterations; XLA's pipeliner would move them again) and its latency hiding
scheduler on (it turns the now loop-carried collectives into async
start/done pairs that overlap the loop body's compute). The options are
passed per compile (`CompileOptions.env_option_overrides`, what
`jax.jit(...).lower(...).compile(compiler_options=...)` uses), so they do
not depend on the process's XLA_FLAGS.

  BRIDGE_XLA_OPTIONS  what the bridge uses (user `xla_options` win)
  SEED_XLA_OPTIONS    the seed report's flags that XLA 0.11.2 still accepts
                      (XLA's pipelining on: "XLA with its pipelining")
  OFF_XLA_OPTIONS     every overlap feature off ("XLA with overlap off")

Which XLA flags turn collective pipelining on, and with which values, is
the binary's table (`hloverlap opt --list-xla-flags --json`, the one that
maps XLA_FLAGS onto its passes); `xla_flag_table` reads it.
"""

import json
import re
import subprocess
from typing import (Callable, Dict, List, Mapping, Optional, Set, Tuple,
                    TypeVar)

T = TypeVar("T")

# The seed's flags (../shared/seed), minus --xla_gpu_graph_level and
# --xla_gpu_enable_pipelined_collectives, which XLA 0.11.2 rejects, and
# minus --xla_gpu_enable_command_buffer= (an empty list: set it in XLA_FLAGS).
SEED_XLA_OPTIONS: Dict[str, object] = {
    "xla_gpu_enable_triton_gemm": False,
    "xla_gpu_enable_latency_hiding_scheduler": True,
    "xla_gpu_enable_all_gather_combine_by_dim": False,
    "xla_gpu_enable_reduce_scatter_combine_by_dim": False,
    "xla_gpu_enable_pipelined_all_gather": True,
    "xla_gpu_enable_pipelined_reduce_scatter": True,
    "xla_gpu_enable_pipelined_all_reduce": True,
    "xla_gpu_enable_while_loop_double_buffering": True,
    "xla_gpu_enable_highest_priority_async_stream": True,
}
# Not carried over from the seed: --xla_gpu_disable_async_collectives=
# collectivebroadcast,alltoall,collectivepermute (the per-compile path wants
# other enum spellings, and these programs have none of those collectives).

OFF_XLA_OPTIONS: Dict[str, object] = {
    "xla_gpu_enable_latency_hiding_scheduler": False,
    "xla_gpu_enable_pipelined_all_gather": False,
    "xla_gpu_enable_pipelined_reduce_scatter": False,
    "xla_gpu_enable_pipelined_all_reduce": False,
    "xla_gpu_enable_while_loop_double_buffering": False,
}

# The seed's flags with XLA's pipelining (and its double buffering, a loop
# transformation of the same kind) off.
BRIDGE_XLA_OPTIONS: Dict[str, object] = dict(
    SEED_XLA_OPTIONS,
    xla_gpu_enable_pipelined_all_gather=False,
    xla_gpu_enable_pipelined_reduce_scatter=False,
    xla_gpu_enable_pipelined_all_reduce=False,
    xla_gpu_enable_while_loop_double_buffering=False,
)

# (path, mtime_ns, size) -> table; a rebuilt binary is asked again.
_TABLES: Dict[tuple, Dict[str, dict]] = {}


def xla_flag_table(exe: Optional[str] = None) -> Dict[str, dict]:
  """The XLA flags the binary acts on: {name: {"name", "pass", "values",
  "pipelining_values"}}, from `EXE opt --list-xla-flags --json` (cached per
  binary file). "pipelining_values" are the values, lower case ("" for a
  bare `--flag`), that turn a collective pipelining on. exe: the binary
  (default: binary.find_binary())."""
  import os  # pylint: disable=g-import-not-at-top
  from hloverlap import binary  # pylint: disable=g-import-not-at-top
  exe = exe or binary.find_binary()
  st = os.stat(exe)
  key = (os.path.realpath(exe), st.st_mtime_ns, st.st_size)
  if key not in _TABLES:
    args = [exe, "opt", "--list-xla-flags", "--json"]
    try:
      proc = subprocess.run(args, capture_output=True, text=True, timeout=60)
      data = json.loads(proc.stdout) if proc.returncode == 0 else None
    except (OSError, ValueError, subprocess.TimeoutExpired) as e:
      raise binary.HloverlapError(
          "cannot read the XLA flags of {}: {}".format(exe, e), None, "", args)
    if not isinstance(data, dict) or not isinstance(data.get("xla_flags"),
                                                    list):
      raise binary.HloverlapError(
          "{} opt --list-xla-flags --json (exit {}) printed no xla_flags "
          "list: {}".format(exe, proc.returncode, proc.stderr.strip()[-500:]),
          proc.returncode, proc.stderr, args)
    _TABLES[key] = {f["name"]: f for f in data["xla_flags"]}
  return _TABLES[key]


def _pipelining_values(exe: Optional[str]) -> Dict[str, Set[str]]:
  return {name: set(f.get("pipelining_values") or ())
          for name, f in xla_flag_table(exe).items()
          if f.get("pipelining_values")}


def _value_text(v) -> str:
  """An option value as the flag table spells values (lower case)."""
  if isinstance(v, bool):
    return "true" if v else "false"
  return str(v).strip().lower()


def pipelining_options_on(options: Mapping[str, object],
                          exe: Optional[str] = None) -> List[str]:
  """The keys of `options` (XLA option name -> value) that turn XLA's
  collective pipelining on, by the binary's flag table."""
  table = _pipelining_values(exe)
  return [k for k, v in options.items()
          if k in table and _value_text(v) in table[k]]


def bridge_options(user: Optional[Mapping[str, object]] = None,
                   allow_xla_pipelining: bool = False,
                   exe: Optional[str] = None) -> Dict[str, object]:
  """BRIDGE_XLA_OPTIONS updated with `user`; keys may carry a `--` prefix.

  Turning XLA's pipelining back on (a user option that does, by the
  binary's flag table; exe: the binary, default binary.find_binary()) is
  refused unless allow_xla_pipelining.
  """
  out = dict(BRIDGE_XLA_OPTIONS)
  given = {}
  for k, v in (user or {}).items():
    key = k[2:] if k.startswith("--") else k
    if not key.startswith("xla_"):
      raise ValueError("XLA option {!r} does not start with xla_".format(k))
    out[key] = v
    given[key] = v
  if not allow_xla_pipelining and given:
    on = pipelining_options_on(given, exe)
    if on:
      raise ValueError(
          "XLA's own collective pipelining must stay off after hloverlap "
          "({} set); pass allow_xla_pipelining=True to force it".format(
              ", ".join(on)))
  return out


def pipelining_flags_on(xla_flags: str, exe: Optional[str] = None) -> List[str]:
  """The XLA pipelining flags an XLA_FLAGS string turns on (by the binary's
  flag table; exe: the binary, default binary.find_binary()).

  jaxlib 0.11.2 knows xla_gpu_enable_pipelined_{all_gather,reduce_scatter,
  all_reduce} only as XLA_FLAGS (per-compile overrides answer "No such
  compile option"), so the bridge cannot switch them off per compile; their
  default is off. A process that sets them on would pipeline twice.
  """
  words = [w for w in (xla_flags or "").split() if w.startswith("--")]
  if not words:
    return []
  table = _pipelining_values(exe)
  on = []
  for w in words:
    name, eq, value = w[2:].partition("=")
    if name in table and (value.lower() if eq else "") in table[name]:
      on.append(name)
  return on


def overrides_list(options: Mapping[str, object]) -> List[Tuple[str, object]]:
  """For CompileOptions.env_option_overrides: [(name, str|bool|int|float)]."""
  out = []
  for k, v in options.items():
    if not isinstance(v, (str, bool, int, float)):
      raise ValueError("XLA option {}: unsupported value type {}".format(
          k, type(v).__name__))
    out.append((k, v))
  return out


def as_xla_flags(options: Mapping[str, object]) -> str:
  """The same options as an XLA_FLAGS string (for subprocesses)."""
  parts = []
  for k, v in options.items():
    if isinstance(v, bool):
      v = "true" if v else "false"
    parts.append("--{}={}".format(k, v))
  return " ".join(parts)


_UNKNOWN_RE = re.compile(r"No such compile option: '([A-Za-z0-9_]+)'|"
                         r"While setting option ([A-Za-z0-9_]+),")


def compile_dropping_unknown(compile_fn: Callable[[Dict[str, object]], T],
                             options: Mapping[str, object],
                             dropped: Optional[List[str]] = None) -> T:
  """compile_fn(options), retried without the options XLA does not know.

  XLA answers an unknown per-compile option with INVALID_ARGUMENT "No such
  compile option: 'NAME'" (jaxlib 0.11.2 has no
  xla_gpu_enable_pipelined_all_reduce, for example, while XLA_FLAGS still
  accepts the name), or with "While setting option NAME, ..." for a value
  it cannot parse. Each such option is dropped (appended to `dropped`) and
  the compile retried; other errors propagate.
  """
  opts = dict(options)
  while True:
    try:
      return compile_fn(dict(opts))
    except Exception as e:  # pylint: disable=broad-except
      m = _UNKNOWN_RE.search(str(e))
      name = m and (m.group(1) or m.group(2))
      if not name or name not in opts:
        raise
      del opts[name]
      if dropped is not None:
        dropped.append(name)
