"""Benchmark: resamples whose human labels give the models' strengths no finite estimate.

The competence-calibrated self-preference refits the models' Bradley–Terry strengths
on the human labels in every resample. The full sample must meet Ford's condition
(every model beat or tied some other, along a chain reaching every model) or the
estimate is refused; a resample may break it, and then Newton's method on the labels
stops after ``_NEWTON_STEPS`` at an arbitrary, large gap. The estimator keeps that
replicate (:meth:`recuse.metrics.competence.CompetenceModel.finite`); this measures
whether that is harmless.

Tables: :func:`recuse.simulate.self_preference.simulate_self_preference`, five models,
the judge ``m0``'s answers preferred by the reference 0.95 of the time, competence 3, no
position term, with and without a planted self term ``tau = 0.3``; each table's
calibrated estimate with its 90% percentile interval (300 resamples, one κ, no label
term). Per cell: the tables whose full sample meets the condition, the share of them
with resamples that break it (the median share of such resamples, over 300 draws of
its own), and the coverage of the planted value by the interval as the estimator
makes it ("kept"). At the smallest size (``--compare`` prompts) also three
alternatives: 60 Newton steps instead of 30 (the largest change of an interval end),
dropping such resamples as undefined (reported only where at most a tenth are dropped,
as the bootstrap does; coverage on those tables, and the kept interval's there), and
the one-step bootstrap. Also the kept interval's coverage over the tables whose full
sample breaks the condition, as the estimator gave them before it refused them.

Target (exit status 1 when missed): the kept interval's coverage, pooled over every
cell's tables and widened by two binomial standard errors, reaches 0.85 (the
calibration suite's lower target).

``--by-share PROMPTS...`` instead: each table on its own seed, its share of resamples
that break the condition as the estimator counts them (``MetricResult.n_boot_unfit``)
and whether its interval holds the planted value, binned by the share (coverage, its
binomial standard error and the median width per bin; coverage above each bin's lower
end). ``--own-rate``, ``--kappa``, ``--label-auto``: the design and the label term;
``--csv``: each table's row. Measured (docs/benchmarks.md): coverage does not fall with
the share, so the estimator gives no warning for it. Also printed: the tables with no
such resample per prompt count, and coverage by how many prompts more than its cell's
mean the judge's own model lost on in the labels (:func:`lost_on`), split by whether
any resample breaks the condition: the tables with none are the upper tail of that
count where it is rarely high enough, and it is the count, not the share, that coverage
falls with (0.81 at a share of 0 in the main design). Target (exit status 1 when
missed): the coverage of the tables where more than a tenth of the resamples break the
condition, widened by two binomial standard errors, reaches 0.85.

Run: python benchmarks/ford_resamples.py [--reps 100] [--prompts 12 20 30]
[--compare 12] [--n-boot 300]
     python benchmarks/ford_resamples.py --by-share 10 12 15 20 --reps 400
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import time
import warnings
from collections.abc import Iterator
from dataclasses import replace

import numpy as np
import pandas as pd
from _targets import Targets

import recuse.metrics.competence as competence
from recuse.errors import EstimationError
from recuse.metrics.bootstrap import Resampling, resample_counts
from recuse.metrics.competence import LabelTerm
from recuse.metrics.estimate import clusters_of, run_one
from recuse.metrics.result import MetricResult
from recuse.metrics.self_preference import favored_side, single_judge
from recuse.metrics.verdicts import judge_codes
from recuse.simulate.self_preference import (
    OTHER_STRENGTHS,
    AuthorJudge,
    simulate_self_preference,
    theta_for_own_rate,
)

LEVEL = 0.9


def _kept(
    t: pd.DataFrame, boot: Resampling, one_step: bool = False, label: LabelTerm = False
) -> MetricResult:
    return competence.calibrated_self_preference(
        t, judge="m0", boot=boot, stratum=None, label=label, one_step=one_step
    )


def _dropped(t: pd.DataFrame, boot: Resampling) -> MetricResult:
    """The same estimate with every resample whose labels break the condition NaN."""
    rows = single_judge(t, "m0")
    codes, labels = judge_codes(rows, None)
    side = favored_side(rows, relation="self")
    spec, _ = competence.calibrated_spec(
        rows, codes, labels, side=side, stratum=None, label=False, one_step=False
    )
    model = competence.calibrated_parts(rows, codes, labels, side=side, one_step=False)[4]

    def combine(s: np.ndarray) -> np.ndarray:
        return np.where(model.finite(s), model.combine(s), np.nan)

    spec = replace(spec, stat=replace(spec.stat, combine=combine))
    return run_one(spec, clusters_of(rows), boot=boot, min_n=5)


def _share(t: pd.DataFrame) -> float:
    """The share of 300 prompt resamples whose label sums break the condition."""
    rows = single_judge(t, "m0")
    codes, labels = judge_codes(rows, None)
    values, _, _, _, model = competence.calibrated_parts(rows, codes, labels, one_step=False)
    prompt, names = pd.factorize(rows["prompt_id"])
    draws = resample_counts(len(names), 300, np.random.default_rng(0))
    return float(1.0 - model.finite(draws[:, prompt] @ values).mean())


@contextlib.contextmanager
def _as_before() -> Iterator[None]:
    """The estimator as it was before it checked that the labels' strengths are finite."""
    finite, strengths = competence.CompetenceModel.finite, competence.label_strengths
    setattr(competence.CompetenceModel, "finite", _always)  # noqa: B010
    setattr(competence, "label_strengths", lambda pairs: {})  # noqa: B010
    try:
        yield
    finally:
        setattr(competence.CompetenceModel, "finite", finite)  # noqa: B010
        setattr(competence, "label_strengths", strengths)  # noqa: B010


def _always(self: object, s: np.ndarray) -> np.ndarray:
    return np.ones(np.shape(s)[:-1], dtype=bool)


@contextlib.contextmanager
def _newton_steps(steps: int) -> Iterator[None]:
    """The competence fit's Newton steps set to ``steps`` (30 in the estimator)."""
    before = competence._NEWTON_STEPS
    competence._NEWTON_STEPS = steps
    try:
        yield
    finally:
        competence._NEWTON_STEPS = before


def _holds(r: MetricResult, truth: float) -> bool:
    return bool(r.ci_low <= truth <= r.ci_high)


def cell(n_prompts: int, tau: float, reps: int, n_boot: int, compare: bool) -> dict[str, float]:
    strengths = {"m0": theta_for_own_rate(0.95, OTHER_STRENGTHS), **OTHER_STRENGTHS}
    cast = {"m0": AuthorJudge(3.0, 0.0, tau)}
    out: dict[str, list[float]] = {k: [] for k in (
        "kept", "share", "broken_full", "broken_cover", "steps60", "shift60", "drop",
        "kept_where_drop", "one_step")}  # fmt: skip
    truth = float("nan")
    for r in range(reps):
        sim = simulate_self_preference(cast, strengths, n_prompts=n_prompts, seed=1000 + r)
        if r == 0:
            truth = sim.true_value("m0")
        t, boot = sim.pairs, Resampling(n_boot=n_boot, level=LEVEL, seed=r)
        try:
            kept = _kept(t, boot)
        except EstimationError:  # the full sample breaks the condition
            out["broken_full"].append(1.0)
            if compare:
                with _as_before():
                    out["broken_cover"].append(_holds(_kept(t, boot), truth))
            continue
        out["broken_full"].append(0.0)
        out["kept"].append(_holds(kept, truth))
        out["share"].append(_share(t))
        if not compare:
            continue
        with _newton_steps(60):
            longer = _kept(t, boot)
        out["steps60"].append(_holds(longer, truth))
        out["shift60"].append(
            max(abs(longer.ci_low - kept.ci_low), abs(longer.ci_high - kept.ci_high))
        )
        try:
            dropped = _dropped(t, boot)
        except EstimationError:  # more than a tenth of the resamples dropped
            pass
        else:
            out["drop"].append(_holds(dropped, truth))
            out["kept_where_drop"].append(_holds(kept, truth))
        out["one_step"].append(_holds(_kept(t, boot, one_step=True), truth))
    share = np.asarray(out["share"])
    row = {
        "prompts": float(n_prompts),
        "tau": tau,
        "truth": truth,
        "full broken": float(np.mean(out["broken_full"])),
        "tables": float(len(out["kept"])),
        "with such": float(np.mean(share > 0)) if len(share) else float("nan"),
        "median share": float(np.median(share)) if len(share) else float("nan"),
        "kept": float(np.mean(out["kept"])) if out["kept"] else float("nan"),
    }
    if compare:
        row |= {
            "60 steps": float(np.mean(out["steps60"])),
            "max shift": float(np.max(out["shift60"])),
            "drop reported": float(len(out["drop"])),
            "drop": float(np.mean(out["drop"])) if out["drop"] else float("nan"),
            "kept there": float(np.mean(out["kept_where_drop"])) if out["drop"] else float("nan"),
            "one-step": float(np.mean(out["one_step"])),
            "broken, before": float(np.mean(out["broken_cover"]))
            if out["broken_cover"]
            else float("nan"),
        }
    return row


#: the bins of the share of resamples that break the condition (upper ends)
SHARE_BINS = (0.0, 0.05, 0.10, 0.15, 0.20, 0.30, 1.0)


def by_share(
    prompts: list[int],
    reps: int,
    n_boot: int,
    own_rate: float = 0.95,
    kappa: float = 3.0,
    label: LabelTerm = False,
) -> pd.DataFrame:
    """Each table's share of resamples that break the condition, as the estimator counts
    it (``MetricResult.n_boot_unfit`` of the kept resamples), and whether its interval
    holds the planted value: ``reps`` tables per prompt count and self term, each on
    its own seed (the cells above share seeds across the self terms). ``own_rate``: how
    often the reference prefers the judge's answers; ``kappa``: its competence; ``label``:
    the estimator's label term (False as in the cells above; ``"auto"`` as the audit)."""
    strengths = {"m0": theta_for_own_rate(own_rate, OTHER_STRENGTHS), **OTHER_STRENGTHS}
    rows = []
    for n_prompts in prompts:
        for k, tau in enumerate((0.0, 0.3)):
            cast = {"m0": AuthorJudge(kappa, 0.0, tau)}
            truth = float("nan")
            for r in range(reps):
                seed = 100_000 * (1 + k) + 1_000 * n_prompts + r
                sim = simulate_self_preference(cast, strengths, n_prompts=n_prompts, seed=seed)
                if r == 0:
                    truth = sim.true_value("m0")
                boot = Resampling(n_boot=n_boot, level=LEVEL, seed=r)
                try:
                    kept = _kept(sim.pairs, boot, label=label)
                except EstimationError:  # the full sample breaks the condition
                    continue
                share = kept.n_boot_unfit / (kept.n_boot - kept.n_boot_dropped)
                width = kept.ci_high - kept.ci_low
                rows.append((
                    n_prompts, tau, share, _holds(kept, truth), width,
                    kept.estimate - truth, lost_on(sim.pairs, "m0"),
                ))  # fmt: skip
    columns = ["prompts", "tau", "share", "holds", "width", "error", "lost_on"]
    return pd.DataFrame(rows, columns=columns)


def lost_on(pairs: pd.DataFrame, model: str) -> int:
    """On how many prompts ``model``'s answer lost a human-labelled pair (each labelled
    item once; a tie is not a loss): the count the share of resamples that break the
    condition falls with when ``model`` is the strong one."""
    labelled = pairs[pairs["human"].notna()].drop_duplicates("item_id")
    lost = ((labelled["model_a"] == model) & (labelled["human"] < 0.5)) | (
        (labelled["model_b"] == model) & (labelled["human"] > 0.5)
    )
    return int(labelled.loc[lost, "prompt_id"].nunique())


#: the bins of a table's excess of prompts its judge's own model lost on, over the mean
#: of its cell's tables (upper ends)
EXCESS_BINS = (-np.inf, -1.5, 1.5, 2.5, np.inf)


def excess_table(tables: pd.DataFrame) -> pd.DataFrame:
    """Coverage by how many more prompts than its cell's mean (prompts and self term)
    the judge's own model lost on in the labels (:func:`lost_on`), each bin split by
    whether any resample broke the condition: the share's first bin (none) is the upper
    tail of this count where the count is rarely high enough."""
    excess = tables["lost_on"] - tables.groupby(["prompts", "tau"])["lost_on"].transform("mean")
    out = []
    for lo, hi in itertools.pairwise(EXCESS_BINS):
        part = tables[(excess > lo) & (excess <= hi)]
        zero = part["share"] == 0
        cover, se = _rate(part)
        out.append({
            "excess lost on": f"({lo:+.1f}, {hi:+.1f}]", "tables": len(part),
            "coverage": cover, "se": se, "mean error": _mean(part["error"]),
            "none break": int(zero.sum()), "their coverage": _rate(part[zero])[0],
            "some break": int((~zero).sum()), "theirs": _rate(part[~zero])[0],
        })  # fmt: skip
    return pd.DataFrame(out)


def zero_by_prompts(tables: pd.DataFrame) -> pd.DataFrame:
    """Per prompt count: the tables where no resample breaks the condition against the
    rest (tables, coverage, mean error of the estimate, prompts lost on)."""
    out = []
    for n, part in tables.groupby("prompts"):
        for name, x in (
            ("none break", part[part["share"] == 0]),
            ("some break", part[part["share"] > 0]),
        ):
            cover, se = _rate(x)
            out.append({
                "prompts": n, "resamples": name, "tables": len(x), "coverage": cover,
                "se": se, "mean error": _mean(x["error"]), "mean lost on": _mean(x["lost_on"]),
            })  # fmt: skip
    return pd.DataFrame(out)


def _rate(x: pd.DataFrame) -> tuple[float, float]:
    """The share of ``x``'s intervals holding the planted value and its binomial
    standard error (NaN for no tables)."""
    if not len(x):
        return float("nan"), float("nan")
    m = float(x["holds"].mean())
    return m, float(np.sqrt(m * (1 - m) / len(x)))


def _mean(x: pd.Series) -> float:
    return float(x.mean()) if len(x) else float("nan")


def share_table(tables: pd.DataFrame) -> pd.DataFrame:
    """Coverage per bin of the share (:data:`SHARE_BINS`; the first bin: none), with its
    binomial standard error, and coverage above each bin's lower end."""
    out = []
    for lo, hi in itertools.pairwise(SHARE_BINS):
        inside = tables[(tables["share"] > lo) & (tables["share"] <= hi)]
        if lo == 0.0:  # none, then (0, 5%]
            for name, part in (("0", tables[tables["share"] == 0]), (f"(0, {hi:.0%}]", inside)):
                out.append(_covered(name, part, tables[tables["share"] > 0]))
            continue
        out.append(_covered(f"({lo:.0%}, {hi:.0%}]", inside, tables[tables["share"] > lo]))
    return pd.DataFrame(out)


def _covered(name: str, part: pd.DataFrame, above: pd.DataFrame) -> dict[str, object]:
    cover, se = _rate(part)
    cover_above, se_above = _rate(above)
    by_tau = {t: float(part[part["tau"] == t]["holds"].mean()) for t in (0.0, 0.3)}
    return {
        "share": name, "tables": len(part), "coverage": cover, "se": se,
        "no self term": by_tau[0.0], "tau 0.3": by_tau[0.3],
        "median width": float(part["width"].median()) if len(part) else float("nan"),
        "tables above lower end": len(above), "coverage above": cover_above,
        "se above": se_above,
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=100, help="tables per cell")
    parser.add_argument("--prompts", type=int, nargs="+", default=[12, 20, 30])
    parser.add_argument("--compare", type=int, default=12, help="prompts of the compared cells")
    parser.add_argument("--n-boot", type=int, default=300)
    parser.add_argument(
        "--by-share", type=int, nargs="+", metavar="PROMPTS",
        help="instead: coverage by the share of resamples that break the condition, over "
        "--reps tables per prompt count and self term",
    )  # fmt: skip
    parser.add_argument("--own-rate", type=float, default=0.95, help="with --by-share")
    parser.add_argument("--kappa", type=float, default=3.0, help="with --by-share")
    parser.add_argument("--csv", help="with --by-share: write each table's row here")
    parser.add_argument(
        "--label-auto", action="store_true",
        help="with --by-share: the label term as the audit sets it (near the ceiling)",
    )  # fmt: skip
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    pd.set_option("display.width", 220)
    start = time.perf_counter()
    if args.by_share:
        label: LabelTerm = "auto" if args.label_auto else False
        tables = by_share(args.by_share, args.reps, args.n_boot, args.own_rate, args.kappa, label)
        if args.csv:
            tables.to_csv(args.csv, index=False)
        print(
            f"{len(tables)} tables ({args.reps} per prompt count {args.by_share} and self "
            f"term, full sample passing; own rate {args.own_rate}, competence {args.kappa}, "
            f"label term {label}), "
            f"{args.n_boot} resamples, {LEVEL:.0%} intervals"
        )
        print(share_table(tables).round(3).to_string(index=False))
        print("\nno resample breaking the condition, per prompt count:")
        print(zero_by_prompts(tables).round(3).to_string(index=False))
        print(
            "\nby the prompts the judge's own model lost on in the labels, over its cell's "
            "mean (excess):"
        )
        print(excess_table(tables).round(3).to_string(index=False))
        above = tables[tables["share"] > 0.1]["holds"]
        mean = float(above.mean()) if len(above) else float("nan")
        se = float(np.sqrt(mean * (1 - mean) / max(len(above), 1)))
        share_targets = Targets()
        share_targets.at_least(
            "coverage where more than a tenth of resamples break it, plus two binomial "
            "standard errors",
            mean + 2 * se,
            0.85,
            scaled=False,
        )
        print(f"({time.perf_counter() - start:.0f} s)")
        share_targets.finish()
        return
    rows = [
        cell(n, tau, args.reps, args.n_boot, compare=n == args.compare)
        for n in args.prompts
        for tau in (0.0, 0.3)
    ]
    table = pd.DataFrame(rows)
    print(f"{args.reps} tables per cell, {args.n_boot} resamples, {LEVEL:.0%} intervals")
    print(table.round(3).to_string(index=False))
    held = float((table["kept"] * table["tables"]).sum())
    n = float(table["tables"].sum())
    mean = held / n
    se = float(np.sqrt(mean * (1 - mean) / n))
    targets = Targets()
    targets.at_least(
        "kept interval's coverage, pooled, plus two binomial standard errors",
        mean + 2 * se,
        0.85,
        scaled=False,
    )
    print(f"({time.perf_counter() - start:.0f} s)")
    targets.finish()


if __name__ == "__main__":
    main()
