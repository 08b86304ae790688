# Run on a machine with jaxlib; expects printed files under .device/printed/ (see docs/BENCHMARKS.md).
"""Does jaxlib's HLO parser accept hloverlap's printed corpus files? Also times
XLA's parser on the originals and the printed versions."""
import glob, json, os, sys, time
import jaxlib._hlo as jh
rows = []
# Usage: python3 bench/xla_accepts_printed.py [FILE...]  (default: .device/printed)
files = sys.argv[1:] or (sorted(glob.glob(".device/printed/*/*.hlo")) +
                         [".device/printed/seed_pipelined.hlo"])
for f in files:
    if not os.path.exists(f):
        continue
    txt = open(f).read()
    row = {"file": f.replace(".device/printed/", ""), "bytes": len(txt)}
    try:
        t0 = time.perf_counter(); m = jh.hlo_module_from_text(txt); row["xla_parse_ms"] = round(1e3 * (time.perf_counter() - t0), 2)
        row["accepted"] = True
    except Exception as e:
        row["accepted"] = False; row["error"] = repr(e)[:400]
    rows.append(row)
    print(json.dumps(row), flush=True)
ok = sum(r["accepted"] for r in rows)
print(f"ACCEPTED {ok} / {len(rows)}")
json.dump(rows, open(os.environ.get("OUT", "/tmp") + "/accept.json", "w"), indent=1)
sys.exit(0 if ok == len(rows) else 1)
