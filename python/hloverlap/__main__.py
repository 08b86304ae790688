"""`hloverlap` on the command line of an installed package (the console
script pip writes, or `python -m hloverlap`): runs the binary installed
inside the package with the same arguments, in place of this process, so
exit status, signals and output are the binary's own.

Only the packaged binary or HLOVERLAP_BIN are used, never PATH: the
`hloverlap` on PATH may be this very script.
"""

import os
import sys

from hloverlap import binary


def main() -> None:
  exe = os.environ.get(binary.ENV_VAR) or binary.packaged_binary()
  if not exe:
    sys.stderr.write(
        "hloverlap: the package has no binary (hloverlap/_bin/hloverlap): "
        "reinstall it with `pip install .` from a source tree, or set {} "
        "to a built binary\n".format(binary.ENV_VAR))
    sys.exit(2)
  try:
    os.execv(exe, [exe] + sys.argv[1:])
  except OSError as e:
    sys.stderr.write("hloverlap: cannot run {}: {}\n".format(exe, e))
    sys.exit(2)


if __name__ == "__main__":
  main()
