"""A pick judge's probe effect on 20 prompts: the interval where no base pair moves, and
coverage of a planted effect (:mod:`recuse.metrics.probes`).

Each base pair's original pick for the treated answer is a fair coin; the placebo keeps
it but on a tenth of pairs, re-drawn (a fair coin again); the edit is the placebo's pick,
except that a pair lost in the original is won with probability ``f`` drawn per prompt
from U(0, 0.2). The true effect, by hand: E[s_edit − s_placebo] = P(lost) · E[f] ·
P(placebo keeps it lost) = 0.5 · 0.1 · (0.9 + 0.1 · 0.5) = 0.0475."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest
from scipy.stats import beta

from recuse.metrics.bootstrap import Resampling
from recuse.metrics.probes import probe_effects
from recuse.report.gate import Threshold, evaluate

TRUTH = 0.5 * 0.1 * (0.9 + 0.1 * 0.5)


def _row(q: int, k: int, probe: str, treated: str, share: float) -> dict[str, object]:
    return {
        "judge": "j", "prompt_id": f"q{q}", "base_item": f"q{q}-{k}",
        "item_id": f"q{q}-{k}:{probe}", "probe": probe, "treated": treated,
        "model_a": "x", "model_b": "y", "p_a": share if treated == "a" else 1.0 - share,
    }  # fmt: skip


def _table(rng: np.random.Generator, prompts: int = 20, per_prompt: int = 2) -> pd.DataFrame:
    rows = []
    for q in range(prompts):
        f = rng.uniform(0.0, 0.2)
        for k in range(per_prompt):
            s = float(rng.random() < 0.5)
            placebo = s if rng.random() > 0.1 else float(rng.random() < 0.5)
            edit = 1.0 if s == 0 and rng.random() < f else placebo
            treated = "a" if rng.random() < 0.5 else "b"
            for probe, share in (("original", s), ("placebo", placebo), ("authority", edit)):
                rows.append(_row(q, k, probe, treated, share))
    return pd.DataFrame(rows)


def test_an_effect_no_pair_moves_reads_the_exact_bound_not_zero_width() -> None:
    """20 one-pair prompts on which the edit and the placebo give the same pick: the
    resamples cannot vary (the bootstrap read [0, 0]); the share of prompts holding a
    pair the edit moves is at most u = 1 − 0.1^(1/20) = 0.1088 at 90% (one-sided
    Clopper–Pearson for 0 of 20), and a pair's difference lies in −1..+1, so the effect
    is within ±u."""
    rows = [
        _row(q, 0, probe, "a", float(q % 2))
        for q in range(20)
        for probe in ("original", "placebo", "authority")
    ]
    (r,), skipped = probe_effects(pd.DataFrame(rows), boot=Resampling(n_boot=200, seed=1))
    assert not skipped and r.estimate == 0.0
    u = 1 - 0.1 ** (1 / 20)
    assert u == pytest.approx(0.1088, abs=1e-4)
    assert (r.ci_low, r.ci_high) == pytest.approx((-u, u))
    assert r.interval_rule == "exact_bound"
    # the pairs that move it are those whose share differs (|Δ| > TIE_TOL), not only
    # those picked otherwise: a probability verdict of 0.7 and 0.6 moves the effect too
    assert "holding a base pair whose treated answer's share differs" in r.method


def test_an_effect_whose_moves_cancel_on_each_prompt_reads_the_exact_bound_for_them() -> None:
    """20 prompts of two pairs; on 2 of them the edit wins one pair the placebo lost and
    loses one it won (+1 and −1: they cancel), elsewhere the edit keeps the placebo's
    pick. The resamples cannot vary (the bootstrap read 0 [0, 0] with "no variation");
    the share of prompts holding a moved pair is at most the one-sided Clopper–Pearson
    bound for 2 of 20, u = B⁻¹(0.9; 3, 18), and a pair's difference lies in −1..+1, so
    the effect is within ±u (u × 2 / 2)."""
    rows = []
    for q in range(20):
        for k in range(2):
            placebo = float(k)
            edit = 1.0 - placebo if q < 2 else placebo
            for probe, share in (("original", placebo), ("placebo", placebo), ("authority", edit)):
                rows.append(_row(q, k, probe, "a", share))
    (r,), skipped = probe_effects(pd.DataFrame(rows), boot=Resampling(n_boot=200, seed=1))
    assert not skipped and r.estimate == 0.0
    u = float(beta.ppf(0.9, 3, 18))
    assert u == pytest.approx(0.2448, abs=1e-4)  # = 1 − P(Bin(20, u) ≤ 2) at 0.9
    assert sum(math.comb(20, i) * u**i * (1 - u) ** (20 - i) for i in range(3)) == (
        pytest.approx(0.1)
    )
    assert (r.ci_low, r.ci_high) == pytest.approx((-u, u))
    assert r.interval_rule == "widened"
    assert "2 of 20" in r.method and "cancel" in r.method
    assert any("moves cancel" in w and "2 of 20" in w for w in r.warnings)
    assert not any(w.startswith("no variation in the resamples: ") for w in r.warnings)
    # the standard error the gate projects by (z · se = the half-width), not the
    # resamples' 0
    assert r.std_error == pytest.approx(u / NormalDist().inv_cdf(0.95))
    assert r.p_value == 1.0
    # the gate projects it as a bootstrap's interval, 1/sqrt(n): 40 · (u / 0.05)², not as
    # an exact bound of prompts none of which moved (1/n, which assumes the bound goes to 0)
    finding = {"bias": "probe_authority", "judge": "j", "dataset": "d", "estimate": 0.0,
               "ci_low": r.ci_low, "ci_high": r.ci_high, "null": 0.0, "level": 0.9,
               "n": r.n, "clusters": r.n_clusters, "std_error": r.std_error,
               "interval_rule": r.interval_rule}  # fmt: skip
    line = evaluate(finding, Threshold("probe_authority", 0.05))
    assert r.n == 40 and line.outcome == "inconclusive"
    assert line.n_needed == math.ceil(40 * (u / 0.05) ** 2) == 959


def test_an_effect_every_prompt_moves_alike_is_no_cancelling_and_keeps_its_p() -> None:
    """20 prompts of two pairs; on every one the edit wins the pair the placebo lost and
    keeps the other: each prompt's effect is (1 + 0) / 2 = 0.5, so the resamples cannot
    vary (0.5 [0.5, 0.5]) though every prompt moves — and nothing cancels. It read the
    cancelled moves' exact bound for 20 of 20, [−1, 1] with p 1 ("the moves cancel on
    each prompt"), of an effect on every prompt; it keeps the bootstrap's interval and
    its p-value floor, 2 / (B + 1) = 2/201 (above the sign test's 2 · 0.5²⁰)."""
    rows = []
    for q in range(20):
        for k in range(2):
            placebo = float(k)
            edit = 1.0 if k == 0 else placebo
            for probe, share in (("original", placebo), ("placebo", placebo), ("authority", edit)):
                rows.append(_row(q, k, probe, "a", share))
    (r,), skipped = probe_effects(pd.DataFrame(rows), boot=Resampling(n_boot=200, seed=1))
    assert not skipped and r.estimate == 0.5
    assert (r.ci_low, r.ci_high) == pytest.approx((0.5, 0.5))
    assert r.interval_rule != "widened" and "cancel" not in r.method
    assert not any("cancel" in w for w in r.warnings)
    assert r.p_value == pytest.approx(2 / 201)


def test_a_planted_effect_on_20_prompts_is_held_about_nine_times_in_ten() -> None:
    """150 tables of 20 prompts of 2 base pairs: the interval holds 0.0475 at least 0.86
    of the time (measured 0.91 at 300 tables, 0.927 with the padding of few moving prompts,
    estimate.padded_span; the bootstrap's interval alone 0.79, zero
    width at 0 in 12% of them; 0.73 on these 150)."""
    held = []
    for r in range(150):
        res, _ = probe_effects(
            _table(np.random.default_rng(900 + r)), boot=Resampling(n_boot=300, seed=r)
        )
        (x,) = [x for x in res if x.metric == "probe_authority"]
        held.append(x.ci_low <= TRUTH <= x.ci_high)
    assert np.mean(held) >= 0.86, np.mean(held)
