"""Benchmark: the favoritism fit (Eq. 1, HC0) and each robustness check on Play Favorites.

Baselines in the same run, on the same rows: statsmodels' ``OLS`` on the same design
held dense (what the fit used before the sparse OLS), and the plain statsmodels formula
fit of the model. Prints their times, the ratios, whether the estimates agree, and then
the seconds of each robustness check with its class (fast: run by default; slow: only
with ``--robustness all``) — the measurement behind ``FAST_CHECKS``.
``--rows N`` repeats Play Favorites (fresh prompt ids per copy) to N rows.

    python benchmarks/favoritism.py [--rows 63222] [--slow] [--repeat 3]

Each fit is timed as the best of ``--repeat`` runs (``make bench-quick``: 1; the
target, faster than the dense OLS, is met about 10x over, so one run of each decides it).
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import statsmodels.api as sm
import statsmodels.formula.api as smf
from _targets import Targets
from threadpoolctl import threadpool_info

from recuse.data import load
from recuse.regression.favoritism import design_matrix, fit_prepared, prepare
from recuse.regression.robustness import CHECKS, FAST_CHECKS, battery
from recuse.roster import Roster

DATA = os.environ.get(
    "RECUSE_DATA_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data")
)


def best_of(fn: Callable[[], Any], repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=0, help="repeat the data to this many rows")
    parser.add_argument("--slow", action="store_true", help="also time ordinal and GAM")
    parser.add_argument("--repeat", type=int, default=3, help="best of N runs per fit")
    args = parser.parse_args()
    roster = Roster.load()
    ratings = load("play-favorites", data_dir=DATA, roster=roster)
    if args.rows:
        copies = int(np.ceil(args.rows / len(ratings)))
        ids = ratings["prompt_id"].astype(str)
        ratings = pd.concat(
            [ratings.assign(prompt_id=ids + f"~{i}") for i in range(copies)], ignore_index=True
        ).iloc[: args.rows]
    p = prepare(ratings, roster)
    X, terms, _ = design_matrix(p.frame)
    y = p.frame["y"].to_numpy()
    dense = X.toarray()
    d = p.frame.assign(
        self_label=np.where(p.frame["is_self"], p.frame["judge"], "none"),
        fam_label=np.where(p.frame["is_family"], p.frame["judge_family"], "none"),
    )
    formula = (
        "y ~ 0 + C(judge) + C(judge):ref + C(self_label, Treatment('none'))"
        " + C(fam_label, Treatment('none')) + C(dimension)"
    )
    r = max(1, args.repeat)
    ours = best_of(lambda: fit_prepared(p, se="HC0"), r)
    dense_s = best_of(lambda: sm.OLS(y, dense, hasconst=True).fit(cov_type="HC0"), r)
    plain = best_of(lambda: smf.ols(formula, data=d).fit(cov_type="HC0"), r)
    res = fit_prepared(p, se="HC0")
    ref = sm.OLS(y, dense, hasconst=True).fit(cov_type="HC0")
    gap = float(np.max(np.abs(res.params.to_numpy() - ref.params)))
    se_gap = float(np.max(np.abs(res.bse.to_numpy() / ref.bse - 1)))
    blas = ", ".join(f"{i['internal_api']} {i['num_threads']}" for i in threadpool_info())
    print(f"rows: {len(p.frame):,}; {len(terms)} coefficients; BLAS threads: {blas}")
    print(f"main fit, ours (sparse design + OLS, HC0):        {ours:.3f} s")
    print(f"statsmodels OLS on the same design, dense:        {dense_s:.3f} s "
          f"(ours {dense_s / ours:.1f}x faster)")  # fmt: skip
    print(f"statsmodels formula fit (incl. design by patsy):  {plain:.3f} s "
          f"(ours {plain / ours:.1f}x faster)")  # fmt: skip
    print(f"largest |Δ estimate| vs statsmodels {gap:.1e}; largest relative Δ SE {se_gap:.1e}")
    targets = Targets()
    targets.at_most("|Δ estimate| vs statsmodels' OLS", gap, 1e-8, scaled=False)
    targets.at_most("relative Δ SE vs statsmodels' OLS", se_gap, 1e-6, scaled=False)
    targets.at_least("speed-up over statsmodels' dense OLS", dense_s / ours, 1.0, "x", scaled=True)
    checks = list(CHECKS) if args.slow else list(FAST_CHECKS)
    bat = battery(p, checks=checks, se="HC0", main=res)
    print(f"robustness checks ({len(bat.results)} variants, {len(bat.skipped)} skipped):")
    for name, seconds in bat.seconds.items():
        kind = "fast" if name in FAST_CHECKS else "slow"
        print(f"  {seconds:7.2f} s  {name} ({kind})")
    fast = sum(v for k, v in bat.seconds.items() if k in FAST_CHECKS)
    print(f"  {fast:7.2f} s  all fast checks (the audit's default)")
    targets.finish()


if __name__ == "__main__":
    main()
