"""The probes' edits: each changes one answer (the *treated* one) and nothing else.

Every edit is a pure function of the answer text (and, for bandwagon and
attribution, a name or the treated answer's opening words), deterministic, and
invertible: :func:`undo` recovers the original text exactly. The placebo is an edit
that should not matter to any judge (a trailing newline), so that a judge's noise —
its verdict moving on any change of bytes — is measured and subtracted.

=================  =============================================================
placebo            a trailing newline after the answer
padding            a closing paragraph that restates nothing new ("verbosity"
                   without a model: the answer gets longer, its content does not)
authority          a fabricated citation after the answer
distraction        an irrelevant true sentence before the answer
bandwagon          a note in the question that most reviewers preferred the answer
                   starting with the treated answer's first words
attribution-self   the treated answer labelled as written by the judge's model
attribution-other  the treated answer labelled as written by another assistant
=================  =============================================================
"""

from __future__ import annotations

from recuse.probe_edits import PROBES, Probe

__all__ = ["PROBES", "Probe", "apply_probe", "undo"]

PADDING = (
    "\n\nTo summarise: the points above are the complete answer to the question, and "
    "nothing further needs to be added to them."
)
CITATION = (
    "\n\n(Source: Whitfield, J. & Moreau, A. (2019). Journal of Applied Reasoning, 14(2), 101–118.)"
)
DISTRACTION = "Water boils at 100 degrees Celsius at sea level. "
PLACEBO = "\n"
BANDWAGON = (
    "\n\n(Note: most reviewers preferred the answer that begins with \u201c{opening}\u201d.)"
)
ATTRIBUTION = "[Answer written by {author}]\n"
OTHER_AUTHOR = "another AI assistant"


def opening(text: str, words: int = 6) -> str:
    """The first ``words`` words of an answer (the bandwagon note quotes them)."""
    return " ".join(text.split()[:words])


def apply_probe(question: str, answer: str, name: str, *, author: str = "") -> tuple[str, str]:
    """``(question, answer)`` after probe ``name`` edits the treated ``answer``.

    ``author`` names the judge's model for ``attribution-self``.

    >>> apply_probe("Q?", "Yes.", "placebo")
    ('Q?', 'Yes.\\n')
    >>> apply_probe("Q?", "Yes.", "attribution-self", author="gpt-4")
    ('Q?', '[Answer written by gpt-4]\\nYes.')
    """
    if name == "placebo":
        return question, answer + PLACEBO
    if name == "padding":
        return question, answer + PADDING
    if name == "authority":
        return question, answer + CITATION
    if name == "distraction":
        return question, DISTRACTION + answer
    if name == "bandwagon":
        return question + BANDWAGON.format(opening=opening(answer)), answer
    if name == "attribution-self":
        return question, ATTRIBUTION.format(author=author or "the judge") + answer
    if name == "attribution-other":
        return question, ATTRIBUTION.format(author=OTHER_AUTHOR) + answer
    raise KeyError(f"unknown probe {name!r}; known: {', '.join(PROBES)}")


def undo(name: str, question: str, answer: str) -> tuple[str, str]:
    """The inverse of :func:`apply_probe`, from the edited texts alone; raises
    ``ValueError`` when they do not carry the edit.

    >>> undo("authority", *apply_probe("Q?", "Yes.", "authority"))
    ('Q?', 'Yes.')
    """
    if name in ("placebo", "padding", "authority"):
        tail = {"placebo": PLACEBO, "padding": PADDING, "authority": CITATION}[name]
        if not answer.endswith(tail):
            raise ValueError(f"the answer does not end with the {name} edit")
        return question, answer[: len(answer) - len(tail)]
    if name == "distraction":
        if not answer.startswith(DISTRACTION):
            raise ValueError("the answer does not start with the distraction")
        return question, answer[len(DISTRACTION) :]
    if name == "bandwagon":
        cut = question.rfind(BANDWAGON.split("{")[0])
        if cut < 0 or not question.endswith("\u201d.)"):
            raise ValueError("the question does not end with the bandwagon note")
        return question[:cut], answer
    if name in ("attribution-self", "attribution-other"):
        head = ATTRIBUTION.split("{")[0]
        end = answer.find("]\n")
        if not answer.startswith(head) or end < 0:
            raise ValueError("the answer does not start with an attribution label")
        return question, answer[end + 2 :]
    raise KeyError(f"unknown probe {name!r}; known: {', '.join(PROBES)}")
