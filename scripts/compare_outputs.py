#!/usr/bin/env python3
"""Compares two record_outputs.sh directories, file by file, byte for byte
(the record directory's own path, which the remarks summary prints, is
replaced by DIR first; the checkout's own folder name, which leads the
names of files recorded from tests/ and examples/, is ignored, so records made
in two worktrees compare). Prints the files that differ or exist on one
side only; exit status 1 if any.

  bash scripts/record_outputs.sh /tmp/before build-old/hloverlap
  bash scripts/record_outputs.sh /tmp/after build/hloverlap
  python3 scripts/compare_outputs.py /tmp/before /tmp/after
"""
import os
import sys


def _by_key(folder):
  """Maps each recorded file's name, less the checkout folder that leads it
  (inputs from ../shared keep their 'shared_' lead), to its path."""
  keyed = {}
  for name in os.listdir(folder):
    lead, _, rest = name.partition("_")
    key = name if lead == "shared" or not rest else "CHECKOUT_" + rest
    keyed[key] = os.path.join(folder, name)
  return keyed


def _normalized(path, folder):
  """The file's bytes with the record folder's path, and the checkout name
  that leads the names in it, replaced (the summary names its remarks
  file)."""
  text = open(path, "rb").read()
  lead = os.path.basename(path).partition("_")[0]
  if lead != "shared":
    text = text.replace(os.fsencode(os.path.join(folder, lead + "_")),
                        b"DIR/CHECKOUT_")
  return text.replace(os.fsencode(folder), b"DIR")


def main(old, new):
  olds, news = _by_key(old), _by_key(new)
  names = sorted(set(olds) | set(news))
  bad = 0
  for name in names:
    a, b = olds.get(name, ""), news.get(name, "")
    if not (os.path.exists(a) and os.path.exists(b)):
      print("only in {}: {}".format(old if os.path.exists(a) else new, name))
      bad += 1
      continue
    ta = _normalized(a, old)
    tb = _normalized(b, new)
    if ta != tb:
      print("differs: " + name)
      bad += 1
  print("{} files compared, {} differ".format(len(names), bad))
  return 1 if bad else 0


if __name__ == "__main__":
  if len(sys.argv) != 3:
    sys.exit(__doc__)
  sys.exit(main(os.path.abspath(sys.argv[1]).rstrip("/"),
                os.path.abspath(sys.argv[2]).rstrip("/")))
