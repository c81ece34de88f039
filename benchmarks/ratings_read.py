"""Time reading a large ratings CSV through the public door against a bare pandas read.

A simulated ratings table (``recuse.simulate.ratings``: 5 judges rating 5 models' answers
in 4 dimensions, 1% of the ratings unparsed with their status; ``--rows``, default
960,000, rounded down to whole prompts of 100 rows) is written to a CSV file, then read
by ``recuse.data.inputs.load_input`` (what ``recuse audit`` and ``recuse validate`` do
with a file: the text-first reader, its CSV scan, missing-value texts, model names and
every check of ``validate_ratings``) and, timed in the same run, by the baseline: a
bare ``pandas.read_csv`` of the same file plus a dtype check (the rating, reference and
length columns numbers, the id columns there and filled).

Target (exit status 1 when missed): ``load_input`` at most ``RATIO_TARGET`` times the
baseline (docs/benchmarks.md gives the measured ratios and why the reader costs what it
costs). Each time is the CPU time (this process's, not the wall clock: on a machine
shared with other work the bare read's 0.07-0.13 s moved the wall-clock ratio from 15x
to 27x), the best of ``--repeat``, the garbage collector paused in the timed parts; the
table read is checked to hold every row.

Run: python benchmarks/ratings_read.py [--rows N] [--repeat N]
"""

from __future__ import annotations

import argparse
import gc
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import pandas as pd
from _targets import Targets
from _timing import one_thread

from recuse.data.inputs import Input, load_input
from recuse.simulate.ratings import simulate_ratings

#: load_input at most this many times the bare read plus dtype check: the worst of three
#: runs at 960,000 rows on the loaded 2-core machine, 13.0x (2026-12-01), plus 25%
RATIO_TARGET = 16.0
ROWS_PER_PROMPT = 100  # 5 models x 5 judges x 4 dimensions
IDS = ("prompt_id", "model", "dimension", "judge")
NUMBERS = ("rating", "reference", "length")


def write_table(path: Path, rows: int) -> int:
    """Write the simulated ratings CSV of about ``rows`` rows; returns its row count."""
    sim = simulate_ratings(
        n_prompts=max(1, rows // ROWS_PER_PROMPT),
        dimensions=("d1", "d2", "d3", "d4"),
        unparsed=0.01,
        seed=1,
    )
    sim.ratings.to_csv(path, index=False)
    return len(sim.ratings)


def bare(path: Path) -> pd.DataFrame:
    """``pandas.read_csv`` and a dtype check: the floor any checked reader stands on."""
    df = pd.read_csv(path)
    for name in NUMBERS:
        if not pd.api.types.is_float_dtype(df[name]):
            raise SystemExit(f"{name} read as {df[name].dtype}, not numbers")
    if df[list(IDS)].isna().any().any():
        raise SystemExit("an id column has an empty cell")
    return df


def best(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    """The least CPU time of ``repeat`` calls of ``fn`` (garbage collector paused), and
    the last result."""
    times, out = [], None
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            start = time.process_time()
            out = fn()
            times.append(time.process_time() - start)
        finally:
            gc.enable()
    return min(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=960_000, help="rows of the ratings file")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many timings")
    args = parser.parse_args()
    one_thread()  # CPU seconds are the work of one thread (benchmarks/_timing.py)
    targets = Targets()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ratings.csv"
        n = write_table(path, args.rows)
        print(f"ratings file: {n:,} rows, {path.stat().st_size / 1e6:.1f} MB")
        base, _ = best(lambda: bare(path), args.repeat)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the roster's note on the simulated names
            ours, inp = best(lambda: load_input(path), args.repeat)
    if not isinstance(inp, Input) or inp.table != "ratings" or len(inp.frame) != n:
        raise SystemExit(f"load_input did not read the {n:,} ratings rows")
    print(f"pandas.read_csv + dtype check: {base:.3f} s CPU (best of {args.repeat})")
    print(f"load_input (reader and every check): {ours:.3f} s CPU (best of {args.repeat})")
    targets.at_most("load_input / bare read", ours / base, RATIO_TARGET, "x", scaled=True)
    targets.finish()


if __name__ == "__main__":
    main()
