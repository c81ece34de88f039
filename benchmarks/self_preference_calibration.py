"""Benchmark: which competence-calibrated self-preference design has 0 = no bias.

Simulated author-judges (:mod:`recuse.simulate.self_preference`): every pair of five
models on each of 80 prompts, judged in both orders; the focal judge ``m0``'s answers
are preferred by the reference ``own_rate`` of the time; its errors depend only on
the quality gap (competence ``kappa``) and, where set, on the slot (position
log-odds 1.5); a planted self term switches a pick of the other answer to its own
with probability ``tau``. With ``--judges 3`` two more authors judge the same pairs.

Part 1 compares the candidate designs' point estimates with no self term (the design
chosen, (c), had |mean| <= 0.02 in every cell; printed for comparison, not checked):

* (a) accuracy curve learnt on the judge's pairs without its own model: logit
  P(picks the reference-preferred answer) = a + b * (strength gap, preferred minus
  other), Bradley–Terry strengths from the labels, applied to its own pairs;
* (b) difference in differences across judges on the same pairs: (the judge's rate
  of picking m0's answer minus the other non-author judges' rate on the same pairs)
  minus the same contrast for the stronger answer on its pairs without m0;
* (c) Bradley–Terry with a per-judge discrimination, a position term and an
  own-answer term (recuse's :func:`~recuse.metrics.competence.calibrated_self_preference`).

EO is the equal-opportunity gap (Wataoka et al., Def. 4.1): its mean is its bias.

Part 2 runs the chosen design (c) with its 90% percentile interval (the estimator's own,
:data:`~recuse.metrics.competence.CALIBRATED_INTERVAL`) in every cell, with and
without a planted ``tau = 0.3``: mean, truth, bias, coverage, share flagged, EO mean.
Targets (exit status 1 when one is missed): the coverage of planted tau and of 0 as
when the percentile interval was chosen. The two means, pooled over every table of
their cells, are widened by two binomial standard errors of the tables run; the lowest
planted cell (one of many, each a binomial count over ``--reps`` tables) is checked
against the floor that cells covering exactly 0.80 all stay above with probability 0.99
(``_targets.coverage_floor``: 0.705 at 200 tables per cell and 20 cells; two standard
errors per cell would fail such cells in 3 runs of 4, and at ``make bench-quick``'s 8
tables per cell the lowest cell can say little: its floor is 0.375, and the means carry
the check).

Part 3 (``--lapse L``, alone): a judge that takes the first-shown answer on a share ``L``
of its orders whatever the pair
(:func:`~recuse.simulate.self_preference.simulate_slot_lapse_judge`, κ = 2, 200 prompts),
with 0/1 picks and with probability verdicts, no self term and ``tau = 0.3``: the
estimate with its slot lapse tested for (the estimator's default) and with ``lapse=False``
(the position term alone, as before the lapse was modelled); mean, truth, coverage,
share holding 0, share of tables whose model has the lapse. Target: the mean coverage
with the lapse tested for, as part 2's.

Run: python benchmarks/self_preference_calibration.py [--reps 200] [--compare-reps 20]
[--rates 0.5 0.76 0.95] [--judges 1] [--one-step] [--lapse 0.5] (``--compare-reps 0`` skips part 1;
``--one-step``: the interval's resamples by one Newton step from the full-sample fit, as
the estimator does past its pattern limit, instead of exact refits; in part 2 the
three-judge cells equal the one-judge ones: m0's strengths come from the labels of the
pairs it judged, the same pairs in both)
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd
import statsmodels.api as sm
from _targets import Targets, coverage_floor
from scipy import special

from recuse.metrics.bootstrap import Resampling
from recuse.metrics.competence import calibrated_self_preference, label_strengths
from recuse.metrics.self_preference import self_preference
from recuse.simulate.self_preference import (
    OTHER_STRENGTHS,
    AuthorJudge,
    calibration_cell,
    simulate_self_preference,
    simulate_slot_lapse_judge,
    theta_for_own_rate,
)

RATES = (0.5, 0.64, 0.76, 0.86, 0.95)
COMPETENCES = (0.3, 1.0, 3.0, 20.0)
POSITIONS = (0.0, 1.5)


def design_a(t: pd.DataFrame, judge: str, s: dict[str, float]) -> float:
    r = t[t["judge"] == judge]
    a, b = r["model_a"].to_numpy(), r["model_b"].to_numpy()
    g = r["model_a"].map(s).to_numpy(float) - r["model_b"].map(s).to_numpy(float)
    own = np.where(a == judge, 1, np.where(b == judge, -1, 0))
    v, h = r["p_a"].to_numpy(float), r["human"].to_numpy(float)
    o = own != 0
    hp = np.where(h > 0.5, 1, -1)
    y = np.where(hp > 0, v, 1 - v)
    x = np.column_stack([np.ones(len(g)), g * hp])
    fit = sm.GLM(y[~o], x[~o], family=sm.families.Binomial()).fit()
    acc = special.expit(x[o] @ np.asarray(fit.params))
    h_own = np.where(own > 0, h, 1 - h)[o]
    pred = np.where(h_own > 0.5, acc, 1 - acc)
    v_own = np.where(own > 0, v, 1 - v)[o]
    return float(v_own.mean() - pred.mean())


def design_b(t: pd.DataFrame, judge: str, s: dict[str, float]) -> float:
    others = [k for k in t["judge"].unique() if k != judge]
    if not others:
        return float("nan")
    r = t[t["judge"] == judge].set_index("item_id")
    piv = t.pivot_table(index="item_id", columns="judge", values="p_a").reindex(r.index)
    a, b = r["model_a"].to_numpy(), r["model_b"].to_numpy()
    ctrl = np.column_stack(
        [np.where((a == k) | (b == k), np.nan, piv[k].to_numpy(float)) for k in others]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        control = np.nanmean(ctrl, axis=1)
    d = r["p_a"].to_numpy(float) - control
    g = r["model_a"].map(s).to_numpy(float) - r["model_b"].map(s).to_numpy(float)
    own = np.where(a == judge, 1, np.where(b == judge, -1, 0))
    ok = np.isfinite(control)
    treated = np.where(own > 0, d, -d)[(own != 0) & ok]
    untreated = np.where(g >= 0, d, -d)[(own == 0) & ok]
    return float(treated.mean() - untreated.mean())


def compare(reps: int) -> pd.DataFrame:
    rows = []
    for rate in RATES:
        strengths = {"m0": theta_for_own_rate(rate, OTHER_STRENGTHS), **OTHER_STRENGTHS}
        for kappa in COMPETENCES:
            for pos in POSITIONS:
                cast = {
                    "m0": AuthorJudge(kappa, pos),
                    "m1": AuthorJudge(1.0, pos),
                    "m2": AuthorJudge(5.0, pos),
                }
                out: dict[str, list[float]] = {"a": [], "b": [], "c": [], "EO": []}
                for r in range(reps):
                    t = simulate_self_preference(cast, strengths, n_prompts=80, seed=r).pairs
                    s = label_strengths(t)
                    out["a"].append(design_a(t, "m0", s))
                    out["b"].append(design_b(t, "m0", s))
                    res = calibrated_self_preference(
                        t, judge="m0", strengths=s, boot=Resampling(n_boot=10)
                    )
                    out["c"].append(res.estimate)
                    out["EO"].append(
                        self_preference(t, judge="m0", boot=Resampling(n_boot=10)).estimate
                    )
                rows.append(
                    {"own_rate": rate, "kappa": kappa, "position": pos}
                    | {f"mean {k}": float(np.mean(v)) for k, v in out.items()}
                )
    return pd.DataFrame(rows)


def lapse_cells(lapse: float, reps: int, n_boot: int, rates: list[float]) -> pd.DataFrame:
    """Part 3: the slot-lapse judge's cells, with the lapse tested for and without."""
    rows = []
    for rate in rates:
        for probabilities in (False, True):
            for tau in (0.0, 0.3):
                for modelled in (True, False):
                    est, hit, zero, on = [], [], [], []
                    truth = float("nan")
                    for r in range(reps):
                        sim = simulate_slot_lapse_judge(
                            lapse=lapse, own_rate=rate, tau=tau, probabilities=probabilities,
                            seed=r,
                        )  # fmt: skip
                        truth = sim.truth
                        res = calibrated_self_preference(
                            sim.pairs,
                            judge="m0",
                            boot=Resampling(n_boot=n_boot, seed=r),
                            lapse=None if modelled else False,
                        )
                        est.append(res.estimate)
                        hit.append(res.ci_low <= truth <= res.ci_high)
                        zero.append(res.ci_low <= 0.0 <= res.ci_high)
                        on.append("slot_lapse" in res.components)
                    rows.append({
                        "own_rate": rate, "verdicts": "p" if probabilities else "0/1",
                        "tau": tau, "lapse_tested": modelled, "mean": float(np.mean(est)),
                        "truth": truth, "coverage": float(np.mean(hit)),
                        "holds_0": float(np.mean(zero)), "modelled": float(np.mean(on)),
                    })  # fmt: skip
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200, help="tables per cell (part 2)")
    parser.add_argument("--compare-reps", type=int, default=20, help="tables per cell (part 1)")
    parser.add_argument("--n-boot", type=int, default=500)
    parser.add_argument("--rates", type=float, nargs="+", default=list(RATES))
    parser.add_argument("--judges", type=int, nargs="+", default=[1, 3], choices=[1, 3])
    parser.add_argument(
        "--one-step", action="store_true",
        help="resample by one Newton step from the full-sample fit (as past the pattern "
        "limit) instead of exact refits",
    )  # fmt: skip
    parser.add_argument(
        "--lapse", type=float, default=None,
        help="part 3 alone: a judge lapsing to the first slot on this share of its orders",
    )  # fmt: skip
    args = parser.parse_args()
    pd.set_option("display.width", 200)
    start = time.perf_counter()
    if args.lapse is not None:
        rates = args.rates if args.rates != list(RATES) else [0.95]
        cells = lapse_cells(args.lapse, args.reps, args.n_boot, rates)
        print(f"Part 3: a slot lapse on {args.lapse:.0%} of orders, {args.reps} tables per cell")
        print(cells.round(4).to_string(index=False))
        print(f"{time.perf_counter() - start:.0f} s")
        mine = cells[cells["lapse_tested"]]
        se = 2 * np.sqrt(0.9 * 0.1 / (args.reps * len(mine)))
        targets = Targets()
        targets.within("mean coverage, lapse tested for", float(mine["coverage"].mean()),
                       0.85 - se, 0.95 + se, scaled=False)  # fmt: skip
        targets.finish()
        return
    if args.compare_reps > 0:
        table = compare(args.compare_reps)
        print(
            "Part 1: candidate designs, no self term, judges m0 + m1 + m2, "
            f"{args.compare_reps} tables per cell"
        )
        print(table.round(3).to_string(index=False), flush=True)
        worst = {c: float(table[c].abs().max()) for c in table.columns if c.startswith("mean")}
        print("largest |mean| per design: "
              + ", ".join(f"{k[5:]} {v:.3f}" for k, v in worst.items()), flush=True)  # fmt: skip
    rows = []
    for tau in (0.0, 0.3):
        for rate in args.rates:
            for kappa in COMPETENCES:
                for judges in args.judges:
                    for pos in POSITIONS:
                        if tau > 0 and (judges == 3 or pos > 0):
                            continue  # the planted cells: one judge, no position bias
                        cell = calibration_cell(
                            own_rate=rate,
                            competence=kappa,
                            judges=judges,
                            position=pos,
                            tau=tau,
                            reps=args.reps,
                            boot=Resampling(n_boot=args.n_boot),
                            one_step=True if args.one_step else None,
                        )
                        rows.append(cell.to_dict())
    full = pd.DataFrame(rows).drop(columns=["reps"])
    print(f"\nPart 2: design (c) with its 90% interval, {args.reps} tables per cell")
    print(full.round(3).to_string(index=False))
    null = full[full["tau"] == 0]
    planted = full[full["tau"] > 0]
    print(
        f"no self term: largest |mean| {null['mean'].abs().max():.3f} "
        f"(EO: {null['eo_mean'].abs().max():.3f}), 0 covered in "
        f"{null['coverage'].min():.2f}-{null['coverage'].max():.2f} "
        f"(mean {null['coverage'].mean():.3f}); planted tau = 0.3: coverage "
        f"{planted['coverage'].min():.2f}-{planted['coverage'].max():.2f} "
        f"(mean {planted['coverage'].mean():.3f})"
    )
    print(f"{time.perf_counter() - start:.0f} s")
    targets = Targets()
    null_mean = float(null["coverage"].mean())
    pooled0 = 2 * np.sqrt(0.9 * 0.1 / (args.reps * len(null)))
    targets.within(
        "mean coverage of 0, no self term", null_mean, 0.85 - pooled0, 0.95 + pooled0, scaled=False
    )
    if planted.empty:  # --judges 3 alone: the planted cells are one judge's
        print("no planted cell (they are drawn with --judges 1): their targets are not checked")
        targets.finish()
        return
    # the percentile interval as measured when it was chosen (cb4002d): planted tau
    # covered in 0.82-0.92 of tables per cell, 0 in 0.86-0.88; the means widened by two
    # binomial standard errors of the tables run (a quick run has fewer), the lowest cell
    # checked against the floor cells at 0.80 all stay above in 99% of runs
    floor = coverage_floor(0.80, args.reps, checks=len(planted))
    print(
        f"lowest planted cell >= 0.80 is checked as >= {floor:.3f}: {len(planted)} cells of "
        f"{args.reps} tables, all at 0.80, stay above it in 99% of runs"
    )
    pooled = 2 * np.sqrt(0.9 * 0.1 / (args.reps * len(planted)))
    low = float(planted["coverage"].min())
    targets.at_least("lowest coverage of planted tau in a cell", low, floor, scaled=False)
    mean = float(planted["coverage"].mean())
    targets.within("mean coverage of planted tau", mean, 0.85 - pooled, 0.95 + pooled, scaled=False)
    targets.finish()


if __name__ == "__main__":
    main()
