"""The words of the certification analysis (:mod:`recuse.analyses.certification`):
its biases and its heading, light to import (:mod:`recuse.biases`)."""

from __future__ import annotations

from recuse.biases.heading import Heading
from recuse.report.bias import RATE, Bias

_HOW = (
    "with probability ≥ 1 − δ (δ = 1 − the report's level) it agrees with humans at ≥ the "
    "target agreement named in the finding on future pairs whose confidence reaches a "
    "threshold picked by a fixed-sequence test with Clopper–Pearson bounds on the "
    "labelled pairs (human ties left out); confidence is max(p_a, 1 − p_a) of the "
    "order-averaged verdict, or order consistency for a judge that gives picks"
)

CERTIFIED = Bias(
    key="certified_coverage",
    title="Certified coverage",
    short="Certified",
    unit=f"share of the judge's labelled pairs whose verdict is certified: {_HOW}; pairs "
    "with the judge's own or its family's answer get their own threshold (δ split among "
    "them); 1 (100%) = every pair certified. A quality score, not a bias",
    positive="(a share cannot exceed 1)",
    negative="the verdict is certified on part of the pairs only",
    none="certified coverage (a quality score, not a bias)",
    order=120,
    null=1.0,
    headline=False,
    kind="quality",
    tested=False,  # 1 is the best value, not a value a test could reject
    scale="share of pairs certified",
    percent=True,  # written 28.5%, as the gate and recuse certify write it
    span=RATE,
)

CERTIFIED_OWN = Bias(
    key="certified_coverage_own",
    title="Certified coverage on its own answers",
    short="Certified own",
    unit="share of the labelled pairs holding the judge's own answer beside another "
    f"model's whose verdict is certified, with their own threshold and share of δ: {_HOW}; "
    "self-preference cannot hide in the pooled guarantee; 1 = every own-answer pair "
    "certified. A quality score, not a bias",
    positive="(a share cannot exceed 1)",
    negative="the verdict on its own answers is certified on part of them only",
    none="certified coverage on its own answers (a quality score, not a bias)",
    order=121,
    null=1.0,
    headline=False,
    kind="quality",
    tested=False,
    scale="share of own pairs certified",
    percent=True,  # written 28.5%, as the gate and recuse certify write it
    span=RATE,
)


HEADING = Heading(
    id="certification",
    title="Certification",
    table="pairs",
    biases=(CERTIFIED, CERTIFIED_OWN),
)
