"""Verdict formats and the parsing of judge replies: a leaf module (no ``recuse``
imports but :mod:`recuse.errors`), shared by the judges
(:mod:`recuse.judging.protocols`, which re-exports it, and the HTTP backend) and the
readers of recorded replies (:mod:`recuse.data.recorded`), so the data layer reads
recorded verdicts without importing the judging backends or protocols.

Slot A is the response shown first; ``order == "first"`` shows answer a in slot A.
A reply that breaks its format reads as ``None`` (unparsed), never a default.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

__all__ = [
    "ALPACA_FN_RANKING",
    "ALPACA_RANKING",
    "ALPACA_TOKENS",
    "ARENA_HARD",
    "BRACKETS",
    "LLMBAR",
    "ORDERS",
    "VERDICTS",
    "VERDICT_FORMATS",
    "Order",
    "Pick",
    "VerdictFormat",
    "labels_format",
    "parse_verdict",
    "token_logprobs",
    "verdict_format",
]

Order = Literal["first", "second"]
ORDERS: tuple[Order, Order] = ("first", "second")
VERDICTS = ("A", "B", "C")


# --- verdict formats ----------------------------------------------------------------

Pick = Literal["last", "priority", "unique"]


@dataclass(frozen=True)
class VerdictFormat:
    """How a judge states its pairwise verdict, in the slot frame (A = shown first).

    ``pattern`` finds verdict marks in the text; group 1 is the mark's label and
    ``labels`` maps each label to ``"A"``, ``"B"`` or ``"C"`` (tie). Which mark
    counts is ``pick``:

    * ``"last"``: the last mark in the text;
    * ``"priority"``: the first label, in ``labels`` order, found anywhere;
    * ``"unique"``: the only label found; two different labels (even with the same
      meaning) make the text unparsed.

    A label outside ``labels`` also makes it unparsed. ``opener`` is the text right
    before the verdict token, where log-probs are read (Eq. 3); ``""`` means the
    verdict is the first generated token. ``tokens`` says which first tokens commit
    to a verdict: ``"prefix"`` when the token, leading whitespace removed, starts
    ``label + closer`` (so ``" A"`` and ``"A]]"`` commit to A after ``[[``);
    ``"exact"`` when the token equals the label.

    ``fallback`` patterns are tried in turn when ``pattern`` finds nothing, and
    ``casefold`` upper-cases the text before any pattern is tried (Arena-Hard-Auto
    v2's reading).
    """

    name: str
    pattern: re.Pattern[str]
    labels: tuple[tuple[str, str], ...]
    pick: Pick = "last"
    opener: str = ""
    closer: str = ""
    tokens: Literal["prefix", "exact"] = "prefix"
    describe: str = ""
    fallback: tuple[re.Pattern[str], ...] = ()
    casefold: bool = False

    def read(self, text: str) -> tuple[str | None, str | None]:
        """``(verdict, label)`` from ``text``; ``(None, None)`` when it breaks the format."""
        verdict, label, _ = self.locate(text)
        return verdict, label

    def locate(self, text: str) -> tuple[str | None, str | None, int | None]:
        """:meth:`read`, and where in ``text`` the mark it reads starts (the ``pick``:
        the last mark, the first of the label that wins, the first of the one label),
        in ``text`` as read (upper-cased where ``casefold``); ``(None, None, None)``
        when it breaks the format. A reply's verdict log-probs
        are read at that mark's opener (an explanation may write other marks first)."""
        if self.casefold:
            text = text.upper()
        found: list[tuple[str, int]] = []
        for pattern in (self.pattern, *self.fallback):
            found = [(m.group(1), m.start()) for m in pattern.finditer(text)]
            found = [f for f in found if f[0] != ""]
            if found:
                break
        meaning = dict(self.labels)
        if not found:
            return None, None, None
        labels = [f[0] for f in found]
        label: str | None
        if self.pick == "last":
            label = labels[-1]
        elif self.pick == "priority":
            label = next((lab for lab, _ in self.labels if lab in labels), None)
        else:
            label = labels[0] if len(set(labels)) == 1 else None
        if label is None or label not in meaning:
            return None, None, None
        at = len(found) - 1 if self.pick == "last" else labels.index(label)
        return meaning[label], label, found[at][1]

    def commits(self, token: str, verdict: str) -> bool:
        """Does a first token after ``opener`` commit to ``verdict`` (A, B or C)?"""
        for label, meaning in self.labels:
            if meaning != verdict:
                continue
            if self.tokens == "exact":
                if token == label:
                    return True
            else:
                text = token.lstrip()
                if text and (label + self.closer).startswith(text):
                    return True
        return False

    def is_verdict_token(self, token: str) -> bool:
        """Does ``token`` commit to any verdict? (a backend's selection predicate)"""
        return any(self.commits(token, v) for v in VERDICTS)

    def candidate_tokens(self) -> tuple[str, ...]:
        """Token texts that may commit to a verdict, for a server that scores exactly
        the tokens it is given (vLLM ``logprob_token_ids``): each label (and, unless
        tokens are exact, each prefix of label + closer, bare and after a space)."""
        out: list[str] = []
        for label, _ in self.labels:
            if self.tokens == "exact":
                texts = [label]
            else:
                full = label + self.closer
                texts = [full[:n] for n in range(1, len(full) + 1)]
                texts += [" " + t for t in texts]
            out += [t for t in texts if t not in out and self.is_verdict_token(t)]
        return tuple(out)

    def selector(self) -> VerdictTokens:
        """:meth:`is_verdict_token` as a backend's ``select``, carrying
        :meth:`candidate_tokens` for backends that ask a server for exact ids.

        Made once per format and shared (it is frozen): a judge asks for it on every
        call, and making it tests each candidate against every label (56 µs, a quarter
        of the client's own CPU per request over HTTP, benchmarks/judge_http.py)."""
        return self._selector

    @functools.cached_property
    def _selector(self) -> VerdictTokens:
        texts = self.candidate_tokens()
        needed = tuple(tuple(t for t in texts if self.commits(t, v)) for v in ("A", "B"))
        return VerdictTokens(self.is_verdict_token, texts, needed, self.opener)

    @property
    def first_token_ambiguous(self) -> bool:
        """Can one first token commit to two different verdicts? Then Eq. 3 cannot be
        read from the next-token distribution (Arena-Hard's ``A>B`` and ``A=B`` both
        start with ``A``) and each label's whole text is scored instead."""
        if self.tokens == "exact":
            return False
        firsts: dict[str, str] = {}
        for label, meaning in self.labels:
            head = (label + self.closer).lstrip()[:1]
            if firsts.setdefault(head, meaning) != meaning:
                return True
        return False

    def spec(self) -> dict[str, object]:
        """Everything that decides how a reply is read (for content hashes)."""
        return {
            "pattern": self.pattern.pattern,
            "fallback": [p.pattern for p in self.fallback],
            "flags": [self.pattern.flags, *(p.flags for p in self.fallback)],
            "labels": [list(pair) for pair in self.labels],
            "pick": self.pick,
            "opener": self.opener,
            "closer": self.closer,
            "tokens": self.tokens,
            "casefold": self.casefold,
        }


@dataclass(frozen=True)
class VerdictTokens:
    """A token predicate (``select``) with the verdict token texts it accepts listed."""

    predicate: Callable[[str], bool]
    candidates: tuple[str, ...]
    #: per verdict Eq. 3 needs (A, B): the candidates that commit to it
    needed: tuple[tuple[str, ...], ...] = ()
    #: the text right before the verdict token (``[[``): a server's tokenizer is asked
    #: for each candidate's id after it, where the verdict token comes
    opener: str = ""

    def __call__(self, token: str) -> bool:
        return self.predicate(token)


def labels_format(
    name: str,
    labels: Sequence[tuple[str, str]],
    *,
    pick: Pick = "last",
    opener: str | None = None,
    closer: str | None = None,
) -> VerdictFormat:
    """A verdict format for marks written out in full, e.g. ``[[A]]``, ``[[B]]``,
    ``[[C]]`` meaning A, B and C (tie).

    The marks' common beginning is the ``opener`` (``[[``), their common end the
    ``closer`` (``]]``), and what lies between is each mark's label (``A``); either
    may be given instead. The pattern finds the marks exactly as written; a label
    that starts or ends with a letter or digit must not touch another one where
    the opener or closer is empty (``A`` is not read inside ``All``).
    """
    marks = [m for m, _ in labels]
    if opener is None:
        opener = _common(marks, len(min(marks, key=len)) - 1)
    if closer is None:
        rest = [m[len(opener) :] for m in marks]
        closer = _common([r[::-1] for r in rest], len(min(rest, key=len)) - 1)[::-1]
    mids: list[tuple[str, str]] = []
    for mark, meaning in labels:
        if not (mark.startswith(opener) and mark.endswith(closer)):
            raise ValueError(f"label {mark!r} does not start {opener!r} and end {closer!r}")
        mids.append((mark[len(opener) : len(mark) - len(closer)], meaning))
    alternatives = "|".join(re.escape(m) for m, _ in sorted(mids, key=lambda x: -len(x[0])))
    head = re.escape(opener) if opener else r"(?<![^\W_])"
    tail = re.escape(closer) if closer else r"(?![^\W_])"
    return VerdictFormat(
        name=name,
        pattern=re.compile(f"{head}({alternatives}){tail}"),
        labels=tuple(mids),
        pick=pick,
        opener=opener,
        closer=closer,
        describe="/".join(marks),
    )


def _common(texts: Sequence[str], most: int) -> str:
    """The longest common beginning of ``texts``, at most ``most`` characters."""
    n = 0
    while n < most and len({t[n] for t in texts}) == 1:
        n += 1
    return texts[0][:n]


BRACKETS = VerdictFormat(
    name="brackets",
    pattern=re.compile(r"\[\[\s*([ABC])\s*\]\]"),
    labels=(("A", "A"), ("B", "B"), ("C", "C")),
    pick="last",
    opener="[[",
    closer="]]",
    describe="[[A]]/[[B]]/[[C]]",
)
"""Our own protocol: the last ``[[A]]``, ``[[B]]`` or ``[[C]]``."""

LLMBAR = VerdictFormat(
    name="llmbar",
    pattern=re.compile(r"(?:^|\n) ?Output \((a|b)\)"),
    labels=(("a", "A"), ("b", "B")),
    pick="priority",
    describe="'Output (a)'/'Output (b)' at the start of a line",
)
"""LLMBar (Zeng et al. 2024) comparison prompts: ``Output (a)`` or ``Output (b)`` at
the start of the (stripped) reply or of a line, optionally after one space; when
both occur, ``Output (a)`` wins (upstream tests the two patterns in that order)."""

ARENA_HARD = VerdictFormat(
    name="arena-hard",
    pattern=re.compile(r"\[\[([AB<>=]+)\]\]"),
    labels=(("A>>B", "A"), ("A>B", "A"), ("A=B", "C"), ("B>A", "B"), ("B>>A", "B")),
    pick="unique",
    describe="one distinct [[A>>B]]/[[A>B]]/[[A=B]]/[[B>A]]/[[B>>A]]",
)
"""Arena-Hard judge prompt (used by JudgeBench): ``[[A>>B]]`` ... ``[[B>>A]]``; the
reply is unparsed unless exactly one distinct label appears (``[[A>>B]]`` and
``[[A>B]]`` together are unparsed); strength is kept in the label only."""


ALPACA_TOKENS = VerdictFormat(
    name="alpaca-tokens",
    pattern=re.compile(r"^\s*(m|M)\s*$"),
    labels=(("m", "A"), ("M", "B")),
    pick="unique",
    tokens="exact",
    describe="the single token 'm' or 'M'",
)
"""AlpacaEval 2 ``weighted_alpaca_eval_gpt4_turbo``: one token, ``m`` for the output
shown first, ``M`` for the second; Eq. 3 reads P(m) / (P(m) + P(M)) from its top
log-probs (exact, case-sensitive tokens)."""


def _fn_entry(model: str, rank: str) -> str:
    """One ``{"model": <model>, "rank": <rank>}`` of a function-call ranking (either
    quote; a rank written ``2`` or ``2.0``), as a regular expression."""
    q = "['\"]"
    return rf"\{{\s*{q}model{q}\s*:\s*{q}{model}{q}\s*,\s*{q}rank{q}\s*:\s*{rank}(?:\.0+)?\s*\}}"


def _ranking_of_two(model: str, *, mark: str, arguments: bool) -> re.Pattern[str]:
    """A reply that is a ranking of two entries and nothing else, as a regular
    expression: the list of ``{"model": <model>, "rank": <rank>}`` (``model``: the two
    names, no group), each model once, in either order, ranked 1 and 2 (distinct);
    group 1 (a look-ahead) is ``mark`` (one group) of the entry at rank 1.
    ``arguments``: the list may also come as a call's arguments
    ``{"ordered_models": [...]}`` (a reply opening with ``{`` closes with ``}``)."""
    wrapper = r"(?:\{\s*['\"]ordered_models['\"]\s*:\s*)?" if arguments else ""
    closer = r"(?:\s*\})?" if arguments else ""
    shape = r"(?=\s*\[[\s\S]*\]\s*\Z|\s*\{[\s\S]*\}\s*\Z)" if arguments else ""
    return re.compile(
        rf"\A(?=[\s\S]*?{_fn_entry(mark, '1')}){shape}"
        rf"\s*{wrapper}\[\s*"
        rf"{_fn_entry(f'(?P<first>{model})', '(?P<rank>[12])')}\s*,\s*"
        rf"{_fn_entry(f'(?!(?P=first)){model}', '(?!(?P=rank))[12]')}\s*\]{closer}\s*\Z"
    )


ALPACA_RANKING = VerdictFormat(
    name="alpaca-ranking",
    pattern=_ranking_of_two("model_[12]", mark="model_([12])", arguments=False),
    labels=(("1", "A"), ("2", "B")),
    pick="unique",
    describe="a ranking of model_1 and model_2, one at rank 1, the other at rank 2",
)
"""AlpacaEval 1 ``alpaca_eval_gpt4`` ranking replies
``[{'model': 'model_2', 'rank': 1}, {'model': 'model_1', 'rank': 2}]``: ``model_1`` is
the output shown first; the model at rank 1 wins. The reply must be that list and
nothing else (upstream's ``ranking_parser`` evaluates the whole reply as a Python
literal): the two entries ``model_1`` and ``model_2``, in either order, ranked 1 and 2
(``1.0`` and ``2.0`` too). Anything else is unparsed, never read by a mark inside it: a
rank 1.5 or 10, a tie, a third model, a model twice or missing, other keys, a truncated
list, prose around it. Upstream reads model_1's rank alone (a tie is a win for
model_1 there)."""


ALPACA_FN_RANKING = VerdictFormat(
    name="alpaca-fn-ranking",
    # group 1: the model at rank 1 (a look-ahead); then the whole reply must be the
    # two entries, m and M (either first), ranked 1 and 2 (distinct), bare or as the
    # call's arguments {"ordered_models": [...]} (a reply opening with { closes with })
    pattern=_ranking_of_two("[mM]", mark="(m|M)", arguments=True),
    labels=(("m", "A"), ("M", "B")),
    pick="unique",
    describe="a function-call ranking of m and M, one at rank 1, the other at rank 2",
)
"""AlpacaEval 2 ``alpaca_eval_gpt4_turbo_fn`` / ``alpaca_eval_cot_gpt4_turbo_fn``: the
``make_partial_leaderboard`` call's ``ordered_models``, written as JSON with sorted keys
(``[{"model": "M", "rank": 1}, {"model": "m", "rank": 2}]``); ``m`` names the output
shown first, ``M`` the second (case-sensitive). The reply must be that list, bare or
as the call's arguments ``{"ordered_models": [...]}``, and nothing else: the two
entries ``m`` and ``M``, in either order, ranked 1 and 2 (``1.0`` and ``2.0`` too);
the model at rank 1 wins. Anything else is unparsed, never read by a mark
inside it: a tie (both at rank 1), a rank outside 1 and 2 or written as text (``"1"``),
a third model, a model twice or missing, other keys, a nested or truncated list, prose
around it. Upstream's parser reads m's rank alone (a tie is a win for m there)."""

VERDICT_FORMATS: dict[str, VerdictFormat] = {
    f.name: f
    for f in (BRACKETS, LLMBAR, ARENA_HARD, ALPACA_RANKING, ALPACA_TOKENS, ALPACA_FN_RANKING)
}


def verdict_format(name: str) -> VerdictFormat:
    """Look up a verdict format by name (see :data:`VERDICT_FORMATS`)."""
    from recuse.errors import ConfigError

    if name not in VERDICT_FORMATS:
        raise ConfigError(
            f"unknown verdict format {name!r} — use one of {', '.join(VERDICT_FORMATS)}"
        )
    return VERDICT_FORMATS[name]


def parse_verdict(text: str, fmt: VerdictFormat = BRACKETS) -> str | None:
    """The verdict (A, B or C) ``text`` states in format ``fmt``, or None.

    With the default format: the last ``[[A]]``/``[[B]]``/``[[C]]``.
    """
    return fmt.read(text)[0]


# --- recorded log-probs -----------------------------------------------------------


def _merge(entries: Sequence[tuple[str, float]]) -> dict[str, float]:
    """``{token: log-prob}``, the log-probs of tokens listed twice (ids that decode
    alike) added in probability."""
    dist = dict(entries)
    if len(dist) == len(entries):  # no token twice (the usual answer): as listed
        return dist
    dist = {}
    for tok, lp in entries:
        dist[tok] = float(np.logaddexp(dist[tok], lp)) if tok in dist else float(lp)
    return dist


def token_logprobs(choice: dict[str, Any]) -> tuple[list[str], list[dict[str, float]]]:
    """Generated tokens and their top-k distributions, in either OpenAI format.

    Legacy completions: ``logprobs = {tokens: [...], top_logprobs: [{tok: lp}, ...]}``.
    Chat (and newer servers): ``logprobs = {content: [{token, logprob,
    top_logprobs: [{token, logprob}]}]}``. Anything else gives empty lists.
    """
    lp = choice.get("logprobs")
    if not isinstance(lp, dict):
        return [], []
    try:
        if isinstance(lp.get("content"), list):
            tokens = [str(e["token"]) for e in lp["content"]]
            dists = [
                _merge(
                    [(str(t["token"]), float(t["logprob"])) for t in e.get("top_logprobs") or []]
                )
                for e in lp["content"]
            ]
        elif isinstance(lp.get("top_logprobs"), list):
            tokens = [str(t) for t in lp.get("tokens") or []]
            dists = [_merge([(str(k), float(v)) for k, v in d.items()]) for d in lp["top_logprobs"]]
        else:
            return [], []
    except (KeyError, TypeError, ValueError, AttributeError):
        return [], []
    if any(not d for d in dists):
        return [], []
    return tokens, dists
