from __future__ import annotations

import pytest

from recuse.analyses import BIASES
from recuse.report import Finding, verdict
from recuse.report.verdict import interval_text


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
    assert interval_text(0.5, 0.25, 0.75, 3) == "+0.50 [0.25, 0.75], n=3"


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
