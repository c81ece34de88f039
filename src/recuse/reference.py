"""What a table's reference labels are, and the words that name them.

A pairs table's ``human`` column (a ratings table's ``reference``) holds the labels the
judge is compared with. Most datasets' are human preferences; JudgeBench's are
objective correctness (which response is right). The dataset declares which
(:attr:`recuse.data.registry.Dataset.reference`); a user's file takes the kind of the
datasets its rows' ``source`` names, else human, and a file whose labelled rows are of
both kinds is ``"mixed"`` (:func:`recuse.data.inputs.file_reference`). The words follow
the kind: where a text is made knowing it, from :data:`AGREEING_WITH` and
:data:`LABEL_NAMES`; else :func:`reword` turns a sentence written for human labels
("picks its own answer more often than the humans prefer it") into one for correctness
labels ("... more often than it is the correct answer") or for the neutral "reference
label" of a mixed file ("... than the reference label favours it").
"""

from __future__ import annotations

import re
from typing import Literal

ReferenceKind = Literal["human", "correctness", "mixed"]


#: what the labels are, in the report's provenance (``"reference"``) and notes
REFERENCE_NAMES: dict[ReferenceKind, str] = {
    "human": "human labels",
    "correctness": "correctness labels",
    "mixed": "reference labels of mixed kinds (human and correctness)",
}
#: whom a verdict agrees with, as "agreement with ..." says it
AGREEING_WITH: dict[ReferenceKind, str] = {
    "human": "humans",
    "correctness": "the correctness labels",
    "mixed": "the reference labels",
}
#: one label, as "equal to the ..." says it (plural: add "s")
LABEL_NAMES: dict[ReferenceKind, str] = {
    "human": "human label",
    "correctness": "correctness label",
    "mixed": "reference label",
}

# For correctness labels: each phrase the shared texts use for the human labels, and
# its counterpart, longest first (a phrase is replaced before the words inside it).
_CORRECTNESS: tuple[tuple[str, str], ...] = (
    (r"P\(human prefers it\)", "P(it is the correct answer)"),
    (r"P\(human picks the longer answer\)", "P(the longer answer is the correct one)"),
    (r"P\(human picks it\)", "P(it is the correct one)"),
    (r"the humans prefer it", "it is the correct answer"),
    (r"as often as the humans\b", "as often as it is correct"),
    (r"when the humans chose the longer answer", "when the longer answer is the correct one"),
    (r"the humans themselves prefer longer answers", "the longer answers are the correct ones"),
    (r"when they prefer the (longer|shorter) answer", r"when the \1 answer is correct"),
    (r"they prefer the (longer|shorter) one", r"the \1 one is"),
    (r"human-preferred", "correct"),
    (r"human-labell?ed", "correctness-labelled"),
    (r"the human's side", "the correct side"),
    (r"the human prefers", "the correctness label favours"),
    (r"the human outcome rates", "rates at which a is correct"),
    (r"the human outcomes", "which answer is correct"),
    (r"the human slope", "the correctness-label slope"),
    (r"an? human preference", "a correctness label"),
    (r"human preferences?", "correctness label"),
    (r"the humans decided for", "the correctness labels decided for"),
    (r"human labels", "correctness labels"),
    (r"human label", "correctness label"),
    (r"the humans", "the correctness labels"),
    (r"humans", "the correctness labels"),
    (r"the human", "the correctness label"),
    (r"human", "correctness-label"),
)
# For a file whose labels are of both kinds: the neutral "reference label", same order.
_MIXED: tuple[tuple[str, str], ...] = (
    (r"P\(human prefers it\)", "P(the reference label favours it)"),
    (r"P\(human picks the longer answer\)", "P(the reference label picks the longer answer)"),
    (r"P\(human picks it\)", "P(the reference label picks it)"),
    (r"the humans prefer it", "the reference label favours it"),
    (r"as often as the humans\b", "as often as the reference labels"),
    (r"when the humans chose the longer answer", "when the reference label picked the longer one"),
    (r"the humans themselves prefer longer answers", "the reference labels favour longer answers"),
    (r"when they prefer the (longer|shorter) answer", r"when they favour the \1 answer"),
    (r"they prefer the (longer|shorter) one", r"they favour the \1 one"),
    (r"human-preferred", "reference-preferred"),
    (r"human-labell?ed", "reference-labelled"),
    (r"the human's side", "the reference label's side"),
    (r"the human prefers", "the reference label favours"),
    (r"the human outcome rates", "the reference-label outcome rates"),
    (r"the human outcomes", "the reference-label outcomes"),
    (r"the human slope", "the reference-label slope"),
    (r"an? human preference", "a reference label"),
    (r"human preferences?", "reference label"),
    (r"the humans decided for", "the reference labels decided for"),
    (r"human labels", "reference labels"),
    (r"human label", "reference label"),
    (r"the humans", "the reference labels"),
    (r"humans", "the reference labels"),
    (r"the human", "the reference label"),
    (r"human", "reference-label"),
)


def _compiled(rules: tuple[tuple[str, str], ...]) -> tuple[tuple[re.Pattern[str], str], ...]:
    # whole words only: "humane" or "humanity" is no label
    return tuple((re.compile(rf"\b{pattern}(?!\w)", re.IGNORECASE), new) for pattern, new in rules)


_RULES: dict[ReferenceKind, tuple[tuple[re.Pattern[str], str], ...]] = {
    "human": (),
    "correctness": _compiled(_CORRECTNESS),
    "mixed": _compiled(_MIXED),
}


def _keep_case(new: str, old: str) -> str:
    return new[:1].upper() + new[1:] if old[:1].isupper() else new


def reword(text: str, kind: ReferenceKind) -> str:
    """``text``, written for human labels, in the words of ``kind``'s labels.

    >>> reword("picks its own answer more often than the humans prefer it", "correctness")
    'picks its own answer more often than it is the correct answer'
    >>> reword("Agreement with the human label", "correctness")
    'Agreement with the correctness label'
    >>> reword("agrees with humans", "human")
    'agrees with humans'
    >>> reword("picks its own answer more often than the humans prefer it", "mixed")
    'picks its own answer more often than the reference label favours it'
    """
    for pattern, new in _RULES[kind]:

        def swap(m: re.Match[str], new: str = new) -> str:
            return _keep_case(m.expand(new), m.group(0))

        text = pattern.sub(swap, text)
    return text
