"""HLO texts of the bridge tests: JAX lowerings of both routes and XLA's
partitioned module of the GSPMD one, as XLA 0.11 dumps it."""

# jax.jit(shard_map(f, in_specs=(P("x"), P("x")), out_specs=(P("x"), P())))
# as JAX 0.11 lowers it for Shardy: glue around one manual body.
SHARD_MAP = """HloModule jit_f, buffer_donor={ (0, {}) }, entry_computation_layout={(f32[4]{0}, f32[4]{0})->(f32[4]{0}, f32[])}, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<[\\"x\\"=2]>}}

%xla.sdy.manual_computation_body.1 (a: f32[2], b: f32[2]) -> (f32[2], f32[]) {
  %a = f32[2]{0} parameter(0)
  %b = f32[2]{0} parameter(1)
  %s = f32[2]{0} add(%a, %b)
  %z = f32[] constant(0)
  ROOT %t = (f32[2]{0}, f32[]) tuple(%s, %z)
}

ENTRY %main (p: f32[4], q: f32[4]) -> (f32[4], f32[]) {
  %p = f32[4]{0} parameter(0), sharding={devices=[2]<=[2]}, frontend_attributes={xla.sdy.sharding="#sdy.sharding<@mesh, [{\\"x\\"}]>"}
  %q = f32[4]{0} parameter(1), sharding={devices=[2]<=[2]}, frontend_attributes={xla.sdy.sharding="#sdy.sharding<@mesh, [{\\"x\\"}]>"}
  %g = (f32[2]{0}, f32[2]{0}) custom-call(%p, %q), custom_call_target="xla.sdy.GlobalToLocalShape", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.in_shardings="#sdy.sharding_per_value<[<@mesh, [{\\"x\\"}]>, <@mesh, [{\\"x\\"}]>]>",xla.sdy.manual_axes="#sdy<manual_axes{\\"x\\"}>"}
  %g0 = f32[2]{0} get-tuple-element(%g), index=0
  %g1 = f32[2]{0} get-tuple-element(%g), index=1
  %c = (f32[2]{0}, f32[]) call(%g0, %g1), to_apply=%xla.sdy.manual_computation_body.1, frontend_attributes={inlineable="xla_late"}
  %c0 = f32[2]{0} get-tuple-element(%c), index=0
  %c1 = f32[] get-tuple-element(%c), index=1
  %l = (f32[4]{0}, f32[]) custom-call(%c0, %c1), custom_call_target="xla.sdy.LocalToGlobalShape", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.manual_axes="#sdy<manual_axes{\\"x\\"}>",xla.sdy.out_shardings="#sdy.sharding_per_value<[<@mesh, [{\\"x\\"}]>, <@mesh, []>]>"}
  %r = f32[4]{0} get-tuple-element(%l), index=0
  %s = f32[] get-tuple-element(%l), index=1
  ROOT %t = (f32[4]{0}, f32[]) tuple(%r, %s)
}
"""

# jax.jit(g, in_shardings=(P("x"), P("x")), donate_argnums=(0,)): no
# collectives before XLA's SPMD partitioner.
GSPMD = """HloModule jit_g, buffer_donor={ (0, {}) }, entry_computation_layout={(f32[4]{0}, f32[4]{0})->(f32[4]{0}, f32[])}, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<[\\"x\\"=2]>}}

%region_0.1 (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %a = f32[] add(%x, %y)
}

ENTRY %main (p: f32[4], q: f32[4]) -> (f32[4], f32[]) {
  %p = f32[4]{0} parameter(0), sharding={devices=[2]<=[2]}, frontend_attributes={xla.sdy.sharding="#sdy.sharding<@mesh, [{\\"x\\"}]>"}
  %q = f32[4]{0} parameter(1), sharding={devices=[2]<=[2]}, frontend_attributes={xla.sdy.sharding="#sdy.sharding<@mesh, [{\\"x\\"}]>"}
  %r = f32[4]{0} add(%p, %q)
  %z = f32[] constant(0)
  %s = f32[] reduce(%r, %z), dimensions={0}, to_apply=%region_0.1
  ROOT %t = (f32[4]{0}, f32[]) tuple(%r, %s)
}
"""

# XLA's per-device module of GSPMD (the dump stage; a copy the StableHLO
# import rejects, shardings, a donor, and metadata through the dump's
# stack-frame tables).
PARTITIONED = """HloModule jit_g, buffer_donor={ (0, {}) }, entry_computation_layout={(f32[2]{0}, f32[2]{0})->(f32[2]{0}, f32[])}, num_partitions=2

FileNames
1 "/home/u/train.py"

FunctionNames
1 "layer"

FileLocations
1 {file_name_id=1 function_name_id=1 line=57 end_line=57 column=4 end_column=9}

StackFrames
1 {file_location_id=1 parent_frame_id=1}

%region_0.1 (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %a = f32[] add(%x, %y)
}

ENTRY %main.9 (p.1: f32[2], q.1: f32[2]) -> (f32[2], f32[]) {
  %p.1 = f32[2]{0} parameter(0), sharding={devices=[2]<=[2]}
  %q.1 = f32[2]{0} parameter(1), sharding={devices=[2]<=[2]}
  %r.1 = f32[2]{0} add(%p.1, %q.1), metadata={op_name="jit(g)/add" stack_frame_id=1}
  %c.1 = f32[2]{0} copy(%r.1)
  %z.1 = f32[] constant(0)
  %s.1 = f32[] reduce(%r.1, %z.1), dimensions={0}, to_apply=%region_0.1
  %ar.1 = f32[] all-reduce(%s.1), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=%region_0.1, metadata={op_name="jit(g)/reduce_sum" stack_frame_id=1}
  ROOT %t.1 = (f32[2]{0}, f32[]) tuple(%c.1, %ar.1), sharding={{devices=[2]<=[2]}, {replicated}}
}
"""


def dump_files(kind: str, partitioned: str = PARTITIONED):
  """{file name: text} of XLA's dump for a GSPMD compile of jit_g.

  kind: gpu (pipeliner off: the stage before reduce-scatter-creator),
  gpu_pipeliner (XLA's pipeliner on), cpu (no collective-optimizations
  pipeline), renamed (this XLA's partitioner is not spmd-partitioning),
  none (nothing dumped).
  """
  m = "module_0001.jit_g."
  out = {m + "before_optimizations.txt": GSPMD,
         m + "0002.spmd-partitioner.after_pipeline-start.before_shardy-xla"
             ".txt": GSPMD}
  if kind == "none":
    return {}
  if kind == "renamed":
    out[m + "0003.spmd-partitioner.after_shardy-xla.before_spmd-partitioner"
        "-v2.txt"] = GSPMD
    out[m + "0004.spmd-partitioner.after_spmd-partitioner-v2.before_"
        "hlo-verifier.txt"] = partitioned
    return out
  out[m + "0003.spmd-partitioner.after_shardy-xla.before_spmd-partitioning"
      ".txt"] = GSPMD
  out[m + "0004.spmd-partitioner.after_spmd-partitioning.before_"
      "hlo-verifier.txt"] = partitioned + "// stage 02\n"
  if kind == "gpu":
    out[m + "0031.collective-optimizations.after_dce.before_"
        "reduce-scatter-creator.txt"] = partitioned + "// stage 03\n"
    out[m + "0032.collective-optimizations.after_reduce-scatter-creator."
        "before_collective-permute-decomposer.txt"] = partitioned + \
        "// after 03\n"
  elif kind == "gpu_pipeliner":
    out[m + "0031.collective-optimizations.after_dce.before_collective-"
        "pipeliner-forward.txt"] = partitioned + "// stage 03 pipeliner\n"
    out[m + "0032.collective-optimizations.after_collective-pipeliner-"
        "forward.before_collective-pipeliner-backward.txt"] = partitioned
    out[m + "0034.collective-optimizations.after_collective-pipeliner-"
        "forward.before_reduce-scatter-creator.txt"] = partitioned
  return out
