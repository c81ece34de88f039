"""Benchmark: bias and interval coverage of the length-controlled win rate when answer
length tracks instruction difficulty, against a planted truth.

Each replication draws an AlpacaEval-style table from
:func:`recuse.simulate.length_controlled.simulate_length_controlled`: 6 systems
(skills θ evenly from −1 to 1) against one baseline on 400 instructions, easiness
``d ~ N(0, 1.5²)`` shared by all systems, a length effect φ = 1 on
``tanh(δ / sd δ)``, systems one standard deviation longer than the baseline on
average, and answer length correlated with difficulty at ``rho`` (0: unrelated;
0.46: the strength an independent simulation flagged in issue 35). The truth per
system is ``LC = E_d σ(θ + d)`` (Gauss–Hermite; the win rate the true model gives at
no length difference, averaged over instructions).

For both estimates that :func:`length_controlled_win_rates` returns (the joint fit,
``lc_win_rate``, and AlpacaEval's per-system GLM, ``lc_win_rate_glm``) it prints per
system the mean error (points) with its Monte Carlo standard error, and the share of
replications whose 90 % interval covers the truth.

Targets (the joint fit): every system's |mean error| ≤ 1 point + 3 Monte Carlo
standard errors, and coverage of the pooled intervals within [0.85, 0.95], in both
cases. The GLM's numbers are printed, not targeted: they show what the joint fit fixes.

Run: python benchmarks/length_controlled.py [--reps 300] [--n-boot 200]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from _targets import Targets

from recuse.metrics.bootstrap import Resampling
from recuse.metrics.length_controlled import length_controlled_win_rates
from recuse.simulate.length_controlled import JUDGE, simulate_length_controlled

CASES = (("length unrelated to difficulty", 0.0), ("length tracks difficulty", 0.46))


def run(rho: float, reps: int, n_boot: int) -> pd.DataFrame:
    """One row per (replication, system): errors and coverage of both estimates."""
    rows = []
    for rep in range(reps):
        sim = simulate_length_controlled(rho=rho, longer=1.0, length_effect=1.0, seed=rep)
        out = length_controlled_win_rates(
            sim.pairs, judge=JUDGE, boot=Resampling(n_boot=n_boot, seed=rep)
        )
        for r in out.itertuples():
            truth = sim.true_lc(str(r.system))
            rows.append(
                {
                    "system": r.system,
                    "joint_error": r.lc_win_rate - truth,
                    "joint_covers": r.lc_win_rate_low <= truth <= r.lc_win_rate_high,
                    "glm_error": r.lc_win_rate_glm - truth,
                    "glm_covers": r.lc_win_rate_glm_low <= truth <= r.lc_win_rate_glm_high,
                    "r": r.length_difficulty_r,
                }
            )
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=300)
    parser.add_argument("--n-boot", type=int, default=200)
    args = parser.parse_args()
    targets = Targets()
    for name, rho in CASES:
        start = time.perf_counter()
        res = run(rho, args.reps, args.n_boot)
        print(
            f"\n{name} (planted rho = {rho}; {args.reps} replications, "
            f"{time.perf_counter() - start:.0f} s; mean measured length_difficulty_r "
            f"{res['r'].mean():+.2f})"
        )
        by = res.groupby("system")
        table = pd.DataFrame(
            {
                "joint error": by["joint_error"].mean(),
                "± se": by["joint_error"].std() / np.sqrt(by.size()),
                "joint cover": by["joint_covers"].mean(),
                "glm error": by["glm_error"].mean(),
                "glm ± se": by["glm_error"].std() / np.sqrt(by.size()),
                "glm cover": by["glm_covers"].mean(),
            }
        )
        print(table.round(2).to_string())
        print(
            f"pooled coverage: joint {res['joint_covers'].mean():.3f}, "
            f"GLM {res['glm_covers'].mean():.3f}; largest |mean error|: joint "
            f"{table['joint error'].abs().max():.2f}, GLM {table['glm error'].abs().max():.2f} "
            "points"
        )
        worst = (table["joint error"].abs() - 3 * table["± se"]).max()
        targets.at_most(
            f"{name}: joint |mean error| − 3 se", float(worst), 1.0, " points", scaled=False
        )
        targets.within(
            f"{name}: joint coverage", float(res["joint_covers"].mean()), 0.85, 0.95, scaled=False
        )
    targets.finish()


if __name__ == "__main__":
    main()
