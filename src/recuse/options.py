"""Every option of the audit declared once: its flag, config key, default, help and check.

:class:`Settings` is the one options object of ``recuse audit``, ``recuse.audit(...)``
and ``recuse.toml``. Each field carries an :class:`Option` (its metadata): the
command-line flag, the key in the file's ``[audit]`` table (or the file section it is,
for ``[map]``, ``[values]`` and ``[material]``), the help text and ``read``, which
turns any way of writing the value (a command-line string or list, a TOML value, a
Python keyword) into the field's value or raises a one-line
:class:`~recuse.errors.ConfigError` naming where the value came from.

:func:`resolve` applies the one precedence rule, command line (or keyword) > config
file > default, for the CLI and the API alike; the typer options of ``recuse audit``,
the keywords of :func:`recuse.audit` and the keys of ``recuse.toml`` are all made from
these fields (``tests/test_options.py`` holds them together). Adding an audit option is
one field here plus its use.
"""

from __future__ import annotations

import difflib
import json
import math
import numbers
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, get_args

from recuse.bootstrap_rules import (
    LEAST_LEVEL,
    MAX_N_BOOT,
    N_BOOT,
    SettingError,
    check_level,
    check_min_n,
    check_n_boot,
    check_seed,
    is_numpy,
    named_settings,
)
from recuse.choices import (
    CHECKS,
    FAST_CHECKS,
    LEAST_N_BOOT,
    SE,
    ConfidenceOf,
    FigureFormat,
    HumanTiesMode,
    ImportFormat,
    Orders,
    SelfScope,
    SwappedFrame,
    TableKind,
)
from recuse.errors import ConfigError

if TYPE_CHECKING:
    from recuse.analyses.base import AuditOptions
    from recuse.config import Config
    from recuse.data.importers import References
    from recuse.data.value_maps import ValueReading

__all__ = [
    "DEFAULTS",
    "MAX_N_BOOT",
    "Option",
    "Settings",
    "Written",
    "mapping_held",
    "option_as_set",
    "option_named",
    "parse_mapping",
    "parse_material",
    "parse_values",
    "resolve",
    "robustness_checks",
    "setting_sources",
    "settings_fields",
]

ValueReader = Callable[[Any, str], Any]
Where = Literal["cli", "api", "file"]


class Written(NamedTuple):
    """An option as a recuse.toml writes it (:attr:`recuse.config.Config.written`): its
    table and key as spelled there (``[audit] self_scope``, ``[map]``) and the line it
    is on (None: not found)."""

    key: str
    line: int | None

    def at(self, path: str) -> str:
        """``in recuse.toml line 3``: the file, and the line where it was found."""
        return f"in {path}" + (f" line {self.line}" if self.line else "")


@dataclass(frozen=True)
class Option:
    """One option's metadata: ``flag`` (``--n-boot``), ``short`` (``-j``), ``key`` (its
    ``[audit]`` key in ``recuse.toml``; None: not in the file), ``section`` (the file's
    ``[map]``-like table it is instead), ``cli`` (the type typer parses), ``read``
    (value, where -> the field's value), ``merge`` (a mapping: the file's entries are
    kept under the given ones), ``api`` (a keyword of :func:`recuse.audit`)."""

    flag: str
    help: str
    cli: Any
    read: ValueReader
    short: str | None = None
    key: str | None = None
    section: str | None = None
    merge: bool = False
    api: bool = True
    hidden: bool = False
    cli_default: Any = None  # the typer default of an option whose type takes no None

    @property
    def flags(self) -> tuple[str, ...]:
        return (self.flag, self.short) if self.short else (self.flag,)


def _option(
    default: Any,
    flag: str,
    help: str,
    *,
    cli: Any,
    read: ValueReader,
    key: str | bool = True,
    **more: Any,
) -> Any:
    """A :class:`Settings` field: ``key=True`` is the flag without its dashes."""
    name = flag.split("/")[0].removeprefix("--")
    spec = Option(flag, help, cli, read, key=name if key is True else (key or None), **more)
    if isinstance(default, dict):
        return field(default_factory=dict, metadata={"option": spec})
    return field(default=default, metadata={"option": spec})


# ------------------------------------------------------------------ readers


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _number(value: Any, where: str) -> float:
    """A real number: a Python or NumPy int or float (``np.float32(0.9)`` from a table)."""
    if isinstance(value, bool) or is_numpy(value, "bool_") or not isinstance(value, numbers.Real):
        raise ConfigError(f"{where} = {_shown(value)}: must be a number, e.g. 0.9")
    number: Any = value  # (a numbers.Real, which mypy cannot compare)
    try:
        return float(number)
    except OverflowError:  # an int past any float: beyond every bound, as inf is
        return math.inf if number > 0 else -math.inf


def _whole(value: Any, where: str, example: int) -> int:
    """A Python or NumPy int, or a float with no fraction (``n-boot = 200.0`` in a TOML
    file); returned as a Python int. ``example``: a fitting value, said in the error."""
    floating = isinstance(value, float) or is_numpy(value, "floating")
    if floating and math.isfinite(value) and value == int(value):
        return int(value)
    is_bool = isinstance(value, bool) or is_numpy(value, "bool_")
    if is_bool or not isinstance(value, numbers.Integral):
        raise ConfigError(
            f"{where} = {_shown(value)}: must be a number, a whole one, e.g. {example}"
        )
    return int(value)


# The bootstrap's settings: read, then held to the bootstrap's own rules with the audit's
# bounds (LEAST_LEVEL, LEAST_N_BOOT, as AuditOptions.check), each error said of ``where``.


def _level(value: Any, where: str) -> float:
    level = _number(value, where)
    with named_settings(lambda _setting: where):
        try:
            check_level(level, least=LEAST_LEVEL)
        except SettingError as exc:  # said as written (0, not 0.0)
            raise SettingError("level", value, exc.rule, exc.example) from None
    return level


def _n_boot(value: Any, where: str) -> int:
    n = _whole(value, where, N_BOOT)
    with named_settings(lambda _setting: where):
        check_n_boot(n, least=LEAST_N_BOOT)
    return n


def _seed(value: Any, where: str) -> int:
    seed = _whole(value, where, 0)
    with named_settings(lambda _setting: where):
        check_seed(seed)
    return seed


def _min_n(value: Any, where: str) -> int:
    min_n = _whole(value, where, 5)
    with named_settings(lambda _setting: where):
        check_min_n(min_n)
    return min_n


def blank(text: str) -> bool:
    """Whether ``text`` shows nothing: empty, or only white space and invisible format
    characters (Unicode category Cf: a zero-width space, a byte-order mark, a zero-width
    joiner), which ``str.strip`` keeps.

    >>> blank(" \\u200b\\ufeff "), blank("a\\u200b")
    (True, False)
    """
    return all(c.isspace() or unicodedata.category(c) == "Cf" for c in text)


def _filled(value: str, where: str) -> str:
    """``value``, refused where it is empty or blank (:func:`blank`): a recuse.toml's
    ``out = \"\"`` wrote the report into the current folder (the path ``.``), as ``--out
    \"\"`` did before the command line refused it; ``judge = \"\"`` audited every judge;
    ``out = \"\\ufeff\"`` (a byte-order mark alone) wrote into a folder whose name shows
    nothing."""
    if blank(value):
        raise ConfigError(
            f"{where} = {_shown(value)}: an empty value — give it a value, or leave it out"
        )
    return value


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{where} = {_shown(value)}: must be a string")
    return _filled(value, where)


def _maybe_text(value: Any, where: str) -> str | None:
    return None if value is None else _text(value, where)


def _path(value: Any, where: str) -> Path | None:
    if value is None:
        return None
    if not isinstance(value, str | Path):
        raise ConfigError(f"{where} = {_shown(value)}: must be a path (a string)")
    return Path(_filled(value, where) if isinstance(value, str) else value).expanduser()


def _flag(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{where} = {_shown(value)}: must be true or false")
    return value


def _choice(kind: Any, *, optional: bool = False) -> ValueReader:
    """A reader of one of the strings of the ``Literal`` ``kind``."""
    choices = get_args(kind)

    def read(value: Any, where: str) -> Any:
        if value is None and optional:
            return None
        if value not in choices:
            raise ConfigError(
                f"{where} = {_shown(value)}: must be one of {', '.join(map(str, choices))}"
            )
        return value

    return read


def _texts(value: Any, where: str) -> tuple[str, ...]:
    """A string or a list of strings, each a comma list: ``("a", "b", "c")``."""
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or not all(isinstance(v, str) for v in items):
        raise ConfigError(f"{where} = {_shown(value)}: must be a string or a list of strings")
    return tuple(v.strip() for text in items for v in _named(text, where) if not blank(v))


def _named(text: str, where: str) -> list[str]:
    """The comma list ``text`` split, refused where it names nothing: ``judge = \",\"``
    or ``--judge \" , \"`` read as no judge, so every judge was audited (``--only
    \",\"``: every analysis run), where ``judge = \"\"`` is refused (:func:`_filled`)."""
    parts = _filled(text, where).split(",")
    if all(blank(v) for v in parts):
        raise ConfigError(
            f"{where} = {_shown(text)}: names nothing (only commas and blanks) — give "
            "a value, or leave it out"
        )
    return parts


def _analysis_ids(value: Any, where: str) -> tuple[str, ...]:
    """Analysis ids as :func:`_texts` reads them, spelt as the registry spells them
    (lower case, hyphens): ``self_preference`` or ``Self-Preference`` is
    ``self-preference``, as `recuse gate` reads it (the registry checks each id).

    >>> _analysis_ids("self_preference,Position", "--only")
    ('self-preference', 'position')
    """
    return tuple(t.casefold().replace("_", "-") for t in _texts(value, where))


def _raw_texts(value: Any, where: str) -> tuple[str, ...]:
    """Like :func:`_texts`, each item kept whole (a threshold list is parsed later)."""
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or not all(isinstance(v, str) for v in items):
        raise ConfigError(f"{where} = {_shown(value)}: must be a string or a list of strings")
    return tuple(_filled(text, where) for text in items)


_MAP_HELP = (
    "write FILE_COLUMN=SCHEMA_COLUMN, comma-separated, e.g. --map label=human,evaluator=judge; "
    "a file column holding a comma goes in double quotes, as in CSV: "
    "--map '\"score, raw\"=human'"
)


def _field(text: str, i: int, stops: str, option: str, help: str) -> tuple[str, bool, int]:
    """The field of ``text`` from ``i``: a double-quoted name (the quote opening the field
    after spaces, as in CSV; ``""`` in it is one quote), or the text up to the first
    character of ``stops``. Returns (field, quoted, the index after it)."""
    start = len(text[i:]) - len(text[i:].lstrip()) + i
    if not text.startswith('"', start):
        end = _next_stop(text, i, stops)
        return text[i:end], False, end
    name, k = [], start + 1
    while True:
        q = text.find('"', k)
        if q < 0:
            raise ConfigError(
                f"{option}: the quote opening {text[start:][:40]!r} is not closed — {help}"
            )
        name.append(text[k:q])
        if not text.startswith('""', q):
            return "".join(name), True, q + 1
        name.append('"')
        k = q + 2


def _map_parts(text: str) -> list[tuple[str, bool, str]]:
    """``text`` split at its commas, but those inside a double-quoted name (which opens a
    part, as in CSV; ``""`` in it is one quote): (name, quoted, rest) per part, the rest
    being ``=SCHEMA_COLUMN`` after a quoted name, or the whole part."""
    parts: list[tuple[str, bool, str]] = []
    i = 0
    while True:
        name, quoted, after = _field(text, i, ",", "--map", _MAP_HELP)
        end = text.find(",", after)
        rest = text[after:] if end < 0 else text[after:end]
        parts.append((name, True, rest) if quoted else (name, False, name))
        if end < 0:
            return parts
        i = end + 1


def parse_mapping(text: str | None) -> dict[str, str | tuple[str, ...]]:
    """Parse ``--map file_col=schema_col,other=judge`` into a column mapping; one file
    column may feed several schema columns (``id=item_id,id=prompt_id``); a file column
    holding a comma is written in double quotes, as in CSV.

    >>> parse_mapping("label=human, evaluator=judge")
    {'label': 'human', 'evaluator': 'judge'}
    >>> parse_mapping("id=item_id,id=prompt_id")
    {'id': ('item_id', 'prompt_id')}
    >>> parse_mapping('"score, raw"=human,"a ""b"" c"=judge')
    {'score, raw': 'human', 'a "b" c': 'judge'}
    """
    if not text:
        return {}
    mapping: dict[str, str | tuple[str, ...]] = {}
    for name, quoted, rest in _map_parts(text):
        if quoted:
            eq, sep, target = rest.strip().partition("=")
            source = name if not eq and sep else ""
            shown = f'"{name}"{rest}'.strip()
        else:
            # a file column may hold '='; none of ours
            source, sep, target = rest.rpartition("=")
            shown = rest.strip()
        if not sep or not source.strip() or not target.strip():
            raise ConfigError(f"--map: cannot read {shown!r} — {_MAP_HELP}")
        source, target = source.strip(), target.strip()
        had = mapping.get(source)
        if had is None:
            mapping[source] = target
        else:
            have = (had,) if isinstance(had, str) else had
            mapping[source] = have if target in have else (*have, target)
    return mapping


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if isinstance(value, str):
        return parse_mapping(value)
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}: give FILE_COLUMN = SCHEMA_COLUMN pairs, e.g. label = 'human'")
    for key, target in value.items():
        ok = isinstance(target, str) or (
            isinstance(target, tuple | list) and all(isinstance(t, str) for t in target)
        )
        if not ok:
            raise ConfigError(f'{where}: {key}: give the schema column as "name"')
    return {str(k): (v if isinstance(v, str) else tuple(v)) for k, v in value.items()}


_VALUES_HELP = (
    "write COLUMN:VALUE=NUMBER,VALUE=NUMBER with the file's column name and P(a better) "
    "in [0, 1], e.g. --values 'judge_winner:A=1,B=0,tie=0.5' (repeat --values or "
    "separate columns with ;); a column or value holding : ; , goes in double quotes, as "
    'in CSV: --values \'"score: raw":"A, clearly"=1\''
)


def _value_pair(column: str, item: str, quoted: str | None = None) -> tuple[str, float]:
    """VALUE=NUMBER read from ``item``; after a double-quoted value ``quoted``, ``item`` is
    what follows its closing quote (``=NUMBER``)."""
    if quoted is None:
        value, eq, number = item.rpartition("=")  # a value may hold '=' (Arena-Hard's A=B)
        value, shown = value.strip(), item.strip()
    else:
        before, eq, number = item.partition("=")
        value, shown = ("" if before.strip() else quoted), f'"{quoted}"{item}'.strip()
    try:
        p = float(number)
    except ValueError:
        eq = ""
    if not eq or not value.strip():
        raise ConfigError(f"--values {column}: cannot read {shown!r} — {_VALUES_HELP}")
    return value, p


def _next_stop(text: str, i: int, stops: str) -> int:
    """The index of the first character of ``stops`` in ``text`` from ``i``, or its length."""
    return min([j for j in (text.find(c, i) for c in stops) if j >= 0], default=len(text))


def _value_items(spec: str) -> Iterator[tuple[str, str, float]]:
    """(column, value, number) for each VALUE=NUMBER of ``spec``, its columns separated
    by ``;``; a column or value written in double quotes may hold ``: ; ,``."""
    i = 0
    while i < len(spec):
        start = i
        column, quoted, i = _field(spec, i, ":;", "--values", _VALUES_HELP)
        i += len(spec[i:]) - len(spec[i:].lstrip()) if quoted else 0
        pairs = spec[i + 1 : _next_stop(spec, i + 1, ";")] if spec.startswith(":", i) else ""
        if not column.strip() or not pairs.strip():
            part = spec[start : _next_stop(spec, i, ";")]
            if part.strip():
                raise ConfigError(f"--values: cannot read {part.strip()!r} — {_VALUES_HELP}")
            i = len(part) + start + 1  # an empty part: a ';' too many
            continue
        column, stop = column.strip(), ","  # as --map's names
        while stop == ",":
            value, vquoted, i = _field(spec, i + 1, ",;", "--values", _VALUES_HELP)
            end = _next_stop(spec, i, ",;")
            pair = (
                _value_pair(column, spec[i:end], value) if vquoted else _value_pair(column, value)
            )
            yield column, *pair
            i, stop = end, spec[end : end + 1]
        i += 1


def parse_values(specs: Sequence[str] | None) -> dict[str, dict[str, float]]:
    """Parse ``--values`` specs into a value map ``{file column: {value: P(a better)}}``;
    a column or value holding ``:``, ``;`` or ``,`` is written in double quotes.

    >>> parse_values(["judge_winner:A=1,B=0,tie=0.5; human_winner:neither=0.5"])
    {'judge_winner': {'A': 1.0, 'B': 0.0, 'tie': 0.5}, 'human_winner': {'neither': 0.5}}
    >>> parse_values(["score:A>B=1,A=B=0.5,B>A=0"])  # a value may hold '=' (Arena-Hard)
    {'score': {'A>B': 1.0, 'A=B': 0.5, 'B>A': 0.0}}
    >>> parse_values(['"judge: winner; raw":"A, clearly"=1,B=0'])
    {'judge: winner; raw': {'A, clearly': 1.0, 'B': 0.0}}
    """
    out: dict[str, dict[str, float]] = {}
    for spec in specs or ():
        for column, value, p in _value_items(spec):
            table = out.setdefault(column, {})
            if value in table and table[value] != p:  # (NaN: refused as no probability)
                raise ConfigError(
                    f"--values {column}: {value!r} is given twice, as "
                    f"{table[value]:g} and {p:g} — keep one"
                )
            table[value] = p
    from recuse.data.value_maps import check_value_map

    try:
        check_value_map(out)
    except ConfigError as exc:
        raise ConfigError(f"--values: {exc}") from None
    return out


def _values(value: Any, where: str) -> dict[str, dict[str, float]]:
    if value is None:
        return {}
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list | tuple):
        return parse_values([_text(v, where) for v in value])
    if not isinstance(value, Mapping) or not all(isinstance(t, Mapping) for t in value.values()):
        raise ConfigError(f"{where}: give {{file column: {{value: number in [0, 1]}}}}")
    for column, table in value.items():
        for written, number in table.items():
            if isinstance(number, bool) or not isinstance(number, int | float):
                at = f"{where[:-1]}.{column}]" if where.endswith("]") else f"{where}[{column!r}]"
                raise ConfigError(f"{at} {written} = {_shown(number)}: give a number in [0, 1]")
    from recuse.data.value_maps import check_value_map

    try:
        return check_value_map(
            {str(c): {str(k): float(v) for k, v in t.items()} for c, t in value.items()}
        )
    except ConfigError as exc:  # named where it was written (a config file's [values])
        raise ConfigError(f"{where}: {exc}") from None


def parse_material(values: Sequence[str] | None) -> dict[str, float]:
    """``--material position=0.03,verbosity=0.1`` (repeatable) as a mapping.

    >>> parse_material(["position=0.03,verbosity=0.1"])
    {'position': 0.03, 'verbosity': 0.1}
    """
    out: dict[str, float] = {}
    for text in values or ():
        for part in (p.strip() for p in text.split(",")):
            if not part:
                continue
            key, sep, value = part.partition("=")
            try:
                number = float(value)
            except ValueError:
                number = float("nan")
            if not sep or not key.strip() or not number > 0 or number == float("inf"):
                raise ConfigError(
                    f"--material {part!r}: give BIAS=X with X > 0, e.g. --material position=0.05 "
                    "(bias keys: `recuse analyses`)"
                )
            out[key.strip()] = number
    return out


def _material(value: Any, where: str) -> dict[str, float]:
    if value is None:
        return {}
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list | tuple):
        return parse_material([_text(v, where) for v in value])
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}: give {{bias key: smallest effect worth acting on}}")
    out = {}
    for key, x in value.items():
        if isinstance(x, bool) or not isinstance(x, int | float) or not 0 < x < math.inf:
            raise ConfigError(
                f"{where} {key} = {_shown(x)}: give a positive number (the smallest effect "
                "worth acting on), e.g. position = 0.05"
            )
        out[str(key)] = float(x)
    return out


def robustness_checks(spec: str | Sequence[str], where: str = "--robustness") -> tuple[str, ...]:
    """``fast`` / ``all`` / ``none`` / a comma list (or a list) of regression checks; a
    word in a list stands for its checks (``["none"]`` is none, ``"fast,ordinal"``
    the fast checks and one more).

    >>> robustness_checks(["none"]), robustness_checks(" none ")
    ((), ())
    """
    if isinstance(spec, str):
        spec = [c.strip() for c in spec.split(",") if c.strip()]
    if not isinstance(spec, list | tuple) or not all(isinstance(c, str) for c in spec):
        raise ConfigError(f"{where} = {_shown(spec)}: give fast, all, none or a list of checks")
    named = {"fast": FAST_CHECKS, "all": ("all",), "none": ()}
    checks = tuple(dict.fromkeys(c for word in spec for c in named.get(word.strip(), (word,))))
    unknown = [c for c in checks if c not in (*CHECKS, "all")]
    if unknown:
        raise ConfigError(
            f"{where}: unknown check(s) {', '.join(unknown)} — use fast, all, none "
            f"or a comma list of {', '.join(CHECKS)}"
        )
    return checks


def _robustness(value: Any, where: str) -> tuple[str, ...]:
    return robustness_checks(value, where)


# ------------------------------------------------------------------ the options

_FORMAT_HELP = (
    "Files written by another tool: fastchat-pair, fastchat-single, arena-hard, "
    "alpaca-eval or inspect (default: recognised from each file)."
)


@dataclass(frozen=True)
class Settings:
    """The audit's options, each declared once (see :mod:`recuse.options`).

    ``recuse audit --help`` shows each field's help; ``recuse.audit(...)`` takes each
    field with ``api`` as a keyword; ``recuse.toml``'s ``[audit]`` takes each field with
    a ``key``."""

    judges: tuple[str, ...] = _option(
        (), "--judge", "Audit only this judge (repeat for several); each judge's estimates "
        "are the whole audit's (the bootstrap and the favoritism fit read every judge's rows; "
        "the leaderboard pools the judges chosen).", short="-j",
        cli=list[str] | None, read=_texts, key="judge",
    )  # fmt: skip
    out: Path = _option(
        Path("recuse-report"), "--out", "Folder for report.html, report.json, tables/.",
        short="-o", cli=Path, read=_path, api=False,
    )  # fmt: skip
    level: float = _option(0.9, "--level", "Confidence level of the intervals.", cli=float,
                           read=_level)  # fmt: skip
    n_boot: int = _option(
        N_BOOT, "--n-boot", f"Bootstrap resamples per estimate (at most {MAX_N_BOOT:,}).",
        cli=int, read=_n_boot,
    )  # fmt: skip
    seed: int = _option(0, "--seed", "Seed of the bootstrap.", cli=int, read=_seed)
    min_n: int = _option(
        5, "--min-n", "Smallest group an estimate is made from (its pairs, responses or "
        "prompts, as each analysis counts them); a smaller one reads not estimated.",
        cli=int, read=_min_n,
    )  # fmt: skip
    table: TableKind | None = _option(
        None, "--table", "What the files hold: pairs or ratings (default: guessed).",
        cli=TableKind | None, read=_choice(TableKind, optional=True),
    )  # fmt: skip
    mapping: Mapping[str, Any] = _option(
        {}, "--map", "Rename file columns: FILE_COLUMN=SCHEMA_COLUMN,... e.g. id=item_id,"
        "judge_model=judge (a missing column's error suggests pairs). A file column holding "
        "a comma goes in double quotes, as in CSV: --map '\"score, raw\"=human'.",
        cli=str | None, read=_mapping, key=False, section="map", merge=True,
    )  # fmt: skip
    values: Mapping[str, Mapping[str, float]] = _option(
        {}, "--values", "Map written values to P(a better), per FILE column (its name before "
        "--map): COLUMN:VALUE=NUMBER,... e.g. judge_winner:A=1,B=0,tie=0.5 (repeat, or "
        "separate columns with ;); a column or value holding : ; , goes in double quotes. "
        "A/B/tie, [[A]], model names and AlpacaEval 1/2/1.5 need no map.",
        cli=list[str] | None, read=_values, key=False, section="values", merge=True,
    )  # fmt: skip
    swapped_frame: SwappedFrame = _option(
        "original", "--swapped-frame", "How p_a_second (b shown first) is written: original "
        "(A = a, the default) or presented (A = the response shown first, i.e. b; read as "
        "1 - p).", cli=SwappedFrame, read=_choice(SwappedFrame),
    )  # fmt: skip
    confidence: str | None = _option(
        None, "--confidence", "FILE column with the judge's confidence in [0, 1] for its "
        "first-order verdict.", cli=str | None, read=_maybe_text,
    )  # fmt: skip
    confidence_of: ConfidenceOf = _option(
        "winner", "--confidence-of", "winner: the confidence is P(verdict given), so P(a) = "
        "c for A, 1 - c for B (default); a: the confidence is P(a better) itself.",
        cli=ConfidenceOf, read=_choice(ConfidenceOf),
    )  # fmt: skip
    format: ImportFormat | None = _option(
        None, "--format", _FORMAT_HELP, cli=ImportFormat | None,
        read=_choice(ImportFormat, optional=True),
    )  # fmt: skip
    reference_scorer: str | None = _option(
        None, "--reference-scorer", "Inspect logs: the scorer whose grades are the "
        "independent reference of the model-graded scores (e.g. match or includes), for "
        "the favoritism regression.", cli=str | None, read=_maybe_text,
    )  # fmt: skip
    reference_judge: str | None = _option(
        None, "--reference-judge", "Ratings: the judge whose ratings of the same prompt, "
        "model and dimension are the reference of the other judges (its own rows are not "
        "audited).", cli=str | None, read=_maybe_text,
    )  # fmt: skip
    allow_unknown_models: bool = _option(
        False, "--allow-unknown-models", "No effect (kept for old scripts): a model name "
        "missing from the roster is always read as its own model and family, with one note.",
        cli=bool, read=_flag, key=False, api=False, hidden=True,
    )  # fmt: skip
    keep_unknown_models: bool = _option(
        False, "--keep-unknown-models", "No effect (old scripts).", cli=bool, read=_flag,
        key=False, api=False, hidden=True,
    )  # fmt: skip
    data_dir: Path | None = _option(
        None, "--data-dir", "Folder with the named datasets (default: $RECUSE_DATA_DIR).",
        cli=Path | None, read=_path,
    )  # fmt: skip
    figures: FigureFormat = _option("png", "--figures", "Figure format: png or svg.",
                                    cli=FigureFormat, read=_choice(FigureFormat))  # fmt: skip
    title: str = _option("recuse audit", "--title", "Title of the report.", cli=str, read=_text)
    robustness: tuple[str, ...] = _option(
        FAST_CHECKS, "--robustness", "Regression robustness checks: fast (default), all, "
        "none, or a comma list.", cli=str, read=_robustness, cli_default="fast",
    )  # fmt: skip
    se: SE = _option(
        "cluster", "--se", "Regression standard errors: cluster (by prompt, CR1; default), "
        "HC0, HC1 or HC3.", cli=SE, read=_choice(SE),
    )  # fmt: skip
    store: Path | None = _option(
        None, "--store", "A store of `recuse judge`: adds its evaluator card.",
        cli=Path | None, read=_path,
    )  # fmt: skip
    prices: Path | None = _option(
        None, "--prices", "Price table for the card (see `recuse judge card`).",
        cli=Path | None, read=_path,
    )  # fmt: skip
    fdr: bool = _option(
        True, "--fdr/--no-fdr", "Benjamini–Hochberg false-discovery control across the "
        "summary's tests (flags use adjusted values; intervals are raw).", cli=bool, read=_flag,
    )  # fmt: skip
    self_scope: SelfScope = _option(
        "snapshot", "--self-scope", "What counts as the judge's own answer: snapshot (its "
        "exact model id, default; the other snapshots of its line are its family) or line "
        "(every snapshot of its model line, e.g. gpt-4-0314 and gpt-4-0613 for gpt-4-0613).",
        cli=SelfScope, read=_choice(SelfScope),
    )  # fmt: skip
    human_ties: HumanTiesMode = _option(
        "drop", "--human-ties", "Human labels of 0.5 (a tie, or votes split evenly) in the "
        "equal-opportunity and verbosity metrics: drop (left out; default), split (half "
        "a pair to each side) or error (refuse a table that has one).",
        cli=HumanTiesMode, read=_choice(HumanTiesMode),
    )  # fmt: skip
    orders: Orders = _option(
        "both", "--orders", "Presentation orders whose verdicts count: both (averaged, "
        "default), first (p_a_first only) or second (p_a_second only); position needs both.",
        cli=Orders, read=_choice(Orders),
    )  # fmt: skip
    only: tuple[str, ...] = _option(
        (), "--only", "Run only these analyses (ids, comma list or repeated).",
        cli=list[str] | None, read=_analysis_ids,
    )  # fmt: skip
    skip: tuple[str, ...] = _option(
        (), "--skip", "Do not run these analyses (see `recuse analyses`).",
        cli=list[str] | None, read=_analysis_ids,
    )  # fmt: skip
    fail_on: tuple[str, ...] = _option(
        (), "--fail-on", "BIAS=x,...: after writing the report, apply `recuse gate --max` to "
        "it (exit 1 beyond a bound, 3 inconclusive or a judge not measured).",
        cli=list[str] | None, read=_raw_texts, api=False,
    )  # fmt: skip
    skip_unmeasured: bool = _option(
        False, "--skip-unmeasured", "A judge (or dataset) whose bias the report could not "
        "estimate is listed as NOT MEASURED but does not make the gate inconclusive (a gate "
        "that measured nothing at all still is).", cli=bool, read=_flag, api=False,
    )  # fmt: skip
    verbose: bool = _option(
        False, "--verbose", "After the summary table, every finding's sentence with its "
        "warnings, and why each estimate not made was not.", cli=bool, read=_flag, api=False,
        short="-v",
    )  # fmt: skip
    profile: bool = _option(
        False, "--profile", "After the run, print where the time went: each step, each "
        "bootstrap metric with its resamples, each analysis, in seconds.",
        cli=bool, read=_flag, api=False,
    )  # fmt: skip
    material: Mapping[str, float] = _option(
        {}, "--material", "BIAS=X,...: the smallest effect worth acting on (distance from no "
        "bias); flagged cells read material or small, intervals within ±X negligible "
        "(defaults per bias: `recuse analyses`).", cli=list[str] | None, read=_material,
        key=False, section="material", merge=True,
    )  # fmt: skip

    #: where each option's value came from, by field name (:func:`setting_sources`):
    #: ``"cli"``, ``"config:<path>"``, ``"default"``, ``"api"`` or, for a mapping option
    #: given on the command line and in the file, ``"cli + config:<path>"``. Not an
    #: option (no ``Option`` metadata): set by :func:`resolve`.
    sources: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)
    #: the config file's options as it writes them, by field name (its table and key as
    #: spelled there, its line: :attr:`recuse.config.Config.written`), for the words
    #: naming where an option was set (:func:`option_as_set`); set by :func:`resolve`
    written: Mapping[str, Written] = field(default_factory=dict, compare=False, repr=False)

    def option_sources(self, names: Iterable[str] | None = None) -> dict[str, str]:
        """Where each option of ``names`` (field names; default every option) came from,
        keyed by the option's flag without dashes, ``_`` for ``-`` (``n_boot``,
        ``map``, ``self_scope``); default: those :attr:`sources` holds (the options the
        command takes): what report.json's ``provenance.option_sources`` and
        the other commands' JSON (``setting_sources``) hold."""
        specs = settings_fields()
        chosen = self.sources if names is None else names
        return {_key(specs[n]): self.sources.get(n, "default") for n in chosen}

    def said(self, name: str) -> str:
        """Option ``name`` as the user set it (:func:`option_as_set`)."""
        return option_as_set(
            name, getattr(self, name), self.sources.get(name, "default"), written=self.written
        )

    def audit_options(self) -> AuditOptions:
        """The estimation options of the driver (checked as they are made, the
        ``only`` / ``skip`` ids against the registry)."""
        from recuse.analyses import selected
        from recuse.analyses.base import AuditOptions

        options = AuditOptions(
            level=self.level, n_boot=self.n_boot, seed=self.seed, min_n=self.min_n,
            judges=self.judges,
            figure_format=self.figures, se=self.se, robustness=self.robustness,
            only=self.only, skip=self.skip, orders=self.orders, fdr=self.fdr,
            self_scope=self.self_scope, material=dict(self.material),
            human_ties=self.human_ties, sources=dict(self.sources),
            wording=partial(option_as_set, written=dict(self.written)),
        )  # fmt: skip
        selected(options)
        return options

    def reading(self) -> ValueReading:
        """How a plain pairs file writes its verdicts."""
        from recuse.data.value_maps import ValueReading

        return ValueReading(
            values={k: dict(v) for k, v in self.values.items()} or None,
            swapped_frame=self.swapped_frame,
            confidence=self.confidence,
            confidence_of=self.confidence_of,
        )

    def references(self) -> References:
        """Where a ratings file's reference comes from."""
        from recuse.data.importers import References

        return References(scorer=self.reference_scorer or None, judge=self.reference_judge or None)


#: the audit's defaults: the value the other commands' option of the same name
#: (``--level``, ``--n-boot``, ``--seed``, ``--min-n``, ``--orders``, ``--se``) takes,
#: so that ``recuse metrics pairs``, ``favoritism`` and ``plan`` answer as the audit
#: does when no option is given (``tests/cli/test_cli_defaults.py``)
DEFAULTS = Settings()


def settings_fields() -> dict[str, Option]:
    """Every option of :class:`Settings`, by field name (``sources`` is none)."""
    return {f.name: f.metadata["option"] for f in fields(Settings) if "option" in f.metadata}


def _key(spec: Option) -> str:
    """An option's name in a command's JSON record of where it came from: its flag
    without the dashes, ``_`` for ``-`` (``n_boot``, ``map``, ``self_scope``), as the
    commands' ``settings`` name the same options and ``recuse.toml`` reads them too."""
    return spec.flag.split("/")[0].removeprefix("--").replace("-", "_")


#: the source of an option the command line (or a keyword) and the file both gave
#: entries of (a ``merge`` option: ``--map`` and ``[map]``)
MERGED = " + "


def setting_sources(
    given: Iterable[str], *, config: Config | None = None, source: Where = "cli"
) -> dict[str, str]:
    """Where each option's value came from, by field name, for every option: ``source``
    (``"cli"`` or ``"api"``) for those ``given``, ``"config:<path>"`` for those the
    file ``config`` set (its path as it was given: ``recuse.toml``, or ``--config``'s),
    ``"default"`` for the rest; a mapping option (``merge``: ``[map]``, ``[values]``,
    ``[material]``) given in both is ``"cli + config:<path>"``. The one rule of every
    command's record of its settings' sources (:attr:`Settings.sources`).

    >>> from recuse.config import Config
    >>> cfg = Config(Path("recuse.toml"), {"orders": "first", "mapping": {"a": "human"}})
    >>> got = setting_sources(["mapping", "level"], config=cfg)
    >>> got["orders"], got["mapping"], got["level"], got["seed"]
    ('config:recuse.toml', 'cli + config:recuse.toml', 'cli', 'default')
    """
    specs = settings_fields()
    mine = set(given)
    filed = set(config.options) if config is not None else set()
    # the path as text every writer takes (a name in bytes that are not UTF-8, \xNN);
    # imported here: recuse.files (hashlib, gzip, tomllib) is not on `recuse --help`'s path
    from recuse.files import path_text

    shown = path_text(str(config.path)) if config is not None and config.path else ""
    where = "config" + (f":{shown}" if shown else "")
    out: dict[str, str] = {}
    for name, spec in specs.items():
        if name in mine and name in filed and spec.merge:
            out[name] = f"{source}{MERGED}{where}"
        elif name in mine:
            out[name] = source
        elif name in filed:
            out[name] = where
        else:
            out[name] = "default"
    return out


def _toml(value: Any) -> str:
    """``value`` as a recuse.toml writes it: ``"first"``, ``true``, ``0.95``, ``["a"]``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | Path):
        return json.dumps(str(value), ensure_ascii=False)
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return str(value)


def _typed(value: Any) -> str:
    """``value`` as the command line takes it: ``first``, ``0.95``, ``a,b``,
    ``a=human,b=judge``."""
    if isinstance(value, tuple | list):
        return ",".join(map(str, value))
    if isinstance(value, Mapping):
        return ",".join(f"{k}={_typed(v)}" for k, v in value.items())
    return str(value)


def _in_file(name: str, spec: Option, written: Mapping[str, Written] | None) -> Written:
    """Option ``name`` as the file wrote it (``written``), else as docs/configuration.md
    writes it, with its table (``[audit] n-boot``, ``[map]``) and no line."""
    found = (written or {}).get(name)
    if found is not None:
        return found
    return Written(f"[{spec.section}]" if spec.section else f"[audit] {spec.key}", None)


def option_as_set(
    name: str, value: Any, source: str, *, written: Mapping[str, Written] | None = None
) -> str:
    """Option ``name`` (a :class:`Settings` field) at ``value`` in the words of where
    it was set (``source``, as :func:`setting_sources` says it): the flag for the
    command line and a default (``--orders first``), the file's line and the file for
    recuse.toml (``[audit] orders = "first" in recuse.toml line 2``: its table and key as
    the file spells them and the line, from ``written``, :attr:`Settings.written`; it
    wrote ``self-scope = …`` of a file's ``self_scope``, without ``[audit]``), the
    keyword for the Python API (``orders="first"``). The one wording of every message
    that names an option the user set (a skipped estimate's reason, a curve's title, a
    note).

    >>> option_as_set("orders", "first", "cli")
    '--orders first'
    >>> option_as_set("self_scope", "line", "config:conf/recuse.toml",
    ...               written={"self_scope": Written("[audit] self_scope", 3)})
    '[audit] self_scope = "line" in conf/recuse.toml line 3'
    >>> option_as_set("orders", "second", "api")
    'orders="second"'
    >>> option_as_set("fdr", False, "cli"), option_as_set("n_boot", 500, "config:r.toml")
    ('--no-fdr', '[audit] n-boot = 500 in r.toml')
    """
    spec = settings_fields()[name]
    if source.startswith("config"):
        path = source.removeprefix("config:").removeprefix("config") or "the config"
        found = _in_file(name, spec, written)
        line = found.key if spec.section else f"{found.key} = {_toml(value)}"
        return f"{line} {found.at(path)}"
    if source == "api":
        return f"{name}={_toml(value)}"
    on, _, off = spec.flag.partition("/")
    if isinstance(value, bool):
        return on if value else off or f"{on} false"
    return f"{on} {_typed(value)}"


def option_named(
    name: str, source: str, *, written: Mapping[str, Written] | None = None
) -> tuple[tuple[str, str | None], ...]:
    """Option ``name`` (a :class:`Settings` field) named where it was set (``source``, as
    :func:`setting_sources` says it), without its value, one ``(words, config file)`` per
    place: the flag for the command line, the keyword for the Python API, the table and
    the file for recuse.toml (and its line, from ``written``: :func:`option_as_set`); both
    places of a mapping given in both (``cli +
    config:…``); none for a default. An error about the value names only where the user
    set it: a column mapping's named ``--map`` and ``[map] in recuse.toml`` whichever was
    used.

    >>> option_named("mapping", "config:conf/recuse.toml")
    (('[map] in conf/recuse.toml', 'conf/recuse.toml'),)
    >>> option_named("mapping", "cli + config:recuse.toml")
    (('--map', None), ('[map] in recuse.toml', 'recuse.toml'))
    >>> option_named("mapping", "api"), option_named("mapping", "default")
    ((('mapping=', None),), ())
    """
    spec = settings_fields()[name]
    out: list[tuple[str, str | None]] = []
    for part in source.split(MERGED):
        if part.startswith("config"):
            path = part.removeprefix("config:").removeprefix("config") or "the config"
            found = _in_file(name, spec, written)
            out.append((f"{found.key} {found.at(path)}", path))
        elif part == "api":
            out.append((f"{name}=", None))
        elif part == "cli":
            out.append((spec.flag.split("/")[0], None))
    return tuple(out)


def mapping_held(
    places: Sequence[tuple[str, str | None]], given: Mapping[str, Any], config: Config | None
) -> tuple[Any, ...]:
    """The column mapping each place of ``places`` (:func:`option_named`'s) holds: the
    config file's for a recuse.toml, the ``given`` one (the flag's, the keyword's) else."""
    file = config.options.get("mapping") if config is not None else None
    return tuple(given.get("mapping") if path is None else file for _, path in places)


def default(name: str) -> Any:
    """The default value of option ``name``."""
    (f,) = [f for f in fields(Settings) if f.name == name]
    return f.default if f.default_factory is MISSING else f.default_factory()


def _where(
    name: str, spec: Option, source: Where, path: str, key: str | None = None,
    line: int | None = None,
) -> str:  # fmt: skip
    if source == "cli":
        return spec.flag.split("/")[0]
    if source == "api":
        return f"{name} ({spec.flag.split('/')[0]})"
    if line:  # recuse.toml line 3: [audit] level
        path = f"{path} line {line}"
    return (
        f"{path}: [{spec.section}]" if spec.section else f"{path}: {key or f'[audit] {spec.key}'}"
    )


def _read(
    name: str, spec: Option, value: Any, source: Where, path: str, key: str | None,
    line: int | None = None,
) -> Any:  # fmt: skip
    """``spec.read`` of ``value`` (its type and, for the bootstrap's settings, its range);
    an error about a config file's value also names the command-line flag that key
    stands for (``... (the --n-boot option)``), and the file's line where known."""
    where = _where(name, spec, source, path, key, line)
    flag = spec.flag.split("/")[0]
    try:
        return spec.read(value, where)
    except ConfigError as exc:
        if source != "file":
            raise
        raise ConfigError(f"{exc} (the {flag} option)") from None


def _unknown(names: Sequence[str], known: Sequence[str], what: str) -> ConfigError:
    close = difflib.get_close_matches(names[0], known, n=1)
    hint = f" — did you mean {close[0]!r}?" if close else f" — use {', '.join(known)}"
    return ConfigError(f"{what} {names[0]!r}{hint}")


def read_options(
    given: Mapping[str, Any],
    source: Where,
    path: str = "",
    *,
    keys: Mapping[str, str] | None = None,
    lines: Mapping[str, int | None] | None = None,
) -> dict[str, Any]:
    """Each given option read by its field's ``read``: a one-line error naming the flag,
    the keyword (and its flag) or the file, its line (``lines``, by option, where known)
    and key (as ``keys`` says the file wrote it: ``[audit] n-boot``, ``audit.n_boot``) and
    its flag;
    an unknown name is an error with the closest known one."""
    specs = settings_fields()
    allowed = [n for n, s in specs.items() if source != "api" or s.api]
    unknown = [n for n in given if n not in allowed]
    if unknown:
        raise _unknown(unknown, allowed, "recuse.audit: unknown option")
    written, at = keys or {}, lines or {}
    return {
        n: _read(n, specs[n], v, source, path, written.get(n), at.get(n)) for n, v in given.items()
    }


def resolve(
    given: Mapping[str, Any], *, config: Config | None = None, source: Where = "cli"
) -> Settings:
    """The one precedence rule: an option ``given`` (read already, by
    :func:`read_options`; on the command line, or a keyword with ``source="api"``) wins
    over the config file's, which wins over the default; a mapping option (``merge``)
    keeps the file's entries under the given ones. The settings record where each came
    from (:attr:`Settings.sources`, :func:`setting_sources`)."""
    specs = settings_fields()
    chosen: dict[str, Any] = dict(config.options) if config is not None else {}
    for name, value in given.items():
        had = chosen.get(name)
        chosen[name] = {**had, **value} if specs[name].merge and had else value
    return Settings(
        **chosen,
        sources=setting_sources(given, config=config, source=source),
        written=dict(config.written) if config is not None else {},
    )
