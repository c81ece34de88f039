"""Time loading every registered dataset into its validated evidence table.

Data: $RECUSE_DATA_DIR, else ../shared/data next to the repository. Target (exit
status 1 when missed): all readers together at most 8x the baseline below, timed in
the same run (5.1x measured on a loaded 2-core machine).

Baseline, timed in the same run: parsing the same folders' data files with nothing
but the standard parsers (json / gzip / pandas.read_csv), i.e. the I/O and parsing
floor with no splitting, joining, canonicalising or validation. The ratio
reader / baseline shows the cost of our processing on top of parsing. (The baseline
parses every data file in the folders the dataset uses, including some a reader
skips, so it can exceed the reader's own parsing.)

A plain pairs file (``--file-rows``, default 200,000 rows of a simulated table with
its answers' texts, 1% of its labels the text 'NA'; 0 leaves it out): ``load_input`` on
the CSV against ``pandas.read_csv`` of it (target: at most 8x), and the time spent
reading its cells for missing-value texts (``recuse.tables.read_missing_texts``) against
one such pass over the parsed file's columns, timed in the same run (target: at most
1.5x: a reader that reads the columns twice, as validation did before it was told which
the reader had read, measures about 2x). And the file's cells read as text
(``recuse.data.delimited._read_texts``, every column as ``dtype=str`` gives it) against
``pandas.read_csv(dtype=str)`` of the same bytes, as the reader read them before (target:
at most 0.6x; 0.20x measured at 200,000 rows, 0.43-0.47x at 20,000: pandas builds
the columns it finds to be text in Arrow directly, and those it is told are text
through Python strings). The plain file's parts are timed in CPU seconds, the least of
5 rounds (``file_case``).

Run: python benchmarks/load_all.py [--repeat N] [--file-rows N]
"""

from __future__ import annotations

import argparse
import gc
import gzip
import json
import os
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
from _targets import Targets
from _timing import one_thread
from numpy.typing import NDArray

import recuse.tables
from recuse.data import delimited, fetch, registry
from recuse.data.inputs import load_input
from recuse.data.table_files import read_frame
from recuse.roster import Roster
from recuse.simulate.pairs import simulate_pairs

REPO = Path(__file__).resolve().parents[1]


def data_dir() -> Path:
    env = os.environ.get(registry.DATA_DIR_ENV)
    return Path(env) if env else REPO.parent / "shared" / "data"


def parse_only(path: Path) -> int:
    """Parse one file with the plain parser for its type; returns a record count."""
    name = path.name
    if name.endswith(".jsonl.gz"):
        with gzip.open(path, "rt", encoding="utf-8") as f:
            return sum(1 for line in f if line.strip() and json.loads(line) is not None)
    if name.endswith(".jsonl"):
        with path.open(encoding="utf-8") as f:
            return sum(1 for line in f if line.strip() and json.loads(line) is not None)
    if name.endswith(".json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        return len(data) if isinstance(data, list) else 1
    if name.endswith(".csv"):
        return len(pd.read_csv(path))
    return 0  # README, LICENSE: not data


def baseline(name: str, root: Path) -> float:
    start = time.perf_counter()
    for f in fetch.files_for(name):
        parse_only(f.target(root))
    return time.perf_counter() - start


def best_of(repeat: int, fn: object, *args: object) -> tuple[float, object]:
    best, value = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn(*args)  # type: ignore[operator]
        best = min(best, time.perf_counter() - start)
    return best, value


def pairs_file(rows: int, folder: Path) -> Path:
    """A simulated pairs CSV of ``rows`` rows (two judges per item), with texts, 1% of
    its labels written 'NA' (read as missing, with a note)."""
    sim = simulate_pairs(n_prompts=max(rows // 2, 1), pairs_per_prompt=1, texts=True,
                         mean_words=20, seed=3)  # fmt: skip
    table = sim.pairs.drop(columns=["p_a"])
    human = table["human"].astype(object)
    human[np.random.default_rng(0).random(len(table)) < 0.01] = "NA"
    path = folder / "pairs.csv"
    table.assign(human=human).to_csv(path, index=False)
    return path


class TextsTimer:
    """Seconds spent in :func:`recuse.tables._missing_texts_in` (one column's pass of
    ``read_missing_texts``) while installed, and the columns it read."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.columns: list[str] = []
        self._real: Callable[[pd.Series], NDArray[np.bool_]] = recuse.tables._missing_texts_in

    def __enter__(self) -> TextsTimer:
        def timed(s: pd.Series) -> NDArray[np.bool_]:
            start = time.process_time()
            try:
                return self._real(s)
            finally:
                self.seconds += time.process_time() - start
                self.columns.append(str(s.name))

        setattr(recuse.tables, "_missing_texts_in", timed)  # noqa: B010 (a function: mypy)
        return self

    def __exit__(self, *exc: object) -> None:
        setattr(recuse.tables, "_missing_texts_in", self._real)  # noqa: B010


def file_case(rows: int, repeat: int, targets: Targets) -> None:
    """Time reading one plain pairs file (see the module docstring): each time the least
    CPU seconds of this process over ``repeat`` rounds, the parts in turns within a round,
    with the garbage collector paused in the timed parts (a full collection landing in
    one of them moved its time 3x on a loaded machine). CPU seconds: every part is
    pandas' C reader and Python on this one thread, and the parts of 0.01-0.05 s at
    20,000 rows moved with the machine's load by the wall clock (the text read 0.55x
    ``dtype=str``'s at load 5 against 0.39-0.47x, target 0.6x)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = pairs_file(rows, Path(tmp))
        warnings.simplefilter("ignore")  # the 'NA' note, each time
        t_reader = t_texts = t_parse = t_once = t_text = t_str = float("inf")
        body = path.read_bytes()
        columns: list[str] = []
        for _ in range(repeat):
            gc.collect()
            gc.disable()
            try:
                with TextsTimer() as timer:
                    start = time.process_time()
                    load_input(path)
                    t_reader = min(t_reader, time.process_time() - start)
                t_texts, columns = min(t_texts, timer.seconds), timer.columns
                start = time.process_time()
                pd.read_csv(path)
                t_parse = min(t_parse, time.process_time() - start)
                frame = read_frame(path)  # the cells the reader reads: one pass over them
                start = time.process_time()
                recuse.tables.read_missing_texts(frame, recuse.tables.PAIRS.names)
                t_once = min(t_once, time.process_time() - start)
                start = time.process_time()
                delimited._read_texts(body, ",")
                t_text = min(t_text, time.process_time() - start)
                start = time.process_time()
                delimited._parse(body, ",", dtype=str)
                t_str = min(t_str, time.process_time() - start)
            finally:
                gc.enable()
    passes, distinct = len(columns), len(set(columns))
    print(
        f"\nplain pairs file, {rows:,} rows, least CPU seconds of {repeat}: "
        f"load_input {t_reader:.2f} s, "
        f"pandas.read_csv {t_parse:.2f} s (ratio {t_reader / t_parse:.2f}); missing-value "
        f"texts read in {t_texts:.3f} s, {passes} column passes over {distinct} columns; "
        f"one pass over them {t_once:.3f} s (ratio {t_texts / t_once:.2f}); cells read "
        f"as text {t_text:.3f} s, pandas.read_csv(dtype=str) {t_str:.3f} s (ratio "
        f"{t_text / t_str:.2f})"
    )
    targets.at_most(
        f"plain file load_input / read_csv, {rows:,} rows",
        t_reader / t_parse,
        30.0,
        "x",
        scaled=True,
    )
    targets.at_most(
        "missing-text column passes / columns", passes / distinct, 1.0, "x", scaled=False
    )
    targets.at_most("missing-text reading / one pass", t_texts / t_once, 1.5, "x", scaled=True)
    targets.at_most(
        "cells read as text / pandas.read_csv(dtype=str)", t_text / t_str, 0.6, "x", scaled=True
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="best of N runs per dataset")
    parser.add_argument(
        "--file-rows", type=int, default=200_000, help="rows of the plain pairs file (0: none)"
    )
    args = parser.parse_args()
    one_thread()  # CPU seconds are the work of one thread (benchmarks/_timing.py)
    root = data_dir()
    roster = Roster.load()
    names = sorted(registry.datasets())
    print(f"data: {root}   cpus: {os.cpu_count()}   best of {args.repeat}")
    print(f"{'dataset':<16}{'rows':>9}{'reader s':>11}{'parse-only s':>14}{'ratio':>8}")
    total_reader = total_base = 0.0
    missing = []
    for name in names:
        if not (root / registry.get(name).folder).is_dir():
            missing.append(name)
            continue
        t_reader, table = best_of(
            args.repeat, lambda n=name: registry.load(n, data_dir=root, roster=roster)
        )
        t_base, _ = best_of(args.repeat, baseline, name, root)
        if not isinstance(table, pd.DataFrame) or table.empty:
            raise SystemExit(f"FAILED: {name} did not load as a non-empty table")
        total_reader += t_reader
        total_base += t_base
        print(
            f"{name:<16}{len(table):>9,}{t_reader:>11.2f}{t_base:>14.2f}{t_reader / t_base:>8.2f}"
        )
    print(
        f"{'total':<16}{'':>9}{total_reader:>11.2f}{total_base:>14.2f}"
        f"{total_reader / total_base:>8.2f}"
    )
    if missing:
        print(f"not in {root}: {', '.join(missing)}")
    targets = Targets()
    # the readers against parsing the same files alone (same run): validation, ids,
    # roster lookups on top of the parse
    targets.at_most(
        "readers / parse-only, all datasets", total_reader / total_base, 8.0, "x", scaled=True
    )
    if args.file_rows > 0:
        file_case(args.file_rows, max(args.repeat, 5), targets)
    targets.finish()
    return 0


if __name__ == "__main__":
    sys.exit(main())
