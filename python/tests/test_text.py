"""HLO text handling (no JAX)."""
import os
import unittest

from hloverlap import text
from tests import fixtures

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.path.join(os.path.dirname(SRC), "shared", "corpus")

MODULE = """HloModule jit_step, buffer_donor={ (0, {}), (1, {}) }, entry_computation_layout={(f32[4]{0}, f32[4]{0})->f32[4]{0}}, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<[\\"x\\"=2, \\"y\\"=4]>}}

%body (p: (s32[], f32[4])) -> (s32[], f32[4]) {
  %p = (s32[], /*index=1*/f32[4]{0}) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %c = f32[4]{1,0} copy(%x)
  ROOT %t = (s32[], f32[4]{0}) tuple(%i, %c), sharding={{replicated}, {devices=[2]<=[2]}}
}

ENTRY %main (a: f32[4], b: f32[4]) -> f32[4] {
  %a = f32[4]{0} parameter(0), sharding={devices=[2]<=[2]}
  %ag = f32[8]{0} all-gather(%a), channel_id=1, replica_groups=mesh['x'=2] {'x'}, dimensions={0}
  ROOT %r = f32[4]{0} add(%a, %a)
}
"""


def _read(path):
  with open(path) as f:
    return f.read()


class ParseTest(unittest.TestCase):

  def test_instruction(self):
    i = text.parse_instruction(
        "  %p = (s32[], /*index=1*/f32[4]{0}) parameter(0)")
    self.assertEqual((i.name, i.opcode, i.shape),
                     ("p", "parameter", "(s32[], /*index=1*/f32[4]{0})"))
    i = text.parse_instruction("  ROOT r.1 = token[] after-all()")
    self.assertEqual((i.name, i.opcode, i.is_root), ("r.1", "after-all", True))
    i = text.parse_instruction(
        "  x = bf16[2,3]{0,1:T(8,128)} reduce-scatter(y), dimensions={0}")
    self.assertEqual(i.opcode, "reduce-scatter")
    self.assertEqual(i.rest, "(y), dimensions={0}")
    for junk in ["}", "HloModule m", "  // x = f32[] add(a, b)", "x = ",
                 "x = (f32[] add(", "x = f32[4 add(a)"]:
      self.assertIsNone(text.parse_instruction(junk), junk)

  def test_counts_and_header(self):
    c = text.opcode_counts(MODULE)
    self.assertEqual(c["all-gather"], 1)
    self.assertEqual(c["parameter"], 2)
    self.assertEqual(c["copy"], 1)
    self.assertEqual(text.module_name(MODULE), "jit_step")
    self.assertEqual(text.header_attribute(MODULE, "buffer_donor"),
                     "{ (0, {}), (1, {}) }")
    self.assertIsNone(text.header_attribute(MODULE, "num_partitions"))
    self.assertEqual(text.sdy_mesh_axes(MODULE), {"x": 2, "y": 4})
    self.assertEqual(text.device_count(MODULE), 8)

  def test_device_count_other_sources(self):
    self.assertEqual(text.device_count(
        "HloModule m, replica_count=2, num_partitions=4\n"), 8)
    self.assertEqual(text.device_count(
        "HloModule m\nENTRY e {\n  p = f32[4]{0} parameter(0), "
        "sharding={devices=[1,2]<=[2]}\n}\n"), 2)
    self.assertIsNone(text.device_count("HloModule m\n"))

class RouteTest(unittest.TestCase):

  @unittest.skipUnless(os.path.isdir(CORPUS), "no shared corpus")
  def test_corpus_jax_lowering(self):
    path = os.path.join(CORPUS, "big_shardmap_fsdp_accum", "00_jax_lowered.hlo")
    s = _read(path)
    c = text.opcode_counts(s)
    self.assertEqual(c["all-gather"], 4)
    self.assertEqual(c["reduce-scatter"], 4)
    self.assertEqual(c["while"], 3)
    self.assertEqual(text.device_count(s), 2)
    # Every line with ' = ' outside the header is an instruction.
    n = sum(1 for l in s.split("\n")[1:] if " = " in l)
    self.assertEqual(sum(c.values()), n)


class DetectRouteTest(unittest.TestCase):

  def test_shard_map_and_gspmd(self):
    d = text.detect_route(fixtures.SHARD_MAP, 2)
    self.assertEqual(d.route, "shard_map")
    self.assertIn("1 manual body", d.reason)
    d = text.detect_route(fixtures.GSPMD, 2)
    self.assertEqual(d.route, "gspmd")
    self.assertIn("(add r)", d.reason)

  def test_one_device_is_the_lowering_route(self):
    self.assertEqual(text.detect_route(fixtures.GSPMD, 1).route, "shard_map")

  def test_compute_around_a_shard_map_is_gspmd(self):
    # jit(g) where g calls a shard_map and computes outside it.
    t = fixtures.SHARD_MAP.replace(
        "  ROOT %t = (f32[4]{0}, f32[]) tuple(%r, %s)",
        "  %r2 = f32[4]{0} multiply(%r, %r)\n"
        "  ROOT %t = (f32[4]{0}, f32[]) tuple(%r2, %s)")
    d = text.detect_route(t, 2)
    self.assertEqual(d.route, "gspmd")
    self.assertIn("multiply r2", d.reason)

  def test_partly_manual_shard_map_is_gspmd(self):
    # Mesh x=2, y=2; the body is manual over x only: XLA partitions y.
    t = fixtures.SHARD_MAP.replace(
        '#sdy.mesh<[\\"x\\"=2]>', '#sdy.mesh<[\\"x\\"=2, \\"y\\"=2]>')
    self.assertNotEqual(t, fixtures.SHARD_MAP)
    d = text.detect_route(t, 4)
    self.assertEqual(d.route, "gspmd")
    self.assertIn("automatic axes: y", d.reason)

  def test_other_custom_call_and_no_body(self):
    t = fixtures.SHARD_MAP.replace('"xla.sdy.GlobalToLocalShape"',
                                   '"my_kernel"')
    self.assertIn("custom-call my_kernel", text.detect_route(t, 2).reason)
    self.assertEqual(text.detect_route("HloModule m\n", 2).route, "gspmd")

  def test_pre_shardy_spellings(self):
    t = (fixtures.SHARD_MAP
         .replace("xla.sdy.GlobalToLocalShape", "SPMDFullToShardShape")
         .replace("xla.sdy.LocalToGlobalShape", "SPMDShardToFullShape")
         .replace("xla.sdy.manual_computation_body.1", "shmap_body.1"))
    self.assertEqual(text.detect_route(t, 2).route, "shard_map")

  @unittest.skipUnless(os.path.isdir(CORPUS), "no shared corpus")
  def test_corpus_lowerings(self):
    for case, route in [("shardmap_fsdp_accum", "shard_map"),
                        ("shardmap_dp_accum", "shard_map"),
                        ("shardmap_fsdp_accum_remat", "shard_map"),
                        ("big_shardmap_fsdp_accum", "shard_map"),
                        ("seed_gspmd_fsdp_accum", "gspmd"),
                        ("seed_gspmd_fsdp_noaccum", "gspmd")]:
      with self.subTest(case=case):
        s = _read(os.path.join(CORPUS, case, "00_jax_lowered.hlo"))
        self.assertEqual(text.detect_route(s, 2).route, route)


class SourceTest(unittest.TestCase):

  def test_instruction_source(self):
    self.assertEqual(text.instruction_source(fixtures.PARTITIONED, "r.1"),
                     "/home/u/train.py:57 in layer")
    self.assertIsNone(text.instruction_source(fixtures.PARTITIONED, "c.1"))
    self.assertIsNone(text.instruction_source(fixtures.PARTITIONED, "nope"))
    t = ('HloModule m\nENTRY %e {\n  %a = f32[] constant(1), metadata='
         '{op_name="x" source_file="/u/m.py" source_line=12}\n}\n')
    self.assertEqual(text.instruction_source(t, "a"), "/u/m.py:12")

  def test_references_in_diagnostics(self):
    self.assertEqual(text.referenced_lines(
        "/tmp/w/before.hlo:31:3: cannot handle %r.1", "/x/before.hlo"), [31])
    self.assertEqual(text.referenced_lines("other.hlo:31:3: x",
                                           "before.hlo"), [])
    self.assertEqual(text.referenced_names(
        "instruction %ar.1 and 'dot.12' are bad"), ["ar.1", "dot.12"])

  @unittest.skipUnless(os.path.isdir(CORPUS), "no shared corpus")
  def test_corpus_stack_frames(self):
    s = _read(os.path.join(CORPUS, "seed_gspmd_fsdp_accum",
                           "03_before_collective_pipeliner.hlo"))
    self.assertEqual(text.instruction_source(s, "reduce_sum.8"),
                     "experiments/corpus.py:45 in child.<locals>.rms")


if __name__ == "__main__":
  unittest.main()
