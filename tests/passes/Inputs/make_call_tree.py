"""Prints a module whose computations call the next one twice, DEPTH deep.

Inlining every call copies the innermost computation 2^DEPTH times: the
module-size guard's test for the call inliner.

  python3 make_call_tree.py DEPTH
"""
import sys


def main():
    depth = int(sys.argv[1])
    out = ["HloModule call_tree_depth%d" % depth, "", "f.%d {" % depth,
           "  x = f32[4] parameter(0)",
           "  ROOT y = f32[4] negate(x)", "}", ""]
    for k in range(depth - 1, -1, -1):
        name = "f.%d" % k if k > 0 else "ENTRY main"
        out += [
            "%s {" % name,
            "  x = f32[4] parameter(0)",
            "  a = f32[4] call(x), to_apply=f.%d" % (k + 1),
            "  b = f32[4] call(a), to_apply=f.%d" % (k + 1),
            "  ROOT y = f32[4] add(a, b)",
            "}",
            "",
        ]
    print("\n".join(out))


if __name__ == "__main__":
    main()
