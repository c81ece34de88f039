"""The words of the self-preference analysis (:mod:`recuse.analyses.self_preference`):
its biases and its heading, light to import (:mod:`recuse.biases`)."""

from __future__ import annotations

from recuse.biases.heading import Heading
from recuse.report.bias import RATE_DIFFERENCE, Bias

#: the calibrated headlines' default materiality (``--material`` overrides it): a
#: difference of 0.05 in the probability that the judge picks its own (or its family's)
#: answer, beyond what its competence predicts
MATERIAL_PICK_PROBABILITY = 0.05

CALIBRATED = Bias(
    key="self_preference_calibrated",
    title="Self-preference (calibrated to the judge's competence)",
    short="Self-preference",
    unit="P(judge picks its own answer) minus the probability its own competence predicts "
    "on the same pairs had authorship not mattered (a Bradley–Terry model of its verdicts "
    "on the models' strengths from the human labels, with its position preference); "
    "probability units, 0 = no self-preference however strong its own model is; n = the "
    "judge's own pairs (the pairs without its own answer, on which its competence is mostly "
    "learnt, are counted beside the estimate; its interval resamples the prompts of all its "
    "pairs, own and other)",
    positive="picks its own answers more often than its competence predicts",
    negative="picks its own answers less often than its competence predicts",
    none="no detectable self-preference beyond its competence",
    order=9,
    # the smallest self-preference worth acting on: 5 points of pick probability, the
    # scale of DP (a pick-rate difference) and EO (a recall difference) beside it and of
    # the ladder's parts that add up to it; an interval within ±0.05 reads negligible
    material=MATERIAL_PICK_PROBABILITY,
    scale="own-pick rate − predicted",
    span=RATE_DIFFERENCE,
)

#: how every self- and family-preference number other than the calibrated headline is
#: labelled: what it is, and why it is no finding of its own
UNADJUSTED = (
    "not adjusted for the judge's competence: high for a strong judge with no bias, low "
    "for a weak one — shown beside the calibrated headline, never flagged"
)

EO = Bias(
    key="self_preference_eo",
    title="Self-preference (equal opportunity)",
    short="Self-preference (EO)",
    unit="the paper's definition (Wataoka et al., Def. 4.1): the judge's recall of the "
    "human-preferred answer when it is its own, minus its recall when the other answer is "
    f"preferred; {UNADJUSTED}: a judge without any self term reads above 0 when its own "
    "model is strong (its own-better pairs are easy) and below 0 when its own model is "
    "weak (about −0.10 to −0.17 for the weakest author in a simulation), so 0 = no bias "
    "only when both kinds of pair are equally hard",
    # what EO measures, not a reading of bias: it is never flagged, and a strong judge
    # with no self-preference reads above 0 (the unit says why)
    positive="is right more often when its own answer is the better one than when the other is",
    negative="is right less often when its own answer is the better one than when the other is",
    none="no detectable self-preference",
    order=10,
    material=0.05,  # 5 points of a rate or share: smallest effect worth acting on (default)
    scale="recall difference",
    span=RATE_DIFFERENCE,
    unadjusted=True,
)

DP = Bias(
    key="self_preference_dp",
    title="Self-preference (demographic parity)",
    short="Self-preference (DP)",
    unit="P(judge picks its own answer) − P(human prefers it), over the same labelled "
    "pairs (not the paper's Eq. 4 itself, P(Y'=1|S=1) − P(Y'=1|S=0) = 2 · P(judge picks "
    "its own answer) − 1, which has no human term: its component judge_prefers_s gives "
    "it); caveat: quality not controlled, and a "
    "noisy judge regresses toward 0.5, so an unbiased judge of a strong model reads "
    f"below 0; 0 = as often as the humans; {UNADJUSTED}",
    positive="picks its own answer more often than the humans prefer it",
    negative="picks its own answer less often than the humans prefer it",
    none="no detectable difference between how often it picks its own answer and how "
    "often the humans prefer it",
    order=11,
    material=0.05,  # 5 points of a rate or share: smallest effect worth acting on (default)
    scale="pick-rate difference",
    span=RATE_DIFFERENCE,
    headline=False,
    unadjusted=True,
)


HEADING = Heading(
    id="self-preference",
    title="Self-preference",
    table="pairs",
    biases=(CALIBRATED, EO, DP),
)
