"""Position: the finding is the first-position rate, its no-bias value 0.5."""

from __future__ import annotations

import math

import pytest

from analyses.conftest import BOOT, Planted
from recuse.analyses.position import ANALYSIS, POSITION
from recuse.metrics.position import first_position_rate


def test_finding_is_the_first_position_rate(planted: Planted) -> None:
    (f,) = [f for f in planted.report.findings if f.bias is POSITION and f.judge == "claude-v1"]
    ref = first_position_rate(planted.pairs, judge="claude-v1", **BOOT)  # type: ignore[arg-type]
    assert f.estimate == pytest.approx(ref.estimate) and f.null == 0.5
    assert f.direction == "positive" and f.section == ANALYSIS.id  # planted: +0.1 to first
    assert not f.text.startswith("+")  # a rate, printed without a sign


def test_the_finding_recovers_a_planted_first_position_rate() -> None:
    """Planted truth (simulate_pairs): a judge that decides by slot with probability
    2|position| has a first-position rate of exactly 0.5 + position. gpt-4 is planted at
    0.62 (prefers the first slot), claude-v1 at 0.40 (the second). Over three seeds the
    audit's finding is within 0.03 of the truth each time, 0.015 on average, and on the
    truth's side of 0.5; a sign error (1 − rate: 0.38, 0.60) or reading the flip rate
    (0.24, 0.20) would miss by more than 0.2."""
    from analyses.conftest import audit_only
    from recuse.roster import Roster
    from recuse.simulate import PlantedBias, simulate_pairs

    plants = {"gpt-4": PlantedBias(position=0.12), "claude-v1": PlantedBias(position=-0.10)}
    got: dict[str, list[float]] = {j: [] for j in plants}
    for seed in range(3):
        sim = simulate_pairs(judges=plants, n_prompts=150, seed=seed)
        report = audit_only(ANALYSIS.id, sim.pairs, Roster.builtin())
        found = {f.judge: f for f in report.findings if f.bias is POSITION}
        assert set(found) == set(plants)
        for judge, f in found.items():
            truth = sim.true_value("first_position_rate", judge)
            assert f.estimate == pytest.approx(truth, abs=0.03), (seed, judge)
            assert (f.ci_low > 0.5) == (truth > 0.5) and (f.ci_high < 0.5) == (truth < 0.5)
            got[judge].append(f.estimate)
    assert sum(got["gpt-4"]) / 3 == pytest.approx(0.62, abs=0.015)
    assert sum(got["claude-v1"]) / 3 == pytest.approx(0.40, abs=0.015)


def _order_table(first: list[float], second: list[float]) -> object:
    import pandas as pd

    from recuse.tables import validate_pairs

    n = len(first)
    return validate_pairs(
        pd.DataFrame({
            "item_id": [f"i{k}" for k in range(n)], "prompt_id": [f"p{k}" for k in range(n)],
            "model_a": None, "model_b": None, "human": None, "judge": "j",
            "p_a_first": first, "p_a_second": second, "p_a": None,
        })
    )  # fmt: skip


def test_a_judge_blind_to_the_order_is_told_so_not_to_add_harder_pairs() -> None:
    """A reward model scores each answer alone: its verdict is the same in both orders,
    so its first-position rate is (p + 1 − p) / 2 = 0.5 on every pair and the interval
    has no width. That is the judge, not a lack of hard pairs: the note says so."""
    from recuse.metrics.bootstrap import Resampling
    from recuse.metrics.position import flip_rate, position_consistency

    boot = Resampling(n_boot=200)
    p = [0.9, 0.2, 1.0, 0.0, 0.7, 0.4, 0.55, 0.1, 1.0, 0.3, 0.8, 0.6]
    blind = _order_table(p, p)
    r = first_position_rate(blind, boot=boot, min_n=1)
    # a judge that flips one pair in ten is consistent on 12 with chance 0.9^12 = 0.28:
    # the data cannot tell it from a reward model. None of 12 prompts changed, so the
    # share that could is at most u = 1 − 0.1^(1/12) = 0.1746 at 90% (Clopper–Pearson,
    # 0 of 12: scipy's beta.ppf(0.9, 1, 12)); the rate moves at most u/2 either way
    from scipy.stats import beta

    u = float(beta.ppf(0.9, 1, 12))
    assert u == pytest.approx(0.17460, abs=1e-5)
    assert r.estimate == 0.5 and not r.fixed
    assert (r.ci_low, r.ci_high) == pytest.approx((0.5 - u / 2, 0.5 + u / 2), abs=1e-12)
    assert not any("add harder pairs" in w for w in r.warnings)
    (note,) = [w for w in r.warnings if "same in both orders" in w]
    assert "on all 12 pairs" in note and "reward model" in note and "by chance" in note
    consistency = position_consistency(blind, boot=boot, min_n=1)
    flips = flip_rate(blind, boot=boot, min_n=1)
    assert (consistency.estimate, flips.estimate) == (1.0, 0.0)
    assert (consistency.ci_low, consistency.ci_high) == pytest.approx((1 - u, 1.0))
    assert (flips.ci_low, flips.ci_high) == pytest.approx((0.0, u))
    for other in (consistency, flips):
        assert any("same in both orders on all 12 pairs" in w for w in other.warnings)
    # a judge that always takes the first slot (p_a_first 1, p_a_second 0) also has a
    # zero-width interval, at 1.0; its verdict depends on the order: the old note
    slot = first_position_rate(_order_table([1.0] * 12, [0.0] * 12), boot=boot, min_n=1)
    assert slot.estimate == 1.0 and slot.ci_low == slot.ci_high == 1.0
    assert any("add harder pairs" in w for w in slot.warnings)
    assert not any("same in both orders" in w for w in slot.warnings)
    # one pair judged differently in the two orders: not blind, no note
    q = [*p[:-1], 0.2]
    mixed = first_position_rate(_order_table(p, q), boot=boot, min_n=1)
    assert mixed.estimate == pytest.approx((6 + (0.6 + 1 - 0.2) / 2) / 12 - 0.5 / 12)
    assert not any("same in both orders" in w for w in mixed.warnings)


def test_an_order_blind_judge_on_prompts_of_unequal_size_is_bounded_by_their_pairs() -> None:
    """0 of n prompts changed with the order bounds the share of prompts that could by
    u = 1 − 0.1^(1/n); a share of pairs it bounds only through the prompts' sizes: those
    prompts hold at most u · max/mean of the pairs. Planted truth: half the prompts hold
    1 pair, half 2, and the judge flips (to the first slot) a 2-pair prompt with chance
    0.3: 15% of prompts, 20% of pairs, a first-position rate of 0.6. With 12 prompts
    (u = 0.1746 > 0.15) none flips with chance 0.85^12 = 0.14, and 0.5 ± u/2 misses
    0.6 each time: 0.14 of the time at 90%. Scaled by the prompts seen (max 2 over their
    mean) it misses under 0.10. The table: 6 prompts of 1 pair and 6 of 2, max/mean =
    2/1.5: the rate's interval is 0.5 ± min(1, u · 4/3)/2 (it read 0.5 ± u/2)."""
    import numpy as np
    from scipy.stats import beta

    from recuse.metrics.bootstrap import Resampling
    from recuse.metrics.estimate import unseen_span
    from recuse.metrics.position import flip_rate

    rng = np.random.default_rng(7)
    n, reps = 12, 20_000
    big = rng.random((reps, n)) < 0.5
    flipped = big & (rng.random((reps, n)) < 0.3)
    misses = 0
    for b in big[~flipped.any(axis=1)]:  # the samples in which no prompt flipped
        sizes = np.where(b, 2.0, 1.0)
        low, high = unseen_span(0.5, n, 0.9, heaviest=sizes.max() / sizes.mean())
        misses += not low <= 0.6 <= high
    assert misses / reps < 0.10  # 0.14 with u alone (heaviest=1)

    p = [0.9, 0.2, 1.0, 0.0, 0.7, 0.4, 0.55, 0.1, 1.0, 0.3, 0.8, 0.6]
    table = _order_table(p + p[:6], p + p[:6])
    table["prompt_id"] = [f"p{k}" for k in range(12)] + [f"p{k}" for k in range(6)]
    u = float(beta.ppf(0.9, 1, 12))
    s = u * 2 / (18 / 12)
    r = first_position_rate(table, boot=Resampling(n_boot=200), min_n=1)
    assert r.n_clusters == 12 and r.estimate == 0.5
    assert (r.ci_low, r.ci_high) == pytest.approx((0.5 - s / 2, 0.5 + s / 2), abs=1e-12)
    flips = flip_rate(table, boot=Resampling(n_boot=200), min_n=1)
    assert (flips.ci_low, flips.ci_high) == pytest.approx((0.0, s), abs=1e-12)


def test_an_order_blind_judges_exact_bound_is_not_called_unreliable_or_too_narrow() -> None:
    """On 3 prompts of 2 pairs the interval of an order-blind judge is the exact bound
    for 0 of 3 (u = 1 − 0.1^(1/3) = 0.536: 0.5 ± 0.268), not a bootstrap's: it read
    "only 3 prompts: the interval is unreliable (a cluster bootstrap needs 5 or more)"
    and "low n: … the interval is likely too narrow", neither true of it (the bound
    holds its level at any n, and errs wide). A judge that does see the order keeps
    both warnings."""
    from recuse.metrics.bootstrap import Resampling

    p = [0.9, 0.2, 1.0, 0.0, 0.7, 0.4]
    table = _order_table(p, p)
    table["prompt_id"] = ["p0", "p0", "p1", "p1", "p2", "p2"]
    r = first_position_rate(table, boot=Resampling(n_boot=200), min_n=1)
    u = 1 - 0.1 ** (1 / 3)
    assert (r.n_clusters, r.ci_low, r.ci_high) == (
        3,
        pytest.approx(0.5 - u / 2),
        pytest.approx(0.5 + u / 2),
    )
    assert any("same in both orders on all 6 pairs" in w for w in r.warnings)
    assert not any("unreliable" in w or "too narrow" in w for w in r.warnings), r.warnings
    seen = _order_table(p, [*p[:-1], 0.9])
    seen["prompt_id"] = table["prompt_id"]
    w = first_position_rate(seen, boot=Resampling(n_boot=200), min_n=1).warnings
    assert any("unreliable" in x for x in w)
    # what the interval rests on is the one pair that changes, not the 6: counted
    (low,) = [x for x in w if x.startswith("low n")]
    assert "only 1 pair of 6 changes its verdict with the order, on 1 prompt" in low


def test_judgebench_reward_models_position_note(shared_data) -> None:  # type: ignore[no-untyped-def]
    """JudgeBench's InternLM2 reward models give the same verdict in both orders on all
    350 pairs (counted here from the table): their position finding carries the note."""
    from dataclasses import replace

    from recuse.driver import AuditOptions, load_input, run_audit

    jb = load_input("judgebench", data_dir=shared_data)
    f = jb.frame
    blind = {
        j for j, g in f.groupby("judge")
        if (g["p_a_first"] == g["p_a_second"]).all()
    }  # fmt: skip
    assert blind == {
        "internlm2-7b-reward",
        "internlm2-20b-reward",
        "grm-gemma-2b-rewardmodel-ft",
        "skywork-reward-gemma-2-27b",  # its equal rewards are ties, not flips
        "skywork-reward-llama-3.1-8b",
    }
    few = f[f["judge"].isin(["internlm2-7b-reward", "claude-3-haiku-20240307"])]
    report = run_audit(
        [replace(jb, frame=few)], options=AuditOptions(n_boot=100, only=("position",))
    )
    found = {x.judge: x for x in report.findings if x.bias is POSITION or x.bias.key == "position"}
    rm = found["internlm2-7b-reward"]
    # none of its prompts changed with the order: the share that could is at most
    # u = 1 − 0.1^(1/prompts) at 90%, which moves the rate at most u/2 either way
    u = 1 - 0.1 ** (1 / rm.clusters)
    assert rm.estimate == 0.5 and not rm.fixed and rm.clusters > 300
    assert (rm.ci_low, rm.ci_high) == pytest.approx((0.5 - u / 2, 0.5 + u / 2), abs=1e-12)
    assert rm.ci_high - rm.ci_low < 0.01
    # no standard error, so no "± detectable": one read off the bound's width claimed a
    # power it lacks (the bound shrinks as 1/n, not 1/√n)
    assert rm.detectable is None
    assert rm.std_error is None or not math.isfinite(rm.std_error)
    assert any("same in both orders on all 350 pairs" in w for w in rm.warnings)
    assert not any("add harder pairs" in w for w in rm.warnings)
    assert not any("same in both orders" in w for w in found["claude-3-haiku-20240307"].warnings)
