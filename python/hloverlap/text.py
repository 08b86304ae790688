"""HLO text handling for the bridge (no JAX needed).

  parse_instruction(line)   -> Instruction(name, shape, opcode, rest) or None
  opcode_counts(text)       -> {opcode: count}
  module_name(text), header_attribute(text, key)
  device_count(text)        -> devices the module runs on (num_partitions x
                               num_replicas, else the Shardy mesh, else the
                               largest `devices=[..]<=[N]` sharding)
  route_blockers(text)      -> what the StableHLO route (ANCHORS §4) rejects
  make_route_legal(text)    -> (text, fixes): rewrites what can be rewritten
  strip_buffer_donor(text)  -> text without `buffer_donor={...}` in the header

The route: `hlo_module_from_text` -> HloModuleProto -> `hlo_to_stablehlo` ->
PJRT compile. `hlo_to_stablehlo` has no `copy` (StableHLO has no layouts on
values, so a copy is a value identity): `make_route_legal` rewrites an
array-shaped `copy(x)` into `reshape(x)` to the same dimensions (also a value
identity, which XLA's algebraic simplifier removes). What cannot be rewritten
(instructions that exist only after XLA's own optimization: fusions, async
start/done pairs, tuple-shaped copies) is reported; such modules are not
inputs of the bridge (feed it JAX's lowering).
"""

import re
from typing import Dict, List, NamedTuple, Optional, Tuple


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


# Opcodes that exist only in XLA's optimized modules; the route cannot
# take them (and the bridge never feeds them: it works on JAX's lowering).
_POST_OPT = re.compile(
    r"^(fusion|.*-start|.*-done|async-update|copy-start|copy-done)$")


class Blocker(NamedTuple):
  line: int  # 1-based
  name: str
  opcode: str
  fixable: bool
  why: str


def _array_dims(shape: str) -> Optional[str]:
  m = re.fullmatch(r"([a-z][a-z0-9]*)\[([^\]]*)\](\{[^}]*\})?", shape)
  return None if m is None else m.group(1) + "[" + m.group(2) + "]"


def route_blockers(text: str) -> List[Blocker]:
  out = []
  for i, inst in iter_instructions(text):
    if inst.opcode == "copy":
      ok = _array_dims(inst.shape) is not None
      out.append(Blocker(i + 1, inst.name, "copy", ok,
                         "StableHLO has no copy" + (
                             "" if ok else " (tuple-shaped: not rewritable)")))
    elif _POST_OPT.match(inst.opcode):
      out.append(Blocker(i + 1, inst.name, inst.opcode, False,
                         "exists only in XLA-optimized modules"))
  return out


def make_route_legal(text: str) -> Tuple[str, List[str]]:
  """Rewrites array `copy` into same-dims `reshape`; returns (text, fixes).

  Raises ValueError listing what cannot be rewritten.
  """
  blockers = route_blockers(text)
  bad = [b for b in blockers if not b.fixable]
  if bad:
    raise ValueError("module cannot go through the StableHLO route: " +
                     "; ".join("line {}: {} {} ({})".format(
                         b.line, b.opcode, b.name, b.why) for b in bad[:10]))
  if not blockers:
    return text, []
  lines = text.split("\n")
  fixes = []
  for b in blockers:
    line = lines[b.line - 1]
    inst = parse_instruction(line)
    prefix = line[:len(line) - len(inst.rest)]
    assert prefix.endswith("copy")
    lines[b.line - 1] = prefix[:-len("copy")] + "reshape" + inst.rest
    fixes.append("line {}: copy {} -> reshape (value identity)".format(
        b.line, b.name))
  return "\n".join(lines), fixes


def strip_buffer_donor(text: str) -> str:
  """Drops `buffer_donor={...}` (and input_output_alias) from the header."""
  h = _header(text)
  if not h:
    return text
  new = h
  for key in ("buffer_donor", "input_output_alias"):
    v = header_attribute(new, key)
    if v is not None:
      new = new.replace(", {}={}".format(key, v), "").replace(
          " {}={},".format(key, v), "")
  return text.replace(h, new, 1)
