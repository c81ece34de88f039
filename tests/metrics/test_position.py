"""Position consistency, flip rate and first-position rate on hand-made tables."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recuse.errors import EstimationError
from recuse.metrics import first_position_rate, flip_rate, position_consistency
from recuse.metrics.bootstrap import Resampling
from recuse.metrics.result import results_frame
from recuse.tables import validate_pairs

NAN = math.nan

# (p_a_first, p_a_second): a/a, b/b, tie/tie consistent; a/b, b/a flipped; a/tie half
ORDERS = [
    (1, 1),  # a a: consistent
    (0, 0),  # b b: consistent
    (0.5, 0.5),  # tie tie: consistent
    (0.9, 0.7),  # a a (probabilities): consistent
    (1, 0),  # a b: flip (first slot wins both times)
    (0.8, 0.1),  # a b: flip
    (0, 1),  # b a: flip (second slot wins both times)
    (1, 0.5),  # a tie: half flip
    (1, NAN),  # one order only: left out
    (NAN, NAN),  # unparsed: left out
]


def table(orders: list[tuple[float, float]], judge: str = "j") -> pd.DataFrame:
    n = len(orders)
    return validate_pairs(
        pd.DataFrame(
            {
                "item_id": [f"i{i}" for i in range(n)],
                "prompt_id": [f"p{i}" for i in range(n)],
                "model_a": None,
                "model_b": None,
                "human": NAN,
                "judge": judge,
                "p_a_first": [o[0] for o in orders],
                "p_a_second": [o[1] for o in orders],
                "p_a": NAN,
            }
        )
    )


def test_consistency_and_flips_by_hand() -> None:
    t = table(ORDERS)
    c = position_consistency(t, boot=Resampling(n_boot=200), min_n=4)
    assert c.estimate == pytest.approx(4 / 8)
    assert c.n == 8 and c.n_clusters == 8
    assert dict(c.components) == {"consistent": 4.0, "flipped": 3.0, "half_flipped": 1.0}
    f = flip_rate(t, boot=Resampling(n_boot=200), min_n=4)
    assert f.estimate == pytest.approx(3 / 8)
    assert c.ci_low <= c.estimate <= c.ci_high
    # the flip rate is unsigned: its no-bias value 0 is its floor, which no test rejects,
    # so it has no p-value (it read p = 2/(B+1) for any judge that ever flips)
    assert f.unsigned and not f.signed and math.isnan(f.p_value)
    assert f.to_dict()["p_value"] is None and f.to_dict()["null_bound"] == "floor"


def test_consistency_has_no_p_value_its_no_bias_value_being_its_ceiling() -> None:
    """Consistency's no-bias value 1 is the most a share can be: 4 of 8 consistent pairs
    lie below it as any judge that ever changes its pick does, so a test of 1 rejects
    nothing (it read p = 2/(B+1)). The JSON and CSV say why there is none: ``null_bound``
    "ceiling"; the first-position rate, whose 0.5 lies inside its range, keeps its p."""
    t = table(ORDERS)
    boot = Resampling(n_boot=200)
    c = position_consistency(t, boot=boot, min_n=4)
    assert c.null == 1.0 and c.ci_high < 1.0  # the interval lies below its ceiling
    assert c.bound == "ceiling" and c.unsigned and not c.signed and math.isnan(c.p_value)
    d = c.to_dict()
    assert (d["p_value"], d["null_bound"], d["signed"]) == (None, "ceiling", False)
    frame = results_frame([c, first_position_rate(t, boot=boot, min_n=4)])
    assert frame["null_bound"][0] == "ceiling" and pd.isna(frame["null_bound"][1])
    assert math.isnan(frame["p_value"][0]) and 0 < frame["p_value"][1] <= 1


def test_first_position_rate_by_hand() -> None:
    t = table(ORDERS)
    # share of the win to the first-shown response: (p_a_first + 1 - p_a_second) / 2
    prob = [(f + 1 - s) / 2 for f, s in ORDERS[:8]]
    r = first_position_rate(t, boot=Resampling(n_boot=200), min_n=4)
    assert r.estimate == pytest.approx(sum(prob) / 8)
    picks = {1: 1.0, 0: 0.0, 0.5: 0.5, 0.9: 1.0, 0.7: 1.0, 0.8: 1.0, 0.1: 0.0}
    pick = [(picks[f] + 1 - picks[s]) / 2 for f, s in ORDERS[:8]]
    r2 = first_position_rate(t, verdict="pick", boot=Resampling(n_boot=200), min_n=4)
    assert r2.estimate == pytest.approx(sum(pick) / 8)
    # no position bias at all: every judge answers the same in both orders
    fair = table([(1, 1), (0, 0), (0.3, 0.3), (0.6, 0.6)] * 3)
    assert first_position_rate(
        fair, boot=Resampling(n_boot=100), min_n=4
    ).estimate == pytest.approx(0.5)
    assert flip_rate(fair, boot=Resampling(n_boot=100), min_n=4).estimate == 0


def test_single_order_judges_are_refused() -> None:
    t = table([(1, NAN)] * 12)
    with pytest.raises(EstimationError, match="no pairs judged in both orders"):
        position_consistency(t, boot=Resampling(n_boot=100))
    with pytest.raises(EstimationError, match="only 3 pairs judged in both orders"):
        flip_rate(table([(1, 1)] * 3 + [(1, NAN)] * 9), boot=Resampling(n_boot=100))


def _blocks(first: list[float], second: list[float], prompts: list[str]) -> pd.DataFrame:
    t = table(list(zip(first, second, strict=True)))
    t["prompt_id"] = prompts
    return t


def test_few_flips_widen_the_interval_by_t_up_to_the_exact_bound() -> None:
    """5 of 30 one-pair prompts flip (3 to the first slot, 2 to the second): the
    bootstrap's ends are widened by t_{ν−1}(0.95) / z(0.95), ν = (Σ r²)² / Σ r⁴ over the
    prompts' residuals, and kept within the exact bound 0.5 ± u/2, u the one-sided 90%
    Clopper–Pearson bound for 5 of 30 (scipy's beta.ppf(0.9, 6, 25)). The old interval,
    the BCa's alone, held a planted truth 0.79–0.85 of the time in this regime."""
    import numpy as np
    from scipy.stats import beta, norm, t

    first = [1.0, 1, 1, 0, 0] + [1.0, 0] * 12 + [1.0]
    second = [0.0, 0, 0, 1, 1] + [1.0, 0] * 12 + [1.0]
    tab = _blocks(first, second, [f"p{k}" for k in range(30)])
    boot = Resampling(n_boot=400, seed=3)
    r = first_position_rate(tab, boot=boot, min_n=1)
    assert r.estimate == pytest.approx(0.5 + (3 - 2) * 0.5 / 30)
    # by hand: residuals 1 − θ̂ (3), 0 − θ̂ (2), 0.5 − θ̂ (25)
    theta = r.estimate
    res = np.array([1 - theta] * 3 + [-theta] * 2 + [0.5 - theta] * 25)
    nu = (res**2).sum() ** 2 / (res**4).sum()
    f = t.ppf(0.95, nu - 1) / norm.ppf(0.95)
    u = beta.ppf(0.9, 6, 25)
    # the BCa ends of the same resamples, from the library's bootstrap without the widening
    from recuse.metrics.bootstrap import cluster_bootstrap
    from recuse.metrics.estimate import clusters_of
    from recuse.metrics.position import first_position_spec
    from recuse.metrics.verdicts import judge_codes

    codes, labels = judge_codes(tab, None)
    spec = first_position_spec(tab, codes, labels, verdict="prob")
    (est,) = cluster_bootstrap([spec.stat], clusters_of(tab), boot=boot, min_n=1)[0]
    assert (est.moving, est.effective) == (5, pytest.approx(nu))
    low = min(est.ci_low, max(theta - f * (theta - est.ci_low), 0.5 - u / 2))
    high = max(est.ci_high, min(theta + f * (est.ci_high - theta), 0.5 + u / 2))
    assert (r.ci_low, r.ci_high) == pytest.approx((low, high), abs=1e-12)
    assert r.ci_high - r.ci_low > 1.2 * (est.ci_high - est.ci_low)  # wider than the BCa's
    assert "widened by Student's t" in r.method and "Clopper–Pearson" in r.method
    # the flip rate: floor 0; its upper end at least the BCa's (0.3 here, past u = 0.287)
    fl = flip_rate(tab, boot=boot, min_n=1)
    assert fl.estimate == pytest.approx(5 / 30) and 0 <= fl.ci_low < fl.estimate < fl.ci_high
    assert any("only 5 pairs of 30 change their verdict" in w for w in r.warnings)


def test_one_flip_reads_no_narrower_than_none() -> None:
    """0 of 30 prompts changing bounds the rate by 0.5 ± u0/2, u0 = 1 − 0.1^(1/30); one
    that changes gives ν ≈ 1, an infinite t end, so the exact bound for 1 of 30 (u1 =
    beta.ppf(0.9, 2, 29) > u0) is the interval: it read the BCa's, narrower than none."""
    from scipy.stats import beta

    same = [1.0, 0] * 15
    none = first_position_rate(_blocks(same, same, [f"p{k}" for k in range(30)]),
                               boot=Resampling(n_boot=400), min_n=1)  # fmt: skip
    u0 = 1 - 0.1 ** (1 / 30)
    assert (none.ci_low, none.ci_high) == pytest.approx((0.5 - u0 / 2, 0.5 + u0 / 2))
    one = first_position_rate(
        _blocks([0.0, *same[1:]], same, [f"p{k}" for k in range(30)]),
        boot=Resampling(n_boot=400), min_n=1,
    )  # fmt: skip
    u1 = float(beta.ppf(0.9, 2, 29))
    assert one.estimate == pytest.approx(0.5 - 0.5 / 30)  # b first, a second: one flip
    # the exact end, or the BCa's where it lies farther (the flip drawn 4 times: 0.433)
    assert one.ci_low <= 0.5 - u1 / 2 + 1e-12 and one.ci_high == pytest.approx(0.5 + u1 / 2)
    assert one.ci_high - one.ci_low > none.ci_high - none.ci_low
    assert one.p_value > 0.1 and one.ci_low < 0.5 < one.ci_high  # holds no bias: not flagged


def test_a_widened_interval_claims_no_power_its_width_denies() -> None:
    """One of 30 one-pair prompts flips: the interval is widened to about 0.52 [0.44,
    0.57] while the resamples' spread is 0.016, from which the report's "±X detectable"
    ((z_0.95 + z_0.8) · se, 80% power at 90%) read ±0.040 — a bias smaller than the
    interval's own half-width (0.064), which an estimate sitting exactly on it could not
    flag. The standard error is now at least the half-width over z_0.95, so the
    detectable size exceeds the half-width by (z + z_0.8) / z, and the gate's z · se is
    the half-width shown."""
    from scipy.stats import norm

    same = [1.0, 0] * 15
    tab = _blocks([0.0, *same[1:]], same, [f"p{k}" for k in range(30)])
    for fn in (first_position_rate, flip_rate, position_consistency):
        r = fn(tab, boot=Resampling(n_boot=400, seed=3), min_n=1)
        assert "widened by Student's t" in r.method
        half = (r.ci_high - r.ci_low) / 2
        detectable = (norm.ppf(0.95) + norm.ppf(0.8)) * r.std_error
        assert detectable > half * 1.5  # (1.645 + 0.842) / 1.645 = 1.51
        assert norm.ppf(0.95) * r.std_error == pytest.approx(half)


def test_flips_that_balance_on_a_prompt_read_no_narrower_than_none() -> None:
    """Prompt p0 holds two pairs, one flipping to the first slot and one to the second;
    the other 28 prompts' pairs never change. Every resample's first-position rate is
    0.5, so the bootstrap read 0.50 [0.50, 0.50] "no variation" — narrower than the
    exact bound the same prompts give with no flip at all. Now the exact bound for 1 of
    29 prompts changing, u = beta.ppf(0.9, 2, 28), times the largest prompt's pairs over
    the mean's (2 / (30 / 29)): 0.5 ± s / 2 (scipy, by hand). And where the bootstrap's
    end sits on the estimate (3 one-pair prompts, one flipping, at level 0.5: BCa low =
    0.667 = the estimate), that end is the exact bound's, 0.5 − beta.ppf(0.5, 2, 2) / 2
    = 0.25, and the p-value 1: it read [0.667, 0.833] beside p = 0.25."""
    from scipy.stats import beta

    same = [1.0, 0] * 15
    prompts = ["p0", "p0"] + [f"p{k}" for k in range(1, 29)]
    boot = Resampling(n_boot=400, seed=3)
    none = first_position_rate(_blocks(same, same, prompts), boot=boot, min_n=1)
    tab = _blocks([1.0, 0.0, *same[2:]], [0.0, 1.0, *same[2:]], prompts)
    r = first_position_rate(tab, boot=boot, min_n=1)
    s = float(beta.ppf(0.9, 2, 28)) * 2 / (30 / 29)
    assert r.estimate == 0.5
    assert (r.ci_low, r.ci_high) == pytest.approx((0.5 - s / 2, 0.5 + s / 2))
    assert r.ci_high - r.ci_low > none.ci_high - none.ci_low
    assert not r.fixed and r.p_value == 1.0
    assert not any(
        w.startswith("no variation in the resamples: the interval says") for w in r.warnings
    )
    assert any("they balance" in w for w in r.warnings)
    one = first_position_rate(
        table([(1.0, 0.0), (1.0, 1.0), (0.0, 0.0)]),
        boot=Resampling(n_boot=1000, seed=1, level=0.5), min_n=1,
    )  # fmt: skip
    assert one.estimate == pytest.approx(2 / 3)
    assert one.ci_low == pytest.approx(0.5 - float(beta.ppf(0.5, 2, 2)) / 2)
    assert one.ci_low < 0.5 < one.ci_high and one.p_value >= 0.5


def test_the_statistics_pages_llmbar_prompt_counts_are_the_datas(shared_data: Path) -> None:
    """docs/statistics.md names which of LLMBar's MT-Bench judges get the widened
    position interval, by how many of their prompts change with the order. It read
    "GPT-4's 19 and PaLM-2's 37 of 74", GPT-4's prompts being 75; no test read it. The
    counts are taken here from the table by hand (a prompt changes where a pair of it
    has p_a_first ≠ p_a_second), and which interval each judge got from its method."""
    import re

    from recuse.data import load
    from recuse.metrics import pairwise_bias

    pairs = load("llmbar-mtbench", data_dir=shared_data)
    both = pairs.dropna(subset=["p_a_first", "p_a_second"])
    said = {}
    for judge, rows in both.groupby("judge"):
        moved = rows.loc[rows["p_a_first"] != rows["p_a_second"], "prompt_id"].nunique()
        said[judge] = (moved, rows["prompt_id"].nunique())
    result = pairwise_bias(pairs, metrics=["first_position_rate"], boot=Resampling(n_boot=200))
    widened = {r.judge: "widened by Student's t" in r.method for r in result.results}
    assert widened == {"gpt-3.5-turbo": False, "llama-2-70b-chat": False, "gpt-4": True,
                       "palm-2": True}  # fmt: skip
    (g35, n35), (llama, nl), (g4, n4), (palm, npalm) = (
        said[j] for j in ("gpt-3.5-turbo", "llama-2-70b-chat", "gpt-4", "palm-2")
    )
    assert n35 == nl
    page = Path(__file__).resolve().parents[2] / "docs" / "statistics.md"
    text = re.sub(r"\s+", " ", page.read_text("utf-8"))
    assert (
        f"LLMBar's GPT-3.5 and Llama-2 change on {g35} and {llama} of {n35} prompts: their "
        f"intervals are the BCa's; GPT-4's {g4} of {n4} and PaLM-2's {palm} of {npalm} are "
        "widened"
    ) in text


def test_a_judge_without_slot_preference_whose_picks_are_sampled_flips_and_says_so() -> None:
    """Planted: no slot preference at all, each order's pick drawn anew with P(a) =
    expit(2·gap), gap ~ N(0, 1) (a judge sampled at a temperature): its flip rate is
    E[2p(1 − p)] = 0.30 (by quadrature below) and its first-position rate 0.5. The
    numbers find both; the flip rate's and consistency's words say that their no-bias
    value (0, 1: "no bias 0" beside the number) is not this judge's, and that the
    first-position rate is the one that tells a slot preference (they said nothing)."""
    from recuse.metrics.position import NOT_ONLY_POSITION

    x, w = np.polynomial.hermite_e.hermegauss(60)
    p = 1 / (1 + np.exp(-2 * x))
    truth = float(np.sum(w * 2 * p * (1 - p)) / np.sqrt(2 * np.pi))
    assert truth == pytest.approx(0.30, abs=0.005)
    rng = np.random.default_rng(3)
    pa = 1 / (1 + np.exp(-2 * rng.normal(0, 1, 900)))
    picks = [(float(rng.random() < q), float(rng.random() < q)) for q in pa]
    t = table(picks)
    boot = Resampling(n_boot=200)
    f = flip_rate(t, boot=boot)
    assert f.ci_low <= truth <= f.ci_high and f.ci_low > 0.2
    first = first_position_rate(t, boot=boot)
    assert first.ci_low <= 0.5 <= first.ci_high
    assert NOT_ONLY_POSITION in f.method
    assert NOT_ONLY_POSITION in position_consistency(t, boot=boot).method
    assert "0.30" in NOT_ONLY_POSITION and "first-position rate" in NOT_ONLY_POSITION
