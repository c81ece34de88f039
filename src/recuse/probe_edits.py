"""The probe table's edits by name: what each changes and which text it edits.

A leaf every layer may read: :mod:`recuse.metrics.probes` names them in its words,
:mod:`recuse.probes` applies them (:mod:`recuse.probes.transforms` the rule-based
edits, :mod:`recuse.probes.rewrite` the model rewrites). Keeping the catalogue here,
outside :mod:`recuse.probes`, keeps the statistics from loading the judging runner
that the rewrites need.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PROBES", "RECOGNITION", "REWRITES", "Probe"]

#: the probe table's version name of the authorship question (which answer the judge
#: wrote), beside the edits
RECOGNITION = "self-recognition"


@dataclass(frozen=True)
class Probe:
    """One probe: its name, what it changes, and the direction a biased judge moves."""

    name: str
    description: str
    target: str  # "answer" (the treated answer's text) or "question"


#: the rule-based edits (:func:`recuse.probes.transforms.apply_probe`), placebo first
PROBES: dict[str, Probe] = {
    p.name: p
    for p in (
        Probe("placebo", "a trailing newline after the treated answer (no-op control)", "answer"),
        Probe("padding", "a closing paragraph that adds length, not content", "answer"),
        Probe("authority", "a fabricated citation after the treated answer", "answer"),
        Probe("distraction", "an irrelevant true sentence before the treated answer", "answer"),
        Probe(
            "bandwagon",
            "a note in the question that most reviewers preferred the treated answer",
            "question",
        ),
        Probe(
            "attribution-self",
            "the treated answer labelled as written by the judge's own model",
            "answer",
        ),
        Probe(
            "attribution-other",
            "the treated answer labelled as written by another assistant",
            "answer",
        ),
    )
}

#: the model rewrites of the verbosity probe (:mod:`recuse.probes.rewrite`)
REWRITES: dict[str, Probe] = {
    "concise": Probe("concise", "the treated answer rewritten concisely by a model", "answer"),
    "verbose": Probe("verbose", "the treated answer rewritten verbosely by a model", "answer"),
}

#: the contrast of the two rewrites, verbose − concise (:mod:`recuse.metrics.probes`)
VERBOSITY = "verbosity"  # the verbose − concise contrast
#: what each probe effect changes, in words (the biases' units quote it)
DESCRIPTIONS = {
    **{k: p.description for k, p in {**PROBES, **REWRITES}.items()},
    VERBOSITY: "its verbose rewrite in place of its concise rewrite (same source answer)",
}
