#!/usr/bin/env python3
"""Compares two records of scripts/record_sim_outputs.sh: exit statuses and
stderr exactly, the text reports with every number within a relative
tolerance or one unit of its last printed digit (a figure on a rounding
boundary), the JSON reports and Chrome traces field by field (numbers within
the tolerance, everything else equal). The collectives of a report may
trade places where their exposed times are equal within the tolerance.

Usage: python3 scripts/compare_sim_outputs.py OLD NEW [--rel 1e-9]
Prints one line per difference and a summary; exit 1 if any.
"""
import argparse
import json
import os
import re
import sys

NUM = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def close(a, b, rel):
    return a == b or abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def last_digit(u, v):
    """u, v printed with the same decimals, one unit of the last apart (a
    figure on a rounding boundary, e.g. 0.1255 ms printed with %.3f)."""
    du = len(u.split(".")[1]) if "." in u else 0
    dv = len(v.split(".")[1]) if "." in v else 0
    if du != dv or "e" in u.lower() or "e" in v.lower():
        return False
    return abs(float(u) - float(v)) <= 1.000001 * 10.0 ** -du


def cmp_json(a, b, rel, path, out):
    if isinstance(a, bool) or isinstance(b, bool):
        if a != b:
            out.append(f"{path}: {a!r} != {b!r}")
    elif isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if not close(float(a), float(b), rel):
            out.append(f"{path}: {a!r} != {b!r}")
    elif isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"{path}.{k}: only in {'new' if k in b else 'old'}")
            else:
                cmp_json(a[k], b[k], rel, f"{path}.{k}", out)
    elif path.endswith(".collectives") and isinstance(a, list) and \
            isinstance(b, list):
        cmp_collectives(a, b, rel, path, out)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{path}: {len(a)} != {len(b)} entries")
        for i, (x, y) in enumerate(zip(a, b)):
            cmp_json(x, y, rel, f"{path}[{i}]", out)
            if len(out) > 20:
                return
    elif a != b:
        out.append(f"{path}: {a!r} != {b!r}")


def cmp_collectives(a, b, rel, path, out):
    """The report's collectives (sorted by exposed, then total time): the
    same entries by name, and either order sorted up to `rel` (entries
    equal but for rounding may trade places)."""
    by_name = {c.get("name"): c for c in a}
    if len(by_name) != len(a) or sorted(by_name) != sorted(
            c.get("name") for c in b):
        cmp_json(a, b, rel, path + "[]", out)
        return
    for c in b:
        cmp_json(by_name[c["name"]], c, rel, f"{path}[{c['name']}]", out)
    key = lambda c: (c["exposed_ms"], c["time_ms"])
    for x, y in zip(b, b[1:]):
        kx, ky = key(x), key(y)
        if ky[0] > kx[0] and not close(kx[0], ky[0], rel):
            out.append(f"{path}: {y['name']} after {x['name']} though more "
                       "exposed")


def table_rows(lines):
    """Splits a text report into its lines before the collectives table and
    the table's rows keyed by name."""
    head, rows = [], {}
    in_table = False
    for line in lines:
        if in_table and line.startswith("  ") and not line.startswith(
                "  ..."):
            rows[line.split()[0]] = line
        else:
            head.append(line)
        if line.startswith("collectives by exposed time:"):
            in_table = True
    return head, rows


def cmp_text(a, b, rel, out):
    ha, ra = table_rows(a.splitlines())
    hb, rb = table_rows(b.splitlines())
    if sorted(ra) == sorted(rb) and len(ra) == len(a.splitlines()) - len(ha):
        cmp_lines(ha, hb, rel, out)
        cmp_lines([ra[k] for k in sorted(ra)], [rb[k] for k in sorted(ra)],
                  rel, out)
        return
    cmp_lines(a.splitlines(), b.splitlines(), rel, out)


def cmp_lines(la, lb, rel, out):
    if len(la) != len(lb):
        out.append(f"{len(la)} != {len(lb)} lines")
    for x, y in zip(la, lb):
        if NUM.sub("#", x) != NUM.sub("#", y):
            out.append(f"text: {x!r} != {y!r}")
            continue
        for u, v in zip(NUM.findall(x), NUM.findall(y)):
            if u != v and not close(float(u), float(v), rel) and \
                    not last_digit(u, v):
                out.append(f"text: {x!r} != {y!r}")
                break


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--rel", type=float, default=1e-9)
    args = ap.parse_args()
    names = sorted(set(os.listdir(args.old)) | set(os.listdir(args.new)))
    bad = 0
    exact = 0
    for name in names:
        pa, pb = os.path.join(args.old, name), os.path.join(args.new, name)
        if not (os.path.exists(pa) and os.path.exists(pb)):
            print(f"{name}: only in {'new' if os.path.exists(pb) else 'old'}")
            bad += 1
            continue
        a, b = open(pa, "rb").read(), open(pb, "rb").read()
        if a == b:
            exact += 1
            continue
        out = []
        if name.endswith(".json"):
            try:
                cmp_json(json.loads(a), json.loads(b), args.rel, "", out)
            except ValueError as e:
                out.append(f"not JSON: {e}")
        elif name.endswith(".txt"):
            cmp_text(a.decode(), b.decode(), args.rel, out)
        else:
            out.append("differs")
        for line in out[:5]:
            print(f"{name}: {line}")
        bad += bool(out)
    print(f"{len(names)} files: {exact} byte-identical, "
          f"{len(names) - exact - bad} within {args.rel:g}, {bad} different")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
