"""Agreement: accuracy, Cohen's kappa and Krippendorff's alpha on hand-worked tables,
against sklearn / krippendorff, and a planted accuracy recovered by its interval."""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from recuse.errors import EstimationError
from recuse.metrics.agreement import (
    accuracy,
    cohen_kappa,
    human_sides,
    krippendorff_alpha,
    pair_verdicts,
)
from recuse.metrics.bootstrap import Resampling
from recuse.simulate import PlantedBias, simulate_pairs

BOOT = {"boot": Resampling(n_boot=200, seed=0), "min_n": 1}


def _table() -> pd.DataFrame:
    """Six pairs, one judge. Per-order picks -> pair verdict:
    1: a,a -> a   (human a)   credit 1
    2: a,b -> tie (human a)   credit 0.5 (a flip)
    3: tie,tie -> tie (human b) credit 0.5
    4: b,tie -> b (human b)   credit 1
    5: a,a -> a   (human b)   credit 0
    6: b,b -> b   (human tie) left out of accuracy, kept in kappa as tie
    accuracy = (1 + 0.5 + 0.5 + 1 + 0) / 5 = 0.6"""
    return pd.DataFrame(
        {
            "item_id": list("123456"),
            "prompt_id": list("pqrstu"),
            "judge": "j",
            "human": [1.0, 1.0, 0.0, 0.0, 0.0, 0.5],
            "p_a_first": [0.9, 0.8, 0.5, 0.2, 1.0, 0.0],
            "p_a_second": [0.7, 0.3, 0.5, 0.5, 1.0, 0.1],
            "p_a": [0.8, 0.55, 0.5, 0.35, 1.0, 0.05],
        }
    )


def test_pair_verdict_rule_and_accuracy_by_hand() -> None:
    t = _table()
    assert pair_verdicts(t).tolist() == [1, 0, 0, -1, 1, -1]
    assert human_sides(t).tolist() == [1, 1, -1, -1, -1, 0]
    r = accuracy(t, **BOOT)  # type: ignore[arg-type]
    assert r.estimate == pytest.approx(0.6) and r.n == 5


def test_kappa_by_hand_and_against_sklearn() -> None:
    t = _table()
    # categories b=0, tie=1, a=2; (judge, human): (2,2) (1,2) (1,0) (0,0) (2,0) (0,1)
    # judge marginals r = (2, 2, 2)/6, human c = (3, 1, 2)/6; observed agreement 2/6.
    # unweighted: p_e = (2*3 + 2*1 + 2*2)/36 = 1/3, kappa = (1/3 - 1/3)/(1 - 1/3) = 0
    # linear weights w=|i-j|/2: observed disagreement = (0 + .5 + .5 + 0 + 1 + .5)/6 = 5/12;
    # expected = sum_ij w_ij r_i c_j = (1/36)[2*(0*3+.5*1+1*2) + 2*(.5*3+0+.5*2)
    #            + 2*(1*3+.5*1+0)] = (1/36)(5 + 5 + 7) = 17/36; kappa = 1 - (5/12)/(17/36) = 2/17
    un = cohen_kappa(t, weights="none", **BOOT)  # type: ignore[arg-type]
    lin = cohen_kappa(t, weights="linear", **BOOT)  # type: ignore[arg-type]
    assert un.estimate == pytest.approx(0.0, abs=1e-12)
    assert lin.estimate == pytest.approx(2 / 17)
    v, h = pair_verdicts(t), human_sides(t)
    assert lin.estimate == pytest.approx(cohen_kappa_score(v, h, weights="linear"))
    sim = simulate_pairs(judges={"gpt-4": PlantedBias(accuracy=0.7, position=0.1)},
                         n_prompts=80, seed=2).pairs  # fmt: skip
    v, h = pair_verdicts(sim), human_sides(sim)
    ok = np.isfinite(v) & np.isfinite(h)
    got = cohen_kappa(sim, boot=Resampling(n_boot=200)).estimate
    assert got == pytest.approx(cohen_kappa_score(v[ok], h[ok], weights="linear"), abs=1e-12)


def test_alpha_by_hand_and_against_krippendorff() -> None:
    # three items, two judges. Item 1: a, a; item 2: a, b; item 3: b, b (nominal)
    # coincidences o_aa = 2, o_bb = 2, o_ab = o_ba = 1; n_a = n_b = 3, n = 6
    # D_o = (1 + 1)/6, D_e = 2 * 3 * 3 / (6 * 5) = 0.6 -> alpha = 1 - (1/3)/0.6 = 4/9
    t = pd.DataFrame(
        {
            "item_id": ["1", "1", "2", "2", "3", "3"],
            "prompt_id": ["p", "p", "q", "q", "r", "r"],
            "judge": ["x", "y"] * 3,
            "human": 1.0,
            "p_a_first": [1.0, 1.0, 1.0, 0.0, 0.0, 0.0],
            "p_a_second": np.nan,
            "p_a": [1.0, 1.0, 1.0, 0.0, 0.0, 0.0],
        }
    )
    r = krippendorff_alpha(t, level_of_measurement="nominal", **BOOT)  # type: ignore[arg-type]
    assert r.estimate == pytest.approx(4 / 9) and r.n == 3
    sim = simulate_pairs(n_prompts=80, seed=4).pairs
    wide = sim.assign(v=pair_verdicts(sim)).pivot(index="item_id", columns="judge", values="v")
    for level in ("nominal", "ordinal", "interval"):
        ref = krippendorff.alpha(reliability_data=wide.to_numpy().T, level_of_measurement=level,
                                 value_domain=[-1, 0, 1])  # fmt: skip
        got = krippendorff_alpha(sim, level_of_measurement=level, boot=Resampling(n_boot=200))  # type: ignore[arg-type]
        assert got.estimate == pytest.approx(ref, abs=1e-10), level
        assert got.ci_low <= got.estimate <= got.ci_high
    with pytest.raises(EstimationError, match="two or more judges"):
        krippendorff_alpha(sim[sim["judge"] == "gpt-4"], boot=Resampling(n_boot=200))


def test_planted_accuracy_is_covered_by_its_interval() -> None:
    """No verbosity/self terms: the population accuracy is the planted one (a position
    share flips, earning half, which the simulator offsets)."""
    hits = 0
    reps = 60
    for seed in range(reps):
        sim = simulate_pairs(judges={"gpt-4": PlantedBias(accuracy=0.7, position=0.1)},
                             n_prompts=60, pairs_per_prompt=2, seed=seed).pairs  # fmt: skip
        r = accuracy(sim, boot=Resampling(n_boot=200, seed=seed))
        hits += r.ci_low <= 0.7 <= r.ci_high
    assert hits / reps >= 0.8  # nominal 0.9; 60 replicates: sd about 0.04


def test_accuracy_p_value_is_against_chance_not_zero() -> None:
    """The p-value of accuracy is against chance, 0.5 (its no-bias value in the report),
    not 0: a judge right on exactly half of 80 pairs has p near 1; before, it was
    tested against 0 and got the smallest p the resamples resolve (about 0.01)."""
    n = 80
    right = (np.arange(n) // 2) % 2 == 0  # right on both pairs of every other prompt
    t = pd.DataFrame(
        {
            "item_id": [f"i{k}" for k in range(n)],
            "prompt_id": [f"q{k // 2}" for k in range(n)],
            "judge": "j",
            "human": 1.0,
            "p_a_first": np.where(right, 1.0, 0.0),
            "p_a_second": np.where(right, 1.0, 0.0),
            "p_a": np.where(right, 1.0, 0.0),
        }
    )
    r = accuracy(t, boot=Resampling(n_boot=400, seed=0))
    assert r.estimate == pytest.approx(0.5)
    assert r.p_value > 0.5
    sure = accuracy(
        t.assign(p_a_first=1.0, p_a_second=1.0, p_a=1.0).assign(human=np.where(right, 1.0, 0.6)),
        boot=Resampling(n_boot=400, seed=0),
    )
    assert sure.estimate == 1.0 and sure.p_value < 0.05


def test_a_judge_that_flips_on_every_pair_is_not_told_to_add_harder_pairs() -> None:
    """SmolLM2 picked the answer shown first in both orders on every pair: each pair a
    flip earning half, agreement 0.50 [0.50, 0.50], and the warning's fix read "add
    harder pairs", the fix for a judge always right. It names both cases now."""
    n = 24
    t = pd.DataFrame(
        {
            "item_id": [f"i{k}" for k in range(n)],
            "prompt_id": [f"q{k}" for k in range(n)],
            "judge": "j",
            "human": np.where(np.arange(n) % 2 == 0, 1.0, 0.0),
            "p_a_first": 0.8,  # a, shown first
            "p_a_second": 0.2,  # b, shown first
        }
    )
    r = accuracy(t, boot=Resampling(n_boot=200, seed=1))
    assert (r.estimate, r.ci_low, r.ci_high) == (0.5, 0.5, 0.5)
    (said,) = [w for w in r.warnings if w.startswith("no variation in the resamples")]
    assert "a tie where it flips with the order" in said
    assert "always right — add harder pairs —" in said
