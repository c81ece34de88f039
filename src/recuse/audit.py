"""``recuse audit``: run every analysis the data supports and assemble the report.

Inputs are evidence tables (``pairs`` and/or ``ratings``), each with where it came
from. For every input the audit decides which analyses its columns support, runs
them through the public functions of :mod:`recuse.metrics` and
:mod:`recuse.regression`, and collects

* findings (one judge, one bias, estimate, interval, n) for the one-screen summary,
* figures and tidy tables for a section per analysis,
* the rows each analysis left out and why (exclusions),
* the analyses it could not run and why (skipped — never reported as a zero),
* provenance: sources, recuse version and commit, options, seed, timings.

Analyses and what they need:

================== ============================================================
self-preference    pairs with judge verdicts and generator ids that include the
                   judge's own responses (EO also needs human labels)
family-preference  as above, with another model of the judge's family (roster)
verbosity          judge verdicts, human labels, response texts or lengths
position           verdicts in both presentation orders
familiarity        perplexities ``ppl_a``/``ppl_b`` (``recuse judge --perplexity``;
                   none of the built-in datasets has them) and human labels; the
                   own-vs-other curves and log-perplexities (Figures 4, 5) also
                   need the judge's own responses among the pairs
favoritism         ratings with an independent reference, judges that also
                   generated (Play Favorites' regression, Eq. 1)
================== ============================================================
"""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import math
import platform
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypedDict

import numpy as np
import pandas as pd

from recuse.errors import ConfigError, EstimationError, InputError, RecuseError
from recuse.metrics.familiarity import (
    familiarity_bias,
    log_perplexity_by_model,
    own_perplexity_gap,
    perplexity_bins,
    perplexity_curve,
    perplexity_curve_by_self,
)
from recuse.outputs import file_name
from recuse.report import figures as fig
from recuse.report.model import (
    Exclusion,
    Figure,
    FigureFormat,
    Finding,
    Provenance,
    Report,
    Section,
    Skipped,
    Source,
    Table,
)
from recuse.report.verdict import ANALYSIS_BIASES
from recuse.roster import Roster

if TYPE_CHECKING:
    from recuse.regression.favoritism import FavoritismResult

TableKind = Literal["pairs", "ratings"]

ANALYSES: tuple[tuple[str, str], ...] = (
    ("self-preference", "Self-preference"),
    ("family-preference", "Family preference"),
    ("verbosity", "Verbosity"),
    ("position", "Position"),
    ("familiarity", "Familiarity (perplexity)"),
    ("favoritism", "Favoritism regression (ratings)"),
)
_TITLES = dict(ANALYSES)

_INTROS = {
    "self-preference": (
        "Does the judge prefer its own answers more than the human labels justify? "
        "Equal opportunity (Wataoka et al., Def. 4.1): the judge's recall of the "
        "human-preferred answer when that answer is its own, minus its recall when the "
        "other answer is better; 0 = no bias. Demographic parity (Eq. 4) is how often it "
        "picks its own answer (2p − 1), not adjusted for quality: compare it with the "
        "humans' value. Verdicts are the judge's probabilities averaged over the orders it "
        "judged; human ties are left out."
    ),
    "family-preference": (
        "The same two measures with 'own' replaced by another model of the judge's family "
        "(per the roster), over pairs that do not contain the judge's own answer and whose "
        "other answer comes from outside the family."
    ),
    "verbosity": (
        "Does the judge prefer longer answers more than the humans do? Signed verbosity "
        "bias (Saito et al., Eq. 6): the judge's recall when the human prefers the longer "
        "answer minus its recall when the human prefers the shorter one; 0 = no bias. The "
        "curve shows how often the judge agrees with the human as a function of how much "
        "longer the human-preferred answer is (Figure 5 of the paper)."
    ),
    "position": (
        "Does the judge prefer whichever answer is shown first? First-position rate: the "
        "mean share of the win given to the first-shown answer over pairs judged in both "
        "orders; 0.5 = no preference. Consistency is the share of pairs with the same pick "
        "in both orders; flip rate the share whose winner reverses."
    ),
    "familiarity": (
        "Does the judge prefer answers that are more familiar to it (lower perplexity) "
        "beyond the human labels? Perplexity is each response's, given its prompt, under "
        "the judge's own model; d = log ppl_a − log ppl_b. Familiarity bias: the human "
        "slope minus the judge's slope of fractional-logit fits of the preference for a "
        "on d (log-odds per nat; positive: the judge follows familiarity more than the "
        "humans). The curves are the win rate of a by bin of d for the judge and the "
        "humans (Figure 3 of the self-preference paper), the same split into pairs with "
        "and without the judge's own answer (Figure 4), and the mean log-perplexity of "
        "each generator's answers under the judge (Figure 5): lower for its own answers "
        "means they are more familiar to it."
    ),
    "favoritism": (
        "Play Favorites' regression (Spiliopoulou et al., Eq. 1): the judge's rating "
        "explained by the independent reference score with judge-specific intercepts and "
        "slopes; γ_j is the extra score judge j gives its own completions (self-bias), λ_F "
        "the extra score judges of family F give the family's other models (family bias). "
        "OLS with robust standard errors, Wald intervals; scores normalised per dimension."
    ),
}

# pairwise_bias metric -> (bias key of the summary, headline?, no-bias value, section)
_PAIRWISE: dict[str, tuple[str, bool, float, str]] = {
    "self_preference_eo": ("self_preference_eo", True, 0.0, "self-preference"),
    "self_preference_dp": ("self_preference_dp", False, 0.0, "self-preference"),
    "family_preference_eo": ("family_preference", True, 0.0, "family-preference"),
    "family_preference_dp": ("family_preference_dp", False, 0.0, "family-preference"),
    "verbosity_bias": ("verbosity", True, 0.0, "verbosity"),
    "first_position_rate": ("position", True, 0.5, "position"),
}
# metrics reported only in their section's table
_TABLE_ONLY = {
    "verbosity_deviation": "verbosity",
    "position_consistency": "position",
    "flip_rate": "position",
}
# Robustness checks run by default: the ones that take seconds, not minutes, on
# Play Favorites (ordinal logit, GAM, leave-family-out and drop-one-model refit the
# model many times; ask for them with robustness=("all",) / --robustness all).
FAST_CHECKS: tuple[str, ...] = ("length", "drop-weakest", "by-dimension", "by-task", "by-dataset")
_TEXT_LIMIT = 300  # characters of a prompt/response shown in an example
_SLUG_MAX = 100  # bytes of a table/figure name derived from input names


@dataclass(frozen=True)
class AuditOptions:
    """How the audit estimates: interval level, bootstrap size, seed, judges, figures."""

    level: float = 0.9
    n_boot: int = 1000
    seed: int = 0
    judges: tuple[str, ...] = ()
    min_n: int = 10
    figure_format: FigureFormat = "png"
    examples: int = 3
    se: Literal["HC0", "HC1", "HC3", "cluster"] = "HC0"
    robustness: tuple[str, ...] = FAST_CHECKS

    def check(self) -> None:
        if not 0.5 <= self.level < 1:
            raise ConfigError(f"--level must be in [0.5, 1), e.g. 0.9; got {self.level}")
        if self.n_boot < 100:
            raise ConfigError(f"--n-boot must be at least 100; got {self.n_boot}")
        if self.seed < 0:
            raise ConfigError(f"--seed must be 0 or more; got {self.seed}")
        if self.min_n < 1:
            raise ConfigError(f"min_n must be at least 1; got {self.min_n}")
        if self.figure_format not in ("png", "svg"):
            raise ConfigError("figure format must be 'png' or 'svg'")

    def to_dict(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "bootstrap resamples (n_boot)": self.n_boot,
            "bootstrap": "percentile, clustered by prompt",
            "judges": ", ".join(self.judges) if self.judges else "all",
            "min_n (smallest group estimated)": self.min_n,
            "verdicts": "probabilities averaged over the judged orders (verdict='prob')",
            "human ties": "left out of EO and verbosity (human_ties='drop')",
            "regression standard errors": self.se,
            "robustness checks": ", ".join(self.robustness) or "none",
            "figures": self.figure_format,
        }


@dataclass(frozen=True)
class AuditInput:
    """One evidence table and where it came from."""

    name: str
    table: TableKind
    frame: pd.DataFrame
    source: Source


# ------------------------------------------------------------------------- inputs


def _peek_columns(path: Path) -> set[str] | None:
    """Column names of a data file without reading it all (None if unknown)."""
    name = path.name.lower()
    try:
        if name.endswith((".csv", ".csv.gz", ".tsv", ".tab", ".tsv.gz")):
            sep = "\t" if ".tsv" in name or name.endswith(".tab") else ","
            return set(pd.read_csv(path, nrows=0, sep=sep).columns)
        if name.endswith((".jsonl", ".ndjson", ".jsonl.gz")):
            import gzip
            import json

            opener: Any = gzip.open if name.endswith(".gz") else open
            with opener(path, "rt", encoding="utf-8") as fh:
                for line in fh:
                    if line.strip():
                        obj = json.loads(line)
                        return set(obj) if isinstance(obj, dict) else None
            return None
        if name.endswith((".parquet", ".pq")):
            import pyarrow.parquet as pq

            return set(pq.read_schema(path).names)
    except Exception:  # unreadable: let the reader give its precise error
        return None
    return None


def _guess_table(path: Path) -> TableKind:
    cols = _peek_columns(path)
    if cols is not None and "rating" in cols and "p_a" not in cols:
        return "ratings"
    return "pairs"


def _git_commit(folder: Path) -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{out}{' (with uncommitted changes)' if dirty else ''}" if out else None


def _upstream(name: str) -> tuple[str, tuple[str, ...]]:
    """Upstream repositories@commits and the files of a named dataset, when known."""
    try:
        from recuse.data import fetch

        files = fetch.files_for(name)
    except (ImportError, AttributeError, RecuseError):
        return "", ()
    repos: dict[str, None] = {}
    for f in files:
        parts = f.url.split("/")
        if "raw.githubusercontent.com" in f.url and len(parts) > 5:
            repos[f"github.com/{parts[3]}/{parts[4]}@{parts[5][:12]}"] = None
    return ", ".join(repos), tuple(f"{f.folder}/{f.path}" for f in files)


def load_input(
    spec: str | Path,
    *,
    table: TableKind | None = None,
    data_dir: str | Path | None = None,
    roster: Roster | None = None,
    mapping: Mapping[str, str] | None = None,
    unknown_models: Literal["error", "keep"] = "error",
) -> AuditInput:
    """A named dataset or a file (``.csv``, ``.jsonl``, ``.parquet``, ...) as an audit input.

    ``table`` says whether a file holds ``pairs`` or ``ratings``; without it a file
    with a ``rating`` column (and no ``p_a``) is read as ratings, else as pairs.
    ``mapping`` renames a file's columns to schema columns; ``unknown_models="keep"``
    accepts model names the roster does not know (each its own family).
    """
    from recuse.data import generic, registry

    roster = roster or Roster.load()
    text = str(spec)
    known = registry.datasets()
    if not isinstance(spec, Path) and text in known:
        ds = known[text]
        if mapping:
            raise ConfigError("a column mapping (--map) applies to files, not to named datasets")
        if table is not None and table != ds.table:
            raise InputError(
                f"dataset {text!r} is a {ds.table} table, not {table}",
                fix=f"drop --table or use --table {ds.table}",
            )
        frame = generic.load_table(text, table=ds.table, data_dir=data_dir, roster=roster)
        location = str(registry.folder(text, data_dir))
        upstream, files = _upstream(text)
        kind: TableKind = ds.table
        name, label = text, ds.label
    else:
        path = Path(text).expanduser()
        if not path.exists():
            # an unknown name that is not a file: the registry lists the known ones
            if "/" not in text and "\\" not in text and "." not in path.name:
                registry.get(text)
            raise InputError(
                "file not found", file=path, fix="check the path, or give a dataset name"
            )
        kind = table or _guess_table(path)
        frame = generic.load_table(
            path, table=kind, roster=roster, mapping=mapping, unknown_models=unknown_models
        )
        location, upstream, files, name = str(path.resolve()), "", (path.name,), path.name
        label = ""
    judges: tuple[str, ...] = ()
    if "judge" in frame.columns:
        judges = tuple(sorted(str(j) for j in frame["judge"].dropna().unique()))
    source = Source(
        name=name,
        table=kind,
        rows=len(frame),
        location=location,
        files=files,
        upstream=upstream,
        judges=judges,
        label=label,
    )
    return AuditInput(name=name, table=kind, frame=frame, source=source)


# --------------------------------------------------------------------- collecting


@dataclass
class _Parts:
    """What one analysis contributes to its section."""

    findings: list[Finding] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    ran: bool = False


@dataclass
class _Audit:
    options: AuditOptions
    roster: Roster
    parts: dict[str, _Parts] = field(default_factory=lambda: {k: _Parts() for k, _ in ANALYSES})
    skipped: list[Skipped] = field(default_factory=list)
    exclusions: list[Exclusion] = field(default_factory=list)
    timings: list[tuple[str, float]] = field(default_factory=list)

    @contextmanager
    def timed(self, label: str, section: str | None = None) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            seconds = time.perf_counter() - start
            self.timings.append((label, seconds))
            if section is not None:
                self.parts[section].seconds += seconds

    def skip(
        self,
        section: str,
        reason: str,
        dataset: str = "",
        judge: str = "",
        headline: bool = True,
        *,
        bias: str | None = None,
    ) -> None:
        """Record an analysis not run; ``bias`` (the bias it leaves empty) defaults to the
        analysis's headline bias for a headline skip and to none otherwise."""
        title = _TITLES[section]
        if bias is None:
            bias = ANALYSIS_BIASES.get(title, ("",))[0] if headline else ""
        self.skipped.append(
            Skipped(title, reason, dataset=dataset, judge=judge, headline=headline, bias=bias)
        )


def _finite(*values: float) -> bool:
    return all(isinstance(v, int | float) and math.isfinite(v) for v in values)


def _slug(*parts: str) -> str:
    text = "-".join(parts).lower()
    slug = "".join(c if c.isalnum() else "-" for c in text).strip("-")
    return file_name(slug, limit=_SLUG_MAX)  # names table files: bounded, unique by hash


def _truncate(text: Any) -> str:
    if not isinstance(text, str):
        return ""
    text = " ".join(text.split())
    return text if len(text) <= _TEXT_LIMIT else text[: _TEXT_LIMIT - 1] + "…"


# -------------------------------------------------------------------- exclusions


def _pairs_exclusions(a: _Audit, inp: AuditInput, frame: pd.DataFrame) -> None:
    judged = frame["judge"].notna()
    no_judge = int((~judged).sum())
    if no_judge:
        a.exclusions.append(
            Exclusion(
                inp.name, "no judge verdict (human-only rows: nothing to assess)", no_judge,
                len(frame), analysis="all",
            )
        )  # fmt: skip
    statuses = [c for c in ("status_first", "status_second") if c in frame.columns]
    for judge, rows in frame[judged].groupby("judge", sort=True):
        total = len(rows)
        j = str(judge)

        def add(
            reason: str, mask: pd.Series, analysis: str, j: str = j, total: int = total
        ) -> None:
            count = int(mask.sum())
            if count:
                a.exclusions.append(Exclusion(inp.name, reason, count, total, j, analysis))

        bad = pd.Series(False, index=rows.index)
        for c in statuses:
            bad |= rows[c].isin(["unparsed", "failed"])
        no_verdict = rows["p_a"].isna()
        add("verdict unparsed or failed in every judged order", no_verdict & bad, "all")
        add("no verdict recorded", no_verdict & ~bad, "all")
        if len(statuses) == 2:
            one = rows["p_a"].notna() & bad
            add("one order unparsed or failed (the other order's verdict is used)", one, "position")
        human = rows["human"]
        add("no human label", human.isna() & rows["p_a"].notna(), "EO, verbosity")
        add("human tie", (human == 0.5) & rows["p_a"].notna(), "EO, verbosity")
        unknown = rows["model_a"].isna() | rows["model_b"].isna()
        add("generator of a response unknown", unknown & rows["p_a"].notna(), "self/family")


def _ratings_exclusions(a: _Audit, inp: AuditInput, frame: pd.DataFrame) -> None:
    for judge, rows in frame.groupby("judge", sort=True):
        total = len(rows)
        status = rows["status"].fillna("ok") if "status" in rows else pd.Series("ok", rows.index)
        for s in ("unparsed", "failed", "missing"):
            count = int((status == s).sum())
            if count:
                a.exclusions.append(
                    Exclusion(inp.name, f"rating {s}", count, total, str(judge), "favoritism")
                )
        count = int((rows["reference"].isna() & rows["rating"].notna()).sum())
        if count:
            a.exclusions.append(
                Exclusion(inp.name, "no reference score", count, total, str(judge), "favoritism")
            )


# ------------------------------------------------------------- pairwise analyses


def _metrics_api() -> Any | None:
    try:
        import recuse.metrics as metrics
    except ImportError:
        return None
    return metrics if hasattr(metrics, "pairwise_bias") else None


def _curve_x(frame: pd.DataFrame) -> np.ndarray:
    low = frame["bin_low"].to_numpy(float)
    high = frame["bin_high"].to_numpy(float)
    width = np.nanmin(np.where(np.isfinite(high), high - low, np.nan)) if len(low) else 0.2
    width = width if math.isfinite(width) else 0.2
    return np.where(np.isfinite(high), (low + high) / 2, low + width / 2)


def _pairs(a: _Audit, inp: AuditInput) -> None:
    o = a.options
    frame = inp.frame
    if "judge" not in frame.columns or frame["judge"].isna().all():
        for key in ("self-preference", "family-preference", "verbosity", "position"):
            a.skip(
                key,
                "no judge verdicts in this data (human labels only) — run a judge on it first",
                inp.name,
            )
        _familiarity(a, inp)
        if len(frame):
            a.exclusions.append(
                Exclusion(inp.name, "no judge verdict (human-only rows)", len(frame), len(frame),
                          analysis="all")
            )  # fmt: skip
        return
    _pairs_exclusions(a, inp, frame)
    metrics = _metrics_api()
    if metrics is None:
        for key in ("self-preference", "family-preference", "verbosity", "position"):
            a.skip(key, "recuse.metrics.pairwise_bias is not available in this build", inp.name)
        _familiarity(a, inp)
        return
    judged = frame[frame["judge"].notna()]
    judges = sorted(str(j) for j in judged["judge"].unique())
    with a.timed(f"pairwise metrics, bootstrap ({inp.name})"):
        result = metrics.pairwise_bias(
            judged,
            a.roster,
            judges=judges,
            level=o.level,
            n_boot=o.n_boot,
            seed=o.seed,
            min_n=o.min_n,
        )
    share = a.timings[-1][1] / 4  # one bootstrap serves four sections
    for key in ("self-preference", "family-preference", "verbosity", "position"):
        a.parts[key].seconds += share
        a.parts[key].ran = True

    # findings + tidy table rows
    rows = []
    for r in result.results:
        rec = {"dataset": inp.name, **{k: v for k, v in r.to_dict().items() if k != "counts"}}
        rec["components"] = "; ".join(
            f"{k}={v:.4g}" for k, v in r.components.items() if v is not None
        )
        rows.append(rec)
        if r.metric in _PAIRWISE:
            bias, headline, null, section = _PAIRWISE[r.metric]
            if not _finite(r.estimate, r.ci_low, r.ci_high) or r.n < 1:
                a.skip(
                    section, f"{r.metric}: no finite estimate", inp.name, str(r.judge), bias=bias
                )
                continue
            detail = ""
            if r.metric == "self_preference_dp" and "human_dp" in r.components:
                hd = r.components["human_dp"]
                detail = f"humans: {hd:+.2f}" if hd is not None and math.isfinite(hd) else ""
            a.parts[section].findings.append(
                Finding(
                    judge=str(r.judge), bias=bias, estimate=float(r.estimate),
                    ci_low=float(r.ci_low), ci_high=float(r.ci_high), n=int(r.n),
                    level=float(r.level), method=r.method, dataset=inp.name, detail=detail,
                    null=null, clusters=int(r.n_clusters), section=section, headline=headline,
                )
            )  # fmt: skip
    for s in result.skipped:
        section = (_PAIRWISE.get(s.metric, (None, None, None, None))[3]) or _TABLE_ONLY.get(
            s.metric, "self-preference"
        )
        bias, headline = _PAIRWISE[s.metric][:2] if s.metric in _PAIRWISE else ("", False)
        a.skip(
            section, f"{s.metric}: {s.reason}", inp.name, str(s.judge or ""), headline, bias=bias
        )
    if rows:
        tidy = pd.DataFrame(rows)
        for section in ("self-preference", "family-preference", "verbosity", "position"):
            wanted = [m for m, v in _PAIRWISE.items() if v[3] == section] + [
                m for m, s in _TABLE_ONLY.items() if s == section
            ]
            sub = tidy[tidy["metric"].isin(wanted)].reset_index(drop=True)
            if len(sub):
                a.parts[section].tables.append(
                    Table(
                        _slug(section, inp.name),
                        f"All {_TITLES[section].lower()} estimates — {inp.name}",
                        sub.drop(columns=["method"]),
                    )
                )

    with a.timed(f"self-preference figures ({inp.name})", "self-preference"):
        _self_figures(a, inp, judged, metrics)
    with a.timed(f"verbosity figures ({inp.name})", "verbosity"):
        _verbosity_figures(a, inp, result.curves)
    _familiarity(a, inp)


def _self_figures(a: _Audit, inp: AuditInput, judged: pd.DataFrame, metrics: Any) -> None:
    o = a.options
    parts = a.parts["self-preference"]
    eo_judges = [
        f.judge for f in parts.findings if f.dataset == inp.name and f.bias == "self_preference_eo"
    ]
    examples = []
    for judge in eo_judges:
        try:
            cm = metrics.confusion_matrix(judged, judge=judge)
        except RecuseError as exc:
            parts.notes.append(f"{inp.name}, {judge}: no confusion matrix ({exc})")
            continue
        parts.figures.append(
            fig.confusion_matrix(
                [[cm.own_own, cm.own_other], [cm.other_own, cm.other_other]],
                rows=["own answer", "other answer"],
                cols=["own answer", "other answer"],
                row_label="human prefers",
                col_label="judge picks",
                id=_slug("cm", inp.name, judge),
                title=f"{judge} on {inp.name}",
                caption=(
                    f"Pairs holding {judge}'s own answer: human label × judge pick (judge ties "
                    f"count half). Recall own {cm.recall_own:.2f}, other {cm.recall_other:.2f}; "
                    f"{cm.n_excluded} pairs without a usable label or verdict left out."
                ),
                format=o.figure_format,
            )
        )
        if o.examples > 0:
            examples.extend(_examples(judged, judge, inp.name, o.examples, metrics))
    if examples:
        parts.tables.append(
            Table(
                _slug("examples", inp.name),
                f"Examples: the judge picked its own answer, the human preferred the other — "
                f"{inp.name}",
                pd.DataFrame(examples),
            )
        )
    dataset_findings = [
        f for f in parts.findings if f.dataset == inp.name and f.bias == "self_preference_eo"
    ]
    if dataset_findings:
        parts.figures.append(_coef_figure(dataset_findings, inp.name, "self-preference (EO)", o))
    fam = [
        f
        for f in a.parts["family-preference"].findings
        if f.dataset == inp.name and f.bias == "family_preference"
    ]
    if fam:
        a.parts["family-preference"].figures.append(
            _coef_figure(fam, inp.name, "family preference (EO)", o)
        )
    pos = [f for f in a.parts["position"].findings if f.dataset == inp.name]
    if pos:
        a.parts["position"].figures.append(
            _coef_figure(pos, inp.name, "first-position rate", o, null=0.5)
        )


def _examples(
    judged: pd.DataFrame, judge: str, dataset: str, k: int, metrics: Any
) -> list[dict[str, Any]]:
    """Up to ``k`` pairs where ``judge`` picked its own answer against the human label."""
    from recuse.metrics.self_preference import favored_side

    rows = judged[judged["judge"] == judge]
    if "response_a" not in rows.columns or "response_b" not in rows.columns:
        return []
    side = favored_side(rows)
    p = rows["p_a"].to_numpy(float)
    h = rows["human"].to_numpy(float)
    own_p = np.where(side > 0, p, 1 - p)
    own_h = np.where(side > 0, h, 1 - h)
    hit = (side != 0) & (own_p > 0.5) & (own_h < 0.5)
    out = []
    for i in np.flatnonzero(hit)[:k]:
        r = rows.iloc[i]
        own_is_a = side[i] > 0
        out.append(
            {
                "judge": judge,
                "item_id": r["item_id"],
                "prompt": _truncate(r.get("prompt")),
                "own answer": _truncate(r["response_a"] if own_is_a else r["response_b"]),
                "other answer": _truncate(r["response_b"] if own_is_a else r["response_a"]),
                "other model": r["model_b"] if own_is_a else r["model_a"],
                "judge P(own better)": float(own_p[i]),
            }
        )
    return out


def _coef_figure(
    findings: Sequence[Finding], dataset: str, what: str, o: AuditOptions, null: float = 0.0
) -> Figure:
    return fig.coefficients(
        [f.judge for f in findings],
        [f.estimate for f in findings],
        [f.ci_low for f in findings],
        [f.ci_high for f in findings],
        id=_slug("coef", what, dataset),
        title=f"{what[:1].upper()}{what[1:]} — {dataset}",
        xlabel=f"estimate with {o.level:.0%} interval",
        null=null,
        caption=f"Red: the interval excludes {null:g} (no bias).",
        format=o.figure_format,
    )


def _verbosity_figures(a: _Audit, inp: AuditInput, curves: Any) -> None:
    o = a.options
    parts = a.parts["verbosity"]
    findings = [f for f in parts.findings if f.dataset == inp.name]
    if findings:
        parts.figures.append(_coef_figure(findings, inp.name, "verbosity bias", o))
    align = curves.get("human_alignment_curve") if curves else None
    if align is not None and len(align):
        series = []
        for judge, g in align.groupby("judge", sort=True):
            g = g[g["n"] >= o.min_n]
            if len(g) < 2:
                continue
            series.append(
                (_curve_x(g), fig.Series(str(judge), g["mean"], g["ci_low"], g["ci_high"]))
            )
        if series:
            xs = series[0][0]
            # one x grid per judge: plot each series on its own x via separate figures
            # when grids differ; usually they share the bins
            same = all(len(x) == len(xs) and np.allclose(x, xs) for x, _ in series)
            if same:
                parts.figures.append(
                    fig.curves(
                        xs.tolist(),
                        [s for _, s in series],
                        id=_slug("align", inp.name),
                        title=f"Agreement with humans by length difference — {inp.name}",
                        xlabel="(len human-preferred − len other) / len other",
                        ylabel="share of judge verdicts agreeing",
                        reference=0.5,
                        caption=(
                            f"Bins with at least {o.min_n} pairs; bands: {o.level:.0%} "
                            "cluster-bootstrap intervals. A judge without verbosity bias has a "
                            "flat curve; one that prefers longer answers rises to the right."
                        ),
                        format=o.figure_format,
                    )
                )
            else:
                for x, s in series:
                    parts.figures.append(
                        fig.curves(
                            x.tolist(), [s], id=_slug("align", inp.name, s.label),
                            title=f"Agreement by length difference — {s.label}, {inp.name}",
                            xlabel="(len human-preferred − len other) / len other",
                            ylabel="share agreeing", reference=0.5, format=o.figure_format,
                        )
                    )  # fmt: skip
        parts.tables.append(
            Table(
                _slug("alignment-curve", inp.name),
                f"Agreement by length difference — {inp.name}",
                align.reset_index(drop=True),
                show=False,
            )
        )
    for name, title in (
        ("human_verbosity_curve", "Human preference by length difference"),
        ("judge_verbosity_curve", "Judge preference by length difference (same-source pairs)"),
    ):
        frame = curves.get(name) if curves else None
        if frame is not None and len(frame):
            parts.tables.append(
                Table(_slug(name, inp.name), f"{title} — {inp.name}", frame.reset_index(drop=True),
                      show=False)
            )  # fmt: skip


def _familiarity(a: _Audit, inp: AuditInput) -> None:
    frame = inp.frame
    has_ppl = {"ppl_a", "ppl_b"} <= set(frame.columns) and bool(
        (frame["ppl_a"].notna() & frame["ppl_b"].notna()).any()
    )
    if not has_ppl:
        a.skip(
            "familiarity",
            "no perplexities in this data (columns ppl_a, ppl_b): compute each response's "
            "perplexity under the judge first (recuse judge ... --perplexity)",
            inp.name,
        )
        return
    o = a.options
    parts = a.parts["familiarity"]
    judged = frame[frame["judge"].notna()] if "judge" in frame.columns else frame.iloc[:0]
    judges = sorted(str(j) for j in judged["judge"].unique())
    with a.timed(f"familiarity bias ({inp.name})", "familiarity"):
        for judge in judges:
            try:
                r = familiarity_bias(
                    judged, judge=judge, level=o.level, n_boot=o.n_boot, seed=o.seed
                )
            except RecuseError as exc:
                a.skip("familiarity", f"familiarity_bias: {exc}", inp.name, judge)
                continue
            if not _finite(r.estimate, r.ci_low, r.ci_high):
                a.skip("familiarity", "familiarity_bias: no finite estimate", inp.name, judge)
                continue
            parts.findings.append(
                Finding(
                    judge=judge, bias="familiarity", estimate=float(r.estimate),
                    ci_low=float(r.ci_low), ci_high=float(r.ci_high), n=int(r.n),
                    level=o.level, method=r.method, dataset=inp.name,
                    detail="log-odds per nat of log-perplexity difference",
                    clusters=int(r.n_clusters), section="familiarity",
                )
            )  # fmt: skip
    findings = [f for f in parts.findings if f.dataset == inp.name]
    if findings:
        parts.figures.append(_coef_figure(findings, inp.name, "familiarity bias", o))
    if judges:
        with a.timed(f"familiarity curves ({inp.name})", "familiarity"):
            _familiarity_curves(a, inp, judged, judges)


_D_LABEL = "d = log ppl_a − log ppl_b under the judge (d < 0: a more familiar)"


def _bin_label(low: float, high: float) -> str:
    if not math.isfinite(low):
        return f"< {high:g}"
    if not math.isfinite(high):
        return f"> {low:g}"
    return f"{low:g} to {high:g}"


def _binned_series(
    curve: pd.DataFrame, keys: Sequence[tuple[str, dict[str, str]]], min_n: int
) -> tuple[list[str], list[fig.Series]]:
    """Curve rows as plot series on the bins where some curve has ``min_n`` pairs (NaN
    where this one has fewer)."""
    shown = curve[curve["n"] >= min_n]
    grid = shown[["bin_low", "bin_high"]].drop_duplicates().sort_values("bin_low").to_numpy(float)
    labels = [_bin_label(lo, hi) for lo, hi in grid]
    series = []
    for label, where in keys:
        rows = curve
        for col, value in where.items():
            rows = rows[rows[col] == value]
        rows = rows[rows["n"] >= min_n]
        if rows.empty:
            continue
        cols = ["bin_low", "mean", "ci_low", "ci_high"]
        by_bin = {float(r[0]): r[1:] for r in rows[cols].to_numpy(float)}
        none = np.full(3, np.nan)
        values = np.array([by_bin.get(float(low), none) for low, _high in grid])
        y, low, high = (values[:, k].tolist() for k in range(3))
        series.append(fig.Series(label, y, low, high))
    return labels, series


class _Boot(TypedDict):
    level: float
    n_boot: int
    seed: int
    min_n: int


def _familiarity_curves(
    a: _Audit, inp: AuditInput, judged: pd.DataFrame, judges: Sequence[str]
) -> None:
    """Figures 3–5 of the self-preference paper, per judge, with their tables."""
    o = a.options
    parts = a.parts["familiarity"]
    boot = _Boot(level=o.level, n_boot=o.n_boot, seed=o.seed, min_n=o.min_n)
    edges = perplexity_bins()
    band = f"bins with at least {o.min_n} pairs; bands: {o.level:.0%} cluster-bootstrap intervals"
    curves, by_self, gaps, by_model = [], [], [], []
    for judge in judges:
        # Figure 3: win rate of a by perplexity difference, judge and humans
        try:
            curve = perplexity_curve(judged, judge=judge, edges=edges, **boot)
        except RecuseError as exc:
            a.skip("familiarity", f"perplexity curve (Figure 3): {exc}", inp.name, judge, False)
        else:
            curves.append(curve)
            labels, series = _binned_series(
                curve, [(judge, {"rater": "judge"}), ("humans", {"rater": "human"})], o.min_n
            )
            if series:
                parts.figures.append(
                    fig.curves(
                        labels, series, id=_slug("ppl-curve", inp.name, judge),
                        title=f"Preference by perplexity difference — {judge}, {inp.name}",
                        xlabel=_D_LABEL, ylabel="share preferring response a", reference=0.5,
                        caption=(
                            f"Mean verdict for a (judge) and mean human label, by bin of d "
                            f"(Figure 3 of the self-preference paper); {band}. A judge that "
                            "favours familiar answers beyond the humans falls more steeply "
                            "from left to right than the human curve."
                        ),
                        format=o.figure_format,
                    )
                )  # fmt: skip
        # Figure 4: the same, pairs with the judge's own response vs the others
        try:
            split = perplexity_curve_by_self(judged, judge=judge, edges=edges, **boot)
        except RecuseError as exc:
            a.skip(
                "familiarity", f"perplexity curve by own response (Figure 4): {exc}", inp.name,
                judge, False,
            )  # fmt: skip
        else:
            by_self.append(split)
            keys = [
                (f"{rater}, {subset} pairs", {"rater": r, "subset": subset})
                for subset in ("own", "other")
                for r, rater in (("judge", judge), ("human", "humans"))
            ]
            labels, series = _binned_series(split, keys, o.min_n)
            if series:
                parts.figures.append(
                    fig.curves(
                        labels, series, id=_slug("ppl-curve-self", inp.name, judge),
                        title=f"Own vs other pairs by perplexity difference — {judge}, "
                        f"{inp.name}",
                        xlabel="d (own pairs: log ppl_own − log ppl_other; others: a − b)",
                        ylabel="share preferring the own (or a) response", reference=0.5,
                        caption=(
                            f"Figure 4 of the self-preference paper: pairs holding {judge}'s "
                            "own response (oriented own vs other) and pairs holding neither; "
                            f"{band}. Self-preference beyond familiarity shows as the own "
                            "curve lying above the other curve at the same d."
                        ),
                        format=o.figure_format,
                    )
                )  # fmt: skip
        # Figure 5: mean log-perplexity of the judge's own responses vs the others'
        rows = judged[judged["judge"] == judge]
        if not (rows["model_a"].eq(judge).any() or rows["model_b"].eq(judge).any()):
            a.skip(
                "familiarity",
                "own vs others' log-perplexity (Figure 5): no response of the judge's own "
                "model among the pairs (model_a/model_b never equal the judge)",
                inp.name, judge, False,
            )  # fmt: skip
            continue
        results, skipped = own_perplexity_gap(judged, judge=judge, **boot)
        for k in skipped:
            a.skip(
                "familiarity", f"own vs others' log-perplexity (Figure 5): {k.reason}",
                inp.name, judge, False,
            )  # fmt: skip
        for r in results:
            rec = {"dataset": inp.name, **{k: v for k, v in r.to_dict().items() if k != "counts"}}
            rec.update(r.components)
            rec.update({f"n {k}": v for k, v in r.counts.items()})
            gaps.append(rec)
            parts.notes.append(
                f"{inp.name}, {judge}: mean log-perplexity of its own responses "
                f"{r.components['mean_log_ppl_own']:.3f} vs other models' "
                f"{r.components['mean_log_ppl_other']:.3f}; gap {r.estimate:+.3f} "
                f"[{r.ci_low:.3f}, {r.ci_high:.3f}] ({o.level:.0%}; negative: its own "
                "answers are more familiar to it)"
            )
        if not results:
            continue
        models = log_perplexity_by_model(judged, judge=judge, **boot)
        by_model.append(models)
        parts.figures.append(
            fig.bars(
                [f"{m} (own)" if own else str(m) for m, own in zip(models["model"],
                                                                   models["own"], strict=True)],
                models["mean"].astype(float).tolist(), models["ci_low"].astype(float).tolist(),
                models["ci_high"].astype(float).tolist(), highlight=models["own"].tolist(),
                id=_slug("ppl-by-model", inp.name, judge),
                title=f"Mean log-perplexity by generator under {judge} — {inp.name}",
                xlabel="mean log-perplexity of the responses (nats per token)",
                caption=(
                    f"Figure 5 of the self-preference paper: each distinct response once; "
                    f"red: {judge}'s own responses; whiskers: {o.level:.0%} cluster-bootstrap "
                    f"intervals (none under {o.min_n} responses). Lower: more familiar to "
                    "the judge."
                ),
                format=o.figure_format,
            )
        )  # fmt: skip
    for name, title, frames, show in (
        ("perplexity-curve", "Win rate of a by perplexity difference (Figure 3)", curves, False),
        ("perplexity-curve-by-self", "The same, own-response pairs vs others (Figure 4)",
         by_self, False),
        ("own-perplexity-gap", "Own minus other models' mean log-perplexity (Figure 5)", gaps,
         True),
        ("log-perplexity-by-model", "Mean log-perplexity by generator (Figure 5)", by_model,
         False),
    ):  # fmt: skip
        if not frames:
            continue
        table = (
            pd.DataFrame(frames)
            if isinstance(frames[0], dict)
            else pd.concat(frames, ignore_index=True)
        )
        parts.tables.append(Table(_slug(name, inp.name), f"{title} — {inp.name}", table, show))


# ------------------------------------------------------------------- favoritism


def _favoritism(a: _Audit, inp: AuditInput) -> None:
    o = a.options
    parts = a.parts["favoritism"]
    frame = inp.frame
    _ratings_exclusions(a, inp, frame)
    try:
        from recuse.regression import fit_favoritism
    except ImportError:
        a.skip("favoritism", "recuse.regression.fit_favoritism is not in this build", inp.name)
        return
    judges = set(frame["judge"].astype(str))
    models = set(frame["model"].astype(str))
    if not judges & models:
        a.skip(
            "favoritism",
            "no judge rated its own model's outputs, so self-bias is not identified",
            inp.name,
        )
        return
    if frame["reference"].notna().sum() == 0:
        a.skip("favoritism", "no reference scores (column reference is empty)", inp.name)
        return
    with a.timed(f"favoritism regression ({inp.name})", "favoritism"):
        try:
            res = fit_favoritism(frame, a.roster, se=o.se, level=o.level)
        except (EstimationError, ConfigError) as exc:
            a.skip("favoritism", str(exc), inp.name)
            return
    parts.ran = True
    n_by_judge = frame[frame["rating"].notna() & frame["reference"].notna()].groupby("judge").size()
    clusters = int(frame["prompt_id"].nunique())
    sb = res.self_bias()
    for _, r in sb.iterrows():
        if not _finite(r["estimate"], r["lower"], r["upper"]):
            a.skip(
                "favoritism", "self-bias not estimable", inp.name, str(r["judge"]), bias="self_bias"
            )
            continue
        parts.findings.append(
            Finding(
                judge=str(r["judge"]), bias="self_bias", estimate=float(r["estimate"]),
                ci_low=float(r["lower"]), ci_high=float(r["upper"]),
                n=int(n_by_judge.get(r["judge"], res.n)), level=o.level,
                method=f"{res.method}; SE {res.se_type}", dataset=inp.name,
                detail=f"γ, {res.scale_note}", clusters=clusters, section="favoritism",
            )
        )  # fmt: skip
    fb = res.family_bias()
    fams = dict(res.families)
    for _, r in fb.iterrows():
        if not _finite(r["estimate"], r["lower"], r["upper"]):
            continue
        members = sorted(j for j in judges if fams.get(j) == r["family"])
        n_fam = int(sum(n_by_judge.get(j, 0) for j in members))
        for j in members:
            parts.findings.append(
                Finding(
                    judge=j, bias="family_bias", estimate=float(r["estimate"]),
                    ci_low=float(r["lower"]), ci_high=float(r["upper"]), n=max(n_fam, 1),
                    level=o.level, method=f"{res.method}; SE {res.se_type}", dataset=inp.name,
                    detail=f"λ pooled over the {r['family']} family's judges",
                    clusters=clusters, section="favoritism",
                )
            )  # fmt: skip
    parts.tables.append(
        Table(_slug("favoritism", inp.name), f"Favoritism coefficients — {inp.name}", res.tidy())
    )
    parts.notes.extend(f"{inp.name}: {n}" for n in res.notes)
    if res.n_excluded:
        parts.notes.append(
            f"{inp.name}: excluded from the fit: "
            + ", ".join(f"{v:,} {k}" for k, v in res.n_excluded.items())
        )
    with a.timed(f"favoritism figures ({inp.name})", "favoritism"):
        if len(sb):
            parts.figures.append(
                fig.coefficients(
                    sb["judge"].astype(str).tolist(),
                    sb["estimate"].astype(float).tolist(),
                    sb["lower"].astype(float).tolist(),
                    sb["upper"].astype(float).tolist(),
                    id=_slug("selfbias", inp.name), title=f"Self-bias γ_j — {inp.name}",
                    xlabel=f"extra {res.scale_note} for own completions ({o.level:.0%} CI)",
                    caption="Red: the interval excludes 0.", format=o.figure_format,
                )
            )  # fmt: skip
        if len(fb):
            parts.figures.append(
                fig.coefficients(
                    fb["family"].astype(str).tolist(),
                    fb["estimate"].astype(float).tolist(),
                    fb["lower"].astype(float).tolist(),
                    fb["upper"].astype(float).tolist(),
                    id=_slug("familybias", inp.name), title=f"Family bias λ_F — {inp.name}",
                    xlabel=f"extra {res.scale_note} for the family's other models",
                    caption="Red: the interval excludes 0.", format=o.figure_format,
                )
            )  # fmt: skip
        _score_matrix_figure(a, inp)
    _debiasing(a, inp, res)
    _robustness(a, inp)


def _debiasing(a: _Audit, inp: AuditInput, res: FavoritismResult) -> None:
    """The correction: each model's mean judge score with γ̂ and λ̂ taken out, and ranks."""
    from recuse.mitigation.debias import debias_effect

    with a.timed(f"favoritism debiasing ({inp.name})", "favoritism"):
        try:
            eff = debias_effect(inp.frame, res, a.roster)
        except RecuseError as exc:
            a.skip("favoritism", f"debiasing: {exc}", inp.name, headline=False)
            return
    parts = a.parts["favoritism"]
    parts.tables.append(
        Table(
            _slug("debiased", inp.name),
            f"Correction: mean score per model with self- and family-bias removed — {inp.name}",
            eff.table,
        )
    )
    changed = "changes" if eff.ranking_changed else "does not change"
    parts.notes.append(
        f"{inp.name}: debiasing subtracts γ̂_j from judge j's ratings of its own model and "
        f"λ̂_F from its ratings of other models of its family ({res.scale_note}); it "
        f"{changed} the judges' model ranking, and Kendall's τ between that ranking and "
        f"the reference ranking goes from {eff.rank_correlation_before:.2f} to "
        f"{eff.rank_correlation_after:.2f}. The corrections are point estimates; their "
        "uncertainty is the coefficients' intervals above."
    )


def _score_matrix_figure(a: _Audit, inp: AuditInput) -> None:
    """Figure 2 of Play Favorites: mean normalised score, judge × model, own cells outlined."""
    parts = a.parts["favoritism"]
    try:
        from recuse.regression.explore import score_matrix
    except ImportError:
        a.skip("favoritism", "judge × model heat map: not in this build", inp.name)
        return
    try:
        sm = score_matrix(inp.frame, a.roster)
    except RecuseError as exc:
        a.skip("favoritism", f"judge × model heat map: {exc}", inp.name)
        return
    means = pd.concat([sm.means, sm.reference.to_frame().T.rename(index={"ref": "reference"})])
    means.index = [*sm.means.index.astype(str), "human (reference)"]
    spread = (means.max(axis=1) - means.min(axis=1)).replace(0, np.nan)
    colour = means.sub(means.mean(axis=1), axis=0).div(spread, axis=0)
    highlight = np.vstack([sm.self_cells.to_numpy(bool), np.zeros((1, means.shape[1]), dtype=bool)])
    parts.figures.append(
        fig.heatmap(
            colour.to_numpy(float),
            rows=list(means.index),
            cols=[str(c) for c in means.columns],
            annotations=means.to_numpy(float),
            id=_slug("heat", inp.name),
            title=f"Mean score, judge × model — {inp.name}",
            caption=(
                f"Mean {sm.normalize}-normalised rating each judge (row) gives each model's "
                "completions (column), all dimensions pooled; last row: the reference "
                "(human) score. Colour: the row's values centred and divided by the row's "
                "range (Figure 2 of Play Favorites). Outlined: the judge's own completions. "
                "Descriptive; the regression is the estimate."
            ),
            highlight=highlight,
            format=a.options.figure_format,
        )
    )

    def long(wide: pd.DataFrame, name: str) -> pd.DataFrame:
        out = wide.copy()
        out.index = out.index.astype(str).rename("judge")
        return out.reset_index().melt(id_vars="judge", var_name="model", value_name=name)

    tidy = long(sm.means, "mean").dropna(subset=["mean"])
    n = long(sm.n, "n")
    parts.tables.append(
        Table(
            _slug("score-matrix", inp.name),
            f"Mean normalised score, judge × model — {inp.name}",
            tidy.merge(n, on=["judge", "model"]),
            show=False,
        )
    )


def _robustness(a: _Audit, inp: AuditInput) -> None:
    """The regression's robustness battery (the checks in ``options.robustness``)."""
    try:
        from recuse.regression.robustness import CHECKS, battery
    except ImportError:
        a.skip("favoritism", "robustness battery: not in this build", inp.name)
        return
    o = a.options
    chosen = list(CHECKS) if o.robustness == ("all",) else list(o.robustness)
    not_run = [c for c in CHECKS if c not in chosen]
    if not chosen:
        return
    with a.timed(f"favoritism robustness battery ({inp.name})", "favoritism"):
        try:
            bat = battery(inp.frame, a.roster, checks=chosen, se=o.se, level=o.level)
        except RecuseError as exc:
            a.skip("favoritism", f"robustness battery: {exc}", inp.name)
            return
    for name, reason in bat.skipped.items():
        a.skip("favoritism", f"robustness check {name}: {reason}", inp.name, headline=False)
    if not_run:
        a.skip(
            "favoritism",
            f"robustness checks not run (slow; ask for them with --robustness all): "
            f"{', '.join(not_run)}",
            inp.name,
            headline=False,
        )
    table = bat.table()
    parts = a.parts["favoritism"]
    parts.tables.append(
        Table(
            _slug("robustness", inp.name),
            f"Robustness: self- and family-bias under each check — {inp.name}",
            table,
            show=False,
        )
    )
    # the self-bias of each judge across variants, as one coefficient plot per kind
    for kind, what in (("self", "self-bias γ_j"), ("family", "family bias λ_F")):
        t = table[(table["kind"] == kind) & table["lower"].notna()]
        if t.empty:
            continue
        wide = t.pivot_table(
            index="label", columns="variant", values="significant", aggfunc="first"
        )
        agree = wide.apply(lambda r: f"{int(r.sum())} of {int(r.notna().sum())}", axis=1)
        parts.notes.append(
            f"{inp.name}: {what} flagged (interval excludes 0) in how many of the fitted "
            "variants — " + "; ".join(f"{label}: {v}" for label, v in agree.items())
        )
    parts.notes.append(
        f"{inp.name}: robustness checks run: {', '.join(chosen)} "
        f"({sum(bat.seconds.values()):.1f} s); every variant's coefficients are in "
        f"tables/{_slug('robustness', inp.name)}.csv"
    )


# ------------------------------------------------------------------------ driver


def _filter_judges(inputs: Sequence[AuditInput], judges: tuple[str, ...]) -> list[AuditInput]:
    if not judges:
        return list(inputs)
    present = sorted({j for i in inputs for j in i.source.judges})
    missing = [j for j in judges if j not in present]
    if missing:
        raise ConfigError(
            f"judge {missing[0]!r} is not in the data — "
            f"judges present: {', '.join(present) or 'none'}"
        )
    out = []
    for inp in inputs:
        if not set(judges) & set(inp.source.judges):
            continue
        frame = inp.frame[inp.frame["judge"].isin(judges)].reset_index(drop=True)
        out.append(replace(inp, frame=frame))
    return out


def run_audit(
    inputs: Sequence[AuditInput],
    *,
    options: AuditOptions | None = None,
    roster: Roster | None = None,
    title: str = "recuse audit",
    timings: Sequence[tuple[str, float]] = (),
) -> Report:
    """Every analysis the inputs support, as a :class:`~recuse.report.model.Report`.

    ``timings`` (label, seconds) from earlier steps (e.g. loading) are kept in the
    report's timings ahead of the analyses'.
    """
    o = options or AuditOptions()
    o.check()
    if not inputs:
        raise InputError("nothing to audit", fix="give at least one dataset name or file")
    roster = roster or Roster.load()
    a = _Audit(o, roster)
    a.timings.extend(timings)
    for inp in _filter_judges(inputs, o.judges):
        if inp.table == "pairs":
            _pairs(a, inp)
            a.skip("favoritism", "needs a ratings table (absolute scores); this is pairs", inp.name)
        else:
            _favoritism(a, inp)
            for key in ("self-preference", "family-preference", "verbosity", "position"):
                a.skip(key, "needs a pairs table (pairwise verdicts); this is ratings", inp.name)
            a.skip("familiarity", "needs a pairs table with perplexities", inp.name)
    sections = []
    for key, title_ in ANALYSES:
        p = a.parts[key]
        if not (p.findings or p.figures or p.tables):
            continue
        sections.append(
            Section(
                id=key, title=title_, intro=_INTROS[key], findings=tuple(p.findings),
                figures=tuple(p.figures), tables=tuple(p.tables), notes=tuple(p.notes),
                seconds=round(p.seconds, 3),
            )
        )  # fmt: skip
    # tables of different inputs with the same name (e.g. judge-model-heat) get a suffix
    seen: dict[str, int] = {}
    fixed = []
    for s in sections:
        tables = []
        for t in s.tables:
            seen[t.name] = seen.get(t.name, 0) + 1
            tables.append(t if seen[t.name] == 1 else replace(t, name=f"{t.name}-{seen[t.name]}"))
        fixed.append(replace(s, tables=tuple(tables)))
    provenance = Provenance(
        sources=tuple(i.source for i in inputs),
        recuse_version=_version(),
        recuse_commit=_git_commit(Path(__file__).resolve().parent),
        options=o.to_dict(),
        seed=o.seed,
        created=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        python=platform.python_version(),
        packages=_packages(),
    )
    notes = (
        f"Intervals: {o.level:.0%}; pairwise metrics use a percentile bootstrap that "
        f"resamples prompts ({o.n_boot} resamples, seed {o.seed}); the regression uses "
        f"{o.se} robust standard errors.",
        *(
            f"In {i.name} the reference label is {i.source.label}, not a human judgment: "
            "where this report says human(s), read that label."
            for i in inputs
            if i.source.label not in ("", "human preference")
        ),
    )
    return Report(
        title=title,
        sections=tuple(fixed),
        skipped=tuple(_collapse(a.skipped, inputs)),
        exclusions=tuple(a.exclusions),
        provenance=provenance,
        level=o.level,
        notes=notes,
        timings=tuple((k, round(v, 4)) for k, v in a.timings),
    )


def _collapse(skipped: list[Skipped], inputs: Sequence[AuditInput]) -> list[Skipped]:
    """One row for a reason shared by every judge of a dataset; duplicates dropped."""
    judges = {i.name: set(i.source.judges) for i in inputs}
    groups: dict[Skipped, set[str]] = {}  # keyed by the skip with its judge blanked
    for s in skipped:
        groups.setdefault(replace(s, judge=""), set()).add(s.judge)
    out = []
    for s, js in groups.items():
        named = js - {""}
        if named and named == judges.get(s.dataset, set()) and len(named) > 1:
            out.append(replace(s, judge=f"all {len(named)} judges"))
        elif not named:
            out.append(s)
        else:
            out.extend(replace(s, judge=j) for j in sorted(named))
    return out


def _version() -> str:
    try:
        return importlib.metadata.version("recuse")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _packages() -> dict[str, str]:
    out = {}
    for name in ("numpy", "pandas", "scipy", "statsmodels", "matplotlib"):
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return out


def audit(
    data: Sequence[str | Path],
    *,
    options: AuditOptions | None = None,
    table: TableKind | None = None,
    data_dir: str | Path | None = None,
    roster: Roster | None = None,
    mapping: Mapping[str, str] | None = None,
    unknown_models: Literal["error", "keep"] = "error",
    title: str = "recuse audit",
) -> Report:
    """Load each of ``data`` (dataset names or files) and audit them together."""
    roster = roster or Roster.load()
    loaded = []
    timings = []
    for spec in data:
        start = time.perf_counter()
        loaded.append(
            load_input(
                spec, table=table, data_dir=data_dir, roster=roster, mapping=mapping,
                unknown_models=unknown_models,
            )
        )  # fmt: skip
        timings.append((f"load {spec}", time.perf_counter() - start))
    return run_audit(loaded, options=options, roster=roster, title=title, timings=timings)
