"""Corpus modules at FSDP width 4 and 8, compiled on a machine with fewer GPUs.

XLA:GPU compiles an SPMD program for N devices only when the client has N
devices. JAX's mock GPU client (config `mock_num_gpu_processes=N`: N
processes of one GPU each, NCCL mocked) gives it N devices on a host with
one real GPU, so the compile, and the dump of every stage, is the real
XLA:GPU pipeline at width N. Nothing is run: a mocked program's numbers
mean nothing (issue 8 keeps timing for a machine with N real GPUs).

  python3 bench/make_wide_corpus.py CORPUS_PY OUT_DIR [WIDTH ...]

CORPUS_PY is ../shared/experiments/corpus.py (copied next to the repository
for the device machine); its `build` makes the models. For each width and
case, OUT_DIR/<case>_w<N>/ gets the dumped stages named as in
../shared/corpus/ (00, 02, 03, 04, 09) and ABOUT.txt; OUT_DIR/wide.json
records each compile (its rc, wall time, and the mock config used).
"""
import glob
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time

# Small cases, as corpus.py's: small enough to interpret on a CPU.
SMALL = dict(layers=4, d=256, heads=4, seq=64, mb=2, accum=4, run=False)
CASES = {
    "seed_gspmd_fsdp_accum": dict(SMALL, mode="gspmd", par="fsdp"),
    "shardmap_fsdp_accum": dict(SMALL, mode="shardmap", par="fsdp"),
}
# Dump file name pieces -> corpus stage names.
STAGES = [
    ("before_optimizations.txt", "01_before_optimizations.hlo"),
    ("after_spmd-partitioning.", "02_after_spmd_partitioner.hlo"),
    ("before_collective-pipeliner-forward.", "03_before_collective_pipeliner.hlo"),
    # After the last of XLA's pipeliner runs (forward, backward, forward).
    ("after_collective-pipeliner-", "04_after_collective_pipeliner.hlo"),
    ("gpu_after_optimizations.txt", "09_after_optimizations.hlo"),
]


def load_corpus(path):
    spec = importlib.util.spec_from_file_location("corpus", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def child(corpus_py, cfg_json):
    """Runs in a fresh process whose JAX config (env) mocks N GPUs."""
    import jax
    n = int(os.environ["WIDE_N"])
    # One mocked process per device, NCCL mocked (JAX's GPU plugin).
    jax.config.update("mock_num_gpu_processes", n)
    if len(jax.devices()) != n:
        raise SystemExit(f"mock client gave {len(jax.devices())} devices, "
                         f"not {n}")
    # Placing data on mocked devices of other processes is not possible
    # (nor needed: only the compile is wanted), so the model's arrays become
    # abstract values with the same shapes, types and shardings.
    jax.device_put = lambda v, sharding: jax.ShapeDtypeStruct(
        v.shape, v.dtype, sharding=sharding)
    corpus = load_corpus(corpus_py)
    cfg = json.loads(cfg_json)
    step, params, x = corpus.build(cfg)
    lowered = step.lower(params, x)
    open(cfg["save_hlo"], "w").write(lowered.as_text(dialect="hlo"))
    lowered.compile()
    print("RESULT " + json.dumps({"devices": len(jax.devices()),
                                  "kind": jax.devices()[0].device_kind}))


def pick(dump_dir, piece):
    files = sorted(f for f in glob.glob(os.path.join(dump_dir, "*.txt"))
                   if "jit_train_step" in f and piece in f)
    # Several matches (a pass run more than once): the first is the stage,
    # except for the pipeliner's output, which is after its last run.
    if not files:
        return None
    return files[-1] if piece.startswith("after_collective-pipeliner") else files[0]


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        child(sys.argv[2], sys.argv[3])
        return
    corpus_py, out = sys.argv[1], sys.argv[2]
    widths = [int(w) for w in sys.argv[3:]] or [4, 8]
    timeout = int(os.environ.get("WIDE_TIMEOUT", "300"))
    corpus = load_corpus(corpus_py)
    records = []
    for n in widths:
        for name, cfg in CASES.items():
            case = f"{name}_w{n}"
            dump = f"/tmp/wide/{case}"
            dest = os.path.join(out, case)
            shutil.rmtree(dump, ignore_errors=True)
            os.makedirs(dest, exist_ok=True)
            flags = list(corpus.FLAGS_PIPE) + [
                f"--xla_dump_to={dump}", "--xla_dump_hlo_as_text",
                corpus.PASS_RE,
                # Autotuning shared across processes waits for the mocked
                # ones forever; it does not change the HLO stages we keep.
                "--xla_gpu_shard_autotuning=false",
                "--xla_gpu_autotune_level=0"]
            env = {**os.environ, "XLA_FLAGS": " ".join(flags),
                   "WIDE_N": str(n)}
            t0 = time.time()
            rec = {"case": case, "width": n}
            try:
                r = subprocess.run(
                    [sys.executable, __file__, "child", corpus_py,
                     json.dumps({**cfg, "save_hlo": os.path.join(
                         dest, "00_jax_lowered.hlo")})],
                    env=env, capture_output=True, text=True, timeout=timeout)
                rec["rc"] = r.returncode
                res = [l for l in r.stdout.splitlines()
                       if l.startswith("RESULT ")]
                if res:
                    rec.update(json.loads(res[-1][7:]))
                if r.returncode:
                    rec["stderr_tail"] = r.stderr[-3000:]
            except subprocess.TimeoutExpired:
                rec["rc"] = "timeout"
            rec["wall_s"] = round(time.time() - t0, 1)
            stages = {}
            for piece, fname in STAGES:
                f = pick(dump, piece)
                if f:
                    shutil.copy(f, os.path.join(dest, fname))
                    stages[fname] = os.path.basename(f)
            rec["stages"] = stages
            rec["dump_files"] = sorted(os.path.basename(f) for f in
                                       glob.glob(dump + "/*jit_train_step*"))
            with open(os.path.join(dest, "ABOUT.txt"), "w") as about:
                about.write(
                    f"{name} at FSDP width {n}: {json.dumps(cfg)}\n"
                    f"Compiled by XLA:GPU (JAX {_jax_version()}) for {n} "
                    "devices through JAX's mock GPU client on a host with "
                    "one H200; the same XLA flags as ../shared/corpus "
                    "(pipelined collectives, double buffering, latency "
                    "hiding scheduler). Autotuning off (shared autotuning "
                    "waits for the mocked processes; it picks kernels after "
                    "stage 04). Not run.\n")
            records.append(rec)
            print(json.dumps(rec)[:3000], flush=True)
    with open(os.path.join(out, "wide.json"), "w") as f:
        json.dump(records, f, indent=1)


def _jax_version():
    try:
        import jax
        return jax.__version__
    except ImportError:
        return "?"


if __name__ == "__main__":
    main()
