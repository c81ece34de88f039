"""The Python interface of ``recuse audit``: :func:`audit` and the :class:`Report` it returns.

``recuse.audit(data, **options)`` takes what the CLI takes: ``data`` is a dataset
name, a file path, a pandas DataFrame or a list of them; the options are the CLI's
(``--map`` is ``mapping={file column: schema column}``, ``--values`` is ``values={file
column: {written value: P(a better)}}``, ``--only`` is ``only=[ids]``, and so on; see
:func:`audit`). A DataFrame is read by the file reader's rules (written to a temporary
Parquet file and read back), so it is validated, mapped and named exactly as a file
would be.

>>> import recuse
>>> from recuse.simulate import simulate_pairs
>>> report = recuse.audit(simulate_pairs(n_prompts=40, seed=1).pairs, only=["position"],
...                       n_boot=200)
>>> sorted(report.findings["bias"].unique())
['position']
"""

from __future__ import annotations

import copy
import inspect
import os
import tempfile
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, fields, replace
from html import escape
from numbers import Number
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from recuse.cells import shown
from recuse.config import Config, load_config
from recuse.data.columns import ColumnMapping
from recuse.data.importers import ImportFormat
from recuse.data.inputs import Input, load_input, load_inputs
from recuse.data.model_names import UnknownModels
from recuse.errors import ConfigError, InputError, notes_naming
from recuse.files import content_sha256, content_size, is_file
from recuse.options import (
    Settings,
    default,
    mapping_held,
    option_named,
    read_options,
    resolve,
    robustness_checks,
    settings_fields,
)
from recuse.renaming import mapping_set_in, renaming_by
from recuse.report import model
from recuse.roster import Roster, SelfScope, no_name_taken
from recuse.tables import ConfidenceOf, SwappedFrame, check_header, index_as_columns

if TYPE_CHECKING:
    from recuse.mitigation.selective import Certification

__all__ = [
    "BASELINE_COLUMNS", "FINDING_COLUMNS", "Report", "audit", "certify", "context_roster",
    "robustness_checks", "run",
]  # fmt: skip

Data = str | Path | pd.DataFrame

FINDING_COLUMNS = (
    "judge", "bias", "bias_title", "dataset", "detail", "estimate", "ci_low", "ci_high",
    "level", "null", "unit", "n", "clusters", "p_value", "q_value", "significant",
    "flagged", "direction", "materiality", "material", "adjustment_note", "headline",
    "warnings", "notes", "verdict", "definition", "method", "fixed_by_construction",
    "absolute_value", "interval_rule", "heaviest_prompt",
)  # fmt: skip


#: the columns of :attr:`Report.baselines`
BASELINE_COLUMNS = (
    "dataset", "metric", "title", "estimate", "ci_low", "ci_high", "level", "null", "unit",
    "n", "n_clusters", "p_value", "definition", "method", "sentence",
)  # fmt: skip


@dataclass(frozen=True)
class Report:
    """An audit's result for scripts: :attr:`findings` as a table, and the writers.

    ``result`` is the full report object (:class:`recuse.report.model.AuditReport`: sections,
    figures, tables, skipped analyses, provenance) that the HTML and JSON are made from.
    """

    result: model.AuditReport

    @property
    def findings(self) -> pd.DataFrame:
        """One row per finding (every judge × bias × dataset estimate, headline or
        section-only): its estimate and interval, the no-bias value (``null``) and
        ``unit`` (in a few words; ``definition`` says it in full) from the
        :class:`~recuse.report.bias.Bias` that computed it, ``n`` (and ``clusters``,
        whole numbers; missing, ``<NA>``, for a value fixed by construction, which rests
        on no sample, null in report.json), the p- and
        false-discovery-adjusted q-value, ``significant`` (the interval excludes
        ``null``), ``flagged`` (one of the summary's tests, significant and not
        negligible: what the report colours and counts; a number beside a headline is
        never flagged, :attr:`~recuse.report.model.Finding.flagged`), ``materiality``
        (material / small / negligible / ""), its ``warnings`` and ``notes`` (tuples of
        sentences; a note is no caveat: :attr:`~recuse.report.model.Finding.notes`), its
        verdict sentence, and which rule made its interval with the exact bound's
        prompt factor (``interval_rule``, ``heaviest_prompt``: as report.json has them).
        Columns: :data:`FINDING_COLUMNS`."""
        rows = []
        for f in self.result.findings:
            d = f.to_dict() | {"unit": f.bias.short_unit, "definition": f.bias.unit}
            rows.append(
                {c: d.get(c) for c in FINDING_COLUMNS}
                | {"warnings": tuple(f.warnings), "notes": tuple(f.notes)}
            )
        frame = pd.DataFrame(rows, columns=list(FINDING_COLUMNS))
        # whole numbers beside a fixed value's missing n (not 51.0 pairs, 73.0 prompts)
        return frame.astype({"n": "Int64", "clusters": "Int64"})

    @property
    def baselines(self) -> pd.DataFrame:
        """One row per number of the labels that is no judge's bias, hence no finding:
        the humans' preference for the longer answer of a table with human labels and
        no judge (hh-rlhf 0.44 [0.42, 0.46], the baseline a judge's verbosity is read
        against), as report.json's sections' ``baselines`` hold it, with ``sentence``
        as the terminal says it. Empty where there is none. Columns:
        :data:`BASELINE_COLUMNS`."""
        rows = [b.to_dict() | {"sentence": b.sentence} for b in self.result.baselines]
        return pd.DataFrame(
            [{c: r.get(c) for c in BASELINE_COLUMNS} for r in rows],
            columns=list(BASELINE_COLUMNS),
        )

    @property
    def skipped(self) -> pd.DataFrame:
        """What could not be estimated, and why: one row per analysis/dataset/judge."""
        rows = [k.to_dict() for k in self.result.skipped]
        return pd.DataFrame(rows)

    # each path is checked as the CLI checks its --out (recuse.outputs.check_output): a
    # pipe or device is not replaced by a file, "-" is not written as a file so named,
    # a file given as the folder is said to be one (it was "File exists")

    def to_json(self, path: str | Path) -> Path:
        """Write ``report.json`` (schema: ``recuse/report/report.schema.json``) to ``path``."""
        from recuse import outputs
        from recuse.report.export import write_json

        target = outputs.check_output(path, option="Report.to_json")
        return write_json(self.result, target, option="Report.to_json")

    def to_html(self, path: str | Path) -> Path:
        """Write the HTML report (one self-contained page) to ``path``."""
        from recuse import outputs
        from recuse.report.html import render_html

        target = outputs.check_output(path, option="Report.to_html")
        return outputs.write_text(target, render_html(self.result), option="Report.to_html")

    def write(self, folder: str | Path) -> dict[str, Path]:
        """``report.html``, ``report.json`` and ``tables/*.csv`` under ``folder``, as the
        CLI writes them."""
        from recuse import outputs
        from recuse.report.export import REPORT_FOLDERS, write_report

        # the folders above it are created, as they always were (the CLI's --out needs
        # its parent: a typo there is a folder no one asked for)
        target = outputs.check_output_folder(
            folder, option="Report.write", folders=REPORT_FOLDERS, parents=True
        )
        return write_report(self.result, target)

    def __repr__(self) -> str:
        n = len(self.result.findings)
        flagged = sum(f.flagged for f in self.result.findings)
        # a labels-only table's number (hh-rlhf) read "0 findings, 0 flagged" alone
        bases = "".join(f"; {b.dataset}: {b.sentence}" for b in self.result.baselines)
        return f"<recuse.Report {self.result.title!r}: {n} findings, {flagged} flagged{bases}>"

    def _repr_html_(self) -> str:
        """In a notebook: the summary matrix (judge × bias: estimate [interval], n, reading)."""
        from recuse.report.summary_table import summary_html

        title = escape(self.result.title)
        return f"<div><b>{title}</b>{summary_html(self.result)}</div>"


def _as_path(data: Any) -> Any:
    """``data`` as a :class:`~pathlib.Path` where it is another path object
    (``os.PathLike``: ``PurePosixPath``, a path library's), else as it is."""
    if isinstance(data, os.PathLike) and not isinstance(data, Path):
        name = os.fspath(data)
        return Path(name) if isinstance(name, str) else data
    return data


def _items(data: Any) -> list[Data]:
    """``data`` as a list of names, paths and DataFrames (anything else: one line)."""
    data = _as_path(data)
    if isinstance(data, str | Path | pd.DataFrame):
        return [data]
    items = [_as_path(x) for x in data] if isinstance(data, list | tuple) else [data]
    if not items:
        raise ConfigError("audit needs at least one dataset name, file or DataFrame")
    bad = [x for x in items if not isinstance(x, str | Path | pd.DataFrame)]
    if bad:
        raise ConfigError(
            "audit: data must be dataset names, file paths or pandas DataFrames (or a list of "
            f"them); got a {type(bad[0]).__name__}"
        )
    seen: dict[object, str | Path] = {}
    for x in items:
        if isinstance(x, pd.DataFrame):
            continue
        # a path too long to look at is is_file's one-line error (Path.exists raised it)
        key = Path(x).resolve() if is_file(x) or is_file(x, folder=True) else str(x)
        if key in seen:
            same = "" if str(seen[key]) == str(x) else f" (as {str(seen[key])!r})"
            raise ConfigError(
                f"{str(x)!r} is given twice{same}: its rows would be audited twice, as two "
                "inputs, each estimate shown and tested twice — give each dataset or file once"
            )
        seen[key] = x
    _no_copies([x for x in seen.values() if is_file(x)])
    return items


def _no_copies(files: Sequence[str | Path]) -> None:
    """Two files holding the same bytes under two names (a backup copy caught by a glob,
    or ``a.csv`` and its gzip copy ``a.csv.gz``) are one table audited twice, as a file
    given twice is: refused. Only files of one size (a ``.gz`` file's decompressed size)
    are read (hashed), so distinct inputs cost a ``stat`` each. Empty files are left to
    the reader, which says the file is empty: they hold no rows to audit twice."""
    sizes: dict[int, list[str | Path]] = {}
    for x in files:
        with suppress(OSError):  # unreadable: the reader's own error says so, later
            if (size := content_size(x)) > 0:
                sizes.setdefault(size, []).append(x)
    for same_size in (group for group in sizes.values() if len(group) > 1):
        digests: dict[str, str | Path] = {}
        for x in same_size:
            try:
                digest = content_sha256(x)
            except OSError:  # (a broken gzip stream too) the reader says why, later
                continue
            if digest in digests:
                raise ConfigError(
                    f"{_as_read(x)} holds the same bytes as {_as_read(digests[digest])}: its "
                    "rows would be audited twice, as two inputs, each estimate shown and "
                    "tested twice — give each file once"
                )
            digests[digest] = x


def _as_read(path: str | Path) -> str:
    """``path`` quoted, a ``.gz`` file said to be read decompressed."""
    return f"{str(path)!r}{' decompressed' * str(path).endswith('.gz')}"


def _as_stored(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` as a file holds it: its named index levels as columns (as ``to_csv``
    writes them: ``set_index("human")`` left a table without labels), and each object
    column holding both text and numbers (ids ``7`` and ``"x7"``, verdicts ``"A"`` and
    ``0.5``), which no Parquet column type holds, as text (as a CSV holds it), which its
    reader reads back as the DataFrame's values. Missing cells stay missing, and so is
    ``""`` there (a CSV's empty cell: ``fillna("")``); a column also holding a list or a
    ``True`` is left as it is (the error storing it names it). Its ``attrs`` are left
    behind: no file's content (pandas writes them into Parquet as JSON, and a value
    JSON cannot hold was an error telling the user to fix the columns)."""
    frame = index_as_columns(frame)
    text = {}
    for name in frame.columns:
        s = frame[name]
        if s.dtype != object:  # pandas' own text type (str) holds text alone
            continue
        if pd.api.types.infer_dtype(s, skipna=True) not in ("mixed", "mixed-integer"):
            continue
        present = s[s.notna()]
        if present.map(
            lambda v: isinstance(v, str | Number) and not isinstance(v, bool | np.bool_)
        ).all():
            written = s.map(lambda v: v if isinstance(v, str) else str(v))
            # "" is a CSV's empty cell: missing (a table after fillna(""))
            text[name] = written.where(s.notna() & (written != ""))
    if not text and not frame.attrs:
        return frame
    out = frame.copy(deep=False)  # the caller's frame is left as it was
    out.attrs = {}
    for name, column in text.items():
        out[name] = column
    return out


def _frame_input(frame: pd.DataFrame, k: int, total: int, folder: Path, **kwargs: Any) -> Input:
    """A DataFrame read by the file reader's rules (via a Parquet file)."""
    name = "dataframe" if total == 1 else f"dataframe-{k + 1}"
    path = folder / f"{name}.parquet"
    # errors and notes name the DataFrame, not the temporary file the user never made
    label = f"{name} (the DataFrame given)"
    check_header(frame, file=label)
    try:
        _as_stored(frame).to_parquet(path, index=False)
    except (ValueError, TypeError, NotImplementedError, ImportError) as exc:
        # NotImplementedError: pyarrow's ArrowNotImplementedError (a complex column)
        raise InputError(
            f"the DataFrame could not be stored as a table ({exc})",
            file=label,
            fix="give each column one type (numbers, or text)",
        ) from exc
    # the notes name the DataFrame as they are made (errors.notes_naming), in this thread
    # only, changing no warnings state another thread's code could undo meanwhile
    with notes_naming(str(path), label):
        try:
            inp = load_input(path, **kwargs)
        except InputError as err:
            if err.file != str(path):
                raise
            raise InputError(
                err.reason.replace(str(path), label),
                file=label,
                row=err.row,
                column=err.column,
                fix=err.fix.replace(str(path), label) if err.fix else None,
            ) from None
    source = replace(inp.source, name=name, location="(a DataFrame in memory)", files=())
    return replace(inp, name=name, source=source)


def context_roster(roster: Roster | str | Path | None, config: Config | None) -> Roster:
    """The one roster of an audit: ``roster`` (an object, or a TOML file extending the
    built-in one; default the built-in one) with the config file's ``[[model]]`` entries.
    A roster object is copied: the run adds the data's unknown model names to its roster
    (:meth:`Roster.keep`), and the caller's is left as it was for the next run."""
    if roster is not None and not isinstance(roster, Roster | str | Path):
        raise ConfigError(
            f"roster = {type(roster).__name__}: give a recuse.Roster or a roster TOML file"
        )
    base = copy.deepcopy(roster) if isinstance(roster, Roster) else Roster.load(roster)
    if config is not None:
        no_name_taken(base, config.models, str(config.path or "recuse.toml"))
        for entry in config.models:
            base.add(entry)
    return base


def _card_prices(settings: Settings, roster: Roster) -> Any:
    """The card's inputs, checked before the work: the store exists, prices go with it."""
    if settings.prices is not None and settings.store is None:
        raise ConfigError("--prices goes with --store (it prices the store's evaluator card)")
    if settings.store is not None and not is_file(settings.store):
        from recuse.judging.store import no_store

        raise no_store(Path(settings.store), fix="give a store of `recuse judge`")
    if settings.prices is None:
        return None
    from recuse.judging.card import read_prices

    return read_prices(settings.prices, roster=roster)


def _with_card(result: model.AuditReport, store: Path, prices: Any) -> model.AuditReport:
    """The report with the evaluator-card section of the judgments in ``store``."""
    from recuse.analyses.card import card_section
    from recuse.judging import Store
    from recuse.judging.card import cards

    with Store(store, read_only=True) as s:
        found = cards(s.runs(), prices, s.judge_prompts())
    if not found:
        return result
    names = [c.judge for c in found]
    unpriced = prices.unmatched_notes(names, str(store)) if prices is not None else []
    # a run no real run could have recorded: named, in nothing the card counts
    damaged = [
        f"{d}: the store is damaged there; not on the card" for c in found for d in c.damaged
    ]
    section = card_section(found, str(store), notes=[*unpriced, *damaged])
    return replace(result, sections=(*result.sections, section))


def run(
    data: Data | Sequence[Data],
    settings: Settings,
    *,
    roster: Roster,
    progress: Callable[[str], None] | None = None,
    unknown_models: UnknownModels = "keep",
) -> model.AuditReport:
    """The audit of ``data`` with resolved ``settings`` and the context's ``roster``:
    load each input (a DataFrame by the file reader's rules), run the analyses, add the
    evaluator card of ``settings.store``. What the CLI and :func:`audit` both call."""
    if unknown_models not in ("keep", "error"):
        raise ConfigError(f"unknown_models = {unknown_models!r}: use 'keep' or 'error'")
    from recuse.driver import run_audit

    items = _items(data)
    options = settings.audit_options()  # checked as it is made, before the work
    prices = _card_prices(settings, roster)
    kwargs: dict[str, Any] = {
        "table": settings.table, "data_dir": settings.data_dir, "roster": roster,
        "mapping": dict(settings.mapping) or None, "format": settings.format,
        "reading": settings.reading(), "references": settings.references(),
        "unknown_models": unknown_models,
    }  # fmt: skip
    loaded: list[Input] = []
    timings = []
    frames, k = sum(isinstance(x, pd.DataFrame) for x in items), 0
    with tempfile.TemporaryDirectory(prefix="recuse-frames-") as tmp:
        for item in items:
            start = time.perf_counter()
            if isinstance(item, pd.DataFrame):
                loaded.append(_frame_input(item, k, frames, Path(tmp), **kwargs))
                k += 1
            else:
                loaded.extend(load_inputs(item, **kwargs))
            timings.append((f"load {loaded[-1].name}", time.perf_counter() - start))
    result = run_audit(
        loaded, options=options, roster=roster, title=settings.title, timings=timings,
        progress=progress,
    )  # fmt: skip
    return _with_card(result, settings.store, prices) if settings.store is not None else result


def audit(
    data: Data | Sequence[Data],
    *,
    config: str | Path | Config | None = None,
    roster: Roster | str | Path | None = None,
    progress: Callable[[str], None] | None = None,
    unknown_models: UnknownModels = "keep",
    **options: Any,
) -> Report:
    """Audit ``data`` (a dataset name, a file, a DataFrame, or a list of them) with the
    CLI's options, as keywords (every field of :class:`recuse.options.Settings` that the
    API takes; ``help(recuse.audit)`` lists them with their defaults): ``mapping``
    (``--map``), ``values`` (``--values``, per file column), ``swapped_frame``,
    ``confidence``, ``confidence_of``, ``table``, ``format``, ``reference_scorer``,
    ``reference_judge``, ``data_dir``, ``judges`` (``--judge``), ``level``, ``n_boot``,
    ``seed``, ``min_n`` (``--min-n``: smallest group estimated), ``only`` / ``skip``
    (analysis ids, see ``recuse analyses``), ``orders``,
    ``fdr``, ``se``, ``robustness``, ``figures``, ``title``, ``material``
    (``--material``: {bias key: smallest effect worth acting on}), ``self_scope``
    (``--self-scope``), ``human_ties`` (``--human-ties``: drop, split or error, as in
    ``recuse metrics pairs``), ``store`` and ``prices`` (the evaluator card of a judge
    store).
    ``roster``: a :class:`~recuse.Roster` or a TOML file extending the built-in one;
    a model name it lacks is read as its own model and family, with a note
    (``unknown_models="keep"``), or refused (``"error"``, which lists them all).
    ``progress``: called with each step's name as the audit reaches it. ``config``: a
    ``recuse.toml`` (path or :class:`~recuse.config.Config`) whose options apply where
    a keyword is not given (the CLI's rule, :func:`recuse.options.resolve`); its map,
    value maps and materiality are merged under the keywords', its ``[[model]]``
    entries added to the roster.

    Bad input raises :class:`~recuse.errors.RecuseError` (an ``InputError`` naming the
    file, row, column and fix; a ``ConfigError`` naming the option)."""
    items = _items(data)
    cfg = config if isinstance(config, Config) or config is None else load_config(config)
    given = read_options(options, "api")
    settings = resolve(given, config=cfg, source="api")
    keywords = [n for n, spec in settings_fields().items() if spec.api]  # those it takes
    settings = replace(settings, sources={n: settings.sources[n] for n in keywords})
    rost = context_roster(roster, cfg)
    with renaming_by("keyword"):  # a column mapping's errors name where it was set
        named = option_named("mapping", settings.sources["mapping"], written=settings.written)
        mapping_set_in(named or None, mapping_held(named, given, cfg))
        return Report(
            run(items, settings, roster=rost, progress=progress, unknown_models=unknown_models)
        )


def _signature() -> inspect.Signature:
    """``recuse.audit``'s signature as ``help()`` and notebooks show it: ``data``, then
    every API option of :class:`~recuse.options.Settings` with its default."""
    kw = inspect.Parameter.KEYWORD_ONLY
    base = inspect.signature(audit).parameters
    params = [base["data"]]
    for f in fields(Settings):
        if "option" in f.metadata and f.metadata["option"].api:
            params.append(inspect.Parameter(f.name, kw, default=default(f.name), annotation=f.type))
    params += [base[n] for n in ("config", "roster", "progress", "unknown_models")]
    return inspect.Signature(params, return_annotation="Report")


audit.__signature__ = _signature()  # type: ignore[attr-defined]


def _ids(value: str | Sequence[str] | None) -> tuple[str, ...]:
    """Names given as one comma-separated text or a sequence of them."""
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else list(value)
    return tuple(v.strip() for text in items for v in str(text).split(",") if v.strip())


#: the most USD per 1,000 judgments a price may be: more is no judge's price (a
#: million dollars a judgment), and a cascade's cost, summed over its stages, of prices
#: near the largest float is an infinite cost that no JSON holds
MAX_USD = 1e9


def price_key(name: str, roster: Roster, present: Collection[str] = ()) -> tuple[str, str]:
    """The judge a price names, as :func:`checked_costs` keeps it, and the key that its
    other names share: a judge ``present`` (an alias or another case of it: ``GPT-4``
    for ``gpt-4``) both times; else the name as given, keyed by the roster's id for it
    (``gpt4`` and ``GPT-4`` are one judge) or, for a name the roster lacks, its
    case-folded form.

    >>> price_key("GPT-4", Roster.builtin(), {"gpt-4"}), price_key("My-Judge", Roster.builtin())
    (('gpt-4', 'gpt-4'), ('My-Judge', 'my-judge'))
    """
    name = name.strip()
    try:
        judge = roster.judge_in(name, present)
    except ConfigError:
        judge = name
    if judge in present:
        return judge, judge
    return name, roster.canonical(name) if name in roster else name.casefold()


def checked_costs(
    prices: Iterable[tuple[object, object]],
    roster: Roster,
    present: Iterable[str] = (),
    *,
    option: str = "costs",
) -> dict[str, float]:
    """The one check of judges' prices, USD per 1,000 judgments, that ``certify``'s
    ``costs`` and ``recuse certify --cost JUDGE=USD`` share (``option`` names the door in
    the messages): each price a number from 0 to :data:`MAX_USD` (``-0`` is 0); each
    judge named as the data names it (``present``: an alias or another case of a judge
    present, ``GPT-4`` for ``gpt-4``); one judge named twice at two prices is an error
    (twice at one price is one price). A name that is no judge present is kept as given
    (a price list may name more judges than one table holds), and is one judge with the
    names the roster gives the same id, or that differ only in case.

    >>> checked_costs([("GPT-4", 30), ("gpt-4", 30.0)], Roster.builtin(), {"gpt-4"})
    {'gpt-4': 30.0}
    """
    judges = frozenset(present)
    example = f"{option} gpt-4=30" if option.startswith("-") else f"{option}={{'gpt-4': 30}}"
    out: dict[str, float] = {}
    seen: dict[str, tuple[str, str]] = {}  # a judge's key: its name as given, its name in out
    for given, usd in prices:
        if not isinstance(given, str) or not given.strip():
            raise ConfigError(
                f"{option}: {shown(given)} names no judge — give each price under the judge's "
                f"name, e.g. {example}"
            )
        name = given.strip()
        value = None
        if isinstance(usd, int | float | np.integer | np.floating) and not isinstance(usd, bool):
            with suppress(OverflowError):  # an int past any float is none (a numpy
                value = float(usd)  # bool is no np.integer)
        if value is None or not 0 <= value <= MAX_USD:
            raise ConfigError(
                f"{option}: {name!r} = {shown(usd) if value is None else f'{value:g}'} is no "
                f"price — give USD per 1,000 judgments, a number from 0 to {MAX_USD:g}, "
                f"e.g. {example}"
            )
        price = value + 0.0  # -0 is 0
        judge, key = price_key(name, roster, judges)
        if key not in seen:
            seen[key] = (name, judge)
        first, held = seen[key]
        if out.get(held, price) != price:
            who = judge if judge in judges else key  # the id the names share
            twice = (
                f"{first!r} is priced twice,"
                if first == name
                else f"{first!r} and {name!r} are both judge {who!r}, priced"
            )
            raise ConfigError(
                f"{option}: {twice} {out[held]:g} and {price:g} — give one price per judge"
            )
        out[held] = price
    return out


def _costs(
    costs: Mapping[str, float] | None, roster: Roster, present: set[str]
) -> dict[str, float] | None:
    """``certify``'s ``costs``, checked by :func:`checked_costs`."""
    if costs is None:
        return None
    if not isinstance(costs, Mapping):
        raise ConfigError(
            f"costs = {type(costs).__name__}: give {{judge: USD per 1,000 judgments}}, "
            "e.g. costs={'gpt-4': 30}"
        )
    return checked_costs(costs.items(), roster, present)


def certify(
    data: Data,
    *,
    agreement: float = 0.85,
    delta: float = 0.1,
    judges: str | Sequence[str] | None = None,
    cascade: str | Sequence[str] | None = None,
    strata: bool = True,
    human_ties: Literal["exclude", "count"] = "exclude",
    recalibrate: bool = False,
    folds: int = 5,
    seed: int = 0,
    min_labels: int = 30,
    costs: Mapping[str, float] | None = None,
    self_scope: SelfScope = "snapshot",
    mapping: ColumnMapping | None = None,
    values: Mapping[str, Mapping[str, float]] | None = None,
    swapped_frame: SwappedFrame = "original",
    confidence: str | None = None,
    confidence_of: ConfidenceOf = "winner",
    format: ImportFormat | None = None,
    roster: Roster | str | Path | None = None,
    data_dir: str | Path | None = None,
) -> Certification:
    """Certify judges on a labelled pairs table (``recuse certify``): per judge and
    stratum (own / family / other answers) the confidence threshold chosen by
    fixed-sequence testing so that ``P(agreement with the labels on kept items ≥
    agreement) ≥ 1 − delta``, assuming calibration and future items are exchangeable;
    ``cascade`` (judge names in order) adds a cascade ending with a person, each stage
    at ``delta / m``. ``costs``: USD per 1,000 judgments per judge. ``mapping``,
    ``values``, ``swapped_frame``, ``confidence`` and ``confidence_of`` read a file as
    :func:`audit` reads it (``--map``, ``--values``, ...). Formulas:
    :mod:`recuse.mitigation.selective`. Returns a frozen
    :class:`~recuse.mitigation.selective.Certification` (``.table``, ``.to_dict()``,
    ``.thresholds()`` for ``recuse certify apply``)."""
    from recuse.mitigation.selective import Options, certify_judges

    o = Options(target=agreement, delta=delta, strata=strata, human_ties=human_ties,
                recalibrate=recalibrate, folds=folds, seed=seed, min_labels=min_labels,
                self_scope=self_scope)  # fmt: skip
    o.check()  # before the data is read; the labels' kind comes with it
    data = _as_path(data)  # a PurePosixPath was read before it was refused
    if not isinstance(data, str | Path | pd.DataFrame):  # a list of frames was read as a
        # path made of the frames' repr: "cannot look at this path (... longer than ...)"
        raise ConfigError(
            "certify: data must be one dataset name, file path or pandas DataFrame (one "
            f"labelled pairs table); got a {type(data).__name__}"
        )
    for option, given in (("--judge", judges), ("--cascade", cascade)):
        if given is None:
            continue
        text = given if isinstance(given, str) else ",".join(map(str, given))
        names = text.split(",")
        if not _ids(given) or not all(n.strip() for n in names):
            # `--cascade ,` ran no cascade, `--cascade a,,b` a cascade of a and b
            what = "names no judge" if not _ids(given) else "has an empty name (a comma too many)"
            raise ConfigError(
                f"{option} {text!r} {what}: give judge names separated by commas, e.g. "
                f"{option} gpt-3.5-turbo,gpt-4 (or leave {option} out)"
            )
    roster = context_roster(roster, None)
    written = {"values": values or {}, "swapped_frame": swapped_frame, "confidence": confidence,
               "confidence_of": confidence_of}  # fmt: skip
    # checked as the audit's are, and recorded as the Python API's
    reading = resolve(read_options(written, "api"), source="api").reading()
    kwargs: dict[str, Any] = {"table": "pairs", "data_dir": data_dir, "roster": roster,
                              "mapping": mapping, "format": format, "reading": reading}  # fmt: skip
    if isinstance(data, pd.DataFrame):
        with tempfile.TemporaryDirectory(prefix="recuse-frames-") as tmp:
            inp = _frame_input(data, 0, 1, Path(tmp), **kwargs)
    else:
        inp = load_input(data, **kwargs)
    present = {str(j) for j in inp.frame["judge"].dropna()} if "judge" in inp.frame else set()
    chosen = [roster.judge_in(j, present) for j in _ids(judges)] if present else None
    stages = [roster.judge_in(j, present) for j in _ids(cascade)] if cascade and present else None
    for judge in dict.fromkeys(stages or []):
        spelled = [g for g, s in zip(_ids(cascade), stages or [], strict=True) if s == judge]
        if len(spelled) > 1:  # as written: two spellings of one judge read as one
            raise ConfigError(
                f"the cascade names judge {judge!r} twice ({', '.join(map(repr, spelled))}): "
                "a judge decides once — give each judge once"
            )
    # the guarantees name the labels as the input declares them (recuse.reference)
    o = replace(o, reference=inp.source.reference)
    prices = _costs(costs, roster, present)
    try:
        done = certify_judges(inp.frame, roster, o, judges=chosen or None, cascade=stages,
                              costs=prices)  # fmt: skip
    except InputError as exc:  # of the table as a whole ("the table has no human labels")
        if exc.file is not None or isinstance(data, pd.DataFrame):
            raise
        raise InputError(exc.reason, file=inp.source.shown_location, row=exc.row,
                         column=exc.column, fix=exc.fix, line=exc.line) from None  # fmt: skip
    # how the verdicts were read: the thresholds file keeps it, so `certify apply` reads
    # new verdicts alike (a second order read in the other frame turns flips into
    # consistent pairs)
    how = {"swapped_frame": reading.swapped_frame, "confidence": reading.confidence,
           "confidence_of": reading.confidence_of}  # fmt: skip
    notes = (*inp.source.notes, *done.notes)
    return replace(done, notes=notes, settings={**done.settings, "reading": how})
