"""HLO text handling (no JAX)."""
import os
import unittest

from hloverlap import text

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

  def test_strip_buffer_donor(self):
    s = text.strip_buffer_donor(MODULE)
    self.assertNotIn("buffer_donor", s)
    self.assertTrue(s.startswith("HloModule jit_step, entry_computation_layout"))
    self.assertEqual(s.split("\n")[1:], MODULE.split("\n")[1:])
    self.assertEqual(text.strip_buffer_donor("HloModule m\n"), "HloModule m\n")


class RouteTest(unittest.TestCase):

  def test_copy_becomes_reshape(self):
    out, fixes = text.make_route_legal(MODULE)
    self.assertEqual(len(fixes), 1)
    self.assertIn("%c = f32[4]{1,0} reshape(%x)", out)
    self.assertNotIn(" copy(", out)
    self.assertEqual(text.route_blockers(out), [])
    self.assertEqual(text.make_route_legal(out), (out, []))

  def test_unfixable(self):
    for line in ["  %c = (f32[4]{0}, s32[]) copy(%t)",
                 "  %f = f32[4]{0} fusion(%a), kind=kLoop, calls=%fc",
                 "  %s = f32[8]{0} all-gather-start(%a), dimensions={0}",
                 "  %d = f32[8]{0} all-gather-done(%s)"]:
      with self.subTest(line=line):
        with self.assertRaisesRegex(ValueError, "StableHLO route"):
          text.make_route_legal(MODULE + line + "\n")

  @unittest.skipUnless(os.path.isdir(CORPUS), "no shared corpus")
  def test_corpus_jax_lowering(self):
    path = os.path.join(CORPUS, "big_shardmap_fsdp_accum", "00_jax_lowered.hlo")
    s = _read(path)
    c = text.opcode_counts(s)
    self.assertEqual(c["all-gather"], 4)
    self.assertEqual(c["reduce-scatter"], 4)
    self.assertEqual(c["while"], 3)
    self.assertEqual(text.device_count(s), 2)
    self.assertEqual(text.route_blockers(s), [])
    # Every line with ' = ' outside the header is an instruction.
    n = sum(1 for l in s.split("\n")[1:] if " = " in l)
    self.assertEqual(sum(c.values()), n)


if __name__ == "__main__":
  unittest.main()
