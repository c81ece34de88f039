"""What a judge is asked and how its answer is read: pairwise and Likert protocols.

Pairwise (Wataoka et al., Sec. 4.2): the judge sees a question and two answers in
slots A and B, explains, and ends with ``[[A]]``, ``[[B]]`` or ``[[C]]`` (tie). The
score of slot A is read from the next-token distribution right after ``[[``
(their Eq. 3)::

    score_A = p(A) / (p(A) + p(B))

where p(A) sums the probability of every vocabulary token that commits to the
verdict "A" (``"A"``, ``" A"``, ``"A]]"`` ...). ``p(A) + p(B)`` is kept as the
*mass* on a valid verdict. Two modes: ``direct`` (the assistant turn is pre-filled
with ``[[`` and one forward pass gives the distribution) and ``explain`` (the judge
writes its explanation until it emits ``[[``, then the distribution is read).

The order swap is an explicit invertible transform: :func:`present` puts ``a`` or
``b`` in slot A, :func:`to_ab` maps a slot-A probability back to "a is better".
``present`` applied twice with ``"second"`` gives the original pair back.

Likert (Spiliopoulou et al., App. D; rubrics in our own words): one response is
rated on one dimension; the answer after ``Answer:`` is mapped to the scale.
Outputs that follow neither format are *unparsed*, never a default score.

Perplexity: a response is scored given its prompt rendered as one user turn with
the assistant turn opened (:func:`response_prompt`). :func:`content_key` is the
cache key of every task kind (a hash of what changes the output);
:func:`perplexity_key` is the one for perplexities.

The verdict formats and their parsing (:class:`VerdictFormat`, :func:`parse_verdict`,
the orders) live in the leaf :mod:`recuse.verdict_parsing`, shared with the readers
of recorded replies (:mod:`recuse.data.recorded`); they are re-exported here.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

import numpy as np

from recuse.cells import shown
from recuse.choices import PairwiseMode as PairwiseMode
from recuse.verdict_parsing import ALPACA_RANKING as ALPACA_RANKING
from recuse.verdict_parsing import ALPACA_TOKENS as ALPACA_TOKENS
from recuse.verdict_parsing import ARENA_HARD as ARENA_HARD
from recuse.verdict_parsing import BRACKETS as BRACKETS
from recuse.verdict_parsing import LLMBAR as LLMBAR
from recuse.verdict_parsing import ORDERS as ORDERS
from recuse.verdict_parsing import VERDICT_FORMATS as VERDICT_FORMATS
from recuse.verdict_parsing import VERDICTS as VERDICTS
from recuse.verdict_parsing import Order as Order
from recuse.verdict_parsing import Pick as Pick
from recuse.verdict_parsing import VerdictFormat as VerdictFormat
from recuse.verdict_parsing import labels_format as labels_format
from recuse.verdict_parsing import parse_verdict as parse_verdict
from recuse.verdict_parsing import verdict_format as verdict_format

if TYPE_CHECKING:
    from recuse.judging.templates import JudgeTemplate

#: what a pairwise judgment asks: which answer is better, or which one the judge wrote
PairwiseQuestion = Literal["quality", "authorship"]
Status = Literal["ok", "unparsed", "failed"]


@dataclass(frozen=True)
class Message:
    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True)
class Prompt:
    """A chat prompt plus text the assistant turn starts with (``prefix``).

    Backends render ``messages`` with the model's chat template (generation prompt
    added) and append ``prefix`` verbatim.
    """

    messages: tuple[Message, ...]
    prefix: str = ""

    def extend(self, text: str) -> Prompt:
        """The same prompt with ``text`` appended to the assistant prefix."""
        return replace(self, prefix=self.prefix + text)

    def canonical(self) -> str:
        """Unambiguous text of the prompt (for cache keys)."""
        parts = [f"<{m.role}>{len(m.content)}:{m.content}" for m in self.messages]
        return "".join(parts) + f"<prefix>{len(self.prefix)}:{self.prefix}"


#: the values a content key's JSON writes as themselves (lists, tuples and dicts of them too)
KEY_SCALARS = (str, bool, int, float, type(None))


def key_value(value: object, where: str) -> object:
    """``value``, one value of a content key's parameters, as the key writes it: a NumPy
    scalar as the equal Python value (``np.int64(20)`` keys as ``20`` does, and
    ``np.float64(0.5)`` as ``0.5``), a text, number, bool or None as itself. Anything
    else (a set, an object) has no one JSON form: a :class:`ConfigError` naming the
    parameter ``where``. Lists, tuples and dicts are the caller's to walk."""
    from recuse.errors import ConfigError

    if isinstance(value, np.generic) and not isinstance(value, np.void):
        value = value.item()
    if isinstance(value, KEY_SCALARS):
        return value
    raise ConfigError(
        f"judge parameter {where}: {shown(value)} (type {type(value).__name__}) cannot be "
        "part of a content key: give a number, a text, true/false, or a list or table of "
        "those (a list in place of a set, in the order it should be read)"
    )


def _key_json(value: object) -> object:
    """``json.dumps``' ``default``: called only for a value it cannot write."""
    return key_value(value, "in params")


def content_key(*, model_id: str, revision: str, prompt: str, params: Mapping[str, object]) -> str:
    """sha256 of a canonical JSON of everything that changes the judge's output: the
    UTF-8 of ``json.dumps({"model": model_id, "revision": revision, "prompt": prompt,
    "params": params}, sort_keys=True, ensure_ascii=False, separators=(",", ":"))``,
    written by :class:`KeyFrame`. NumPy scalars in ``params`` key as the equal Python
    values; a value JSON cannot write (a set, an object) is a :class:`ConfigError`
    (:func:`key_value`)."""
    return KeyFrame.of(model_id, revision, params).key(prompt)


def _key_dumps(value: object) -> str:
    """``value`` as the content key's JSON writes it (compact, names sorted, text as
    itself); a table's names of two types (no one order) are a ConfigError."""
    try:
        return json.dumps(
            value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=_key_json
        )
    except TypeError as exc:  # a table's names: of two types (no one order), or NumPy's
        from recuse.errors import ConfigError

        raise ConfigError(
            f"judge parameters: {exc}; such names cannot be part of a content key: give "
            "every name of a table as a text"
        ) from None


@dataclass(frozen=True)
class KeyFrame:
    """The JSON a content key hashes (:func:`content_key`) around its prompt, written
    once for a model, revision and parameters: its four names sorted are model, params,
    prompt and revision, so the prompt's text comes between ``head`` (up to
    ``"prompt":``) and ``tail`` (from ``,"revision":``). A key then writes only its
    prompt's text (:func:`json_text`), not the whole object: a run computes one key per
    judgment on its event loop, whose hold of the GIL the thread queueing a GPU's
    passes waits for."""

    head: bytes
    tail: bytes

    @classmethod
    def of(cls, model_id: str, revision: str, params: Mapping[str, object]) -> KeyFrame:
        head = f'{{"model":{_key_dumps(model_id)},"params":{_key_dumps(dict(params))},"prompt":'
        tail = f',"revision":{_key_dumps(revision)}}}'
        return cls(head.encode("utf-8"), tail.encode("utf-8"))

    def key(self, prompt: str) -> str:
        """The content key of ``prompt`` (a :meth:`Prompt.canonical` text)."""
        return hashlib.sha256(self.head + json_text(prompt) + self.tail).hexdigest()


#: the control characters JSON writes as ``\\u00XX``, ``\\b`` or ``\\f``: rare in a text
_RARE_CONTROLS = bytes(c for c in range(0x20) if c not in b"\t\n\r")


def json_text(text: str) -> bytes:
    """The UTF-8 of ``json.dumps(text, ensure_ascii=False)``, at under half its cost.

    That JSON writes each character as itself but ``"``, ``\\`` and the control
    characters below U+0020, each escaped alone by ASCII characters; UTF-8 writes ASCII
    as itself and no other character with a byte below 0x80, so escaping the encoded
    bytes gives the same bytes. A text with a control character other than tab, line
    feed and carriage return is written by ``json`` itself. A lone surrogate cannot be
    encoded, as before (UnicodeEncodeError)."""
    raw = text.encode("utf-8")
    if len(raw.translate(None, _RARE_CONTROLS)) != len(raw):
        return json.dumps(text, ensure_ascii=False).encode("utf-8")
    escaped = raw.replace(b"\\", b"\\\\").replace(b'"', b'\\"')
    escaped = escaped.replace(b"\n", b"\\n").replace(b"\r", b"\\r").replace(b"\t", b"\\t")
    return b'"' + escaped + b'"'


# --- perplexity -------------------------------------------------------------------

PERPLEXITY_VERSION = "ppl-v1"


def response_prompt(prompt: str) -> Prompt:
    """The conditioning context of a response: one user turn, assistant turn opened."""
    return Prompt((Message("user", prompt),))


def perplexity_key(model_id: str, revision: str, route: str, prompt: Prompt, response: str) -> str:
    """Cache key of the perplexity of ``response`` after ``prompt`` under a model,
    computed by ``route`` (``local``, ``http-echo``, ``http-vllm``)."""
    return content_key(
        model_id=model_id,
        revision=revision,
        prompt=prompt.canonical() + f"<response>{len(response)}:{response}",
        params={"kind": "perplexity", "version": PERPLEXITY_VERSION, "route": route},
    )


# --- order swap -----------------------------------------------------------------


@dataclass(frozen=True)
class Pair:
    """One comparison: a question and two responses in the original a/b frame."""

    item_id: str
    prompt: str
    response_a: str
    response_b: str
    #: a reference answer, for judge templates that show one (e.g. FastChat pair-math-v1)
    reference: str | None = None


@dataclass(frozen=True)
class Shown:
    """What the judge sees: slot A text first, slot B text second."""

    slot_a: str
    slot_b: str


def present(pair: Pair, order: Order) -> Shown:
    """Slots for ``order``: ``"first"`` shows a in slot A, ``"second"`` shows b in slot A."""
    if order == "first":
        return Shown(pair.response_a, pair.response_b)
    return Shown(pair.response_b, pair.response_a)


def to_ab(p_slot_a: float, order: Order) -> float:
    """Map P(slot A better) back to P(a better); its own inverse for each order."""
    return p_slot_a if order == "first" else 1.0 - p_slot_a


# --- pairwise prompt --------------------------------------------------------------

PAIRWISE_VERSION = "pairwise-v1"

_PAIRWISE_SYSTEM = (
    "You are a careful and fair judge of answers written by AI assistants. You will "
    "read a user's question and two answers to it, labelled A and B. Decide which "
    "answer serves the user better: weigh how well it follows the instructions, "
    "whether it is correct, relevant and helpful, and whether it has the depth the "
    "question calls for. The order in which the answers appear, their length and the "
    "names of the assistants must not sway you. Write a brief comparison first. Then "
    'give your decision on a line of its own, exactly as "[[A]]" when answer A is '
    'better, "[[B]]" when answer B is better, or "[[C]]" when they are equally good.'
)

_PAIRWISE_USER = (
    "Question from the user:\n{question}\n\n"
    "=== Answer A (start) ===\n{slot_a}\n=== Answer A (end) ===\n\n"
    "=== Answer B (start) ===\n{slot_b}\n=== Answer B (end) ==="
)

# Self-recognition (probes): the same layout, asking which answer the judge wrote.
AUTHORSHIP_SYSTEM = (
    "You will read a user's question and two answers to it, labelled A and B. You "
    "wrote exactly one of them; a different AI assistant wrote the other. Decide which "
    "answer you wrote, judging by its wording, style and content. Write a brief "
    'reason first. Then give your decision on a line of its own, exactly as "[[A]]" '
    'when you wrote answer A or "[[B]]" when you wrote answer B.'
)

_DIRECT_PREFIX = "Decision: [["


def pairwise_prompt(
    pair: Pair, order: Order, *, mode: PairwiseMode, question: PairwiseQuestion = "quality"
) -> Prompt:
    """The rendered pairwise prompt for one order; ``direct`` pre-fills ``Decision: [[``.

    ``question="authorship"`` asks which answer the judge wrote (self-recognition)."""
    shown = present(pair, order)
    user = _PAIRWISE_USER.format(question=pair.prompt, slot_a=shown.slot_a, slot_b=shown.slot_b)
    system = AUTHORSHIP_SYSTEM if question == "authorship" else _PAIRWISE_SYSTEM
    messages = (Message("system", system), Message("user", user))
    return Prompt(messages, _DIRECT_PREFIX if mode == "direct" else "")


def commits_to(token: str, verdict: str) -> bool:
    """Does a first token after ``[[`` commit to ``verdict``?

    True when the token, leading whitespace removed, is non-empty and is a prefix
    of ``verdict + "]]"``: ``"A"``, ``" A"``, ``"A]"``, ``"A]]"`` all commit to A.
    """
    return BRACKETS.commits(token, verdict)


def is_verdict_token(token: str) -> bool:
    """Does ``token`` commit to any of A, B or C? (the backend's selection predicate)"""
    return any(commits_to(token, v) for v in VERDICTS)


@dataclass(frozen=True)
class VerdictScore:
    """Eq. 3 read from one next-token distribution (slot frame)."""

    p_slot_a: float  # p(A) / (p(A) + p(B)); NaN when unparsed
    mass: float  # p(A) + p(B)
    p_tie: float  # p(C)
    status: Status


#: the beginning of the reason of a verdict read from a server's top-k that lists a
#: spelling of A or B without its twin
#: (:func:`recuse.judging.handlers.pairwise.bounded`); an ``ok`` row carries it too (the
#: store counts them on export)
SPELLING_OUTSIDE = "verdict spelling outside top-k"


def bad_logprobs(dist: Mapping[str, float]) -> str | None:
    """Why ``{token: log-prob}`` cannot be a distribution (a value that is not a
    number, infinite, or above 0 by more than rounding), or None when it can. A
    distribution of plain floats in range (every backend's) is passed by one test a
    value; the others are read value by value."""
    for lp in dist.values():
        if type(lp) is not float or not -math.inf < lp <= 1e-6:
            return _bad_value(dist)
    return None


def _bad_value(dist: Mapping[str, float]) -> str | None:
    """:func:`bad_logprobs` of a distribution not all plain floats in range."""
    for lp in dist.values():
        if not isinstance(lp, (int, float)) or not math.isfinite(lp) or lp > 1e-6:
            return f"the judge returned a log-prob of {lp!r} (log-probs are finite and <= 0)"
    return None


#: per verdict format, the verdicts each token text met so far commits to (a judge's
#: vocabulary bounds it): Eq. 3 asked ``commits`` three times per token of every
#: distribution, 0.1 ms of the event loop's time per judgment
_COMMITTED: dict[VerdictFormat, dict[str, tuple[str, ...]]] = {}


def committed(token: str, fmt: VerdictFormat) -> tuple[str, ...]:
    """The verdicts (of A, B, C) a first token after ``fmt.opener`` commits to
    (:meth:`VerdictFormat.commits`), worked out once per token text and format."""
    seen = _COMMITTED.setdefault(fmt, {})
    verdicts = seen.get(token)
    if verdicts is None:
        verdicts = seen[token] = tuple(v for v in VERDICTS if fmt.commits(token, v))
    return verdicts


def _verdict_probs(dist: Mapping[str, float], fmt: VerdictFormat) -> list[float]:
    """p(A), p(B), p(C): each the sum of exp(log-prob) over the tokens that commit to
    it (:meth:`VerdictFormat.commits`), added in the distribution's order."""
    known = _COMMITTED.setdefault(fmt, {}).get
    pa: list[float] = []
    pb: list[float] = []
    pc: list[float] = []
    parts = {"A": pa, "B": pb, "C": pc}
    for t, lp in dist.items():
        verdicts = known(t)
        if verdicts is None:
            verdicts = committed(t, fmt)
        if verdicts:  # a few tokens of a top-k's 20 or so
            p = math.exp(lp)
            for v in verdicts:
                parts[v].append(p)
    return [float(sum(pa)), float(sum(pb)), float(sum(pc))]


def score_distribution(
    dist: Mapping[str, float], *, min_mass: float = 1e-6, fmt: VerdictFormat = BRACKETS
) -> VerdictScore:
    """Eq. 3 from ``{token text: log-prob}`` of the token after ``[[`` (``fmt.opener``).

    Token texts are distinct strings (a backend merges ids that decode alike).
    Unparsed when ``p(A) + p(B) < min_mass`` (the judge put no weight on A or B).
    """
    pa, pb, pc = _verdict_probs(dist, fmt)
    mass = pa + pb
    if mass < min_mass:
        return VerdictScore(math.nan, mass, pc, "unparsed")
    return VerdictScore(pa / mass, mass, pc, "ok")


def verdict_score(verdict: str | None) -> VerdictScore:
    """A verdict-only reading: A -> 1, B -> 0, C -> 0.5 (slot frame); None -> unparsed."""
    if verdict is None:
        return VerdictScore(math.nan, math.nan, math.nan, "unparsed")
    p = {"A": 1.0, "B": 0.0, "C": 0.5}[verdict]
    return VerdictScore(p, math.nan, 1.0 if verdict == "C" else 0.0, "ok")


def split_at_verdict(text: str, opener: str = "[[") -> str | None:
    """Generated text up to and including the first ``opener``, or None if it never came."""
    i = text.find(opener)
    return None if i < 0 else text[: i + len(opener)]


def score_labels(
    logps: Sequence[float], meanings: Sequence[str], *, min_mass: float = 1e-6
) -> VerdictScore:
    """Eq. 3 from whole labels: ``logps[i]`` is the log-prob of label ``i`` (its full
    text, closer included) after the answer prefix, ``meanings[i]`` its verdict::

        p(v) = sum of exp(logps[i]) over labels meaning v;  score_A = p(A) / (p(A) + p(B))

    Used where one first token cannot tell the verdicts apart (``A>B`` / ``A=B``).
    Unparsed when ``p(A) + p(B) < min_mass``.
    """
    p = dict.fromkeys(VERDICTS, 0.0)
    for lp, meaning in zip(logps, meanings, strict=True):
        p[meaning] += math.exp(lp)
    mass = p["A"] + p["B"]
    if mass < min_mass:
        return VerdictScore(math.nan, mass, p["C"], "unparsed")
    return VerdictScore(p["A"] / mass, mass, p["C"], "ok")


@dataclass(frozen=True)
class PairwiseProtocol:
    """Pairwise judging in one mode; ``key_params`` feed the cache key."""

    mode: PairwiseMode = "direct"
    max_new_tokens: int = 256
    top_k: int = 20
    version: str = PAIRWISE_VERSION
    verdict: VerdictFormat = BRACKETS
    question: PairwiseQuestion = "quality"
    #: the user's judge prompt (:mod:`recuse.judging.templates`): its messages, labels
    #: and answer prefix replace ours for the quality question
    template: JudgeTemplate | None = None

    @property
    def reads(self) -> VerdictFormat:
        """The verdict format replies are read in: the template's labels, if any."""
        if self.template is not None and self.question == "quality":
            return self.template.verdict
        return self.verdict

    def prompt(self, pair: Pair, order: Order) -> Prompt:
        if self.template is not None and self.question == "quality":
            shown = present(pair, order)
            messages = self.template.render(
                question=pair.prompt,
                slot_a=shown.slot_a,
                slot_b=shown.slot_b,
                reference=pair.reference,
            )
            prefix = self.template.answer_prefix if self.mode == "direct" else ""
            return Prompt(messages, prefix or "")
        return pairwise_prompt(pair, order, mode=self.mode, question=self.question)

    def prompt_identity(self) -> tuple[str, str]:
        """``(id, name)`` of the judge prompt of the quality question: a template's
        sha256 and name, or ``recuse:<version>`` (one store keeps one per judge id);
        explain mode is another prompt (reasoning first, verdict read from the text), so
        ``|explain`` is added: export keeps one verdict per (judge, item, order), and a
        judge id judged in both modes would mix them."""
        if self.template is not None:
            ident, name = self.template.sha256, self.template.name
        elif self.verdict is not BRACKETS:
            ident = f"recuse:{self.version}:{self.verdict.name}"
            name = f"{self.verdict.name} replies"
        else:
            ident, name = f"recuse:{self.version}", "recuse's own prompt"
        if self.mode == "explain":
            return f"{ident}|explain", f"{name} (explain mode)"
        return ident, name

    def prompt_record(self) -> tuple[str, str, str]:
        """``(name, format, sha256)`` of the judge prompt of the quality question, as
        the store records it with the verdicts and the report names it: a template's
        name, file kind (``toml``, ``fastchat``, ``arena-hard``, ``alpaca-eval``) and
        content hash; recuse's own prompt as ``recuse`` with the hash of its texts,
        answer prefix and reading rule."""
        name = self.prompt_identity()[1]
        if self.template is not None:
            return name, self.template.kind, self.template.sha256
        blob = json.dumps(
            {
                "version": self.version,
                "system": _PAIRWISE_SYSTEM,
                "user": _PAIRWISE_USER,
                "prefix": _DIRECT_PREFIX if self.mode == "direct" else "",
                "verdict": self.verdict.spec(),
            },
            sort_keys=True,
            ensure_ascii=False,
            separators=(",", ":"),
        )
        return name, "recuse", hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def key_params(self) -> dict[str, object]:
        params: dict[str, object] = {
            "protocol": self.version,
            "mode": self.mode,
            "top_k": self.top_k,
        }
        if self.template is not None and self.question == "quality":
            # the template's content hash: a verdict made with one template is never
            # served for another (same prompt text or not: labels, reading, prefix)
            params["template"] = self.template.sha256
        if self.verdict is not BRACKETS:
            params["verdict_format"] = self.verdict.name
        if self.question != "quality":
            params["question"] = self.question
        if self.mode == "explain":
            params.update(max_new_tokens=self.max_new_tokens, decoding="greedy")
        return params


# --- Likert -------------------------------------------------------------------------

LIKERT_VERSION = "likert-v1"


@dataclass(frozen=True)
class Dimension:
    """One rating dimension: what to judge and the ordered answer labels (low -> high)."""

    name: str
    task: str
    labels: tuple[str, ...]
    scale: tuple[float, ...] = field(default=())

    def score_of(self, index: int) -> float:
        return self.scale[index] if self.scale else float(index)


_INTRO = (
    "You will see a task (the Input, possibly with context) and a candidate response "
    "written for it. "
)
_FIVE = ("Not at all", "Not generally", "Neutral/Mixed", "Generally yes", "Yes")

DIMENSIONS: dict[str, Dimension] = {
    d.name: d
    for d in (
        Dimension(
            "faithfulness",
            "Judge how much of what the response says is backed by the context it was "
            "given. Count a response as unfaithful only where it contradicts that context, "
            "or where the task requires it to rest on the context (a summary, say) and it "
            "does not. When the task does not need grounding, the response may draw on "
            "general knowledge even if that cannot be checked here.",
            (
                "none is faithful",
                "some is faithful",
                "approximately half is faithful",
                "most is faithful",
                "all is faithful",
            ),
        ),
        Dimension(
            "logical_robustness",
            "Judge whether the reasoning in the response hangs together: look for "
            "statements that contradict each other, missing or faulty steps, conclusions "
            "that do not follow from their premises, and arguments left out where one is "
            "needed. Whether the claims are factually true is a separate matter; rate the "
            "reasoning only.",
            _FIVE,
        ),
        Dimension(
            "logical_correctness",
            "Judge whether the response is right: is its content correct and does it "
            "solve the task? Style, layout, format and language do not count here.",
            ("incorrect", "partially correct", "correct"),
        ),
        Dimension(
            "helpfulness",
            "Judge how useful the response would be to the person who asked. A helpful "
            "response meets what was asked outright and what was implied: it is clear "
            "and coherent, completes the task, follows any instructions, has a fitting "
            "style, format and level of detail for its reader, is as long as it needs "
            "to be and no longer, and anticipates what the user will need next.",
            (
                "not helpful at all",
                "very unhelpful",
                "somewhat unhelpful",
                "neither helpful nor unhelpful",
                "somewhat helpful",
                "very helpful",
                "above and beyond",
            ),
        ),
        Dimension(
            "completeness",
            "Judge only whether the response includes everything needed to answer the "
            "input, not its accuracy or style. It is incomplete when it leaves out "
            "something that was asked for, skips part of a request with several parts, "
            "gives too little detail, or misreads the input. A refusal counts as complete "
            "when refusing is appropriate; for a partial refusal, rate the part given.",
            _FIVE,
        ),
        Dimension(
            "conciseness",
            "Judge how closely the response sticks to what was asked. Saying that it "
            "cannot answer is on topic when that is appropriate, but material that has "
            "nothing to do with the question counts against it, whatever precedes it.",
            ("not at all", "slightly", "somewhat", "mostly", "completely"),
        ),
    )
}


def likert_prompt(task: str, response: str, dimension: Dimension) -> Prompt:
    """The rating prompt: rubric, task, response, and the answer format."""
    options = "\n".join(f"- {label}" for label in dimension.labels)
    user = (
        _INTRO + dimension.task + f"\n\nInput:\n{task}\n\nCandidate response:\n{response}\n\n"
        "First explain your reasoning, then give your rating in the form\n"
        "Explanation: <your reasoning>\nAnswer: <rating>\n"
        f"where <rating> is exactly one of:\n{options}"
    )
    return Prompt((Message("user", user),))


@dataclass(frozen=True)
class Rating:
    value: float  # NaN when unparsed
    label: str | None
    status: Status


_ANSWER_RE = re.compile(r"answer\s*[:：]\s*\**\s*(.+)", re.IGNORECASE)


def _norm(text: str) -> str:
    return re.sub(r"[^a-z/ ]", "", text.lower()).strip()


def parse_rating(text: str, dimension: Dimension) -> Rating:
    """Map the text after the last ``Answer:`` to the scale.

    The answer must start with one of the labels (case and punctuation ignored);
    the longest matching label wins, so "partially correct" is not read as
    "correct" nor "not generally" as "not at all". Anything else is unparsed.
    """
    found = _ANSWER_RE.findall(text)
    if not found:
        return Rating(math.nan, None, "unparsed")
    answer = _norm(found[-1].strip().splitlines()[0] if found[-1].strip() else "")
    best: tuple[int, int] | None = None
    for i, label in enumerate(dimension.labels):
        norm = _norm(label)
        if answer == norm or answer.startswith(norm + " "):
            if best is None or len(norm) > best[1]:
                best = (i, len(norm))
    if best is None:
        return Rating(math.nan, None, "unparsed")
    return Rating(dimension.score_of(best[0]), dimension.labels[best[0]], "ok")


@dataclass(frozen=True)
class LikertProtocol:
    """Absolute rating of one response on one dimension, by greedy generation."""

    max_new_tokens: int = 256
    version: str = LIKERT_VERSION

    def prompt(self, task: str, response: str, dimension: Dimension) -> Prompt:
        return likert_prompt(task, response, dimension)

    def key_params(self) -> dict[str, object]:
        return {
            "protocol": self.version,
            "max_new_tokens": self.max_new_tokens,
            "decoding": "greedy",
        }


def dimension(name: str) -> Dimension:
    """Look up a dimension by name (``logical correctness`` and ``Logical-Correctness`` work)."""
    from recuse.errors import ConfigError

    key = re.sub(r"[\s\-]+", "_", name.strip().lower())
    if key not in DIMENSIONS:
        raise ConfigError(
            f"unknown dimension {name!r} — use one of {', '.join(sorted(DIMENSIONS))}"
        )
    return DIMENSIONS[key]
