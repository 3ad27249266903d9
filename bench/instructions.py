"""Engine cost in CPU instructions: a measure that other work on the machine cannot blur.

On a small machine shared with other work, ``bench/engine.py``'s timings
move by 20% or more from run to run, more than most changes to the engine
are worth.  Instructions, counted by valgrind's callgrind, come out the same
on every run of the same code, so this script tells whether a change made
the engine cheaper, by how much, and where (forward or backward):

    python bench/instructions.py          # a few minutes

It runs each workload of ``bench/engine.py`` in a fresh interpreter under
callgrind, once with one iteration and once with ``1 + N``, and prints the
difference divided by N: the instructions of one iteration, imports and
warm-up excluded.  It also prints where they ran, by the file of their code:
the Python interpreter (the engine's bookkeeping, and the little Python a
hand-written version has), NumPy and BLAS (the arithmetic), the C library.
Instructions are not time (a cache miss costs more than an add), so the
targets stay in ``bench/engine.py``; this is the ruler for
comparing two versions of the engine.  Needs valgrind (Debian: ``apt-get
install valgrind``); without it the script says so and exits 0.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from _table import print_table
from engine import ENGINE_OPS

ROOT = Path(__file__).resolve().parents[1]
N = 5  # iterations measured, after one to warm up

#: workload -> the bench/engine.py function that runs one iteration of it
WORKLOADS = {
    "chain, hand-written NumPy": "chain_numpy",
    "chain, gradviz forward only": "chain_gradviz_loss",
    "chain, gradviz forward + backward": "chain_gradviz",
    "chain, gradviz forward + backward, no lines of code": "chain_gradviz_unsourced",
    "MLP, hand-written NumPy": "mlp_numpy",
    "MLP, gradviz forward + backward": "mlp_gradviz",
    "block, hand-written NumPy": "block_numpy",
    "block, gradviz forward + backward": "block_gradviz",
}

_RUN = """
import gc, sys
sys.path.insert(0, {bench!r})
import engine
fn = getattr(engine, {fn!r})
gc.disable()
for _ in range(1 + {n}):
    fn()
"""


#: where an instruction ran, by the file its code is in (the first that matches names it)
PLACES = [("BLAS", "openblas"), ("NumPy", "/numpy/"), ("Python interpreter", "python"),
          ("C library", "/libc."), ("C library", "/libm.")]
OTHER = "other"
#: a line of callgrind_annotate's table: instructions, share, file:function [object file]
_LINE = re.compile(r"\s*([\d,]+) \([ \d.]+%\)\s+(\S.*?)(?:\[(.+)\])?\s*$")


def instructions(fn: str, n: int) -> Counter[str]:
    """Instructions callgrind counts for a fresh interpreter that runs ``fn`` 1 + n times:
    in all (``"total"``), and by where they ran (the names of PLACES, and OTHER)."""
    # a fixed hash seed: dict and set layouts, and so the count, are the same every run
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               PYTHONHASHSEED="0", PYTHONPATH=str(ROOT))
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "callgrind.out"
        out = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={data}", sys.executable,
             "-c", _RUN.format(bench=str(ROOT / "bench"), fn=fn, n=n)],
            capture_output=True, text=True, env=env, check=False)
        found = re.search(r"Collected : (\d+)", out.stderr)
        if out.returncode or not found:
            raise RuntimeError(f"callgrind run of {fn} failed (exit {out.returncode}):\n"
                               f"{out.stderr[-2000:]}")
        table = subprocess.run(["callgrind_annotate", "--threshold=100", str(data)],
                               capture_output=True, text=True, check=True).stdout
    counts: Counter[str] = Counter(total=int(found.group(1)))
    for line in table.splitlines():
        row = _LINE.match(line)
        if row and row[2] != "PROGRAM TOTALS":
            where = f"{row[2]} {row[3] or ''}".lower()  # (the object file is not always said)
            place = next((name for name, part in PLACES if part in where), OTHER)
            counts[place] += int(row[1].replace(",", ""))
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("instructions: valgrind is not installed, so nothing was counted "
              "(Debian: apt-get install valgrind)")
        return 0
    split = {}
    for name, fn in WORKLOADS.items():
        more, less = instructions(fn, N), instructions(fn, 0)
        split[name] = {place: (more[place] - less[place]) / N for place in more}
    per = {name: counts["total"] for name, counts in split.items()}
    def ratio(name: str) -> str:  # a whole iteration against NumPy's
        numpy = per[name.split(",")[0] + ", hand-written NumPy"]
        return "" if "only" in name else f"{per[name] / numpy:.2f}"

    print_table(["workload", "instructions per iteration\n(millions)", "/ NumPy's"],
                [[name, f"{count / 1e6:.2f}", ratio(name)] for name, count in per.items()],
                title=f"gradviz engine in CPU instructions (callgrind; the same every run), "
                      f"one iteration of {N}")
    chain = per["chain, gradviz forward + backward"] - per["chain, hand-written NumPy"]
    forward = per["chain, gradviz forward only"]
    places = list(dict.fromkeys([name for name, _ in PLACES] + [OTHER]))
    print()
    print_table(["workload", *(place.replace(" ", "\n") for place in places)],
                [[name, *(f"{split[name].get(place, 0) / 1e6:.2f}" for place in places)]
                 for name in WORKLOADS if "only" not in name],
                title="where one iteration's instructions run (millions): the interpreter "
                      "is the engine's bookkeeping, NumPy and BLAS the arithmetic")
    print()
    sourcing = (per["chain, gradviz forward + backward"]
                - per["chain, gradviz forward + backward, no lines of code"])
    print(f"instructions: the chain's engine overhead is {chain / ENGINE_OPS:,.0f} instructions "
          f"per engine op; its forward pass alone is {forward / 1e6:.1f} million, the backward "
          f"{(per['chain, gradviz forward + backward'] - forward) / 1e6:.1f} million; "
          f"recording each op's line of code (gv.record_source) takes {sourcing / ENGINE_OPS:,.0f} "
          "of them")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
