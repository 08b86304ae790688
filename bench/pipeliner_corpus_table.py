#!/usr/bin/env python3
"""Per-case table of collectives pipelined by hloverlap vs by XLA.

For every case of ../shared/corpus (or --corpus DIR) and every stage given
(default 03; 02 and the shard_map cases' 00/01 with --stages=00,01,02,03):

  hloverlap  runs `hloverlap opt --preset=pipeline --remarks=FILE
             --remarks-format=json` on the stage and counts, per loop, the
             `passed` remarks (all-gathers prefetched = backward,
             reduce-scatters / all-reduces delayed = forward) and lists the
             reasons of the `missed` ones.
  XLA        reads XLA's own 03 (before) and 04 (after its collective
             pipeliner) files. A collective in a rewritten loop body of 04
             counts as pipelined by XLA when its operand chain only reads the
             loop state through data-movement ops (no compute of this
             iteration) and, for all-gathers, its result is carried to the
             next iteration through the body's root tuple (prefetch); for
             reduce-scatters / all-reduces, when it reduces a value carried
             from the previous iteration (forward). 04 loops are matched to 03
             loops by body computation name (XLA appends .clone / .N).

Output: Markdown (the tables of docs/PIPELINER.md) on stdout.

  python3 bench/pipeliner_corpus_table.py --hloverlap build/hloverlap \\
      [--corpus ../shared/corpus] [--stages 00,01,02,03] [--json out.json]
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

COLLECTIVES = ("all-gather", "reduce-scatter", "all-reduce")
# Data movement / cheap ops that may sit between the loop state and a
# pipelined collective (XLA's "formatting ops").
MOVEMENT = {
    "parameter", "get-tuple-element", "constant", "dynamic-slice", "slice",
    "reshape", "bitcast", "convert", "copy", "transpose", "broadcast", "iota",
    "partition-id", "replica-id", "tuple", "opt-barrier", "pad",
    "concatenate", "select", "dynamic-update-slice",
}
FORMAT_TO_ROOT = {"reshape", "bitcast", "convert", "copy", "transpose",
                  "broadcast", "tuple", "get-tuple-element", "opt-barrier"}

# ---------------------------------------------------------------------------
# A small HLO text reader (full dump style, `%` names, `%x#3` tuple reads).


class Instr:
    __slots__ = ("name", "opcode", "shape", "operands", "attrs", "root",
                 "users")

    def __init__(self, name, opcode, shape, operands, attrs, root):
        self.name, self.opcode, self.shape = name, opcode, shape
        self.operands, self.attrs, self.root = operands, attrs, root
        self.users = []


def _skip_balanced(s, i):
    depth = 0
    while i < len(s):
        c = s[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


_HEAD = re.compile(r"^\s*(ROOT\s+)?%?([\w.\-]+)\s*=\s*")
_OPERAND = re.compile(r"%([\w.\-]+)(?:#(\d+))?")


def parse_module(path):
    """{computation: {"instrs": {name: Instr}, "root": name, "order": [...]}}"""
    comps = {}
    cur = None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if cur is None:
                m = re.match(r"^(?:ENTRY\s+)?%?([\w.\-]+)\s*\(", line)
                if m and line.rstrip().endswith("{"):
                    cur = {"instrs": {}, "root": None, "order": []}
                    comps[m.group(1)] = cur
                continue
            if line.startswith("}"):
                cur = None
                continue
            m = _HEAD.match(line)
            if not m:
                continue
            is_root, name = bool(m.group(1)), m.group(2)
            i = m.end()
            if i < len(line) and line[i] == "(":
                j = _skip_balanced(line, i)
            else:
                j = line.find(" ", i)
            shape = line[i:j]
            rest = line[j:].lstrip()
            mo = re.match(r"([\w\-]+)\(", rest)
            if not mo:
                continue
            opcode = mo.group(1)
            k = _skip_balanced(rest, mo.end() - 1)
            operands = [(o, int(ix) if ix else None)
                        for o, ix in _OPERAND.findall(rest[mo.end():k - 1])]
            attrs = rest[k:]
            inst = Instr(name, opcode, shape, operands, attrs, is_root)
            cur["instrs"][name] = inst
            cur["order"].append(name)
            if is_root:
                cur["root"] = name
    for c in comps.values():
        for inst in c["instrs"].values():
            for o, _ in inst.operands:
                if o in c["instrs"]:
                    c["instrs"][o].users.append(inst.name)
    return comps


def whiles(comps):
    """[(computation, while Instr, body, condition)]"""
    out = []
    for cname, c in comps.items():
        for name in c["order"]:
            inst = c["instrs"][name]
            if inst.opcode != "while":
                continue
            body = re.search(r"body=%?([\w.\-]+)", inst.attrs)
            cond = re.search(r"condition=%?([\w.\-]+)", inst.attrs)
            if body and cond:
                out.append((cname, inst, body.group(1), cond.group(1)))
    return out


def is_scalar(shape):
    return shape.split("{")[0].endswith("[]")


def base_kind(opcode):
    for k in COLLECTIVES:
        if opcode == k or opcode == k + "-start":
            return k
    return None


def xla_pipelined(comp):
    """{kind: (pipelined, total)} for one (04) loop body."""
    instrs = comp["instrs"]
    res = collections.defaultdict(lambda: [0, 0])

    def state_only(start):
        stack, seen = [start], set()
        while stack:
            n = stack.pop()
            if n in seen or n not in instrs:
                continue
            seen.add(n)
            x = instrs[n]
            if x.opcode not in MOVEMENT and not is_scalar(x.shape):
                return False
            if base_kind(x.opcode) and n != start:
                return False
            stack.extend(o for o, _ in x.operands)
        return True

    def reaches_root(start):
        stack, seen = [start], set()
        while stack:
            n = stack.pop()
            if n in seen:
                continue
            seen.add(n)
            x = instrs[n]
            if x.root:
                return True
            for u in x.users:
                ux = instrs[u]
                if ux.opcode in FORMAT_TO_ROOT:
                    stack.append(u)
        return False

    for name in comp["order"]:
        x = instrs[name]
        kind = base_kind(x.opcode)
        if kind is None:
            continue
        res[kind][1] += 1
        ops_ok = all(state_only(o) for o, _ in x.operands)
        if kind == "all-gather":
            ok = ops_ok and reaches_root(name)
        else:
            ok = ops_ok
        res[kind][0] += ok
    return res


def strip_clone(name, known):
    n = name
    while n not in known:
        m = re.match(r"^(.*)\.(clone|\d+)$", n)
        if not m:
            return None
        n = m.group(1)
    return n


# ---------------------------------------------------------------------------


def loop_tree(comps):
    """03 loops: {body: (while name, path, kinds {kind: count})}."""
    ws = whiles(comps)
    parent_of_comp = {}
    for cname, w, body, cond in ws:
        parent_of_comp[body] = (cname, w.name)
    info = {}
    for cname, w, body, cond in ws:
        path = [w.name]
        c = cname
        while c in parent_of_comp:
            c, wn = parent_of_comp[c]
            path.insert(0, wn)
        kinds = collections.Counter()
        for n in comps[body]["order"]:
            k = base_kind(comps[body]["instrs"][n].opcode)
            if k:
                kinds[k] += 1
        info[body] = (w.name, "/".join(path), kinds)
    return info


def xla_side(before, after):
    """{03 body: [per 04 copy {kind: (pipelined, total)}]}"""
    b = parse_module(before)
    a = parse_module(after)
    tree = loop_tree(b)
    out = collections.defaultdict(list)
    for cname, w, body, cond in whiles(a):
        orig = strip_clone(body, tree)
        if orig is None or body not in a:
            continue
        out[orig].append(xla_pipelined(a[body]))
    return tree, out


_DERIVED = re.compile(r"\.(prefetch\d+|peel\d*|pipelined|next|epilogue)\b")


def hloverlap_side(tool, path):
    with tempfile.TemporaryDirectory() as tmp:
        rfile = os.path.join(tmp, "r.json")
        p = subprocess.run(
            [tool, "opt", "--preset=pipeline", path, "-o", os.devnull,
             "--remarks=" + rfile, "--remarks-format=json"],
            capture_output=True, text=True)
        remarks = []
        if os.path.exists(rfile):
            with open(rfile) as f:
                remarks = [json.loads(l) for l in f if l.strip()]
    return p.returncode, p.stderr.strip(), remarks


def short_reason(msg):
    msg = re.sub(r"^(all-gather not prefetched|reduce-scatter not pipelined|"
                 r"all-reduce not pipelined|not pipelined): ", "", msg)
    # Names vary per case; keep the shape of the reason.
    msg = re.sub(r"%?[\w\-]+\.[\w.\-]+", "X", msg)
    return msg


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--hloverlap",
                    default=os.path.join(here, "..", "build", "hloverlap"))
    ap.add_argument("--corpus",
                    default=os.path.join(here, "..", "..", "shared", "corpus"))
    ap.add_argument("--stages", default="00,01,02,03")
    ap.add_argument("--json", help="also write the raw counts here")
    args = ap.parse_args()
    stages = args.stages.split(",")
    raw = {}
    out = []
    for case in sorted(os.listdir(args.corpus)):
        cdir = os.path.join(args.corpus, case)
        if not os.path.isdir(cdir):
            continue
        files = {f[:2]: os.path.join(cdir, f) for f in os.listdir(cdir)
                 if f.endswith(".hlo")}
        if "03" not in files or "04" not in files:
            continue
        tree, xla = xla_side(files["03"], files["04"])
        out.append("### %s\n" % case)
        about = os.path.join(cdir, "ABOUT.txt")
        if os.path.exists(about):
            out.append("_%s_\n" % open(about).readline().strip())
        out.append("| loop (03 names) | collectives in body | hloverlap "
                   "pipelined (stage 03) | XLA pipelined (04) |")
        out.append("|---|---|---|---|")
        rc, err, remarks = hloverlap_side(args.hloverlap, files["03"])
        by_loop = collections.defaultdict(lambda: collections.Counter())
        moved = collections.defaultdict(lambda: collections.Counter())
        reasons = collections.Counter()
        for r in remarks:
            if r.get("kind") not in ("passed", "missed"):
                continue
            loop = r.get("loop", "").split("/")[-1]
            derived = bool(_DERIVED.search(r.get("instruction", "")))
            key = (r["opcode"], r["kind"])
            (moved if derived else by_loop)[loop][key] += 1
            if r["kind"] == "missed":
                reasons[(r["opcode"], "inner-loop copy" if derived else
                         "original", short_reason(r.get("message", "")))] += 1
        case_raw = {"loops": {}, "hloverlap_rc": rc}
        for body, (wname, path, kinds) in sorted(
                tree.items(), key=lambda kv: kv[1][1]):
            if not kinds:
                continue
            coll = ", ".join("%d %s" % (n, k) for k, n in sorted(kinds.items()))
            hl = by_loop.get(wname, {})
            hl_txt = []
            for k in sorted(kinds):
                p = hl.get((k, "passed"), 0)
                hl_txt.append("%s %d/%d" % (k, p, kinds[k]))
            mv = moved.get(wname, {})
            mv_p = sum(v for (k, kind), v in mv.items() if kind == "passed")
            mv_t = sum(mv.values())
            if mv_t:
                hl_txt.append("+ %d/%d copies from inner loops" % (mv_p, mv_t))
            copies = xla.get(body, [])
            xl_txt = []
            if not copies:
                xl_txt.append("(loop not found in 04)")
            else:
                best = max(copies, key=lambda c: sum(v[0] for v in c.values()))
                for k in sorted(set(kinds) | set(best)):
                    p, t = best.get(k, (0, 0))
                    xl_txt.append("%s %d/%d" % (k, p, t))
                if len(copies) > 1:
                    xl_txt.append("(%d copies in 04)" % len(copies))
            out.append("| %s | %s | %s | %s |" % (
                path, coll, "; ".join(hl_txt), "; ".join(xl_txt)))
            case_raw["loops"][path] = {
                "collectives": dict(kinds),
                "hloverlap": {"%s/%s" % k: v for k, v in hl.items()},
                "hloverlap_inner_copies": {"%s/%s" % k: v
                                           for k, v in mv.items()},
                "xla_copies": [{k: list(v) for k, v in c.items()}
                               for c in copies]}
        out.append("")
        if reasons:
            out.append("hloverlap, not pipelined (stage 03):\n")
            for (op, origin, why), n in sorted(reasons.items()):
                out.append("- %d × %s (%s): %s" % (n, op, origin, why))
            out.append("")
        # Other stages: totals only.
        stage_txt = []
        for st in stages:
            if st == "03" or st not in files:
                continue
            rc2, _, rem2 = hloverlap_side(args.hloverlap, files[st])
            p = collections.Counter(r["opcode"] for r in rem2
                                    if r.get("kind") == "passed" and
                                    not _DERIVED.search(r["instruction"]))
            m = sum(1 for r in rem2 if r.get("kind") == "missed")
            txt = ", ".join("%s %d" % kv for kv in sorted(p.items())) or "none"
            stage_txt.append("%s: %s passed, %d missed (exit %d)" %
                             (st, txt, m, rc2))
            case_raw["stage_" + st] = {"passed": dict(p), "missed": m,
                                       "rc": rc2}
        if stage_txt:
            out.append("Other stages (collectives of the original loops "
                       "pipelined by hloverlap): " + "; ".join(stage_txt) +
                       "\n")
        raw[case] = case_raw
    print("\n".join(out))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(raw, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    sys.exit(main())
