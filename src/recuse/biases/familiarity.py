"""The words of the familiarity analysis (:mod:`recuse.analyses.familiarity`):
its biases and its heading, light to import (:mod:`recuse.biases`)."""

from __future__ import annotations

from recuse.biases.heading import Heading
from recuse.report.bias import UNBOUNDED, Bias

FAMILIARITY = Bias(
    key="familiarity",
    title="Familiarity (perplexity)",
    short="Familiarity",
    unit="human slope minus judge slope of fractional-logit fits of the preference for a "
    "on d = log ppl_a − log ppl_b (log-odds per nat of per-token log-perplexity, in the "
    "judge's own tokens: judges with other tokenizers are on other scales); positive: the "
    "judge follows perplexity more than the humans do",
    positive="prefers low-perplexity (familiar) answers more than humans do",
    negative="prefers high-perplexity answers more than humans do",
    none="no detectable familiarity preference",
    order=60,
    material=0.1,  # 0.1 in this unit: smallest effect worth acting on (default)
    scale="slope difference (log-odds)",
    span=UNBOUNDED,
)


HEADING = Heading(
    id="familiarity",
    title="Familiarity (perplexity)",
    table="pairs",
    biases=(FAMILIARITY,),
)
