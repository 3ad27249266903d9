"""``python -m crosscheck``: gradviz beside TensorFlow, case by case.

    python -m crosscheck                 # the seeded run CI makes (the same cases each time)
    python -m crosscheck --fresh         # new random programs (prints the seed to repeat them)
    python -m crosscheck --show 17       # program 17: what it does and what each library gives

Needs TensorFlow importable, and gradviz (run from the repository, or installed).
``make crosscheck`` makes a virtual environment with the pinned TensorFlow and runs it.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# TensorFlow's own CPU kernels, not oneDNN's: on CPUs with AVX-512 and bfloat16
# (Sapphire Rapids), oneDNN's graph rewrite (mkl_layout_pass) reads a pool's ksize of
# 2**31 with a CHECK that aborts the whole process, once a pool has run in a graph,
# where TensorFlow's kernels raise InvalidArgumentError.  The semantics compared here
# are the same either way; only the rounding of a sum may differ, within tolerance.
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

from . import edges, errors, forward, programs  # noqa: E402
from .deliberate import DELIBERATE, reason_for  # noqa: E402
from .outcome import compare  # noqa: E402

#: the seed of the run CI makes
SEED = 2026
#: programs in that run
PROGRAMS = 2000
#: of those, the first ones also run forward (ForwardAccumulator), which in TensorFlow
#: takes some 1.5 s a program (it traces a function per op and shape)
FORWARD_PROGRAMS = 24

Case = tuple[str, Callable[[Any], list], float]  # name, run in a library, tolerance floor


def _program_cases(seed: int, count: int) -> Iterator[Case]:
    for k in range(count):
        prog = programs.program(seed, k)
        yield (f"program {k}", lambda lib, prog=prog: programs.run(lib, prog),
               programs.tolerance_floor(prog))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m crosscheck", description=__doc__.split(
        "\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=SEED, help=f"the programs' seed ({SEED})")
    parser.add_argument("--programs", type=int, default=PROGRAMS,
                        help=f"how many random programs ({PROGRAMS})")
    parser.add_argument("--fresh", action="store_true", help="a new seed, printed")
    parser.add_argument("--only", metavar="TEXT",
                        help="only the cases whose name holds TEXT (e.g. 'einsum'), no programs")
    parser.add_argument("--show", type=int, metavar="K",
                        help="print program K and what each library gives, then stop")
    args = parser.parse_args(argv)
    if args.programs < 0:
        parser.error(f"--programs must be 0 or more, got {args.programs}")
    seed = random.SystemRandom().randrange(2**31) if args.fresh else args.seed

    import tensorflow as tf
    tf.get_logger().setLevel("ERROR")
    import gradviz as gv
    warnings.simplefilter("ignore")  # both libraries warn on purpose in these programs

    if args.show is not None:
        prog = programs.program(seed, args.show)
        print(programs.describe(prog))
        for name, lib in (("gradviz", gv), ("TensorFlow", tf)):
            print(f"--- {name}")
            for label, value in programs.run(lib, prog):
                print(f"  {label}: {value!r}".replace("\n", " "))
        floor = programs.tolerance_floor(prog)
        print(f"--- {compare(programs.run(gv, prog), programs.run(tf, prog), floor) or 'agree'}")
        return 0

    print(f"crosscheck: TensorFlow {tf.__version__} beside gradviz, programs seeded {seed}")
    sections: list[tuple[str, Iterator[Case]]] = [
        ("programs", _program_cases(seed, args.programs)),
        ("edges", edges.cases()),
        ("tape", edges.tape_cases()),
        ("errors", errors.cases()),
        ("forward", forward.cases()),
        ("forward edges", forward.op_cases()),
        ("forward programs", forward.program_cases(seed, min(args.programs, FORWARD_PROGRAMS))),
        ("forward errors", forward.error_cases()),
    ]
    if args.only is not None:
        sections = [(section, (c for c in cases if args.only in c[0]))
                    for section, cases in sections if not section.endswith("programs")]
    agree = 0
    listed: list[tuple[str, str, str]] = []  # (case, what, reason): deliberate differences
    failures: list[tuple[str, str]] = []  # (case, what)
    used: set[int] = set()  # the entries of DELIBERATE that a difference needed
    for section, cases in sections:
        start, counts = time.perf_counter(), Counter()
        for name, case, floor in cases:
            name = f"{section}: {name}"
            diffs = compare(case(gv), case(tf), floor)
            if not diffs:
                agree += 1
                counts["agree"] += 1
                continue
            entries = [reason_for(name, label, key) for label, key, _ in diffs]
            unlisted = [what for (_, _, what), e in zip(diffs, entries) if e is None]
            if unlisted:
                failures.extend((name, what) for what in unlisted)
                counts["differ"] += 1
            else:
                used.update(id(e) for e in entries)
                listed.append((name, diffs[0][2], entries[0].reason))
                counts["deliberate"] += 1
        print(f"  {section}: {counts['agree']} agree, {counts['differ']} differ"
              f"{', %d as listed' % counts['deliberate'] if counts['deliberate'] else ''}"
              f" ({time.perf_counter() - start:.0f} s)")
    by_reason: dict[str, list[tuple[str, str]]] = {}
    for name, what, reason in listed:
        by_reason.setdefault(reason, []).append((name, what))
    for reason, found in by_reason.items():
        print(f"deliberate, {len(found)} case{'s' if len(found) > 1 else ''}: {reason}")
        for name, what in found[:3]:
            print(f"    {name}: {what[:160]}")
        if len(found) > 3:
            print(f"    and {len(found) - 3} more: " + ", ".join(
                n.split(": ", 1)[1] for n, _ in found[3:]))
    for name, what in failures:
        print(f"DIFFERS: {name}: {what}")
    whole = args.programs == PROGRAMS and seed == SEED and args.only is None
    stale = [d for d in DELIBERATE if id(d) not in used] if whole else []
    for d in stale:
        print(f"STALE: the list of deliberate differences names {d.case} ({d.key}), which now "
              "agrees or was not run: remove it from crosscheck/deliberate.py")
    differ = len(listed) + len({name for name, _ in failures})
    total = agree + differ
    print(f"crosscheck: {agree} agree, {differ} differ of {total}"
          f" ({len(listed)} of them deliberate, listed above with their reasons)")
    if failures and seed != SEED:
        print(f"repeat with: python -m crosscheck --seed {seed}")
    return 1 if failures or stale else 0


if __name__ == "__main__":
    sys.exit(main())
