"""`recuse metrics pairs PATH_OR_DATASET`: pairwise bias metrics with bootstrap intervals."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal, cast

import typer
from rich.console import Console
from rich.text import Text

from recuse import numbers
from recuse.bootstrap_rules import (
    MAX_N_BOOT,
    check_interval_level,
    check_min_n,
    named_settings,
)
from recuse.choices import METRICS, HumanTies, HumanTiesMode, JudgeTies, Orders, SelfScope, Verdict
from recuse.cli.app import (
    READING,
    AllowUnknownOption,
    ConfidenceOfOption,
    ConfidenceOption,
    MapOption,
    SwappedFrameOption,
    ValuesOption,
    app,
    cli_context,
    config_help,
    setting_sources,
    settings_files,
)
from recuse.cli.console import TerminalTable, cell
from recuse.cli.console import console as make_console
from recuse.errors import ConfigError, EstimationError
from recuse.interrupt import complete_over
from recuse.interval_rules import MOVED_WORDS
from recuse.lazy import lazy_module
from recuse.numbers import percent
from recuse.options import DEFAULTS, Settings, settings_fields
from recuse.reference import ReferenceKind, reword

if TYPE_CHECKING:
    import pandas as pd

    from recuse import files as recuse_files
    from recuse import outputs, tables
    from recuse.analyses import self_preference as self_words
    from recuse.data import inputs, reading_notes
    from recuse.metrics import bootstrap, competence, summary
    from recuse.metrics import result as metric_results
    from recuse.metrics.result import MetricResult
    from recuse.metrics.summary import PairwiseBias
    from recuse.roster import Roster
else:  # imported as a command first uses them (recuse.lazy)
    outputs = lazy_module("recuse.outputs")
    recuse_files = lazy_module("recuse.files")
    tables = lazy_module("recuse.tables")
    inputs = lazy_module("recuse.data.inputs")
    reading_notes = lazy_module("recuse.data.reading_notes")
    bootstrap = lazy_module("recuse.metrics.bootstrap")
    competence = lazy_module("recuse.metrics.competence")
    metric_results = lazy_module("recuse.metrics.result")
    summary = lazy_module("recuse.metrics.summary")
    self_words = lazy_module("recuse.analyses.self_preference")

metrics_app = typer.Typer(
    help="Bias metrics of LLM judges with bootstrap confidence intervals.", no_args_is_help=True
)
app.add_typer(metrics_app, name="metrics")

OUT_SUFFIXES = (".json", ".csv")
TextUnit = Literal["words", "chars", "column"]  # verbosity.Unit without tokens (no tokenizer)
#: the audit's options that this command takes too: the same choices, default and help
_AUDIT = settings_fields()
METRIC_HELP = f"Metric to compute (repeatable; default: all): {', '.join(METRICS)}."


def _check_out(
    out: str | None, source: str, data_dir: Path | None, also: list[Path]
) -> Path | None:
    if out is None:
        return None
    path = Path(out).expanduser()
    if path.suffix.lower() not in OUT_SUFFIXES:
        raise ConfigError(f"--out {out}: the file name must end in .json or .csv")
    return outputs.check_output(path, inputs=[*inputs.read_paths(source, data_dir), *also])


def _resampling(*, level: float, n_boot: int, seed: int, min_n: int) -> bootstrap.Resampling:
    """The bootstrap's options held to the library's rules (``--n-boot`` at most
    :data:`~recuse.metrics.bootstrap.MAX_N_BOOT`, as in the audit), each error said of
    its flag, and to the command line's (:func:`check_resamples`); ``--level`` to the
    audit's rule (:func:`~recuse.analyses.base.check_interval_level`)."""
    check_interval_level(level)
    with named_settings():
        boot = bootstrap.Resampling(level=level, n_boot=n_boot, seed=seed)
        check_min_n(min_n)
    bootstrap.check_resamples(level=level, n_boot=n_boot)
    return boot


def curve_words(
    result: PairwiseBias,
    *,
    source: str,
    level: float,
    orders: Orders,
    kind: ReferenceKind,
    orders_said: str | None = None,
) -> dict[str, dict[str, object]]:
    """Per curve of ``result``, the words the audit's table of it carries: its title
    (what a row's ``mean`` is the mean of, and its interval) and its columns' words
    (:func:`~recuse.metrics.verbosity.curve_columns`, the open last bin's empty
    ``bin_high`` said), in the words of ``kind``'s labels. The JSON gave the curves'
    numbers alone. ``orders_said``: the orders as the user set them
    (:func:`recuse.options.option_as_set`)."""
    from recuse.analyses.verbosity import curve_title
    from recuse.metrics.verbosity import curve_columns_of

    return {
        name: {
            "title": reword(
                curve_title(
                    name, dataset=source, level=level, orders=orders, orders_said=orders_said
                ),
                kind,
            ),
            "columns": {
                c: reword(w, kind) for c, w in curve_columns_of(frame, level=level).items()
            },
        }
        for name, frame in result.curves.items()
    }


def write_results(
    result: PairwiseBias,
    path: Path,
    *,
    meta: dict[str, object],
    words: dict[str, dict[str, object]] | None = None,
    sources: dict[str, str] | None = None,
) -> str:
    """Write JSON (results, skipped, curves, settings and ``curve_words``, each curve's
    title and columns' words: :func:`curve_words`) or CSV (one row per result, exact,
    with a spreadsheet-safe copy under for-spreadsheets/), atomically; returns what was
    written, in words (:func:`recuse.outputs.written`). ``sources``: where each setting
    came from (:func:`recuse.cli.app.setting_sources`), the JSON's ``setting_sources``."""
    if path.suffix.lower() == ".json":
        payload = {
            "settings": meta,
            "setting_sources": sources or {},
            **result.to_dict(),
            "curve_words": words or {},
        }
        outputs.write_text(path, json.dumps(payload, indent=2, allow_nan=False))
        return outputs.written(path)
    return outputs.written(*outputs.write_csv(path, metric_results.results_frame(result.results)))


#: under the table: how its numbers are written, as the audit and ``print(result)`` write them
NUMBERS_LEGEND = (
    "estimate [interval]: as the audit and print(result) write them, the estimate of a "
    "signed difference with its sign (+0.13), the interval's ends with a sign only where "
    "negative ([−0.07, 0.36]); two decimals, three where all three numbers are under 0.1, "
    "more where all are under 0.001 or where the interval's ends would read alike"
)


#: the interval cell of a value fixed by construction (the audit page's words,
#: :attr:`recuse.report.model.Finding.parts`)
NOT_MEASURED_CELL = "none: not a measurement"


def _numbers(r: MetricResult) -> tuple[str, str]:
    """The estimate and its interval of one row, as :func:`recuse.numbers.estimate_parts`
    writes them for the audit and ``print(result)`` (:meth:`MetricResult.__str__`): the
    table wrote +0.182 [0.062, 0.307] where both write +0.18 [0.06, 0.31]. Signed where
    the result is a signed difference (:attr:`~recuse.metrics.result.MetricResult.signed`);
    a number that is not finite is left blank."""
    values = (r.estimate, r.ci_low, r.ci_high)
    if not all(math.isfinite(v) for v in values):
        shown = [numbers.decimal(v, 3) if math.isfinite(v) else "" for v in values]
        return shown[0], f"[{shown[1]}, {shown[2]}]"
    return numbers.estimate_parts(*values, signed=r.signed, null=r.null)


#: the options besides :data:`~recuse.cli.app.READING` ``metrics pairs`` takes from
#: recuse.toml: the audit's choices and meaning (docs/configuration.md)
PAIRS_FILE_OPTIONS = ("orders", "human_ties", "self_scope")


#: --config names the [audit] options this command takes from the file
PairsConfigOption = Annotated[
    Path | None, typer.Option("--config", help=config_help(PAIRS_FILE_OPTIONS))
]


@metrics_app.command("pairs")
def pairs_command(
    ctx: typer.Context,
    source: str = typer.Argument(..., help="Dataset name (see `recuse data list`) or a file."),
    judge: Annotated[
        list[str] | None,
        typer.Option("--judge", "-j", help="Judge to assess (repeat for several; default: all)."),
    ] = None,
    level: float = typer.Option(
        DEFAULTS.level,
        "--level",
        help="Confidence level of the intervals, in [0.5, 1) (the audit's default; a "
        "recuse.toml's level is read by recuse audit only).",
    ),
    n_boot: int = typer.Option(
        DEFAULTS.n_boot,
        "--n-boot",
        help=f"Bootstrap resamples (of prompts; at most {MAX_N_BOOT:,}).",
    ),
    seed: int = typer.Option(DEFAULTS.seed, "--seed", help="Seed of the bootstrap."),
    min_n: int = typer.Option(
        DEFAULTS.min_n, "--min-n", help="Fewest pairs a group needs before it is estimated."
    ),
    metric: Annotated[list[str] | None, typer.Option("--metric", "-m", help=METRIC_HELP)] = None,
    verdict: Annotated[
        Verdict, typer.Option("--verdict", help="prob (probabilities) or pick.")
    ] = "prob",
    orders: Annotated[
        Orders,
        typer.Option(
            "--orders",
            help="Presentation orders whose verdicts count: both (averaged, default), first "
            "(p_a_first only) or second (p_a_second only); position needs both.",
        ),
    ] = DEFAULTS.orders,
    human_ties: Annotated[
        HumanTiesMode, typer.Option("--human-ties", help=_AUDIT["human_ties"].help)
    ] = DEFAULTS.human_ties,
    self_scope: Annotated[
        SelfScope, typer.Option("--self-scope", help=_AUDIT["self_scope"].help)
    ] = DEFAULTS.self_scope,
    judge_ties: Annotated[
        JudgeTies, typer.Option("--judge-ties", help="half or drop (pick mode).")
    ] = "half",
    unit: Annotated[
        TextUnit,
        typer.Option(
            "--unit", help="Length unit for verbosity: words, chars or column (len_a/len_b)."
        ),
    ] = "words",
    out: str = typer.Option(
        None,
        "--out",
        "-o",
        help="Write results to FILE.json (with the verbosity curves, their titles and their "
        "columns' words) or FILE.csv.",
    ),
    data_dir: str = typer.Option(None, "--data-dir", help="Folder with the datasets."),
    mapping: MapOption = None,
    values: ValuesOption = None,
    swapped_frame: SwappedFrameOption = "original",
    confidence: ConfidenceOption = None,
    confidence_of: ConfidenceOfOption = "winner",
    allow_unknown_models: AllowUnknownOption = False,  # no effect, kept for old scripts
    config: PairsConfigOption = None,
) -> None:
    """Self-preference, family, verbosity and position bias of each judge in a pairs table.

    A file is read as recuse audit reads it: the options given here, else recuse.toml's
    (--config, else ./recuse.toml) [map], [values], [[model]] entries and its data-dir,
    swapped-frame, confidence and confidence-of keys; --orders, --human-ties and
    --self-scope likewise (the command line, else the file's orders, human-ties and
    self-scope, else the default)."""
    # Every option is checked before any work, so a bad one writes nothing.
    # orders, human_ties and self_scope: the audit's choices and meaning, read as it
    # reads them (command line > recuse.toml > default); level, n-boot, seed and min-n
    # are this command's own (their bounds differ: docs/configuration.md)
    settings, roster = cli_context(ctx, (*READING, *PAIRS_FILE_OPTIONS))
    orders, human_ties = settings.orders, settings.human_ties
    self_scope = settings.self_scope
    out_path = _check_out(out, source, settings.data_dir, settings_files(ctx))
    boot = _resampling(level=level, n_boot=n_boot, seed=seed, min_n=min_n)
    ties: HumanTies = "split" if human_ties == "split" else "drop"
    for m in metric or []:
        if m not in METRICS:
            raise ConfigError(f"--metric {m!r} is unknown — choose from {', '.join(METRICS)}")

    # a named dataset, a plain file or another tool's file, as recuse audit reads them
    loaded = inputs.load_input(
        source,
        table="pairs",
        data_dir=settings.data_dir,
        roster=roster,
        mapping=dict(settings.mapping) or None,
        reading=settings.reading(),
    )
    table = loaded.frame
    if human_ties == "error":
        tables.reject_human_ties(table, file=source)
    present = {str(j) for j in table["judge"].dropna()} if "judge" in table.columns else set()
    judges = [roster.judge_in(j, present) for j in judge] if judge and present else judge or None
    _refuse_labels_only(table, roster, source, judged=bool(present))
    # worded for the labels the source declares (recuse.reference): JudgeBench's correctness
    result = summary.pairwise_bias(
        table, roster, judges=judges, metrics=metric or None, verdict=verdict, human_ties=ties,
        judge_ties=judge_ties, unit=unit, boot=boot,
        min_n=min_n, orders=orders, selves=roster.self_map(self_scope),
        orders_said=settings.said("orders"),
    ).for_reference(loaded.source.reference)  # fmt: skip
    result = _name_hints(result, table, roster, self_scope)

    console = make_console()
    for note in reading_notes.read_in_orders(loaded.source.notes, table, orders=orders):
        console.print(cell(f"note: {note}"))
    if not result.results:  # an empty table and a header-only file read as a result
        _print_skipped(console, result)
        why = " (the reasons are above)" if result.skipped else ""
        raise EstimationError(
            f"{recuse_files.path_text(source)}: no metric could be estimated{why}; nothing written"
        )
    _print_results(console, result, title=(
        f"{recuse_files.path_text(source)}: pairwise bias ({percent(level)} intervals, "
        f"prompts resampled; verdicts: {orders} order{'s' if orders == 'both' else ''})"
    ))  # fmt: skip
    if out_path is not None:
        meta: dict[str, object] = {
            "source": recuse_files.path_text(source), "judges": judges, "level": level,
            "n_boot": n_boot, "seed": seed, "min_n": min_n, "verdict": verdict, "orders": orders,
            "human_ties": human_ties, "self_scope": self_scope, "judge_ties": judge_ties,
            "unit": unit,
        }  # fmt: skip
        _write_out(ctx, settings, console, (result, out_path, meta), loaded.source.reference)


def _write_out(
    ctx: typer.Context,
    settings: Settings,
    console: Console,
    out: tuple[PairwiseBias, Path, dict[str, object]],
    kind: ReferenceKind,
) -> None:
    """Write ``out`` (the result, its --out path and its settings ``meta``) with its
    curves' words and where each setting came from, then its "wrote ..." line: a Ctrl-C
    while that is printed is said over the whole file
    (:func:`recuse.interrupt.complete_over`), not "start it over"."""
    result, path, meta = out
    words = curve_words(
        result, source=str(meta["source"]), level=cast(float, meta["level"]),
        orders=settings.orders, kind=kind, orders_said=settings.said("orders"),
    )  # fmt: skip
    said = setting_sources(ctx, settings)
    wrote = write_results(result, path, meta=meta, words=words, sources=said)
    with complete_over(f"{wrote} is complete and in place"):
        console.print(cell(f"wrote {wrote}"))


def _name_hints(
    result: PairwiseBias, table: pd.DataFrame, roster: Roster, self_scope: str
) -> PairwiseBias:
    """``result`` with the audit's hints on a self-preference not estimated for want of
    the judge's own answers: a generator spelt like the judge, or other models of its
    line (:func:`recuse.analyses.self_preference.spelling_hint_words`,
    :func:`~recuse.analyses.self_preference.line_hint_words`). `recuse metrics pairs`
    said only "no pairs holding the judge's own answer" where `recuse audit` named
    ``acme-judge-v2`` beside the judge ``acme-judge``."""
    own = competence.OWN_PAIRS
    hinted = []
    for s in result.skipped:
        if s.judge and s.reason.endswith(own) and not s.metric.startswith("family"):
            models = self_words.generators_of(table, s.judge)
            words = self_words.spelling_hint_words(s.judge, models, roster)
            words += self_words.line_hint_words(s.judge, models, roster, self_scope=self_scope)
            s = replace(s, reason=s.reason + words)
        hinted.append(s)
    return replace(result, skipped=tuple(hinted))


def _refuse_labels_only(table: pd.DataFrame, roster: Roster, source: str, *, judged: bool) -> None:
    """A table with human labels and lengths but no judge gives no judge's bias, and
    ``recuse metrics pairs`` refused it in the words of any table without verdicts,
    while ``recuse audit`` on it prints the humans' preference for the longer answer
    (hh-rlhf 0.44 [0.42, 0.46]): the refusal now says where that number is."""
    from recuse.analyses.verbosity import gives_baseline

    gives = None if judged else gives_baseline(table, roster)
    if gives is not None:
        raise EstimationError(
            f"{source}: the table has no judge verdicts (no row names a judge), so no "
            f"judge's bias to estimate — run a judge first (recuse judge), or map the "
            f"file's judge and verdict columns (--map); {gives}: "
            f"`recuse audit {source}` (in Python, "
            "recuse.metrics.verbosity.human_prefers_longer)"
        )


def _moved(r: MetricResult) -> bool:
    """Whether the result's interval is a position rate's (:data:`MOVED_WORDS`): its
    ``interval_rule`` says "widened" or "exact_bound" (where the words were read)."""
    return r.interval_rule in ("widened", "exact_bound")


def _cells(r: MetricResult) -> tuple[str, str, str, str]:
    """A result's estimate, interval, n and prompts cells: a value fixed by construction
    has no interval and no sample ("+0.000 [0.000, 0.000]", n 51 of 73 prompts read as a
    measurement of the judge's own pairs; print(result), the JSON and the audit's tables
    say it is none)."""
    if r.fixed:
        return f"{numbers.general(r.estimate)} by construction", NOT_MEASURED_CELL, "none", "none"
    est, interval = _numbers(r)  # an absolute value (Eq. 5) or a flip rate: unsigned
    return est, interval, f"{r.n:,}", f"{r.n_clusters:,}"


def _print_results(console: Console, result: PairwiseBias, *, title: str) -> None:
    """The results as a table (each distinct warning once, numbered; rows carry the
    number; each distinct note likewise, ``*1``, after them), each metric's definition,
    then the estimates not made and why."""
    shown = TerminalTable(title=cell(title))
    for col in ("judge", "metric"):
        shown.add_column(col, justify="left")
    for col in ("estimate", "interval", "no bias", "n", "prompts"):
        shown.add_column(col, justify="right")
    notes: list[str] = []  # each distinct warning once, numbered; rows carry the number
    said: list[str] = []  # each distinct note (no caveat) once, numbered: *1
    for r in result.results:
        marks = []
        for w in r.warnings:
            if w not in notes:
                notes.append(w)
            marks.append(f"!{notes.index(w) + 1}")
        for w in r.notes:
            if w not in said:
                said.append(w)
            marks.append(f"*{said.index(w) + 1}")
        est, interval, n, prompts = _cells(r)
        shown.add_row(
            cell(r.judge or ""), cell(r.metric), est,
            Text(interval + "".join(f" {m}" for m in marks)),
            f"{r.null:g}", n, prompts,
        )  # fmt: skip
    console.print(shown)
    console.print(cell(NUMBERS_LEGEND))
    for i, w in enumerate(notes, 1):
        console.print(cell(f"!{i} {w}"))
    for i, w in enumerate(said, 1):
        console.print(cell(f"*{i} note: {w}"))
    # each metric's definition, once: the first clause of its method (the rest says how
    # verdicts were read and the interval made, as the JSON and CSV give it in full)
    # beside another's headline: said whether or not the headline is shown (beside_words)
    defined = {r.metric: r.definition for r in result.results}
    for metric, definition in defined.items():
        console.print(cell(f"{metric}: {definition}{metric_results.beside_words(metric)}"))
    # the calibrated intervals' resampling, which moves them slightly: said, not only in
    # the method of --out (the whole table's size decides, whichever judges are chosen)
    ways = {
        r.metric: competence.REFIT_WORDS[r.refit] for r in result.results if r.refit is not None
    }
    for metric, way in ways.items():
        console.print(cell(
            f"{metric} intervals: {way} (the whole table's size decides, --judge or not, "
            "as in recuse audit; a file of fewer judges may be resampled the other way: a "
            "slightly other interval)"
        ))  # fmt: skip
    # the position rates' intervals: not the plain BCa the header's "prompts resampled"
    # suggests (estimate.moved_span, unseen_span)
    for metric in dict.fromkeys(r.metric for r in result.results if r.n_clusters and _moved(r)):
        console.print(cell(f"{metric} intervals: {MOVED_WORDS}"))
    # n of a subset of the rows (the calibrated metrics' own pairs) beside the prompts of
    # all of them: 67 pairs from 73 prompts read as a mistake with nothing said
    of = {r.metric: r.n_of for r in result.results if r.n_of and not r.fixed}  # n: none
    for metric, what in of.items():
        console.print(cell(
            f"{metric} n: the {what}; prompts: those of all the judge's pairs, which its "
            "interval resamples (they can outnumber n)"
        ))  # fmt: skip
    _print_skipped(console, result)


def _print_skipped(console: Console, result: PairwiseBias) -> None:
    """The estimates not made, each with its reason; a reason the row above gave for the
    same judge reads "as for <that metric> above" (a judge over its line's snapshot had the
    hint naming them and --self-scope line six times, one per self-preference metric;
    the --out file keeps every reason whole)."""
    if result.skipped:
        skipped = TerminalTable(title="Not estimated")
        for col in ("judge", "metric", "why"):
            skipped.add_column(col, overflow="fold")
        first: tuple[str | None, str, str] = (None, "", "")  # judge, metric, reason
        for s in result.skipped:
            same = (s.judge, s.reason) == (first[0], first[2]) and s.judge is not None
            skipped.add_row(
                cell(s.judge or ""),
                cell(s.metric),
                cell(f"as for {first[1]} above" if same else s.reason),
            )
            if not same:
                first = (s.judge, s.metric, s.reason)
        console.print(skipped)
