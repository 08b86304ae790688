"""Errors of the JAX bridge that point at the user's code.

When a training step cannot go through hloverlap (XLA's pass names differ in
this jaxlib, hloverlap rejects the module, XLA fails to compile the result),
the bridge raises `BridgeError`, or, unless the caller passed
`fallback=None`, warns with `BridgeFallbackWarning` and runs the step as
`jax.jit` compiles it. Both messages name

  * the user's function and where it is defined (`train_step at
    train.py:42`);
  * the stage that failed (`STAGES`) and the route (shard_map / gspmd);
  * where in the user's code the failing instruction came from, when the
    cause names an instruction or a line of the module and that instruction
    carries JAX's source metadata (`train.py:57 in layer`);
  * the folder that keeps the files for a report (the modules before and
    after hloverlap, its remarks, XLA's dump, `bridge.json`).

    hloverlap.jax.jit(train_step) at train.py:42: stage 'xla-compile' failed
      (route gspmd: XLA's partitioned module, dump stage
      before_collective_pipeliner)
      cause: INVALID_ARGUMENT: ...
      in the user's code: train.py:57 in layer (instruction dot.12)
      files kept for a report: /tmp/hloverlap-train_step-k2j1/
"""

import inspect
import os
from typing import Any, Callable, List, Optional

from hloverlap import text as hlo

# The stages of a bridge compile, in order.
STAGES = {
    "dump": "jax.jit's own compile, which dumps XLA's partitioned module "
            "(GSPMD route); also checks that XLA's pass names are the ones "
            "the route disables",
    "hloverlap": "hloverlap opt on the module",
    "route-fixups": "rewriting what the StableHLO import rejects "
                    "(copy -> reshape)",
    "stablehlo": "HLO text -> HloModuleProto -> StableHLO (jaxlib)",
    "xla-compile": "XLA's compile of hloverlap's output",
}


class UserSite:
  """The user's function: its name and where it is defined."""

  def __init__(self, name: str, location: Optional[str] = None):
    self.name = name
    self.location = location  # "file:line" or None

  @classmethod
  def of(cls, fn: Optional[Callable] = None,
         module_text: Optional[str] = None) -> "UserSite":
    name, loc = None, None
    if fn is not None:
      target = fn
      try:
        target = inspect.unwrap(fn)
      except Exception:  # pylint: disable=broad-except
        pass
      name = (getattr(target, "__qualname__", None) or
              getattr(target, "__name__", None) or
              getattr(fn, "__name__", None))
      try:
        path = inspect.getsourcefile(target)
        line = target.__code__.co_firstlineno
        if path:
          loc = "{}:{}".format(path, line)
      except Exception:  # pylint: disable=broad-except
        pass
    if name is None and module_text:
      mod = hlo.module_name(module_text) or ""
      name = mod[4:] if mod.startswith("jit_") else (mod or None)
    return cls(name or "<unknown function>", loc)

  def __str__(self):
    return "{}{}".format(self.name, " at " + self.location
                         if self.location else "")


def source_hint(cause: str, module_text: Optional[str],
                module_path: Optional[str] = None) -> Optional[str]:
  """'train.py:57 in layer (instruction dot.12)' for the first instruction
  that `cause` names (by a `PATH:LINE:COL` of `module_path`, a `%name` or a
  quoted name) and that has source metadata in `module_text`."""
  if not cause or not module_text:
    return None
  lines = module_text.split("\n")
  candidates: List[str] = []
  for line_no in hlo.referenced_lines(cause, module_path):
    if 1 <= line_no <= len(lines):
      inst = hlo.parse_instruction(lines[line_no - 1])
      if inst is not None:
        candidates.append(inst.name)
  candidates += hlo.referenced_names(cause)
  seen = set()
  for name in candidates:
    if name in seen:
      continue
    seen.add(name)
    src = hlo.instruction_source(module_text, name)
    if src:
      return "{} (instruction {})".format(src, name)
  return None


def _first_lines(s: str, n: int = 12, width: int = 400) -> str:
  out = [l[:width] for l in str(s).strip().split("\n")[:n]]
  more = len(str(s).strip().split("\n")) - n
  if more > 0:
    out.append("... ({} more lines)".format(more))
  return "\n      ".join(out)


class BridgeError(RuntimeError):
  """A bridge compile failed; names the user's function and the stage."""

  def __init__(self, site: UserSite, stage: str, cause: Any,
               route: Optional[str] = None, route_detail: Optional[str] = None,
               keep_dir: Optional[str] = None, hint: Optional[str] = None):
    self.site = site
    self.stage = stage
    self.cause = cause
    self.route = route
    self.route_detail = route_detail
    self.keep_dir = keep_dir
    self.hint = hint
    super().__init__(self._message())

  def headline(self) -> str:
    return "hloverlap.jax.jit({}): stage '{}' failed{}".format(
        self.site, self.stage,
        " (route {}{})".format(self.route, ": " + self.route_detail
                               if self.route_detail else "")
        if self.route else "")

  def _message(self) -> str:
    parts = [self.headline()]
    parts.append("  cause: " + _first_lines(self.cause))
    if self.hint:
      parts.append("  in the user's code: " + self.hint)
    if self.keep_dir:
      parts.append("  files kept for a report: " + self.keep_dir +
                   os.sep)
    return "\n".join(parts)

  def fallback_message(self, what_is_lost: str) -> str:
    first = str(self.cause).strip().split("\n")[0][:300]
    msg = ["{}: {}".format(self.headline(), first)]
    if self.hint:
      msg.append("in the user's code: " + self.hint)
    msg.append("running jax.jit's own compile of the step instead; lost: " +
               what_is_lost)
    if self.keep_dir:
      msg.append("files kept for a report: " + self.keep_dir + os.sep)
    msg.append("pass fallback=None to raise instead")
    return "; ".join(msg)


class JaxNotFoundError(ImportError):
  """hloverlap.jax was used where JAX is not installed."""


def require_jax(what: str = "hloverlap.jax") -> None:
  """Raises JaxNotFoundError, saying what to install, unless `import jax`
  works (the rest of the package runs without JAX: run_opt, text, ...)."""
  try:
    import jax  # pylint: disable=g-import-not-at-top,unused-import
  except ImportError as e:
    raise JaxNotFoundError(
        "{} needs JAX, which cannot be imported here ({}): install it "
        "(`pip install jax`, or `pip install -U \"jax[cuda12]\"` for "
        "NVIDIA GPUs); without JAX, hloverlap.run_opt and the `hloverlap` "
        "command work on HLO text".format(what, e)) from None


class BridgeFallbackWarning(UserWarning):
  """The bridge fell back to jax.jit (the message says why and what was
  lost)."""
