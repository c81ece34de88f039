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

Run: python benchmarks/load_all.py [--repeat N]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
from pathlib import Path

import pandas as pd
from _targets import Targets

from recuse.data import fetch, registry
from recuse.roster import Roster

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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="best of N runs per dataset")
    args = parser.parse_args()
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
    targets.at_most("readers / parse-only, all datasets", total_reader / total_base, 8.0, "x")
    targets.finish()
    return 0


if __name__ == "__main__":
    sys.exit(main())
