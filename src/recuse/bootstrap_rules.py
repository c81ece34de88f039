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
from typing import Any

from recuse.errors import ConfigError

__all__ = [
    "FLAGS",
    "LEAST_LEVEL",
    "MAX_N_BOOT",
    "N_BOOT",
    "SettingError",
    "check_interval_level",
    "check_level",
    "check_min_n",
    "check_n_boot",
    "check_seed",
    "is_numpy",
    "named_settings",
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
