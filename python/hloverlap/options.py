"""Options of the bridge and their mapping to `hloverlap opt` arguments.

    Options(preset="plan",                     # the bridge's planner (default)
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
import re
from typing import Dict, List, Mapping, Optional, Sequence, Union

class OptionsError(ValueError):
  """An option value that `hloverlap opt` would reject (caught early)."""


# Options.preset of the JAX bridge's planner (hloverlap.plan); not a preset
# of the binary.
PLAN = "plan"
# What "plan" runs where there is no XLA compile (binary.run_opt alone).
CLI_PLAN_PRESET = "auto-rewrite"

_UNITS = {"": 0, "b": 0}
for _k, _u in enumerate("kmgt", 1):
  _UNITS.update({_u: _k, _u + "b": _k, _u + "ib": _k})
# The number before the unit, as the tool's std::from_chars reads a double
# (no sign but '-', no spaces, no hex, no digit separators).
_SIZE_NUMBER = re.compile(r"-?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


def parse_byte_size(text: Union[int, str]) -> int:
  """Bytes of a size such as 4096, 512M, 1.5GiB.

  The grammar is the tool's (src/support/byte_size.h owns it: the unit is
  the trailing run of letters, every unit a power of 1024 in any case, the
  number may have a fraction or an exponent, the result is rounded down
  and lies in [0, 2^63)). The bridge's planner needs the number before the
  binary runs; python/tests/test_options.py checks on a table of spellings
  that the binary accepts and rejects the same ones as this function.
  Spaces around the text are dropped (Options.to_args drops them too).
  """
  if isinstance(text, int) and not isinstance(text, bool):
    if text < 0:
      raise OptionsError("size must not be negative")
    return text
  s = str(text).strip()
  i = len(s)
  while i > 0 and s[i - 1].isascii() and s[i - 1].isalpha():
    i -= 1
  number, unit = s[:i], s[i:].lower()
  if unit not in _UNITS or not _SIZE_NUMBER.fullmatch(number) or \
      float(number) < 0:
    raise OptionsError("invalid size {!r} (examples: 4096, 512M, 1.5GiB; "
                       "units B, K, M, G, T, also KB/KiB..., powers of 1024)"
                       .format(text))
  out = float(number) * (1 << (10 * _UNITS[unit]))
  if out >= 2**63:
    raise OptionsError("invalid size {!r}: too large".format(text))
  return int(out)


@dataclasses.dataclass
class Options:
  # "plan" (the default, the bridge's planner, hloverlap.plan): every
  # candidate (cleanup, hoist, pipeline, hoist-pipeline; XLA's while-loop
  # double buffering off and on; pipeliner depth 2) through hloverlap and
  # XLA, and the one whose executable is predicted fastest (or measured,
  # plan_by="measure") within memory is kept. Any other value is one of the
  # binary's presets, run alone: "hoist-pipeline" = collective-hoist then
  # collective-pipeliner, "pipeline" = pipeliner only, "auto-rewrite" = the
  # CLI planner on the unfused module.
  preset: Optional[str] = PLAN
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
  # Rewrite what the StableHLO route rejects: the tool's copy-to-reshape pass
  # (src/passes/route_fixups.h).
  route_fixups: bool = True
  # Directory to keep the HLO before/after hloverlap (debugging); None = temp.
  keep_dir: Optional[str] = None
  timeout_s: Optional[float] = 600.0
  # False: hloverlap ignores the process's XLA_FLAGS (--no-xla-flags-env),
  # so what it does is what these Options say. (A process whose XLA_FLAGS
  # switches XLA's pipelining off would otherwise switch hloverlap's off
  # too, silently: 0 collectives pipelined.)
  xla_flags_env: bool = False
  # --- the planner (preset="plan") ---
  # "predict": simulate each candidate's executable (XLA's final module);
  # "measure": also time the best plan_measure_top of them on this job's
  # devices (plan_measure_steps steps each, fresh random inputs), choose by
  # the measured median.
  plan_by: str = "predict"
  plan_measure_top: int = 3
  plan_measure_steps: int = 5
  # Candidates that reorder float sums (the reduction deferral: gradients
  # accumulated locally and reduced once per step) only when True.
  allow_reassociation: bool = False
  # Wall-time budget of the candidates' compiles (seconds; None: no limit).
  # Candidates not compiled by then are left out (the table says so).
  plan_budget_s: Optional[float] = 300.0
  # Prune before compiling: hloverlap's distinct modules are ranked by the
  # CLI planner's estimate (`hloverlap sim` of the unfused module, compute
  # priced as XLA will fuse it) and only the best plan_max_modules are
  # compiled, each with its XLA options (plus cleanup, the baseline).
  # None: compile every candidate.
  plan_max_modules: Optional[int] = 3
  plan_threads: Optional[int] = None  # compile threads (default: cores / 2)
  # On-disk cache of the choice (and the chosen executable), keyed by the
  # module, these options, the hloverlap and jaxlib versions and the
  # devices: True = $HLOVERLAP_CACHE_DIR or ~/.cache/hloverlap, a path, or
  # False.
  plan_cache: Union[bool, str] = True
  # Extra `hloverlap sim` arguments for the planner's predictions (e.g.
  # "--gpu-spec=FILE", "--collective-table=FILE" from a calibration). The
  # GPU preset follows the devices' kind (H100 -> --gpu=h100, else h200)
  # unless these give --gpu.
  sim_args: Sequence[str] = ()

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

    The presets and the range of `pipeline_depth` are the binary's: from
    `catalog` (`hloverlap.binary.catalog`; `hloverlap.binary.check_options`
    finds the binary and passes its catalog). Without a catalog those two
    are left to the binary to check.
    """
    if self.preset is not None and self.passes is not None:
      if self.preset != PLAN:
        raise OptionsError("give either preset or passes, not both")
    if (self.preset is not None and self.preset != PLAN and
        catalog is not None and self.preset not in catalog["presets"]):
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
      if isinstance(self.memory_budget, str):
        parse_byte_size(self.memory_budget)
    if self.plan_by not in ("predict", "measure"):
      raise OptionsError("plan_by must be 'predict' or 'measure', not {!r}"
                         .format(self.plan_by))
    if isinstance(self.sim_args, str) or not all(
        isinstance(a, str) for a in self.sim_args):
      raise OptionsError("sim_args must be a sequence of strings")
    for name in ("plan_measure_top", "plan_measure_steps"):
      v = getattr(self, name)
      if not isinstance(v, int) or isinstance(v, bool) or v < 1:
        raise OptionsError("{} must be an int >= 1".format(name))
    for name in ("plan_max_modules", "plan_threads"):
      v = getattr(self, name)
      if v is not None and (not isinstance(v, int) or isinstance(v, bool) or
                            v < 1):
        raise OptionsError("{} must be None or an int >= 1".format(name))
    if self.plan_budget_s is not None and not (
        isinstance(self.plan_budget_s, (int, float)) and
        self.plan_budget_s > 0):
      raise OptionsError("plan_budget_s must be None or a positive number")
    self.loop_rules()

  def plans(self) -> bool:
    """True when the bridge's planner chooses the pipeline."""
    return self.preset == PLAN and self.passes is None

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
    `self.remarks` afterwards). The options are not validated here: the
    caller has (`hloverlap.binary.check_options`).
    """
    args = ["opt", input_path, "-o", output_path]
    p = self.passes_arg()
    if p is not None:
      args.append("--passes=" + p)
    elif self.preset == PLAN:
      # Without XLA (hloverlap alone): the CLI planner, which predicts each
      # candidate on the unfused module (the bridge compiles them instead).
      args.append("--preset=" + CLI_PLAN_PRESET)
    elif self.preset is not None:
      args.append("--preset=" + self.preset)
    for rule in self.loop_rules():
      args.append("--loop=" + rule)
    if self.pipeline_depth is not None:
      args.append("--pipeline-depth={}".format(self.pipeline_depth))
    if self.memory_budget is not None:
      args.append("--memory-budget={}".format(
          str(self.memory_budget).strip()))
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
