"""Time the length-controlled joint fit's refusal where the quadrature cannot settle.

Where the systems win or lose instructions together (a share ``--flips`` of the
verdicts the other way, lengths at random), the instruction effect's spread τ runs to
10-15 logits, the nodes' centring of the finer rules does not settle, and the fit is
None (the GLM stands in). Ours ends the doubling at the first rule finer than the first
whose centring does not settle (``recuse.metrics.length_controlled.MAY_CYCLE``); the
baseline, timed in the same run and alternating with ours, is the doubling as it was,
every rule to 192 nodes (``MAY_CYCLE = MAX_NODES``). Both must be None.

Targets (exit status 1 when missed): both None, and ours at most 0.75x the baseline's
time over the tables (16 systems on 300 instructions, 2% and 1.5% the other way:
0.5-0.6x measured on the shared 2-core machine; on 805 instructions 0.3x, 3 s
against 10 s).

Run: python benchmarks/length_controlled_refusal.py [--instructions N] [--repeat N]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from _targets import Targets

import recuse.metrics.length_controlled as lc


def together(
    systems: int, instructions: int, flips: float, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(system, cluster, y, tl): every system wins or loses each instruction together,
    a share ``flips`` of the verdicts the other way, lengths at random (seeded)."""
    rng = np.random.default_rng(seed)
    system, cluster = (a.ravel() for a in np.meshgrid(np.arange(systems), np.arange(instructions)))
    tl = np.tanh(rng.normal(size=systems * instructions))
    y = (rng.normal(size=instructions)[cluster] > 0).astype(float)
    flip = rng.random(systems * instructions) < flips
    y[flip] = 1 - y[flip]
    return system, cluster, y, tl


def timed(tables: list[tuple[np.ndarray, ...]], may_cycle: int) -> tuple[float, bool]:
    """(seconds, every fit None) over ``tables`` with ``MAY_CYCLE = may_cycle``."""
    lc.MAY_CYCLE = may_cycle
    start = time.perf_counter()
    nones = [lc._converged_fit(*t, level=0.9) is None for t in tables]
    return time.perf_counter() - start, all(nones)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instructions", type=int, default=300, help="instructions a table")
    parser.add_argument("--repeat", type=int, default=1, help="best of N of each")
    args = parser.parse_args()
    tables = [together(16, args.instructions, 0.02, 0), together(16, args.instructions, 0.015, 1)]
    ours_as_set = lc.MAY_CYCLE
    ours = base = float("inf")
    all_none = True
    for _ in range(args.repeat):
        took, none = timed(tables, ours_as_set)
        ours, all_none = min(ours, took), all_none and none
        took, none = timed(tables, lc.MAX_NODES)  # every rule, as before
        base, all_none = min(base, took), all_none and none
    lc.MAY_CYCLE = ours_as_set
    print(
        f"2 tables of 16 systems x {args.instructions:,} instructions that win or lose them "
        f"together: refused in {ours:.2f} s, the doubling to {lc.MAX_NODES} nodes {base:.2f} s "
        f"(ratio {ours / base:.2f}); all None: {all_none}"
    )
    targets = Targets()
    targets.at_least(
        "every fit None, ours and the baseline (1 = yes)", float(all_none), 1.0, scaled=False
    )
    targets.at_most("refusal / doubling every rule", ours / base, 0.75, "x", scaled=True)
    targets.finish()
    return 0


if __name__ == "__main__":
    sys.exit(main())
