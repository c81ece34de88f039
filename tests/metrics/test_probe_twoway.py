"""A probe effect whose edit moves pairs both ways on few prompts: the padded interval
(:func:`recuse.metrics.estimate.padded_span`) against a planted truth, by hand.

A pick judge on 10 prompts of 3 base pairs. Each pair's original pick for the treated
answer is a fair coin ``s``; the placebo keeps it but on a tenth of pairs, re-drawn (a
fair coin again, so the placebo is a fair coin too and E[s − s_placebo] = 0). A quarter
of the prompts react to the edit: such a prompt moves toward the treated answer with
probability ρ = 0.8, else away, and each of its pairs moves with probability h = 0.8 (its
pick set to 1, or to 0). The true effect, by hand:

    E[s_edit − s_placebo] = E[s_edit − s] = π · h · (ρ · ½ − (1 − ρ) · ½)
                          = 0.25 · 0.8 · 0.3 = 0.06

(a pair moved toward the treated answer gains ½ on average: it was lost half the time).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from recuse.metrics import probes
from recuse.metrics.bootstrap import Resampling
from recuse.metrics.estimate import MetricSpec, extrapolated_words, padded_factor, padded_span
from recuse.metrics.probes import probe_effects
from recuse.metrics.result import MetricResult

PI, RHO, H = 0.25, 0.8, 0.8
TRUTH = PI * H * (RHO - 0.5)


def _row(q: int, k: int, probe: str, treated: str, share: float) -> dict[str, object]:
    return {
        "judge": "j", "prompt_id": f"q{q}", "base_item": f"q{q}-{k}",
        "item_id": f"q{q}-{k}:{probe}", "probe": probe, "treated": treated,
        "model_a": "x", "model_b": "y", "p_a": share if treated == "a" else 1.0 - share,
    }  # fmt: skip


def _table(rng: np.random.Generator, prompts: int = 10, per_prompt: int = 3) -> pd.DataFrame:
    rows = []
    for q in range(prompts):
        reacts, toward = rng.random() < PI, rng.random() < RHO
        for k in range(per_prompt):
            s = float(rng.random() < 0.5)
            placebo = s if rng.random() > 0.1 else float(rng.random() < 0.5)
            edit = (1.0 if toward else 0.0) if reacts and rng.random() < H else s
            treated = "a" if rng.random() < 0.5 else "b"
            for probe, share in (("original", s), ("placebo", placebo), ("authority", edit)):
                rows.append(_row(q, k, probe, treated, share))
    return pd.DataFrame(rows)


def _effect(table: pd.DataFrame, seed: int) -> MetricResult:
    res, _ = probe_effects(table, boot=Resampling(n_boot=300, seed=seed))
    (x,) = [x for x in res if x.metric == "probe_authority"]
    return x


def test_the_padding_is_two_more_prompts_variance_by_hand() -> None:
    """k = √(1 + 2 / ν): 4 effective prompts → √1.5 = 1.2247; [0.06, 0.14] about 0.1 →
    0.1 ∓ 0.04 · 1.2247 = [0.05101, 0.14899]; 20 effective → √1.1; none (ν infinite) → 1."""
    assert math.isclose(padded_factor(4.0), math.sqrt(1.5))
    low, high = padded_span(0.1, 0.06, 0.14, effective=4.0)
    assert math.isclose(low, 0.1 - 0.04 * math.sqrt(1.5))
    assert math.isclose(high, 0.1 + 0.04 * math.sqrt(1.5))
    assert math.isclose(padded_factor(20.0), math.sqrt(1.1))
    assert padded_factor(math.inf) == 1.0 and padded_factor(math.nan) == 1.0


def test_an_effect_few_prompts_move_both_ways_is_held_about_nine_times_in_ten() -> None:
    """200 tables of 10 prompts: the interval holds 0.06 at least 0.85 of the time (0.87
    here: 108 padded, 75 moved one way only and expanded; the plain BCa interval 0.795 on
    the same tables, the first padding, a pseudo-prompt 0.25 away, 0.87 too; the
    benchmark's ``probes-twoway`` section, this design at 300 tables: 0.807 plain, 0.893
    padded). Its p-value inverts it: the interval excludes 0 exactly where p < 0.1."""
    held, rules = [], set()
    for r in range(200):
        x = _effect(_table(np.random.default_rng(5_000 + r)), seed=r)
        held.append(x.ci_low <= TRUTH <= x.ci_high)
        rules.add(x.interval_rule)
        if x.interval_rule == "widened" and "two more prompts' variance" in x.method:
            excludes = not x.ci_low <= 0.0 <= x.ci_high
            assert excludes == (x.p_value < 0.1), (r, x.ci_low, x.ci_high, x.p_value)
    assert "widened" in rules
    assert np.mean(held) >= 0.85, np.mean(held)


def test_the_padded_p_value_agrees_with_its_interval_on_many_tables() -> None:
    """Over 160 seeded tables of 10 prompts, every padded interval excludes 0 exactly
    where its p-value is under 0.1. Counting the resamples beyond a point while the ends
    interpolate between them, the earlier p-value read 0.1012 beside [0.018, 0.232] (seed
    7) and 0.1021 beside [0.017, 0.374] (seed 35); :func:`padded_p_value` inverts the
    padded ends themselves."""
    padded = 0
    for seed in range(160):
        x = _effect(_table(np.random.default_rng(seed)), seed)
        if x.interval_rule != "widened":
            continue
        padded += 1
        excludes = not x.ci_low <= 0.0 <= x.ci_high
        assert excludes == (x.p_value < 0.1), (seed, x.ci_low, x.ci_high, x.p_value)
    assert padded >= 60, padded


def test_small_probability_moves_get_a_padding_their_size() -> None:
    """A probability judge whose edit moves the treated answer's share by up to 0.03 (U(0,
    0.03), up with chance 0.8, else down) on each pair of a quarter of 20 prompts of 2
    pairs; the placebo re-draws a tenth of the shares by N(0, 0.05²). Truth, by hand:
    E[edit − s] = π h (2ρ − 1) d / 2 = 0.25 · 0.8 · 0.6 · 0.015 = 0.0018. The padding's
    scale is the data's (ν and the resamples' spread): the intervals hold it 0.8–0.97 of
    the time at a mean width under 0.02. The fixed pseudo-prompt 0.25 away (a pick's
    scale) held it 0.98 at 0.043 wide (``benchmarks/probe_heldout.py``, 4.9 times the
    plain width)."""
    truth = 0.25 * 0.8 * 0.6 * 0.015
    held, widths = [], []
    for r in range(100):
        rng = np.random.default_rng(70_000 + r)
        rows = []
        for q in range(20):
            reacts, up = rng.random() < 0.25, rng.random() < 0.8
            for k in range(2):
                s = rng.uniform(0.3, 0.7)
                placebo = s if rng.random() > 0.1 else s + rng.normal(0, 0.05)
                moved = reacts and rng.random() < 0.8
                edit = s + (1 if up else -1) * rng.uniform(0, 0.03) if moved else s
                for probe, share in (("original", s), ("placebo", placebo), ("authority", edit)):
                    rows.append(_row(q, k, probe, "a", share))
        x = _effect(pd.DataFrame(rows), seed=r)
        held.append(x.ci_low <= truth <= x.ci_high)
        widths.append(x.ci_high - x.ci_low)
    assert 0.8 <= np.mean(held) <= 0.97, np.mean(held)
    assert np.mean(widths) < 0.02, np.mean(widths)


def test_the_padded_interval_says_so_and_one_all_prompts_move_is_not_padded() -> None:
    """The rule and method words name the padding where few prompts move both ways (3 of
    10 here); where they move one way only, the interval is the expanded BCa; where more
    than half do (18 of 20 prompts, one way: 11 win one pair, 7 both) it is expanded a
    share ``2 (1 − m*/20)`` of the way (:func:`~recuse.metrics.estimate.expansion_share`),
    unpadded, ``m*`` the prompts counted by the size of their net moves, ``(11 + 2·7)² /
    (11 + 4·7)`` = 625 / 39 = 16.03: 0.4 (counted as 18, 0.2)."""
    rows = []
    for q in range(10):
        for k in range(3):
            # prompts 0 and 1: a pair won with the edit; prompt 2: a pair lost with it
            s, edit = (1.0, 0.0) if (q, k) == (2, 0) else (0.0, float(q < 2 and k == 0))
            for probe, share in (("original", s), ("placebo", s), ("authority", edit)):
                rows.append(_row(q, k, probe, "a", share))
    x = _effect(pd.DataFrame(rows), seed=0)
    assert x.interval_rule == "widened", x.method
    assert "(3 of 10)" in x.method and "two more prompts' variance" in x.method
    # the same prompts moved one way only (prompt 2 wins its pair too): expanded, not padded
    one_way = pd.DataFrame(rows)
    lost = (one_way["base_item"] == "q2-0") & (one_way["probe"] == "authority")
    one_way.loc[lost, "p_a"] = 1.0
    one_way.loc[(one_way["base_item"] == "q2-0") & ~lost, "p_a"] = 0.0
    z = _effect(one_way, seed=0)
    assert z.interval_rule == "expanded" and "two more prompts" not in z.method, z.method
    rng = np.random.default_rng(3)
    dense = [
        _row(q, k, probe, "a", float(share))
        for q in range(20)
        for k in range(2)
        for probe, share in zip(
            ("original", "placebo", "authority"), (0, 0, rng.random() < 0.6), strict=True
        )
    ]
    y = _effect(pd.DataFrame(dense), seed=0)
    assert y.interval_rule == "expanded" and "more prompts" not in y.method, y.method
    assert round(625 / 39, 2) == 16.03 and round(2 * (1 - 625 / 39 / 20), 2) == 0.4
    assert "expanded 0.4 of the way (18 of 20 prompts move it, 16.03 by the size" in y.method


def test_the_padded_ends_and_error_are_the_expanded_ones_times_k(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Same table, same resamples, three ways: the plain BCa (its standard deviation
    ``se``), the expanded BCa ``[el, eh]``, and the padded: its ends are ``est ∓ k (est −
    el | eh − est)`` and its standard error the expanded one times ``k``, with ``k =
    √(1 + 2 / ν)`` and ``ν`` the prompts' effective number computed here by hand from the
    table — what the gate's projection (z · se) and the "detectable" line read."""
    table = _table(np.random.default_rng(5_004))
    padded = _effect(table, seed=3)
    assert padded.interval_rule == "widened", padded.method

    def spec(**changes: object) -> MetricResult:
        def make(*args: object, **kw: object) -> MetricSpec:
            return MetricSpec(*args, **{**kw, **changes})  # type: ignore[arg-type]

        monkeypatch.setattr(probes, "MetricSpec", make)
        try:
            return _effect(table, seed=3)
        finally:
            monkeypatch.undo()

    plain = spec(padded=None)
    expanded = spec(padded=None, expanded=True)
    assert plain.interval_rule == "bca" and expanded.interval_rule == "expanded"
    est, g = padded.estimate, padded.n_clusters
    # ν by hand: Satterthwaite's (Σ r²)² / Σ r⁴ over the prompts' residuals r_p = Σ_pairs
    # (edit − placebo) − θ̂ · pairs_p (θ̂ the estimate), as sparse_counts reads it
    d = table.assign(s=np.where(table["treated"] == "a", table["p_a"], 1 - table["p_a"]))
    w = d.pivot_table(index=["prompt_id", "base_item"], columns="probe", values="s")
    per = (w["authority"] - w["placebo"]).groupby(level=0).agg(["sum", "size"])
    r2 = (per["sum"] - est * per["size"]) ** 2
    # the weight by hand: the fewer way's share r of the squared moves, w = min(1, 8 r)
    moves = w["authority"] - w["placebo"]
    up, down = (moves[moves > 0] ** 2).sum(), (moves[moves < 0] ** 2).sum()
    weight = min(1.0, 8 * min(up, down) / (up + down))
    assert up == down == 3.0 and weight == 1.0  # 3 pairs moved each way: r = ½
    k = math.sqrt(1 + 2 * weight / (r2.sum() ** 2 / (r2**2).sum()))
    assert k > 1.05 and g == 10
    assert math.isclose(padded.ci_low, est - k * (est - expanded.ci_low), rel_tol=1e-12)
    assert math.isclose(padded.ci_high, est + k * (expanded.ci_high - est), rel_tol=1e-12)
    assert math.isclose(padded.std_error, expanded.std_error * k, rel_tol=1e-12)


@pytest.mark.parametrize("toward", [1.0, 0.0])
@pytest.mark.parametrize(("prompts", "level"), [(6, 0.99), (4, 0.9)])
def test_the_padded_ends_stay_within_minus_one_to_one(
    toward: float, prompts: int, level: float
) -> None:
    """Half the prompts move both their pairs the whole way (+1 each, or −1), one pair
    0.02 back: the effect is about ±0.5 and each pair's term lies in −1..+1, so no
    interval end may pass ±1. Padded unclamped they read past 1 (6 prompts at 99%, 4 at
    90%);
    the end past the resamples is the metric's extent, the other the padded one, and the
    p-value still inverts the interval (0 inside it, p at least 1 − level)."""
    rows = []
    for q in range(prompts):
        for k in range(2):
            s, edit = (1.0 - toward, toward) if q < prompts // 2 else (0.0, 0.0)
            for probe, share in (("original", s), ("placebo", s), ("authority", edit)):
                rows.append(_row(q, k, probe, "a", share))
    # one more pair on the first prompt moved 0.02 the other way: the pairs move both ways
    back = 0.48 if toward else 0.52
    for probe, share in (("original", 0.5), ("placebo", 0.5), ("authority", back)):
        rows.append(_row(0, 2, probe, "a", share))
    res, _ = probe_effects(pd.DataFrame(rows), boot=Resampling(n_boot=2000, seed=1, level=level))
    (x,) = res
    assert x.interval_rule == "widened", x.method
    moved = prompts // 2 * 2 - 0.02  # the moved pairs' terms, toward the edit's way
    assert x.estimate == pytest.approx((moved if toward else -moved) / (2 * prompts + 1))
    assert -1.0 <= x.ci_low <= x.ci_high <= 1.0, (x.ci_low, x.ci_high)
    assert (x.ci_high if toward else -x.ci_low) == 1.0  # the far end on the extent
    assert x.ci_low <= 0.0 <= x.ci_high and x.p_value >= 1 - level


def test_a_padded_interval_extrapolated_past_the_resamples_says_so_in_its_method() -> None:
    """10 prompts at 99% ask the expanded BCa for a tail past the 0.0025 that 2,000
    resamples read: the ends are extrapolated (the warning says it), and the method, which
    names the padding, names that too, as an expanded interval's does (it named only the
    padding)."""
    table = _table(np.random.default_rng(5_004))
    res, _ = probe_effects(table, boot=Resampling(n_boot=2000, seed=0, level=0.99))
    (x,) = res
    assert x.interval_rule == "widened" and "two more prompts' variance" in x.method, x.method
    assert any("beyond the 2,000 resamples" in w for w in x.warnings), x.warnings
    assert x.extrapolated is not None and x.extrapolated.warning() in x.warnings
    assert x.method.endswith(f"; {extrapolated_words(x.extrapolated.side)}"), x.method


def test_every_description_of_the_widened_rule_and_the_effects_columns_names_the_padding() -> None:
    """A padded effect's report.json says ``interval_rule`` "widened": the schema's and
    the gate page's list of rules described "widened" as a position rate's (Student's t)
    or the cancelled moves' exact bound only, and the probe effects table's ``ci_low``
    column as the bootstrap's or the exact bound — none named the padding."""
    from pathlib import Path

    from recuse.analyses.probes import TABLE_COLUMNS
    from recuse.report.export import schema

    rule = schema()["$defs"]
    text = str(rule)
    assert "both ways on at most half the prompts: the expanded BCa interval" in text
    assert "√(1 + 2 w τ / ν)" in text and "w = min(1, 8 r)" in text
    assert "past half the prompts moving, the expansion fades" in text
    # τ counts the moving prompts by the size of their net moves (moved_number): the
    # words said "m/G", "where every prompt moves", as a count
    assert "τ = min(1, 2(1 − m*/G))" in text and "by the size of their net moves" in text
    page = Path(__file__).resolve().parents[2].joinpath("docs", "ci-gate.md").read_text("utf-8")
    assert "most half the prompts move, the expanded BCa interval padded" in " ".join(page.split())
    assert "padded by up to two more effective prompts' variance" in TABLE_COLUMNS["ci_low"]
    assert "in proportion to the moving variance the fewer way carries" in " ".join(page.split())
    assert "all move alike (the moving prompts counted by the size of their net moves)" in (
        " ".join(page.split())
    )
    assert "by the size of their net moves" in TABLE_COLUMNS["ci_low"]


def test_the_padded_method_writes_the_effective_prompts_as_a_plain_number() -> None:
    """ν in the method's words: one decimal under 10 (5.26 → 5.3, 2.0 → 2), whole from 10
    on (123.4 → 123, 1,234.0 → 1,234); ``:.2g`` wrote 123.4 as "1.2e+02" (an audit of a
    few hundred prompts, a third moving)."""
    from recuse.metrics.estimate import padded_method

    def nu(effective: float) -> str:
        words = padded_method(boot=Resampling(), clusters=3000, moving=900, effective=effective)
        return words.rsplit("ν ", 1)[1].rstrip(")")

    assert [nu(x) for x in (2.0, 5.26, 99.7, 123.4, 1234.0)] == ["2", "5.3", "100", "123", "1,234"]


def test_every_description_of_the_expanded_rule_names_the_one_way_probe_effect() -> None:
    """An effect moved one way only on at most half the prompts reads ``interval_rule``
    "expanded" (not padded), one pair moved back turns it "widened" (1.2–1.4 times as
    wide at ν 2–5): the schema's "expanded", the gate page, the audit's bootstrap words
    and the effects table's ``ci_low`` column named the padded case only, so a reader of
    the one-way case could not tell why its rule differs."""
    from pathlib import Path

    from recuse.analyses.base import BOOTSTRAP_WORDS
    from recuse.analyses.probes import TABLE_COLUMNS
    from recuse.report.export import schema

    text = str(schema()["$defs"])
    assert "moved one way only on at most half the prompts: expanded, not padded" in text
    page = Path(__file__).resolve().parents[2].joinpath("docs", "ci-gate.md").read_text("utf-8")
    one_way = "moved one way only on at most half the prompts: expanded, not padded"
    assert one_way in " ".join(page.split())
    assert "moved one way only on at most half the prompts: the BCa interval" in BOOTSTRAP_WORDS
    assert "expanded for the prompts (pairs moved one way only)" in TABLE_COLUMNS["ci_low"]
