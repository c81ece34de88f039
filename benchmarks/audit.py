"""Time the audit: the demo data per analysis, and a ratings audit as the rows grow.

1. The demo (``make demo``): every analysis of llmbar-mtbench, play-favorites, hh-rlhf
   and alpaca-eval, with the default (fast) robustness checks. Prints each step's
   seconds, the total and the ratio total / loading the same datasets alone (the
   baseline: the floor any audit pays). Target: under 10 s on a quiet 2-core machine.
2. Scaling of a ratings audit (issue #12): Play Favorites repeated with fresh prompt
   ids to 100k, 300k and 1M rows, written to Parquet, then loaded (baseline) and
   audited from the file, report written. Prints seconds, seconds per 100k rows and the
   ratio to loading for each size, the steps of the largest audit, and whether the
   time grows linearly: the extra seconds per extra 100k rows from one size to the next
   (fixed costs — figures, report — cancel out) stay within 1.5× of each other.
   Target: 1M rows under 2 minutes. The growth is read from the process's CPU seconds
   (wall seconds printed beside them): the audit runs in this one process, and on a
   shared machine other processes' load moves its wall time by more than the extra
   work of a small step (``make bench-quick``'s sizes) costs.

Targets (exit status 1 when one is missed; benchmarks/_targets.py), ratios of the
same run: the demo's audit and report at most 15x loading its datasets alone (9x
measured on a loaded 2-core machine; read in CPU seconds of this process since
2026-12-01, where the audit and the loading run on this one thread: by the wall clock
the ratio read 5.6x, 5.9x and 9.1x in three runs at load 5.5-6.7 with the code
unchanged), and the ratings audit growing linearly (the
last extra CPU seconds per 100k rows at most 1.5x the first).

    python benchmarks/audit.py [--data-dir ../shared/data] [--n-boot 1000]
        [--sizes 100000,300000,1000000] [--no-demo] [--no-scaling]
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from _targets import Targets
from _timing import one_thread

DEMO = ("llmbar-mtbench", "play-favorites", "hh-rlhf", "alpaca-eval")
DEMO_RATIO = 15.0


def demo(data_dir: str, n_boot: int, targets: Targets) -> bool:
    start = time.perf_counter()
    from recuse.data import load
    from recuse.driver import AuditOptions, audit
    from recuse.report import write_report
    from recuse.roster import Roster

    imports = time.perf_counter() - start

    roster = Roster.load()
    t, c = time.perf_counter(), time.process_time()
    for name in DEMO:
        load(name, data_dir=data_dir, roster=roster)
    baseline, baseline_cpu = time.perf_counter() - t, time.process_time() - c

    t, c = time.perf_counter(), time.process_time()
    report = audit(DEMO, data_dir=data_dir, options=AuditOptions(n_boot=n_boot))
    analysed = time.perf_counter() - t
    with tempfile.TemporaryDirectory() as out:
        t = time.perf_counter()
        write_report(report, out)
        written = time.perf_counter() - t
        size = (Path(out) / "report.html").stat().st_size
    audit_cpu = time.process_time() - c

    print(f"== demo audit of {', '.join(DEMO)} (n_boot={n_boot}, cores={os.cpu_count()})")
    print(f"{imports:8.2f} s  imports")
    for label, seconds in report.timings:
        print(f"{seconds:8.2f} s  {label}")
    print(f"{written:8.2f} s  write report.html ({size / 1e6:.1f} MB), report.json, tables")
    total = imports + analysed + written
    print(f"{total:8.2f} s  total")
    print(f"baseline: loading the datasets alone {baseline:.2f} s; audit / loading = "
          f"{(analysed + written) / baseline:.1f}x by the wall clock, "
          f"{audit_cpu / baseline_cpu:.1f}x in CPU seconds ({audit_cpu:.2f} s against "
          f"{baseline_cpu:.2f} s)")  # fmt: skip
    for s in report.sections:
        print(f"  section {s.title}: {s.seconds:.2f} s")
    return targets.at_most(
        "demo audit / loading, CPU", audit_cpu / baseline_cpu, DEMO_RATIO, "x", scaled=True
    )


def repeated_play_favorites(data_dir: str, n_rows: int) -> pd.DataFrame:
    """Play Favorites ratings repeated (prompt ids suffixed per copy) to ``n_rows`` rows."""
    from recuse.data import load

    pf = load("play-favorites", data_dir=data_dir).drop(columns=["prompt"], errors="ignore")
    copies = int(np.ceil(n_rows / len(pf)))
    ids = pf["prompt_id"].astype(str)
    parts = [pf.assign(prompt_id=ids + f"~{i}") for i in range(copies)]
    return pd.concat(parts, ignore_index=True).iloc[:n_rows]


def scaling(data_dir: str, n_boot: int, sizes: list[int], targets: Targets) -> bool:
    from recuse.driver import AuditOptions, audit, load_input
    from recuse.report import write_report
    from recuse.roster import Roster

    roster = Roster.load()
    print(f"\n== ratings audit as the rows grow (Play Favorites repeated; n_boot={n_boot})")
    print(
        f"{'rows':>10} {'load s':>8} {'audit s':>8} {'CPU s':>8} {'s/100k':>7} {'audit/load':>10}"
    )
    per_100k: list[float] = []
    totals: list[tuple[int, float]] = []  # rows, CPU seconds of the audit and report
    last = None
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            path = Path(tmp) / f"ratings_{n}.parquet"
            repeated_play_favorites(data_dir, n).to_parquet(path, index=False)
            t = time.perf_counter()
            load_input(path, table="ratings", roster=roster)
            loading = time.perf_counter() - t
            t, c = time.perf_counter(), time.process_time()
            report = audit(
                [path], table="ratings", roster=roster, options=AuditOptions(n_boot=n_boot)
            )
            write_report(report, Path(tmp) / f"report_{n}")
            seconds, cpu = time.perf_counter() - t, time.process_time() - c
            per_100k.append(seconds / (n / 1e5))
            totals.append((n, cpu))
            print(f"{n:>10,} {loading:8.2f} {seconds:8.2f} {cpu:8.2f} {per_100k[-1]:7.2f} "
                  f"{seconds / loading:9.1f}x")  # fmt: skip
            last = (n, seconds, report)
    if last is None:
        raise SystemExit("FAILED: no size was audited")
    n, seconds, report = last
    print(f"steps of the {n:,}-row audit (report writing not included):")
    for label, s in report.timings:
        print(f"{s:8.2f} s  {label}")
    if len(totals) >= 3:
        # the increments between sizes: constant seconds per 100k rows = linear growth
        steps = [(t1 - t0) / ((n1 - n0) / 1e5) for (n0, t0), (n1, t1) in itertools.pairwise(totals)]
        growth = steps[-1] / steps[0]
        verdict = "linear" if growth <= 1.5 else "faster than linear"
        print("extra CPU seconds per extra 100k rows between sizes: "
              + ", ".join(f"{s:.2f}" for s in steps)
              + f" — last / first {growth:.2f} ({verdict})")  # fmt: skip
        targets.at_most(
            "growth, last / first extra CPU seconds per 100k rows", growth, 1.5, "x", scaled=True
        )
    print(f"{n:,} rows: {seconds:.1f} s")
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    default = os.environ.get(
        "RECUSE_DATA_DIR", str(Path(__file__).resolve().parents[2] / "shared" / "data")
    )
    parser.add_argument("--data-dir", default=default)
    parser.add_argument("--n-boot", type=int, default=1000)
    parser.add_argument("--sizes", default="100000,300000,1000000")
    parser.add_argument("--no-demo", action="store_true")
    parser.add_argument("--no-scaling", action="store_true")
    args = parser.parse_args()
    one_thread()  # CPU seconds are the work of one thread (benchmarks/_timing.py)
    targets = Targets()
    if not args.no_demo:
        demo(args.data_dir, args.n_boot, targets)
    if not args.no_scaling:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
        scaling(args.data_dir, args.n_boot, sizes, targets)
    targets.finish()
    return 0


if __name__ == "__main__":
    sys.exit(main())
