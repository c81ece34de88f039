"""Calibration: ECE and Brier by hand, isotonic recalibration against sklearn, and
cross-fitting that keeps every row's recalibrated value out of sample."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.isotonic import IsotonicRegression

from recuse.metrics.calibration import (
    _isotonic,
    brier_score,
    expected_calibration_error,
    gives_probabilities,
    recalibrate,
    reliability_table,
)

BOOT = {"n_boot": 200, "min_n": 1, "seed": 0}


def _table() -> pd.DataFrame:
    """Six pairs. y = human as 0/1; the tie (row 6) is left out.
    bins (10, equal width): 0.95 and 0.91 -> bin 9: sum(p - y) = (0.95-1) + (0.91-0) = 0.86
    0.15 -> bin 1: 0.15 - 1 = -0.85;  0.05 -> bin 0: 0.05 - 1 = -0.95;  0.55 -> bin 5: 0.55
    ECE = (0.86 + 0.85 + 0.95 + 0.55) / 5 = 0.642
    Brier = (0.05² + 0.91² + 0.85² + 0.95² + 0.55²)/5 = (0.0025 + 0.8281 + 0.7225 + 0.9025
            + 0.3025)/5 = 0.55162"""
    return pd.DataFrame(
        {
            "item_id": list("abcdef"),
            "prompt_id": list("abcdef"),
            "judge": "j",
            "human": [1.0, 0.0, 1.0, 1.0, 0.0, 0.5],
            "p_a": [0.95, 0.91, 0.15, 0.05, 0.55, 0.7],
        }
    )


def test_ece_and_brier_by_hand() -> None:
    t = _table()
    ece = expected_calibration_error(t, **BOOT)  # type: ignore[arg-type]
    assert ece.estimate == pytest.approx(0.642) and ece.n == 5
    assert brier_score(t, **BOOT).estimate == pytest.approx(0.55162)  # type: ignore[arg-type]
    rel = reliability_table(t["p_a"], [1, 0, 1, 1, 0, np.nan])
    assert rel.loc[9, "n"] == 2 and rel.loc[9, "observed"] == 0.5
    assert rel.loc[9, "mean_p"] == pytest.approx(0.93)
    assert not gives_probabilities(np.array([0.0, 0.5, 1.0])) and gives_probabilities(t["p_a"])


def test_isotonic_equals_sklearn() -> None:
    rng = np.random.default_rng(0)
    x = rng.random(300).round(2)
    y = (rng.random(300) < x**2).astype(float)
    ux, fitted = _isotonic(x, y)
    new = np.linspace(-0.1, 1.1, 57)
    ref = IsotonicRegression(out_of_bounds="clip").fit(x, y).predict(new)
    assert np.interp(new, ux, fitted) == pytest.approx(ref, abs=1e-12)


def _miscalibrated(n: int, seed: int) -> pd.DataFrame:
    """A judge whose stated p is over-confident: the true P(a) is 0.5 + (p - 0.5) / 2."""
    rng = np.random.default_rng(seed)
    p = rng.random(n)
    y = (rng.random(n) < 0.5 + (p - 0.5) / 2).astype(float)
    return pd.DataFrame(
        {"item_id": [f"i{i}" for i in range(n)], "prompt_id": [f"p{i // 2}" for i in range(n)],
         "judge": "j", "human": y, "p_a": p}
    )  # fmt: skip


def test_recalibration_removes_planted_miscalibration_out_of_sample() -> None:
    # population ECE of the raw p over 10 bins: E|p - (0.5 + (p - 0.5)/2)| = E|p - 0.5|/2
    # = 0.125 for p ~ U(0, 1) (binning a linear gap changes nothing here)
    t = _miscalibrated(3000, seed=1)
    raw = expected_calibration_error(t, n_boot=200)
    assert raw.ci_low <= 0.125 + 0.01 and raw.ci_high >= 0.125 - 0.01
    for method in ("isotonic", "platt"):
        r = recalibrate(t, method=method, seed=0)  # type: ignore[arg-type]
        after = expected_calibration_error(r, column="p_a_recalibrated", n_boot=200)
        assert after.estimate < 0.04, method
        assert (
            brier_score(r, column="p_a_recalibrated", n_boot=200).estimate
            < brier_score(t, n_boot=200).estimate
        )


def test_cross_fitting_keeps_a_rows_own_label_out() -> None:
    t = _miscalibrated(400, seed=2)
    a = recalibrate(t, method="platt", seed=3)["p_a_recalibrated"]
    flipped = t.copy()
    flipped.loc[0, "human"] = 1.0 - flipped.loc[0, "human"]
    b = recalibrate(flipped, method="platt", seed=3)["p_a_recalibrated"]
    assert a[0] == b[0]  # its own label did not enter its own prediction
    assert (a != b).sum() > 100  # ... but entered the other folds' maps


def test_an_interval_that_misses_its_estimate_says_so() -> None:
    """A perfectly calibrated judge (labels drawn from its own probabilities): the ECE
    of a sample sits above 0 and its resamples higher still, so the BCa interval fell
    wholly below the estimate, about 0.001 wide (0.032 [0.026, 0.027]), with no word
    of warning. The result now says the interval does not hold it; a well-behaved
    statistic on the same pairs (Brier) gets no such warning."""
    rng = np.random.default_rng(1)
    n = 400
    p = rng.uniform(0, 1, n)
    y = (np.random.default_rng(5).uniform(0, 1, n) < p).astype(float)
    t = pd.DataFrame({"item_id": [f"i{i}" for i in range(n)],
                      "prompt_id": [f"q{i}" for i in range(n)],
                      "judge": "j", "human": y, "p_a": p})  # fmt: skip
    ece = expected_calibration_error(t, n_boot=2000, seed=0)
    assert not ece.ci_low <= ece.estimate <= ece.ci_high  # the defect the warning names
    assert any("does not hold the estimate" in w for w in ece.warnings)
    brier = brier_score(t, n_boot=2000, seed=0)
    assert brier.ci_low <= brier.estimate <= brier.ci_high
    assert not any("does not hold" in w for w in brier.warnings)
