"""What a report holds: findings, sections, skipped analyses, exclusions, provenance.

A :class:`Finding` is the unit of the one-screen summary: one judge, one bias, an
estimate with its confidence interval and sample size, and the method that made it.
Everything else in a report hangs off :class:`Section` objects, one per analysis.
The objects are plain frozen dataclasses; :mod:`recuse.report.export` turns them into
JSON and CSV, :mod:`recuse.report.html` into the HTML page.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

import pandas as pd

from recuse.report.verdict import ANALYSIS_BIASES, BIASES, BiasSpec, estimate_text

FigureFormat = Literal["png", "svg"]


@dataclass(frozen=True)
class Finding:
    """One bias of one judge: estimate, ``level`` confidence interval, n, method.

    ``significant`` is True when the interval excludes ``null`` (the no-bias value,
    0 for differences and coefficients). ``n`` counts the units the estimate rests on
    (comparisons or ratings); ``clusters`` the independent units the bootstrap or the
    robust standard errors resampled (prompts), when known.
    """

    judge: str
    bias: str
    estimate: float
    ci_low: float
    ci_high: float
    n: int
    level: float
    method: str
    dataset: str = ""
    detail: str = ""
    null: float = 0.0
    clusters: int | None = None
    section: str = ""
    headline: bool = True  # shown in the one-screen summary (else only in its section)

    def __post_init__(self) -> None:
        if self.bias not in BIASES:
            raise ValueError(f"unknown bias {self.bias!r}; known: {', '.join(BIASES)}")
        for name in ("estimate", "ci_low", "ci_high"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not math.isfinite(value):
                raise ValueError(f"finding {self.judge}/{self.bias}: {name} is not finite")
        if not self.ci_low <= self.ci_high:
            raise ValueError(f"finding {self.judge}/{self.bias}: ci_low > ci_high")
        if not 0 < self.level < 1:
            raise ValueError("level must be in (0, 1)")
        if self.n < 1:
            raise ValueError("a finding needs n >= 1")

    @property
    def spec(self) -> BiasSpec:
        return BIASES[self.bias]

    @property
    def significant(self) -> bool:
        return not self.ci_low <= self.null <= self.ci_high

    @property
    def direction(self) -> Literal["positive", "negative", "none"]:
        if not self.significant:
            return "none"
        return "positive" if self.estimate > self.null else "negative"

    @property
    def verdict(self) -> str:
        from recuse.report.verdict import verdict

        return verdict(self)

    def to_dict(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "bias": self.bias,
            "bias_title": self.spec.title,
            "dataset": self.dataset,
            "detail": self.detail,
            "section": self.section,
            "headline": self.headline,
            "estimate": self.estimate,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "level": self.level,
            "n": self.n,
            "clusters": self.clusters,
            "method": self.method,
            "null": self.null,
            "significant": self.significant,
            "direction": self.direction,
            "verdict": self.verdict,
        }


@dataclass(frozen=True)
class Figure:
    """A rendered figure: the image bytes (base64 PNG or SVG text) plus words."""

    id: str
    title: str
    format: FigureFormat
    data: str  # base64 of the PNG, or the SVG document text
    alt: str
    caption: str = ""

    @property
    def data_uri(self) -> str:
        import base64

        if self.format == "png":
            return f"data:image/png;base64,{self.data}"
        encoded = base64.b64encode(self.data.encode("utf-8")).decode("ascii")
        return f"data:image/svg+xml;base64,{encoded}"

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "caption": self.caption, "format": self.format}


@dataclass(frozen=True)
class Table:
    """A tidy table of the report (written as CSV and into the JSON)."""

    name: str
    title: str
    frame: pd.DataFrame
    show: bool = True  # shown in the HTML (large tables are only written to CSV)

    def records(self) -> list[dict[str, Any]]:
        return [_clean_record(r) for r in self.frame.to_dict(orient="records")]


@dataclass(frozen=True)
class Skipped:
    """An analysis that was not run, and why (never reported as a zero)."""

    analysis: str
    reason: str
    dataset: str = ""
    judge: str = ""  # one judge, "all N judges" of the dataset, or "" (not judge-specific)
    headline: bool = True  # listed under the judge in the summary
    bias: str = ""  # the key in BIASES of the bias it leaves unestimated; "" = none

    def to_dict(self) -> dict[str, Any]:
        return {
            "analysis": self.analysis,
            "dataset": self.dataset,
            "judge": self.judge,
            "reason": self.reason,
            "bias": self.bias,
        }

    def concerns(self, judge: str, judges_of_dataset: set[str]) -> bool:
        """Whether this skip is about ``judge`` (named, or one of "all N judges")."""
        if self.judge == judge:
            return True
        return self.judge.startswith("all ") and judge in judges_of_dataset


@dataclass(frozen=True)
class Exclusion:
    """Rows left out of an analysis: how many of how many, and why."""

    dataset: str
    reason: str
    count: int
    total: int
    judge: str = ""
    analysis: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "judge": self.judge,
            "analysis": self.analysis,
            "reason": self.reason,
            "count": self.count,
            "total": self.total,
        }


@dataclass(frozen=True)
class Section:
    """One analysis: what it measures, its findings, figures, tables and notes."""

    id: str
    title: str
    intro: str
    findings: tuple[Finding, ...] = ()
    figures: tuple[Figure, ...] = ()
    tables: tuple[Table, ...] = ()
    notes: tuple[str, ...] = ()
    seconds: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "intro": self.intro,
            "findings": [f.to_dict() for f in self.findings],
            "figures": [f.to_dict() for f in self.figures],
            "tables": [t.name for t in self.tables],
            "notes": list(self.notes),
            "seconds": self.seconds,
        }


@dataclass(frozen=True)
class Source:
    """One input: a named dataset or a file, what was read and from where."""

    name: str
    table: str  # "pairs" or "ratings"
    rows: int
    location: str = ""
    files: tuple[str, ...] = ()
    upstream: str = ""
    judges: tuple[str, ...] = ()
    label: str = ""  # what its human/reference label is; "" = not known (a user's file)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "table": self.table,
            "rows": self.rows,
            "location": self.location,
            "files": list(self.files),
            "upstream": self.upstream,
            "judges": list(self.judges),
            "label": self.label,
        }


@dataclass(frozen=True)
class Provenance:
    """Where the numbers came from and how they were made."""

    sources: tuple[Source, ...]
    recuse_version: str
    recuse_commit: str | None
    options: dict[str, Any]
    seed: int
    created: str
    python: str
    packages: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "sources": [s.to_dict() for s in self.sources],
            "recuse_version": self.recuse_version,
            "recuse_commit": self.recuse_commit,
            "options": dict(self.options),
            "seed": self.seed,
            "created": self.created,
            "python": self.python,
            "packages": dict(self.packages),
        }


@dataclass(frozen=True)
class Report:
    """A whole audit: summary findings come from the sections."""

    title: str
    sections: tuple[Section, ...]
    skipped: tuple[Skipped, ...]
    exclusions: tuple[Exclusion, ...]
    provenance: Provenance
    level: float
    notes: tuple[str, ...] = ()
    timings: tuple[tuple[str, float], ...] = ()  # (analysis, seconds), in run order

    @property
    def findings(self) -> list[Finding]:
        return [f for s in self.sections for f in s.findings]

    @property
    def judges(self) -> list[str]:
        return sorted({f.judge for f in self.findings if f.headline})

    @property
    def tables(self) -> list[Table]:
        return [t for s in self.sections for t in s.tables]

    def summary(self) -> list[dict[str, Any]]:
        """Per judge: its headline findings (flagged first) and what could not be estimated.

        Each not-estimated entry names the ``bias`` it leaves empty (recorded with the
        skip); ``nothing_estimated`` is True for a judge without a single headline
        finding. Computed once per report (the page, the JSON and the matrix share it);
        treat it as read-only.
        """
        return self._summary

    @cached_property
    def _summary(self) -> list[dict[str, Any]]:
        by_dataset = {s.name: set(s.judges) for s in self.provenance.sources}
        skipped_judges = {
            j
            for k in self.skipped
            if k.headline
            for j in (by_dataset.get(k.dataset, set()) if k.judge.startswith("all ") else {k.judge})
            if j
        }
        out = []
        for judge in sorted(set(self.judges) | skipped_judges):
            fs = [f for f in self.findings if f.judge == judge and f.headline]
            fs.sort(key=lambda f: (not f.significant, f.spec.order, f.dataset, f.detail))
            missing = [
                {
                    "analysis": k.analysis,
                    "dataset": k.dataset,
                    "reason": k.reason,
                    "bias": k.bias,
                }
                for k in self.skipped
                if k.headline and k.concerns(judge, by_dataset.get(k.dataset, set()))
            ]
            out.append(
                {
                    "judge": judge,
                    "flagged": [f.spec.title for f in fs if f.significant],
                    "findings": [f.to_dict() for f in fs],
                    "not_estimated": missing,
                    "nothing_estimated": not fs,
                }
            )
        return out

    def matrix(self) -> dict[str, Any]:
        """The summary as a judge × bias matrix, the head of the HTML page.

        ``biases``: the columns, every bias with a headline finding or a judge's
        not-estimated entry, in summary order. ``rows``: one per judge of
        :meth:`summary`, whose ``cells`` map a bias to its ``estimates`` (one per
        dataset; ``text`` is ``+0.12 [0.03, 0.20]``) and ``not_estimated`` reasons; a
        bias missing from ``cells`` had no data of its kind for that judge.
        ``not_estimated_anywhere``: analyses no judge got an estimate or a column for,
        with their reasons (e.g. familiarity without perplexities).
        """
        rows = []
        present: set[str] = set()
        for row in self.summary():
            cells: dict[str, dict[str, list[dict[str, Any]]]] = {}
            for f in row["findings"]:
                cell = cells.setdefault(f["bias"], {"estimates": [], "not_estimated": []})
                text = estimate_text(
                    f["estimate"], f["ci_low"], f["ci_high"], signed=f["null"] == 0
                )
                cell["estimates"].append(
                    {
                        k: f[k]
                        for k in (
                            "dataset",
                            "detail",
                            "estimate",
                            "ci_low",
                            "ci_high",
                            "n",
                            "significant",
                            "direction",
                            "verdict",
                        )
                    }
                    | {"text": text}
                )
            for m in row["not_estimated"]:
                if m["bias"]:
                    cell = cells.setdefault(m["bias"], {"estimates": [], "not_estimated": []})
                    cell["not_estimated"].append(
                        {k: m[k] for k in ("dataset", "analysis", "reason")}
                    )
            for cell in cells.values():
                cell["estimates"].sort(key=lambda e: (e["dataset"], e["detail"]))
            present |= set(cells)
            rows.append(
                {
                    "judge": row["judge"],
                    "estimated": len(row["findings"]),
                    "flagged": sum(f["significant"] for f in row["findings"]),
                    "nothing_estimated": row["nothing_estimated"],
                    "cells": {b: cells[b] for b in sorted(cells, key=lambda b: BIASES[b].order)},
                }
            )
        columns = sorted(present, key=lambda b: BIASES[b].order)
        biases = []
        for b in columns:
            datasets = sorted(
                {e["dataset"] for r in rows for e in r["cells"].get(b, {}).get("estimates", [])}
            )
            spec = BIASES[b]
            biases.append(
                {
                    "bias": b,
                    "title": spec.title,
                    "short": spec.label,
                    "scale": spec.scale,
                    "datasets": datasets,
                }
            )
        anywhere: dict[str, dict[str, list[str]]] = {}
        for k in self.skipped:
            if not k.headline or k.analysis not in ANALYSIS_BIASES:
                continue
            if set(ANALYSIS_BIASES[k.analysis]) & present:
                continue
            reasons = anywhere.setdefault(k.analysis, {})
            datasets = reasons.setdefault(k.reason, [])
            if k.dataset not in datasets:
                datasets.append(k.dataset)
        return {
            "biases": biases,
            "rows": rows,
            "not_estimated_anywhere": [
                {
                    "analysis": a,
                    "reasons": [{"reason": r, "datasets": ds} for r, ds in reasons.items()],
                }
                for a, reasons in anywhere.items()
            ],
        }

    def flagged_verdicts(self) -> list[dict[str, Any]]:
        """The flagged findings' verdict sentences, one per estimate, in judge order.

        An estimate shared by several judges (a pooled bias such as the regression's
        family bias λ, the same for every judge of a family) is one sentence naming
        all of them (``pooled`` True).
        """
        groups: dict[tuple[Any, ...], dict[str, Any]] = {}
        for row in self.summary():
            for f in row["findings"]:
                if not f["significant"]:
                    continue
                pooled = BIASES[f["bias"]].pooled
                numbers = (f["estimate"], f["ci_low"], f["ci_high"], f["n"])
                owner = "" if pooled else row["judge"]
                key = (f["bias"], f["dataset"], f["detail"], *numbers, f["verdict"], owner)
                if key in groups:
                    groups[key]["judges"].append(row["judge"])
                    continue
                groups[key] = {
                    "judges": [row["judge"]],
                    "bias": f["bias"],
                    "bias_title": f["bias_title"],
                    "dataset": f["dataset"],
                    "detail": f["detail"],
                    "direction": f["direction"],
                    "verdict": f["verdict"],
                    "pooled": pooled,
                }
        return list(groups.values())


def _clean_record(record: dict[Any, Any]) -> dict[str, Any]:
    """JSON-safe values: NaN/inf -> None, numpy scalars -> Python."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        if hasattr(value, "item") and not isinstance(value, str | bytes):
            try:
                value = value.item()
            except (ValueError, AttributeError):
                pass
        if isinstance(value, float) and not math.isfinite(value):
            value = None
        elif value is pd.NaT or (not isinstance(value, str | list | dict) and pd.isna(value)):
            value = None
        out[str(key)] = value
    return out
