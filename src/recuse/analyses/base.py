"""What every analysis is made of, and what it writes into while the audit runs.

An :class:`Analysis` is frozen data plus two functions: ``needs`` (a reason to skip,
or None) and ``build`` (findings, figures, tables and notes into a :class:`Context`).
Pairwise analyses name the :func:`recuse.metrics.pairwise_bias` metrics they add to
the one shared cluster bootstrap (``metrics``: metric -> the bias it estimates, or
None for a metric shown only in the section's table); the audit runs that bootstrap
once per input and hands every analysis the result. :func:`to_finding` is the one
conversion of an estimate (pairwise result, regression coefficient, familiarity
slope) into a :class:`~recuse.report.model.Finding`, or into a
:class:`~recuse.report.model.NotEstimated` when it is not finite.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

import pandas as pd

from recuse.biases.heading import Heading
from recuse.bootstrap_rules import Extrapolation
from recuse.bootstrap_rules import check_interval_level as check_interval_level
from recuse.choices import LEAST_N_BOOT as LEAST_N_BOOT
from recuse.choices import SE as SE
from recuse.choices import HumanTies, HumanTiesMode
from recuse.data.inputs import Input
from recuse.errors import ConfigError
from recuse.interval_rules import IntervalRule
from recuse.metrics.bootstrap import (
    INTERVAL_NAMES,
    N_BOOT,
    Resampling,
    check_min_n,
    check_n_boot,
    check_resamples,
    check_seed,
    named_settings,
)
from recuse.metrics.calibration import ECE_INTERVAL
from recuse.metrics.competence import CALIBRATED_INTERVAL
from recuse.metrics.estimate import EXPANDED_WORDS, FEW_CLUSTERS
from recuse.metrics.result import NUMBER_COLUMNS as NUMBER_COLUMNS  # every estimates table's
from recuse.metrics.result import MetricResult
from recuse.metrics.summary import PairwiseBias
from recuse.metrics.verdicts import ORDERS_NOTE, Orders, judged_in_both_orders
from recuse.numbers import percent
from recuse.outputs import file_name
from recuse.probe_tables import ORIGINAL, is_probe_table
from recuse.regression.robustness import FAST_CHECKS  # the default: the battery's cheap checks
from recuse.report import figures as fig
from recuse.report.bias import Bias
from recuse.report.labels import FDR_LABEL, ORDERS_LABEL
from recuse.report.model import (
    Baseline,
    Exclusion,
    Figure,
    FigureFormat,
    Finding,
    NotEstimated,
    PMethod,
    Table,
)
from recuse.roster import SELF_SCOPES, Roster, SelfScope
from recuse.tables import TableKind

#: what ``--human-ties`` does, in the report's settings
HUMAN_TIES_NOTE: dict[str, str] = {
    "drop": "labels of 0.5 (a tie, or votes split evenly where a label is a share of "
    "several votes) left out of EO and verbosity, and counted in the exclusions (a table "
    "without judges: beside the labels' own length preference); the calibrated headline's "
    "strengths count them ½ under any choice (human_ties='drop')",
    "split": "labels of 0.5 (a tie, or votes split evenly) count half a pair to each side "
    "in EO and verbosity (and the labels' own length preference); agreement accuracy, "
    "calibration and certification leave them out (their own rule), counted in the "
    "exclusions; the calibrated headline's strengths count them ½ under any choice "
    "(human_ties='split')",
    "error": "a table with a label of 0.5 is refused (--human-ties error, "
    "human_ties='error'); none was there",
}
SELF_SCOPE_NOTE: dict[str, str] = {
    "snapshot": "a judge's own answers are those of its exact model id (a dated snapshot, "
    "or the undated line name); the other snapshots of its line count as its family",
    "line": "a judge's own answers are those of every model of its line (each dated "
    "snapshot and the undated name); its family is the rest of its family",
}

TEXT_LIMIT = 300  # characters of a prompt/response shown in an example
SLUG_MAX = 100  # bytes of a table/figure name derived from input names

#: the audit's interval methods in words (its settings and notes): BCa, unless a
#: result's method names another — the percentile interval of the competence-calibrated
#: self-preference and its familiarity mediation
#: (:data:`~recuse.metrics.competence.CALIBRATED_INTERVAL`), the familiarity slopes
#: (:func:`~recuse.metrics.familiarity.familiarity_bias`) and the leaderboard's
#: coefficients (:mod:`recuse.analyses.leaderboard`, its ends expanded); the position
#: rates' intervals (:func:`~recuse.metrics.estimate.moved_span`,
#: :func:`~recuse.metrics.estimate.unseen_span`, which a probe's effect no pair moved has
#: too); a probe's effect few prompts move (:func:`~recuse.metrics.estimate.padded_span`);
#: the Wilson interval of the verbosity curves' bins and the ladder's rates
#: (:func:`~recuse.metrics.bootstrap.share_interval`); the ECE's jackknife Student
#: interval (:data:`~recuse.metrics.calibration.ECE_INTERVAL`)
BOOTSTRAP_WORDS = (
    f"cluster bootstrap over prompts, {INTERVAL_NAMES['bca']} unless a result's method "
    f"names another: a {INTERVAL_NAMES[CALIBRATED_INTERVAL]} for the competence-calibrated "
    "self-preference and its familiarity mediation, the familiarity slopes and the "
    "leaderboard's coefficients (the leaderboard's expanded for the prompts' number); the "
    "BCa interval of verbosity, the demographic-parity "
    f"self- and family preference, agreement and the position rates {EXPANDED_WORDS}; "
    "the position rates' BCa interval widened where few pairs "
    "change with the order (Student's t, within an exact Clopper–Pearson bound), or an "
    "exact bound (not a bootstrap) where none does (a probe's effect: where no pair moves); "
    "a probe's effect moved one way only on at most half the prompts: the BCa interval "
    "expanded for the prompts' number, not padded; one whose pairs "
    "moved both ways on at most half the prompts: the BCa "
    "interval expanded for the prompts' number and padded by up to two more effective "
    "prompts' variance, in proportion to the moving variance the fewer way carries (full "
    "from an eighth); past half the prompts moving, the expansion and padding fade, to the "
    "plain BCa interval where all move alike (the moving prompts counted by the size of "
    "their net moves); "
    "the verbosity curves' bins and the self-preference ladder's rates: a Wilson score "
    "interval at the effective pairs of the bootstrap, p(1 − p)/se²; the calibration "
    f"error (ECE): a {ECE_INTERVAL} (not a bootstrap)"
)


@dataclass(frozen=True)
class AuditOptions:
    """How the audit estimates: interval level, bootstrap size, seed, judges, figures,
    which analyses run (``only`` / ``skip``: analysis ids; empty ``only`` = all)."""

    level: float = 0.9
    n_boot: int = N_BOOT
    seed: int = 0
    judges: tuple[str, ...] = ()
    min_n: int = 5
    figure_format: FigureFormat = "png"
    examples: int = 3
    se: SE = "cluster"
    robustness: tuple[str, ...] = FAST_CHECKS
    only: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()
    orders: Orders = "both"
    fdr: bool = True  # Benjamini–Hochberg across the summary's tests
    self_scope: SelfScope = "snapshot"  # what counts as the judge itself (roster.py)
    human_ties: HumanTiesMode = "drop"  # labels of 0.5 in EO and verbosity (--human-ties)
    material: Mapping[str, float] = field(default_factory=dict)  # --material KEY=X
    #: where each option came from, by field name of :class:`recuse.options.Settings`
    #: (:func:`recuse.options.setting_sources`; empty: every one its default)
    sources: Mapping[str, str] = field(default_factory=dict, compare=False)
    #: how an option is worded from its name, value and source: the options' own
    #: :func:`recuse.options.option_as_set`, given by the settings that made these
    #: options (:meth:`recuse.options.Settings.audit_options`; options import the
    #: analyses, so the analyses take the wording from them); None: the flag
    wording: Callable[[str, Any, str], str] | None = field(default=None, compare=False, repr=False)

    def said(self, name: str) -> str:
        """Option ``name`` (``orders``, ``self_scope``, ``human_ties``) as the user set
        it, on the command line, in recuse.toml or as a keyword
        (:func:`recuse.options.option_as_set`): ``--orders first`` or ``orders =
        "first" in recuse.toml``; options made without settings: the flag.

        >>> AuditOptions(orders="first").said("orders")
        '--orders first'
        """
        value = getattr(self, name)
        if self.wording is None:
            return f"--{name.replace('_', '-')} {value}"
        return self.wording(name, value, self.sources.get(name, "default"))

    def __post_init__(self) -> None:
        self.check()

    def check(self) -> None:
        """Raise :class:`ConfigError` for a value outside its range. Called once, as the
        options are made: an ``AuditOptions`` that exists is a valid one (its ``only`` /
        ``skip`` ids are checked against the registry by
        :func:`recuse.analyses.selected`, where the registry is in scope)."""
        check_interval_level(self.level)
        with named_settings():  # the bootstrap's rules (the audit's bounds), said of the flag
            check_n_boot(self.n_boot, least=LEAST_N_BOOT)
            check_min_n(self.min_n)
            check_seed(self.seed)
        check_resamples(level=self.level, n_boot=self.n_boot)
        if self.examples < 0:
            raise ConfigError(f"examples must be 0 or more; got {self.examples}")
        if self.figure_format not in get_args(FigureFormat):
            raise ConfigError("figure format must be 'png' or 'svg'")
        if self.orders not in ORDERS_NOTE:
            raise ConfigError(f"--orders must be both, first or second; got {self.orders!r}")
        if self.self_scope not in SELF_SCOPES:
            raise ConfigError(f"--self-scope must be snapshot or line; got {self.self_scope!r}")
        if self.human_ties not in get_args(HumanTiesMode):
            raise ConfigError(f"--human-ties must be drop, split or error; got {self.human_ties!r}")
        if self.se not in get_args(SE):
            raise ConfigError(f"--se must be one of {', '.join(get_args(SE))}; got {self.se}")
        for key, value in self.material.items():
            if not (isinstance(value, int | float) and value > 0 and value < float("inf")):
                raise ConfigError(
                    f"--material {key}={value}: the smallest effect worth acting on must be a "
                    "positive number, e.g. --material position=0.05"
                )

    @property
    def ties(self) -> HumanTies:
        """How the metrics read a human tie: "split" with ``--human-ties split``, else
        "drop" (with "error" a table holding one is refused before any estimate)."""
        return "split" if self.human_ties == "split" else "drop"

    def ties_said(self) -> str:
        """How the audit reads a human tie (:attr:`ties`) in the words of where the
        user set it (:meth:`said`: ``human-ties = "split" in recuse.toml``); the flag
        where the option is not that reading (``error``: no tie is read)."""
        if self.human_ties == self.ties:
            return self.said("human_ties")
        return f"--human-ties {self.ties}"

    @property
    def resampling(self) -> Resampling:
        """The bootstrap settings every analysis passes to the metric functions
        (``boot=``): this audit's level, resamples and seed."""
        return Resampling(level=self.level, n_boot=self.n_boot, seed=self.seed)

    def to_dict(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "bootstrap resamples (n_boot)": self.n_boot,
            "bootstrap": BOOTSTRAP_WORDS,
            "judges": ", ".join(self.judges) if self.judges else "all",
            "min_n (smallest group estimated)": self.min_n,
            ORDERS_LABEL: f"{self.orders}: {ORDERS_NOTE[self.orders]} (verdict='prob')",
            "human ties (--human-ties / human_ties=)": HUMAN_TIES_NOTE[self.human_ties],
            "regression standard errors": self.se,
            FDR_LABEL: "Benjamini–Hochberg false-discovery control across "
            "the summary's tests; flags use adjusted values"
            if self.fdr
            else "none (--no-fdr / fdr=False): each interval on its own",
            "robustness checks": ", ".join(self.robustness) or "none",
            "self (--self-scope / self_scope=)": SELF_SCOPE_NOTE[self.self_scope],
            "figures": self.figure_format,
            "analyses": ", ".join(self.only) if self.only else "all",
            "analyses skipped on request": ", ".join(self.skip) or "none",
            "materiality (--material / material=)": ", ".join(
                f"{k}={v:g}" for k, v in self.material.items()
            )
            or "each bias's default",
        }


@dataclass
class Parts:
    """What one analysis contributes to its section."""

    findings: list[Finding] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: sentences for the report's first screen and the terminal (each tool's own number)
    headlines: list[str] = field(default_factory=list)
    #: numbers about the data's labels, no judge's (:class:`~recuse.report.model.Baseline`)
    baselines: list[Baseline] = field(default_factory=list)
    seconds: float = 0.0


#: why an analysis cannot run on a table (None: it can), with the audit's roster
Needs = Callable[[pd.DataFrame, Roster], str | None]
AuditProgress = Callable[[str], None]
Build = Callable[["Context", Input, PairwiseBias | None], None]
#: what an analysis builds from a table it cannot estimate its biases on (no judge's
#: verdicts), into its section: no findings, numbers about the data's labels only
Unjudged = Callable[["Context", Input], None]


def nothing_needed(frame: pd.DataFrame, roster: Roster) -> str | None:
    return None


@dataclass(frozen=True)
class Analysis:
    """One analysis of the audit: its words, what it needs, and how it is built.

    ``heading``: its id, title, table kind and biases (:mod:`recuse.biases`, light to
    import for ``recuse gate``), the biases it estimates the headline one first (a skip
    of the whole analysis leaves that one empty). ``requires``: what it needs, in words, for
    ``recuse analyses``. ``metrics``: for pairwise analyses, the
    :func:`~recuse.metrics.pairwise_bias` metrics it adds to the shared bootstrap.
    ``estimable``: a stricter check than ``needs`` for ``recuse validate`` — why the
    analysis, though it runs (and reports each judge as not estimated), would estimate
    nothing on the table: the inputs its estimates need are missing (labels, the
    judge's own answers, lengths, both orders, an identified regression term).
    """

    heading: Heading
    intro: str
    requires: str
    build: Build
    needs: Needs = nothing_needed
    metrics: Mapping[str, Bias | None] = field(default_factory=dict)
    describe: Callable[[MetricResult], str] = lambda r: ""  # a finding's detail
    #: whether it reads a probe table's edited and self-recognition rows; every other
    #: analysis sees only the original pairs of a probe table
    reads_probes: bool = False
    estimable: Needs = nothing_needed
    #: called by the audit on an input the analysis was skipped for (``needs`` gave a
    #: reason; the skip stays): what the data still gives without a judge (verbosity:
    #: the humans' own length preference, Figure 4 and its one number), or nothing
    unjudged: Unjudged | None = None
    #: for ``recuse validate``: on a table the analysis is skipped for, what
    #: :attr:`unjudged` would still give, in words (None: nothing), so that validate's
    #: "no" does not deny the number the audit prints
    unjudged_gives: Needs | None = None

    def supported(self, frame: pd.DataFrame, roster: Roster) -> str | None:
        """Why the analysis would estimate nothing on ``frame`` with the context's
        ``roster`` (None: it would)."""
        return self.needs(frame, roster) or self.estimable(frame, roster)

    @property
    def id(self) -> str:
        return self.heading.id

    @property
    def title(self) -> str:
        return self.heading.title

    @property
    def table(self) -> TableKind:
        return self.heading.table

    @property
    def biases(self) -> tuple[Bias, ...]:
        return self.heading.biases

    @property
    def headline(self) -> Bias:
        return self.heading.headline


@dataclass
class Context:
    """The audit in progress: options, roster, and what each analysis has produced."""

    options: AuditOptions
    roster: Roster
    parts: dict[str, Parts] = field(default_factory=dict)
    skipped: list[NotEstimated] = field(default_factory=list)
    exclusions: list[Exclusion] = field(default_factory=list)
    timings: list[tuple[str, float]] = field(default_factory=list)
    progress: AuditProgress | None = None
    ran: set[str] = field(default_factory=set)  # ids of the analyses that applied to an input

    def step(self, line: str) -> None:
        """Tell the user which step starts (a long audit is never silent)."""
        if self.progress is not None:
            self.progress(line)

    def part(self, analysis: Analysis) -> Parts:
        return self.parts.setdefault(analysis.id, Parts())

    @property
    def selves(self) -> dict[str, str] | None:
        """What counts as the judge itself (``options.self_scope`` through the roster)."""
        return self.roster.self_map(self.options.self_scope)

    @contextmanager
    def timed(self, label: str, analysis: Analysis | None = None) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            seconds = time.perf_counter() - start
            self.timings.append((label, seconds))
            if analysis is not None:
                self.part(analysis).seconds += seconds

    def skip(
        self,
        analysis: Analysis,
        reason: str,
        dataset: str = "",
        judge: str = "",
        headline: bool = True,
        *,
        bias: Bias | None = None,
        metric: str = "",
    ) -> None:
        """Record an estimate not made (``metric``: the one estimate, or "" for the
        analysis); a headline skip without ``bias`` leaves the analysis's headline bias
        empty."""
        if bias is None and headline:
            bias = analysis.headline
        self.skipped.append(
            NotEstimated(analysis.title, reason, dataset, judge, headline, bias, metric=metric)
        )

    def add(self, analysis: Analysis, result: Finding | NotEstimated) -> None:
        """A finding into the analysis's section, or a skip into the list of skips."""
        if isinstance(result, Finding):
            self.part(analysis).findings.append(result)
        else:
            self.skipped.append(result)


def _finite(*values: Any) -> bool:
    return all(isinstance(v, int | float) and math.isfinite(v) for v in values)


def _or_none(x: float | None) -> float | None:
    return float(x) if x is not None and math.isfinite(x) else None


def to_finding(
    analysis: Analysis,
    bias: Bias,
    *,
    judge: str,
    dataset: str,
    estimate: float,
    ci_low: float,
    ci_high: float,
    n: int,
    level: float,
    method: str,
    clusters: int | None = None,
    detail: str = "",
    what: str = "",
    std_error: float | None = None,
    p_value: float | None = None,
    warnings: Sequence[str] = (),
    p_method: PMethod = "",
    p_floor: float | None = None,
    fixed: bool = False,
    absolute: bool = False,
    interval_rule: IntervalRule | None = None,
    heaviest_prompt: float | None = None,
    extrapolated: Extrapolation | None = None,
    notes: Sequence[str] = (),
    scope: str = "",
) -> Finding | NotEstimated:
    """The one conversion of an estimate into a finding, or a skip saying why not.

    ``what`` names the estimate in the skip's reason (default: the bias's title);
    both are in the summary when ``bias.headline`` is. ``p_method`` and ``p_floor``:
    how ``p_value`` was computed and the smallest it can be (:attr:`Finding.p_method`);
    dropped with a p-value that is not kept. ``fixed``: the interval has zero width
    because the value is fixed by construction (:attr:`Finding.fixed`); ``absolute``: the
    estimate is the absolute value of a signed statistic (:attr:`Finding.absolute`);
    ``interval_rule`` and ``heaviest_prompt``: which rule made a bootstrap interval, and
    the exact bound's prompt-size factor (:attr:`Finding.interval_rule`);
    ``extrapolated``: the ends extrapolated past the resamples (:attr:`Finding.extrapolated`);
    ``notes``: what to know of the number that is no caveat (:attr:`Finding.notes`);
    ``scope``: which of the judge's estimates of ``bias`` it is (:attr:`Finding.scope`).
    """
    headline = bias.headline
    p = _or_none(p_value) if bias.tested else None
    if not _finite(estimate, ci_low, ci_high) or n < 1:
        return NotEstimated(
            analysis.title,
            f"{what or bias.title}: no finite estimate",
            dataset,
            judge,
            headline,
            bias,
        )
    return Finding(
        judge=judge,
        bias=bias,
        estimate=float(estimate),
        ci_low=float(ci_low),
        ci_high=float(ci_high),
        n=int(n),
        level=float(level),
        method=method,
        dataset=dataset,
        detail=detail,
        clusters=clusters,
        section=analysis.id,
        headline=headline,
        std_error=_or_none(std_error),
        p_value=p,
        warnings=tuple(warnings),
        p_method=p_method if p is not None else "",
        p_floor=_or_none(p_floor) if p is not None and p_floor is not None else None,
        fixed=fixed,
        absolute=absolute,
        interval_rule=interval_rule,
        heaviest_prompt=heaviest_prompt,
        extrapolated=extrapolated,
        notes=tuple(notes),
        scope=scope,
    )


def from_result(
    analysis: Analysis, bias: Bias, r: MetricResult, *, dataset: str, detail: str = ""
) -> Finding | NotEstimated:
    """:func:`to_finding` for a pairwise :class:`~recuse.metrics.result.MetricResult`."""
    return to_finding(
        analysis,
        bias,
        judge=str(r.judge),
        dataset=dataset,
        estimate=r.estimate,
        ci_low=r.ci_low,
        ci_high=r.ci_high,
        n=r.n,
        level=r.level,
        method=r.method,
        clusters=r.n_clusters,
        detail=detail,
        what=r.metric,
        std_error=r.std_error,
        p_value=r.p_value,
        warnings=r.warnings,
        # the bootstrap interval inverted: at least 2/(B+1) over the B kept resamples
        p_method="bootstrap",
        p_floor=2.0 / (r.n_boot - r.n_boot_dropped + 1) if r.n_boot > r.n_boot_dropped else None,
        fixed=r.fixed,
        absolute=r.absolute,
        interval_rule=r.interval_rule,
        heaviest_prompt=r.heaviest,
        extrapolated=r.extrapolated,
        notes=r.notes,
    )


#: keys of a result's ``to_dict`` left out of the section's table: its counts and metric
#: (said otherwise), ``fixed_by_construction``, which the warnings say in words, the
#: interval's rule and prompt factor (the method says the rule; report.json's findings and
#: ``metrics pairs --out`` carry both) and its extrapolated ends (the warnings say them;
#: report.json's findings carry them)
_NOT_IN_TABLE = (
    "counts", "metric", "fixed_by_construction", "interval_rule", "heaviest_prompt",
    "extrapolated",
)  # fmt: skip


def estimate_columns(frame: pd.DataFrame) -> dict[str, str]:
    """The words of an estimates table's columns (:data:`recuse.metrics.result.COLUMNS`)
    for those it has: its ``Table.columns``."""
    from recuse.metrics.result import COLUMNS

    return {str(c): COLUMNS[str(c)] for c in frame.columns if str(c) in COLUMNS}


def table_row(r: MetricResult, dataset: str, bias: str) -> dict[str, Any]:
    """One row of an analysis's estimates table: ``dataset``, ``metric``, ``bias`` (the
    finding's key, "" for none: :func:`bias_keys`), ``definition`` (the metric's:
    :attr:`~recuse.metrics.result.MetricResult.definition`), then the result's fields less
    :data:`_NOT_IN_TABLE` (with :data:`NUMBER_COLUMNS`, which every such table keeps),
    its components as ``name=value; …`` and its warnings and notes as text, "" when none
    (the page and the CSV read ``[]`` and ``False`` in the agreement table, which built its rows
    apart)."""
    rec = {
        "dataset": dataset,
        "metric": r.metric,
        "bias": bias,
        "definition": r.definition,
        **{k: v for k, v in r.to_dict().items() if k not in _NOT_IN_TABLE},
    }
    rec["components"] = "; ".join(f"{k}={v:.4g}" for k, v in r.components.items() if v is not None)
    rec["warnings"] = "; ".join(r.warnings)  # text in the CSV and the page, not ['…']
    rec["notes"] = "; ".join(r.notes)
    return rec


def warnings_texts(results: Sequence[MetricResult]) -> dict[str, list[str]]:
    """The page's ``warnings`` cells of an estimates table of ``results`` (one per row,
    :attr:`~recuse.report.model.Table.texts`): each result's warnings joined by "; ",
    its ends extrapolated past the resamples in a line's words, read from its
    ``extrapolated`` record (:func:`~recuse.report.extrapolated.short_warnings`); the
    CSV and report.json keep them whole (:func:`table_row`)."""
    from recuse.report.extrapolated import short_warnings

    return {"warnings": ["; ".join(short_warnings(r.warnings, r.extrapolated)) for r in results]}


def add_pairwise_results(
    ctx: Context, analysis: Analysis, inp: Input, shared: PairwiseBias | None
) -> None:
    """The analysis's metrics from the shared bootstrap: a finding per headline metric
    and judge, a skip for each one not estimated, and the section's tidy table.

    The table names each row twice: ``metric``, the estimator's id (as
    :mod:`recuse.metrics` and ``recuse metrics`` name it, e.g. ``verbosity_bias``), and
    ``bias``, the key its finding has in ``report.json``, the summary and ``--material``
    / the gate (e.g. ``verbosity_recall_gap``; empty for an estimate that is no finding,
    e.g. ``flip_rate``): :func:`bias_keys` is the mapping."""
    if shared is None:
        return
    rows = []
    keys = bias_keys(analysis.metrics)
    tabled = [r for r in shared.results if r.metric in analysis.metrics]
    for r in tabled:
        rows.append(table_row(r, inp.name, keys[r.metric]))
        bias = analysis.metrics[r.metric]
        if bias is not None:
            detail = analysis.describe(r)
            ctx.add(analysis, from_result(analysis, bias, r, dataset=inp.name, detail=detail))
    for s in shared.skipped:
        if s.metric in analysis.metrics:
            bias = analysis.metrics[s.metric]
            ctx.skip(
                analysis,
                s.reason,
                inp.name,
                str(s.judge or ""),
                headline=bias is not None and bias.headline,
                bias=bias,
                metric=s.metric,
            )
    if rows:
        table = pd.DataFrame(rows).drop(columns=["method"])
        if table["n_of"].isna().all():  # every n counts all the judge's rows: said nowhere
            table = table.drop(columns=["n_of"])
        ctx.part(analysis).tables.append(
            Table(
                slug(analysis.id, inp.name),
                f"All {analysis.title.lower()} estimates — {inp.name}",
                table,
                columns=estimate_columns(table),
                texts=warnings_texts(tabled),
            )
        )


def bias_keys(metrics: Mapping[str, Bias | None]) -> dict[str, str]:
    """Metric id -> the key of the bias its finding reports (``""``: no finding), e.g.
    ``{"verbosity_bias": "verbosity_recall_gap", "verbosity_deviation": ""}``: the
    ``metric`` and ``bias`` columns of an analysis's estimates table."""
    return {m: (b.key if b is not None else "") for m, b in metrics.items()}


def findings_of(ctx: Context, analysis: Analysis, dataset: str, bias: Bias) -> list[Finding]:
    return [
        f for f in ctx.part(analysis).findings if f.dataset == dataset and f.bias.key == bias.key
    ]


def slug(*parts: str) -> str:
    """A table/figure name from input names: bounded, unique by a hash when cut."""
    text = "-".join(parts).lower()
    return file_name("".join(c if c.isalnum() else "-" for c in text).strip("-"), limit=SLUG_MAX)


def truncate(text: Any) -> str:
    if not isinstance(text, str):
        return ""
    text = " ".join(text.split())
    return text if len(text) <= TEXT_LIMIT else text[: TEXT_LIMIT - 1] + "…"


def red_caption(null: float, *, uninformative: bool = False, adjusted: bool = True) -> str:
    """What red means in a figure coloured before the summary reads its findings: the
    raw interval, not the summary's flag (adjusted for the number of tests, and never
    for a negligible estimate) — a figure of 7 red self-biases beside a summary that
    flags 2 must say why. ``uninformative``: an interval drawn rules nothing out (fewer
    than ``FEW_CLUSTERS`` prompts, or zero width; :attr:`Finding.informative`), and its
    red is its p-value's (:attr:`Finding.excludes_null`), so a bar crossing the line can
    be red and one missing it black. ``adjusted``: the audit's ``fdr``; with
    ``--no-fdr`` no flag is adjusted, and the caption said they were.

    >>> red_caption(0.5, adjusted=False).split("; ")[0]
    'Red: the interval excludes 0.5'
    """
    few = (
        f" An interval from fewer than {FEW_CLUSTERS} prompts or of zero width rules "
        f"nothing out on its own: it is red when its p-value is at most 1 − the level."
        if uninformative
        else ""
    )
    if not adjusted:
        return (
            f"Red: the interval excludes {null:g}; the summary's flags (not adjusted for the "
            f"number of tests: --no-fdr) leave out negligible estimates.{few}"
        )
    return (
        f"Red: the interval excludes {null:g}, before the false-discovery adjustment; the "
        f"summary's flags are adjusted and leave out negligible estimates.{few}"
    )


def coef_figure(findings: Sequence[Finding], dataset: str, what: str, o: AuditOptions) -> Figure:
    """Each judge's estimate with its interval, the no-bias value marked; the axis in the
    bias's unit. Red: the interval excludes no bias (:attr:`Finding.excludes_null`, the
    reading before the false-discovery adjustment: the summary's flags come after it);
    never for a number its bias never flags (equal opportunity beside the calibrated
    headline, a quality score) — red there read as a bias the section calls unflagged."""
    bias = findings[0].bias
    if any(f.bias.key != bias.key for f in findings):
        raise ValueError(f"one figure per bias: {sorted({f.bias.key for f in findings})}")
    if bias.flags:
        weak = not all(f.informative for f in findings)
        red = red_caption(bias.null, uninformative=weak, adjusted=o.fdr)
        caption = f"Dashed line: {bias.null_text}. {red}"
    else:
        why = (
            "not adjusted for what moves it without any bias" if bias.unadjusted else "no bias test"
        )
        caption = f"Dashed line: {bias.null_text}. Never flagged ({why}): no interval is red."
    return fig.coefficients(
        [f.judge for f in findings],
        [f.estimate for f in findings],
        [f.ci_low for f in findings],
        [f.ci_high for f in findings],
        id=slug("coef", what, dataset),
        title=f"{what[:1].upper()}{what[1:]} — {dataset}",
        xlabel=f"{bias.short_unit} (estimate, {percent(o.level)} interval)",
        null=bias.null,
        highlight=[bias.flags and f.excludes_null for f in findings],
        caption=caption,
        format=o.figure_format,
        texts=[f.text for f in findings],  # the alt text reads as the findings
    )


def needs_verdicts(frame: pd.DataFrame, roster: Roster) -> str | None:
    """The reason a pairwise analysis cannot run on a table without judge verdicts."""
    if "judge" not in frame.columns or frame["judge"].isna().all():
        labelled = "human" in frame.columns and bool(frame["human"].notna().any())
        what = "human labels only" if labelled else "and no human labels either"
        return f"no judge verdicts in this data ({what}) — run a judge on it first"
    return None


def _labelled_verdicts(frame: pd.DataFrame) -> pd.Series:
    """Rows with a judge verdict and a human label (the pairs EO/DP/verbosity use)."""
    if "p_a" not in frame.columns or "human" not in frame.columns:
        return pd.Series(False, index=frame.index)
    return frame["judge"].notna() & frame["p_a"].notna() & frame["human"].notna()


def needs_labelled_verdicts(frame: pd.DataFrame, roster: Roster) -> str | None:
    """Why an analysis comparing the judge with the human labels cannot run, or None."""
    reason = needs_verdicts(frame, roster)
    if reason:
        return reason
    if not _labelled_verdicts(frame).any():
        return (
            "no row has both a judge verdict and a human label (it compares the judge "
            "with the labels)"
        )
    return None


def families_of(names: pd.Series, roster: Roster) -> dict[str, str]:
    """Roster family of each name; a name the roster lacks is its own family (as the
    audit reads unknown models). The roster is asked once per distinct name, not once per
    row (a million-row ratings file names a few dozen models)."""
    distinct = pd.unique(names.dropna().astype(str).to_numpy(dtype=object))
    return {n: roster.family(n) if n in roster else n for n in distinct}


def needs_own_answers(
    frame: pd.DataFrame, roster: Roster, *, relation: Literal["self", "family"]
) -> str | None:
    """Why self- (``relation="self"``) or family preference cannot run, or None: it
    needs a labelled, judged pair holding the judge's own (or a family member's)
    answer beside another model's, as :func:`recuse.metrics.self_preference.favored_side`
    finds them."""
    from recuse.metrics.self_preference import favored_side

    reason = needs_labelled_verdicts(frame, roster)
    if reason:
        return reason
    rows = frame[_labelled_verdicts(frame)]
    families = None
    if relation == "family":
        names = pd.concat([rows["judge"], rows["model_a"], rows["model_b"]])
        families = families_of(names, roster)
    if not (favored_side(rows, relation=relation, families=families) != 0).any():
        judges = ", ".join(sorted(rows["judge"].astype(str).unique())[:5])
        if relation == "self":
            return (
                f"no labelled pair holds a judge's own answer beside another model's "
                f"(judges: {judges}; the models must include the judges)"
            )
        return (
            f"no labelled pair holds an answer of a judge's family (not the judge's own) "
            f"beside one from outside the family (judges: {judges})"
        )
    return None


def needs_lengths(frame: pd.DataFrame, roster: Roster) -> str | None:
    """Why verbosity cannot run, or None: labelled verdicts and response lengths
    (texts or len_a/len_b) that differ on some of those pairs."""
    reason = needs_labelled_verdicts(frame, roster)
    if reason:
        return reason
    rows = frame[_labelled_verdicts(frame)]
    if {"response_a", "response_b"} <= set(rows.columns):
        la = rows["response_a"].map(lambda t: len(str(t).split()) if isinstance(t, str) else None)
        lb = rows["response_b"].map(lambda t: len(str(t).split()) if isinstance(t, str) else None)
    elif {"len_a", "len_b"} <= set(rows.columns):
        la, lb = rows["len_a"], rows["len_b"]
    else:
        return "no response texts or lengths (response_a/response_b or len_a/len_b)"
    la, lb = pd.to_numeric(la, errors="coerce"), pd.to_numeric(lb, errors="coerce")
    if not (la.notna() & lb.notna() & (la != lb)).any():
        return "no labelled pair with both response lengths known and different"
    return None


def needs_both_orders(frame: pd.DataFrame, roster: Roster) -> str | None:
    """Why position bias cannot run, or None: a pair judged in both orders."""
    reason = needs_verdicts(frame, roster)
    if reason:
        return reason
    if not judged_in_both_orders(frame).any():
        return (
            "no pair judged in both orders (p_a_first and p_a_second): position bias "
            "compares the two orders of one pair"
        )
    return None


def unedited(frame: pd.DataFrame) -> pd.DataFrame:
    """A probe table's original pairs and plain pairs (every row of any other table)."""
    if not is_probe_table(frame):
        return frame
    keep = frame["probe"].isna() | (frame["probe"] == ORIGINAL)  # plain pairs stay
    return frame if keep.all() else frame[keep].reset_index(drop=True)


def judged(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows with a judge."""
    return frame[frame["judge"].notna()] if "judge" in frame.columns else frame.iloc[:0]
