"""Runs `hloverlap explain --json` on every XLA 04/09 dump of the corpus and
prints, per file, its loops, how many have no trip count and how many the
analysis proves (an induction variable, not only known_trip_count); exits 1
when a loop's trip count is unknown (XLA's own fori_loops must be counted).

  corpus_trip_counts.py HLOVERLAP CORPUS_DIR
"""
import glob
import json
import os
import subprocess
import sys


def main():
    hloverlap, corpus = sys.argv[1], sys.argv[2]
    files = sorted(glob.glob(os.path.join(corpus, "*", "04_*.hlo")) +
                   glob.glob(os.path.join(corpus, "*", "09_*.hlo")))
    total = unknown = proven = 0
    for f in files:
        out = subprocess.run([hloverlap, "explain", "--json", "--no-pipeline",
                              f], check=True, capture_output=True).stdout
        loops = json.loads(out)["loops"]
        bad = [l["name"] for l in loops if l["trip_count"] is None]
        total += len(loops)
        unknown += len(bad)
        proven += sum(1 for l in loops if l["iv_index"] is not None)
        print("%s/%s: %d loops, %d unknown %s" %
              (os.path.basename(os.path.dirname(f)), os.path.basename(f),
               len(loops), len(bad), " ".join(bad)))
    print("files %d loops %d unknown %d proven %d" %
          (len(files), total, unknown, proven))
    return 1 if unknown or not files else 0


if __name__ == "__main__":
    sys.exit(main())
