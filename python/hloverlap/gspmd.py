"""The GSPMD route: XLA's partitioned module, back into XLA without
partitioning it again (../shared/docs/reference/gspmd_route.md). No JAX
needed here; hloverlap.jax drives it.

A program sharded through jax.jit's in_shardings/out_shardings has no
collectives in JAX's lowering: XLA's SPMD partitioner creates them. So the
bridge
  1. compiles the step once with jax.jit, dumping XLA's module at a few
     pass boundaries (`dump_options`);
  2. takes the module XLA's collective pipeliner would receive
     (`pick_stage`, in this order of preference):
       before_collective_pipeliner    XLA's pipeliner ran (its flags on):
                                      the module just before its first run;
       before_reduce_scatter_creator  the same point when the pipeliner is
                                      off (XLA 0.11 runs the pipeliners
                                      between `dce` and
                                      `reduce-scatter-creator` in the
                                      collective-optimizations pipeline);
       after_spmd_partitioning        the partitioner's output (backends
                                      without that pipeline, e.g. CPU);
     every one of them is per-device, with the collectives explicit;
  3. runs hloverlap on it, and compiles the result with num_partitions=N,
     SPMD partitioning on, and the partitioning passes disabled
     (`DISABLE_PARTITIONING`): every other pass still runs and obeys its
     flags.

XLA 0.11.2 runs one collective-pipeliner-forward pass (the all-reduce one)
even with the xla_gpu_enable_pipelined_* flags off (its optimization-effort
default), so on GPU the first stage above is found either way; on the FSDP
modules checked that pass changed nothing (docs/BENCHMARKS.md).

Pass names are XLA-version specific. If this XLA does not name its
partitioner `spmd-partitioning`, the dump has no file for it and
`pick_stage` raises StageNotFound: compiling the partitioned module with a
partitioner that is not disabled would partition it again (XLA then fails
with "PartitionId instruction is not supported for SPMD partitioning").
"""

import os
import re
from typing import Dict, List, NamedTuple, Optional, Sequence

# The passes that partition; disabled for the compile of a partitioned
# module (xla_disable_hlo_passes, split at commas by XLA).
DISABLE_PARTITIONING = ("shardy-xla", "sharding-propagation",
                        "spmd-partitioning")
PARTITIONER_PASS = "spmd-partitioning"

# Passes around which the dump is written (XLA dumps a module between two
# passes when either name matches).
DUMP_PASS_RE = ("shardy-xla|sharding-propagation|spmd-partitioning|"
                "sharding-remover|collective-pipeliner-forward|"
                "collective-pipeliner-backward|reduce-scatter-creator")


def dump_options(dump_dir: str) -> Dict[str, object]:
  """Per-compile XLA options that dump the stages pick_stage looks for."""
  return {"xla_dump_to": dump_dir, "xla_dump_hlo_as_text": True,
          "xla_dump_hlo_pass_re": DUMP_PASS_RE}


def disable_partitioning(xla_options: Dict[str, object]) -> Dict[str, object]:
  """xla_options with DISABLE_PARTITIONING added to xla_disable_hlo_passes
  (the caller's own entries kept)."""
  out = dict(xla_options)
  user = [p.strip() for p in str(out.get("xla_disable_hlo_passes", "") or
                                 "").split(",") if p.strip()]
  out["xla_disable_hlo_passes"] = ",".join(
      list(DISABLE_PARTITIONING) + [p for p in user
                                    if p not in DISABLE_PARTITIONING])
  return out


class DumpFile(NamedTuple):
  path: str
  module: str  # e.g. jit_train_step
  step: int  # XLA's dump step counter (pass order within the module)
  pipeline: str
  after: str  # the pass that ran before this module state
  before: str  # the pass that runs next


_PASS_PAIR = re.compile(
    r"after_(?P<after>[^.]+)\.before_(?P<before>[^.]+)\.txt$")
_PREFIX = re.compile(r"module_\d+\.(?P<module>.+?)\.(?P<step>\d{4,})"
                     r"(?:\.(?P<pipeline>.*))?$")


def parse_dump_name(path: str) -> Optional[DumpFile]:
  """`module_0001.jit_f.0012.PIPELINE.after_A.before_B.txt` (None for
  other files: XLA also dumps buffer assignments, the final module, ...)."""
  base = os.path.basename(path)
  m = _PASS_PAIR.search(base)
  if not m:
    return None
  head = base[:m.start()].rstrip(".")
  p = _PREFIX.match(head)
  if p is None:
    return DumpFile(path, "", 0, head, m.group("after"), m.group("before"))
  return DumpFile(path, p.group("module"), int(p.group("step")),
                  p.group("pipeline") or "", m.group("after"),
                  m.group("before"))


class Stage(NamedTuple):
  label: str  # before_collective_pipeliner | before_reduce_scatter_creator
  #             | after_spmd_partitioning | after_sharding_remover
  path: str
  passes_seen: List[str]  # every pass name in the dump's file names


class StageNotFound(RuntimeError):
  """The dump has no module the route can use (pass names differ?)."""


def dump_files(dump_dir: str, module: Optional[str]) -> List[DumpFile]:
  """The pass-boundary dumps of `module` (all modules if none matches)."""
  try:
    names = sorted(os.listdir(dump_dir))
  except OSError:
    names = []
  files = [f for f in (parse_dump_name(os.path.join(dump_dir, n))
                       for n in names) if f is not None]
  mine = [f for f in files if module and f.module == module]
  return sorted(mine or files, key=lambda f: f.step)


def pick_stage(files: Sequence[DumpFile], num_devices: int) -> Stage:
  """The module before XLA's collective pipeliner (module comment)."""
  seen = sorted({f.after for f in files} | {f.before for f in files})
  if num_devices > 1 and PARTITIONER_PASS not in seen:
    raise StageNotFound(
        "XLA's dump has no module after a pass named '{}' (passes seen: "
        "{}); this XLA names its passes differently from the ones the "
        "route disables ({}), so it would partition the partitioned module "
        "again".format(PARTITIONER_PASS, ", ".join(seen) or "none: no dump "
                       "was written (a persistent compilation cache hit?)",
                       ", ".join(DISABLE_PARTITIONING)))
  for f in files:
    if f.before.startswith("collective-pipeliner-"):
      return Stage("before_collective_pipeliner", f.path, seen)
  for f in files:
    if f.after == "dce" and f.before == "reduce-scatter-creator":
      return Stage("before_reduce_scatter_creator", f.path, seen)
  for f in files:
    if f.after == PARTITIONER_PASS:
      return Stage("after_spmd_partitioning", f.path, seen)
  if num_devices <= 1:
    for f in files:
      if f.after == "sharding-remover":
        return Stage("after_sharding_remover", f.path, seen)
  raise StageNotFound("XLA's dump has none of the modules the route takes "
                      "(passes seen: {})".format(", ".join(seen) or "none"))
