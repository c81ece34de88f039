from __future__ import annotations

import dataclasses

import pytest

from recuse.analyses import BIASES
from recuse.report import Finding, verdict


def _f(
    estimate: float, low: float, high: float, bias: str = "self_preference_calibrated"
) -> Finding:
    return Finding(
        judge="j", bias=BIASES[bias], estimate=estimate, ci_low=low, ci_high=high, n=340, level=0.9,
        method="m",
    )  # fmt: skip


def test_issue_example_wording() -> None:
    text = "picks its own answers more often than its competence predicts: +0.12 [0.03, 0.20]"
    assert verdict(_f(0.12, 0.03, 0.20)) == text + ", n=340"


def test_direction_follows_the_interval_not_the_estimate() -> None:
    assert _f(0.12, -0.01, 0.2).direction == "none"
    assert verdict(_f(0.12, -0.01, 0.2)).startswith("no detectable self-preference")
    assert _f(-0.12, -0.2, -0.03).direction == "negative"
    assert verdict(_f(-0.12, -0.2, -0.03)).startswith("picks its own answers less often")
    # an interval touching 0 is not flagged
    assert not _f(0.1, 0.0, 0.2).significant


def test_position_words_and_small_numbers_keep_a_digit() -> None:
    text = verdict(_f(-0.04, -0.07, -0.012, bias="position"))
    assert text == "prefers the answer shown second: \u22120.040 [\u22120.070, \u22120.012], n=340"


def test_every_bias_has_three_distinct_phrases() -> None:
    for spec in BIASES.values():
        assert len({spec.positive, spec.negative, spec.none}) == 3


@pytest.mark.parametrize(
    "kw",
    [
        {"estimate": float("nan")},
        {"ci_low": 0.5, "ci_high": 0.1},
        {"n": 0},
        {"level": 1.0},
    ],
)
def test_finding_rejects_bad_values(kw: dict[str, object]) -> None:
    args: dict[str, object] = {
        "judge": "j", "bias": BIASES["position"], "estimate": 0.1, "ci_low": 0.0, "ci_high": 0.2,
        "n": 5, "level": 0.9, "method": "m",
    }  # fmt: skip
    args.update(kw)
    with pytest.raises(ValueError):
        Finding(**args)  # type: ignore[arg-type]


def test_finding_needs_a_bias_object_not_its_name() -> None:
    with pytest.raises(TypeError, match="Bias"):
        Finding(
            judge="j", bias="position", estimate=0.6, ci_low=0.5, ci_high=0.7, n=5,  # type: ignore[arg-type]
            level=0.9, method="m",
        )  # fmt: skip


def test_an_unadjusted_number_outside_no_bias_says_its_side_not_no_detectable() -> None:
    # LLaMA-2's family EO on LLMBar's MT-Bench pairs: recall 0.3056 when its family's
    # answer is preferred (18 pairs), 0.845 when the outsider's is (100): −0.539, an
    # interval far below 0. It is never flagged, but "no detectable family preference"
    # contradicted its own interval
    eo = _f(-0.539, -0.651, -0.435, bias="family_preference_eo")
    assert eo.direction == "none" and not eo.flagged
    assert verdict(eo) == (
        "is right less often when its family's answer is the better one than when the "
        "outsider's is (unadjusted, not a flag): \u22120.54 [\u22120.65, \u22120.43], n=340"
    )
    # GPT-3.5's family DP there: picks 0.738 vs humans 0.881 of 42 pairs
    dp = _f(-0.143, -0.256, -0.028, bias="family_preference_dp")
    assert verdict(dp).startswith("picks its family's answer less often than the humans")
    assert "(unadjusted, not a flag): \u22120.14 [\u22120.26, \u22120.03], n=340" in verdict(dp)
    # an interval holding 0 still reads "no detectable", with no note
    assert verdict(_f(0.21, -0.02, 0.34, bias="self_preference_eo")) == (
        "no detectable self-preference: +0.21 [\u22120.02, 0.34], n=340"
    )


def test_an_interval_outside_no_bias_that_the_fdr_adjustment_did_not_flag_says_so() -> None:
    # Claude-3-haiku on JudgeBench: +0.071 [0.011, 0.125], p = 0.056, q = 0.197 > 0.10
    f = dataclasses.replace(_f(0.071, 0.011, 0.125, bias="verbosity_longer_gap"), q_value=0.197)
    assert not f.significant and f.direction == "none"
    assert verdict(f) == (
        "no detectable difference from the humans in how often it picks the longer answer "
        "(its interval excludes no bias, but the test is not significant after the "
        "false-discovery adjustment across the summary's tests): +0.07 [0.01, 0.12], n=340"
    )
    # flagged after the adjustment: the plain words, no note
    g = dataclasses.replace(f, q_value=0.05)
    assert verdict(g).startswith("picks the longer answer more often than humans do: +0.07")
    assert "false-discovery" not in verdict(g)


def test_an_estimate_under_0_001_keeps_two_significant_digits() -> None:
    """+0.00031 [0.00012, 0.00052] read +0.000 [0.000, 0.001] (three decimals under 0.1),
    beside a table cell of 3.1e-04; now the three numbers get the decimals that show the
    largest with two significant digits, the rule of the HTML tables and of ``recuse
    metrics`` (:func:`recuse.numbers.small_decimals`)."""
    from recuse.numbers import estimate_parts

    assert estimate_parts(0.00031, 0.00012, 0.00052) == ("+0.00031", "[0.00012, 0.00052]")
    assert estimate_parts(0.0031, 0.0012, 0.0052) == ("+0.003", "[0.001, 0.005]")  # as before
    assert estimate_parts(0.0, 0.0, 0.0) == ("+0.000", "[0.000, 0.000]")


def test_the_terminal_metrics_table_uses_the_same_rule() -> None:
    from recuse.cli.metrics import _numbers
    from recuse.metrics.result import MetricResult

    def r(est: float, lo: float, hi: float) -> MetricResult:
        return MetricResult("m", est, lo, hi, 0.9, 10, 5, "m")

    assert _numbers(r(0.00031, 0.00012, 0.00052)) == ("+0.00031", "[0.00012, 0.00052]")
    assert _numbers(r(0.2, 0.0, 0.3)) == ("+0.20", "[0.00, 0.30]")  # an exact 0 needs no more


def test_negligible_and_unflagged_after_adjustment_read_together() -> None:
    """A finding whose raw interval excludes no bias, whose false-discovery-adjusted test
    does not flag it, and whose whole interval lies within ±material: the sentence says
    all three, none contradicting another ("no detectable …", why the raw interval is not
    a flag, and "negligible": too small to matter whatever the test), the cell's note
    says the same (excludes no bias before adjustment; q > 1 − level), and it is no
    flag."""
    f = dataclasses.replace(
        _f(0.02, 0.01, 0.03), clusters=60, std_error=0.006, q_value=0.2, material=0.05
    )
    assert f.adjusted_away and f.materiality == "negligible" and not f.flagged
    assert verdict(f) == (
        "no detectable self-preference beyond its competence (its interval excludes no "
        "bias, but the test is not significant after the false-discovery adjustment across "
        "the summary's tests): +0.020 [0.010, 0.030], n=340 — negligible (interval within "
        "±0.05 of no bias)"
    )
    assert f.adjustment_note == "excludes no bias before adjustment; q = 0.200 > 0.1"
    # a q just over the threshold is written on its side of it (it read "0.100 > 0.1")
    near = dataclasses.replace(f, q_value=0.10004)
    assert near.adjusted_away
    assert near.adjustment_note == "excludes no bias before adjustment; q = 0.10004 > 0.1"


def test_a_number_beside_the_headline_is_never_flagged_and_says_so() -> None:
    # Saito's Eq. 6 beside the prefer-longer gap on llmbar-mtbench (gpt-4): +0.21
    # [0.08, 0.31] excludes 0. In the summary's family it reads "— material" and is
    # flagged; beside it (headline=False, no q-value) it read the same, so report.json
    # said flagged while the summary said "No bias flagged: gpt-4".
    eq6 = dataclasses.replace(_f(0.21, 0.08, 0.31, bias="verbosity_recall_gap"), material=0.05)
    beside = dataclasses.replace(eq6, headline=False)
    assert beside.significant and beside.direction == "positive"
    assert not beside.flagged and beside.materiality == ""
    assert verdict(beside) == (
        "agrees with humans more often when they prefer the longer answer than when they "
        "prefer the shorter one (not one of the summary's tests: not a flag): "
        "+0.21 [0.08, 0.31], n=340"
    )
    headline = eq6
    assert headline.flagged and headline.materiality == "material"
    assert verdict(headline).endswith("n=340 — material (estimate ≥ 0.05 from no bias)")
    # beside the headline, an interval within ±0.05 still reads negligible (neutral)
    near = dataclasses.replace(beside, estimate=0.01, ci_low=-0.02, ci_high=0.04)
    assert near.materiality == "negligible" and not near.flagged


def test_a_materiality_threshold_is_never_read_off_a_rounded_number() -> None:
    """The sentence writes the estimate and interval at their rounded decimals beside
    the materiality threshold: an estimate 0.0496 read ``+0.050 … — small (< 0.05 from
    no bias)``, and an interval [−0.04996, 0.03] read ``[−0.050, 0.030] — negligible
    (interval within ±0.05 of no bias)``, the end on the band's edge. The numbers the
    rounding puts on the threshold follow it with the decimals that put them on their
    side; the others are not repeated."""
    base = dataclasses.replace(_f(0.0496, 0.02, 0.08), clusters=60, std_error=0.01, material=0.05)
    assert base.materiality == "small"
    assert verdict(base).endswith(
        "+0.050 [0.020, 0.080], n=340 — small (estimate < 0.05 from no bias; estimate +0.0496)"
    )
    two = dataclasses.replace(base, estimate=0.046, ci_low=0.01, ci_high=0.15)  # 2 decimals
    assert verdict(two).endswith("+0.05 [0.01, 0.15], n=340 — small (estimate < 0.05 from no bias; "
                                 "estimate +0.046)")  # fmt: skip
    clear = dataclasses.replace(base, estimate=0.0404)
    assert verdict(clear).endswith("— small (estimate < 0.05 from no bias)")
    near = dataclasses.replace(base, estimate=0.02, ci_low=-0.04996, ci_high=0.03)
    assert near.materiality == "negligible"
    assert verdict(near).endswith(
        "+0.020 [−0.050, 0.030], n=340 — negligible (interval within ±0.05 of no bias; "
        "low end −0.04996)"
    )
    # around a no-bias value of 0.5 the edges are 0.45 and 0.55
    pos = dataclasses.replace(
        _f(0.546, 0.51, 0.58, bias="position"), clusters=60, std_error=0.01, material=0.05
    )
    assert pos.null == 0.5 and pos.materiality == "small"
    assert verdict(pos).endswith("0.55 [0.51, 0.58], n=340 — small (estimate < 0.05 from no bias; "
                                 "estimate 0.546)")  # fmt: skip


def test_a_material_estimate_whose_interval_reaches_nearer_says_how_near() -> None:
    """o1-mini's position on judgebench, 0.5557 [0.5353, 0.5812], read "material (≥ 0.05
    from no bias)" while `recuse gate --max position=0.05` called it INCONCLUSIVE (the
    interval straddles 0.55): two answers with nothing said of why. The words say the
    estimate is that far and how near the interval reaches; one clear of the band, not."""
    pos = dataclasses.replace(
        _f(0.5557, 0.5353, 0.5812, bias="position"), clusters=60, std_error=0.01, material=0.05
    )
    assert pos.materiality == "material"
    assert verdict(pos).endswith(
        "— material (estimate ≥ 0.05 from no bias; its interval reaches 0.035 from it)"
    )
    below = dataclasses.replace(pos, estimate=0.4443, ci_low=0.4188, ci_high=0.4647)
    assert verdict(below).endswith("its interval reaches 0.035 from it)")
    clear = dataclasses.replace(pos, ci_low=0.552)
    assert verdict(clear).endswith("— material (estimate ≥ 0.05 from no bias)")


def test_a_flagged_interval_never_reads_as_touching_no_bias() -> None:
    """A flagged interval whose end nearest no bias is within half a hundredth of it read
    ``+0.20 [0.00, 0.40]`` beside its flag ("picks its own answers more often", ▲), as
    if it touched 0, which it excludes: the three numbers take the decimals that write
    that end off no bias, at 0 and at position's 0.5. An interval holding no bias may
    read it (not flagged: ``[−0.00, 0.40]``, as before); the terminal's table and
    ``print(result)`` write the same."""
    from recuse.cli.metrics import _numbers
    from recuse.metrics.result import MetricResult

    up = _f(0.2, 0.0004, 0.4)
    assert up.significant and up.text == "+0.2000 [0.0004, 0.4000]"
    assert verdict(up).startswith("picks its own answers more often") and "[0.0004," in (
        verdict(up)
    )
    down = _f(-0.2, -0.4, -0.004)
    assert down.significant and down.text == "−0.200 [−0.400, −0.004]"
    pos = _f(0.7, 0.5004, 0.9, bias="position")
    assert pos.null == 0.5 and pos.significant and pos.text == "0.7000 [0.5004, 0.9000]"
    holds = _f(0.2, -0.004, 0.4)
    assert not holds.significant and holds.text == "+0.20 [−0.00, 0.40]"
    result = MetricResult("m", 0.2, 0.0004, 0.4, 0.9, 10, 5, "m")
    assert _numbers(result) == ("+0.2000", "[0.0004, 0.4000]")
    assert "m: +0.2000 [0.0004, 0.4000] (90% interval)" in str(result)
