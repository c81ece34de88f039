"""The BCa interval expanded for few prompts (Hesterberg's expanded interval): its levels,
ends and p-values against scipy's Student t, and where the pairwise metrics use it."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm, t

from recuse.metrics.agreement import accuracy
from recuse.metrics.bootstrap import (
    GroupedStatistic,
    GroupEstimate,
    Resampling,
    beyond_fix,
    beyond_side,
    beyond_warning,
    cluster_bootstrap,
    expanded_beyond,
    expanded_interval,
    expanded_level,
    p_value,
    ratio,
    tail_end,
)
from recuse.metrics.bradley_terry import leaderboard
from recuse.metrics.estimate import MetricSpec, expanded_error, to_results
from recuse.metrics.summary import pairwise_bias
from recuse.simulate.bradley_terry import simulate_bt
from recuse.simulate.pairs import PlantedBias, simulate_pairs


@pytest.mark.parametrize("clusters", [2, 5, 15, 40, 100])
def test_the_level_is_students_quantile_scaled_by_the_bootstraps_variance(clusters: int) -> None:
    # z' = √(G/(G−1)) · t_{G−1}(0.95), as a normal level
    want = norm.cdf(math.sqrt(clusters / (clusters - 1)) * t.ppf(0.95, clusters - 1))
    assert expanded_level(0.95, clusters) == pytest.approx(want, rel=1e-12)
    assert expanded_level(0.05, clusters) == pytest.approx(1 - want, rel=1e-9)


def test_the_expansion_vanishes_as_prompts_grow_and_is_none_for_one() -> None:
    # 15 prompts: Φ(1.0351 · 1.7613) = Φ(1.8231) = 0.96586; a million: 0.95 to 1e-6
    assert expanded_level(0.95, 15) == pytest.approx(0.965859, abs=1e-6)
    assert expanded_level(0.95, 10**6) == pytest.approx(0.95, abs=1e-6)
    assert expanded_level(0.95, 1) == 0.95
    levels = [expanded_level(0.95, g) for g in (3, 10, 30, 100, 1000)]
    assert levels == sorted(levels, reverse=True)


def _estimate(reps: np.ndarray, *, clusters: int, z0: float, accel: float) -> GroupEstimate:
    return GroupEstimate(
        float(np.median(reps)), np.nan, np.nan, 3 * clusters, clusters, reps.size, 0,
        np.zeros(2), z0=z0, accel=accel, replicates=np.sort(reps),
    )  # fmt: skip


def test_the_ends_are_the_replicate_quantiles_at_the_expanded_bca_levels() -> None:
    reps = np.random.default_rng(1).gamma(2.0, size=4000)
    est = _estimate(reps, clusters=10, z0=0.1, accel=0.05)
    lo, hi = expanded_interval(est, 0.9)
    # by hand with scipy: z' = √(10/9) · t_9(0.95) = 1.932271, then Efron's BCa level
    z = math.sqrt(10 / 9) * t.ppf(0.95, 9)
    assert z == pytest.approx(1.932271, abs=1e-6)
    levels = [norm.cdf(0.1 + (0.1 + s) / (1 - 0.05 * (0.1 + s))) for s in (-z, z)]
    assert (lo, hi) == pytest.approx(tuple(np.quantile(reps, levels)), rel=1e-12)
    # wider than the plain BCa interval at 0.9
    plain = [norm.cdf(0.1 + (0.1 + s) / (1 - 0.05 * (0.1 + s))) for s in norm.ppf([0.05, 0.95])]
    p_lo, p_hi = np.quantile(reps, plain)
    assert lo < p_lo and hi > p_hi


def test_the_p_value_is_the_expanded_interval_inverted() -> None:
    # a skewed bootstrap with z0 and acceleration: the expanded 90% interval excludes a
    # null exactly when its expanded p-value is under 0.1 (away from the ends' rounding)
    reps = np.random.default_rng(2).gamma(3.0, size=3000)
    est = _estimate(reps, clusters=12, z0=-0.15, accel=0.04)
    lo, hi = expanded_interval(est, 0.9)
    for null in np.linspace(reps.min(), reps.max(), 400):
        if min(abs(null - lo), abs(null - hi)) < 0.01:
            continue
        p = p_value(est, float(null), expanded=True)
        assert (p < 0.1) == (not lo <= null <= hi), null
    # one value by hand: G = share below; z_q = w / (1 + a w) − z0, w = Φ⁻¹(G) − z0;
    # p = 2 · T_11(−|z_q| / √(12/11))
    null = float(np.quantile(reps, 0.2))
    share = float((reps < null).mean())
    w = norm.ppf(share) + 0.15
    zq = w / (1 + 0.04 * w) + 0.15
    want = 2 * t.sf(abs(zq) / math.sqrt(12 / 11), 11)
    assert p_value(est, null, expanded=True) == pytest.approx(want, rel=1e-3)
    assert p_value(est, null, expanded=True) > p_value(est, null)


def _spec(expanded: bool) -> MetricSpec:
    rng = np.random.default_rng(5)
    clusters = np.repeat(np.arange(12), 3)
    y = rng.beta(2.0, 3.0, size=36) + 0.2 * (clusters % 3 == 0)
    stat = GroupedStatistic(
        name="rate", values=np.column_stack([y, np.ones(36)]), group=np.zeros(36, dtype=int),
        labels=("j",), combine=ratio, required=((1, "pairs"),),
    )  # fmt: skip
    return MetricSpec("rate", stat, "a rate", null=0.5, expanded=expanded)


def test_a_spec_that_asks_gets_the_expanded_interval_and_its_p_value() -> None:
    clusters = np.repeat(np.arange(12), 3)
    boot = Resampling(n_boot=2000, seed=3)
    out = {}
    for expanded in (False, True):
        spec = _spec(expanded)
        est = cluster_bootstrap([spec.stat], clusters, boot=boot, min_n=1)
        (res,), _ = to_results([spec], est, boot=boot)
        out[expanded] = (res, est[0][0])
    plain, est = out[False]
    wide, _ = out[True]
    assert (plain.ci_low, plain.ci_high) == (est.ci_low, est.ci_high)
    assert (wide.ci_low, wide.ci_high) == expanded_interval(est, 0.9)
    assert wide.ci_low < plain.ci_low and wide.ci_high > plain.ci_high
    assert wide.p_value == p_value(est, 0.5, expanded=True) > plain.p_value
    assert "Hesterberg" in wide.method and "Hesterberg" not in plain.method
    assert wide.estimate == plain.estimate


def test_the_expanded_standard_error_is_the_spread_times_the_expansion() -> None:
    """The "±X detectable" line ((z + z_0.8) · se) and the gate's projection (z · se)
    read the standard error: an expanded interval kept the resamples' spread, so both
    described the plain interval it replaced. By hand, 12 prompts at 90%: √(12/11) =
    1.044466, t_11(0.95) = 1.795885, over z(0.95) = 1.644854: 1.1404; 20 prompts:
    1.025978 · 1.729133 / 1.644854 = 1.0785 (before: the factor was 1)."""
    clusters = np.repeat(np.arange(12), 3)
    boot = Resampling(n_boot=2000, seed=3)
    out = {}
    for expanded in (False, True):
        spec = _spec(expanded)
        est = cluster_bootstrap([spec.stat], clusters, boot=boot, min_n=1)
        (out[expanded],), _ = to_results([spec], est, boot=boot)
    assert out[False].std_error == pytest.approx(float(np.std(est[0][0].replicates, ddof=1)))
    assert out[True].std_error == pytest.approx(out[False].std_error * 1.1404, rel=1e-4)
    assert expanded_error(0.05, clusters=20, level=0.9) == pytest.approx(0.05 * 1.0785, rel=1e-4)
    assert expanded_error(0.05, clusters=1, level=0.9) == 0.05


def test_the_audit_expands_parity_verbosity_and_agreement_not_equal_opportunity() -> None:
    bias = PlantedBias(self_preference=0.2, family_preference=0.15, verbosity=0.15, accuracy=0.6)
    sim = simulate_pairs(judges={"gpt-4": bias}, n_prompts=30, pairs_per_prompt=3, seed=4)
    res = pairwise_bias(sim.pairs, sim.families, curves=False, boot=Resampling(n_boot=300))
    expanded = {r.metric for r in res.results if "Hesterberg" in r.method}
    assert {"self_preference_dp", "family_preference_dp", "verbosity_bias"} <= expanded
    assert "self_preference_eo" not in expanded and "family_preference_eo" not in expanded


def test_the_audits_expanded_flags_agree_with_their_intervals() -> None:
    # every expanded result of a small clustered audit: its interval excludes the no-bias
    # value exactly when its p-value is under 1 − level, ends on the null included
    bias = PlantedBias(self_preference=0.1, family_preference=0.1, verbosity=0.1, accuracy=0.5)
    checked = 0
    for seed in range(8):
        sim = simulate_pairs(judges={"gpt-4": bias}, n_prompts=20, pairs_per_prompt=3,
                             prompt_effect=0.15, bias_effect=0.1, seed=seed)  # fmt: skip
        res = pairwise_bias(sim.pairs, sim.families, curves=False, boot=Resampling(seed=seed))
        for r in res.results:
            if "Hesterberg" not in r.method or math.isnan(r.p_value) or r.n_clusters < 5:
                continue
            # an end on the null itself counts (replicates tied there: a share from 7
            # family pairs, [0.0, 0.857], read p 0.088 when ties counted half)
            assert (r.p_value < 0.1) == (not r.ci_low <= r.null <= r.ci_high), (seed, r)
            checked += 1
    assert checked >= 20


def test_an_end_from_two_prompts_keeps_its_bias_correction() -> None:
    # 2 prompts at 90%: z' = √2 · t_1(0.95) = 8.929, whose normal level rounds to 1.0;
    # read back from that level the upper end was the largest replicate whatever z0.
    # By hand (scipy): with z0 = −3, a = 0 the ends sit at Φ(−3 + (−3 ± 8.929))
    reps = np.random.default_rng(7).normal(size=4000)
    est = _estimate(reps, clusters=2, z0=-3.0, accel=0.0)
    z = math.sqrt(2) * t.ppf(0.95, 1)
    assert z == pytest.approx(8.9290, abs=1e-4)
    levels = norm.cdf([-3 + (-3 - z), -3 + (-3 + z)])
    assert levels[1] == pytest.approx(0.99830, abs=1e-5)
    assert expanded_interval(est, 0.9) == pytest.approx(
        tuple(np.quantile(np.sort(reps), levels)), rel=1e-12
    )
    assert expanded_interval(est, 0.9)[1] < reps.max()


def test_replicates_tied_on_the_null_give_the_p_value_the_interval_says() -> None:
    # 2,000 replicates: m at −1, 80 tied on the null 0, the rest above. Percentile ends
    # (z0 = a = 0) at levels 0.05 and 0.95 lie at numpy positions 0.05 · 1999 = 99.95;
    # with m = 40 the lower end is a tied replicate: the 90% interval touches 0, so p is
    # at least 0.1 — by hand, 2 · (m + k − 1) / (B − 1) = 2 · 119 / 1999. Counting the
    # ties half, p = 2 · 80 / 2000 = 0.08: flagged beside an interval holding the null.
    reps = np.concatenate([np.full(40, -1.0), np.zeros(80), np.linspace(0.01, 1.0, 1880)])
    est = _estimate(reps, clusters=12, z0=0.0, accel=0.0)
    low, _ = np.quantile(reps, [0.05, 0.95])
    assert low == 0.0
    assert p_value(est, 0.0) == pytest.approx(2 * 119 / 1999, rel=1e-12)


@pytest.mark.parametrize(("clusters", "level"), [(12, 0.9), (12, 0.5), (3, 0.95), (2, 0.9)])
def test_a_block_tied_on_the_null_swept_past_an_expanded_end(clusters: int, level: float) -> None:
    # the expanded interval and its p-value, 60 replicates tied on 0 swept past the
    # lower end: the interval excludes 0 exactly when p < 1 − level, touching included
    # (2 prompts at 90%: T_1, the ends the extreme replicates; 0.5: quartiles)
    flagged = held = past = 0
    for below in range(0, 1000, 3):
        reps = np.concatenate(
            [np.full(below, -1.0), np.zeros(60), np.linspace(0.01, 1.0, 2000 - below - 60)]
        )
        est = _estimate(reps, clusters=clusters, z0=0.1, accel=0.02)
        lo, hi = expanded_interval(est, level)
        p = p_value(est, 0.0, expanded=True)
        assert (p < 1 - level) == (not lo <= 0.0 <= hi), (below, lo, p)
        flagged, held = flagged + (p < 1 - level), held + (lo == 0.0)
        past += lo < reps[0]
    # from 12 prompts both sides of the end are reached. From 2 or 3 the lower end asks
    # a tail the resamples do not reach (level 2e-06 at 95% from 3): it was the smallest
    # replicate, now it is extrapolated past it (tail_end), so the null 0 stays inside
    # and no tied block puts an end on it
    assert (held > 0) == (flagged > 0) == (clusters > 3)
    assert (past > 0) == (clusters <= 3)


def test_an_expanded_p_value_from_two_prompts_is_students_with_one_df() -> None:
    # z0 = −3, a = 0, the null at replicate level 0.99: z_q = Φ⁻¹(0.99) − 2 z0 = 8.326,
    # whose normal level rounds to 1 (it read the floor 2/(B+1)); by hand with scipy
    # p = 2 · T_1(−8.326 / √2) = 0.107, and the 90% interval holds the null
    reps = np.linspace(0.0, 1.0, 4001)[1:]
    est = _estimate(reps, clusters=2, z0=-3.0, accel=0.0)
    null = float(np.quantile(reps, 0.99))
    share = float((reps < null).mean())  # 3960 of 4000 below, none on it
    zq = norm.ppf(share) + 6.0
    assert zq == pytest.approx(8.326, abs=1e-3)
    want = 2 * t.sf(zq / math.sqrt(2), 1)
    assert p_value(est, null, expanded=True) == pytest.approx(want, rel=1e-3)
    assert want == pytest.approx(0.107, abs=1e-3)
    lo, hi = expanded_interval(est, 0.9)
    assert lo <= null <= hi


def test_an_end_past_the_resamples_reach_is_extrapolated_by_hand() -> None:
    # 5 prompts at 99%: z' = √(5/4) · t_4(0.995) = 5.1474, a normal tail of 1.3e-7: the
    # resamples' quantile there was their smallest / largest. By hand (scipy): with
    # z0 = 0.1, a = 0.05 the deepest level 4,000 resamples read is 5/4000 each side
    # (w_r = ∓3.0233), the nominal quantile the BCa map sends there
    # z_r = (w_r − z0) / (1 + a (w_r − z0)) − z0, and the end
    # θ̂ + (x_r − θ̂) · z' / z_r with x_r the resamples' quantile at Φ(w_r)
    reps = np.random.default_rng(3).gamma(4.0, size=4000)
    est = _estimate(reps, clusters=5, z0=0.1, accel=0.05)
    z = math.sqrt(5 / 4) * t.ppf(0.995, 4)
    assert z == pytest.approx(5.1475, abs=1e-4)
    ends = []
    for s in (-1, 1):
        w_r = s * norm.isf(5 / 4000)
        z_r = (w_r - 0.1) / (1 + 0.05 * (w_r - 0.1)) - 0.1
        x_r = np.quantile(reps, norm.cdf(w_r))
        ends.append(est.estimate + (x_r - est.estimate) * s * z / z_r)
    lo, hi = expanded_interval(est, 0.99)
    assert (lo, hi) == pytest.approx(tuple(ends), rel=1e-12)
    # past the resamples on both sides (they read the smallest and largest before)
    assert lo < reps.min() and hi > reps.max()
    # the p-value of a null on either end is 1 − level: interval and p-value agree
    for end in (lo, hi):
        assert p_value(est, end, expanded=True) == pytest.approx(0.01, rel=1e-6)
    assert p_value(est, lo - 0.01, expanded=True) < 0.01 < p_value(est, lo + 0.01, expanded=True)


def _few_prompt_accuracy(n_prompts: int, rng: np.random.Generator) -> pd.DataFrame:
    """A pick judge on ``n_prompts`` prompts of 4 pairs, each prompt agreeing with the
    human at its own rate, Uniform(0.5, 0.9): the planted accuracy is 0.7."""
    rate = np.repeat(rng.uniform(0.5, 0.9, n_prompts), 4)
    human = rng.integers(0, 2, rate.size).astype(float)
    agree = rng.random(rate.size) < rate
    return pd.DataFrame({
        "item_id": [f"i{i}" for i in range(rate.size)],
        "prompt_id": [f"q{i // 4}" for i in range(rate.size)],
        "judge": "j", "human": human, "p_a": np.where(agree, human, 1.0 - human),
    })  # fmt: skip


def test_a_99_percent_interval_from_5_prompts_holds_a_planted_accuracy() -> None:
    """Agreement accuracy (an expanded metric) at 99% from 5 prompts: its ends were the
    smallest and largest of 2,000 resamples, and held the planted 0.7 in 0.887 of 300
    tables, every miss an interval above it; extrapolated past them, 0.96 (0.977 and
    0.987 from 8 and 10 prompts, before and after), every end within 0 to 1
    (``MetricSpec.extent``) and a warning saying so."""
    rng = np.random.default_rng(5)
    covered = 0
    for r in range(300):
        res = accuracy(_few_prompt_accuracy(5, rng), boot=Resampling(level=0.99, seed=r), min_n=1)
        covered += res.ci_low <= 0.7 <= res.ci_high
        assert 0.0 <= res.ci_low <= res.estimate <= res.ci_high <= 1.0
        # every table whose resamples vary says so; 2 of the 300 hold 3 of 4 pairs on
        # every prompt: their resamples are all 0.75, nothing is extrapolated, and no
        # word says it was (they did: tail_end flagged an end on the estimate)
        varies = res.ci_low < res.ci_high
        # an end cut to 0 or 1 is the metric's bound, no extrapolated number: the record
        # and the warning name the other ends, the method says which are the bounds
        cut = (varies and res.ci_low == 0.0, varies and res.ci_high == 1.0)
        far = varies and not all(cut)
        assert any("beyond the 2,000 resamples" in w for w in res.warnings) == far
        assert ("extrapolated along a normal tail" in res.method) == far
        assert (res.extrapolated is not None) == far  # the record, as the words
        x = res.extrapolated
        assert x is None or x.warning() in res.warnings
        # the record names no end that is a bound
        assert x is None or not ((x.low and cut[0]) or (x.high and cut[1]))
        assert ("the metric takes (" in res.method) == any(cut)
        assert "Hesterberg" in res.method
    assert covered / 300 >= 0.94
    # at 90% from 40 prompts the ends are the resamples' own, and neither the method nor
    # the warnings say otherwise
    res = accuracy(_few_prompt_accuracy(40, rng), boot=Resampling(level=0.9), min_n=1)
    assert "extrapolated" not in res.method
    assert not any("beyond the" in w for w in res.warnings)


def test_the_leaderboards_columns_say_its_ends_are_extrapolated() -> None:
    pairs, truth = simulate_bt(n_prompts=5, pairs_per_prompt=10, seed=3)
    fams = {m: m for m in truth.strengths}
    few = leaderboard(pairs, families=fams, boot=Resampling(level=0.99, n_boot=2000))
    assert few.adjusted.extrapolated
    assert "extrapolated" in few.columns()["adjusted strength_low"]
    many = leaderboard(pairs, families=fams, boot=Resampling(level=0.9, n_boot=2000))
    assert not many.adjusted.extrapolated
    assert "extrapolated" not in many.columns()["adjusted strength_low"]


def test_the_strength_columns_follow_the_strengths_ends_not_a_coefficients() -> None:
    """The strength columns' words say "extrapolated" where a strength's end was, and
    only then: they once followed the fit's ``extrapolated`` (a strength's or a
    coefficient's end), so a coefficient's end alone said the strengths' were. The same
    99% fit from 5 prompts, its records set one way then the other: each table's words
    follow its own ends."""
    pairs, truth = simulate_bt(n_prompts=5, pairs_per_prompt=10, seed=3)
    fams = {m: m for m in truth.strengths}
    few = leaderboard(pairs, families=fams, boot=Resampling(level=0.99, n_boot=2000))
    adj = few.adjusted
    assert adj.strengths_extrapolated and any(adj.coefficients_extrapolated)
    said = "extrapolated along a normal tail"
    # a coefficient's end alone: the covariates' words say it, the strengths' do not
    only_coef = replace(adj, strengths_extrapolated=False)
    assert only_coef.extrapolated
    board = replace(few, raw=replace(few.raw, strengths_extrapolated=False), adjusted=only_coef)
    assert said in only_coef.coefficient_columns()["ci_low"]
    for fit in ("raw", "adjusted"):
        assert said not in board.columns()[f"{fit} strength_low"], fit
    # a strength's end alone: the strengths' words say it, the covariates' do not
    none = (None,) * len(adj.covariates)
    only_strength = replace(adj, coefficients_extrapolated=none)
    board = replace(few, adjusted=only_strength)
    assert said in board.columns()["adjusted strength_low"]
    assert said not in only_strength.coefficient_columns()["ci_low"]


def test_resamples_all_alike_are_not_called_extrapolated() -> None:
    # 2,000 resamples of 0.7 from 5 prompts at 99%: the tail asked (1.3e-7) lies past
    # them, but the line from the estimate through their 0.25% point is the estimate
    # itself: the end is theirs, and tail_end said it had extrapolated it (the result's
    # warning and method then said the ends "lie beyond the 2,000 resamples" of a
    # [0.75, 0.75] interval)
    est = _estimate(np.full(2000, 0.7), clusters=5, z0=0.0, accel=0.0)
    z = -math.sqrt(5 / 4) * t.ppf(0.995, 4)
    assert tail_end(est.replicates, z, center=0.7) == (0.7, False)
    assert math.isnan(expanded_beyond(est, 0.99))
    assert expanded_interval(est, 0.99) == (0.7, 0.7)
    # the same from a table: 3 of 4 pairs agree on each of 5 prompts
    rows = 20
    human = np.tile([1.0, 0.0], rows // 2)
    agree = np.tile([True, True, True, False], rows // 4)
    pairs = pd.DataFrame({
        "item_id": [f"i{i}" for i in range(rows)],
        "prompt_id": [f"q{i // 4}" for i in range(rows)],
        "judge": "j", "human": human, "p_a": np.where(agree, human, 1.0 - human),
    })  # fmt: skip
    res = accuracy(pairs, boot=Resampling(level=0.99), min_n=1)
    assert (res.estimate, res.ci_low, res.ci_high) == (0.75, 0.75, 0.75)
    assert "extrapolated" not in res.method
    assert not any("beyond the" in w for w in res.warnings)


def test_an_end_past_the_resamples_at_many_prompts_asks_for_resamples_not_prompts() -> None:
    # 99.9% from 200 prompts: Student's t is nearly the normal's 3.29, a tail of 5e-4
    # that 2,000 resamples (0.0025 and no deeper) cannot read at any number of prompts;
    # the warning said "add prompts". Now it names the resamples that read the tail
    # asked, ⌈5 / tail⌉. From 5 prompts at 99% the normal's tail (0.005) is within
    # reach: prompts are the fix
    rng = np.random.default_rng(4)
    res = accuracy(_few_prompt_accuracy(200, rng), boot=Resampling(level=0.999), min_n=1)
    (far,) = [w for w in res.warnings if "beyond the 2,000 resamples" in w]
    tail = float(far.split("a tail of ")[1].split(";")[0])
    assert 2e-4 < tail < 5e-4
    assert "add prompts" not in far
    assert far.endswith(" resamples (--n-boot) would read them")  # both ends: "them"
    assert "more prompts will not bring them within reach" in far
    need = int(far.split(": ")[-1].split(" ")[0].replace(",", ""))
    assert need == pytest.approx(5 / tail, rel=0.02)  # the tail is printed to 2 digits
    assert beyond_fix(0.99, resamples=500, tail=0.004).endswith(
        "1,250 resamples (--n-boot) would read it"
    )
    assert beyond_fix(0.99, resamples=2000, tail=1.3e-7) == "add prompts"  # 38 million
    # a bias-corrected end from many prompts: both help, and the resamples are named
    assert beyond_fix(0.99, resamples=2000, tail=1.1e-3).endswith(
        ", or resamples: 4,546 (--n-boot) would read it"
    )
    pairs, truth = simulate_bt(n_prompts=40, pairs_per_prompt=10, seed=3)
    fams = {m: m for m in truth.strengths}
    deep = leaderboard(pairs, families=fams, boot=Resampling(level=0.999, n_boot=2000))
    assert deep.adjusted.extrapolated
    words = deep.columns()["adjusted strength_low"]
    assert "add prompts" not in words and "resamples (--n-boot) would read them" in words
    # Student's tail for 40 prompts, not the normal's (10,000 would not read it); the
    # level 99.9%, not "100%" ({:.0%})
    need = math.ceil(5 / norm.sf(math.sqrt(40 / 39) * t.ppf(0.9995, 39)))
    assert f"{need:,} resamples" in words and "99.9% percentile" in words


def test_a_warning_names_the_one_end_extrapolated() -> None:
    # 99% from 75 prompts, a bias correction z0 = −0.4: the low end asks the resamples'
    # Φ(−0.4 + (−0.4 − 2.66)) = 2.7e-4 (past their 0.0025), the high end Φ(−0.4 + 2.26),
    # within reach. The warning said "the 99% interval's ends lie beyond the 2,000
    # resamples ... they are extrapolated" (llmbar-mtbench at 99%: each of the report's 29
    # such warnings is of one end, 18 low, 11 high)
    reps = norm.ppf((np.arange(2000) + 0.5) / 2000)
    est = _estimate(reps, clusters=75, z0=-0.4, accel=0.0)
    lo, hi = expanded_interval(est, 0.99)
    assert lo < reps[0] and hi < reps[-1]
    assert beyond_side(est, 0.99) == "low end"
    tail = expanded_beyond(est, 0.99)
    z = math.sqrt(75 / 74) * t.ppf(0.995, 74)
    assert tail == pytest.approx(norm.cdf(-0.4 + (-0.4 - z)), rel=1e-9)
    words = beyond_warning(tail, resamples=2000, clusters=75, level=0.99, side="low end")
    assert words.startswith("the 99% interval's low end lies beyond the 2,000 resamples")
    assert "): it is extrapolated along a normal tail" in words
    assert beyond_side(_estimate(reps, clusters=5, z0=0.0, accel=0.0), 0.99) == "ends"
    assert beyond_side(est, 0.9) == ""


def test_the_results_extrapolated_record_is_what_tail_end_did_at_each_end() -> None:
    """``MetricResult.extrapolated`` (and report.json's ``extrapolated``) says which ends
    :func:`tail_end` extrapolated: low exactly when it extrapolated the low end, high
    exactly when the high one, the tail the smaller of the two ends' replicate levels
    Φ(w), 1 − Φ(w) (w the BCa map of Student's expanded quantile, worked out here from
    scipy's t), and the resamples ⌈5 / tail⌉ (none past the million allowed). Planted:
    skewed resamples with a bias correction of either sign, from 5 to 200 prompts at 90%
    and 99% — a bias correction sends one end past the resamples' reach and not the
    other (the warning's words were the only record)."""
    from recuse.metrics.estimate import extrapolation

    rng = np.random.default_rng(27)
    seen: dict[str, int] = {"ends": 0, "low end": 0, "high end": 0, "none": 0}
    for clusters in (5, 12, 40, 75, 200):
        for level in (0.9, 0.99):
            for z0 in (-0.6, -0.3, 0.0, 0.3, 0.6):
                reps = rng.gamma(3.0, size=2000)
                est = _estimate(reps, clusters=clusters, z0=z0, accel=0.02)
                kw = {"center": est.estimate, "z0": z0, "accel": 0.02}
                zs = [math.sqrt(clusters / (clusters - 1)) * t.ppf(q, clusters - 1)
                      for q in ((1 - level) / 2, (1 + level) / 2)]  # fmt: skip
                far = [tail_end(est.replicates, z, **kw)[1] for z in zs]
                ws = [z0 + (z0 + z) / (1 - 0.02 * (z0 + z)) for z in zs]
                x = extrapolation(est, level)
                if not any(far):
                    assert x is None
                    seen["none"] += 1
                    continue
                assert x is not None and (x.low, x.high) == tuple(far)
                tails = [norm.cdf(-abs(w)) for w, f in zip(ws, far, strict=True) if f]
                assert x.tail == pytest.approx(min(tails), rel=1e-9)
                need = math.ceil(5 / x.tail)
                assert x.need == (need if need <= 1_000_000 else None)  # past MAX_N_BOOT: none
                assert (x.resamples, x.clusters, x.level) == (2000, clusters, level)
                seen[x.side] += 1
    assert all(seen.values()), seen  # each kind of record, and none, met


@pytest.mark.parametrize(
    ("shift", "z0", "side"),
    [(0.0, -0.6, "high end"), (0.15, -0.6, "high end"), (0.15, 0.6, None)],
)
def test_a_folded_results_record_names_the_ends_of_its_absolute_value(
    shift: float, z0: float, side: str | None
) -> None:
    """A result shown as |θ| (verbosity_deviation, |Eq. 6|): its signed interval's low
    end extrapolated (a bias correction of −0.6, 75 prompts at 99%) is the high end of
    |θ|'s interval, where the signed one lies below 0 (the ends swap) and where it holds
    0 (|θ| in [0, −low]); a signed high end extrapolated nearer 0 than the low end is no
    end of |θ|'s [0, −low], and nothing is said. The warning said "low end" of both."""
    from recuse.metrics.bootstrap import end_tails
    from recuse.metrics.estimate import extrapolated_words

    reps = np.sort(shift - 0.1 - 0.05 * norm.ppf((np.arange(2000) + 0.5) / 2000) ** 2)
    est = _estimate(reps, clusters=75, z0=z0, accel=0.0)
    signed_low, signed_high = expanded_interval(est, 0.99)
    assert signed_low < 0 and -signed_low > signed_high  # the low end is |θ|'s far end
    spec = replace(_spec(True), folded=True, null=0.0)
    (res,), _ = to_results([spec], [[est]], boot=Resampling(n_boot=2000, level=0.99))
    assert res.ci_high == pytest.approx(-signed_low)  # the signed low end, folded
    if side is None:
        assert res.extrapolated is None and not any("beyond the" in w for w in res.warnings)
        assert math.isnan(end_tails(est, 0.99)[0]) and not math.isnan(end_tails(est, 0.99)[1])
        return
    x = res.extrapolated
    assert x is not None and x.side == side and x.tail == end_tails(est, 0.99)[0]
    assert x.warning() in res.warnings and "interval's high end lies beyond" in x.warning()
    assert res.method.endswith(f"; {extrapolated_words('high end')}")


def _five_prompt_share(rates: list[float]) -> GroupEstimate:
    """A share's 2,000 resamples of 5 prompts whose own rates are ``rates`` (no bias
    correction, no acceleration): the mean of 5 rates drawn with replacement."""
    draws = np.random.default_rng(11).integers(0, 5, size=(2000, 5))
    reps = np.asarray(rates)[draws].mean(axis=1)
    est = _estimate(reps, clusters=5, z0=0.0, accel=0.0)
    return replace(est, estimate=float(np.mean(rates)))


@pytest.mark.parametrize(
    ("rates", "side", "said"),
    [
        ([0.5, 0.75, 0.75, 1.0, 1.0], "low end", "its high end is 1, the greatest value"),
        ([0.0, 0.5, 0.5, 1.0, 1.0], None, "its ends are 0 and 1, the least and greatest"),
    ],
)
def test_an_end_clipped_to_the_metrics_bound_is_no_extrapolated_end(
    rates: list[float], side: str | None, said: str
) -> None:
    """Accuracy at 99% from 5 prompts, 0.8: Student's t asks the resamples for a tail of
    1.3e-7 on each side, and both ends are extrapolated along a normal tail, the high
    one to 0.8 + (x_r − 0.8) · z' / z_r ≈ 1.17, which ``MetricSpec.extent`` cuts to 1.
    The 1 is the metric's greatest value, which holds whatever the tail: the record
    (and its warning) named it an extrapolated end ("ends"); it now names the low end
    alone, and the method says the high end is the bound. Both ends cut (0 and 1): no
    record, no warning, the method says both are the bounds."""
    from recuse.metrics.bootstrap import end_tails
    from recuse.metrics.estimate import extrapolated_words

    est = _five_prompt_share(rates)
    raw_low, raw_high = expanded_interval(est, 0.99)
    # the high end by hand: the resamples' 0.25% point from the top, stretched along
    # the normal tail from z_r = Φ⁻¹(0.9975) to z' = √(5/4) · t_4(0.995)
    z = math.sqrt(5 / 4) * t.ppf(0.995, 4)
    x_r = float(np.quantile(est.replicates, 1 - 0.0025))
    by_hand = est.estimate + (x_r - est.estimate) * z / norm.ppf(1 - 0.0025)
    assert raw_high == pytest.approx(by_hand, rel=1e-12) and raw_high > 1.0
    spec = replace(_spec(True), extent=(0.0, 1.0))
    (res,), _ = to_results([spec], [[est]], boot=Resampling(n_boot=2000, level=0.99))
    assert res.ci_high == 1.0 and said in res.method
    assert "lay beyond" in res.method
    x = res.extrapolated
    if side is None:
        assert raw_low < 0.0 and res.ci_low == 0.0
        assert x is None and not any("beyond the 2,000" in w for w in res.warnings)
        assert "extrapolated along a normal tail" not in res.method
        return
    assert 0.0 < res.ci_low == raw_low
    assert x is not None and x.side == side and x.tail == end_tails(est, 0.99)[0]
    assert x.warning() in res.warnings and "interval's low end lies beyond" in x.warning()
    assert res.method.endswith(f"; {extrapolated_words(side)}")


def test_a_folded_results_end_cut_to_the_bound_is_no_extrapolated_end() -> None:
    """|θ| of a signed difference at 99% from 5 prompts, −0.6 with resamples of spread
    0.15: the signed low end, extrapolated to about −0.6 − 0.15 · 5.15 ≈ −1.37, is cut
    to −1, and |θ|'s interval is [0, 1]: its high end is that bound, no extrapolated
    number (the record named it "high end"); the signed high end, extrapolated nearer 0,
    is no end of |θ|'s interval. No record, no warning; the method names the bound."""
    reps = -0.6 + 0.15 * norm.ppf((np.arange(2000) + 0.5) / 2000)
    est = replace(_estimate(reps, clusters=5, z0=0.0, accel=0.0), estimate=-0.6)
    signed_low, signed_high = expanded_interval(est, 0.99)
    assert signed_low < -1.0 < 0.0 < signed_high < 1.0
    spec = replace(_spec(True), folded=True, null=0.0)
    (res,), _ = to_results([spec], [[est]], boot=Resampling(n_boot=2000, level=0.99))
    assert (res.estimate, res.ci_low, res.ci_high) == (0.6, 0.0, 1.0)
    assert res.extrapolated is None and not any("beyond the" in w for w in res.warnings)
    assert "; its high end is 1, the greatest value |θ| takes (an end extrapolated" in res.method
    assert "extrapolated along a normal tail" not in res.method
