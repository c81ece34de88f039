"""The words of the self-preference-ladder analysis (:mod:`recuse.analyses.self_preference_ladder`):
its biases and its heading, light to import (:mod:`recuse.biases`)."""

from __future__ import annotations

from recuse.biases.heading import Heading
from recuse.choices import CALIBRATED_RUNGS
from recuse.report.bias import RATE_DIFFERENCE, Bias

_PART_WORDS = {
    "calibrated_rung_human_prefers_own": ("where the human prefers its answer", "own better"),
    "calibrated_rung_human_neither": ("where the human calls a tie or gave no label", "tie"),
    "calibrated_rung_human_prefers_other": ("where the human prefers the other", "own worse"),
}

#: the calibrated headline's parts by the human label of the judge's own pairs: shown
#: as parts (they add up to the headline), never flagged on their own
PARTS = {
    metric: Bias(
        key=f"self_preference_part_{metric.removeprefix('calibrated_rung_')}",
        title=f"Self-preference, the part {where}",
        short=f"Self-pref. part: {short}",
        unit=f"part of the calibrated self-preference headline ({CALIBRATED_RUNGS[metric]}); "
        "the three parts add up to the headline; shown as a part, never flagged on its own",
        positive=f"picks its own answer more often than its competence predicts {where}",
        negative=f"picks its own answer less often than its competence predicts {where}",
        none=f"no detectable part {where}",
        order=12 + k,
        material=0.05,
        scale="share of own pairs",
        span=RATE_DIFFERENCE,
        headline=False,
        unadjusted=True,
    )
    for k, (metric, (where, short)) in enumerate(_PART_WORDS.items())
}


HEADING = Heading(
    id="self-preference-ladder",
    title="Self-preference, taken apart",
    table="pairs",
    biases=tuple(PARTS.values()),
)
