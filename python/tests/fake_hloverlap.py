#!/usr/bin/env python3
"""A stand-in for the hloverlap binary in the Python tests (no build needed).

`opt IN -o OUT [--remarks=R --remarks-format=F] [flags]`: copies IN to OUT,
appending `// args: ...` so tests can see the flags; writes one JSON remark.
FAKE_HLOVERLAP_EXIT=N exits with N and a diagnostic instead.
FAKE_HLOVERLAP_FAIL_AT=NAME exits with 2 and `IN:LINE:3: ...` pointing at
the line that defines NAME. FAKE_HLOVERLAP_COPY=1 inserts a copy of ENTRY's
first parameter (to exercise the route fixups). The route's own passes
(`--passes=` of copy-to-reshape, strip-buffer-donor, strip-shardings,
donors-to-aliases) are mimicked on the text, copy-to-reshape with its
CopyAsReshape remarks. donors-to-aliases is a plumbing stand-in, not the
pass (tests/passes/donors_to_aliases*.hlo test that): every whole-parameter
donor P becomes a may-alias of output {P}, with a DonorAliased remark whose
message says the `match=` the bridge asked for.
`sim IN --format=json` prints a step (see `sim`). `--version` a version.
`opt --list-presets --json` / `opt --list-passes --json` print the real
binary's shape of catalog with a preset of its own ("fake-preset") and the
pipeliner's depth range as 1..64; FAKE_HLOVERLAP_LIST_LOG=FILE appends a
line per listing (FAKE_HLOVERLAP_EXIT does not apply to listings).
"""
import json
import os
import re
import sys

ROUTE_PASSES = ("copy-to-reshape", "strip-buffer-donor", "strip-shardings",
                "donors-to-aliases")


def _drop_braced(text, prefix):
  """`text` without every `prefix{...}` (balanced braces)."""
  while True:
    j = text.find(prefix)
    if j < 0:
      return text
    k, depth = j + len(prefix) - 1, 0
    while k < len(text):
      depth += {"{": 1, "}": -1}.get(text[k], 0)
      k += 1
      if depth == 0:
        break
    text = text[:j] + text[k:]


def route_passes(text, passes):
  """(text, remarks) of the route's passes, as the real tool prints them."""
  remarks = []
  if "copy-to-reshape" in passes:
    def fix(m):
      remarks.append({"kind": "passed", "pass": "copy-to-reshape",
                      "name": "CopyAsReshape", "instruction": m.group(2),
                      "message": "copy {} -> reshape (value identity)"
                                 .format(m.group(2))})
      return m.group(1) + " reshape("
    text = re.sub(r"^(\s*(?:ROOT )?%?([^\s=]+) = [a-z0-9]+\[[^\]]*\]"
                  r"(?:\{[^}]*\})?) copy\(", fix, text, flags=re.M)
  if "strip-shardings" in passes:
    text = _drop_braced(text, ", sharding={")
  if "strip-buffer-donor" in passes:
    head, _, rest = text.partition("\n")
    for key in ("input_output_alias", "buffer_donor"):
      head = _drop_braced(head, ", {}={{".format(key))
    text = head + "\n" + rest
  donate = next((p for p in passes if p.startswith("donors-to-aliases")), None)
  if donate is not None:
    match = re.search(r"match=(\w+)", donate)
    head, _, rest = text.partition("\n")
    donors = re.search(r", buffer_donor=\{([^}]*\{\}[^}]*)\}", head)
    params = [int(p) for p in re.findall(r"\((\d+), \{\}\)",
                                         donors.group(1))] if donors else []
    if params:
      head = _drop_braced(head, ", buffer_donor={")
      name = re.match(r"HloModule [^\s,]+", head).end()
      head = head[:name] + ", input_output_alias={{ {} }}".format(", ".join(
          "{{{0}}}: ({0}, {{}}, may-alias)".format(p) for p in params)) + \
          head[name:]
      text = head + "\n" + rest
    for p in params:
      remarks.append({"kind": "passed", "pass": "donors-to-aliases",
                      "name": "DonorAliased", "metrics": {
                          "output": p, "parameter": p},
                      "message": "match={}".format(
                          match.group(1) if match else "layout")})
  return text, remarks


def main(argv):
  if argv[:1] == ["opt"] and argv[1:2] in (["--list-presets"],
                                           ["--list-passes"]):
    log = os.environ.get("FAKE_HLOVERLAP_LIST_LOG")
    if log:
      with open(log, "a") as f:
        f.write(argv[1] + "\n")
    if argv[1] == "--list-presets":
      names = ["cleanup", "pipeline", "hoist-pipeline", "xla-gpu", "auto",
               "auto-rewrite", "fake-preset"]
      print(json.dumps({"presets": [
          {"name": n, "pipeline": "inline,dce", "help": "", "passes": []}
          for n in names]}))
    else:
      print(json.dumps({"passes": [
          {"name": "collective-pipeliner", "help": "", "options": [
              {"name": "depth", "type": "int", "min": 1, "max": 64,
               "default": 1, "flag": "--pipeline-depth", "help": ""}]}]}))
    return 0
  if argv[:1] == ["--version"]:
    print("hloverlap fake")
    return 0
  if argv[:1] == ["sim"]:
    return sim(argv[1:])
  code = int(os.environ.get("FAKE_HLOVERLAP_EXIT", "0"))
  if code:
    sys.stderr.write("in.hlo:1:1: expected 'HloModule'\n")
    return code
  if len(argv) < 2 or argv[0] != "opt":
    sys.stderr.write("usage: opt IN -o OUT\n")
    return 2
  inp = argv[1]
  out = None
  remarks = None
  fmt = "text"
  rest = []
  i = 2
  while i < len(argv):
    a = argv[i]
    if a == "-o":
      out = argv[i + 1]
      i += 2
      continue
    if a.startswith("--remarks="):
      remarks = a.split("=", 1)[1]
    elif a.startswith("--remarks-format="):
      fmt = a.split("=", 1)[1]
    rest.append(a)
    i += 1
  text = open(inp).read()
  fail_at = os.environ.get("FAKE_HLOVERLAP_FAIL_AT")
  if fail_at:
    for n, line in enumerate(text.split("\n"), 1):
      if line.strip().startswith("%" + fail_at + " ="):
        sys.stderr.write("{}:{}:3: cannot handle %{}\n".format(
            inp, n, fail_at))
        return 2
  passes = next((a.split("=", 1)[1] for a in rest
                 if a.startswith("--passes=")), "").split(",")
  fixup_remarks = None
  if {p.split("{")[0] for p in passes} & set(ROUTE_PASSES):
    text, fixup_remarks = route_passes(text, passes)
  elif os.environ.get("FAKE_HLOVERLAP_COPY"):
    lines = text.split("\n")
    entry = next(i for i, l in enumerate(lines) if l.startswith("ENTRY"))
    p = lines[entry + 1].split("=")[0].strip()
    shape = lines[entry + 1].split("=")[1].split()[0]
    lines.insert(entry + 2, "  %copy.9 = {} copy({})".format(shape, p))
    text = "\n".join(lines)
  text += "\n// args: " + " ".join(rest) + "\n"
  open(out, "w").write(text)
  if remarks and fixup_remarks is not None:
    open(remarks, "w").write("".join(json.dumps(r) + "\n"
                                     for r in fixup_remarks))
  elif remarks:
    r = {"kind": "passed", "pass": "collective-pipeliner",
         "message": "prefetched all-gather 1 iteration ahead",
         "instruction": "ag", "loop": "while.1",
         "metrics": {"bytes_moved": 16, "depth": 1}}
    line = json.dumps(r) if fmt == "json" else "passed: fake"
    open(remarks, "w").write(line + "\n")
  return 0


def sim(argv):
  """`sim IN --format=json`: the step is FAKE_SIM_STEPS[K] (a JSON object)
  for the first key K that occurs in IN's text, else 100 ms; a key whose
  value is null makes sim fail."""
  text = open(argv[0]).read()
  steps = json.loads(os.environ.get("FAKE_SIM_STEPS", "{}"))
  step = 100.0
  for k, v in steps.items():
    if k in text:
      if v is None:
        sys.stderr.write("{}:1:1: cannot simulate\n".format(argv[0]))
        return 2
      step = float(v)
      break
  print(json.dumps({"step_time_ms": step, "exposed_communication_ms": 1.0,
                    "compute_ms": step - 1.0, "peak_memory_bytes": 1000}))
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
