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

from typing import Dict, List, Mapping, Optional, Tuple

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
    "xla_gpu_disable_async_collectives":
        "collectivebroadcast,alltoall,collectivepermute",
}

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
