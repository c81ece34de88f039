"""Calibration: ECE and Brier by hand, isotonic recalibration against sklearn, and
cross-fitting that keeps every row's recalibrated value out of sample."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from sklearn.isotonic import IsotonicRegression

from recuse.errors import ConfigError, EstimationError
from recuse.metrics.bootstrap import Resampling
from recuse.metrics.calibration import (
    brier_score,
    debiased_ece,
    effective_df,
    expected_calibration_error,
    gives_probabilities,
    isotonic_fit,
    recalibrate,
    reliability_table,
)
from recuse.simulate.pairs import PlantedBias, simulate_pairs

BOOT = {"boot": Resampling(n_boot=200, seed=0), "min_n": 1}


def _table() -> pd.DataFrame:
    """Six pairs. y = human as 0/1; the tie (row 6) is left out.
    bins (10, equal width): 0.95 and 0.91 -> bin 9: sum(p - y) = (0.95-1) + (0.91-0) = 0.86
    0.15 -> bin 1: 0.15 - 1 = -0.85;  0.05 -> bin 0: 0.05 - 1 = -0.95;  0.55 -> bin 5: 0.55
    plug-in ECE = (0.86 + 0.85 + 0.95 + 0.55) / 5 = 0.642
    debiased squared error: only bin 9 holds two prompts: weight 2 / (5 (2² - 2)) = 0.2,
    (0.86² - 0.05² - 0.91²) * 0.2 = (0.7396 - 0.8306) * 0.2 = -0.0182 -> ECE 0
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
    assert ece.components["ece_plugin"] == pytest.approx(0.642) and ece.n == 5
    assert ece.components["squared_error"] == pytest.approx(-0.0182) and ece.estimate == 0.0
    brier = brier_score(t, **BOOT)  # type: ignore[arg-type]
    assert brier.estimate == pytest.approx(0.55162)
    # quality scores: their floor 0 is no null a test rejects, so no p-value
    assert np.isnan(ece.p_value) and np.isnan(brier.p_value)
    # an error and a mean square, never below 0: no signed difference (no '+')
    assert not ece.signed and not brier.signed and ece.null == brier.null == 0
    assert ece.to_dict()["signed"] is brier.to_dict()["signed"] is False
    rel = reliability_table(t["p_a"], [1, 0, 1, 1, 0, np.nan])
    assert rel.loc[9, "n"] == 2 and rel.loc[9, "observed"] == 0.5
    assert rel.loc[9, "mean_p"] == pytest.approx(0.93)
    assert not gives_probabilities(np.array([0.0, 0.5, 1.0])) and gives_probabilities(t["p_a"])


def test_isotonic_equals_sklearn() -> None:
    rng = np.random.default_rng(0)
    x = rng.random(300).round(2)
    y = (rng.random(300) < x**2).astype(float)
    ux, fitted = isotonic_fit(x, y)
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
    raw = expected_calibration_error(t, boot=Resampling(n_boot=200))
    # the debiased error is the root mean square gap: E[(p - 0.5)²/4] = 1/48 for
    # p ~ U(0, 1), less the gap's spread inside a bin (0.1² / 12 / 4 = 1/4800):
    # sqrt(0.020625) = 0.1436
    assert raw.ci_low <= 0.1436 <= raw.ci_high
    assert raw.components["ece_plugin"] == pytest.approx(0.125, abs=0.01)
    for method in ("isotonic", "platt"):
        r = recalibrate(t, method=method, seed=0)  # type: ignore[arg-type]
        after = expected_calibration_error(
            r, column="p_a_recalibrated", boot=Resampling(n_boot=200)
        )
        assert after.estimate < 0.04, method
        assert (
            brier_score(r, column="p_a_recalibrated", boot=Resampling(n_boot=200)).estimate
            < brier_score(t, boot=Resampling(n_boot=200)).estimate
        )


def test_cross_fitting_keeps_a_rows_own_label_out() -> None:
    t = _miscalibrated(400, seed=2)
    a = recalibrate(t, method="platt", seed=3)["p_a_recalibrated"]
    flipped = t.copy()
    flipped.loc[0, "human"] = 1.0 - flipped.loc[0, "human"]
    b = recalibrate(flipped, method="platt", seed=3)["p_a_recalibrated"]
    assert a[0] == b[0]  # its own label did not enter its own prediction
    assert (a != b).sum() > 100  # ... but entered the other folds' maps


def _planted(n: int, slope: float, rng: np.random.Generator) -> tuple[pd.DataFrame, float]:
    """``n`` pairs, two per prompt; stated p ~ Beta(2, 2), the humans prefer a with
    probability ``q = 0.5 + slope (p - 0.5)`` (slope 1: calibrated), written as
    ``p + (slope - 1) (p - 0.5)`` so that slope 1 gives q = p exactly. The planted error:
    sqrt(Σ_b (n_b / n) d_b²), d_b = mean of p - q over the pairs in bin b (worked out
    from q, never from the labels)."""
    p = rng.beta(2.0, 2.0, n)
    q = p + (slope - 1.0) * (p - 0.5)
    y = (rng.random(n) < q).astype(float)
    b = np.minimum((p * 10).astype(int), 9)
    nb = np.bincount(b, minlength=10)
    d = np.bincount(b, weights=p - q, minlength=10) / np.maximum(nb, 1)
    truth = float(np.sqrt((nb / n * d**2).sum()))
    t = pd.DataFrame({"item_id": [f"i{i}" for i in range(n)],
                      "prompt_id": [f"q{i // 2}" for i in range(n)],
                      "judge": "j", "human": y, "p_a": p})  # fmt: skip
    return t, truth


@pytest.mark.parametrize(("slope", "n"), [(1.0, 400), (1.0, 100), (0.7, 400), (0.6, 150)])
def test_the_interval_covers_a_planted_calibration_error_at_its_level(slope: float, n: int) -> None:
    """The plug-in ECE of a perfectly calibrated judge at n = 400 averages about 0.05
    and its BCa interval never held 0 (the old statistic). The debiased error's 90%
    interval holds a planted miscalibration (the binned gap between p and the planted q)
    in 0.85-0.95 of 300 tables, and a calibrated judge's 0 in at least 0.95: at the
    boundary only its lower end can miss (ends below 0 read 0), so it is conservative
    there (0.99-1.0). This test used to plant q = 0.5 + (p - 0.5), which differs from p
    by rounding: the planted "0" was 3e-18, the [0, 0] intervals (13% of tables at
    n = 400) missed it, and the 0.87 it measured at 0 was that artifact. Its plug-in
    component sits near what a calibrated judge's plug-in scores (chance_ece) when
    nothing is planted."""
    rng = np.random.default_rng(int(slope * 100) + n)
    hits, gaps = 0, []
    for _ in range(300):
        t, truth = _planted(n, slope, rng)
        assert (truth == 0.0) == (slope == 1.0)
        r = expected_calibration_error(t, boot=Resampling(level=0.9, seed=0))
        hits += r.ci_low <= truth <= r.ci_high
        gaps.append(r.components["ece_plugin"] - r.components["chance_ece"])
    if slope == 1.0:
        assert hits / 300 >= 0.95
        assert abs(np.mean(gaps)) < 0.005  # the plug-in's excess is chance, and chance_ece says so
    else:
        assert 0.85 <= hits / 300 <= 0.95


def test_an_interval_wholly_below_zero_says_what_it_means() -> None:
    """Labels that follow the probabilities more closely than chance (systematic
    rounding: sorted by p, a row reads 1 where the running sum of p crosses a whole
    number, so every run of rows holds as many 1s as its probabilities sum to, within
    1): the squared error's interval lies below 0, the ECE reads 0 [0, 0] and a warning
    says that this is consistent with calibration, not a measured 0. (Bernoulli labels
    drawn at p read so only while the standard error shrank with ``U``: it is now at
    least ``¾ v_Q``, the variance ``U`` has with no miscalibration.)"""
    n = 400
    p = np.sort(np.random.default_rng(1).uniform(0, 1, n))
    y = np.diff(np.floor(np.concatenate([[0.0], np.cumsum(p)])))
    t = pd.DataFrame({"item_id": [f"i{i}" for i in range(n)],
                      "prompt_id": [f"q{i}" for i in range(n)],
                      "judge": "j", "human": y, "p_a": p})  # fmt: skip
    ece = expected_calibration_error(t, boot=Resampling(seed=0))
    assert ece.components["squared_error"] < 0 and (ece.ci_low, ece.ci_high) == (0.0, 0.0)
    assert any("consistent with calibration" in w for w in ece.warnings)
    assert 0.04 < ece.components["chance_ece"] < 0.06  # what a calibrated judge's plug-in reads
    assert ece.components["ece_plugin"] < 0.01  # far closer than chance


def test_a_judge_without_labelled_pairs_says_none_not_0_pairs() -> None:
    """Before: "0 pairs with a human preference and a probability, 0 prompts; the
    calibration error needs 1 pairs and 2 prompts — add data, or lower min_n ...": a
    judge with no labelled pair reads "no pairs ..." and is told to add data; a judge
    with too few still gets the counts."""
    none = _table().assign(human=np.nan)
    with pytest.raises(EstimationError) as err:
        expected_calibration_error(none, **BOOT)  # type: ignore[arg-type]
    assert str(err.value) == (
        "cannot estimate the calibration error of p_a: no pairs with a human preference "
        "and a probability — add data"
    )
    with pytest.raises(EstimationError) as err:
        expected_calibration_error(_table().iloc[:1], **BOOT)  # type: ignore[arg-type]
    assert (
        "1 pair with a human preference and a probability, 1 prompt; the calibration "
        "error needs 1 pair and 2 prompts — add data" in str(err.value)
    )


def test_the_interval_stays_within_what_a_calibration_error_can_be() -> None:
    """``recuse analyses`` says the calibration error takes values in [0, 1] (a gap
    between a probability and a 0/1 outcome is at most 1); the normal interval of U
    went past it: 4 pairs, p = 0.95, 0.95, 0.05, 0.05, all decided for b, U = 0.452,
    se = 0.41, upper end sqrt(0.452 + 1.96 * 0.41) = 1.12."""
    e = debiased_ece(np.array([0.95, 0.95, 0.05, 0.05]), np.zeros(4), np.arange(4))
    assert e.u + 1.96 * e.se > 1.1  # the case: the normal interval's end beyond 1
    lo, hi = e.interval(0.95)
    assert hi == 1.0 and lo == pytest.approx(np.sqrt(max(e.u - 1.959964 * e.se, 0.0)))
    rng = np.random.default_rng(0)
    for _ in range(300):  # few, confident, mostly wrong pairs: every end within [0, 1]
        n = int(rng.integers(6, 16))
        p = np.where(rng.random(n) < 0.5, rng.uniform(0.9, 1.0, n), rng.uniform(0.0, 0.1, n))
        y = np.where(rng.random(n) < 0.8, p < 0.5, p > 0.5).astype(float)
        lo, hi = debiased_ece(p, y, rng.integers(0, max(2, n // 2), n)).interval(0.95)
        assert 0.0 <= lo <= hi <= 1.0


def test_a_table_sorted_another_way_gives_the_same_calibration_error() -> None:
    """The chance ECE (what a perfectly calibrated judge scores, y ~ Bernoulli(p),
    seeded) drew each row's outcome in row order, so one table shuffled gave another
    chance_ece from the same seed (simulate_pairs(n_prompts=30, seed=1), judge gpt-4:
    0.0204 and 0.0205)."""
    rng = np.random.default_rng(7)
    n = 300
    p = np.round(rng.uniform(0, 1, n), 2)
    table = pd.DataFrame(
        {
            "item_id": [f"i{k}" for k in range(n)],
            "prompt_id": [f"q{k % 60}" for k in range(n)],
            "judge": "j",
            "human": (rng.uniform(0, 1, n) < p).astype(float),
            "p_a": p,
        }
    )
    want = expected_calibration_error(table, **BOOT).to_dict()  # type: ignore[arg-type]
    shuffled = table.sample(frac=1, random_state=3)
    got = expected_calibration_error(shuffled, **BOOT).to_dict()  # type: ignore[arg-type]
    assert got["components"]["chance_ece"] == want["components"]["chance_ece"]
    for key in ("estimate", "ci_low", "ci_high", "std_error"):
        assert got[key] == pytest.approx(want[key], rel=1e-12), key


def test_the_standard_error_is_the_calibration_errors_not_the_squared_errors() -> None:
    """It was the squared error's: 0.0064 beside an ECE of 0.129 [0.078, 0.165] (a
    planted slope of 0.6, 400 pairs on 80 prompts), so `recuse gate` projected 354
    comparisons to decide a bound of 0.14 that 400 had not decided, and report.json's
    detectable bias read 0.016. Now: the standard deviation of sqrt(X), X ~ N(U, se²)
    clamped to [0, 1] as the interval is, checked against the delta method where U is
    far from 0 (a planted slope of 0.2) and by simulation near it."""
    rng = np.random.default_rng(7)
    n = 1000
    p = rng.uniform(0.02, 0.98, n)
    y = (rng.uniform(0, 1, n) < 0.5 + 0.2 * (p - 0.5)).astype(float)
    t = pd.DataFrame({"item_id": [f"i{i}" for i in range(n)],
                      "prompt_id": [f"q{i // 5}" for i in range(n)],
                      "judge": "j", "human": y, "p_a": p})  # fmt: skip
    ece = expected_calibration_error(t, boot=Resampling(seed=0))
    u, se_u = ece.components["squared_error"], ece.components["squared_error_se"]
    assert u > 5 * se_u  # far from 0: the delta method holds
    e = debiased_ece(p, y, np.arange(n) // 5)
    assert e.root_se() == pytest.approx(se_u / (2 * np.sqrt(u)), rel=0.02)
    # on the interval's scale: z se about its half-width (not 4 times less); the
    # interval is Student's at ν (below), so std_error is root_se times t_ν/z
    z = 1.6448536
    assert ece.std_error == pytest.approx(e.root_se() * scipy.stats.t.ppf(0.95, e.df) / z)
    assert z * ece.std_error == pytest.approx((ece.ci_high - ece.ci_low) / 2, rel=0.1)
    draws = np.random.default_rng(3).normal(size=400_000)
    for u_, se_ in ((0.0004, 0.001), (-0.002, 0.001), (0.9, 0.2)):
        e = debiased_ece(np.array([0.5, 0.5]), np.array([0.0, 1.0]), np.arange(2))
        e = type(e)(u_, se_, e.plugin, e.chance, e.n, e.n_clusters)
        simulated = np.sqrt(np.clip(u_ + se_ * draws, 0.0, 1.0)).std()
        assert e.root_se() == pytest.approx(simulated, rel=0.01)
        assert e.root_se() > 0


def _cross_prompt_u(p: np.ndarray, y: np.ndarray, prompt: np.ndarray) -> float:
    """The squared calibration error as its definition reads: per bin, the mean of
    (p_i − y_i)(p_j − y_j) over ordered pairs of rows of different prompts, weighted by
    the bin's share of the rows (written out pair by pair, not as S² − Σ X²)."""
    b = np.minimum((p * 10).astype(int), 9)
    total = 0.0
    for k in range(10):
        i = np.flatnonzero(b == k)
        prods = [(p[r] - y[r]) * (p[s] - y[s]) for r in i for s in i if prompt[r] != prompt[s]]
        if prods:
            total += len(i) / len(p) * float(np.mean(prods))
    return total


def test_the_calibration_error_and_its_interval_by_hand_on_prompts_with_several_pairs() -> None:
    """With several pairs per prompt (200 pairs on 40 prompts, a judge too confident:
    q = 0.5 + 0.3 (p − 0.5)), the squared error is the mean product of the gaps of
    pairs from different prompts, bin by bin (written out here pair by pair), and its
    standard error the jackknife over prompts of that same statistic less half of
    v_Q = 2 Σ_b a_b² ((Σ_c X_cb²)² − Σ_c X_cb⁴), a_b = n_b / (n (n_b² − Σ_c m_cb²)),
    and at least ¾ v_Q: the ECE is its root and the 90% interval the roots of
    U ± t_ν(0.95) se, ν = 3 (Σ δ²)² / Σ δ⁴ − 2 within [1, G − 1] over the
    leave-one-prompt-out δ (it read U ± 1.645 se, then ν = (Σ δ²)² / Σ δ⁴ − 1).
    (JudgeBench's
    reward models, p = σ(r_a − r_b), agree with the same hand computation.)"""
    rng = np.random.default_rng(11)
    n, prompts = 200, 40
    p = rng.uniform(0.0, 1.0, n)
    y = (rng.uniform(0.0, 1.0, n) < 0.5 + 0.3 * (p - 0.5)).astype(float)
    prompt = rng.integers(0, prompts, n)
    t = pd.DataFrame({"item_id": [f"i{k}" for k in range(n)],
                      "prompt_id": [f"q{c}" for c in prompt],
                      "judge": "j", "human": y, "p_a": p})  # fmt: skip
    r = expected_calibration_error(t, boot=Resampling(level=0.9, seed=0))
    u = _cross_prompt_u(p, y, prompt)
    assert r.components["squared_error"] == pytest.approx(u, rel=1e-10)
    assert r.estimate == pytest.approx(np.sqrt(u), rel=1e-10) and r.n == n
    assert r.n_clusters == len(set(prompt))
    held = np.array([
        _cross_prompt_u(p[prompt != c], y[prompt != c], prompt[prompt != c])
        for c in np.unique(prompt)
    ])  # fmt: skip
    g = len(held)
    v_jack = (g - 1) / g * np.sum((held - held.mean()) ** 2)
    b = np.minimum((p * 10).astype(int), 9)
    v_q = 0.0
    for k in range(10):
        x = pd.Series(p - y)[b == k].groupby(prompt[b == k]).sum().to_numpy()
        m = pd.Series(np.ones(n))[b == k].groupby(prompt[b == k]).sum().to_numpy()
        a = m.sum() / (n * (m.sum() ** 2 - np.sum(m**2)))
        v_q += 2 * a**2 * (np.sum(x**2) ** 2 - np.sum(x**4))
    se = np.sqrt(max(v_jack - v_q / 2, v_jack / 4, 0.75 * v_q))
    assert r.components["squared_error_se"] == pytest.approx(se, rel=1e-8)
    # Student's quantile at Satterthwaite's degrees of freedom of the jackknife variance
    delta2 = (held - held.mean()) ** 2
    nu = 3 * delta2.sum() ** 2 / np.sum(delta2**2) - 2
    assert nu == pytest.approx(39.88, abs=0.01)  # the plug-in (Σ δ²)² / Σ δ⁴ − 1 read 13.0
    nu = min(nu, g - 1)  # at most G − 1 = 39
    t_q = scipy.stats.t.ppf(0.95, nu)
    assert r.ci_low == pytest.approx(np.sqrt(max(u - t_q * se, 0.0)), rel=1e-8)
    assert r.ci_high == pytest.approx(np.sqrt(min(u + t_q * se, 1.0)), rel=1e-8)
    assert 0 < r.ci_low < r.estimate < r.ci_high  # this judge's error is measured, not 0


def test_root_se_integrates_scipys_normal_density_to_the_last_bit() -> None:
    """root_se writes the normal density out (scipy.stats.norm.pdf checks its arguments
    on each of the ~500 calls quad makes, 80 ms a result); the moments with norm.pdf
    itself give the same standard error, bit for bit, near 0, inside and near 1."""
    import math

    import scipy.integrate
    import scipy.stats

    base = debiased_ece(np.array([0.5, 0.5]), np.array([0.0, 1.0]), np.arange(2))
    for u, se in ((0.0004, 0.003), (0.05, 0.02), (0.3, 0.1), (0.97, 0.05), (-0.01, 0.2)):
        above = float(scipy.stats.norm.sf((1.0 - u) / se))

        def moment(k: float, u: float = u, se: float = se, above: float = above) -> float:
            inside = [x for x in (u - 8 * se, u, u + 8 * se) if 0.0 < x < 1.0]
            value, _ = scipy.integrate.quad(
                lambda x: x**k * scipy.stats.norm.pdf(x, u, se), 0.0, 1.0,
                points=inside or None, limit=200,
            )  # fmt: skip
            return float(value) + above

        by_scipy = math.sqrt(max(moment(1.0) - moment(0.5) ** 2, 0.0))
        e = type(base)(u, se, base.plugin, base.chance, base.n, base.n_clusters)
        assert e.root_se() == by_scipy, (u, se)


def test_folds_past_the_prompts_are_a_fold_per_prompt_and_a_float_is_an_error() -> None:
    """``folds=10**30`` was an OverflowError (no int64 divides by it) and a loop over
    every fold number; ``folds=inf`` an OverflowError from ``int()``."""
    t = _miscalibrated(200, seed=4)
    n = t["prompt_id"].nunique()
    each = recalibrate(t, seed=1, folds=n)["p_a_recalibrated"]
    assert recalibrate(t, seed=1, folds=10**30)["p_a_recalibrated"].equals(each)
    assert not recalibrate(t, seed=1, folds=2)["p_a_recalibrated"].equals(each)
    for bad in (2.0, float("inf"), True):
        with pytest.raises(ConfigError, match="folds must be an integer"):
            recalibrate(t, folds=bad)  # type: ignore[arg-type]


def test_a_probability_an_ulp_below_a_bin_edge_is_binned_at_the_edge() -> None:
    # verdicts for b at confidence 0.6 (p_a = 1 - 0.6 = 0.39999999999999997) and 0.7
    # (p_a = 1 - 0.7 = 0.30000000000000004), 20 each: a prefers at 0.5 and 0.2 of them,
    # gaps p - y of 0.4 - 0.5 = -0.1 and 0.3 - 0.2 = +0.1 in bins [0.4, 0.5) and [0.3, 0.4)
    # -> plug-in ECE (|20 * -0.1| + |20 * 0.1|) / 40 = 0.1 (pooled in one bin: 0.0)
    p = np.array([1 - 0.6] * 20 + [1 - 0.7] * 20)
    y = np.array([1.0] * 10 + [0.0] * 10 + [1.0] * 4 + [0.0] * 16)
    e = debiased_ece(p, y, np.arange(40))
    assert e.plugin == pytest.approx(0.1)
    t = reliability_table(p, y)  # row k: the bin [k / 10, (k + 1) / 10)
    assert t.loc[4, "n"] == 20 and t.loc[4, "mean_p"] == pytest.approx(0.4)
    assert t.loc[4, "observed"] == pytest.approx(0.5)
    assert t.loc[3, "n"] == 20 and t.loc[3, "observed"] == pytest.approx(0.2)
    # 1 - 0.8 sits with 0.2, not in [0.1, 0.2)
    two = reliability_table(np.array([1 - 0.8, 0.2]), np.array([0.0, 1.0]))
    assert two.loc[2, "n"] == 2 and two["n"].sum() == 2


def test_confidences_stored_as_float32_are_binned_at_their_decimal() -> None:
    """A Parquet column of float32 confidences holds 0.7 as 0.699999988 and 0.6 as
    0.600000024, so a verdict for b at 0.6 reads 1 - c = 0.399999976, 2e-8 below its
    edge (TIE_TOL, 1e-9, covered only the float64 ulp): it sat in [0.3, 0.4) with those at
    0.7, and 0.7 and 0.9 sat a bin low. The same table as in the test above, in float32:
    plug-in ECE 0.1 as there (pooled in one bin it reads about 0)."""
    c = np.array([0.6] * 20 + [0.7] * 20, dtype=np.float32).astype(float)
    y = np.array([1.0] * 10 + [0.0] * 10 + [1.0] * 4 + [0.0] * 16)
    assert debiased_ece(1 - c, y, np.arange(40)).plugin == pytest.approx(0.1, abs=1e-6)
    t = reliability_table(1 - c, y)
    assert t.loc[4, "n"] == 20 and t.loc[3, "n"] == 20
    # the confidences themselves: 0.6 in [0.6, 0.7), 0.7 in [0.7, 0.8), 0.9 in [0.9, 1]
    own = reliability_table(np.array([0.6, 0.7, 0.9], dtype=np.float32), np.ones(3))
    assert own.loc[[6, 7, 9], "n"].tolist() == [1, 1, 1]
    # the edges as the decimals they are (linspace's third edge, written to the CSV, was
    # 0.30000000000000004)
    assert t["bin_low"].tolist() == [k / 10 for k in range(10)] and t.loc[3, "bin_low"] == 0.3


def test_bins_of_one_prompt_are_not_read_as_calibrated_with_nothing_said() -> None:
    # ten pairs, each of its own prompt and bin, the labels against every probability
    # (plug-in ECE 0.75): the U-statistic holds no product of two prompts, and the judge
    # read 0.000 [0.000, 0.000], "consistent with calibration". Not estimated now.
    p = np.arange(10) / 10 + 0.05
    y = np.array([1.0] * 5 + [0.0] * 5)
    t = pd.DataFrame({"item_id": [f"i{k}" for k in range(10)], "judge": "j", "human": y,
                      "prompt_id": [f"q{k}" for k in range(10)], "p_a": p})  # fmt: skip
    assert debiased_ece(p, y, np.arange(10)).lone == 10
    with pytest.raises(EstimationError, match="no probability bin holds pairs of two prompts"):
        expected_calibration_error(t, **BOOT)
    # two more pairs in bin 9 (p 0.95, y 0, as i9): three prompts there, X = 0.95 each,
    # U = 3 / (12 (3² - 3)) (2.85² - 3 · 0.95²) = 0.225625 counts bin 9 only, and the
    # nine pairs alone in theirs are said
    two = pd.concat(
        [t, pd.DataFrame({"item_id": ["x", "z"], "judge": "j", "human": 0.0,
                          "prompt_id": ["qx", "qz"], "p_a": 0.95})],
        ignore_index=True,
    )  # fmt: skip
    r = expected_calibration_error(two, **BOOT)
    assert r.components["squared_error"] == pytest.approx(3 / 72 * (2.85**2 - 3 * 0.95**2))
    (said,) = [w for w in r.warnings if "bins whose pairs all come from one prompt" in w]
    assert said.startswith("9 of 12 pairs lie in probability bins")


@pytest.mark.parametrize(
    ("prompts", "per_prompt", "bias", "effect"),
    [(350, 1, PlantedBias(0.2, 0.15, 0.15, 0.05, 0.6), 0.0),
     (30, 3, PlantedBias(0.1, 0.1, 0.1, 0.05, 0.5), 0.1)],
)  # fmt: skip
def test_the_interval_holds_the_truth_at_few_prompts_and_near_a_calibrated_judge(
    prompts: int, per_prompt: int, bias: PlantedBias, effect: float
) -> None:
    """Prob verdicts from the simulator (a prompt effect of 0.15 on every agreement
    probability; biases that vary by prompt, 0.1, in the second design). Truth: the
    debiased error on a table of 300,000 pairs (0.027 and 0.19). The 90% interval read
    ``U ± 1.645 se``, ``se²`` at least a quarter of the jackknife's: at 350 one-pair
    prompts it held 0.868 of 400 tables and at 30 prompts of 3 pairs 0.840, every miss
    above it or nearly (the jackknife shrinks where a bin's gaps cancel, and ``U`` is
    then low). Now ``se²`` is at least ``¾ v_Q`` and the quantile Student's at the
    effective prompts. Here 200 tables each: covered 0.94 and 0.895, truth above the
    interval in 0.06 and 0.09 of them (the old interval: 0.885 and 0.85, above 0.115
    and 0.12)."""

    def draw(seed: int, n_prompts: int) -> pd.DataFrame:
        sim = simulate_pairs(judges={"gpt-4": bias}, n_prompts=n_prompts,
                             pairs_per_prompt=per_prompt, verdicts="prob",
                             human_tie_rate=0.1, single_order_rate=0.1, unparsed_rate=0.05,
                             prompt_effect=0.15, bias_effect=effect, seed=seed)  # fmt: skip
        return sim.pairs

    big = draw(10**6, 300_000 // per_prompt)
    truth = expected_calibration_error(big, judge="gpt-4").estimate
    covered = above = 0
    for r in range(200):
        e = expected_calibration_error(draw(r, prompts), judge="gpt-4", boot=Resampling(seed=r))
        covered += e.ci_low <= truth <= e.ci_high
        above += truth > e.ci_high
    assert 0.875 <= covered / 200 <= 0.97
    assert above / 200 <= 0.105


def test_the_intervals_degrees_of_freedom_are_satterthwaites_not_a_third_of_them() -> None:
    """Planted truth: Σ_c δ_c² over G independent N(0, λ_c) terms has Satterthwaite's
    (Σ λ)² / Σ λ² degrees of freedom: G for λ alike (read against the sample variance's
    G − 1, the most effective_df gives), k where k terms carry it. effective_df read
    each prompt's share off its own δ_c²: (Σ δ²)² / Σ δ⁴ − 1 = G / κ − 1, about 3 at
    12 prompts and 9 at 30 (κ = 3), an interval at t_9 where t_29 is due (12 prompts of
    5 pairs, a judge 0.05 off: 0.978 of 1,000 tables covered). Now the median over
    2,000 draws lies within a fifth of G − 1, and near k = 1 or 3 where they carry it."""
    rng = np.random.default_rng(8)
    for g in (12, 30):
        nus = [effective_df(rng.normal(size=g)) for _ in range(2000)]
        assert 0.8 * (g - 1) <= np.median(nus) <= g - 1
    for k in (1, 3):
        lam = np.r_[np.ones(k), np.full(30 - k, 1e-4)]
        nus = [effective_df(rng.normal(size=30) * np.sqrt(lam)) for _ in range(2000)]
        assert k - 0.5 <= np.median(nus) <= 1.5 * k, (k, np.median(nus))


def test_one_pair_alone_in_its_bin_reads_lies() -> None:
    # bin 9 holds three prompts' pairs (p 0.95, y 0), bin 0 one pair of its own prompt:
    # the warning counts 1 of 4 pairs, and says "lies" ("1 of 4 pairs lie" before)
    t = pd.DataFrame({"item_id": ["a", "b", "c", "d"], "judge": "j",
                      "human": [0.0, 0.0, 0.0, 1.0], "prompt_id": ["q1", "q2", "q3", "q4"],
                      "p_a": [0.95, 0.95, 0.95, 0.05]})  # fmt: skip
    r = expected_calibration_error(t, **BOOT)
    (said,) = [w for w in r.warnings if "bins whose pairs all come from one prompt" in w]
    assert said.startswith("1 of 4 pairs lies in probability bins"), said


def test_the_standard_error_reads_the_student_interval_at_few_prompts() -> None:
    """60 pairs on 6 prompts (a true error of about 0.3): the interval is the root of
    U ± t_ν se at ν = 4.23, t_ν(0.95) = 2.10 where z = 1.645. `recuse gate`'s projection
    and the detectable size read z · std_error as the half-width of the interval shown:
    root_se alone, 0.059, said a half-width of 0.097 beside the 0.125 shown (1.28 times
    narrower); times t_ν/z, 0.0756, it says 0.124."""
    rng = np.random.default_rng(0)
    n, g = 60, 6
    p = rng.uniform(0.02, 0.98, n)
    y = (rng.uniform(0, 1, n) < 0.5 + 0.1 * (p - 0.5)).astype(float)
    prompt = np.arange(n) % g
    t = pd.DataFrame({"item_id": [f"i{i}" for i in range(n)],
                      "prompt_id": [f"q{c}" for c in prompt],
                      "judge": "j", "human": y, "p_a": p})  # fmt: skip
    r = expected_calibration_error(t, boot=Resampling(level=0.9, seed=0))
    e = debiased_ece(p, y, prompt)
    assert e.df == pytest.approx(4.23, abs=0.01)
    z = scipy.stats.norm.ppf(0.95)
    assert r.std_error == pytest.approx(e.root_se() * scipy.stats.t.ppf(0.95, e.df) / z)
    assert z * r.std_error == pytest.approx((r.ci_high - r.ci_low) / 2, rel=0.01)
