"""The bridge's planner: choose the candidate that is fastest as XLA runs it.

hloverlap's rewrites change what XLA fuses, schedules and double-buffers
afterwards, and a model of the unfused module (where compute costs ~2.4x
the real step's, so communication looks hidden) ranks them backwards
(ANCHORS §7). So the planner judges each candidate on the module XLA will
execute:

    for each candidate (cleanup, hoist, pipeline, hoist-pipeline; XLA's
    while-loop double buffering off and on; pipeliner depth 2; reduction
    deferral only when the caller allows reordered float sums):
        hloverlap opt            -> the rewritten module (deduplicated: two
                                    candidates that rewrite to the same text
                                    with the same XLA options compile once)
        XLA compile (threads)    -> the executable
        hloverlap sim <final>    -> predicted step, exposed communication
        memory analysis          -> peak bytes
    choice: the smallest predicted step whose peak fits the device and
            whose extra peak over `cleanup` fits Options.memory_budget;
            steps within TIE_FRACTION of the best are ties, and a tie goes
            to the smaller peak.

Plan by measurement (Options.plan_by="measure"): the best predicted
candidates are timed on the caller's devices, on fresh random inputs of the
same shapes and shardings (never the caller's buffers), and the median
decides; the table keeps predicted beside measured (the simulator's error).

This module holds the values (Candidate, PlanRow, Plan), the choice, the
on-disk cache and the driver; it takes the bridge's build / compile /
simulate steps as functions, so it runs (and is tested) without JAX.
"""

import concurrent.futures
import dataclasses
import hashlib
import json
import os
import statistics
import tempfile
import time
from typing import (Any, Callable, Dict, List, Mapping, Optional, Sequence,
                    Tuple)

from hloverlap.sim import SimResult

# Two predicted steps closer than this fraction of the best are a tie (the
# simulator's error on one candidate is larger than that; ANCHORS §7).
TIE_FRACTION = 0.005
# A fixed preset whose step is this much slower than the planner's best
# gets a warning.
WARN_SLOWER_FRACTION = 0.10
DOUBLE_BUFFER_KEY = "xla_gpu_enable_while_loop_double_buffering"
HOIST_PASSES = ("inline,tuple-simplify,dce,collective-hoist,tuple-simplify,"
                "dce")
PLAN_FORMAT = 1  # bump when the cache's JSON changes meaning


@dataclasses.dataclass(frozen=True)
class Candidate:
  """One way to compile the step: hloverlap's pipeline + XLA options."""
  name: str
  preset: Optional[str] = None
  passes: Optional[str] = None
  pipeline_depth: Optional[int] = None
  loops: Tuple[str, ...] = ()  # --loop rules before the caller's own
  xla_options: Tuple[Tuple[str, object], ...] = ()
  reorders_sums: bool = False

  def spec(self) -> Dict[str, Any]:
    return dict(name=self.name, preset=self.preset, passes=self.passes,
                pipeline_depth=self.pipeline_depth, loops=list(self.loops),
                xla_options=dict(self.xla_options),
                reorders_sums=self.reorders_sums)


def candidates(allow_reassociation: bool = False, depth2: bool = True,
               per_loop_double_buffer: Optional[Mapping[str, str]] = None
               ) -> List[Candidate]:
  """The candidates, the values-unchanged ones first.

  Each base pipeline with XLA's while-loop double buffering off and on;
  the pipeliner's depth 2 (deduplicated away where no loop allows it: the
  output is then the same text as depth 1); hoist-pipeline with the
  reduction deferral only when `allow_reassociation` (it reorders float
  sums and holds a full-size accumulator per device).

  `per_loop_double_buffer` (the binary's presets, {name: pipeline text}):
  the program sets double buffering per loop (`_hloverlap_double_buffer`
  attributes or `double-buffer=` loop rules), which XLA's flag cannot honour
  (it applies to every loop it can unroll), so the double-buffered variants
  (`+db`) append hloverlap's own `double-buffer` pass, which reads them.
  """
  on = ((DOUBLE_BUFFER_KEY, True),)
  bases = [
      Candidate("cleanup", preset="cleanup"),
      Candidate("hoist", passes=HOIST_PASSES),
      Candidate("pipeline", preset="pipeline"),
      Candidate("hoist-pipeline", preset="hoist-pipeline"),
  ]
  if allow_reassociation:
    bases.append(Candidate("hoist-pipeline+defer", preset="hoist-pipeline",
                           loops=("all:defer-reduce=on",),
                           reorders_sums=True))
  out: List[Candidate] = []
  for b in bases:
    out.append(b)
    if per_loop_double_buffer is None:
      out.append(dataclasses.replace(b, name=b.name + "+xla-db",
                                     xla_options=on))
    else:
      text = b.passes or per_loop_double_buffer.get(b.preset or "", "")
      if text:
        out.append(dataclasses.replace(b, name=b.name + "+db", preset=None,
                                       passes=text + ",double-buffer"))
  if depth2:
    out.append(Candidate("pipeline@2", preset="pipeline", pipeline_depth=2))
    out.append(Candidate("hoist-pipeline@2", preset="hoist-pipeline",
                         pipeline_depth=2))
  return out


def asks_per_loop_double_buffering(module_text: str,
                                   loop_rules: Sequence[str]) -> bool:
  """Whether the program or the caller sets double buffering per loop."""
  return ("_hloverlap_double_buffer" in module_text or
          "_xla_loop_unroll_strategy" in module_text or
          any("double-buffer=" in r or "double_buffer=" in r
              for r in loop_rules))


@dataclasses.dataclass
class PlanRow:
  """What the planner knows of one candidate (a row of the table)."""
  candidate: str
  same_as: Optional[str] = None  # deduplicated: compiled as this one
  predicted_ms: Optional[float] = None
  exposed_comm_ms: Optional[float] = None
  compute_ms: Optional[float] = None
  peak_bytes: Optional[int] = None
  sim_peak_bytes: Optional[int] = None
  estimate_ms: Optional[float] = None  # the CLI planner's, unfused module
  hloverlap_s: Optional[float] = None
  compile_s: Optional[float] = None
  measured_ms: Optional[float] = None
  fits: Optional[bool] = None
  why_not: Optional[str] = None  # over memory, over budget, error, pruned
  error: Optional[str] = None
  chosen: bool = False

  def as_dict(self) -> Dict[str, Any]:
    return {k: v for k, v in dataclasses.asdict(self).items()
            if v is not None and v is not False or k == "chosen"}


@dataclasses.dataclass
class Plan:
  """The planner's table and choice (JSON: Plan.as_dict / from_dict)."""
  chosen: Optional[str]
  rows: List[PlanRow]
  by: str = "predict"  # or "measure"
  planning_s: Optional[float] = None
  threads: Optional[int] = None
  device_memory_bytes: Optional[int] = None
  memory_budget_bytes: Optional[int] = None
  from_cache: bool = False
  key: Optional[str] = None

  def row(self, name: str) -> Optional[PlanRow]:
    for r in self.rows:
      if r.candidate == name:
        return r
    return None

  def as_dict(self) -> Dict[str, Any]:
    d = dataclasses.asdict(self)
    d["rows"] = [r.as_dict() for r in self.rows]
    d["format"] = PLAN_FORMAT
    return d

  @staticmethod
  def from_dict(d: Mapping[str, Any]) -> "Plan":
    fields = {f.name for f in dataclasses.fields(PlanRow)}
    rows = [PlanRow(**{k: v for k, v in r.items() if k in fields})
            for r in d.get("rows", [])]
    return Plan(chosen=d.get("chosen"), rows=rows, by=d.get("by", "predict"),
                planning_s=d.get("planning_s"), threads=d.get("threads"),
                device_memory_bytes=d.get("device_memory_bytes"),
                memory_budget_bytes=d.get("memory_budget_bytes"),
                from_cache=bool(d.get("from_cache")), key=d.get("key"))

  def summary_line(self) -> str:
    """One line: the choice, its numbers, and what it beat."""
    c = self.row(self.chosen) if self.chosen else None
    if c is None:
      return "hloverlap plan: no candidate compiled"
    ms = c.measured_ms if self.by == "measure" else c.predicted_ms
    what = "measured" if self.by == "measure" else "predicted"
    parts = ["hloverlap plan: {} ({} step {:.1f} ms".format(
        c.candidate, what, ms if ms is not None else float("nan"))]
    if c.exposed_comm_ms is not None:
      parts.append(", exposed communication {:.1f} ms".format(
          c.exposed_comm_ms))
    if c.peak_bytes is not None:
      parts.append(", peak {}".format(format_bytes(c.peak_bytes)))
    parts.append(")")
    base = self.row("cleanup")
    if base is not None and base is not c:
      b = base.measured_ms if self.by == "measure" else base.predicted_ms
      if b and ms:
        parts.append("; no rewrite: {:.1f} ms ({:+.1f}%)".format(
            b, 100.0 * (ms - b) / b))
    done = sum(1 for r in self.rows if r.predicted_ms is not None)
    parts.append("; {} of {} candidates compiled".format(done,
                                                          len(self.rows)))
    if self.planning_s is not None:
      parts.append(" in {:.1f} s".format(self.planning_s))
    if self.from_cache:
      parts.append(" (cached plan)")
    return "".join(parts)

  def table(self) -> str:
    """The table as Markdown (for logs and docs)."""
    lines = ["| candidate | predicted ms | measured ms | exposed comm ms | "
             "peak | compile s | unfused estimate ms | chosen | note |",
             "|---|---|---|---|---|---|---|---|---|"]

    def f(v, fmt="{:.2f}"):
      return fmt.format(v) if v is not None else ""
    for r in self.rows:
      note = r.why_not or r.error or (
          "same module as " + r.same_as if r.same_as else "")
      lines.append("| {} | {} | {} | {} | {} | {} | {} | {} | {} |".format(
          r.candidate, f(r.predicted_ms), f(r.measured_ms),
          f(r.exposed_comm_ms),
          format_bytes(r.peak_bytes) if r.peak_bytes is not None else "",
          f(r.compile_s, "{:.1f}"), f(r.estimate_ms),
          "yes" if r.chosen else "",
          (note or "").replace("|", "/")[:120]))
    return "\n".join(lines)


def format_bytes(n: Optional[int]) -> str:
  if n is None:
    return "?"
  for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
    if abs(n) >= scale:
      return "{:.2f} {}".format(n / scale, unit)
  return "{} B".format(n)


def choose(rows: Sequence[PlanRow], by: str = "predict",
           device_memory_bytes: Optional[int] = None,
           memory_budget_bytes: Optional[int] = None,
           baseline: str = "cleanup") -> Optional[str]:
  """The chosen candidate's name; marks `fits`/`why_not`/`chosen` on rows.

  A row competes when it has a step (predicted, or measured when `by` is
  "measure") and its peak fits: at most `device_memory_bytes`, and at most
  `memory_budget_bytes` above the baseline's peak (hloverlap's budget is
  what the rewrites may add). Steps within TIE_FRACTION of the best tie;
  the smaller peak wins a tie, then the earlier candidate (values-unchanged
  and simpler ones come first).
  """
  key = "measured_ms" if by == "measure" else "predicted_ms"
  base = next((r for r in rows if r.candidate == baseline), None)
  base_peak = base.peak_bytes if base is not None else None
  live = []
  for r in rows:
    r.chosen = False
    step = getattr(r, key)
    if r.same_as is not None or step is None:
      r.fits = None
      continue
    r.fits = True
    if (device_memory_bytes is not None and r.peak_bytes is not None and
        r.peak_bytes > device_memory_bytes):
      r.fits = False
      r.why_not = "peak {} over the device's {}".format(
          format_bytes(r.peak_bytes), format_bytes(device_memory_bytes))
    elif (memory_budget_bytes is not None and r.peak_bytes is not None and
          base_peak is not None and
          r.peak_bytes - base_peak > memory_budget_bytes):
      r.fits = False
      r.why_not = "adds {} of peak memory, over the budget of {}".format(
          format_bytes(r.peak_bytes - base_peak),
          format_bytes(memory_budget_bytes))
    if r.fits:
      live.append(r)
  if not live:
    return None
  best = min(getattr(r, key) for r in live)
  tied = [r for r in live if getattr(r, key) <= best * (1 + TIE_FRACTION)]
  big = float("inf")
  pick = min(tied, key=lambda r: (r.peak_bytes if r.peak_bytes is not None
                                  else big, rows.index(r)))
  pick.chosen = True
  return pick.candidate


# --- the cache ---------------------------------------------------------------
def cache_dir(setting) -> Optional[str]:
  """Options.plan_cache: True (default folder), False/None/"" (off), or a
  folder. The default folder is $HLOVERLAP_CACHE_DIR, else
  $XDG_CACHE_HOME/hloverlap, else ~/.cache/hloverlap."""
  if setting is False or setting is None or setting == "":
    return None
  if isinstance(setting, str):
    return setting
  env = os.environ.get("HLOVERLAP_CACHE_DIR")
  if env:
    return env
  base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
      os.path.expanduser("~"), ".cache")
  return os.path.join(base, "hloverlap")


def cache_key(parts: Mapping[str, Any]) -> str:
  """sha256 of the parts (module fingerprint, options, versions, devices)."""
  blob = json.dumps(parts, sort_keys=True, default=str)
  return hashlib.sha256(blob.encode()).hexdigest()[:32]


def load_cached(folder: Optional[str], key: str) -> Optional[Dict[str, Any]]:
  if not folder:
    return None
  path = os.path.join(folder, "plan-" + key + ".json")
  try:
    with open(path) as f:
      d = json.load(f)
  except (OSError, ValueError):
    return None
  if d.get("format") != PLAN_FORMAT or d.get("key") != key:
    return None
  return d


def store_cached(folder: Optional[str], key: str,
                 record: Mapping[str, Any],
                 blobs: Optional[Mapping[str, bytes]] = None) -> Optional[str]:
  """Writes plan-KEY.json (and KEY-NAME.bin blobs) atomically; a cache that
  cannot be written is not an error (returns None)."""
  if not folder:
    return None
  try:
    os.makedirs(folder, exist_ok=True)
    for name, data in (blobs or {}).items():
      _atomic_write(os.path.join(folder, "{}-{}.bin".format(key, name)),
                    data)
    path = os.path.join(folder, "plan-" + key + ".json")
    _atomic_write(path, json.dumps(dict(record, key=key,
                                        format=PLAN_FORMAT),
                                   indent=1, default=str).encode())
    return path
  except OSError:
    return None


def load_blob(folder: Optional[str], key: str, name: str) -> Optional[bytes]:
  if not folder:
    return None
  try:
    with open(os.path.join(folder, "{}-{}.bin".format(key, name)),
              "rb") as f:
      return f.read()
  except OSError:
    return None


def _atomic_write(path: str, data: bytes) -> None:
  fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
  try:
    with os.fdopen(fd, "wb") as f:
      f.write(data)
    os.replace(tmp, path)
  except BaseException:
    try:
      os.unlink(tmp)
    except OSError:
      pass
    raise


# --- the driver --------------------------------------------------------------
@dataclasses.dataclass
class Built:
  """A candidate after hloverlap (what `build` returns)."""
  text: str  # the module handed to XLA
  payload: Any = None  # whatever the bridge needs to compile and wrap it
  seconds: float = 0.0


@dataclasses.dataclass
class Compiled:
  """A candidate after XLA (what `compile_` returns)."""
  executable: Any
  final_text: Optional[str] = None
  peak_bytes: Optional[int] = None
  seconds: float = 0.0


# A candidate after `hloverlap sim` (what `simulate` returns).
Simulated = SimResult


def run(cands: Sequence[Candidate],
        build: Callable[[Candidate], Built],
        compile_: Callable[[Candidate, Built], Compiled],
        simulate: Callable[[Candidate, Compiled], Simulated],
        *, estimate: Optional[Callable[[Candidate, Built], float]] = None,
        max_modules: Optional[int] = None,
        budget_s: Optional[float] = None,
        threads: Optional[int] = None,
        device_memory_bytes: Optional[int] = None,
        memory_budget_bytes: Optional[int] = None,
        measure: Optional[Callable[[Candidate, Compiled], float]] = None,
        measure_top: int = 3,
        agree: Optional[Callable[[List[int]], List[int]]] = None,
        clock: Callable[[], float] = time.perf_counter
        ) -> Tuple[Plan, Dict[str, Tuple[Built, Compiled]]]:
  """Plans: builds, deduplicates, (prunes,) compiles, simulates, chooses.

  Returns the Plan and {candidate name: (Built, Compiled)} of every
  compiled candidate. `agree(indices)` makes every process of a
  multi-process job use the same list (process 0's; the identity for one
  process); it is called for the measured set and for the choice.
  """
  t0 = clock()
  rows = [PlanRow(c.name) for c in cands]
  row_of = {r.candidate: r for r in rows}
  n_threads = threads or max(1, min(len(cands), (os.cpu_count() or 2) // 2))
  with concurrent.futures.ThreadPoolExecutor(n_threads) as pool:
    built = _build_all(pool, cands, build, row_of)
    todo = _deduplicate(cands, built, row_of)
    if estimate is not None:
      todo = _prune(pool, todo, built, estimate, max_modules, row_of)
    deadline = None if budget_s is None else t0 + budget_s
    compiled = _compile_all(pool, todo, built, compile_, simulate, row_of,
                            deadline, budget_s, clock)
  # Deduplicated rows share their twin's numbers.
  for r in rows:
    if r.same_as is not None:
      twin = row_of[r.same_as]
      r.predicted_ms, r.exposed_comm_ms, r.peak_bytes = (
          twin.predicted_ms, twin.exposed_comm_ms, twin.peak_bytes)
  by = "predict"
  chosen = choose(rows, "predict", device_memory_bytes, memory_budget_bytes)
  # With `agree`, every process calls it the same number of times, whatever
  # it compiled: a process that skipped a call would hang the others.
  if measure is not None and (chosen is not None or agree is not None):
    by = "measure"
    _measure(rows, {c.name: c for c in cands}, compiled, measure,
             measure_top, agree)
    chosen = choose(rows, "measure", device_memory_bytes,
                    memory_budget_bytes)
  if agree is not None:
    i = agree([rows.index(row_of[chosen]) if chosen else -1])[0]
    chosen = rows[i].candidate if i >= 0 else None
    for r in rows:
      r.chosen = r.candidate == chosen
  plan = Plan(chosen=chosen, rows=rows, by=by,
              planning_s=round(clock() - t0, 3), threads=n_threads,
              device_memory_bytes=device_memory_bytes,
              memory_budget_bytes=memory_budget_bytes)
  kept = {n: (built[n], compiled[n]) for n in compiled}
  return plan, kept


def _build_all(pool, cands: Sequence[Candidate], build,
               row_of: Dict[str, PlanRow]) -> Dict[str, Built]:
  """1. hloverlap, every candidate (milliseconds to seconds each)."""
  built: Dict[str, Built] = {}
  futs = {pool.submit(build, c): c for c in cands}
  for fut in concurrent.futures.as_completed(futs):
    c = futs[fut]
    try:
      built[c.name] = fut.result()
      row_of[c.name].hloverlap_s = round(built[c.name].seconds, 3)
    except Exception as e:  # pylint: disable=broad-except
      row_of[c.name].error = "hloverlap: {}: {}".format(
          type(e).__name__, str(e)[:500])
  return built


def _deduplicate(cands: Sequence[Candidate], built: Dict[str, Built],
                 row_of: Dict[str, PlanRow]) -> List[Candidate]:
  """2. The same module with the same XLA options compiles once: the
  candidates to compile (the others' rows name their twin)."""
  first_of: Dict[Tuple[str, Tuple], str] = {}
  todo: List[Candidate] = []
  for c in cands:
    b = built.get(c.name)
    if b is None:
      continue
    sig = (_text_sig(b), tuple(sorted(c.xla_options)))
    if sig in first_of:
      row_of[c.name].same_as = first_of[sig]
    else:
      first_of[sig] = c.name
      todo.append(c)
  return todo


def _prune(pool, todo: List[Candidate], built: Dict[str, Built], estimate,
           max_modules: Optional[int],
           row_of: Dict[str, PlanRow]) -> List[Candidate]:
  """3. Prune by the CLI planner's estimate of the unfused module. The
  estimate sees hloverlap's module, not XLA's options, so it ranks
  modules: the best `max_modules` are compiled with every XLA option of
  theirs; cleanup's module is always compiled (the baseline of the memory
  budget and of the summary)."""
  efuts = {pool.submit(estimate, c, built[c.name]): c for c in todo}
  for fut in concurrent.futures.as_completed(efuts):
    try:
      row_of[efuts[fut].name].estimate_ms = round(fut.result(), 4)
    except Exception:  # pylint: disable=broad-except
      pass
  modules: Dict[str, List[Candidate]] = {}
  for c in todo:
    modules.setdefault(_text_sig(built[c.name]), []).append(c)
  if max_modules is None or len(modules) <= max_modules:
    return todo

  def module_estimate(group):
    ests = [row_of[c.name].estimate_ms for c in group
            if row_of[c.name].estimate_ms is not None]
    return min(ests) if ests else float("inf")
  ranked = sorted(modules.values(), key=module_estimate)
  keep = set(c.name for g in ranked[:max_modules] for c in g)
  if "cleanup" in row_of and "cleanup" not in keep and any(
      c.name == "cleanup" for c in todo):
    keep.add("cleanup")
  for c in todo:
    if c.name not in keep:
      row_of[c.name].why_not = (
          "not compiled: the unfused-module estimate of its module "
          "ranks below the best {}".format(max_modules))
  return [c for c in todo if c.name in keep]


def _compile_all(pool, todo: List[Candidate], built: Dict[str, Built],
                 compile_, simulate, row_of: Dict[str, PlanRow],
                 deadline: Optional[float], budget_s: Optional[float],
                 clock) -> Dict[str, Compiled]:
  """4. XLA, in threads (it releases the GIL), within the budget; each
  compiled candidate simulated. Fills the rows; returns the candidates
  that compiled and simulated."""
  compiled: Dict[str, Compiled] = {}

  def one(c):
    cc = compile_(c, built[c.name])
    try:
      return cc, simulate(c, cc), None
    except Exception as e:  # pylint: disable=broad-except
      return cc, None, "simulation: {}: {}".format(type(e).__name__,
                                                    str(e)[:500])
  futs = {pool.submit(one, c): c for c in todo}
  pending = set(futs)
  while pending:
    timeout = None if deadline is None else max(0.0, deadline - clock())
    if timeout == 0.0 and compiled:
      break
    done, pending = concurrent.futures.wait(
        pending, timeout=timeout,
        return_when=concurrent.futures.FIRST_COMPLETED)
    for fut in done:
      c = futs[fut]
      try:
        cc, s, sim_error = fut.result()
      except Exception as e:  # pylint: disable=broad-except
        row_of[c.name].error = "{}: {}".format(type(e).__name__,
                                               str(e)[:500])
        continue
      if _fill_row(row_of[c.name], cc, s, sim_error):
        compiled[c.name] = cc
    if deadline is not None and clock() >= deadline and compiled:
      break
  for fut in pending:
    fut.cancel()
    row_of[futs[fut].name].why_not = (
        "not compiled within the planning budget of {} s".format(budget_s))
  return compiled


def _fill_row(r: PlanRow, cc: Compiled, s: Optional[Simulated],
              sim_error: Optional[str]) -> bool:
  """A compiled candidate's numbers into its row; False when its
  simulation failed (the row says why)."""
  r.compile_s = round(cc.seconds, 3)
  r.peak_bytes = cc.peak_bytes
  if s is None:
    r.error = sim_error
    return False
  r.predicted_ms = round(s.step_ms, 4)
  r.exposed_comm_ms = (round(s.exposed_comm_ms, 4)
                       if s.exposed_comm_ms is not None else None)
  r.compute_ms = (round(s.compute_ms, 4)
                  if s.compute_ms is not None else None)
  r.sim_peak_bytes = s.peak_bytes
  return True


def _measure(rows: List[PlanRow], by_name: Dict[str, Candidate],
             compiled: Dict[str, Compiled], measure, measure_top: int,
             agree) -> None:
  """Times the best `measure_top` predicted candidates (process 0's set
  under `agree`) into their rows' measured_ms."""
  ranked = sorted((r for r in rows if r.fits and r.same_as is None),
                  key=lambda r: r.predicted_ms)
  idx = [rows.index(r) for r in ranked[:max(1, measure_top)]]
  if agree is not None:
    idx = agree(idx)
  for i in idx:
    r = rows[i]
    c = by_name[r.candidate]
    if c.name not in compiled:
      r.error = "chosen for timing by process 0 but not compiled here"
      continue
    try:
      r.measured_ms = round(measure(c, compiled[c.name]), 4)
    except Exception as e:  # pylint: disable=broad-except
      r.error = "timing: {}: {}".format(type(e).__name__, str(e)[:300])


def _text_sig(b: Built) -> str:
  return hashlib.sha256(b.text.encode()).hexdigest()


def median_ms(samples: Sequence[float]) -> float:
  return 1000.0 * statistics.median(samples)
