"""The calibrated self-preference says when its prediction extrapolates the judge's
competence curve: most of its own pairs lie far beyond the strength gaps of the pairs
its competence is learnt on (:func:`extrapolation_warning`).

The gaps are worked out by hand (a tree of labelled comparisons, whose Bradley–Terry
fit reproduces each edge's log-odds exactly) or from :func:`label_strengths` on the
committed JudgeBench per-pair file (SmolLM2-135M, whose number docs/self-preference.md
explains as an extrapolation), and the estimate there is recomputed from its formula
with scipy; a simulated strong author whose own pairs are wider apart than the
others, where the logistic model is true, is not marked.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, special

from recuse.metrics import pairwise_bias
from recuse.metrics.bootstrap import Resampling
from recuse.metrics.competence import (
    EXTRAPOLATION_FACTOR,
    calibrated_self_preference,
    extrapolation_warning,
    label_strengths,
)
from recuse.metrics.familiarity_mediation import familiarity_mediation
from recuse.report.html import warning_tag
from recuse.simulate.self_preference import (
    OTHER_STRENGTHS,
    AuthorJudge,
    simulate_self_preference,
    theta_for_own_rate,
)
from recuse.tables import validate_pairs

OUTPUT = Path(__file__).resolve().parents[2] / "examples" / "output"
SMOL = "smollm2-135m-instruct"
QWEN = "qwen2.5-coder-0.5b-instruct"


def _extrapolated(warnings: tuple[str, ...]) -> list[str]:
    return [w for w in warnings if w.startswith("extrapolated competence")]


def _logit_mle(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted (fractional) logistic maximum likelihood, no intercept, by scipy."""

    def nll(t: np.ndarray) -> float:
        eta = x @ t
        return float(-np.sum(w * (y * eta - np.logaddexp(0.0, eta))))

    def grad(t: np.ndarray) -> np.ndarray:
        return -(x.T @ (w * (y - special.expit(x @ t))))

    fit = optimize.minimize(nll, np.zeros(x.shape[1]), jac=grad, method="BFGS",
                            options={"gtol": 1e-12})  # fmt: skip
    return np.asarray(fit.x, float)


def _calibrated_by_hand(pairs: pd.DataFrame, judge: str) -> tuple[float, dict[str, float]]:
    """The calibrated self-preference from its formula, fitted here with scipy: the
    models' Bradley–Terry strengths from the judge's human labels (each item once), the
    competence ``logit P(a) = κ g + β·first + τ·own`` on every judged order (weight
    1 / orders judged), then the mean over its own pairs of (own pick − π), π the
    order-averaged predicted own pick with τ set to 0. Returns it and the strengths."""
    rows = pairs[pairs["judge"] == judge].reset_index(drop=True)
    lab = rows[rows["human"].notna()].drop_duplicates("item_id")
    lab = lab[lab["model_a"] != lab["model_b"]]
    models = sorted({*lab["model_a"], *lab["model_b"]})
    col = {m: i for i, m in enumerate(models)}
    design = np.zeros((len(lab), len(models)))
    design[np.arange(len(lab)), lab["model_a"].map(col)] += 1.0
    design[np.arange(len(lab)), lab["model_b"].map(col)] -= 1.0
    t = _logit_mle(design[:, 1:], lab["human"].to_numpy(float), np.ones(len(lab)))
    s = dict(zip(models, np.r_[0.0, t], strict=True))  # differences are what matter
    use = rows[rows["model_a"].isin(s) & rows["model_b"].isin(s)]
    use = use[use["model_a"] != use["model_b"]].reset_index(drop=True)
    gap = (use["model_a"].map(s) - use["model_b"].map(s)).to_numpy(float)
    own = np.where(use["model_a"] == judge, 1.0, np.where(use["model_b"] == judge, -1.0, 0.0))
    long = []
    for column, first in (("p_a_first", 1.0), ("p_a_second", -1.0)):
        y = use[column].to_numpy(float)
        ok = np.isfinite(y)
        long.append(pd.DataFrame({"pair": np.flatnonzero(ok), "y": y[ok], "g": gap[ok],
                                  "first": first, "own": own[ok]}))  # fmt: skip
    d = pd.concat(long, ignore_index=True)
    d["w"] = 1.0 / d.groupby("pair")["pair"].transform("size")
    kappa, beta, _tau = _logit_mle(
        d[["g", "first", "own"]].to_numpy(), d["y"].to_numpy(), d["w"].to_numpy()
    )
    pi_a = special.expit(kappa * d["g"] + beta * d["first"])
    d["pick"] = d["w"] * np.where(d["own"] > 0, d["y"], 1 - d["y"])
    d["pi"] = d["w"] * np.where(d["own"] > 0, pi_a, 1 - pi_a)
    per_pair = d[d["own"] != 0].groupby("pair")[["pick", "pi"]].sum()
    return float((per_pair["pick"] - per_pair["pi"]).mean()), s


def _tree_table(seed: int = 0) -> pd.DataFrame:
    """Judge "j" (also an author) and models x, y, z. Labelled edges, 20 items each:
    j beats x in 4 (s_j − s_x = logit 0.2), x beats y in 9 and y beats z in 9
    (logit 0.45 each: z is the strongest). The judge also judges j–y, j–z and x–z
    (unlabelled), every pair in both orders with coin-flip picks."""
    rng = np.random.default_rng(seed)
    rows = []
    edges = [("j", "x", 4), ("x", "y", 9), ("y", "z", 9), ("j", "y", None),
             ("j", "z", None), ("x", "z", None)]  # fmt: skip
    for a, b, wins in edges:
        for i in range(20):
            human = np.nan if wins is None else float(i < wins)
            rows.append({"item_id": f"{a}{b}{i}", "prompt_id": f"p{i}", "model_a": a,
                         "model_b": b, "human": human, "judge": "j"})  # fmt: skip
    t = pd.DataFrame(rows)
    t["p_a_first"] = rng.integers(0, 2, len(t)).astype(float)
    t["p_a_second"] = rng.integers(0, 2, len(t)).astype(float)
    t["p_a"] = np.nan
    return validate_pairs(t)


def test_fires_on_a_smollm2_like_geometry_with_the_gaps_worked_out_by_hand() -> None:
    r = calibrated_self_preference(_tree_table(), judge="j", boot=Resampling(n_boot=50))
    xy = -special.logit(0.45)  # |s_x − s_y| = |s_y − s_z|; x–z is both: 2 * xy
    jx = -special.logit(0.2)  # |s_j − s_x|, x above j, y and z further up
    own = [jx, jx + xy, jx + 2 * xy]  # j–x, j–y, j–z
    other = [xy, xy, 2 * xy]
    assert min(own) > EXTRAPOLATION_FACTOR * max(other)  # 1.386 > 3 × 0.401
    (words,) = _extrapolated(r.warnings)
    assert words.startswith(
        f"extrapolated competence: its own pairs are {min(own):.2f}–{max(own):.2f} apart "
        f"in model strength, the pairs its competence is learnt on "
        f"{min(other):.2f}–{max(other):.2f}; all its own pairs are more than 3× as far "
        "apart as any of those"
    )
    assert "1.39–1.79" in words and "0.20–0.40" in words  # the same, in figures
    assert warning_tag(words) == "extrapolated competence"  # the report's cell tag


def test_fires_on_the_committed_smollm2_pairs_and_names_the_readme_ranges() -> None:
    pairs = pd.read_csv(OUTPUT / "familiarity_judgebench_pairs.csv")
    r = calibrated_self_preference(pairs, judge=SMOL, boot=Resampling(n_boot=20))
    (words,) = _extrapolated(r.warnings)
    # by hand: the strengths from the judge's labelled rows, the gaps of its rows
    rows = pairs[pairs["judge"] == SMOL]
    s = label_strengths(rows)
    gap = (rows["model_a"].map(s) - rows["model_b"].map(s)).abs()
    own = (rows["model_a"] == SMOL) | (rows["model_b"] == SMOL)
    lo, hi = gap[own].min(), gap[own].max()
    olo, ohi = gap[~own].min(), gap[~own].max()
    assert (round(lo, 2), round(hi, 2), round(olo, 2), round(ohi, 2)) == (1.03, 1.17, 0.11, 0.25)
    assert f"its own pairs are {lo:.2f}–{hi:.2f} apart" in words
    assert f"learnt on {olo:.2f}–{ohi:.2f}; all its own pairs" in words
    # the estimate and the gaps, worked out again from the formula with scipy's optimiser
    # (not the package's Newton fits)
    by_hand, s_hand = _calibrated_by_hand(pairs, SMOL)
    assert r.estimate == pytest.approx(by_hand, abs=1e-7)
    gap_hand = (rows["model_a"].map(s_hand) - rows["model_b"].map(s_hand)).abs()
    np.testing.assert_allclose(gap_hand, gap, atol=1e-6)
    assert r.components["own_pick_rate"] - r.components["predicted_own_pick_rate"] == (
        pytest.approx(by_hand, abs=1e-7)
    )
    # the committed number, a second check
    assert r.estimate == pytest.approx(0.13459169797851972, abs=1e-9)
    # Qwen's own pairs are the narrower ones (0.11–0.25 against 1.03–1.17): between the
    # model's anchor at gap 0 and the gaps seen, not beyond them — no mark
    q = calibrated_self_preference(pairs, judge=QWEN, boot=Resampling(n_boot=20))
    assert not _extrapolated(q.warnings)


def test_the_mark_reaches_the_multi_judge_path_and_the_mediation_parts_resting_on_it() -> None:
    pairs = pd.read_csv(OUTPUT / "familiarity_judgebench_pairs.csv")
    res = pairwise_bias(pairs, metrics=["self_preference_calibrated"], boot=Resampling(n_boot=20))
    marked = {r.judge for r in res.results if _extrapolated(r.warnings)}
    assert marked == {SMOL}
    parts = {
        m.metric: m for m in familiarity_mediation(pairs, judge=SMOL, boot=Resampling(n_boot=20))
    }
    assert _extrapolated(parts["familiarity_direct"].warnings)
    assert _extrapolated(parts["familiarity_share"].warnings)
    assert not _extrapolated(parts["familiarity_indirect"].warnings)  # learnt on other pairs


def test_a_strong_author_whose_model_is_right_is_not_marked() -> None:
    strengths = {"m0": theta_for_own_rate(0.95, OTHER_STRENGTHS), **OTHER_STRENGTHS}
    sim = simulate_self_preference({"m0": AuthorJudge(3.0, 1.5)}, strengths, n_prompts=80, seed=3)
    r = calibrated_self_preference(sim.pairs, judge="m0", boot=Resampling(n_boot=50))
    assert not _extrapolated(r.warnings)
    # its own pairs do lie beyond the others' gaps: being strong alone does not fire it
    rows = sim.pairs
    s = label_strengths(rows)
    gap = (rows["model_a"].map(s) - rows["model_b"].map(s)).abs()
    own = (rows["model_a"] == "m0") | (rows["model_b"] == "m0")
    assert gap[own].median() > gap[~own].max()
    assert gap[own].median() < EXTRAPOLATION_FACTOR * gap[~own].max()


def test_most_of_the_own_weight_must_lie_beyond() -> None:
    other = np.array([0.1, 0.5])  # beyond = more than 1.5
    half = extrapolation_warning(
        own_gaps=np.array([1.0, 2.0]), own_weights=np.array([3.0, 3.0]), other_gaps=other
    )
    assert half is None  # exactly half: not most
    most = extrapolation_warning(
        own_gaps=np.array([1.0, 2.0]), own_weights=np.array([2.0, 4.0]), other_gaps=other
    )
    assert most is not None
    assert "its own pairs are 1.00–2.00 apart" in most and "learnt on 0.10–0.50" in most
    assert "4 of its 6 own pairs are more than 3× as far apart" in most
    at_the_edge = extrapolation_warning(
        own_gaps=np.array([1.5]), own_weights=np.array([1.0]), other_gaps=other
    )
    assert at_the_edge is None  # 3 × 0.5 is not beyond
    assert extrapolation_warning(
        own_gaps=np.array([1.2]), own_weights=np.array([1.0]), other_gaps=other, factor=2.0
    )


@pytest.mark.parametrize(
    ("own_gaps", "own_weights", "other_gaps", "factor", "field"),
    [
        ([1.0], [1.0], [-0.5], 3.0, "other_gaps"),  # signed gaps: would fire on any own gap
        ([-2.0], [1.0], [0.1], 3.0, "own_gaps"),  # would silently never fire
        ([np.nan], [1.0], [0.1], 3.0, "own_gaps"),
        ([1.0], [1.0], [0.1, np.inf], 3.0, "other_gaps"),
        ([1.0, 2.0], [1.0], [0.1], 3.0, "own_weights"),  # one weight per own gap
        ([1.0], [-1.0], [0.1], 3.0, "own_weights"),
        ([1.0], [1.0], [0.1], 0.0, "factor"),
        ([1.0], [1.0], [0.1], np.nan, "factor"),
    ],
)
def test_bad_gaps_weights_or_factor_are_refused_not_read(
    own_gaps: list[float],
    own_weights: list[float],
    other_gaps: list[float],
    factor: float,
    field: str,
) -> None:
    from recuse.errors import ConfigError

    with pytest.raises(ConfigError, match=field):
        extrapolation_warning(
            own_gaps=np.array(own_gaps),
            own_weights=np.array(own_weights),
            other_gaps=np.array(other_gaps),
            factor=factor,
        )
