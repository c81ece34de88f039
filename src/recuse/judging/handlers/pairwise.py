"""Pairwise tasks (:class:`~recuse.judging.protocols.PairwiseProtocol`): a backend's
answer for one pair in one order into a :class:`~recuse.judging.store.Judgment`.

``direct`` mode scores Eq. 3 on the next-token distribution after the prompt's
pre-filled opener. ``explain`` mode generates the reply: a backend that continues a
prefix stops at the opener and scores the verdict there; one that cannot reads the
whole reply (its log-probs after the opener, else the verdict as written). Labels
whose first tokens are shared are scored as whole continuations. Also here: the pairs
a run judges (:func:`pairs_to_judge`), what a judge template cannot judge
(:func:`check_template`), and a stored judgment reframed for another item's order
(:func:`copy_judgment`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from recuse.errors import ConfigError, InputError
from recuse.judging.backends.base import Backend, Failure, Generation, TopK
from recuse.judging.handlers.base import failed_judgment
from recuse.judging.protocols import (
    BRACKETS,
    SPELLING_OUTSIDE,
    Pair,
    PairwiseProtocol,
    Prompt,
    VerdictFormat,
    VerdictScore,
    bad_logprobs,
    committed,
    score_distribution,
    score_labels,
    split_at_verdict,
    to_ab,
    verdict_score,
)
from recuse.judging.store import Judgment
from recuse.judging.tasks import Task
from recuse.numbers import count, counted, decimal_beside, significant_beside


@dataclass(frozen=True)
class PairwiseHandler:
    """Reads each task's verdict from ``backend`` under ``protocol``; rows are written
    for judge id ``judge``."""

    backend: Backend
    judge: str
    protocol: PairwiseProtocol

    def fail(self, task: Task, reason: str) -> Judgment:
        return failed_judgment(task, self.judge, reason)

    def _judgment(
        self,
        t: Task,
        s: VerdictScore,
        *,
        label: str | None,
        text: str | None,
        fmt: VerdictFormat = BRACKETS,
        reason: str | None = None,
    ) -> Judgment:
        assert t.order is not None
        value = to_ab(s.p_slot_a, t.order) if s.status == "ok" else math.nan
        return Judgment(
            key=t.key,
            kind="pairwise",
            judge=self.judge,
            item_id=t.item_id,
            slot=t.slot,
            status=s.status,
            value=value,
            p_slot_a=s.p_slot_a,
            mass=s.mass,
            p_tie=s.p_tie,
            label=label,
            text=text,
            reason=reason
            if reason is not None or s.status == "ok"
            else f"no verdict {fmt.describe} in the output"
            if text is not None
            else f"no probability on A or B after {fmt.opener or 'the prompt'}",
        )

    async def run(self, batch: Sequence[Task]) -> list[Judgment]:
        """The verdict of each task, read as :class:`PairwiseProtocol` says (module
        docstring)."""
        protocol = self.protocol
        fmt = protocol.reads
        if protocol.mode == "direct":
            if not self.backend.supports_prefix:
                raise InputError(
                    f"the backend for {self.backend.model_id} cannot continue a pre-filled answer",
                    fix="use --mode explain, or the completions endpoint",
                )
            prompts = [t.prompt for t in batch]
            return await self._score_at(batch, prompts, [None] * len(batch), protocol, fmt)
        prefix_ok = self.backend.supports_prefix
        if prefix_ok and fmt is not BRACKETS and protocol.template is None:
            raise InputError(
                f"verdict format {fmt.name} is for recorded outputs; live judges use [[A]]/[[B]]",
                fix="judge with the default protocol, or replay the recorded file",
            )
        # a backend that continues a prefix stops where the verdict label comes (the
        # first mark) and scores it there; one that cannot reads the whole reply (and
        # its log-probs)
        if prefix_ok:
            stop = [fmt.opener] if fmt.opener else []
        else:
            # recuse's prompt stops after its first mark; a template's whole reply is
            # read by its tool's rule (FastChat's first-found label, Arena-Hard's one
            # distinct label ...)
            stop = ["]]"] if protocol.template is None else []
        # a reply read whole has its verdict read from the log-probs after the opener:
        # a backend that can gives exactly the verdict tokens' there (vLLM's chat route)
        reads_logprobs = not prefix_ok and protocol.top_k > 0 and not fmt.first_token_ambiguous
        gens = await self.backend.generate(
            [t.prompt for t in batch],
            max_new_tokens=protocol.max_new_tokens,
            stop=stop,
            top_k=0 if prefix_ok else protocol.top_k,
            select=fmt.selector() if reads_logprobs else None,
        )
        out: dict[int, Judgment] = {}
        follow: list[tuple[int, Prompt, str]] = []
        for i, (t, g) in enumerate(zip(batch, gens, strict=True)):
            if isinstance(g, Failure):
                out[i] = failed_judgment(t, self.judge, g.reason)
                continue
            if not prefix_ok:  # the whole reply is here: parse it (and its log-probs)
                bad = next(filter(None, map(bad_logprobs, g.dists)), None)
                if bad is not None:
                    out[i] = failed_judgment(t, self.judge, bad)
                    continue
                score, label, why = read_generated(g, fmt, parsed=protocol.template is not None)
                out[i] = self._judgment(t, score, label=label, text=g.text, fmt=fmt, reason=why)
                continue
            if not fmt.opener:  # the reply is the label itself: read it as written
                verdict, label = fmt.read(g.text)
                score = verdict_score(verdict)
                out[i] = self._judgment(t, score, label=label, text=g.text, fmt=fmt)
                continue
            cut = split_at_verdict(g.text, fmt.opener)
            if cut is None:
                out[i] = self._judgment(t, verdict_score(None), label=None, text=g.text, fmt=fmt)
            else:
                follow.append((i, t.prompt.extend(cut), g.text))
        if follow:
            scored = await self._score_at(
                [batch[i] for i, _, _ in follow],
                [p for _, p, _ in follow],
                [text for _, _, text in follow],
                protocol,
                fmt,
            )
            for (i, _, _), j in zip(follow, scored, strict=True):
                out[i] = j
        return [out[i] for i in range(len(batch))]

    async def _score_at(
        self,
        tasks: Sequence[Task],
        prompts: Sequence[Prompt],
        texts: Sequence[str | None],
        protocol: PairwiseProtocol,
        fmt: VerdictFormat,
    ) -> list[Judgment]:
        """Eq. 3 right after each prompt's prefix, where the verdict label comes: from
        the next-token distribution or, when one first token can commit to two
        verdicts, from each label's whole text scored as a continuation."""
        if not fmt.first_token_ambiguous:
            select = fmt.selector()
            dists = await self.backend.next_token_logprobs(
                prompts, top_k=protocol.top_k, select=select
            )
            return [
                self._scored(t, d, text=x, fmt=fmt)
                for t, d, x in zip(tasks, dists, texts, strict=True)
            ]
        if self.backend.continuation_refusal:
            raise ConfigError(
                f"the labels of {fmt.name} ({fmt.describe}) share their first token, so "
                "each label's whole text is scored, which this backend cannot do: "
                + self.backend.continuation_refusal
            )
        labels = [label + fmt.closer for label, _ in fmt.labels]
        results = await self.backend.label_logprobs(
            [p for p in prompts for _ in labels], [c for _ in prompts for c in labels]
        )
        out = []
        for k, (t, x) in enumerate(zip(tasks, texts, strict=True)):
            mine = results[k * len(labels) : (k + 1) * len(labels)]
            failure = next((r for r in mine if isinstance(r, Failure)), None)
            if failure is not None:
                out.append(failed_judgment(t, self.judge, failure.reason))
                continue
            arrays = [np.asarray(r, dtype=np.float64) for r in mine]
            if any(len(a) == 0 or not np.isfinite(a).all() or (a > 1e-6).any() for a in arrays):
                out.append(failed_judgment(t, self.judge, "log-probs are not finite and <= 0"))
                continue
            logps = [float(a.sum()) for a in arrays]
            score = score_labels(logps, [meaning for _, meaning in fmt.labels])
            out.append(self._judgment(t, score, label=None, text=x, fmt=fmt))
        return out

    def _scored(
        self,
        t: Task,
        d: dict[str, float] | Failure,
        *,
        text: str | None,
        fmt: VerdictFormat = BRACKETS,
    ) -> Judgment:
        """Eq. 3 on the verdict token's log-probs, or a failed row saying why not."""
        if isinstance(d, Failure):
            return failed_judgment(t, self.judge, d.reason)
        bad = bad_logprobs(d)
        if bad is not None:
            return failed_judgment(t, self.judge, bad)
        score = score_distribution(d, fmt=fmt)
        reason = outside_topk(d, fmt)
        if reason is not None:  # its log-prob is unknown, not zero: Eq. 3 cannot be read
            score = VerdictScore(math.nan, score.mass, score.p_tie, "unparsed")
            return self._judgment(t, score, label=None, text=text, fmt=fmt, reason=reason)
        score, reason = bounded(d, fmt, score)
        return self._judgment(t, score, label=None, text=text, fmt=fmt, reason=reason)


def outside_topk(d: dict[str, float], fmt: VerdictFormat) -> str | None:
    """Why Eq. 3 cannot be read from a server's top-k (:class:`TopK`) that holds no
    token for A or for B (that label's log-prob is unknown, not zero); None when it
    can (both present, or the distribution is not cut to a top-k)."""
    if not isinstance(d, TopK):
        return None
    found = {v for tok in d for v in committed(tok, fmt)}
    absent = [v for v in ("A", "B") if v not in found]
    if not absent:
        return None
    return (
        f"verdict token outside top-k: no log-prob for {' or '.join(absent)} "
        f"among the server's top {len(d)}"
    )


#: the width of p_a's interval (:func:`bounded`) under which a top-k missing a twin is
#: read as exact: it moves p_a by less than half its third decimal, as recuse prints it
NEGLIGIBLE_WIDTH = 0.0005
#: per verdict format, each token text's twins (:func:`twins`), worked out once
_TWINS: dict[VerdictFormat, dict[str, tuple[str, ...]]] = {}


def twins(token: str, fmt: VerdictFormat) -> tuple[str, ...]:
    """The spellings of the other verdict in the form of ``token``, a token that
    commits to A alone or to B alone: its label swapped for each label of the other
    verdict, its leading whitespace and the closer it holds kept (``" A]"`` -> ``" B]"``;
    exact tokens: the other verdict's labels). Empty for a token that commits to
    neither, to C, or to a label's beginning only. A tokenizer that holds one holds the
    other (the labels are letters of the same kind), so a top-k listing one and not
    the other leaves the other's probability unknown, not zero.

    >>> twins(" A]", BRACKETS), twins("B", BRACKETS), twins("C", BRACKETS), twins("x", BRACKETS)
    ((' B]',), ('A',), (), ())
    """
    seen = _TWINS.setdefault(fmt, {})
    found = seen.get(token)
    if found is None:
        found = seen[token] = _twins(token, fmt)
    return found


def _twins(token: str, fmt: VerdictFormat) -> tuple[str, ...]:
    """:func:`twins`, worked out."""
    verdicts = committed(token, fmt)
    if verdicts not in (("A",), ("B",)):
        return ()
    mine, other = verdicts[0], "B" if verdicts[0] == "A" else "A"
    theirs = [label for label, meaning in fmt.labels if meaning == other]
    if fmt.tokens == "exact":
        out = theirs
    else:
        body = token.lstrip()
        space = token[: len(token) - len(body)]
        out = [
            space + twin + body[len(label) :]
            for label, meaning in fmt.labels
            if meaning == mine and body.startswith(label)
            for twin in theirs
        ]
    return tuple(t for t in dict.fromkeys(out) if committed(t, fmt) == (other,))


def bounded(
    d: dict[str, float], fmt: VerdictFormat, score: VerdictScore
) -> tuple[VerdictScore, str | None]:
    """``score`` (Eq. 3 on a server's top-k, :class:`TopK`, that holds A and B) and
    None where every listed spelling of A or B has its twin (:func:`twins`) listed too,
    the usual answer: as read. Where a twin is absent (``" A"`` listed, ``" B"`` not),
    its probability is unknown: at most ``m``, the smallest probability listed (the
    top-k holds the most likely tokens), and at most ``r = 1 - sum(listed)`` with the
    other absent ones. With ``p_A``, ``p_B`` the listed sums and ``n_A``, ``n_B`` the
    absent twins of A and of B::

        u_v = min(n_v * m, r);  p_a in [p_A / (p_A + p_B + u_B), (p_A + u_A) / (p_A + u_A + p_B)]

    An interval narrower than :data:`NEGLIGIBLE_WIDTH` is no interval: as read, None
    (the listed tokens leave nothing of 1 but rounding, or the smallest listed is
    tiny: p_a moves by less than its third decimal). Where the interval holds 0.5 on
    both sides, which answer the judge prefers cannot be read: the row is unparsed.
    Otherwise ``p_a`` stays as read (the absent twins at 0: the interval's end where
    only one verdict's twins are absent, inside it where both's are) and the reason,
    stored beside it, says the interval, so a firm-looking p_a never hides it
    (``recuse judge`` counts these rows: :func:`spelling_line`).

    >>> top = TopK({"A": math.log(0.3), "B": math.log(0.35), " A": math.log(0.1)})
    >>> s, why = bounded(top, BRACKETS, score_distribution(top))
    >>> s.status, why[why.index("between") : why.index(":", why.index("between"))]
    ('unparsed', 'between 0.471 and 0.533, on both sides of 0.5')
    """
    if not isinstance(d, TopK) or score.status != "ok":
        return score, None
    absent: dict[str, list[str]] = {"A": [], "B": []}
    for token in d:
        for twin in twins(token, fmt):
            if twin not in d:
                absent[committed(twin, fmt)[0]].append(twin)
    if not absent["A"] and not absent["B"]:
        return score, None
    probs = [math.exp(lp) for lp in d.values()]
    least, rest = min(probs), max(0.0, 1.0 - math.fsum(probs))
    p_a, p_b = score.p_slot_a * score.mass, score.mass * (1.0 - score.p_slot_a)
    u_a = min(len(set(absent["A"])) * least, rest)
    u_b = min(len(set(absent["B"])) * least, rest)
    low, high = p_a / (p_a + p_b + u_b), (p_a + u_a) / (p_a + u_a + p_b)
    if high - low < NEGLIGIBLE_WIDTH:  # the listed tokens hold (almost) all of it
        return score, None
    absent_names = list(dict.fromkeys(absent["A"] + absent["B"]))
    names = ", ".join(repr(t) for t in absent_names)
    one = len(absent_names) == 1
    its, twin_is = ("its", "twin is") if one else ("their", "twins are")
    unknown = (
        "probability is unknown (at most" if one else "probabilities are unknown (each at most"
    )
    said = (
        f"{SPELLING_OUTSIDE}: {names} not among the server's top {len(d)} while {its} "
        f"{twin_is}, so {its} {unknown} {least:.2g}, the smallest listed): "
        f"p_a lies between {decimal_beside(low, [0.5], 3)} and {decimal_beside(high, [0.5], 3)}"
    )
    if low < 0.5 < high:
        unread = VerdictScore(math.nan, score.mass, score.p_tie, "unparsed")
        why = f"{said}, on both sides of 0.5: which answer the judge prefers cannot be read"
        return unread, why
    them = "it" if one else "them"
    return score, f"{said}; read with {them} at 0: {decimal_beside(score.p_slot_a, [0.5], 3)}"


def spelling_line(reasons: Sequence[str | None]) -> str | None:
    """How many ok verdicts were read from a top-k that lists a spelling of A or B
    without its twin (their reason begins :data:`SPELLING_OUTSIDE`, :func:`bounded`),
    for the user; None where none was.

    >>> said = spelling_line([None, SPELLING_OUTSIDE + ": ...", None])
    >>> said[said.index(":") + 2 : said.index(";")]
    '1 of 3 verdicts'
    """
    n = sum(1 for r in reasons if r is not None and r.startswith(SPELLING_OUTSIDE))
    if not n:
        return None
    return (
        "verdicts read from a server's top-k that lists a spelling of A or B without its "
        f"twin (' A' without ' B'): {count(n)} of {counted(len(reasons), 'verdict')}; the "
        "absent twin's probability is unknown and read as 0, so their p_a are not exact: "
        "each lies in an interval, at its end where only one verdict's spelling lacks its "
        "twin (the interval is in the verdict's stored reason; one whose interval holds "
        "0.5 is unparsed instead, one narrower than "
        f"{NEGLIGIBLE_WIDTH} is read as exact)"
    )


#: p(A) + p(B) under which a verdict's p_a is counted as read from a small share of what
#: the judge would write at the verdict token (:func:`mass_line`)
LOW_MASS = 0.1


def mass_line(masses: Sequence[float], *, low: float = LOW_MASS) -> str | None:
    """What the judge's verdict mass was, for the user: the median of ``masses`` (each
    verdict's p(A) + p(B), the share of its next-token probability on A or B; 1 = all
    of it) and how many lie below ``low``. Eq. 3 normalises over A and B only, so a
    verdict whose mass is 0.001 reads as firm a p_a as one whose mass is 1: said with
    the count. None where no verdict was read from probabilities.

    A median that two decimals would write as 0.00 (a judge with almost nothing on A
    or B, not none) is written with two significant digits.

    >>> said = mass_line([0.9, 0.5, 0.02])
    >>> said[said.index("median") : said.index(" whose")], mass_line([math.nan])
    ('median 0.50 over 3 verdicts; 1 below 0.1,', None)
    >>> tiny = mass_line([3.5e-10, 8.7e-06, 0.2])
    >>> tiny[tiny.index("median") : tiny.index(" over")]
    'median 8.7e-06'
    """
    finite = np.asarray([m for m in masses if math.isfinite(m)], dtype=np.float64)
    if not len(finite):
        return None
    n_low = int((finite < low).sum())
    median = float(np.median(finite))
    shown = decimal_beside(median, [low], 2)
    if median > 0 and float(shown) == 0:  # '0.00' would read as no probability at all
        shown = significant_beside(median, low, 2)
    said = (
        "verdict mass p(A) + p(B) (the share of the judge's probability on A or B at "
        f"the verdict; 1 = all of it): median {shown} over {len(finite):,} verdicts"
    )
    if n_low:
        said += (
            f"; {n_low:,} below {low}, whose p_a is A's share of that small part of it "
            "(the export's mass_first, mass_second)"
        )
    return said


def verdict_lines(ok: Sequence[tuple[float | None, str | None]]) -> list[str]:
    """What a run's ok pairwise verdicts (:meth:`recuse.judging.Store.ok_verdicts`: mass
    and reason of each) say for the user, read once for both: :func:`mass_line` and
    :func:`spelling_line`, those that have something to say."""
    masses = [m for m, _ in ok if m is not None]
    lines = (mass_line(masses), spelling_line([why for _, why in ok]))
    return [line for line in lines if line]


def read_generated(
    g: Generation, fmt: VerdictFormat = BRACKETS, *, parsed: bool = False
) -> tuple[VerdictScore, str | None, str | None]:
    """Verdict from a whole reply: Eq. 3 from the log-probs of the token right after
    the ``fmt.opener`` (``[[``; the first token when the opener is empty) of the mark
    the format reads (:meth:`VerdictFormat.locate`: the last ``[[B]]`` of ``[[A]] or
    [[B]] ... [[B]]``; the first opener where no mark is read) when the backend
    returned them (its top-k, or exactly the verdict tokens' where it could: vLLM's
    ``logprob_token_ids``), else the verdict parsed in ``fmt`` (0 / 0.5 / 1). The
    label is the verdict mark as written (``"A"``, ``"A>>B"``, ``"m"`` ...).

    ``parsed`` (judge templates): a reply its tool's rule reads no verdict from is
    unparsed, whatever its log-probs (a reply that is one token, read from its
    log-probs as AlpacaEval reads it, has no opener and is exempt).

    A server's top-k (:class:`TopK`) at the verdict position that holds no token for A
    or for B makes the row unparsed ("verdict token outside top-k", as on the
    completions route): the missing label's log-prob is unknown, so Eq. 3 cannot be
    read, and the text verdict is not put in its place. The third item is that
    reason (None otherwise)."""
    verdict, label, start = fmt.locate(g.text)
    if parsed and verdict is None and fmt.opener:
        return verdict_score(None), label, None
    if g.dists and len(g.dists) == len(g.tokens) and not fmt.first_token_ambiguous:
        # the opener of the mark the format reads (its nth), not the first one: an
        # explanation may write other marks before the verdict ('[[A]] or [[B]]')
        read = g.text.upper() if fmt.casefold else g.text
        nth = 1 if start is None else max(1, _openers(read, fmt.opener, upto=start))
        at = _after_opener(g.tokens, fmt.opener, nth=nth)
        if at is not None and at < len(g.dists):
            d = g.dists[at]
            score = score_distribution(d, fmt=fmt)
            why = outside_topk(d, fmt)
            if why is not None:
                return VerdictScore(math.nan, score.mass, score.p_tie, "unparsed"), label, why
            if score.status == "ok":
                score, why = bounded(d, fmt, score)
                return score, label, why
    return verdict_score(verdict), label, None


def _openers(text: str, opener: str, *, upto: int) -> int:
    """How many ``opener`` start in ``text`` at ``upto`` or before, overlapping ones
    counted (``[[[`` holds two ``[[``, at 0 and 1: a mark ``[[A]]`` after a stray
    ``[`` is the second); 0 where ``opener`` is empty."""
    n, i = 0, text.find(opener) if opener else -1
    while 0 <= i <= upto:
        n, i = n + 1, text.find(opener, i + 1)
    return n


def _after_opener(tokens: Sequence[str], opener: str, *, nth: int = 1) -> int | None:
    """Index of the token right after the ``nth`` ``opener`` of the tokens' text
    (overlapping ones counted, as :func:`_openers`; 0 when it is empty); None where no
    token ends there (a token holding the opener and the label) or the text has fewer
    openers. ``[[A]]`` written ``[[``, ``[``, ``A``: its opener, the second, ends the
    token ``[``, so the verdict token is ``A`` (the first ends ``[[``, before a ``[``)."""
    if not opener:
        return 0
    seen, found = "", 0
    for j, tok in enumerate(tokens):
        at = max(0, len(seen) - len(opener) + 1)  # an opener may start in earlier tokens
        seen += tok
        i = seen.find(opener, at)
        while i >= 0:
            found += 1
            if found == nth:
                return j + 1 if i + len(opener) == len(seen) else None
            i = seen.find(opener, i + 1)
    return None


def check_template(protocol: PairwiseProtocol, items: Sequence[Pair], backend: Backend) -> None:
    """Refuse, before anything is stored, what a template cannot judge: direct mode
    without an answer prefix, pairs without the reference answer it shows, labels that
    need whole-label scores from a backend that cannot give them."""
    template = protocol.template
    if template is None or protocol.question != "quality":
        return
    fmt = template.verdict
    scored = protocol.mode == "direct" or backend.supports_prefix
    if fmt.first_token_ambiguous and scored and backend.continuation_refusal:
        raise ConfigError(
            f"the labels of judge template {template.name!r} ({fmt.describe}) share their "
            "first token, so each label's whole text is scored, which this backend cannot "
            "do — over a server use the completions endpoint with --logprobs-mode, or "
            "--endpoint chat --mode explain (the verdict read from the reply)"
        )
    if protocol.mode == "direct" and template.answer_prefix is None:
        raise ConfigError(
            f"judge template {template.name!r} has no answer prefix to score its verdict "
            "at (its reply is a structure, not a label) — use --mode explain"
        )
    if template.needs_reference:
        bad = [i for i, p in enumerate(items, start=1) if p.reference is None]
        if bad:
            raise InputError(
                f"judge template {template.name!r} shows a reference answer and this pair "
                f"has none ({len(bad)} pair(s) without one)",
                row=bad[0],
                column="reference",
                fix="give every pair a reference answer as text (column reference)",
            )


def read_whole(rows: Sequence[Judgment], protocol: PairwiseProtocol) -> list[Judgment]:
    """The ``rows`` of an explain-mode ``protocol`` that a backend continuing a prefix
    (recuse's ChatML over /v1/completions, a local model) never writes: such a backend
    stops its reply at the format's opener (``[[``) and scores the verdict token there,
    so its row's text ends with the opener and it has no label; a reply read whole
    (``--endpoint chat``) holds the verdict mark (``Fine. [[A]]``) and its label. A store
    judged over the chat endpoint before the endpoint entered the content keys
    (recuse before 0e83ab82) holds such rows under the completions keys. Rows of a
    reply with no mark (unparsed) cannot be told apart, nor rows of a format without an
    opener (the reply is the label either way): none are listed.

    >>> from recuse.judging.protocols import PairwiseProtocol
    >>> chat = Judgment("k", "pairwise", "j", "i", "first", "ok", label="A", text="Fine. [[A]]")
    >>> ours = Judgment("k", "pairwise", "j", "i", "first", "ok", text="Fine. [[")
    >>> [j.text for j in read_whole([chat, ours], PairwiseProtocol(mode="explain"))]
    ['Fine. [[A]]']
    """
    opener = protocol.reads.opener
    if protocol.mode != "explain" or not opener:
        return []
    return [
        j
        for j in rows
        if j.kind == "pairwise"
        and j.label is not None
        and j.text is not None
        and not j.text.endswith(opener)
    ]


def copy_judgment(src: Judgment, t: Task, judge: str) -> Judgment:
    """A stored judgment reused for task ``t`` with the same content key.

    Equal keys mean equal rendered prompts, but not equal a/b frames: item X =
    (q, r1, r2) shown first and item Y = (q, r2, r1) shown second render the same
    prompt. What the judge said is stored in the slot frame (``p_slot_a``), so the
    a/b value is recomputed for ``t``'s order instead of copied.
    """
    value = src.value
    if t.order is not None and src.status == "ok":
        value = to_ab(src.p_slot_a, t.order)
    return replace(src, judge=judge, item_id=t.item_id, slot=t.slot, value=value)


_META_COLUMNS = (
    "prompt_id", "model_a", "model_b", "human", "source", "task", "category",
    "base_item", "probe", "treated",  # probe tables (recuse.probes)
)  # fmt: skip


def pairs_to_judge(
    pairs: Iterable[Pair] | pd.DataFrame,
) -> tuple[list[Pair], dict[str, dict[str, object]]]:
    """Pairs to judge and what export needs to rebuild the ``pairs`` table."""
    if isinstance(pairs, pd.DataFrame):
        need = ["item_id", "prompt", "response_a", "response_b"]
        missing = [c for c in need if c not in pairs.columns]
        if missing:
            raise InputError(
                f"missing column(s) {', '.join(missing)}",
                fix="judging needs the texts: columns item_id, prompt, response_a, response_b",
            )
        df = pairs.drop_duplicates("item_id", keep="first")
        items, meta = [], {}
        for i, r in enumerate(df.to_dict("records"), start=1):
            for c in need[1:]:
                if not isinstance(r[c], str):
                    raise InputError(
                        f"{c} is not text",
                        row=i,
                        column=c,
                        fix="give the prompt and both responses as text",
                    )
            item_id = str(r["item_id"])
            ref = r.get("reference")
            if ref is not None and not isinstance(ref, str):
                if not _isna(ref):
                    raise InputError(
                        "reference is not text",
                        row=i,
                        column="reference",
                        fix="give the reference answer as text",
                    )
                ref = None
            items.append(Pair(item_id, r["prompt"], r["response_a"], r["response_b"], ref))
            m = {c: r[c] for c in _META_COLUMNS if c in r and not _isna(r[c])}
            m.update(prompt=r["prompt"], response_a=r["response_a"], response_b=r["response_b"])
            meta[item_id] = m
        return items, meta
    items = list(pairs)
    meta = {
        p.item_id: {"prompt": p.prompt, "response_a": p.response_a, "response_b": p.response_b}
        for p in items
    }
    return items, meta


def _isna(v: object) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))
