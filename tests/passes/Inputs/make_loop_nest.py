"""Prints a module with a nest of DEPTH while loops of TRIPS iterations each.

Every loop body gathers its layer of a stacked weight (dynamic-slice by the
loop counter, all-gather: the collective pipeliner's prefetch pattern),
multiplies it into the carried value, and runs the next loop of the nest on
the result. Used by the module-size guard's tests: a rewrite of every level
(double buffering, deep prefetching) grows the module exponentially with
DEPTH.

  python3 make_loop_nest.py DEPTH [TRIPS]
"""
import sys


def main():
    depth = int(sys.argv[1])
    trips = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    state = "(s32[], bf16[%d,8,16], f32[16,16])" % trips
    out = ["HloModule loop_nest_depth%d, num_partitions=2" % depth, ""]
    for k in range(depth, 0, -1):
        out += [
            "cond.%d {" % k,
            "  p = %s parameter(0)" % state,
            "  i = s32[] get-tuple-element(p), index=0",
            "  n = s32[] constant(%d)" % trips,
            "  ROOT lt = pred[] compare(i, n), direction=LT",
            "}",
            "",
            "body.%d {" % k,
            "  p = %s parameter(0)" % state,
            "  i = s32[] get-tuple-element(p), index=0",
            "  w = bf16[%d,8,16] get-tuple-element(p), index=1" % trips,
            "  acc = f32[16,16] get-tuple-element(p), index=2",
            "  zero = s32[] constant(0)",
            "  ds = bf16[1,8,16] dynamic-slice(w, i, zero, zero), "
            "dynamic_slice_sizes={1,8,16}",
            "  r = bf16[8,16] reshape(ds)",
            "  ag = bf16[16,16] all-gather(r), channel_id=%d, "
            "replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true"
            % k,
            "  agf = f32[16,16] convert(ag)",
            "  d = f32[16,16] dot(acc, agf), lhs_contracting_dims={1}, "
            "rhs_contracting_dims={0}",
        ]
        result = "d"
        if k < depth:
            out += [
                "  s = %s tuple(zero, w, d)" % state,
                "  w.%d = %s while(s), condition=cond.%d, body=body.%d"
                % (k + 1, state, k + 1, k + 1),
                "  inner = f32[16,16] get-tuple-element(w.%d), index=2"
                % (k + 1),
            ]
            result = "inner"
        out += [
            "  one = s32[] constant(1)",
            "  next = s32[] add(i, one)",
            "  ROOT t = %s tuple(next, w, %s)" % (state, result),
            "}",
            "",
        ]
    out += [
        "ENTRY main {",
        "  w = bf16[%d,8,16] parameter(0)" % trips,
        "  a = f32[16,16] parameter(1)",
        "  zero = s32[] constant(0)",
        "  s = %s tuple(zero, w, a)" % state,
        "  w.1 = %s while(s), condition=cond.1, body=body.1" % state,
        "  ROOT r = f32[16,16] get-tuple-element(w.1), index=2",
        "}",
    ]
    print("\n".join(out))


if __name__ == "__main__":
    main()
