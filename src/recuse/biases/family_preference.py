"""The words of the family-preference analysis (:mod:`recuse.analyses.family_preference`):
its biases and its heading, light to import (:mod:`recuse.biases`)."""

from __future__ import annotations

from recuse.biases.heading import Heading
from recuse.biases.self_preference import MATERIAL_PICK_PROBABILITY, UNADJUSTED
from recuse.report.bias import RATE_DIFFERENCE, Bias

CALIBRATED = Bias(
    key="family_preference_calibrated",
    title="Family preference (calibrated to the judge's competence)",
    short="Family preference",
    unit="P(judge picks the answer of another model of its family, against one from "
    "outside it) minus the probability its own competence predicts on the same pairs "
    "(the competence model of its calibrated self-preference, with a family term beside "
    "its own-answer term); probability units, 0 = no family preference however strong "
    "its family's models are; n = its family pairs",
    positive="picks its family's answers more often than its competence predicts",
    negative="picks its family's answers less often than its competence predicts",
    none="no detectable family preference beyond its competence",
    order=19,
    material=MATERIAL_PICK_PROBABILITY,  # 0.05 of pick probability, as self-preference's
    scale="family-pick rate − predicted",
    span=RATE_DIFFERENCE,
)

EO = Bias(
    key="family_preference_eo",  # `family_preference` in older reports: report.gate.RENAMED
    title="Family preference (equal opportunity)",
    short="Family preference (EO)",
    unit="the judge's recall of the human-preferred answer when it comes from another "
    f"model of its family, minus its recall when the other answer is preferred; {UNADJUSTED}",
    positive="is right more often when its family's answer is the better one than when "
    "the outsider's is",
    negative="is right less often when its family's answer is the better one than when "
    "the outsider's is",
    none="no detectable family preference",
    order=20,
    material=0.05,  # 5 points of a rate or share: smallest effect worth acting on (default)
    scale="recall difference",
    span=RATE_DIFFERENCE,
    unadjusted=True,
)

DP = Bias(
    key="family_preference_dp",
    title="Family preference (demographic parity)",
    short="Family preference (DP)",
    unit="P(judge picks the family member's answer) − P(human prefers it), over the same "
    f"labelled pairs; 0 = as often as the humans; {UNADJUSTED}",
    positive="picks its family's answer more often than the humans prefer it",
    negative="picks its family's answer less often than the humans prefer it",
    none="no detectable difference between how often it picks its family's answer and "
    "how often the humans prefer it",
    order=21,
    material=0.05,  # 5 points of a rate or share: smallest effect worth acting on (default)
    scale="pick-rate difference",
    span=RATE_DIFFERENCE,
    headline=False,
    unadjusted=True,
)


HEADING = Heading(
    id="family-preference",
    title="Family preference",
    table="pairs",
    biases=(CALIBRATED, EO, DP),
)
