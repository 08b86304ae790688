"""The bridge's planner (hloverlap.plan) without JAX: candidates, the
choice, deduplication, the budget, measurement, agreement between
processes, and the cache."""
import os
import tempfile
import unittest

from hloverlap import plan as plan_mod
from hloverlap.plan import Built, Compiled, PlanRow, Simulated

GB = 1 << 30


def row(name, ms, peak=None, **kw):
  return PlanRow(name, predicted_ms=ms, peak_bytes=peak, **kw)


class CandidatesTest(unittest.TestCase):

  def test_default_set(self):
    names = [c.name for c in plan_mod.candidates()]
    for base in ("cleanup", "hoist", "pipeline", "hoist-pipeline"):
      self.assertIn(base, names)
      self.assertIn(base + "+xla-db", names)
    self.assertIn("pipeline@2", names)
    self.assertFalse(any(c.reorders_sums for c in plan_mod.candidates()))
    self.assertEqual(len(set(names)), len(names))

  def test_deferral_only_when_allowed(self):
    names = [c.name for c in plan_mod.candidates(allow_reassociation=True)]
    self.assertIn("hoist-pipeline+defer", names)
    self.assertIn("hoist-pipeline+defer+xla-db", names)
    defer = [c for c in plan_mod.candidates(True) if c.reorders_sums]
    self.assertTrue(all("all:defer-reduce=on" in c.loops for c in defer))

  def test_per_loop_double_buffering_uses_hloverlaps_pass(self):
    presets = {"cleanup": "inline,dce", "pipeline": "inline,cp",
               "hoist-pipeline": "inline,ch,cp"}
    cands = {c.name: c for c in plan_mod.candidates(
        per_loop_double_buffer=presets)}
    self.assertNotIn("hoist+xla-db", cands)
    self.assertEqual(cands["pipeline+db"].passes, "inline,cp,double-buffer")
    self.assertIsNone(cands["pipeline+db"].preset)
    self.assertEqual(cands["hoist+db"].passes,
                     plan_mod.HOIST_PASSES + ",double-buffer")
    self.assertFalse(any(c.xla_options for c in cands.values()))

  def test_asks_per_loop_double_buffering(self):
    ask = plan_mod.asks_per_loop_double_buffering
    self.assertTrue(ask('frontend_attributes={_hloverlap_double_buffer="on"}',
                        []))
    self.assertTrue(ask("", ["innermost:double-buffer=off"]))
    self.assertFalse(ask("", ["innermost:pipeline=off"]))

  def test_double_buffering_is_an_xla_option(self):
    c = {c.name: c for c in plan_mod.candidates()}["hoist+xla-db"]
    self.assertEqual(dict(c.xla_options),
                     {plan_mod.DOUBLE_BUFFER_KEY: True})


class ChooseTest(unittest.TestCase):

  def test_fastest_wins(self):
    rows = [row("cleanup", 60.0, 4 * GB), row("hoist", 53.0, 4 * GB),
            row("pipeline", 60.2, 7 * GB)]
    self.assertEqual(plan_mod.choose(rows), "hoist")
    self.assertTrue(rows[1].chosen)
    self.assertFalse(rows[0].chosen)

  def test_tie_goes_to_less_memory(self):
    # within TIE_FRACTION of the best: the smaller peak wins.
    rows = [row("cleanup", 60.0, 4 * GB), row("pipeline", 53.0, 9 * GB),
            row("hoist", 53.2, 5 * GB)]
    self.assertEqual(plan_mod.choose(rows), "hoist")
    rows = [row("pipeline", 53.0, 9 * GB), row("hoist", 54.0, 5 * GB)]
    self.assertEqual(plan_mod.choose(rows), "pipeline")  # not a tie

  def test_device_memory(self):
    rows = [row("cleanup", 60.0, 4 * GB), row("pipeline", 50.0, 9 * GB)]
    self.assertEqual(plan_mod.choose(rows, device_memory_bytes=8 * GB),
                     "cleanup")
    self.assertFalse(rows[1].fits)
    self.assertIn("over the device", rows[1].why_not)

  def test_memory_budget_is_extra_over_cleanup(self):
    rows = [row("cleanup", 60.0, 4 * GB), row("pipeline", 50.0, 7 * GB),
            row("hoist", 55.0, 5 * GB)]
    self.assertEqual(plan_mod.choose(rows, memory_budget_bytes=2 * GB),
                     "hoist")
    self.assertIn("over the budget", rows[1].why_not)
    self.assertEqual(plan_mod.choose(rows, memory_budget_bytes=0),
                     "cleanup")

  def test_nothing_to_choose(self):
    self.assertIsNone(plan_mod.choose([PlanRow("cleanup", error="x")]))

  def test_by_measurement(self):
    rows = [row("cleanup", 60.0, 4 * GB, measured_ms=61.0),
            row("hoist", 53.0, 4 * GB, measured_ms=62.0),
            row("pipeline", 52.0, 4 * GB)]  # not measured: out
    self.assertEqual(plan_mod.choose(rows, by="measure"), "cleanup")


def fake(steps, peaks=None, texts=None, fail=()):
  """build/compile/simulate functions over dicts of candidate -> value."""
  peaks = peaks or {}
  texts = texts or {}
  calls = {"build": [], "compile": [], "sim": []}

  def build(c):
    calls["build"].append(c.name)
    return Built(texts.get(c.name, "module of " + c.name), c.name, 0.01)

  def compile_(c, b):
    calls["compile"].append(c.name)
    if c.name in fail:
      raise RuntimeError("XLA said no")
    return Compiled("exe:" + c.name, "final of " + c.name,
                    peaks.get(c.name, GB), 1.0)

  def simulate(c, cc):
    calls["sim"].append(c.name)
    return Simulated(steps[c.name], 1.0, steps[c.name] - 1.0)
  return build, compile_, simulate, calls


class RunTest(unittest.TestCase):

  def cands(self):
    return [c for c in plan_mod.candidates(depth2=False)
            if "+" not in c.name]

  def test_plans_and_keeps_the_choice(self):
    steps = {"cleanup": 60.0, "hoist": 53.0, "pipeline": 62.0,
             "hoist-pipeline": 54.0}
    b, c, s, calls = fake(steps)
    plan, kept = plan_mod.run(self.cands(), b, c, s, threads=2)
    self.assertEqual(plan.chosen, "hoist")
    self.assertEqual(sorted(kept), sorted(steps))
    self.assertEqual(kept["hoist"][1].executable, "exe:hoist")
    self.assertIn("hloverlap plan: hoist (predicted step 53.0 ms",
                  plan.summary_line())
    self.assertIn("no rewrite: 60.0 ms (-11.7%)", plan.summary_line())
    self.assertIn("| hoist | 53.00 |", plan.table())

  def test_same_module_compiles_once(self):
    steps = {"cleanup": 60.0, "hoist": 53.0, "pipeline": 62.0,
             "hoist-pipeline": 54.0}
    b, c, s, calls = fake(steps, texts={"hoist": "same",
                                        "hoist-pipeline": "same"})
    plan, _ = plan_mod.run(self.cands(), b, c, s, threads=2)
    self.assertEqual(sorted(calls["compile"]),
                     ["cleanup", "hoist", "pipeline"])
    self.assertEqual(plan.row("hoist-pipeline").same_as, "hoist")
    self.assertEqual(plan.row("hoist-pipeline").predicted_ms, 53.0)
    self.assertEqual(plan.chosen, "hoist")

  def test_failed_candidate_is_a_row(self):
    steps = {"cleanup": 60.0, "hoist": 53.0, "pipeline": 50.0,
             "hoist-pipeline": 54.0}
    b, c, s, _ = fake(steps, fail=("pipeline",))
    plan, kept = plan_mod.run(self.cands(), b, c, s, threads=2)
    self.assertEqual(plan.chosen, "hoist")
    self.assertIn("XLA said no", plan.row("pipeline").error)
    self.assertNotIn("pipeline", kept)

  def test_simulation_failure_keeps_compile_numbers(self):
    steps = {"cleanup": 60.0, "hoist": 53.0, "pipeline": 62.0,
             "hoist-pipeline": 54.0}
    b, c, _, _ = fake(steps)

    def s(cand, cc):
      if cand.name == "hoist":
        raise ValueError("cannot read")
      return Simulated(steps[cand.name])
    plan, _ = plan_mod.run(self.cands(), b, c, s, threads=2)
    r = plan.row("hoist")
    self.assertIn("simulation: ValueError: cannot read", r.error)
    self.assertEqual(r.compile_s, 1.0)
    self.assertEqual(plan.chosen, "hoist-pipeline")

  def test_pruned_by_estimate_keeps_cleanup(self):
    steps = {"cleanup": 60.0, "hoist": 53.0, "pipeline": 62.0,
             "hoist-pipeline": 54.0}
    b, c, s, calls = fake(steps)
    est = {"cleanup": 90.0, "hoist": 80.0, "pipeline": 99.0,
           "hoist-pipeline": 81.0}
    plan, _ = plan_mod.run(self.cands(), b, c, s, threads=1,
                           estimate=lambda cand, bb: est[cand.name],
                           max_modules=2)
    self.assertEqual(sorted(calls["compile"]),
                     ["cleanup", "hoist", "hoist-pipeline"])
    self.assertIn("not compiled", plan.row("pipeline").why_not)
    self.assertEqual(plan.row("pipeline").estimate_ms, 99.0)
    self.assertEqual(plan.chosen, "hoist")

  def test_pruning_ranks_modules_not_xla_options(self):
    # hoist and hoist+xla-db are one module: both compiled or neither.
    cands = [c for c in plan_mod.candidates(depth2=False)
             if c.name.split("+")[0] in ("cleanup", "hoist", "pipeline")]
    steps = {"cleanup": 60.0, "cleanup+xla-db": 59.0, "hoist": 53.0,
             "hoist+xla-db": 52.0, "pipeline": 62.0, "pipeline+xla-db": 58.0}
    b, c, s, calls = fake(steps, texts={
        "hoist+xla-db": "module of hoist",
        "cleanup+xla-db": "module of cleanup",
        "pipeline+xla-db": "module of pipeline"})
    est = {"module of cleanup": 90.0, "module of hoist": 80.0,
           "module of pipeline": 85.0}
    plan, _ = plan_mod.run(cands, b, c, s, threads=1,
                           estimate=lambda cand, bb: est[bb.text],
                           max_modules=1)
    self.assertEqual(sorted(calls["compile"]),
                     ["cleanup", "hoist", "hoist+xla-db"])
    self.assertEqual(plan.chosen, "hoist+xla-db")

  def test_budget(self):
    steps = {"cleanup": 60.0, "hoist": 53.0, "pipeline": 62.0,
             "hoist-pipeline": 54.0}
    b, c, s, _ = fake(steps)
    t = [0.0]

    def clock():
      t[0] += 1.0
      return t[0]
    plan, kept = plan_mod.run(self.cands(), b, c, s, threads=1, budget_s=0.5,
                              clock=clock)
    # at least one candidate is always waited for.
    self.assertGreaterEqual(len(kept), 1)
    self.assertIsNotNone(plan.chosen)

  def test_measure_and_agree(self):
    steps = {"cleanup": 60.0, "hoist": 53.0, "pipeline": 62.0,
             "hoist-pipeline": 54.0}
    measured = {"cleanup": 61.0, "hoist": 58.0, "hoist-pipeline": 55.0}
    b, c, s, _ = fake(steps)
    timed = []

    def measure(cand, cc):
      timed.append(cand.name)
      return measured[cand.name]
    agreed = []

    def agree(values):  # process 0 said: time the first two
      agreed.append(list(values))
      return values
    plan, _ = plan_mod.run(self.cands(), b, c, s, threads=2,
                           measure=measure, measure_top=2, agree=agree)
    self.assertEqual(timed, ["hoist", "hoist-pipeline"])
    self.assertEqual(plan.by, "measure")
    self.assertEqual(plan.chosen, "hoist-pipeline")
    self.assertEqual(plan.row("hoist").predicted_ms, 53.0)
    self.assertEqual(plan.row("hoist").measured_ms, 58.0)
    self.assertEqual(len(agreed), 2)  # the timed set, then the choice

  def test_agree_overrides_the_local_choice(self):
    steps = {"cleanup": 60.0, "hoist": 53.0, "pipeline": 62.0,
             "hoist-pipeline": 54.0}
    b, c, s, _ = fake(steps)
    # process 0 chose row 0 (cleanup), whatever this process predicted.
    plan, _ = plan_mod.run(self.cands(), b, c, s, threads=2,
                           agree=lambda v: [0])
    self.assertEqual(plan.chosen, "cleanup")
    self.assertEqual([r.candidate for r in plan.rows if r.chosen],
                     ["cleanup"])


class CacheTest(unittest.TestCase):

  def test_round_trip(self):
    with tempfile.TemporaryDirectory() as d:
      plan = plan_mod.Plan("hoist", [row("cleanup", 60.0, GB),
                                     row("hoist", 53.0, GB, chosen=True)])
      key = plan_mod.cache_key({"module": "abc", "devices": 2})
      self.assertIsNone(plan_mod.load_cached(d, key))
      plan_mod.store_cached(d, key, {"plan": plan.as_dict()},
                            {"exe-p0": b"\x00\x01"})
      got = plan_mod.load_cached(d, key)
      back = plan_mod.Plan.from_dict(got["plan"])
      self.assertEqual(back.chosen, "hoist")
      self.assertEqual(back.row("hoist").predicted_ms, 53.0)
      self.assertEqual(plan_mod.load_blob(d, key, "exe-p0"), b"\x00\x01")
      self.assertIsNone(plan_mod.load_blob(d, key, "exe-p1"))
      self.assertIsNone(plan_mod.load_cached(d, key + "0"))

  def test_key_depends_on_every_part(self):
    a = plan_mod.cache_key({"module": "abc", "jaxlib": "0.11.2"})
    self.assertNotEqual(a, plan_mod.cache_key({"module": "abc",
                                               "jaxlib": "0.11.3"}))
    self.assertEqual(a, plan_mod.cache_key({"jaxlib": "0.11.2",
                                            "module": "abc"}))

  def test_folder_setting(self):
    self.assertIsNone(plan_mod.cache_dir(False))
    self.assertEqual(plan_mod.cache_dir("/x/y"), "/x/y")
    old = os.environ.get("HLOVERLAP_CACHE_DIR")
    os.environ["HLOVERLAP_CACHE_DIR"] = "/from/env"
    try:
      self.assertEqual(plan_mod.cache_dir(True), "/from/env")
    finally:
      if old is None:
        del os.environ["HLOVERLAP_CACHE_DIR"]
      else:
        os.environ["HLOVERLAP_CACHE_DIR"] = old

  def test_unwritable_cache_is_not_an_error(self):
    self.assertIsNone(plan_mod.store_cached("/proc/no/such", "k", {}))

  def test_stale_format_is_ignored(self):
    with tempfile.TemporaryDirectory() as d:
      plan_mod.store_cached(d, "k", {"plan": {}})
      path = os.path.join(d, "plan-k.json")
      with open(path) as f:
        text = f.read().replace('"format": {}'.format(plan_mod.PLAN_FORMAT),
                                '"format": -1')
      with open(path, "w") as f:
        f.write(text)
      self.assertIsNone(plan_mod.load_cached(d, "k"))


if __name__ == "__main__":
  unittest.main()
