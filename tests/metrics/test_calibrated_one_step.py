"""The calibrated estimate's one-step resamples (one Newton step from the full-sample fit
on per-row scores) against the exact refit of every resample, on small planted tables.

Tolerance: the one-step refit differs from the exact one by the Newton step's error,
quadratic in ``φ_b − φ̂ = O(n^-1/2)``, so ``O(1/n)`` against a bootstrap spread of
``O(n^-1/2)``: relative to the spread it shrinks as ``n^-1/2``. Measured on this design
(mean |one-step − exact| / spread over 100 resamples): 0.058, 0.052, 0.022, 0.012 at
100, 200, 800, 3,200 prompts; the largest of 100 resamples 0.26, 0.24, 0.11, 0.09. At 200
prompts, with the family term and the rungs, the means are 0.05–0.11 and the largest
0.24–0.72 (the rung where the human prefers the other answer has the smallest spread,
0.006). So at 200 prompts every statistic's mean must stay under 15% of its spread and
the largest under its spread, the two must correlate above 0.99, for the calibrated
estimate itself the relative error must shrink from 200 to 800 prompts
(a wrong derivative would leave a first-order error that does not), and the point
estimate must agree exactly (the scores sum to 0 at the full-sample fit).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recuse.metrics.bootstrap import Resampling, ratio
from recuse.metrics.competence import (
    CALIBRATED,
    CALIBRATED_RUNGS,
    FAMILY_CALIBRATED,
    calibrated_self_preference,
    calibrated_specs,
)
from recuse.metrics.self_preference import favored_side
from recuse.metrics.verdicts import judge_codes
from recuse.simulate.self_preference import (
    OTHER_STRENGTHS,
    AuthorJudge,
    simulate_self_preference,
    theta_for_own_rate,
)


def _table(n_prompts: int = 200, seed: int = 5) -> pd.DataFrame:
    strengths = {"m0": theta_for_own_rate(0.8, OTHER_STRENGTHS), **OTHER_STRENGTHS}
    cast = {"m0": AuthorJudge(3.0, 0.4, 0.6), "m1": AuthorJudge(1.5, -0.2, 0.0)}
    return simulate_self_preference(cast, strengths, n_prompts=n_prompts, seed=seed).pairs


def _gap(pairs: pd.DataFrame, n_boot: int = 100) -> tuple[float, float, float]:
    """(mean |one-step − exact| / spread, largest / spread, correlation) of the
    calibrated estimate over ``n_boot`` resamples of judge m0's prompts."""
    codes, labels = judge_codes(pairs, None)
    kw = dict(side=favored_side(pairs, relation="self"), stratum=None)
    e = calibrated_specs(pairs, codes, labels, one_step=False, **kw)[0][0]
    o = calibrated_specs(pairs, codes, labels, one_step=True, **kw)[0][0]
    rows = np.flatnonzero(e.stat.group == 0)
    se, so = _cluster_sums(e.stat.values, pairs, rows), _cluster_sums(o.stat.values, pairs, rows)
    n_c = len(se)
    rng = np.random.default_rng(0)
    counts = rng.multinomial(n_c, np.full(n_c, 1.0 / n_c), size=n_boot).astype(float)
    exact, one = e.stat.combine(counts @ se), ratio((counts @ so)[:, :2])
    spread = float(np.std(exact))
    d = np.abs(one - exact)
    return float(d.mean()) / spread, float(d.max()) / spread, float(np.corrcoef(exact, one)[0, 1])


def test_one_step_error_is_second_order() -> None:
    mean_200, _, _ = _gap(_table(n_prompts=200))
    mean_800, _, corr = _gap(_table(n_prompts=800))
    assert mean_800 < 0.6 * mean_200
    assert corr > 0.999


def _cluster_sums(values: object, pairs: pd.DataFrame, rows: np.ndarray) -> np.ndarray:
    """Per-prompt sums of the judge's rows (dense)."""
    dense = values.toarray() if hasattr(values, "toarray") else np.asarray(values)
    codes, _ = pd.factorize(pairs["prompt_id"], sort=True)
    out = np.zeros((codes.max() + 1, dense.shape[1]))
    np.add.at(out, codes[rows], dense[rows])
    return out


@pytest.mark.parametrize("with_family", [False, True])
def test_one_step_resamples_match_the_exact_refit(with_family: bool) -> None:
    pairs = _table()
    codes, labels = judge_codes(pairs, None)
    side = favored_side(pairs, relation="self")
    fam = None
    if with_family:  # m1 and m0 share a family: the model gets a family term
        families = {"m0": "f", "m1": "f", **{m: m for m in OTHER_STRENGTHS if m != "m1"}}
        fam = favored_side(pairs, relation="family", families=families)
    kw = dict(side=side, family_side=fam, rungs=True, stratum=None)
    exact, problems = calibrated_specs(pairs, codes, labels, one_step=False, **kw)
    one, problems_one = calibrated_specs(pairs, codes, labels, one_step=True, **kw)
    assert not problems and not problems_one
    assert [s.metric for s in exact] == [s.metric for s in one]
    names = [CALIBRATED, *([FAMILY_CALIBRATED] if with_family else []), *CALIBRATED_RUNGS]
    assert [s.metric for s in one] == names
    assert "one Newton step" in one[0].method and "exactly" in exact[0].method
    rng = np.random.default_rng(0)
    judge = 0  # m0: the judge with a self term
    for e, o in zip(exact, one, strict=True):
        rows = np.flatnonzero(e.stat.group == judge)
        assert np.array_equal(rows, np.flatnonzero(o.stat.group == judge))
        se_sums = _cluster_sums(e.stat.values, pairs, rows)
        os_sums = _cluster_sums(o.stat.values, pairs, rows)
        point_exact = float(e.stat.combine(se_sums.sum(0)))
        point_one = float(ratio(os_sums.sum(0)[:2]))
        assert point_one == pytest.approx(point_exact, abs=1e-9)
        # the model's sums ride behind the two resampled columns: same components
        assert o.components is not None and e.components is not None
        assert o.components(os_sums.sum(0)) == pytest.approx(e.components(se_sums.sum(0)))
        n_c = len(se_sums)
        counts = rng.multinomial(n_c, np.full(n_c, 1.0 / n_c), size=100).astype(float)
        rep_exact = e.stat.combine(counts @ se_sums)
        rep_one = ratio((counts @ os_sums)[:, :2])
        spread = float(np.std(rep_exact))
        if o.metric == "calibrated_rung_human_neither":  # no human ties here: 0 in both
            assert np.allclose(rep_one, 0.0) and np.allclose(rep_exact, 0.0)
            continue
        assert spread > 0.003  # the comparison is over a real spread
        gap = np.abs(rep_one - rep_exact)
        assert gap.mean() < 0.15 * spread, o.metric
        assert gap.max() < spread, o.metric
        assert np.corrcoef(rep_one, rep_exact)[0, 1] > 0.99


def test_one_step_interval_is_close_to_the_exact_one() -> None:
    pairs = _table(n_prompts=150, seed=9)
    a = calibrated_self_preference(
        pairs, judge="m0", boot=Resampling(n_boot=1000, seed=3), one_step=False
    )
    b = calibrated_self_preference(
        pairs, judge="m0", boot=Resampling(n_boot=1000, seed=3), one_step=True
    )
    assert b.estimate == pytest.approx(a.estimate, abs=1e-9)
    width = a.ci_high - a.ci_low
    assert abs(b.ci_low - a.ci_low) < 0.1 * width
    assert abs(b.ci_high - a.ci_high) < 0.1 * width
    assert b.std_error == pytest.approx(a.std_error, rel=0.1)


def test_one_step_is_chosen_past_the_pattern_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    from recuse.metrics import competence

    pairs = _table(n_prompts=40, seed=2)
    monkeypatch.setattr(competence, "MAX_PATTERNS", 10)
    r = calibrated_self_preference(pairs, judge="m0", boot=Resampling(n_boot=200))
    assert "one Newton step" in r.method and "more than the 10 refitted" in r.method
    with pytest.raises(Exception, match="more than the 10"):
        calibrated_self_preference(pairs, judge="m0", boot=Resampling(n_boot=200), one_step=False)


def test_one_step_carries_the_label_term_of_a_near_perfect_judge() -> None:
    """A judge near its ceiling gets the label term α·label in its competence model
    (``label="auto"``); the one-step resamples linearise that model, α included: on 320
    prompts its interval is the exact refit's to 5% of the width (80 prompts: 8-12%,
    1,280: 1%: the gap is second order)."""
    from recuse.simulate.self_preference import simulate_lapse_judge

    pairs = simulate_lapse_judge(own_rate=0.9, shift=1.0, seed=1, n_prompts=320).pairs
    a = calibrated_self_preference(
        pairs, judge="m0", boot=Resampling(n_boot=1000, seed=3), one_step=False
    )
    b = calibrated_self_preference(
        pairs, judge="m0", boot=Resampling(n_boot=1000, seed=3), one_step=True
    )
    assert "conditioned on each pair's human label" in a.method
    assert b.estimate == pytest.approx(a.estimate, abs=1e-9)
    width = a.ci_high - a.ci_low
    assert abs(b.ci_low - a.ci_low) < 0.05 * width
    assert abs(b.ci_high - a.ci_high) < 0.05 * width
    assert b.std_error == pytest.approx(a.std_error, rel=0.03)


def test_the_label_term_is_chosen_past_the_pattern_limit_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Whether a judge sits at its ceiling (and gets the label term) is decided from the
    model's sums, which the one-step fits hold past the exact refit's limit: before,
    the check asked the exact path, which refuses such tables, so a large table never
    got the label term."""
    from recuse.metrics import competence
    from recuse.simulate.self_preference import simulate_lapse_judge

    pairs = simulate_lapse_judge(own_rate=0.9, shift=1.0, seed=1, n_prompts=320).pairs
    small = calibrated_self_preference(
        pairs, judge="m0", boot=Resampling(n_boot=200), one_step=True
    )
    monkeypatch.setattr(competence, "MAX_PATTERNS", 10)
    large = calibrated_self_preference(pairs, judge="m0", boot=Resampling(n_boot=200))
    assert "one Newton step" in large.method
    assert "conditioned on each pair's human label" in small.method
    assert "conditioned on each pair's human label" in large.method
    assert large.estimate == pytest.approx(small.estimate, abs=1e-12)


def test_choosing_fewer_judges_keeps_a_judges_interval(shared_data: Path) -> None:
    """On llmbar-mtbench, GPT-4's calibrated interval read [−0.123, +0.050] from every
    judge (``recuse audit``, ``metrics pairs``) and [−0.108, +0.064] with ``--judge gpt-4
    --judge ChatGPT``: the exact-or-one-step choice counted the judges chosen (925
    patterns × 4 judges is over MAX_PATTERNS, × 2 is under), so the same judge got
    another resampling method. It counts the table's judges and patterns now; the
    interval is the same, and so is the method's sentence."""
    from recuse.data.inputs import load_input
    from recuse.metrics.competence import MAX_PATTERNS
    from recuse.metrics.summary import pairwise_bias
    from recuse.roster import Roster

    table = load_input("llmbar-mtbench", data_dir=shared_data).frame
    assert table["judge"].nunique() == 4
    boot = Resampling(n_boot=100, seed=3)
    got = {}
    for judges in (None, ["gpt-4", "gpt-3.5-turbo"], ["gpt-4"]):
        r = pairwise_bias(table, Roster.builtin(), judges=judges, metrics=[CALIBRATED],
                          boot=boot).get(CALIBRATED, "gpt-4")  # fmt: skip
        got[str(judges)] = (r.estimate, r.ci_low, r.ci_high, r.method)
    first = next(iter(got.values()))
    for key, value in got.items():
        assert value[:3] == pytest.approx(first[:3], abs=1e-12), key
        assert value[3] == first[3], key
    assert f"for the table's 4 judge(s), more than the {MAX_PATTERNS}" in first[3]


def test_the_audits_judge_option_keeps_a_judges_interval(shared_data: Path) -> None:
    """``recuse audit llmbar-mtbench --judge gpt-4`` read GPT-4's calibrated interval
    [−0.108, +0.064] where the whole audit and ``recuse metrics pairs --judge gpt-4``
    read [−0.123, +0.050]: the audit took the other judges' rows out before its shared
    bootstrap, so the exact-or-one-step choice saw one judge and its patterns only. The
    shared bootstrap reads the whole table now: the audit with and without ``--judge``
    and ``pairwise_bias`` give one interval and one method sentence, for the calibrated
    estimate, its family preference and the parts of its ladder."""
    from recuse.data.inputs import load_input
    from recuse.driver import AuditOptions, run_audit
    from recuse.metrics.summary import pairwise_bias
    from recuse.roster import Roster

    inp = load_input("llmbar-mtbench", data_dir=shared_data)
    keys = (CALIBRATED, FAMILY_CALIBRATED, "self_preference_part_human_prefers_own")
    only = ("self-preference", "family-preference", "self-preference-ladder")

    def audit(judges: tuple[str, ...]) -> dict[str, tuple[float, float, float]]:
        o = AuditOptions(judges=judges, n_boot=100, seed=3, only=only)
        found = run_audit([inp], options=o, roster=Roster.builtin()).findings
        return {f.bias.key: (f.estimate, f.ci_low, f.ci_high)
                for f in found if f.judge == "gpt-4" and f.bias.key in keys}  # fmt: skip

    every, one = audit(()), audit(("gpt-4",))
    assert set(every) == set(keys)
    boot = Resampling(n_boot=100, seed=3)
    direct = pairwise_bias(inp.frame, Roster.builtin(), judges=["gpt-4"], metrics=[CALIBRATED],
                           boot=boot).get(CALIBRATED, "gpt-4")  # fmt: skip
    assert every[CALIBRATED] == pytest.approx((direct.estimate, direct.ci_low, direct.ci_high))
    for key in keys:
        assert one[key] == pytest.approx(every[key], abs=1e-12), key


def test_a_judge_missing_a_category_is_estimated_beside_the_others(shared_data: Path) -> None:
    """With GPT-3.5's pairs of the first 10 prompts of llmbar-mtbench left out, a
    category held only the other judges' pairs: choosing GPT-3.5 (``recuse metrics
    pairs --judge``, and ``recuse audit --judge``, which resamples the whole table) gave
    that stratum the column -1 and the one-step resamples stopped with "'list' argument
    must have no negative elements". Those pairs weigh nothing in GPT-3.5's fit: its
    estimates and intervals are those of the whole table's run."""
    from recuse.data.inputs import load_input
    from recuse.metrics.summary import pairwise_bias
    from recuse.roster import Roster

    table = load_input("llmbar-mtbench", data_dir=shared_data).frame
    j = "gpt-3.5-turbo"
    left = table["prompt_id"].isin(sorted(table["prompt_id"].unique())[:10])
    table = table[~(left & (table["judge"] == j))].reset_index(drop=True)
    metrics = [CALIBRATED, FAMILY_CALIBRATED, "calibrated_rung_human_prefers_own"]
    got = {}
    for judges in (None, [j]):
        r = pairwise_bias(table, Roster.builtin(), judges=judges, metrics=metrics,
                          boot=Resampling(n_boot=100, seed=1))  # fmt: skip
        got[str(judges)] = {x.metric: (x.estimate, x.ci_low, x.ci_high)
                            for x in r.results if x.judge == j}  # fmt: skip
    assert set(got["None"]) == set(metrics)
    for metric in metrics:
        assert got[str([j])][metric] == pytest.approx(got["None"][metric], abs=1e-12), metric


def test_the_result_says_how_its_resamples_were_refitted() -> None:
    """``MetricResult.refit`` is set where the resampling is chosen (calibrated_specs):
    "exact" or "one-step" on the calibrated estimate and its family preference, as
    their method text says in words; None on a metric that refits nothing."""
    from recuse.metrics.estimate import run_specs

    pairs = _table(n_prompts=60)
    codes, labels = judge_codes(pairs, None)
    families = {"m0": "f", "m1": "f", **{m: m for m in OTHER_STRENGTHS if m != "m1"}}
    kw = dict(side=favored_side(pairs, relation="self"), stratum=None,
              family_side=favored_side(pairs, relation="family", families=families))  # fmt: skip
    for one_step, refit, words in ((False, "exact", "exactly in every resample"),
                                   (True, "one-step", "one Newton step")):  # fmt: skip
        specs, _ = calibrated_specs(pairs, codes, labels, one_step=one_step, rungs=True, **kw)
        results, _ = run_specs(specs, pairs["prompt_id"], boot=Resampling(n_boot=20), min_n=1)
        by = {r.metric: r for r in results if r.judge == "m0"}
        for metric in (CALIBRATED, FAMILY_CALIBRATED):
            assert by[metric].refit == refit and words in by[metric].method
        assert all(by[m].refit is None for m in CALIBRATED_RUNGS if m in by)
    from recuse.metrics.self_preference import self_preference

    assert self_preference(pairs, judge="m0", boot=Resampling(n_boot=20), min_n=1).refit is None
