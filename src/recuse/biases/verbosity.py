"""The words of the verbosity analysis (:mod:`recuse.analyses.verbosity`):
its biases and its heading, light to import (:mod:`recuse.biases`)."""

from __future__ import annotations

from recuse.biases.heading import Heading
from recuse.report.bias import RATE_DIFFERENCE, Bias

LONGER_GAP = Bias(
    key="verbosity_longer_gap",
    title="Verbosity (prefers longer answers)",
    short="Prefers longer",
    unit="P(judge picks the longer answer) − P(human picks the longer answer), over the "
    "same pairs of unequal length: how much more often than the humans the judge picks "
    "the longer answer (what other tools report as length bias); it also moves with the "
    "judge's accuracy where the humans themselves prefer longer answers",
    positive="picks the longer answer more often than humans do",
    negative="picks the longer answer less often than humans do",
    none="no detectable difference from the humans in how often it picks the longer answer",
    order=40,
    material=0.05,  # 5 points of a rate or share: smallest effect worth acting on (default)
    scale="pick-rate difference",
    span=RATE_DIFFERENCE,
)

VERBOSITY = Bias(
    key="verbosity_recall_gap",  # `verbosity` in older reports: see report.gate.RENAMED
    title="Verbosity: recall difference (Saito Eq. 6)",
    short="Eq. 6 recalls",
    unit="the judge's recall of the human-preferred answer when it is the longer one, "
    "minus its recall when it is the shorter one (signed accuracy parity, Saito Eq. 6): "
    "whether the judge is right more often when the humans chose the longer answer. Not "
    "how often it picks the longer answer (the headline, prefer-longer gap): a judge "
    "can read positive here and pick longer answers no more often than humans",
    positive="agrees with humans more often when they prefer the longer answer than when "
    "they prefer the shorter one",
    negative="agrees with humans more often when they prefer the shorter answer than when "
    "they prefer the longer one",
    none="no detectable difference in its agreement with humans by which answer is longer",
    order=41,
    material=0.05,  # 5 points of a rate or share: smallest effect worth acting on (default)
    scale="recall difference",
    span=RATE_DIFFERENCE,
    headline=False,
)


HEADING = Heading(
    id="verbosity",
    title="Verbosity",
    table="pairs",
    biases=(LONGER_GAP, VERBOSITY),
)
