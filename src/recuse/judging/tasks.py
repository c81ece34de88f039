"""What a run asks of a backend, as data: one :class:`Task` per judgment, perplexity or
rewrite, and the :class:`Work` a run's tasks share.

The runner (:mod:`recuse.judging.runner`) schedules tasks; the handler of each kind
(:mod:`recuse.judging.handlers`) turns the backend's answers to a batch of them into
rows. Both read this module, so neither imports the other's internals.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal, NoReturn, cast

from recuse.errors import ConfigError
from recuse.judging.protocols import (
    Dimension,
    KeyFrame,
    LikertProtocol,
    Order,
    PairwiseProtocol,
    Prompt,
    key_value,
)

TaskKind = Literal["pairwise", "likert", "perplexity", "rewrite"]


class FrozenParams(dict[str, object]):
    """A read-only, hashable dict of a :class:`Keying`'s parameters: its lists are
    tuples and its dicts are FrozenParams, all the way down. A dict still (read, and
    written as JSON, as one), so :func:`content_key` hashes the same bytes as for the
    dict it was made from (a tuple is written as the list was)."""

    __slots__ = ()

    @classmethod
    def of(cls, params: Mapping[str, object], where: str = "") -> FrozenParams:
        """``params`` frozen; NumPy scalars become the equal Python values (the same key)
        and a value no key can hold (a set, an object) is a ConfigError naming it
        (:func:`~recuse.judging.protocols.key_value`); ``where`` prefixes the names."""
        out: dict[str, object] = {}
        for k, v in params.items():
            name = f"{where}.{k}" if where else str(k)
            # a name JSON writes as a text (a number too; np.int64 as the int)
            key = cast(str, key_value(k, f"name {name!r}"))
            out[key] = _frozen(v, name)
        try:
            sorted(out)  # as the content key's JSON writes them
        except TypeError:
            kinds = " and ".join(sorted({type(k).__name__ for k in out}))
            raise ConfigError(
                f"judge parameter {where or 'params'}: names of more than one type ({kinds}: "
                f"{', '.join(map(repr, out))}) cannot be part of a content key, which "
                "writes them sorted: give every name as a text"
            ) from None
        return cls(out)

    def _read_only(self, *_args: Any, **_kwargs: Any) -> NoReturn:
        raise TypeError("a Keying's params are read-only: make a new Keying")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _read_only
    __ior__ = _read_only

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(sorted(self.items(), key=lambda kv: kv[0])))

    def __reduce__(self) -> tuple[type[FrozenParams], tuple[dict[str, object]]]:
        # pickle (a task sent to a Ray worker) and copy rebuild it whole: their default
        # for a dict subclass fills it item by item, which it refuses
        return FrozenParams, (dict(self),)


def _frozen(value: object, where: str) -> object:
    if isinstance(value, Mapping):
        return FrozenParams.of(value, where)
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v, f"{where}[{i}]") for i, v in enumerate(value))
    return key_value(value, where)


@dataclass(frozen=True)
class Keying:
    """What a judgment's content key hashes beside its prompt: the model's id and
    revision and the protocol's parameters (see :func:`content_key`). One object is
    shared by a run's tasks. Immutable and hashable (so is a :class:`Task`): the
    parameters are kept as :class:`FrozenParams` (a copy: the caller's dict changed
    later changes no key)."""

    model_id: str
    revision: str
    params: Mapping[str, object]

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", FrozenParams.of(self.params))

    @cached_property
    def frame(self) -> KeyFrame:
        """The key's JSON around its prompt, written once for the run's tasks."""
        return KeyFrame.of(self.model_id, self.revision, self.params)

    def key(self, prompt: Prompt) -> str:
        """:func:`content_key` of ``prompt``'s canonical text."""
        return self.frame.key(prompt.canonical())


@dataclass(frozen=True)
class Task:
    """One judgment, perplexity or rewrite. ``key_from`` is its content key, or the
    :class:`Keying` it is computed from when first read: a run on a store with
    nothing to reuse computes keys as outcomes are stored, beside the device's
    passes, not all of them before the first one."""

    key_from: str | Keying
    kind: TaskKind
    item_id: str
    slot: str  # order for pairwise, dimension name for Likert, "" for perplexity
    prompt: Prompt
    order: Order | None = None
    dimension: Dimension | None = None
    continuation: str = ""  # perplexity: the text scored after the prompt

    @cached_property
    def key(self) -> str:
        k = self.key_from
        return k if isinstance(k, str) else k.key(self.prompt)

    @cached_property
    def size(self) -> int:
        """Length used to put similar tasks in one batch (computed once: the runner
        reads it four times a task before the first call)."""
        return len(self.prompt.canonical()) + len(self.continuation)


@dataclass(frozen=True)
class Work:
    """What a run's tasks ask of the backend, as data another process can receive:
    pairwise or Likert judgments under their protocol, or perplexities."""

    kind: Literal["pairwise", "likert", "perplexity"]
    protocol: PairwiseProtocol | LikertProtocol | None = None
