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
"""

import re
from typing import Callable, Dict, List, Mapping, Optional, Tuple, TypeVar

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

PIPELINING_KEYS = ("xla_gpu_enable_pipelined_all_gather",
                   "xla_gpu_enable_pipelined_reduce_scatter",
                   "xla_gpu_enable_pipelined_all_reduce")


def bridge_options(user: Optional[Mapping[str, object]] = None,
                   allow_xla_pipelining: bool = False) -> Dict[str, object]:
  """BRIDGE_XLA_OPTIONS updated with `user`; keys may carry a `--` prefix.

  Turning XLA's pipelining back on is refused unless allow_xla_pipelining.
  """
  out = dict(BRIDGE_XLA_OPTIONS)
  for k, v in (user or {}).items():
    key = k[2:] if k.startswith("--") else k
    if not key.startswith("xla_"):
      raise ValueError("XLA option {!r} does not start with xla_".format(k))
    out[key] = v
  if not allow_xla_pipelining:
    on = [k for k in PIPELINING_KEYS if _truthy(out.get(k))]
    if on:
      raise ValueError(
          "XLA's own collective pipelining must stay off after hloverlap "
          "({} set); pass allow_xla_pipelining=True to force it".format(
              ", ".join(on)))
  return out


def pipelining_flags_on(xla_flags: str) -> List[str]:
  """The XLA pipelining flags an XLA_FLAGS string turns on.

  jaxlib 0.11.2 knows xla_gpu_enable_pipelined_{all_gather,reduce_scatter,
  all_reduce} only as XLA_FLAGS (per-compile overrides answer "No such
  compile option"), so the bridge cannot switch them off per compile; their
  default is off. A process that sets them on would pipeline twice.
  """
  on = []
  for tok in (xla_flags or "").split():
    if not tok.startswith("--"):
      continue
    name, _, value = tok[2:].partition("=")
    if name in PIPELINING_KEYS and _truthy(value if value else "true"):
      on.append(name)
  return on


def _truthy(v) -> bool:
  if isinstance(v, str):
    return v.strip().lower() in ("1", "true", "yes", "on")
  return bool(v)


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
