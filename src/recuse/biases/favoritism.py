"""The words of the favoritism analysis (:mod:`recuse.analyses.favoritism`):
its biases and its heading, light to import (:mod:`recuse.biases`)."""

from __future__ import annotations

from recuse.biases.heading import Heading
from recuse.report.bias import UNBOUNDED, Bias

SELF_BIAS = Bias(
    key="self_bias",
    title="Self-bias (ratings, regression)",
    short="Self-bias (ratings)",
    unit="γ_j: extra rating (normalised score points) the judge gives its own model's "
    "answers, adjusted for the reference score; n = every rating of the judge in the fit "
    "(the other models' answers set its scale; how many are of its own model's answers "
    "is said beside the estimate)",
    positive="rates its own answers higher than the reference warrants",
    negative="rates its own answers lower than the reference warrants",
    none="no detectable self-bias in its ratings",
    order=30,
    material=0.05,  # 5 points of a rate or share: smallest effect worth acting on (default)
    scale="rating points ÷ top rating",
    whole_scale=1.0,
    span=UNBOUNDED,
)

FAMILY_BIAS = Bias(
    key="family_bias",
    title="Family bias (ratings, regression)",
    short="Family bias (ratings)",
    unit="λ_F: extra rating (normalised score points) the family's judges give the "
    "family's other models, adjusted for the reference score; one value per family; n = "
    "every rating of the family's judges in the fit",
    positive="rates its family's answers higher than the reference warrants",
    negative="rates its family's answers lower than the reference warrants",
    none="no detectable family bias in its ratings",
    order=31,
    material=0.05,  # 5 points of a rate or share: smallest effect worth acting on (default)
    scale="rating points ÷ top rating",
    whole_scale=1.0,
    span=UNBOUNDED,
    pooled=True,
)


HEADING = Heading(
    id="favoritism",
    title="Favoritism regression (ratings)",
    table="ratings",
    biases=(SELF_BIAS, FAMILY_BIAS),
)
