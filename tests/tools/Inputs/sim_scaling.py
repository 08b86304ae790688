#!/usr/bin/env python3
"""Generates the scaling inputs of `hloverlap sim` (the modules of
bench/sim_scaling_bench.cc):

  sim_scaling.py chain N       a straight-line entry of N instructions: a
                               chain of elementwise kernels that all read one
                               shared value, with an all-gather of it issued
                               every 64 instructions and waited for 16 later
  sim_scaling.py nest D T      D nested while loops of trip count T; every
                               level issues an all-gather before its inner
                               loop and waits for it after
"""
import sys

F = "f32[256,256]{1,0}"
G = "f32[512,256]{1,0}"
STATE = "(s32[], f32[256,256])"
STATE_L = "(s32[], f32[256,256]{1,0})"


def chain(n):
    out = ["HloModule chain, is_scheduled=true, num_partitions=2", "",
           "ENTRY %main (p: f32[256,256]) -> f32[256,256] {",
           f"  %p = {F} parameter(0)", f"  %v0 = {F} exponential(%p)"]
    count, v, open_, open_at = 2, 0, -1, 0
    while count < n - 1:
        if open_ < 0 and count % 64 == 0 and count + 20 < n:
            open_, open_at = count, count
            out.append(f"  %ag{open_} = ({F}, {G}) all-gather-start(%v0), "
                       f"channel_id={count}, replica_groups={{{{0,1}}}}, "
                       "use_global_device_ids=true, dimensions={0}")
            count += 1
        elif open_ >= 0 and count - open_at >= 16:
            out += [f"  %agd{open_} = {G} all-gather-done(%ag{open_})",
                    f"  %s{open_} = {F} slice(%agd{open_}), "
                    "slice={[0:256], [0:256]}",
                    f"  %v{v + 1} = {F} add(%v{v}, %s{open_})"]
            count += 3
            v += 1
            open_ = -1
        else:
            out.append(f"  %v{v + 1} = {F} add(%v{v}, %v0)")
            count += 1
            v += 1
    out += [f"  ROOT %r = {F} negate(%v{v})", "}"]
    return "\n".join(out) + "\n"


def nest(depth, trips):
    out = ["HloModule nest, is_scheduled=true, num_partitions=2", ""]
    config = f'backend_config={{"known_trip_count":{{"n":"{trips}"}}}}'
    for k in range(depth, 0, -1):
        out += [f"%c{k} (p: {STATE}) -> pred[] {{",
                f"  %p = {STATE_L} parameter(0)",
                "  %i = s32[] get-tuple-element(%p), index=0",
                f"  %n = s32[] constant({trips})",
                "  ROOT %lt = pred[] compare(%i, %n), direction=LT", "}", ""]
        out += [f"%b{k} (p: {STATE}) -> {STATE} {{",
                f"  %p = {STATE_L} parameter(0)",
                "  %i = s32[] get-tuple-element(%p), index=0",
                f"  %x = {F} get-tuple-element(%p), index=1",
                f"  %ags = ({F}, {G}) all-gather-start(%x), channel_id={k}, "
                "replica_groups={{0,1}}, use_global_device_ids=true, "
                "dimensions={0}",
                f"  %y = {F} exponential(%x)"]
        z = "%y"
        if k < depth:
            out += ["  %zero = s32[] constant(0)",
                    f"  %init = {STATE_L} tuple(%zero, %y)",
                    f"  %w = {STATE_L} while(%init), condition=%c{k + 1}, "
                    f"body=%b{k + 1}, {config}",
                    f"  %z = {F} get-tuple-element(%w), index=1"]
            z = "%z"
        out += [f"  %agd = {G} all-gather-done(%ags)",
                f"  %s = {F} slice(%agd), slice={{[0:256], [0:256]}}",
                f"  %o = {F} add({z}, %s)", "  %one = s32[] constant(1)",
                "  %next = s32[] add(%i, %one)",
                f"  ROOT %t = {STATE_L} tuple(%next, %o)", "}", ""]
    out += ["ENTRY %main (x: f32[256,256]) -> f32[256,256] {",
            f"  %x = {F} parameter(0)", "  %zero = s32[] constant(0)",
            f"  %init = {STATE_L} tuple(%zero, %x)",
            f"  %w = {STATE_L} while(%init), condition=%c1, body=%b1, {config}",
            f"  ROOT %out = {F} get-tuple-element(%w), index=1", "}"]
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "chain":
        sys.stdout.write(chain(int(sys.argv[2])))
    elif len(sys.argv) == 4 and sys.argv[1] == "nest":
        sys.stdout.write(nest(int(sys.argv[2]), int(sys.argv[3])))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
