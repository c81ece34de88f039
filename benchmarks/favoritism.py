"""Benchmark: the favoritism fit (Eq. 1, HC SEs) and the robustness battery on Play Favorites.

Prints the time of our main fit (design from numpy/pandas + statsmodels OLS with HC0),
the time of a plain statsmodels formula fit of the same model on the same rows, their
ratio, and the time of the whole robustness battery except the GAM (target: main fit +
battery under 15 s). BLAS is limited to one thread: the designs have ~45 columns, where
threads only add contention on a shared 2-core machine (the setting is printed).
"""

from __future__ import annotations

import os
import time

import numpy as np
import statsmodels.formula.api as smf
from threadpoolctl import threadpool_limits

from recuse.data import load
from recuse.regression.favoritism import fit_favoritism, prepare
from recuse.regression.robustness import CHECKS, battery
from recuse.roster import Roster

DATA = os.environ.get(
    "RECUSE_DATA_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data")
)


def best_of(fn, repeat: int = 3) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    roster = Roster.load()
    ratings = load("play-favorites", data_dir=DATA, roster=roster)
    p = prepare(ratings, roster)
    d = p.frame.assign(
        self_label=np.where(p.frame["is_self"], p.frame["judge"], "none"),
        fam_label=np.where(p.frame["is_family"], p.frame["judge_family"], "none"),
    )
    formula = (
        "y ~ 0 + C(judge) + C(judge):ref + C(self_label, Treatment('none'))"
        " + C(fam_label, Treatment('none')) + C(dimension)"
    )
    ours = best_of(lambda: fit_favoritism(ratings, roster, se="HC0"))
    plain = best_of(lambda: smf.ols(formula, data=d).fit(cov_type="HC0"))
    ref = smf.ols(formula, data=d).fit(cov_type="HC0")
    res = fit_favoritism(ratings, roster, se="HC0")
    same = np.isclose(
        res.params["self[gpt-4o]"], ref.params["C(self_label, Treatment('none'))[T.gpt-4o]"]
    )
    checks = [c for c in CHECKS if c != "gam"]
    t = time.perf_counter()
    bat = battery(ratings, roster, checks=checks, se="HC0")
    battery_s = time.perf_counter() - t
    print(f"rows: {len(ratings):,}; BLAS threads: 1; same estimates as formula fit: {same}")
    print(f"main fit (ours, incl. data preparation): {ours:.3f} s")
    print(f"plain statsmodels formula fit:           {plain:.3f} s")
    print(f"ratio ours / formula:                    {ours / plain:.2f}")
    print(
        f"main fit + robustness battery except GAM ({len(bat.results)} variants): "
        f"{battery_s:.2f} s (target < 15 s)"
    )
    print("  " + ", ".join(f"{k} {v:.2f}s" for k, v in bat.seconds.items()))


if __name__ == "__main__":
    with threadpool_limits(limits=1, user_api="blas"):
        main()
