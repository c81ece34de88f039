"""The bootstrap's settings and their rules, light to import: the default and largest
resample counts, the least interval level, and the checks of ``level``, ``n_boot``,
``seed`` and ``min_n`` with their one error (:class:`SettingError`).

:mod:`recuse.metrics.bootstrap` computes with them and re-exports them;
:mod:`recuse.options` (the command line's options) reads them from here, so ``recuse
--help`` and ``recuse gate`` import neither NumPy nor pandas (tests/cli/test_cli_lazy.py).
"""

from __future__ import annotations

import contextlib
import math
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from recuse.errors import ConfigError
from recuse.numbers import percent, significant_beside

__all__ = [
    "FLAGS",
    "LEAST_LEVEL",
    "MAX_N_BOOT",
    "N_BOOT",
    "TAIL_RESAMPLES",
    "Extrapolation",
    "SettingError",
    "asked_tail",
    "beyond_fix",
    "beyond_warning",
    "check_interval_level",
    "check_level",
    "check_min_n",
    "check_n_boot",
    "check_seed",
    "is_numpy",
    "named_settings",
    "resamples_to_read",
    "resolved_tail",
]


def is_numpy(value: object, *kinds: str) -> bool:
    """Whether ``value`` is a NumPy scalar of one of ``kinds`` (``"bool_"``,
    ``"integer"``, ``"floating"``). NumPy is not imported for it: a value can only be
    NumPy's once NumPy is loaded, so the check looks in ``sys.modules``."""
    np = sys.modules.get("numpy")
    return np is not None and isinstance(value, tuple(getattr(np, k) for k in kinds))


N_BOOT = 2000
"""The one default number of bootstrap resamples: every metric function, ``recuse
metrics`` and ``recuse audit`` use it, so one estimate shows one interval."""


def _is_whole(value: object) -> bool:
    """Whether ``value`` is a whole number (an int, or a float without a fraction), not a bool."""
    if isinstance(value, bool) or is_numpy(value, "bool_"):
        return False
    if isinstance(value, int) or is_numpy(value, "integer"):
        return True
    number: Any = value  # a float, or NumPy's floating (is_numpy, which mypy cannot see)
    floating = isinstance(value, float) or is_numpy(value, "floating")
    return floating and math.isfinite(number) and number == int(number)


#: the most bootstrap resamples an estimate may keep: each keeps ``n_boot`` numbers per
#: statistic in memory (about 32 bytes a resample for the pairwise bootstrap, so a million
#: is about 30 MB per estimate); the library, ``recuse metrics`` and the audit share it
MAX_N_BOOT = 1_000_000

#: the least interval level anyone may ask for, the library's :class:`Resampling` as the
#: command line and ``recuse.toml``: an interval at a level under one half is meant to
#: miss the truth more often than it covers it
LEAST_LEVEL = 0.5
_BYTES_PER_RESAMPLE = 32  # the pairwise bootstrap keeps about four float64s per resample

#: the command-line flag of each resampling setting (:meth:`SettingError.named`)
FLAGS: dict[str, str] = {"level": "--level", "n_boot": "--n-boot", "seed": "--seed",
                         "min_n": "--min-n"}  # fmt: skip


class SettingError(ConfigError):
    """A resampling setting (``level``, ``n_boot``, ``seed`` or ``min_n``) that breaks
    its rule: ``str()`` is the library's sentence (``level must be in [0.5, 1) (e.g.
    0.9), got 1.5``); :meth:`named` says it of a flag or a ``recuse.toml`` key instead.

    >>> err = SettingError("level", 1.5, "must be in [0.5, 1)", "0.9")
    >>> print(err)
    level must be in [0.5, 1) (e.g. 0.9), got 1.5
    >>> print(err.named("--level"))
    --level = 1.5: must be in [0.5, 1), e.g. 0.9
    """

    def __init__(self, setting: str, value: object, rule: str, example: str | None = None):
        self.setting, self.value, self.rule, self.example = setting, value, rule, example
        eg = f" (e.g. {example})" if example else ""
        super().__init__(f"{setting} {rule}{eg}, got {_shown(value)}")

    def __reduce__(self) -> tuple[type[SettingError], tuple[str, object, str, str | None]]:
        """Pickled as what it was made of (a Ray worker's error sent back, a pickled
        result): Python's own pickling calls the class with the message alone."""
        return type(self), (self.setting, self.value, self.rule, self.example)

    def named(self, where: str) -> ConfigError:
        """The same rule said of ``where``: a flag (``--level``), a keyword or a file's
        key (``recuse.toml: [audit] level``)."""
        eg = f", e.g. {self.example}" if self.example else ""
        return ConfigError(f"{where} = {_shown(self.value)}: {self.rule}{eg}")


def _shown(value: object) -> str:
    """``value`` as an error says it: its repr, cut to 60 characters (``n_boot = 1e300``
    in a TOML file is a 301-digit integer)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


@contextlib.contextmanager
def named_settings(where: Callable[[str], str] = FLAGS.__getitem__) -> Iterator[None]:
    """Inside the block, a :class:`SettingError` is raised again naming where the setting
    came from, ``where(setting)`` (default: its flag, :data:`FLAGS`): the one way the
    audit, ``recuse plan`` and ``recuse metrics pairs`` say a bad bootstrap setting.

    >>> with named_settings():
    ...     check_n_boot(5)
    Traceback (most recent call last):
    ...
    recuse.errors.ConfigError: --n-boot = 5: must be an integer of at least 10, e.g. 2000
    """
    try:
        yield
    except SettingError as exc:
        raise exc.named(where(exc.setting)) from None


def check_level(level: float, *, least: float = LEAST_LEVEL) -> None:
    """Raise :class:`SettingError` for an interval level that is not a number in
    ``[least, 1)``: by default :data:`LEAST_LEVEL` (0.5), the one rule that
    :class:`Resampling`, the command line's ``--level`` and ``recuse.toml`` share (a
    ``Resampling(level=95)`` said "between 0 and 1" where ``--level 95`` said
    "in [0.5, 1)")."""
    is_real = isinstance(level, int | float) or is_numpy(level, "integer", "floating")
    if (
        isinstance(level, bool)
        or is_numpy(level, "bool_")
        or not is_real
        or not least <= level < 1.0
        or level <= 0
    ):
        raise SettingError("level", level, f"must be in [{least:g}, 1)", "0.9")


def check_n_boot(count: int, *, least: int = 10) -> None:
    """Raise :class:`SettingError` for a resample count (``n_boot``) that is not a whole
    number from ``least`` (10; the audit's is 100) to :data:`MAX_N_BOOT`."""
    if not _is_whole(count) or count < least:
        raise SettingError("n_boot", count, f"must be an integer of at least {least}", "2000")
    if count > MAX_N_BOOT:
        need = _memory(count * _BYTES_PER_RESAMPLE)
        raise SettingError(
            "n_boot", count,
            f"must be at most {MAX_N_BOOT:,}: the bootstrap would need {need} "
            f"of memory for each estimate ({_BYTES_PER_RESAMPLE} bytes a resample; {N_BOOT} "
            "is the default)",
        )  # fmt: skip


def _memory(size: float) -> str:
    """``size`` bytes in words a reader can take in: MiB below a GiB (10 million
    resamples are 305 MiB, not "0 GiB"), GiB below a million of them, and "over a
    million GiB" beyond (a TOML ``1e300`` is read as a 301-digit whole number)."""
    if size >= 2**30 * 10**6:  # before any division: an int past any float is no error
        return "over a million GiB"
    gib = size / 2**30
    return f"about {size / 2**20:,.0f} MiB" if gib < 1 else f"about {gib:,.0f} GiB"


def check_seed(seed: int) -> None:
    """Raise :class:`SettingError` for a seed that is not a whole number of 0 or more."""
    if (isinstance(seed, bool) or is_numpy(seed, "bool_")) or not (
        isinstance(seed, int) or is_numpy(seed, "integer")
    ):
        raise SettingError("seed", seed, "must be an integer", "0")
    if seed < 0:
        raise SettingError("seed", seed, "must be 0 or more")


def check_min_n(min_n: int) -> None:
    """Raise :class:`SettingError` for a ``min_n`` (an estimator's smallest group) that is
    not a positive integer."""
    if not _is_whole(min_n) or min_n < 1:
        raise SettingError("min_n", min_n, "must be a positive integer", "5")


def check_interval_level(level: float, *, where: str = "--level") -> None:
    """The one rule for an interval level a user gives, with one message: a number in
    ``[LEAST_LEVEL, 1)``, as the audit requires (``recuse audit``, ``plan``, ``metrics
    pairs``, ``favoritism``); a :class:`ConfigError` said of ``where`` (a flag or a
    ``recuse.toml`` key).

    >>> check_interval_level(0.3)
    Traceback (most recent call last):
    ...
    recuse.errors.ConfigError: --level = 0.3: must be in [0.5, 1), e.g. 0.9
    """
    with named_settings(lambda _setting: where):
        check_level(level, least=LEAST_LEVEL)


#: the fewest resamples that must lie beyond a tail's end for the resamples' own quantile
#: to read it; a deeper end is extrapolated (:func:`~recuse.metrics.bootstrap.tail_end`)
TAIL_RESAMPLES = 5


def resolved_tail(resamples: int) -> float:
    """The deepest tail probability ``resamples`` resamples read an end at:
    :data:`TAIL_RESAMPLES` of them beyond it, ``TAIL_RESAMPLES / resamples`` (0.0025 of
    2,000: a 99.5% interval's plain ends, and no deeper); a deeper end is extrapolated
    (:func:`~recuse.metrics.bootstrap.tail_end`).

    >>> resolved_tail(2000), resolved_tail(500)
    (0.0025, 0.01)
    """
    return min(TAIL_RESAMPLES / max(resamples, 1), 0.5)


@dataclass(frozen=True)
class Extrapolation:
    """Which ends of an interval expanded for few prompts lie past the resamples'
    reach, extrapolated along a normal tail
    (:func:`~recuse.metrics.bootstrap.tail_end`): ``low`` and ``high``, and how far,
    ``tail``, the deepest tail probability those ends asked of the ``resamples``
    resamples from ``clusters`` prompts at ``level``
    (:func:`~recuse.metrics.bootstrap.expanded_beyond`). A result carries it as data
    (``MetricResult.extrapolated``, report.json's ``extrapolated``); its warning's
    words are :meth:`warning`, its advice :meth:`fix`, and the resamples that read its
    deepest end :attr:`need` (``⌈TAIL_RESAMPLES / tail⌉``, None past
    :data:`MAX_N_BOOT`). ``bias_corrected``: the interval's rule, a BCa interval's
    (its ends moved by the bias correction; the audit's shared bootstrap) or False, a
    percentile interval's (the leaderboard's strengths and covariates), which its
    warning names: the leaderboard's covariate warnings called their percentile ends
    bias-corrected.

    >>> x = Extrapolation(low=True, high=False, tail=1.6e-3, resamples=2000, clusters=75,
    ...                   level=0.99)
    >>> x.side, x.need
    ('low end', 3125)
    >>> x.short().split(": ")  # doctest: +NORMALIZE_WHITESPACE
    ['99% low end extrapolated past the 2,000 resamples (tail 1.6e-03)',
     'add prompts, or resamples', '3,125 (--n-boot) would read it']
    >>> x.warning() == beyond_warning(1.6e-3, resamples=2000, clusters=75, level=0.99,
    ...                               side="low end")
    True
    """

    low: bool
    high: bool
    tail: float
    resamples: int
    clusters: int
    level: float
    bias_corrected: bool = True

    @property
    def side(self) -> str:
        """The ends in words: "ends" (both), "low end" or "high end"."""
        return "ends" if self.low and self.high else "low end" if self.low else "high end"

    @property
    def need(self) -> int | None:
        """The resamples that read the deepest end, ``⌈TAIL_RESAMPLES / tail⌉``; None
        where that passes :data:`MAX_N_BOOT` (only prompts help)."""
        return resamples_to_read(self.tail)

    @property
    def asked(self) -> str:
        """The tail as the warning writes it (:func:`asked_tail`)."""
        return asked_tail(self.tail, resamples=self.resamples)

    def fix(self) -> str:
        """The estimator's advice (:func:`beyond_fix`), of "them" where both ends were."""
        return beyond_fix(
            self.level, resamples=self.resamples, tail=self.tail, both=self.low and self.high
        )

    def warning(self) -> str:
        """The result's warning (:func:`beyond_warning`)."""
        return beyond_warning(
            self.tail, resamples=self.resamples, clusters=self.clusters, level=self.level,
            side=self.side, bias_corrected=self.bias_corrected,
        )  # fmt: skip

    def short(self) -> str:
        """The warning in a line's words: the level, the end, the tail asked and the
        advice (a tidy table's cell, the page's verdict list, ``recuse gate``)."""
        return (
            f"{percent(self.level)} {self.side} extrapolated past the {self.resamples:,} "
            f"resamples (tail {self.asked}): {self.fix()}"
        )

    def to_dict(self) -> dict[str, Any]:
        """report.json's ``extrapolated``: the ends (``low_end``, ``high_end``), the
        deepest ``tail`` asked, the ``resamples`` and ``clusters``, the ``level``,
        ``n_boot_to_read`` (:attr:`need`, null: none allowed reads it) and
        ``bias_corrected`` (the interval's rule: BCa, or percentile)."""
        return {
            "low_end": self.low,
            "high_end": self.high,
            "tail": self.tail,
            "resamples": self.resamples,
            "clusters": self.clusters,
            "level": self.level,
            "n_boot_to_read": self.need,
            "bias_corrected": self.bias_corrected,
        }

    @classmethod
    def from_dict(cls, data: object) -> Extrapolation:
        """The record :meth:`to_dict` wrote; a :class:`ValueError` saying which key is
        missing or of the wrong kind. A record without ``bias_corrected`` (a report
        written before it) is a BCa interval's, as its warning then said."""
        if not isinstance(data, dict):
            raise ValueError(f"is not an object (got {type(data).__name__})")
        kinds = {
            "low_end": (bool,), "high_end": (bool,), "tail": (int, float),
            "resamples": (int,), "clusters": (int,), "level": (int, float),
        }  # fmt: skip
        for key, kind in kinds.items():
            value = data.get(key)
            if not isinstance(value, kind) or (kind != (bool,) and isinstance(value, bool)):
                raise ValueError(f"has no {key!r} of the right kind (got {_brief(value)})")
        said = _brief({k: data[k] for k in kinds})  # its own keys: none of any size
        # a tail of 0: an end past the BCa acceleration's range (the audit writes it)
        if not (data["low_end"] or data["high_end"]) or not 0 <= data["tail"] < 0.5:
            raise ValueError(f"names no end or a tail outside [0, 0.5) (got {said})")
        if data["resamples"] < 1 or data["clusters"] < 1 or not 0 < data["level"] < 1:
            raise ValueError(f"has resamples, clusters or level out of range (got {said})")
        if data["resamples"] > MAX_N_BOOT:  # no audit keeps more (check_n_boot)
            raise ValueError(
                f"has 'resamples' {_brief(data['resamples'])}, more than the "
                f"{MAX_N_BOOT:,} an audit keeps (--n-boot): not the audit's record"
            )
        corrected = data.get("bias_corrected", True)
        if not isinstance(corrected, bool):
            got = _brief(corrected)
            raise ValueError(f"has no 'bias_corrected' of the right kind (got {got})")
        return cls(
            low=data["low_end"], high=data["high_end"], tail=float(data["tail"]),
            resamples=data["resamples"], clusters=data["clusters"], level=float(data["level"]),
            bias_corrected=corrected,
        )  # fmt: skip


def _brief(value: object, *, most: int = 200) -> str:
    """``repr(value)`` for an error message, cut to ``most`` characters with its length
    said: a crafted report.json's 10 MB text in a record gave a 10 MB error.

    >>> _brief("x" * 1000, most=12)
    "'xxxxxxxxxx… (1,002 characters)"
    """
    text = repr(value)
    return text if len(text) <= most else f"{text[: most - 1]}… ({len(text):,} characters)"


def resamples_to_read(tail: float) -> int | None:
    """The resamples that read an end at tail probability ``tail``,
    ``⌈TAIL_RESAMPLES / tail⌉``; None where that passes :data:`MAX_N_BOOT`, and for a
    tail of 0 (an end past the BCa acceleration's range: its level is 0 or 1, which no
    number of resamples reads) or one so small that ``5 / tail`` overflows (1e-320:
    ``math.ceil`` of an infinity raised OverflowError in the audit and the gate).

    >>> resamples_to_read(1.6e-3), resamples_to_read(1e-7), resamples_to_read(0.0)
    (3125, None, None)
    >>> resamples_to_read(1e-320) is None
    True
    """
    if not tail > 0 or TAIL_RESAMPLES / tail > MAX_N_BOOT:
        return None
    return math.ceil(TAIL_RESAMPLES / tail)


def asked_tail(tail: float, *, resamples: int) -> str:
    """The tail an extrapolated end asked, as its warning writes it: two significant
    digits, more where those would put it on the resamples' reach
    (:func:`resolved_tail`: 2.496e-3 beside 2,000 resamples' 0.0025 reads 0.002496).

    >>> asked_tail(1.6e-3, resamples=2000), asked_tail(2.496e-3, resamples=2000)
    ('1.6e-03', '0.002496')
    """
    asked = f"{tail:.1e}"
    if float(asked) >= resolved_tail(resamples):
        asked = significant_beside(tail, resolved_tail(resamples), 2)
    return asked


def beyond_warning(
    tail: float,
    *,
    resamples: int,
    clusters: int,
    level: float,
    side: str = "ends",
    bias_corrected: bool = True,
) -> str:
    """The words of an interval whose ``side``
    (:func:`~recuse.metrics.bootstrap.beyond_side`)
    :func:`~recuse.metrics.bootstrap.expanded_interval` extrapolated: the tail
    probability ``tail`` it asked of ``resamples`` resamples from ``clusters`` prompts.
    ``bias_corrected``: a BCa interval's ends (Student's t, bias-corrected, asks the
    tail); False, a percentile interval's (Student's t alone asks it: the leaderboard's).

    >>> beyond_warning(1.3e-7, resamples=2000, clusters=5, level=0.99)[:81]
    "the 99% interval's ends lie beyond the 2,000 resamples (Student's t for 5 prompts"
    >>> beyond_warning(1e-3, resamples=2000, clusters=75, level=0.99, side="low end")[:44]
    "the 99% interval's low end lies beyond the 2"
    >>> beyond_warning(2.496e-3, resamples=2000, clusters=90, level=0.99).split("; ")[0][-22:]
    'for a tail of 0.002496'
    >>> beyond_warning(2.8e-4, resamples=2000, clusters=73, level=0.999,
    ...                bias_corrected=False).split("(")[1][:42]
    "Student's t for 73 prompts asks them for a"
    """
    fix = beyond_fix(level, resamples=resamples, tail=tail, both=side == "ends")
    # the tail is below the resamples' reach: 2.496e-3 beside 0.0025 reads 0.002496
    asked = asked_tail(tail, resamples=resamples)
    lies = "lie" if side == "ends" else "lies"
    it = "they are" if side == "ends" else "it is"
    return (
        f"the {percent(level)} interval's {side} {lies} beyond the {resamples:,} resamples "
        f"(Student's t for {clusters:,} prompts{', bias-corrected,' if bias_corrected else ''} "
        "asks them for a tail of "
        f"{asked}; they read "
        f"{resolved_tail(resamples):.3g} and no deeper): {it} extrapolated along a normal "
        "tail from the estimate through the resamples' deepest quantile (the smallest or "
        f"largest resample read as the end was narrower) — {fix}"
    )


def beyond_fix(level: float, *, resamples: int, tail: float, both: bool = False) -> str:
    """What brings an end extrapolated at tail probability ``tail`` within reach of the
    resamples: ``⌈TAIL_RESAMPLES / tail⌉`` resamples read it (named where that is at most
    :data:`MAX_N_BOOT`: a bias-corrected 99% end from 75 prompts asks 1e-3, 5,000
    resamples). More prompts shrink Student's quantile toward the normal's, whose tail
    ``(1 − level) / 2`` ``resamples`` read where it is at least :func:`resolved_tail`;
    past that (99.9% from 2,000 resamples, 99% from 500) no number of prompts does.
    ``both``: the advice is of two ends ("them"; "it" was said of both).

    >>> beyond_fix(0.99, resamples=2000, tail=1.3e-7)
    'add prompts'
    >>> beyond_fix(0.99, resamples=2000, tail=1e-3)
    'add prompts, or resamples: 5,000 (--n-boot) would read it'
    >>> beyond_fix(0.999, resamples=2000, tail=3.2e-4).split(": ")[-1]
    '15,625 resamples (--n-boot) would read it'
    >>> beyond_fix(0.999, resamples=2000, tail=3.2e-4, both=True)[:72]
    "more prompts will not bring them within reach (99.9%'s normal tail, 5.0e"
    """
    it = "them" if both else "it"
    normal = (1.0 - level) / 2
    need = resamples_to_read(tail)
    if normal >= resolved_tail(resamples):
        if need is not None:
            return f"add prompts, or resamples: {need:,} (--n-boot) would read {it}"
        return "add prompts"
    says = (
        f"{need:,} resamples (--n-boot) would read {it}"
        if need is not None
        else f"more than the {MAX_N_BOOT:,} resamples allowed would read {it}"
    )
    return (
        f"more prompts will not bring {it} within reach ({percent(level)}'s normal tail, "
        f"{normal:.1e}, lies past the resamples' reach): {says}"
    )
