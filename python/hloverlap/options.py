"""Options of the bridge and their mapping to `hloverlap opt` arguments.

    Options(preset="auto-rewrite",             # --preset=auto-rewrite
            loops=["innermost:pipeline=depth=2",
                   "op_name~transpose:double-buffer=off"],   # --loop=... (in order)
            memory_budget="512MiB",             # --memory-budget=512MiB
            pipeline_depth=1,                   # --pipeline-depth=1
            remarks="remarks.json")             # --remarks=FILE --remarks-format=json

`loops` may also be a dict {selector: policy}; later entries win, as with
repeated `--loop` flags. `passes` replaces `preset` (`--passes=a,b,c`).
`xla_options` are XLA debug options for the compile of the optimized module
(on top of `hloverlap.xla.BRIDGE_XLA_OPTIONS`, which switch XLA's own
collective pipelining off); see `hloverlap.xla`.
"""

import dataclasses
import os
from typing import Dict, List, Mapping, Optional, Sequence, Union

class OptionsError(ValueError):
  """An option value that `hloverlap opt` would reject (caught early)."""


@dataclasses.dataclass
class Options:
  # auto-rewrite: hloverlap plans the loop rewrites (hoist, pipeliner, both
  # or none) with its cost model, predicting each after the async conversion
  # and scheduling XLA does next; "hoist-pipeline" = collective-hoist then
  # collective-pipeliner, "pipeline" = pipeliner only.
  preset: Optional[str] = "auto-rewrite"
  passes: Optional[Union[str, Sequence[str]]] = None
  loops: Union[Sequence[str], Mapping[str, str], None] = ()
  pipeline_depth: Optional[int] = None
  memory_budget: Optional[Union[int, str]] = None
  remarks: Optional[str] = None  # file path, or "-" for stderr
  remarks_format: str = "json"
  binary: Optional[str] = None  # else $HLOVERLAP_BIN, else PATH
  verify: bool = True
  extra_args: Sequence[str] = ()
  xla_options: Mapping[str, object] = dataclasses.field(default_factory=dict)
  # Rewrite what the StableHLO route rejects (see hloverlap.text.make_route_legal).
  route_fixups: bool = True
  # Directory to keep the HLO before/after hloverlap (debugging); None = temp.
  keep_dir: Optional[str] = None
  timeout_s: Optional[float] = 600.0
  # False: hloverlap ignores the process's XLA_FLAGS (--no-xla-flags-env),
  # so what it does is what these Options say. (A process whose XLA_FLAGS
  # switches XLA's pipelining off would otherwise switch hloverlap's off
  # too, silently: 0 collectives pipelined.)
  xla_flags_env: bool = False

  def loop_rules(self) -> List[str]:
    """The `--loop` values, in order, validated."""
    if not self.loops:
      return []
    if isinstance(self.loops, Mapping):
      rules = ["{}:{}".format(k, v) for k, v in self.loops.items()]
    elif isinstance(self.loops, str):
      rules = [self.loops]
    else:
      rules = list(self.loops)
    for r in rules:
      if not isinstance(r, str) or ":" not in r:
        raise OptionsError(
            "loop rule {!r} is not SELECTOR:POLICY (e.g. "
            "'innermost:pipeline=depth=2')".format(r))
      sel, pol = r.split(":", 1)
      if not sel or not pol:
        raise OptionsError("loop rule {!r} has an empty selector or policy"
                           .format(r))
    return rules

  def validate(self, catalog: Optional[dict] = None) -> None:
    """Raises OptionsError for what `hloverlap opt` would reject.

    The presets and the range of `pipeline_depth` are the binary's
    (`hloverlap.binary.catalog`): from `catalog`, else from the binary these
    options name when one is found (no binary: those two are left to the
    binary to check).
    """
    if catalog is None:
      catalog = _catalog_of(self.binary)
    if self.preset is not None and self.passes is not None:
      raise OptionsError("give either preset or passes, not both")
    if (self.preset is not None and catalog is not None and
        self.preset not in catalog["presets"]):
      raise OptionsError("unknown preset {!r}; known: {}".format(
          self.preset, ", ".join(catalog["presets"])))
    if self.remarks_format not in ("json", "text"):
      raise OptionsError("remarks_format must be 'json' or 'text'")
    if self.pipeline_depth is not None:
      if (not isinstance(self.pipeline_depth, int) or
          isinstance(self.pipeline_depth, bool)):
        raise OptionsError("pipeline_depth must be an int")
      depth = (catalog or {}).get("passes", {}).get(
          "collective-pipeliner", {}).get("depth")
      if depth and not depth["min"] <= self.pipeline_depth <= depth["max"]:
        raise OptionsError("pipeline_depth must be an int in [{}, {}]".format(
            depth["min"], depth["max"]))
    if self.memory_budget is not None:
      if isinstance(self.memory_budget, bool):
        raise OptionsError("memory_budget must be bytes (int) or a size string")
      if isinstance(self.memory_budget, int) and self.memory_budget < 0:
        raise OptionsError("memory_budget must not be negative")
      if isinstance(self.memory_budget, str) and not self.memory_budget.strip():
        raise OptionsError("memory_budget is empty")
    self.loop_rules()

  def passes_arg(self) -> Optional[str]:
    if self.passes is None:
      return None
    p = self.passes if isinstance(self.passes, str) else ",".join(self.passes)
    return p or None  # empty: no pipeline (parse, verify, print)

  def to_args(self, input_path: str, output_path: str,
              remarks_path: Optional[str] = None) -> List[str]:
    """Arguments after the binary: `opt IN -o OUT [options]`.

    `remarks_path` overrides `self.remarks` (the bridge always asks for a
    JSON remarks file so it can return the remarks; it copies them to
    `self.remarks` afterwards).
    """
    self.validate()
    args = ["opt", input_path, "-o", output_path]
    p = self.passes_arg()
    if p is not None:
      args.append("--passes=" + p)
    elif self.preset is not None:
      args.append("--preset=" + self.preset)
    for rule in self.loop_rules():
      args.append("--loop=" + rule)
    if self.pipeline_depth is not None:
      args.append("--pipeline-depth={}".format(self.pipeline_depth))
    if self.memory_budget is not None:
      args.append("--memory-budget={}".format(self.memory_budget).strip())
    rp = remarks_path if remarks_path is not None else self.remarks
    if rp is not None:
      args.append("--remarks=" + rp)
      fmt = "json" if remarks_path is not None else self.remarks_format
      args.append("--remarks-format=" + fmt)
    if not self.verify:
      args.append("--no-verify")
    if not self.xla_flags_env:
      args.append("--no-xla-flags-env")
    args.extend(self.extra_args)
    return args

  def replace(self, **changes) -> "Options":
    return dataclasses.replace(self, **changes)


def _catalog_of(binary: Optional[str]) -> Optional[dict]:
  """The catalog of the binary `binary` (or the one found), or None."""
  from hloverlap import binary as binary_mod  # binary imports this module
  try:
    exe = binary_mod.find_binary(binary)
  except binary_mod.BinaryNotFoundError:
    return None
  return binary_mod.catalog(exe)


def as_options(options: Union[None, Options, Mapping[str, object]]) -> Options:
  """Options from None (defaults), an Options, or a dict of its fields."""
  if options is None:
    return Options()
  if isinstance(options, Options):
    return options
  if isinstance(options, Mapping):
    names = {f.name for f in dataclasses.fields(Options)}
    unknown = sorted(set(options) - names)
    if unknown:
      raise OptionsError("unknown option(s): {}; known: {}".format(
          ", ".join(unknown), ", ".join(sorted(names))))
    return Options(**options)
  raise OptionsError("options must be None, an Options or a dict, not {}"
                     .format(type(options).__name__))
