"""Time the audit of all demo data, per analysis; the budget is 60 s on a 2-core machine.

Baseline in the same run: loading the same datasets alone (the floor any audit pays).
Prints the seconds of every step, the total, the ratio total / loading, and fails
(exit 1) when the whole audit, report writing included, takes 60 s or more.

    python benchmarks/audit.py [--data-dir ../shared/data] [--n-boot 1000]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

DEMO = ("llmbar-mtbench", "play-favorites", "hh-rlhf", "alpaca-eval")
BUDGET_S = 60.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    default = os.environ.get(
        "RECUSE_DATA_DIR", str(Path(__file__).resolve().parents[2] / "shared" / "data")
    )
    parser.add_argument("--data-dir", default=default)
    parser.add_argument("--n-boot", type=int, default=1000)
    args = parser.parse_args()

    start = time.perf_counter()
    from recuse.audit import AuditOptions, audit
    from recuse.data import load
    from recuse.report import write_report
    from recuse.roster import Roster

    imports = time.perf_counter() - start

    roster = Roster.load()
    t = time.perf_counter()
    for name in DEMO:
        load(name, data_dir=args.data_dir, roster=roster)
    baseline = time.perf_counter() - t

    t = time.perf_counter()
    report = audit(DEMO, data_dir=args.data_dir, options=AuditOptions(n_boot=args.n_boot))
    analysed = time.perf_counter() - t
    with tempfile.TemporaryDirectory() as out:
        t = time.perf_counter()
        write_report(report, out)
        written = time.perf_counter() - t
        size = (Path(out) / "report.html").stat().st_size

    print(f"audit of {', '.join(DEMO)} (n_boot={args.n_boot}, cores={os.cpu_count()})")
    print(f"{imports:8.2f} s  imports")
    for label, seconds in report.timings:
        print(f"{seconds:8.2f} s  {label}")
    print(f"{written:8.2f} s  write report.html ({size / 1e6:.1f} MB), report.json, tables")
    total = imports + analysed + written
    print(f"{total:8.2f} s  total (budget {BUDGET_S:.0f} s)")
    print(f"baseline: loading the datasets alone {baseline:.2f} s; audit / loading = "
          f"{(analysed + written) / baseline:.1f}x")  # fmt: skip
    for s in report.sections:
        print(f"  section {s.title}: {s.seconds:.2f} s")
    return 0 if total < BUDGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
