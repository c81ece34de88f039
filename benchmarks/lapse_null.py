"""Benchmark: how often the slot-lapse test fires on judges without a slot lapse.

The calibrated self-preference tests each judge for a slot lapse
(:func:`~recuse.metrics.competence.lapse_test`): the likelihood ratio of the model with a
share ``λ`` of orders that take one slot's answer whatever the pair against the model
without it, λ on its boundary (0) under no lapse, so with one order per pair its null
distribution is ½χ²₀ + ½χ²₁ (Self & Liang 1987), whose 0.001 critical value is 9.55 and
whose 0.0005 one is :data:`~recuse.metrics.competence.LAPSE_LR` (10.83). With both orders
judged each weighs ½ in the likelihood, so the statistic is smaller than that.

Plain planted judges (:func:`~recuse.simulate.self_preference.simulate_self_preference`:
five models, a position term in log-odds, no self term): κ in 0.3, 1, 3, 20, β in 0, 0.5,
1.5, the judge's own answers preferred 0.5, 0.86 or 0.95 of the time (36 cells), ``--reps``
tables per cell at ``--prompts`` prompts, in three designs: both orders with 0/1 picks,
both orders with probability verdicts, and one order per pair (each pair's other order
dropped at random). Prints per design the share of tables whose statistic reaches 2.71,
5.41, 9.55 and 10.83 (the ½χ²₀ + ½χ²₁ tail there: 0.05, 0.01, 0.001, 0.0005), its 99th
percentile and largest value, and the share the test fires on (λ ≥ LAPSE_MIN too).
Target: the test fires on no more tables than a test of level 0.001 would with
probability 0.99 (a binomial count over all tables run).

Run: python benchmarks/lapse_null.py [--reps 10] [--prompts 80] (about 4 minutes on one
core at the defaults)
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np
import pandas as pd
from _targets import Targets
from scipy import stats

from recuse.metrics.competence import LAPSE_LR, calibrated_parts, lapse_test
from recuse.metrics.self_preference import favored_side
from recuse.metrics.verdicts import judge_codes
from recuse.simulate.self_preference import (
    OTHER_STRENGTHS,
    AuthorJudge,
    simulate_self_preference,
    theta_for_own_rate,
)

CUTS = (2.71, 5.41, 9.55, 10.83)
DESIGNS = ("both orders, 0/1", "both orders, probabilities", "one order, 0/1")


def _one_order(pairs: pd.DataFrame, seed: int) -> pd.DataFrame:
    """Each pair judged in one order, the other dropped at random."""
    out = pairs.copy()
    drop_first = np.random.default_rng(seed).random(len(out)) < 0.5
    out.loc[drop_first, "p_a_first"] = np.nan
    out.loc[~drop_first, "p_a_second"] = np.nan
    out["p_a"] = out["p_a_first"].fillna(out["p_a_second"])
    return out


def statistics(design: str, reps: int, prompts: int) -> pd.DataFrame:
    """The lapse test's statistic and verdict on every table of ``design``."""
    rows = []
    for kappa, beta, rate in itertools.product((0.3, 1.0, 3.0, 20.0), (0.0, 0.5, 1.5),
                                               (0.5, 0.86, 0.95)):  # fmt: skip
        strengths = {"m0": theta_for_own_rate(rate, OTHER_STRENGTHS), **OTHER_STRENGTHS}
        for r in range(reps):
            pairs = simulate_self_preference(
                {"m0": AuthorJudge(kappa, beta)}, strengths, n_prompts=prompts, seed=1000 + r,
                probabilities=design == DESIGNS[1],
            ).pairs  # fmt: skip
            if design == DESIGNS[2]:
                pairs = _one_order(pairs, r)
            codes, labels = judge_codes(pairs, None)
            side = favored_side(pairs, relation="self")
            values, group, _, _, model = calibrated_parts(
                pairs, codes, labels, side=side, one_step=False
            )
            t = values[group == 0].sum(axis=0)
            if not model.finite(t):
                continue
            test = lapse_test(model, t)
            rows.append({"kappa": kappa, "lr": test.lr, "fires": test.lapsed})
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=10, help="tables per cell")
    parser.add_argument("--prompts", type=int, default=80, help="prompts per table")
    args = parser.parse_args()
    if args.reps < 1 or args.prompts < 2:
        parser.error("--reps must be at least 1 and --prompts at least 2")
    targets = Targets()
    fired = tables = 0
    nominal = "  ".join(f"{0.5 * stats.chi2.sf(c, 1):.4f}" for c in CUTS)
    print(f"LR >= {', '.join(map(str, CUTS))}; ½χ²₀ + ½χ²₁ tail: {nominal}")
    for design in DESIGNS:
        got = statistics(design, args.reps, args.prompts)
        lr = got["lr"].to_numpy()
        tails = "  ".join(f"{np.mean(lr >= c):.4f}" for c in CUTS)
        top = got["kappa"].iloc[int(lr.argmax())]
        print(
            f"{design}: {len(got)} tables, LR tail {tails}; 99th percentile "
            f"{np.quantile(lr, 0.99):.2f}, largest {lr.max():.2f} (κ {top:g}); "
            f"the test fires on {int(got['fires'].sum())} (LAPSE_LR {LAPSE_LR})"
        )
        fired += int(got["fires"].sum())
        tables += len(got)
    most = int(stats.binom.ppf(0.99, tables, 0.001))
    targets.at_most(f"tables the test fires on, of {tables}", fired, most, scaled=False)
    targets.finish()


if __name__ == "__main__":
    main()
