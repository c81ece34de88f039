"""The words of the leaderboard analysis (:mod:`recuse.analyses.leaderboard`):
its biases and its heading, light to import (:mod:`recuse.biases`)."""

from __future__ import annotations

from recuse.biases.heading import Heading
from recuse.choices import COVARIATES
from recuse.report.bias import UNBOUNDED, Bias

_WORDS = {
    "own": ("Own answer (Bradley–Terry, pooled over judges)", "rewards its own answers",
            "marks its own answers down"),
    "family": ("Family (Bradley–Terry, pooled over judges)", "rewards its family's answers",
               "marks its family down"),
    "length": ("Length (Bradley–Terry)", "rewards longer answers", "rewards shorter answers"),
    "first": ("First position (Bradley–Terry)", "rewards the answer shown first",
              "rewards the answer shown second"),
    "headers": ("Markdown headers (Bradley–Terry)", "rewards headers", "marks headers down"),
    "lists": ("Markdown lists (Bradley–Terry)", "rewards lists", "marks lists down"),
    "bold": ("Bold text (Bradley–Terry)", "rewards bold text", "marks bold text down"),
}  # fmt: skip

#: the own-answer and family covariates: one coefficient pooled over every judge, not a
#: judge's self- or family preference (the calibrated estimates are those), never flagged
SELF_TERMS = ("own", "family")

_POOLED = (
    "; pooled over judges: one coefficient for all judges together, not any judge's "
    "self- or family preference (see their calibrated headlines); never flagged"
)

#: the length and first-position covariates: one coefficient pooled over every judge,
#: against the strengths the judges' own verdicts give the systems, beside each judge's
#: own headline of that bias, which can read otherwise (llmbar-mtbench: length "rewards
#: longer answers" +0.56 [0.05, 1.03] beside no judge's verbosity headline detecting any
#: difference from the humans; first position +0.84 beside gpt-4's 0.51, negligible)
_BESIDE_HEADLINE = {
    "length": "; pooled over judges, and against the systems' strengths in the judges' own "
    "verdicts, not the humans' labels: not any judge's verbosity headline (how much more "
    "often than the humans it picks the longer answer)",
    "first": "; pooled over judges: not any judge's position headline (its own share of "
    "the win given to the answer shown first)",
}

COVARIATE_BIASES: dict[str, Bias] = {
    name: Bias(
        key=f"bt_{name}",
        title=title,
        unit=f"log-odds of winning per unit of the covariate ({COVARIATES[name]}), all "
        "systems' strengths held fixed; 0 = no effect"
        + (_POOLED if name in SELF_TERMS else _BESIDE_HEADLINE.get(name, "")),
        positive=positive,
        negative=negative,
        none="no detectable effect",
        order=80 + i,
        material=0.1,  # 0.1 in this unit: smallest effect worth acting on (default)
        scale="log-odds per unit",
        span=UNBOUNDED,
        pooled=True,
        headline=False,
        unadjusted=name in SELF_TERMS,
    )
    for i, (name, (title, positive, negative)) in enumerate(_WORDS.items())
}

LONGER = COVARIATE_BIASES["length"]


HEADING = Heading(
    id="leaderboard",
    title="Bias-adjusted leaderboard",
    table="pairs",
    biases=tuple(COVARIATE_BIASES.values()),
)
