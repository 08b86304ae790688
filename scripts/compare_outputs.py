#!/usr/bin/env python3
"""Compares two record_outputs.sh directories, file by file, byte for byte
(the record directory's own path, which the remarks summary prints, is
replaced by OLD/NEW first). Prints the files that differ or exist on one
side only; exit status 1 if any.

  bash scripts/record_outputs.sh /tmp/before build-old/hloverlap
  bash scripts/record_outputs.sh /tmp/after build/hloverlap
  python3 scripts/compare_outputs.py /tmp/before /tmp/after
"""
import os
import sys


def main(old, new):
  names = sorted(set(os.listdir(old)) | set(os.listdir(new)))
  bad = 0
  for name in names:
    a, b = os.path.join(old, name), os.path.join(new, name)
    if not (os.path.exists(a) and os.path.exists(b)):
      print("only in {}: {}".format(old if os.path.exists(a) else new, name))
      bad += 1
      continue
    ta = open(a, "rb").read().replace(os.fsencode(old), b"DIR")
    tb = open(b, "rb").read().replace(os.fsencode(new), b"DIR")
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
