"""Small samples, honestly: BCa coverage at real sizes, p-values, standard errors, warnings,
reasons that name the cause.

The coverage simulation is the one of ``benchmarks/interval_coverage.py`` (there with
2,000 replications of 1,000 resamples: BCa 0.879, percentile 0.850 at 50 pairs / 7),
sized down to run in a few seconds.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy.special import ndtri
from scipy.stats import norm

from recuse.analyses import REGISTRY
from recuse.cli import main
from recuse.driver import AuditOptions, load_input, run_audit
from recuse.metrics import pairwise_bias, self_preference
from recuse.metrics.bootstrap import (
    GroupedStatistic,
    Resampling,
    cluster_bootstrap,
    difference_of_ratios,
    p_value,
    ratio,
    resample_counts,
)
from recuse.metrics.estimate import LOW_N
from recuse.report.html import render_html
from recuse.report.model import AuditReport, Finding, Provenance, Section
from recuse.roster import Roster
from recuse.tables import validate_pairs

PROV = Provenance((), "0.1.0", None, {}, 0, "2025-01-01T00:00:00+00:00", "3.11")
RECALL_OWN, RECALL_OTHER = 0.92, 0.44
TRUTH = RECALL_OWN - RECALL_OTHER


def _eo_table(
    n_pairs: int, minority: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """EO row terms of a prompt-clustered table with exactly ``minority`` pairs where the
    human prefers the other response (see benchmarks/interval_coverage.py)."""
    sizes = rng.choice([1, 2, 3], size=n_pairs, p=[0.65, 0.32, 0.03])
    prompt = np.repeat(np.arange(n_pairs), sizes)[:n_pairs]
    other = np.zeros(n_pairs, bool)
    other[rng.choice(n_pairs, size=minority, replace=False)] = True
    mean = np.where(other, 1.0 - RECALL_OTHER, RECALL_OWN)
    z = ndtri(mean) * np.sqrt(1 + 0.5**2 + 0.7**2)
    z = z + rng.normal(0, 0.5, size=n_pairs)[prompt] + rng.normal(0, 0.7, size=n_pairs)
    v = ((z[:, None] + rng.standard_normal((n_pairs, 2))) > 0).mean(axis=1)
    w1, w0 = (~other).astype(float), other.astype(float)
    return np.column_stack([w1 * v, w1, w0 * (1 - v), w0]), prompt.astype(str)


def _coverage(n_pairs: int, minority: int, reps: int, n_boot: int) -> tuple[float, float, float]:
    rng = np.random.default_rng(7)
    hit, width, estimates = [], [], []
    for r in range(reps):
        values, prompts = _eo_table(n_pairs, minority, rng)
        stat = GroupedStatistic(
            "eo", values, np.zeros(n_pairs, np.intp), ("j",), difference_of_ratios
        )
        est = cluster_bootstrap(
            [stat], prompts, boot=Resampling(level=0.9, n_boot=n_boot, seed=r), min_n=1
        )[0][0]
        hit.append(est.ci_low <= TRUTH <= est.ci_high)
        width.append(est.ci_high - est.ci_low)
        estimates.append(est.estimate)
    return float(np.mean(hit)), float(np.mean(width)), float(np.std(estimates, ddof=1))


def test_bca_covers_at_least_85_percent_at_50_pairs_with_7_in_the_minority() -> None:
    reps = 600
    cover, _, _ = _coverage(50, 7, reps=reps, n_boot=400)
    # 0.85 minus two binomial standard errors of a 600-replication share (0.029)
    margin = 2 * np.sqrt(0.85 * 0.15 / reps)
    assert cover >= 0.85 - margin, cover


def test_bca_is_not_over_wide_at_a_large_size() -> None:
    cover, width, sd = _coverage(600, 90, reps=200, n_boot=300)
    assert 0.84 <= cover <= 0.96, cover  # 0.90 +- 3 SE of 200 replications
    # the width of a normal 90 % interval with the true SD of the estimate is 2 * 1.645 * sd
    assert width / (2 * norm.ppf(0.95) * sd) == pytest.approx(1.0, abs=0.15)


def test_std_error_and_p_value_by_hand_on_a_fixed_resample_set() -> None:
    """Five prompts, a rate; the replicates, SE and percentile p recomputed from W by hand."""
    y = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0])
    prompts = np.array(["a", "a", "b", "c", "d", "e", "e"])
    stat = GroupedStatistic(
        "r", np.column_stack([y, np.ones(7)]), np.zeros(7, np.intp), ("j",), ratio
    )
    n_boot = 50
    pct = cluster_bootstrap(
        [stat],
        prompts,
        boot=Resampling(level=0.9, n_boot=n_boot, seed=3),
        min_n=1,
        interval="percentile",
    )[0][0]
    w = resample_counts(5, n_boot, np.random.default_rng(3))
    per = np.array([[1, 2], [1, 1], [1, 1], [0, 1], [2, 2]], float)  # (sum y, rows) a..e
    sums = w @ per
    reps = sums[:, 0] / sums[:, 1]
    assert pct.std_error == pytest.approx(reps.std(ddof=1), abs=1e-12)
    for null in (0.5, 0.6, 0.9):
        m = (reps < null - 1e-12).sum()
        k = (np.abs(reps - null) <= 1e-12).sum()  # tied on null: an end on it from
        # numpy's position m to m + k − 1 of B − 1, the lower tail the last, the upper the first
        # untied: the level at which numpy's quantile (linear between the sorted
        # replicates at i / (B − 1)) is null, a share f of the way from m − 1 to m
        at = np.sort(reps)
        f = 0.0 if k or m in (0, n_boot) else (null - at[m - 1]) / (at[m] - at[m - 1])
        untied = (m - 1 + f) / (n_boot - 1)
        lo, hi = ((m + k - 1) / (n_boot - 1), m / (n_boot - 1)) if k else (untied,) * 2
        if not k:  # the same level: the interval at that level has its end on null
            assert np.quantile(at, untied) == pytest.approx(null, abs=1e-12)
        lo, hi = (min(max(g, 1 / (n_boot + 1)), n_boot / (n_boot + 1)) for g in (lo, hi))
        expected = max(2 / (n_boot + 1), 2 * min(lo, 1 - hi))
        assert p_value(pct, null) == pytest.approx(expected, abs=1e-12), null
    # BCa: the 1 - p interval has the null at one end (the p-value inverts the interval)
    rng = np.random.default_rng(5)
    yc = rng.gamma(2.0, size=60)  # skewed, so z0 and the acceleration are not 0
    cont = GroupedStatistic(
        "m", np.column_stack([yc, np.ones(60)]), np.zeros(60, np.intp), ("j",), ratio
    )
    cl = np.array([f"p{k // 2}" for k in range(60)])
    bca = cluster_bootstrap([cont], cl, boot=Resampling(level=0.9, n_boot=4000, seed=3), min_n=1)[
        0
    ][0]
    assert bca.accel != 0 and bca.z0 != 0
    for null in (1.6, 2.4):
        p = p_value(bca, null)
        assert 0.005 < p < 0.5, (null, p)
        at = cluster_bootstrap(
            [cont], cl, boot=Resampling(level=1 - p, n_boot=4000, seed=3), min_n=1
        )[0][0]
        end = at.ci_low if null < bca.estimate else at.ci_high
        assert end == pytest.approx(null, abs=0.01), (null, p)


def _gpt4_judging_itself(human: Any, p: Any) -> pd.DataFrame:
    """gpt-4 judging its own answer (a) against claude-v1, two pairs a prompt: the
    labels ``human`` and the verdict ``p`` in both orders, one row each."""
    n = len(human)
    return pd.DataFrame(
        {
            "item_id": [f"i{k}" for k in range(n)],
            "prompt_id": [f"p{k // 2}" for k in range(n)],
            "model_a": ["gpt-4"] * n,
            "model_b": ["claude-v1"] * n,
            "human": human,
            "judge": ["gpt-4"] * n,
            "p_a_first": p,
            "p_a_second": p,
            "p_a": None,
        }
    )


def _pairs(
    n_prompts: int, *, right: bool, seed: int = 0, unparsed: str | None = None
) -> pd.DataFrame:
    """gpt-4 judging its own answers against claude-v1 on ``n_prompts`` prompts, 2 pairs each;
    ``right``: the judge always agrees with the human. ``unparsed``: a judge with no verdicts."""
    rng = np.random.default_rng(seed)
    human = np.tile([1.0, 0.0], n_prompts)
    rows = _gpt4_judging_itself(
        human, human.copy() if right else rng.choice([0.0, 0.5, 1.0], size=2 * n_prompts)
    )
    if unparsed is not None:
        extra = rows.assign(
            judge=unparsed,
            model_a=unparsed,
            item_id=rows["item_id"] + "u",
            p_a_first=np.nan,
            p_a_second=np.nan,
            status_first="unparsed",
            status_second="unparsed",
        )
        rows = pd.concat([rows.assign(status_first="ok", status_second="ok"), extra])
    return validate_pairs(rows)


def test_three_prompts_are_flagged() -> None:
    r = self_preference(_pairs(3, right=False, seed=1), boot=Resampling(n_boot=200), min_n=1)
    assert r.n_clusters == 3
    assert "only 3 prompts: the interval is unreliable" in " ".join(r.warnings)


def test_an_always_right_judge_gets_the_zero_width_warning() -> None:
    r = self_preference(_pairs(20, right=True), boot=Resampling(n_boot=200))
    assert (r.estimate, r.ci_low, r.ci_high) == (0.0, 0.0, 0.0)
    assert any(w.startswith("no variation in the resamples") for w in r.warnings)
    assert r.p_value == 1.0 and r.std_error == 0.0


def test_low_n_mark_below_the_threshold_only() -> None:
    small = self_preference(
        _pairs(LOW_N - 1, right=False), boot=Resampling(n_boot=200)
    )  # 9 per group
    assert [w for w in small.warnings if w.startswith("low n")] == [
        f"low n: only {LOW_N - 1} pairs where the human prefers the judge's own response "
        f"(under {LOW_N}); the interval is likely too narrow — read it as rough"
    ]
    big = self_preference(_pairs(LOW_N, right=False), boot=Resampling(n_boot=200))
    assert not [w for w in big.warnings if w.startswith("low n")]
    assert not [w for w in big.warnings if "prompts" in w]  # 10 prompts: not few


def test_a_judge_without_parsed_verdicts_is_skipped_for_that_reason() -> None:
    table = _pairs(10, right=False, unparsed="claude-v1")
    bootstrapped = ["self_preference_eo", "self_preference_dp", "flip_rate", "first_position_rate"]
    res = pairwise_bias(table, metrics=bootstrapped, boot=Resampling(n_boot=100), curves=False)
    reasons = {s.reason for s in res.skipped if s.judge == "claude-v1"}
    assert reasons == {
        "all 20 verdicts of judge 'claude-v1' are unparsed or missing (no usable p_a) — "
        "nothing to measure"
    }
    assert len(res.skipped) == len(bootstrapped)
    assert res.get("self_preference_eo", "gpt-4").n == 20


def test_every_result_has_se_p_and_the_method_names_the_interval() -> None:
    res = pairwise_bias(_pairs(15, right=False, seed=4), boot=Resampling(n_boot=200), curves=False)
    assert res.results
    for r in res.results:
        # an unsigned rate (the flip rate) has no p-value: its no-bias value 0 is its floor
        p_ok = np.isnan(r.p_value) if r.unsigned else 0 < r.p_value <= 1
        # an order-blind judge's exact bound has none (unseen_span): its resamples' 0
        # measures nothing
        blind = any("same in both orders" in w for w in r.warnings)
        assert np.isfinite(r.std_error) != blind and p_ok, r.metric
        words = "exact bound (not a bootstrap)" if blind else "BCa interval"
        assert words in r.method, r.metric
    assert any(r.unsigned for r in res.results)


def test_demo_audit_estimates_gpt4_self_preference_with_a_visible_low_n_mark(
    shared_data: Path,
) -> None:
    """LLMBar MT-Bench (real data): GPT-4's EO self-preference (43 / 8 pairs) is a finding
    with the low-n warning, shown in the section's findings table and in the JSON."""
    inp = load_input("llmbar-mtbench", data_dir=shared_data)
    report = run_audit(
        [inp], options=AuditOptions(n_boot=200, only=("self-preference",)), roster=Roster.builtin()
    )
    found = [
        f
        for s in report.sections
        for f in s.findings
        if f.judge == "gpt-4" and f.bias.key == "self_preference_eo"
    ]
    assert len(found) == 1
    f = found[0]
    assert f.estimate == pytest.approx(39.5 / 43 - 3.5 / 8)
    assert f.p_value is not None and 0 < f.p_value < 0.05
    assert f.std_error is not None and f.std_error > 0
    low = [w for w in f.warnings if w.startswith("low n: only 8 pairs")]
    assert len(low) == 1
    page = render_html(report)
    table = page[page.index('<table class="findings">') :]
    assert f'<span class="warn" data-warning>&#9888; {html.escape(low[0])}</span>' in table
    assert low[0] in f.to_dict()["warnings"]


def test_warning_text_is_escaped_in_the_report() -> None:
    """A warning carries a prompt or judge name at most, but it is escaped like any text."""
    bias = next(b for a in REGISTRY for b in a.biases if b.key == "self_preference_eo")
    f = Finding(
        judge="j", bias=bias, estimate=0.1, ci_low=0.0, ci_high=0.2, n=10, level=0.9,
        method="m", dataset="d", section="self-preference", warnings=("<b>x</b> & y",),
    )  # fmt: skip
    page = render_html(
        AuditReport("t", (Section("self-preference", "S", "i", findings=(f,)),), (), (), PROV, 0.9)
    )
    assert "&lt;b&gt;x&lt;/b&gt; &amp; y" in page and "<b>x</b> & y" not in page


def test_recuse_metrics_prints_each_warning_with_its_mark(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    path = tmp_path / "pairs.csv"
    _pairs(3, right=False, seed=1).to_csv(path, index=False)
    args = ["-m", "self_preference_eo", "--n-boot", "100", "--min-n", "1"]
    code = main(["metrics", "pairs", str(path), *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    row = next(line for line in out.splitlines() if "self_preference_eo" in line)
    assert "!1" in row and "!2" in row  # 3 prompts; 3 pairs per group (low n)
    assert "!1 only 3 prompts: the interval is unreliable" in out
    assert "!2 low n: only 3 pairs where the human prefers the judge's own response" in out


def _finding_of(r: object, bias_key: str) -> Finding:
    """The report's finding of a result (``from_result``), with its bias's threshold."""
    from dataclasses import replace

    from recuse.analyses.base import from_result

    analysis = next(a for a in REGISTRY if any(b.key == bias_key for b in a.biases))
    bias = next(b for b in analysis.biases if b.key == bias_key)
    f = from_result(analysis, bias, r, dataset="d")  # type: ignore[arg-type]
    assert isinstance(f, Finding)
    return replace(f, material=bias.material)


def test_a_zero_width_interval_is_fixed_only_when_the_metric_says_why() -> None:
    """A judge always right (and order-blind: the same verdict in both orders) on 6
    prompts: its EO difference is 0.00 [0.00, 0.00] with no variation in the
    resamples — not fixed, so its finding rules nothing out (it read "negligible"). Its
    first-position rate is 0.5 on every pair, but 6 consistent prompts do not show the
    judge cannot see the order: the interval is the one 0 changed of 6 allows, 0.5 ±
    u/2 with u = 1 − 0.1^(1/6) (it read 0.50 [0.50, 0.50], fixed by construction, and
    "negligible", so `gate --max position=0.05` passed it)."""
    from recuse.metrics import first_position_rate

    pairs = _pairs(6, right=True)
    eo = self_preference(pairs, boot=Resampling(n_boot=200))
    assert (eo.ci_low, eo.ci_high, eo.n_clusters) == (0.0, 0.0, 6)
    assert not eo.fixed and eo.to_dict()["fixed_by_construction"] is False
    pos = first_position_rate(pairs, boot=Resampling(n_boot=200))
    u = 1 - 0.1 ** (1 / 6)
    assert pos.estimate == 0.5
    assert (pos.ci_low, pos.ci_high) == pytest.approx((0.5 - u / 2, 0.5 + u / 2), abs=1e-12)
    assert not pos.fixed and pos.to_dict()["fixed_by_construction"] is False
    f_eo, f_pos = _finding_of(eo, "self_preference_eo"), _finding_of(pos, "position")
    assert not f_eo.fixed and not f_pos.fixed and f_pos.informative
    assert f_pos.materiality != "negligible" and not f_pos.significant
    # an order-dependent judge whose position rate happens to be flat is not fixed
    flat = pairs.drop(columns="p_a").assign(p_a_first=1.0, p_a_second=1.0 - pairs["human"])
    r = first_position_rate(validate_pairs(flat), boot=Resampling(n_boot=200))
    assert r.ci_low == r.ci_high and not r.fixed


@pytest.mark.parametrize("k", [2, 4, 5, 6, 20])
def test_a_judge_always_picking_first_gets_the_sign_tests_p_value(k: int) -> None:
    """Position 1.00 [1.00, 1.00] from k prompts (the first answer always wins): the
    bootstrap p-value is its floor 2/(B+1) whatever k; the exact sign test gives
    2 · 2^−k (every prompt on the same side of 0.5), which the p-value never goes
    below. Two or four prompts are no evidence (0.5, 0.125): not flagged (the interval
    alone excluded 0.5 and read "material" with --no-fdr); twenty are (2e-06 → the
    floor 2/201), and read material."""
    from recuse.metrics import first_position_rate

    pairs = _pairs(k, right=True)
    first = validate_pairs(pairs.drop(columns="p_a").assign(p_a_first=1.0, p_a_second=0.0))
    r = first_position_rate(first, boot=Resampling(n_boot=200), min_n=1)
    assert (r.estimate, r.ci_low, r.ci_high) == (1.0, 1.0, 1.0) and not r.fixed
    exact = 2 * 0.5**k  # P(all k prompts on one side | each side 1/2), either side
    assert r.p_value == pytest.approx(max(2 / 201, exact))
    f = _finding_of(r, "position")
    assert f.significant == (max(2 / 201, exact) <= 0.1)
    assert f.materiality == ("material" if f.significant else "")


@pytest.mark.parametrize("k", [2, 3, 4, 8])
def test_an_interval_with_width_from_fewer_than_5_prompts_gets_the_sign_tests_floor(
    k: int,
) -> None:
    """The first answer wins every pair, on some prompts fully, on others by half
    (p_a_second 0 or 0.5): a first-position rate of about 0.9 whose interval has width
    and excludes 0.5. From
    fewer than 5 prompts the bootstrap's p-value was its floor 2/(B+1) and the finding
    was flagged, though such an interval rules nothing out (the gate calls it
    inconclusive); it now gets the sign test's 2 · 2^−k, as a zero-width one does, and
    is flagged only from 5 prompts on (8 here: 2/201, flagged)."""
    from recuse.metrics import first_position_rate

    pairs = _pairs(k, right=True)
    second = np.repeat(np.resize([0.0, 0.5], k), 2)  # prompts won fully or by half
    first = validate_pairs(pairs.drop(columns="p_a").assign(p_a_first=1.0, p_a_second=second))
    r = first_position_rate(first, boot=Resampling(n_boot=200), min_n=1)
    assert r.ci_high > r.ci_low and r.n_clusters == k
    floor = 2 * 0.5**k if k < 5 else 0.0
    f = _finding_of(r, "position")
    if k == 2:
        # 2 prompts at 90%: √2 · t_1(0.95) = 8.93 asks a tail no resample reaches; the
        # end was the smallest resample (above 0.5), now it is extrapolated past it
        # (tail_end) and holds 0.5, its p-value read where that end meets it
        assert r.ci_low < 0.5 and r.p_value >= 0.1 and not f.significant
        assert any("beyond the 200 resamples" in w for w in r.warnings)
        return
    assert r.ci_low > 0.5
    assert r.p_value == pytest.approx(max(2 / 201, floor))
    assert f.significant == (k >= 5) and f.excludes_null == (k >= 5)


def _own_or_other(own: int, other: int) -> pd.DataFrame:
    """gpt-4 judging its own answer against claude-v1 on ``own`` prompts where the human
    prefers its own (2 pairs each) and ``other`` where the human prefers the other (2
    pairs each), picking its own answer every time (a prompt's pairs share its verdict)."""
    human = [1.0] * (2 * own) + [0.0] * (2 * other)
    return validate_pairs(_gpt4_judging_itself(human, [1.0] * len(human)))


def test_a_zero_width_difference_of_recalls_gets_the_two_rate_p_value() -> None:
    """EO +1.00 [1.00, 1.00]: right on all 9 prompts where the human prefers its own
    answer, wrong on all 3 where the human prefers the other. The sign test's
    2 · 2^−12 = 0.00049 assumed each prompt on either side with probability 1/2; with no
    bias the two recalls are one unknown r, and the planted r = 0.75 (a judge right
    three times in four on either side, a prompt's pairs judged alike) gives this
    sample, or its mirror, with probability 0.75^9 · 0.25^3 + 0.25^9 · 0.75^3 = 0.0012
    (worked out by enumerating the 2^12 prompt outcomes): a p-value of 0.0005 (the
    bootstrap's floor over 4,000 resamples) claimed more than the data hold. Now at
    least 2 · 0.75^9 · 0.25^3 = 0.0023, the largest such chance over r doubled; with
    equal sides (6 and 6) it is the sign test's."""
    from itertools import product

    from recuse.metrics.estimate import sign_test_p

    r = self_preference(_own_or_other(9, 3), boot=Resampling(n_boot=4000), min_n=5)
    assert (r.estimate, r.ci_low, r.ci_high, r.n_clusters) == (1.0, 1.0, 1.0, 12)
    planted = 0.75
    chance = 0.0
    for right in product((True, False), repeat=12):  # each prompt right or wrong
        own_recall = [right[k] for k in range(9)]
        other_recall = [right[k] for k in range(9, 12)]
        extreme = (all(own_recall) and not any(other_recall)) or (
            not any(own_recall) and all(other_recall)
        )
        if extreme:
            chance += float(np.prod([planted if x else 1 - planted for x in right]))
    assert chance == pytest.approx(0.001175, abs=1e-6)
    assert r.p_value >= chance  # the p-value of a planted no-bias truth is valid
    from recuse.metrics.estimate import two_rate_test_p

    assert r.p_value == pytest.approx(two_rate_test_p(9, 3)) == pytest.approx(2 * 0.75**9 * 0.25**3)
    even = self_preference(_own_or_other(6, 6), boot=Resampling(n_boot=4000), min_n=5)
    assert even.p_value == pytest.approx(max(sign_test_p(12), 2 / (4000 - even.n_boot_dropped + 1)))
