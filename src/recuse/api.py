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
['first_position_rate', 'flip_rate', 'position_consistency']
"""

from __future__ import annotations

import inspect
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from html import escape
from pathlib import Path
from typing import Any

import pandas as pd

from recuse.analyses.base import SE, AuditOptions
from recuse.config import Config, load_config
from recuse.data.generic import ValueReading, check_value_map
from recuse.data.importers import ImportFormat
from recuse.data.inputs import Input, TableKind, load_input
from recuse.errors import ConfigError, InputError
from recuse.metrics.bootstrap import N_BOOT
from recuse.metrics.verdicts import Orders
from recuse.report import model
from recuse.roster import Roster, SelfScope
from recuse.tables import ConfidenceOf, SwappedFrame

__all__ = ["FINDING_COLUMNS", "Report", "audit", "robustness_checks"]

Data = str | Path | pd.DataFrame

FINDING_COLUMNS = (
    "judge", "bias", "bias_title", "dataset", "detail", "estimate", "ci_low", "ci_high",
    "level", "null", "unit", "n", "clusters", "p_value", "q_value", "significant",
    "flagged", "direction", "materiality", "material", "headline", "warnings", "verdict",
    "definition", "method",
)  # fmt: skip


@dataclass(frozen=True)
class Report:
    """An audit's result for scripts: :attr:`findings` as a table, and the writers.

    ``result`` is the full report object (:class:`recuse.report.model.Report`: sections,
    figures, tables, skipped analyses, provenance) that the HTML and JSON are made from.
    """

    result: model.Report

    @property
    def findings(self) -> pd.DataFrame:
        """One row per finding (every judge × bias × dataset estimate, headline or
        section-only): its estimate and interval, the no-bias value (``null``) and
        ``unit`` (in a few words; ``definition`` says it in full) from the
        :class:`~recuse.report.bias.Bias` that computed it, ``n``, the p- and
        false-discovery-adjusted q-value, ``significant`` (the interval excludes
        ``null``), ``flagged`` (significant and not negligible: what the report
        colours and counts), ``materiality`` (material / small / negligible / ""), its
        ``warnings`` (a tuple of sentences) and its verdict sentence. Columns:
        :data:`FINDING_COLUMNS`."""
        rows = []
        for f in self.result.findings:
            d = f.to_dict() | {"unit": f.bias.short_unit, "definition": f.bias.unit}
            rows.append({c: d.get(c) for c in FINDING_COLUMNS} | {"warnings": tuple(f.warnings)})
        return pd.DataFrame(rows, columns=list(FINDING_COLUMNS))

    @property
    def skipped(self) -> pd.DataFrame:
        """What could not be estimated, and why: one row per analysis/dataset/judge."""
        rows = [k.to_dict() for k in self.result.skipped]
        return pd.DataFrame(rows)

    def to_json(self, path: str | Path) -> Path:
        """Write ``report.json`` (schema: ``recuse/report/report.schema.json``) to ``path``."""
        from recuse.report.export import write_json

        return write_json(self.result, path)

    def to_html(self, path: str | Path) -> Path:
        """Write the HTML report (one self-contained page) to ``path``."""
        from recuse import outputs
        from recuse.report.html import render_html

        return outputs.write_text(path, render_html(self.result))

    def write(self, folder: str | Path) -> dict[str, Path]:
        """``report.html``, ``report.json`` and ``tables/*.csv`` under ``folder``, as the
        CLI writes them."""
        from recuse.report.export import write_report

        return write_report(self.result, folder)

    def __repr__(self) -> str:
        n = len(self.result.findings)
        flagged = sum(f.flagged for f in self.result.findings)
        return f"<recuse.Report {self.result.title!r}: {n} findings, {flagged} flagged>"

    def _repr_html_(self) -> str:
        """In a notebook: the summary matrix (judge × bias: estimate [interval], n, reading)."""
        from recuse.report.summary_table import summary_html

        title = escape(self.result.title)
        return f"<div><b>{title}</b>{summary_html(self.result)}</div>"


def robustness_checks(spec: str | Sequence[str]) -> tuple[str, ...]:
    """``fast`` / ``all`` / ``none`` / a comma list (or a list) of regression checks."""
    from recuse.driver import FAST_CHECKS
    from recuse.regression.robustness import CHECKS

    if isinstance(spec, str):
        named = {"fast": FAST_CHECKS, "all": ("all",), "none": ()}
        if spec in named:
            return tuple(named[spec])
        spec = [c.strip() for c in spec.split(",") if c.strip()]
    checks = tuple(spec)
    unknown = [c for c in checks if c not in (*CHECKS, "all")]
    if unknown:
        raise ConfigError(
            f"--robustness: unknown check(s) {', '.join(unknown)} — use fast, all, none "
            f"or a comma list of {', '.join(CHECKS)}"
        )
    return checks


def _ids(value: str | Sequence[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else list(value)
    return tuple(v.strip() for text in items for v in str(text).split(",") if v.strip())


def _frame_input(frame: pd.DataFrame, k: int, total: int, folder: Path, **kwargs: Any) -> Input:
    """A DataFrame read by the file reader's rules (via a Parquet file)."""
    name = "dataframe" if total == 1 else f"dataframe-{k + 1}"
    path = folder / f"{name}.parquet"
    try:
        frame.to_parquet(path, index=False)
    except (ValueError, TypeError, ImportError) as exc:
        raise InputError(
            f"{name}: the DataFrame could not be stored as a table ({exc})",
            fix="give each column one type (numbers, or text)",
        ) from exc
    inp = load_input(path, **kwargs)
    source = replace(inp.source, name=name, location="(a DataFrame in memory)", files=())
    return replace(inp, name=name, source=source)


def audit(
    data: Data | Sequence[Data],
    *,
    mapping: Mapping[str, str] | None = None,
    values: Mapping[str, Mapping[str, float]] | None = None,
    swapped_frame: SwappedFrame = "original",
    confidence: str | None = None,
    confidence_of: ConfidenceOf = "winner",
    table: TableKind | None = None,
    format: ImportFormat | None = None,
    roster: Roster | str | Path | None = None,
    data_dir: str | Path | None = None,
    judges: str | Sequence[str] | None = None,
    level: float = 0.9,
    n_boot: int = N_BOOT,
    seed: int = 0,
    only: str | Sequence[str] | None = None,
    skip: str | Sequence[str] | None = None,
    orders: Orders = "both",
    fdr: bool = True,
    se: SE = "cluster",
    robustness: str | Sequence[str] = "fast",
    figures: model.FigureFormat = "png",
    title: str = "recuse audit",
    material: Mapping[str, float] | None = None,
    self_scope: SelfScope = "snapshot",
    config: str | Path | Config | None = None,
    progress: Callable[[str], None] | None = None,
) -> Report:
    """Audit ``data`` (a dataset name, a file, a DataFrame, or a list of them) with the
    CLI's options, as keywords: ``mapping`` (``--map``), ``values`` (``--values``, per
    file column), ``swapped_frame``, ``confidence``, ``confidence_of``, ``table``,
    ``format``, ``roster`` (a :class:`~recuse.Roster` or a
    TOML file extending the built-in one), ``data_dir``, ``judges`` (``--judge``),
    ``level``, ``n_boot``, ``seed``, ``only`` / ``skip`` (analysis ids, see ``recuse
    analyses``), ``orders``, ``fdr``, ``se``, ``robustness``, ``figures``, ``title``
    ``material`` (``--material``: {bias key: smallest effect worth acting on}) and
    ``self_scope`` (``--self-scope``).
    ``config``: a ``recuse.toml`` (path or :class:`~recuse.config.Config`) whose options
    apply where an argument is left at its default; its map, value maps and materiality
    are merged under the arguments', its ``[[model]]`` entries added to the roster.

    Bad input raises :class:`~recuse.errors.RecuseError` (an ``InputError`` naming the
    file, row, column and fix; a ``ConfigError`` naming the option)."""
    from recuse.analyses import IDS
    from recuse.driver import run_audit

    if config is not None:
        cfg = config if isinstance(config, Config) else load_config(config)
        given = {k: v for k, v in locals().items() if k in _DEFAULTS}
        merged = {k: v for k, v in given.items()}
        for key, value in cfg.options.items():
            if given[key] == _DEFAULTS[key]:
                merged[key] = value
        merged["mapping"] = {**cfg.mapping, **(mapping or {})}
        merged["values"] = {**cfg.values, **(values or {})}
        merged["material"] = {**cfg.material, **(material or {})}
        if cfg.models:
            base = roster if isinstance(roster, Roster) else Roster.load(roster)
            for entry in cfg.models:
                base.add(entry)
            merged["roster"] = base
        return audit(data, **merged, progress=progress)
    items: list[Data] = [data] if isinstance(data, str | Path | pd.DataFrame) else list(data)
    if not items:
        raise ConfigError("audit needs at least one dataset name, file or DataFrame")
    bad = [type(x).__name__ for x in items if not isinstance(x, str | Path | pd.DataFrame)]
    if bad:
        raise ConfigError(f"audit: data must be names, paths or DataFrames; got a {bad[0]}")
    options = AuditOptions(
        level=level, n_boot=n_boot, seed=seed, judges=_ids(judges), figure_format=figures,
        se=se, robustness=robustness_checks(robustness), only=_ids(only), skip=_ids(skip),
        orders=orders, fdr=fdr, material=dict(material or {}), self_scope=self_scope,
    )  # fmt: skip
    options.check(known=IDS)
    if isinstance(roster, str | Path):
        roster = Roster.load(roster)
    roster = roster or Roster.load()
    reading = ValueReading(
        values=check_value_map({str(k): dict(v) for k, v in values.items()}) if values else None,
        swapped_frame=swapped_frame,
        confidence=confidence,
        confidence_of=confidence_of,
    )
    kwargs: dict[str, Any] = {
        "table": table, "data_dir": data_dir, "roster": roster, "mapping": mapping,
        "format": format,
        "reading": reading,
    }  # fmt: skip
    loaded: list[Input] = []
    frames = sum(isinstance(x, pd.DataFrame) for x in items)
    with tempfile.TemporaryDirectory(prefix="recuse-frames-") as tmp:
        k = 0
        for item in items:
            if isinstance(item, pd.DataFrame):
                file_kwargs = kwargs
                loaded.append(_frame_input(item, k, frames, Path(tmp), **file_kwargs))
                k += 1
            else:
                loaded.append(load_input(item, **kwargs))
    result = run_audit(loaded, options=options, roster=roster, title=title, progress=progress)
    return Report(result)


_DEFAULTS = {
    name: p.default
    for name, p in inspect.signature(audit).parameters.items()
    if name not in ("data", "config", "progress")
}
