"""HLO text reading for the bridge (no JAX needed).

  parse_instruction(line)   -> Instruction(name, shape, opcode, rest) or None
  opcode_counts(text)       -> {opcode: count}
  module_name(text), header_attribute(text, key)
  device_count(text)        -> devices the module runs on (num_partitions x
                               num_replicas, else the Shardy mesh, else the
                               largest `devices=[..]<=[N]` sharding)
  detect_route(text, n)     -> which route a JAX lowering takes
  referenced_lines/_names, instruction_source -> the user's line an error
                               names (hloverlap.errors)

Read-only: this module never edits a module. Every edit the StableHLO route
needs (copy -> reshape, no shardings, no donors, donors -> aliases) is a
pass of the tool (src/passes/route_fixups.h), which the bridge runs
(hloverlap.jax). What stays here reads a JAX lowering before the tool has
seen it (the route is picked before the first `hloverlap opt`) or reads
the text an error points into, where a failing module may not even parse.
"""

import os
import re
from typing import Dict, List, NamedTuple, Optional


class Instruction(NamedTuple):
  name: str
  shape: str
  opcode: str
  rest: str  # from the '(' of the operand list to the end of the line
  is_root: bool


_NAME_RE = re.compile(r"\s*(ROOT\s+)?%?([^\s=]+)\s*=\s*")
_OPCODE_RE = re.compile(r"\s*([a-z][a-z0-9\-]*)\(")


def _skip_shape(s: str, i: int) -> int:
  """Index after the shape starting at s[i] (tuple, array, token), or -1."""
  n = len(s)
  if i >= n:
    return -1
  if s[i] == "(":
    depth = 0
    while i < n:
      c = s[i]
      if c == "/" and s.startswith("/*", i):
        j = s.find("*/", i + 2)
        if j < 0:
          return -1
        i = j + 2
        continue
      if c in "([{":
        depth += 1
      elif c in ")]}":
        depth -= 1
        if depth == 0 and c == ")":
          return i + 1
      i += 1
    return -1
  m = re.compile(r"[a-z][a-z0-9]*").match(s, i)
  if not m:
    return -1
  i = m.end()
  if i < n and s[i] == "[":
    j = s.find("]", i)
    if j < 0:
      return -1
    i = j + 1
    if i < n and s[i] == "{":
      depth = 0
      while i < n:
        if s[i] == "{":
          depth += 1
        elif s[i] == "}":
          depth -= 1
          if depth == 0:
            i += 1
            break
        i += 1
  return i


def parse_instruction(line: str) -> Optional[Instruction]:
  """Splits `[ROOT] %name = SHAPE opcode(operands), attrs` (None otherwise)."""
  m = _NAME_RE.match(line)
  if not m:
    return None
  start = m.end()
  end = _skip_shape(line, start)
  if end < 0:
    return None
  om = _OPCODE_RE.match(line, end)
  if not om:
    return None
  return Instruction(m.group(2), line[start:end], om.group(1),
                     line[om.end() - 1:], bool(m.group(1)))


def iter_instructions(text: str):
  """(line_index, Instruction) for every instruction line."""
  for i, line in enumerate(text.split("\n")):
    if "=" not in line or line.startswith("HloModule"):
      continue
    inst = parse_instruction(line)
    if inst is not None:
      yield i, inst


def opcode_counts(text: str) -> Dict[str, int]:
  counts: Dict[str, int] = {}
  for _, inst in iter_instructions(text):
    counts[inst.opcode] = counts.get(inst.opcode, 0) + 1
  return counts


def _header(text: str) -> str:
  for line in text.split("\n"):
    if line.startswith("HloModule"):
      return line
    if line.strip() and not line.lstrip().startswith("//"):
      break
  return ""


def module_name(text: str) -> Optional[str]:
  m = re.match(r"HloModule\s+([^\s,]+)", _header(text))
  return m.group(1) if m else None


def header_attribute(text: str, key: str) -> Optional[str]:
  """The raw value of `key=` in the HloModule line (balanced braces)."""
  h = _header(text)
  m = re.search(r"[,\s]" + re.escape(key) + r"=", h)
  if not m:
    return None
  i = m.end()
  if i < len(h) and h[i] in "{(":
    depth = 0
    j = i
    while j < len(h):
      if h[j] in "{(":
        depth += 1
      elif h[j] in "})":
        depth -= 1
        if depth == 0:
          return h[i:j + 1]
      j += 1
    return None
  m2 = re.match(r"[^,\s]+", h[i:])
  return m2.group(0) if m2 else None


def sdy_mesh_axes(text: str) -> Dict[str, int]:
  """Axes of the first Shardy mesh in the header, e.g. {'x': 2}."""
  m = re.search(r"#sdy\.mesh<\[([^\]]*)\]", _header(text))
  if not m:
    return {}
  return {a: int(b) for a, b in re.findall(r'\\?"([^"\\]+)\\?"=(\d+)',
                                            m.group(1))}


def device_count(text: str) -> Optional[int]:
  """How many devices the module is for (see the module comment)."""
  parts = header_attribute(text, "num_partitions")
  reps = header_attribute(text, "replica_count")
  if parts or reps:
    try:
      return int(parts or 1) * int(reps or 1)
    except ValueError:
      pass
  axes = sdy_mesh_axes(text)
  if axes:
    n = 1
    for v in axes.values():
      n *= v
    return n
  best = None
  for m in re.finditer(r"devices=\[[\d,]+\]<=\[([\d,]+)\]", text):
    n = 1
    for d in m.group(1).split(","):
      n *= int(d)
    best = n if best is None else max(best, n)
  for m in re.finditer(r"devices=\[([\d,]+)\]\d", text):
    pass  # explicit device lists: sizes come from the tile dims
  return best


def split_top_level(s: str, sep: str = ",") -> List[str]:
  """Splits at `sep` outside (), [], {}, <> and /*comments*/; strips parts."""
  parts, depth, cur, i = [], 0, [], 0
  while i < len(s):
    c = s[i]
    if c == "/" and s.startswith("/*", i):
      j = s.find("*/", i + 2)
      i = len(s) if j < 0 else j + 2
      continue
    if c in "([{<":
      depth += 1
    elif c in ")]}>":
      depth -= 1
    if c == sep and depth == 0:
      parts.append("".join(cur).strip())
      cur = []
    else:
      cur.append(c)
    i += 1
  if "".join(cur).strip():
    parts.append("".join(cur).strip())
  return parts


def entry_instructions(text: str) -> List[Instruction]:
  """The instructions of the ENTRY computation, in order."""
  out, inside = [], False
  for line in text.split("\n"):
    if not inside:
      if line.startswith("ENTRY"):
        inside = True
      continue
    if line.startswith("}"):
      break
    inst = parse_instruction(line)
    if inst is not None:
      out.append(inst)
  return out


def attribute(rest: str, key: str) -> Optional[str]:
  """The raw value of `key=` in an instruction's attribute text (balanced
  braces/quotes), or None."""
  m = re.search(r"[,\s{]" + re.escape(key) + r"=", rest)
  if not m:
    return None
  i = m.end()
  if i < len(rest) and rest[i] == '"':
    j = i + 1
    while j < len(rest):
      if rest[j] == "\\":
        j += 2
        continue
      if rest[j] == '"':
        return rest[i + 1:j]
      j += 1
    return None
  if i < len(rest) and rest[i] == "{":
    depth = 0
    for j in range(i, len(rest)):
      if rest[j] == "{":
        depth += 1
      elif rest[j] == "}":
        depth -= 1
        if depth == 0:
          return rest[i:j + 1]
    return None
  m2 = re.match(r"[^,\s}]+", rest[i:])
  return m2.group(0) if m2 else None


def _operands(inst: Instruction) -> List[str]:
  """Operand names of an instruction (the first parenthesized list)."""
  depth = 0
  for j, c in enumerate(inst.rest):
    if c == "(":
      depth += 1
    elif c == ")":
      depth -= 1
      if depth == 0:
        inner = inst.rest[1:j]
        return [o.split()[-1].lstrip("%") for o in split_top_level(inner)
                if o.strip()]
  return []


# --- which route a JAX lowering takes -------------------------------------
# Custom-calls JAX wraps a shard_map body in (Shardy spellings first, then
# the GSPMD ones of older JAX).
_SHARD_MAP_GLUE_TARGETS = ("xla.sdy.GlobalToLocalShape",
                           "xla.sdy.LocalToGlobalShape",
                           "SPMDFullToShardShape", "SPMDShardToFullShape",
                           "Sharding", "xla.sdy.FuncResultSharding")
_MANUAL_BODY = re.compile(r"manual_computation_body|shmap_body|shard_map")


class RouteDecision(NamedTuple):
  route: str  # "shard_map" or "gspmd"
  reason: str


def detect_route(text: str, num_devices: int) -> RouteDecision:
  """The route for a JAX lowering (pre-partitioning text).

  shard_map: every instruction of ENTRY is glue around shard_map bodies
    (parameters, constants, tuples, the GlobalToLocalShape /
    LocalToGlobalShape custom-calls, calls of the manual bodies) and the
    bodies are manual over every mesh axis of size > 1: the collectives are
    explicit in this text, hloverlap works on it, XLA partitions nothing
    but the glue.
  gspmd: anything else on more than one device (jit shardings: XLA's SPMD
    partitioner creates the collectives, so hloverlap must work on XLA's
    partitioned module).
  One device: shard_map route (nothing to partition).
  """
  if num_devices <= 1:
    return RouteDecision("shard_map", "one device: nothing to partition")
  entry = entry_instructions(text)
  if not entry:
    return RouteDecision("gspmd", "no ENTRY computation found in the "
                         "lowering; assuming jit shardings")
  bodies, manual_axes = 0, set()
  for inst in entry:
    op = inst.opcode
    if op in ("parameter", "constant", "tuple", "get-tuple-element"):
      continue
    if op == "custom-call":
      target = attribute(inst.rest, "custom_call_target")
      if target in _SHARD_MAP_GLUE_TARGETS:
        axes = attribute(inst.rest, "xla.sdy.manual_axes")
        if axes:
          manual_axes.update(re.findall(r'\\?"([^"\\]+)\\?"', axes))
        continue
      return RouteDecision("gspmd", "ENTRY has custom-call {} outside a "
                           "shard_map body".format(target))
    if op == "call" and _MANUAL_BODY.search(
        attribute(inst.rest, "to_apply") or ""):
      bodies += 1
      continue
    return RouteDecision("gspmd", "ENTRY computes outside shard_map "
                         "bodies ({} {})".format(op, inst.name))
  if not bodies:
    return RouteDecision("gspmd", "no shard_map body in ENTRY")
  auto = sorted(a for a, n in sdy_mesh_axes(text).items()
                if n > 1 and manual_axes and a not in manual_axes)
  if auto:
    return RouteDecision("gspmd", "shard_map is manual over part of the "
                         "mesh only (automatic axes: {})".format(
                             ", ".join(auto)))
  return RouteDecision("shard_map", "every ENTRY instruction is shard_map "
                       "glue ({} manual bod{})".format(
                           bodies, "y" if bodies == 1 else "ies"))


# --- pointing at the user's code -------------------------------------------
def referenced_lines(message: str, path: Optional[str] = None) -> List[int]:
  """Line numbers of `PATH:LINE:COL` references in a diagnostic (any path
  when `path` is None, else only that file's basename)."""
  out = []
  for m in re.finditer(r"([^\s:'\"]*):(\d+):(\d+)", message or ""):
    if path is None or os.path.basename(m.group(1)) == \
        os.path.basename(path):
      out.append(int(m.group(2)))
  return out


def referenced_names(message: str) -> List[str]:
  """Instruction-like names a diagnostic mentions (`%name`, 'name',
  "name")."""
  names = re.findall(r"%([A-Za-z_][\w.\-]*)", message or "")
  names += re.findall(r"['\"]([A-Za-z_][\w.\-]*\.\d+[\w.\-]*)['\"]",
                      message or "")
  return [n.rstrip(".") for n in names]


def _tables(text: str) -> Dict[str, Dict[int, str]]:
  """XLA's dump tables (FileNames, FunctionNames, FileLocations,
  StackFrames): {table: {id: raw value}}."""
  tables: Dict[str, Dict[int, str]] = {}
  cur = None
  for line in text.split("\n"):
    if line.startswith(("ENTRY", "%")) or line.startswith("HloModule"):
      if line.startswith(("ENTRY", "%")):
        break
      continue
    s = line.strip()
    if s in ("FileNames", "FunctionNames", "FileLocations", "StackFrames"):
      cur = tables.setdefault(s, {})
      continue
    m = re.match(r"(\d+)\s+(.*)$", s)
    if cur is not None and m:
      cur[int(m.group(1))] = m.group(2)
    elif s:
      cur = None
  return tables


def instruction_source(text: str, name: str) -> Optional[str]:
  """'file:line in function' of an instruction, from its metadata
  (source_file/source_line, or stack_frame_id through XLA's dump tables)."""
  m = re.search(r"^\s*(?:ROOT\s+)?%?" + re.escape(name) + r"\s*=.*$", text,
                re.M)
  if not m:
    return None
  meta = attribute(m.group(0), "metadata") or ""
  f = re.search(r'source_file="([^"]*)"', meta)
  l = re.search(r"source_line=(\d+)", meta)
  if f and l:
    return "{}:{}".format(f.group(1), l.group(1))
  sf = re.search(r"stack_frame_id=(\d+)", meta)
  if not sf:
    return None
  t = _tables(text)
  frame = t.get("StackFrames", {}).get(int(sf.group(1)), "")
  loc_id = re.search(r"file_location_id=(\d+)", frame)
  loc = t.get("FileLocations", {}).get(int(loc_id.group(1))) if loc_id \
      else None
  if not loc:
    return None
  fid = re.search(r"file_name_id=(\d+)", loc)
  fn = re.search(r"function_name_id=(\d+)", loc)
  line = re.search(r"\bline=(\d+)", loc)
  fname = t.get("FileNames", {}).get(int(fid.group(1))) if fid else None
  func = t.get("FunctionNames", {}).get(int(fn.group(1))) if fn else None
  if not fname or not line:
    return None
  out = "{}:{}".format(fname.strip('"'), line.group(1))
  if func:
    out += " in " + func.strip('"')
  return out
