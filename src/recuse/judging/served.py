"""Which model a server's answers came from, and a judge's verdicts from a second one.

A hosted model's name is an alias: ``gpt-4o`` is answered by ``gpt-4o-2024-05-13`` one
month and by ``gpt-4o-2024-08-06`` the next, and every OpenAI-compatible answer names
the model that served it in its JSON ``"model"`` field (vLLM: its served model name).
The content key of a verdict holds the name asked for (and ``--revision``), not the one
that answered, so a store judged last month and resumed this month reuses last month's
verdicts and adds this month's: two models' verdicts under one judge id, averaged by
every analysis into one judge's numbers.

Each run records the served names its answers gave, with how many answers named each
(the runs table's ``served`` column, JSON ``{name: answers}``). One judge id's verdicts
come from one served model: a run whose answers name a model that no earlier run of the
judge recorded, nor of another judge id of the same model and revision (their verdicts
share content keys: a run copies them), or, in a run with nothing recorded before it, a
second name (the alias flipped mid-run), stops before a verdict served so is stored
(:func:`second_model`). Two runs at once each find nothing of the other as they begin:
each commit checks, in its transaction, the records of runs begun since, and the second
to commit stops with none of its answers stored (:func:`raced_model`).
Answers that name no model, and runs recorded before the column was, are not counted:
nothing says who served them.

Perplexities and rewrites have no run record; they are stored by content key under the
model id and revision, and reused by any later run of them. The names their answers gave
are recorded per kind, model id and revision (the store's ``served_models`` table:
:meth:`recuse.judging.store.Store.served_names`), in the transaction that stores them,
and :class:`Served` holds a run of them to one served model as the judgments' check
does: a name besides the recorded ones (with none of their kind recorded, those the
verdicts of the judge ids of that model id and revision were served as; with none of
those either, this run's first) stops
the run before a row served so is stored, and a commit that finds another run recorded
another name meanwhile stops too (its rows rolled back). Perplexities and rewrites
stored before the record are not checked: nothing says who served them.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from recuse.errors import JudgeError
from recuse.numbers import counted
from recuse.terminal import one_line

__all__ = [
    "EarlierRun",
    "Served",
    "answered_since",
    "new_names",
    "raced_model",
    "read_served",
    "second_model",
    "served_json",
    "served_words",
]


@dataclass(frozen=True)
class EarlierRun:
    """A run of a judge recorded in the store: its number among the store's runs (1
    the oldest), the verdicts it stored (ok or unparsed), ``{served name: answers}``
    its answers gave (empty: none recorded), its judge id, its run id (empty: none
    recorded) and its row in the runs table."""

    number: int
    judgments: int
    served: Mapping[str, int]
    judge: str = ""
    run: str = ""
    row: int = 0


def answered_since(before: Mapping[str, int], after: Mapping[str, int]) -> dict[str, int]:
    """The answers each served name gave between two readings of a backend's totals
    (:meth:`~recuse.judging.backends.base.Backend.served`), names with none left out,
    in ``after``'s order.

    >>> answered_since({"a": 2}, {"a": 5, "b": 1, "c": 0})
    {'a': 3, 'b': 1}
    """
    return {n: k - before.get(n, 0) for n, k in after.items() if k > before.get(n, 0)}


def served_json(served: Mapping[str, int]) -> str | None:
    """``served`` as the runs table's ``served`` column holds it (None where empty)."""
    return json.dumps(dict(served), ensure_ascii=False) if served else None


def read_served(text: object) -> dict[str, int]:
    """The runs table's ``served`` column read back (:func:`served_json`); a value that
    is not such a JSON object of counts (a hand-edited store) reads as none recorded.

    >>> read_served('{"gpt-4o-2024-05-13": 3}'), read_served(None), read_served("[1]")
    ({'gpt-4o-2024-05-13': 3}, {}, {})
    """
    if not isinstance(text, str):
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    if not isinstance(value, dict):
        return {}
    return {str(k): v for k, v in value.items() if type(v) is int and v >= 0 and str(k).strip()}


def served_words(served: Mapping[str, int]) -> str:
    """Served names with the answers that named each, as one line: ``'a' (3 answers),
    'b' (1 answer)``; ``""`` where none.

    >>> served_words({"gpt-4o-2024-08-06": 1, "x": 12})
    "'gpt-4o-2024-08-06' (1 answer), 'x' (12 answers)"
    """
    return ", ".join(
        f"{one_line(repr(name))} ({counted(n, 'answer')})" for name, n in served.items()
    )


def new_names(accepted: Sequence[str], now: Mapping[str, int]) -> list[str]:
    """The names of ``now`` (a run's served names so far) that make a judge's verdicts
    come from a second served model: those outside ``accepted`` (what the judge's
    verdicts were served as so far: its earlier runs', else this run's); with nothing
    accepted, every name of ``now`` where it holds more than one (the first kept).

    >>> new_names(["a"], {"a": 3, "b": 1}), new_names([], {"a": 3}), new_names([], {"a": 1, "b": 1})
    (['b'], [], ['b'])
    """
    if not accepted:
        return list(now)[1:]
    return [name for name in now if name not in accepted]


def second_model(
    store: str,
    judge: str,
    *,
    earlier: Sequence[EarlierRun],
    now: Mapping[str, int],
    stored: int,
    copied: int = 0,
    replicas: int = 1,
    computed: Mapping[str, Mapping[str, int]] | None = None,
) -> str:
    """The words of the error that stops a run of ``judge`` whose answers now name a
    served model besides the one its verdicts came from: which names, how many
    verdicts each earlier run stored (the runs that recorded names), what this run
    stored before (``stored`` verdicts it was served, ``copied`` more it copied from
    judge ids of its model and revision) and what to do; where the run asks
    ``replicas`` > 1 servers (``--base-url`` given more than once), what to do if they
    are replicas of one model that name it differently. ``now`` is this run's served
    names so far, in the order they were first seen. ``computed``: where no run recorded
    names, those the perplexities and rewrites of its model id and revision were
    recorded served as (by kind), which the verdicts are held to."""
    held = [r for r in earlier if r.served]
    accepted = list(dict.fromkeys(name for r in held for name in r.served))
    kinds = [] if accepted else [k for k, v in (computed or {}).items() if v]
    if kinds:
        accepted = list(dict.fromkeys(n for k in kinds for n in (computed or {})[k]))
    if not accepted:
        accepted = list(now)[:1]
    new = [name for name in now if name not in accepted]
    old_words, new_words = _names(accepted), _names(new)
    also = f" (and {counted(copied, 'verdict')} copied from another judge id)" if copied else ""
    # one shell word: a llama.cpp server's name is its file's path, maybe with a space
    revision = shlex.quote(one_line(new[0])) if new else "NAME"
    if held:
        runs = "; ".join(
            f"run {r.number}{_of(r.judge, judge)}: {counted(r.judgments, 'verdict')} served as "
            f"{_names(list(r.served))}"
            for r in held
        )
        if all(r.judge in ("", judge) for r in held):
            before = f"judge id {judge!r} holds verdicts served as {old_words} ({runs})"
        else:  # judge ids of one model and revision share their verdicts (copies)
            before = (
                f"judge id {judge!r} shares its content keys, and so its verdicts, with the "
                f"judge ids of its model and revision, whose verdicts were served as "
                f"{old_words} ({runs})"
            )
    elif kinds:
        before = (
            f"judge id {judge!r}: the {' and '.join(kinds)} of its model and revision "
            f"stored here were served as {old_words}"
        )
    else:
        before = f"judge id {judge!r}: this run's answers were served as {old_words} first"
    return (
        f"{store}: {before}, and the server now answers as {new_words} (this run's "
        f"answers: {served_words(now)}) — the run stopped before storing a verdict served "
        "so (two models' verdicts under one judge id would be averaged as one judge's "
        f"numbers); it stored {counted(stored, 'verdict')} before, served as {old_words}{also}. "
        "To judge "
        "with the new model, judge into a new store (--out NEW.sqlite), or key its "
        f"verdicts apart in this one: --revision {revision} "
        "--judge-id NEW_ID (Python: HTTPBackend(revision=...), Runner(judge=...))"
        f"{_replicas(replicas)}"
    )


def _replicas(replicas: int) -> str:
    """The words for a run over several servers: replicas of one model may name it
    differently (one started with another served name, or from another path)."""
    if replicas <= 1:
        return ""
    return (
        f"; if the names are of one model, which the {replicas} servers (--base-url) "
        "name differently, give every server one name for it (vLLM: --served-model-name; "
        "llama.cpp: --alias) or judge through one --base-url"
    )


def raced_model(
    store: str,
    judge: str,
    *,
    others: Sequence[EarlierRun],
    accepted: Sequence[str],
    now: Mapping[str, int],
    stored: int,
) -> str:
    """The words of the error that stops a run of ``judge`` whose commit finds that
    ``others``, runs of it (or of a judge id of its model and revision) started while
    it ran, stored verdicts served as a model other than this run's (``accepted``):
    two runs at once, asking servers that serve other models. ``now`` is this run's
    served names so far, ``stored`` the verdicts it stored."""
    names = list(dict.fromkeys(n for r in others for n in r.served if n not in accepted))
    runs = "; ".join(
        f"run {r.number}{_of(r.judge, judge)}: {counted(r.judgments, 'verdict')} served as "
        f"{_names(list(r.served))}"
        for r in others
    )
    revision = shlex.quote(one_line(accepted[0])) if accepted else "NAME"
    return (
        f"{store}: judge id {judge!r}: another run, started while this one ran, stored "
        f"verdicts served as {_names(names)} ({runs}), and this run's answers were served "
        f"as {_names(accepted)} (this run's answers: {served_words(now)}) — two runs at "
        "once, whose servers serve other models; this run stopped before storing a "
        "verdict served so (two models' verdicts under one judge id would be averaged as "
        f"one judge's numbers); it stored {counted(stored, 'verdict')} before. To judge this "
        "server's model too, judge into a new store (--out NEW.sqlite), or key its "
        f"verdicts apart in this one: --revision {revision} --judge-id NEW_ID (Python: "
        "HTTPBackend(revision=...), Runner(judge=...))"
    )


def _of(run_judge: str, judge: str) -> str:
    """``, judge id 'x'`` for a run of another judge id than ``judge``, else ``""``."""
    return f", judge id {run_judge!r}" if run_judge not in ("", judge) else ""


def mixed_runs(runs: Sequence[tuple[str, Mapping[str, int]]]) -> list[str | None]:
    """For each run of ``runs`` (judge, served names; oldest first), a note where its
    judge's verdicts so far come from more than one served model (a run whose names
    add one to those the judge's earlier runs recorded, or that names two itself),
    else None: the runs frame's ``served_note`` (:meth:`recuse.judging.store.Store.runs`).

    >>> mixed_runs([("j", {"a": 2}), ("k", {"b": 1}), ("j", {"a": 1, "c": 1})])[2][:48]
    "judge 'j' was served as 'c' in this run, and as "
    """
    seen: dict[str, list[str]] = {}
    out: list[str | None] = []
    for judge, served in runs:
        before = seen.setdefault(judge, [])
        new = new_names(before, served)
        if new and before:
            out.append(
                f"judge {judge!r} was served as {_names(new)} in this run, and as "
                f"{_names(before)} before it: two models' verdicts under one judge id"
            )
        elif new:
            out.append(
                f"judge {judge!r} was served as {_names(list(served))} within this run: "
                "two models' verdicts under one judge id"
            )
        else:
            out.append(None)
        before.extend(n for n in served if n not in before)
    return out


def _names(names: Sequence[str]) -> str:
    """``'a' and 'b'``: names quoted, on one line."""
    return " and ".join(one_line(repr(n)) for n in names)


class Served:
    """One run of perplexities or rewrites (``what``) of ``model`` at ``revision`` held
    to one served model (module docstring). ``totals`` reads the backend's
    ``{served name: answers}`` so far (:meth:`~recuse.judging.backends.base.Backend.served`);
    ``recorded`` is what the store recorded for them when the run began
    (:meth:`~recuse.judging.store.Store.served_names`), else those the verdicts of
    ``judges``, its model's judge ids, were served as. :meth:`check` goes before each
    batch of rows is counted and stored; the store calls :meth:`guard` and
    :meth:`unrecorded` in each commit's transaction."""

    def __init__(
        self,
        totals: Callable[[], Mapping[str, int]],
        *,
        what: str,
        model: str,
        revision: str,
        recorded: Mapping[str, int],
        store: str,
        judges: Sequence[str] = (),
    ) -> None:
        self.totals, self.what, self.model, self.revision = totals, what, model, revision
        self.store = store
        #: the judge ids whose verdicts' names ``recorded`` is (none of ``what`` recorded)
        self.judges = tuple(judges)
        #: the run's outcomes by status as they are counted, before their commit (the
        #: runner's), whose ok and unparsed rows the error says were stored
        self.counts: Mapping[str, int] = {}
        self.before = dict(totals())
        self.accepted = list(recorded)
        self.recorded = bool(recorded)  # the accepted names are the store's, not this run's
        self.written: dict[str, int] = {}  # this run's answers recorded so far

    def now(self) -> dict[str, int]:
        """This run's answers so far, by the name each gave."""
        return answered_since(self.before, self.totals())

    def check(self) -> None:
        """Stop the run (:class:`~recuse.errors.JudgeError`) where its answers name a
        model besides the accepted one, before a row of it is counted or stored."""
        now = self.now()
        if not self.accepted:
            self.accepted = list(now)[:1]  # this run's first name, nothing recorded before
        if new_names(self.accepted, now):
            raise JudgeError(self._words(now))

    def guard(self, recorded: Mapping[str, int]) -> None:
        """In a commit's transaction: ``recorded`` (what the store holds now) naming a
        model besides this run's stops it, the commit rolled back (another run, begun
        while this one ran, recorded it first)."""
        others = [n for n in recorded if n not in self.accepted]
        if self.accepted and others:
            raise JudgeError(self._words(self.now(), others=others))

    def unrecorded(self) -> dict[str, int]:
        """The answers each accepted name gave since the last call (what a commit adds
        to the record), now taken as recorded; a name :meth:`check` refused is not (the
        run's last commit, as it stops, stores none of its rows)."""
        now = {n: k for n, k in self.now().items() if n in self.accepted}
        fresh = answered_since(self.written, now)
        self.written = now
        return fresh

    def _words(self, now: Mapping[str, int], *, others: Sequence[str] = ()) -> str:
        """The error's words: which names, where the others came from, what to do;
        ``others``: the names another run recorded while this one ran."""
        new = [n for n in now if n not in self.accepted]
        if others:
            before = (
                f"another run, started while this one ran, stored {self.what} of it served "
                f"as {_names(others)}, and this run's answers were served as "
                f"{_names(self.accepted)}"
            )
            new = list(self.accepted)  # this run's model is the one to key apart
        elif self.recorded:
            held = (
                f"the verdicts of judge id {', '.join(repr(j) for j in self.judges)}"
                if self.judges
                else f"the {self.what} of it"
            )
            before = (
                f"{one_line(held)} stored here were served as {_names(self.accepted)}, "
                f"and the server now answers as {_names(new)}"
            )
        else:
            before = (
                f"this run's answers were served as {_names(self.accepted)} first, and the "
                f"server now answers as {_names(new)}"
            )
        name = one_line(new[0]) if new else "NAME"
        apart = (
            f"--revision {shlex.quote(name)} (recuse judge --perplexity; Python: "
            "HTTPBackend(revision=...))"
            if self.what == "perplexities"
            else f"HTTPBackend(revision={name!r}) in Python (recuse probe's rewriter takes "
            "no revision)"
        )
        stored = self.counts.get("ok", 0) + self.counts.get("unparsed", 0)
        return (
            f"{self.store}: model {self.model!r} at revision {self.revision or '(none)'}: "
            f"{before} (this run's answers: {served_words(now)}) — the run stopped before "
            f"storing a row served so (two models' {self.what} under one model id and "
            f"revision would be reused as one model's); it stored "
            f"{counted(stored, 'row')} before. To compute them with the new model, "
            f"use a new store (--out NEW.sqlite), or key them apart in this one: {apart}"
        )
