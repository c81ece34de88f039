"""A probe effect's interval moves with its data: one small pair moved back, or one more
prompt moving past half of them, changes it a little, not by a leap.

The rule (:func:`recuse.metrics.estimate.padded_span`): the expanded BCa ends times
``k = √(1 + 2 w τ / ν)``, ``w = min(1, 8 r)`` with ``r`` the share of the moving pairs'
sum of squared moves that the fewer way carries (:func:`~recuse.metrics.estimate.padding_weight`),
and the expansion a share ``τ = min(1, 2 (1 − m / G))`` of the way
(:func:`~recuse.metrics.estimate.expansion_share`). The rule before padded by ``w = 1``
wherever one pair moved back and dropped both the expansion and the padding past half
the prompts: each pair of tables below read about 1.18 times apart (1.185, 1/0.851).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm
from scipy.stats import t as student

from recuse.metrics import probes
from recuse.metrics.bootstrap import Resampling, blended_quantile, moved_number
from recuse.metrics.estimate import (
    MetricSpec,
    expansion_share,
    padded_factor,
    padded_span,
    padding_weight,
)
from recuse.metrics.probes import probe_effects
from recuse.metrics.result import MetricResult


def _table(moves: dict[int, tuple[float, float]], prompts: int = 20) -> pd.DataFrame:
    """``prompts`` prompts of 2 base pairs, treated answer in slot a, probability verdicts;
    pair 0 of prompt ``q`` in ``moves`` has original (and placebo) share ``s`` and edit share
    ``e`` (``moves[q] = (s, e)``); every other pair 0.5 in all three versions."""
    rows = []
    for q in range(prompts):
        for k in range(2):
            s, e = moves.get(q, (0.5, 0.5)) if k == 0 else (0.5, 0.5)
            for probe, share in (("original", s), ("placebo", s), ("authority", e)):
                rows.append(
                    {
                        "judge": "j", "prompt_id": f"q{q:02d}", "base_item": f"q{q:02d}-{k}",
                        "item_id": f"q{q:02d}-{k}:{probe}", "probe": probe, "treated": "a",
                        "model_a": "x", "model_b": "y", "p_a": share,
                    }
                )  # fmt: skip
    return pd.DataFrame(rows)


def _effect(table: pd.DataFrame, **changes: object) -> MetricResult:
    """The probe's result on ``table`` (2,000 resamples, seed 7), its spec changed by
    ``changes`` where given."""
    if changes:
        make = probes.MetricSpec

        def spec(*args: object, **kw: object) -> MetricSpec:
            return make(*args, **{**kw, **changes})  # type: ignore[arg-type]

        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(probes, "MetricSpec", spec)
            return _effect(table)
    res, _ = probe_effects(table, boot=Resampling(n_boot=2000, seed=7))
    (x,) = res
    return x


#: four prompts move a pair toward the treated answer (by 0.6, 0.8, 1.0 and 0.7)
ONE_WAY = {0: (0.2, 0.8), 1: (0.1, 0.9), 2: (0.0, 1.0), 3: (0.15, 0.85)}
#: the same, and prompt 10's pair moved 0.05 away
ONE_BACK = {**ONE_WAY, 10: (0.5, 0.45)}


def test_one_small_back_move_widens_the_interval_by_what_its_weight_says() -> None:
    """A one-way table (4 of 20 prompts move it, expanded, not padded) and the same with
    one pair moved 0.05 back: ``r = 0.05² / (0.6² + 0.8² + 1² + 0.7² + 0.05²) = 0.0010``,
    ``w = 8 r = 0.0080``, so the padding is ``k − 1 ≈ w / ν`` with ``ν`` ≈ 4: under
    0.003. The BCa ends themselves move with the pair's data (the estimate by 0.05 / 40
    = 0.00125 of a 0.13-wide interval). X = 0.03: the padding's 0.003 and the ends' own
    response to one pair in 40 (about 0.0013 / 0.1 at each end, 0.025 together at most);
    the rule before padded the second fully (``√(1 + 2 / ν)``: 1.2 times wider)."""
    one_way, one_back = _effect(_table(ONE_WAY)), _effect(_table(ONE_BACK))
    assert one_way.interval_rule == "expanded", one_way.method
    assert one_back.interval_rule == "widened", one_back.method
    ratio = (one_back.ci_high - one_back.ci_low) / (one_way.ci_high - one_way.ci_low)
    assert abs(ratio - 1) < 0.03, ratio
    assert "w 0.008," in one_back.method, one_back.method


def test_the_padding_weight_and_factor_by_hand() -> None:
    """The one-back table's padded ends, from the expanded BCa ends of the same
    resamples (the spec unpadded, expanded), by hand: ``w = min(1, 8 r)``, ``ν``
    Satterthwaite's over the prompts' residuals ``r_p = Σ d − θ̂ · pairs_p``, and
    ``k = √(1 + 2 w / ν)``; the standard error the expanded one times ``k``."""
    table = _table(ONE_BACK)
    padded = _effect(table)
    expanded = _effect(table, padded=None, expanded=True)
    up = 0.6**2 + 0.8**2 + 1.0**2 + 0.7**2
    r = 0.05**2 / (up + 0.05**2)
    w = min(1.0, 8 * r)
    assert math.isclose(padding_weight(r), w) and math.isclose(w, 0.0080, abs_tol=1e-4)
    est = padded.estimate
    assert math.isclose(est, (0.6 + 0.8 + 1.0 + 0.7 - 0.05) / 40)
    sums = [0.6, 0.8, 1.0, 0.7] + [0.0] * 6 + [-0.05] + [0.0] * 9
    res2 = [(s - est * 2) ** 2 for s in sums]
    nu = sum(res2) ** 2 / sum(x**2 for x in res2)
    k = math.sqrt(1 + 2 * w / nu)
    assert math.isclose(padded_factor(nu, weight=w), k)
    assert math.isclose(padded.ci_low, est - k * (est - expanded.ci_low), rel_tol=1e-9)
    assert math.isclose(padded.ci_high, est + k * (expanded.ci_high - est), rel_tol=1e-9)
    assert math.isclose(padded.std_error, expanded.std_error * k, rel_tol=1e-9)
    lo, hi = padded_span(est, expanded.ci_low, expanded.ci_high, effective=nu, weight=w)
    assert math.isclose(lo, padded.ci_low) and math.isclose(hi, padded.ci_high)


def test_the_shares_by_hand() -> None:
    """``w = min(1, 8 r)`` (0 where nothing moved back), ``τ = min(1, 2 (1 − m / G))``,
    ``k = √(1 + 2 w / ν)``, and the blended quantile ``z + τ (√(G/(G−1)) t_{G−1} − z)``."""
    assert padding_weight(0.0) == 0.0 and padding_weight(0.1) == pytest.approx(0.8)
    assert padding_weight(0.125) == 1.0 and padding_weight(0.5) == 1.0
    assert expansion_share(10, 20) == 1.0 and expansion_share(3, 20) == 1.0
    assert expansion_share(11, 20) == pytest.approx(0.9)
    assert expansion_share(15, 20) == pytest.approx(0.5) and expansion_share(20, 20) == 0.0
    assert padded_factor(4.0, weight=0.25) == pytest.approx(math.sqrt(1.125))
    assert padded_factor(4.0, weight=0.0) == 1.0 and padded_factor(4.0) == math.sqrt(1.5)
    z, zt = norm.ppf(0.95), math.sqrt(20 / 19) * student.ppf(0.95, 19)
    assert blended_quantile(0.95, 20, share=0.9) == pytest.approx(z + 0.9 * (zt - z))
    assert blended_quantile(0.95, 20, share=0.0) == pytest.approx(z)


#: half the 20 prompts move it both ways (sizes 0.3–0.9: 7 toward, 3 away)
HALF = {
    0: (0.1, 0.9), 1: (0.2, 0.8), 2: (0.3, 0.7), 3: (0.2, 0.9), 4: (0.1, 0.6),
    5: (0.3, 0.9), 6: (0.2, 0.7), 7: (0.8, 0.3), 8: (0.9, 0.4), 9: (0.7, 0.3),
}  # fmt: skip


def test_one_more_prompt_past_half_does_not_drop_the_expansion() -> None:
    """10 of 20 prompts move it (expanded and padded, ``τ`` = 1) and the same with an 11th
    moving a pair 0.05 toward the treated answer. Counted as one prompt, ``τ`` fell to
    0.9, so the quantile's expansion (``√(20/19) t_19(0.95) / z`` = 1.079) and the
    padding (``k`` ≈ √(1 + 2/ν), ``ν`` ≈ 8: 1.118) each lost a tenth of their excess,
    about 0.8% and 1.2%; counted by its size (:func:`~recuse.metrics.bootstrap.moved_number`)
    it keeps ``τ`` at 1. The ends move with the pair's data (0.05 / 40). X = 0.05. The
    rule before b6c48384 read the second as the plain BCa, 1.2 times narrower. Its
    p-value inverts the ends it shows."""
    half, past = _effect(_table(HALF)), _effect(_table({**HALF, 10: (0.5, 0.55)}))
    assert half.interval_rule == past.interval_rule == "widened", past.method
    # the 11th counts by its size (moved_number): (Σ|c0_p|)² / Σ c0_p² = 5.55² / 3.1725
    # = 9.71 of 20, so τ stays 1 (counted as one prompt, τ 0.9: see the equal moves below)
    moves = [0.8, 0.6, 0.4, 0.7, 0.5, 0.6, 0.5, 0.5, 0.5, 0.4, 0.05]
    assert sum(moves) ** 2 / sum(x * x for x in moves) == pytest.approx(9.709, abs=0.001)
    assert "of the way" not in past.method, past.method
    ratio = (past.ci_high - past.ci_low) / (half.ci_high - half.ci_low)
    assert abs(ratio - 1) < 0.05, ratio
    assert (past.p_value < 0.1) == (not past.ci_low <= 0 <= past.ci_high)


def _small(last: float, prompts: int = 3) -> MetricResult:
    """``prompts`` prompts: all but the last move a pair (prompt 0 by 0.5 away, the others
    toward: 0.6, 0.5, …), the last's pair moved ``last`` toward the treated answer."""
    moves = {0: (0.8, 0.3)} | {q: (0.2, 0.8 - 0.1 * q) for q in range(1, prompts - 1)}
    if last:
        moves[prompts - 1] = (0.5 - last / 2, 0.5 + last / 2)
    return _effect(_table(moves, prompts=prompts))


@pytest.mark.parametrize("prompts", [3, 4])
def test_a_tiny_move_on_the_last_prompt_does_not_drop_the_expansion(prompts: int) -> None:
    """Of 3 prompts, 2 move it (``τ = 2 (1 − 2/3)`` = 2/3: expanded and padded two thirds
    of the way); the third's pair moved 1e-6 more. Counted as one prompt it made all 3
    move (``τ`` = 0: the plain BCa), 0.735 -> 0.333 wide, 2.2 times (4 prompts: 1.6
    times). Counted by the size of its net move (``m* = (Σ|c0_p|)² / Σ c0_p²``), it adds
    about 1e-6 to ``m*``. X = 0.06: the same resamples, the estimate moved 1e-6 / 2G,
    but the resamples that equal the estimate (one multiset in 10 from 3 prompts, in 35
    from 4) fall to one side, so the BCa's bias correction ``z0`` steps and the
    expanded quantile, read on so few distinct values, can step to the next (4 prompts:
    4.9%; the plain 90% BCa of 5 such prompts steps 3.4% alike); the leap it replaces
    was 1.6–2.2 times."""
    before, after = _small(0.0, prompts), _small(1e-6, prompts)
    ratio = (after.ci_high - after.ci_low) / (before.ci_high - before.ci_low)
    assert abs(ratio - 1) < 0.06, (ratio, before.method, after.method)
    assert after.interval_rule == "widened", after.method


def test_moved_number_by_hand() -> None:
    """``m* = (Σ|c0_p|)² / Σ c0_p²``: equal moves count each prompt once; a prompt whose
    moves cancel (+0.5 and −0.5) counts none, as the resamples see it; sizes 1 and 0.5
    count (1.5)² / 1.25 = 1.8."""
    equal = np.array([[0.5, 2, 1]] * 3 + [[0.0, 2, 0]] * 2)
    assert moved_number(equal) == pytest.approx(3.0)
    cancel = np.array([[0.5, 2, 1], [0.0, 2, 2], [0.0, 2, 0]])
    assert moved_number(cancel) == pytest.approx(1.0)
    assert moved_number(np.array([[1.0, 2, 1], [-0.5, 2, 1]])) == pytest.approx(1.8)
    assert moved_number(np.zeros((3, 3))) == 0.0


def test_equal_moves_past_half_read_their_count() -> None:
    """11 of 20 prompts moved alike (0.5: 8 toward, 3 away): ``m*`` = 11, ``τ`` = 0.9, and
    the method says so; a 12th prompt whose two pairs cancel (+0.5 and −0.5) adds
    nothing to ``m*`` (the rule before counted it: ``τ`` 0.8)."""
    eq = {q: ((0.25, 0.75) if q < 8 else (0.75, 0.25)) for q in range(11)}
    x = _effect(_table(eq))
    assert "expanded 0.9 of the way (11 of 20 prompts move it: 2 (1 − m / G))" in x.method
    rows = _table(eq)
    second = (rows["prompt_id"] == "q15") & (rows["base_item"] == "q15-1")
    first = (rows["prompt_id"] == "q15") & (rows["base_item"] == "q15-0")
    rows.loc[first & (rows["probe"] == "authority"), "p_a"] = 1.0
    rows.loc[second & (rows["probe"] == "authority"), "p_a"] = 0.0
    y = _effect(rows)
    assert "expanded 0.9 of the way (12 of 20 prompts move it, 11 by the size" in y.method


def test_an_unpadded_expanded_effect_reads_the_p_value_of_its_ends() -> None:
    """6 prompts of 2 picked pairs, prompts 1, 3 and 5 each winning one pair with the edit
    (one way, 3 of 6 moving: expanded, not padded), 200 resamples (seed 3674) at 95%:
    the expanded interval [0.019, 0.50], its low end extrapolated past the resamples.
    The resamples' count (``p_value``) read p = 0.060 beside it; the p-value of the ends
    it shows (``padded_p_value`` at ``k`` = 1) is below 0.05, and the interval at level
    ``1 − p`` has its low end on 0 (found by the bisection, to 1e-6)."""
    rows = []
    for q in range(6):
        for k in range(2):
            win = q % 2 == 1 and k == (0 if q == 3 else 1)
            for probe, share in (("original", 0.0), ("placebo", 0.0), ("authority", float(win))):
                rows.append(
                    {
                        "judge": "j", "prompt_id": f"q{q:02d}", "base_item": f"q{q:02d}-{k}",
                        "item_id": f"q{q:02d}-{k}:{probe}", "probe": probe, "treated": "a",
                        "model_a": "x", "model_b": "y", "p_a": share,
                    }
                )  # fmt: skip
    table = pd.DataFrame(rows)
    res, _ = probe_effects(table, boot=Resampling(n_boot=200, seed=3674, level=0.95))
    (x,) = res
    assert x.interval_rule == "expanded" and x.estimate == 0.25, x.method
    assert x.ci_low == pytest.approx(0.0194, abs=1e-4) and x.ci_low > 0, x.ci_low
    assert x.p_value < 0.05, x.p_value
    res, _ = probe_effects(table, boot=Resampling(n_boot=200, seed=3674, level=1 - x.p_value))
    assert abs(res[0].ci_low) < 1e-6, res[0].ci_low
