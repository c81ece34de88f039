"""The words of the agreement analysis (:mod:`recuse.analyses.agreement`):
its biases and its heading, light to import (:mod:`recuse.biases`)."""

from __future__ import annotations

from recuse.biases.heading import Heading
from recuse.report.bias import COEFFICIENT, RATE, RELIABILITY, Bias

ACCURACY = Bias(
    key="agreement_accuracy",
    title="Agreement with the human label",
    short="Agreement",
    # "both orders combined" was untrue of a pair judged in one order (palm-2's 1 of 193
    # on llmbar-mtbench) and of every pair under --orders first / second
    unit="share of pairs with a human preference on which the judge's verdict (the orders "
    "it judged combined) picks the human's side; a judge tie or a flip across two orders "
    "counts half; 0.5 = chance. A quality score, not a bias",
    positive="agrees with the human label more often than chance",
    negative="agrees with the human label less often than chance",
    none="agreement with the human label (a quality score, not a bias)",
    order=100,
    scale="share of pairs agreeing",
    span=RATE,
    null=0.5,
    kind="quality",
)

KAPPA = Bias(
    key="agreement_kappa",
    title="Cohen's kappa with the human label",
    short="κ",
    unit="Cohen's kappa, linear weights, of the judge's pair verdict with the human label "
    "over the ordered categories b < tie < a; 0 = chance agreement, 1 = perfect. A quality "
    "score, not a bias",
    positive="agrees with the human label beyond chance",
    negative="agrees with the human label less than chance",
    none="kappa with the human label (a quality score, not a bias)",
    order=101,
    scale="Cohen's κ (linear)",
    span=COEFFICIENT,
    null=0.0,
    headline=False,
    kind="quality",
)

ALPHA = Bias(
    key="agreement_alpha",
    title="Krippendorff's alpha among the judges",
    short="α",
    unit="Krippendorff's alpha (ordinal: b < tie < a) among the judges' pair verdicts, "
    "items as units; 0 = chance agreement among judges, 1 = perfect. A quality score, "
    "not a bias",
    positive="the judges agree with each other beyond chance",
    negative="the judges agree with each other less than chance",
    none="alpha among the judges (a quality score, not a bias)",
    order=102,
    scale="Krippendorff's α (ordinal)",
    span=RELIABILITY,
    null=0.0,
    headline=False,
    pooled=True,
    kind="quality",
)


HEADING = Heading(
    id="agreement",
    title="Agreement with the reference",
    table="pairs",
    biases=(ACCURACY, KAPPA, ALPHA),
)
