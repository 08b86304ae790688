"""hloverlap from Python: run the `hloverlap` tool on HLO text and hand the
result back to XLA from JAX.

Pure Python; the tool itself is the `hloverlap` binary. `pip install .`
(pyproject.toml) builds it with CMake and installs it inside the package,
with the `hloverlap` command on PATH; from a source tree
(PYTHONPATH=python) the binary is found through `Options.binary`, the
environment variable `HLOVERLAP_BIN` or `PATH` (see `hloverlap.binary`).

    import hloverlap.jax as hjax
    step = hjax.jit(train_step, options=hloverlap.Options(
        loops=["outermost:pipeline=off"], remarks="remarks.json"))
    loss, params = step(params, batch)

Modules:
  options  -- `Options` (preset, per-loop policies, memory budget, remarks)
              and the mapping to `hloverlap opt` arguments;
  binary   -- finding and running the binary (`run_opt`);
  text     -- HLO text reading (header facts, route detection, diagnostics);
  xla      -- XLA compile-option overrides (XLA's own pipelining off);
  gspmd    -- the GSPMD route: XLA's dump stages, the partitioning passes;
  errors   -- BridgeError / BridgeFallbackWarning (name the user's code);
  jax      -- the JAX entry points (`jit`, `compile`); imports jax lazily.
"""

from hloverlap.options import Options, OptionsError
from hloverlap.binary import (HloverlapError, BinaryNotFoundError, find_binary,
                              run_opt, OptResult)
from hloverlap import text
from hloverlap import xla
from hloverlap import gspmd
from hloverlap import errors
from hloverlap.errors import BridgeError, BridgeFallbackWarning

__all__ = [
    "Options", "OptionsError", "HloverlapError", "BinaryNotFoundError",
    "find_binary", "run_opt", "OptResult", "text", "xla", "gspmd", "errors",
    "BridgeError", "BridgeFallbackWarning",
]
from hloverlap._version import __version__
