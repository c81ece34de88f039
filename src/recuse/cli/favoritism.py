"""`recuse favoritism PATH_OR_DATASET`: self- and family-bias from absolute ratings (Eq. 1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from recuse.bootstrap_rules import check_interval_level
from recuse.choices import CHECKS, NORMALIZE, SE_TYPES, Normalize, SelfScope
from recuse.choices import SE as SEType
from recuse.cli.app import (
    READING,
    ReferenceJudgeOption,
    ReferenceScorerOption,
    app,
    cli_context,
    config_help,
    setting_sources,
    settings_files,
)
from recuse.cli.console import TerminalTable, cell, shown
from recuse.cli.console import console as make_console
from recuse.errors import EstimationError
from recuse.interrupt import complete_over
from recuse.lazy import lazy_module
from recuse.numbers import percent, share_percent
from recuse.options import DEFAULTS, robustness_checks, settings_fields

if TYPE_CHECKING:
    import pandas as pd

    import recuse.mitigation.debias as debiasing
    from recuse import outputs
    from recuse.analyses import self_preference as self_words
    from recuse.data import inputs
    from recuse.data.inputs import Input
    from recuse.mitigation.debias import DebiasEffect
    from recuse.regression import favoritism as regression_favoritism
    from recuse.regression import robustness as regression_robustness
    from recuse.regression.favoritism import FavoritismResult
    from recuse.regression.robustness import Battery
    from recuse.roster import Roster
else:  # imported as the command first uses them (recuse.lazy)
    outputs = lazy_module("recuse.outputs")
    inputs = lazy_module("recuse.data.inputs")
    debiasing = lazy_module("recuse.mitigation.debias")
    regression_favoritism = lazy_module("recuse.regression.favoritism")
    regression_robustness = lazy_module("recuse.regression.robustness")
    self_words = lazy_module("recuse.analyses.self_preference")


def _checks(text: str) -> list[str]:
    """The checks of ``--robustness``, read as the audit reads its own (fast, all, none
    or a comma list: :func:`recuse.options.robustness_checks`)."""
    checks = robustness_checks(text)
    return list(CHECKS) if "all" in checks else list(checks)


#: the line in place of a table with no coefficient (an empty table's header and
#: caption, defining what no row holds, read as if something were shown)
NO_TERMS = {
    "self": "Self-bias γ_j: none in this fit (no judge rates its own model's answers)",
    "family": "Family-bias λ_F: none in this fit (no family has a judge rating another "
    "of its models)",
}


def _table(res: FavoritismResult, kind: str) -> TerminalTable | Text:
    """The self- (``kind="self"``) or family-bias table, its numbers as the fit's
    summary writes them (:func:`~recuse.regression.favoritism.coefficient_cells`: one
    precision, in units of a power of ten on an extreme scale, said in the title; where
    a row reads with more decimals than recuse audit's summary writes it, the caption
    says so, :func:`~recuse.regression.favoritism.precision_note`); a df column where a
    row's Student t is not the title's (:meth:`FavoritismResult.own_df`); a line saying
    there is none where the fit has no such term."""
    tab = res.self_bias() if kind == "self" else res.family_bias()
    if tab.empty:
        return cell(NO_TERMS[kind])
    key = "judge" if kind == "self" else "family"
    title = "Self-bias γ_j" if kind == "self" else "Family-bias λ_F"
    cells, scale = regression_favoritism.coefficient_cells(tab)
    words = regression_favoritism.SIGNIFICANCE_WORDS
    own_df = res.own_df(tab)  # a term on fewer prompts: each row's df
    t = TerminalTable(
        title=f"{title} ({percent(res.level)} Wald intervals, SE {res.se_type}"
        + (f"; {scale})" if scale else ")"),
        caption=cell(
            res.definition("self" if kind == "self" else "family")
            + f"; sig. * = the {percent(res.level)} interval excludes 0 ({words})"
            + (f"; {regression_favoritism.DF_WORDS.format(df=res.df)}" if own_df else "")
            + (regression_favoritism.precision_note(tab, cells, key=key) if not scale else "")
        ),
    )
    t.add_column(key)
    for c in ("estimate", "se", "lower", "upper", *(("df",) if own_df else ()), "sig."):
        t.add_column(c, justify="right")
    for (_, r), row in zip(tab.iterrows(), cells, strict=True):
        # no finite standard error: no interval, not estimated (the fit's note says why),
        # as the audit reads it — not "+0.2000 nan +nan +nan"
        ok = all(c is not None for c in row)
        t.add_row(
            cell(str(r[key])),
            *(tuple(str(c) for c in row) if ok else ("—",) * 4),
            *((f"{r['df']:g}",) if own_df else ()),
            "*" if r["significant"] else "",
        )
    return t


#: the options besides :data:`~recuse.cli.app.READING` this command takes from recuse.toml
FILE_OPTIONS = ("se", "level", "self_scope")

#: --config: the shared help named the file's reading keys and roster only
FavoritismConfigOption = Annotated[
    Path | None, typer.Option("--config", help=config_help(FILE_OPTIONS))
]

OUT_FILES = ("favoritism.json", "coefficients.csv", "robustness.csv", "debiased.csv")


def _written() -> tuple[str, ...]:
    """Every file written in the --out folder: OUT_FILES and the CSVs' spreadsheet copies."""
    return (OUT_FILES[0], *(n for name in OUT_FILES[1:] for n in outputs.csv_names(name)))


def write_outputs(
    bat: Battery,
    effect: DebiasEffect,
    out: Path,
    *,
    settings: dict[str, object],
    sources: dict[str, str] | None = None,
) -> list[Path]:
    """favoritism.json (everything), coefficients.csv (main fit), robustness.csv,
    debiased.csv (each model's mean score before and after the correction, ranks).

    All four files or none (staged); the CSVs are exact (for scripts), each with a
    spreadsheet-safe copy under for-spreadsheets/. favoritism.json is written last, so
    it moves in last (as the audit's report.json after its tables): a run killed while
    the files moved in left it, whole, beside none of the CSVs. ``sources``: where each
    setting came from (:func:`recuse.cli.app.setting_sources`), its ``setting_sources``."""
    payload = {
        "settings": settings,
        "setting_sources": sources or {},
        "main": bat.main.to_dict(),
        "robustness": {k: v.to_dict() for k, v in bat.results.items()},
        # what each column of robustness.csv is (n_term: the row's ratings, n_fit: the fit's)
        "robustness_columns": dict(regression_robustness.COMPARISON_COLUMNS),
        "skipped": dict(bat.skipped),
        "debiasing": {
            "unit": f"each model's mean {bat.main.scale_note} over its ratings by every judge "
            "(before and after removing the estimated self- and family-bias; reference: "
            "its mean reference score on the same scale); ranks 1 = highest; Kendall's tau "
            "compares each ranking with the reference ranking (1 = the same order)",
            "columns": effect.columns(bat.main.scale_note),
            "rank_correlation_before": effect.rank_correlation_before,
            "rank_correlation_after": effect.rank_correlation_after,
            "ranking_changed": effect.ranking_changed,
            "models": effect.table.to_dict(orient="records"),
        },
    }
    tables = (bat.main.tidy(), bat.table(), effect.table)
    texts: dict[str, str] = {}
    for name, frame in zip(OUT_FILES[1:], tables, strict=True):
        texts.update(outputs.csv_files(name, frame))
    texts[OUT_FILES[0]] = json.dumps(outputs.strict_json(payload), indent=2, allow_nan=False)
    with outputs.staged(out) as stage:
        for name, text in texts.items():
            stage.write_text(name, text)
    return [out / name for name in OUT_FILES]


@app.command("favoritism")
def favoritism(
    ctx: typer.Context,
    source: Annotated[str, typer.Argument(help="A ratings dataset name or file.")],
    se: Annotated[
        SEType,
        typer.Option(
            "--se",
            help=f"Standard errors: {', '.join(SE_TYPES)} (default: recuse.toml's se, else "
            f"the audit's default, {DEFAULTS.se}).",
        ),
    ] = DEFAULTS.se,
    level: Annotated[
        float,
        typer.Option(
            "--level",
            help="Confidence level, in [0.5, 1) (default: recuse.toml's level, else the "
            "audit's default).",
        ),
    ] = DEFAULTS.level,
    robustness: Annotated[
        str,
        typer.Option(
            "--robustness",
            help=f"fast, all, none, or a comma list of: {', '.join(CHECKS)} (default none: "
            "the coefficients only, which no check changes; recuse audit's default is fast).",
        ),
    ] = "none",
    normalize: Annotated[
        Normalize,
        typer.Option("--normalize", help=f"Per-dimension scaling: {', '.join(NORMALIZE)}."),
    ] = "max",
    out: Annotated[
        str,
        typer.Option(
            "--out",
            help="Folder for favoritism.json, coefficients.csv, robustness.csv, debiased.csv.",
        ),
    ] = "favoritism-out",
    data_dir: Annotated[
        str | None, typer.Option("--data-dir", help="Folder with the named datasets.")
    ] = None,
    mapping: Annotated[
        str | None,
        typer.Option(
            "--map",
            help="Rename file columns: FILE_COLUMN=SCHEMA_COLUMN,... e.g. "
            "grader=judge,score=rating (a file column holding a comma in double quotes, "
            "as in CSV: --map '\"score, raw\"=rating')",
        ),
    ] = None,
    reference_scorer: ReferenceScorerOption = None,
    reference_judge: ReferenceJudgeOption = None,
    self_scope: Annotated[
        SelfScope, typer.Option("--self-scope", help=settings_fields()["self_scope"].help)
    ] = DEFAULTS.self_scope,
    config: FavoritismConfigOption = None,
) -> None:
    """Self- and family-bias of LLM judges from absolute ratings (Play Favorites, equation 1).

    SOURCE is read as recuse audit reads it: the options given here, else recuse.toml's
    (--config, else ./recuse.toml) [map] and [[model]] entries and its data-dir,
    reference-scorer and reference-judge keys; --se, --level and --self-scope likewise
    (the command line, else the file's se, level and self-scope, else the default).
    --out refuses a folder where one of the files it writes is the input (exit 2,
    nothing written)."""
    # se, level and self_scope as recuse audit reads them: command line > recuse.toml >
    # default (--out and --robustness are this command's own: its folder, default none)
    settings, roster = cli_context(ctx, (*READING, *FILE_OPTIONS))
    se, level, self_scope = settings.se, settings.level, settings.self_scope
    check_interval_level(level)  # the audit's rule and message
    checks = _checks(robustness)
    with outputs.keeping_earlier(Path(out).expanduser(), OUT_FILES):
        out_path = outputs.check_output_folder(
            Path(out).expanduser(),
            inputs=[*inputs.read_paths(source, settings.data_dir), *settings_files(ctx)],
            files=_written(),
        )
    # a named dataset, a plain file or another tool's file, as recuse audit reads them
    loaded = inputs.load_input(
        source,
        table="ratings",
        data_dir=settings.data_dir,
        roster=roster,
        mapping=dict(settings.mapping),
        references=settings.references(),
    )
    ratings, selves = loaded.frame, roster.self_map(self_scope)
    try:
        bat = regression_robustness.battery(  # self read as the audit reads it (--self-scope)
            ratings if selves is None
            else regression_favoritism.prepare(ratings, roster, normalize=normalize,
                                               selves=selves),
            roster, checks=checks, se=se, level=level, normalize=normalize,
        )  # fmt: skip
    except EstimationError as exc:  # it named no file ("every rating is the same (3)")
        raise EstimationError(f"{source}: {exc}") from None
    console = make_console()
    _print_fit(console, source, loaded, bat, (roster, self_scope))
    effect = debiasing.debias_effect(ratings, bat.main, roster, selves=selves)
    unsubtracted = debiasing.not_subtracted(bat.main.coefficients)
    unsubtracted += debiasing.on_few_prompts(bat.main)  # a γ or λ on few prompts, subtracted
    if not regression_favoritism.corrects_anything(bat.main.coefficients):  # as the audit says it
        console.print(
            "correction (debiased.csv): no self- or family-bias term was estimated, so "
            f"there is nothing to correct (its scores after equal those before){unsubtracted}"
        )
    else:
        console.print(
            f"correction (debiased.csv): the judges' model ranking "
            f"{'changes' if effect.ranking_changed else 'does not change'}; Kendall's tau to "
            f"the reference ranking {effect.taus}{unsubtracted}"
        )
    said = {"source": source, "se": se, "level": level, "normalize": normalize,
            "robustness": checks, "self_scope": self_scope}  # fmt: skip
    sources = setting_sources(ctx, settings)
    with outputs.keeping_earlier(out_path, OUT_FILES):
        written = write_outputs(bat, effect, out_path, settings=said, sources=sources)
    names = ", ".join(str(p) for p in written)
    with complete_over(f"{names} are complete and in place"):
        console.print(cell("wrote " + names))


def _print_fit(
    console: Console, source: str, loaded: Input, bat: Battery, selves: tuple[Roster, str]
) -> None:
    """The fit's lines: counts, the source's notes, the self and family tables, the
    fit's warnings and notes (:func:`_with_name_hints`, ``selves``: the roster and the
    self scope), and the robustness checks made or skipped."""
    main = bat.main
    console.print(
        f"[bold]{escape(shown(source))}[/bold]: {main.n:,} ratings, "
        f"{len(main.self_bias())} judges with a self-bias term γ_j, "
        f"{len(main.family_bias())} family-bias terms λ_F "
        "(families with a judge rating another of their models)"
        + (
            "; excluded " + ", ".join(f"{v:,} {k}" for k, v in main.n_excluded.items())
            if main.n_excluded
            else ""
        )
    )
    for note in loaded.source.notes:
        console.print(cell(f"note: {note}"))
    for warning in main.warnings:  # read every coefficient below with it
        console.print(cell(f"warning: {warning}"))
    console.print(_table(main, "self"))
    console.print(_table(main, "family"))
    for note in main.notes:
        console.print(cell(f"note: {_with_name_hints(note, loaded.frame, *selves)}"))
    if bat.results:
        console.print(cell(_robustness_line(bat.table(), len(bat.results))))
    for name, reason in bat.skipped.items():
        console.print(cell(f"skipped {name}: {reason}"))


def _with_name_hints(note: str, ratings: pd.DataFrame, roster: Roster, self_scope: str) -> str:
    """A judge's "never rates its own completions" note with the audit's hints: a model
    it rated spelt like it, or other models of its line (which ``--self-scope line``
    counts as its own, none under it). It said only that, where the audit named
    ``gpt-4o-2024-08-06`` beside the judge ``gpt-4o``."""
    head = "self-bias of "
    tail = f" not estimable: {regression_favoritism.NEVER_OWN}"
    if not (note.startswith(head) and note.endswith(tail)):
        return note
    judge = note[len(head) : -len(tail)]
    rated = self_words.generators_of(ratings, judge)
    return (
        note
        + self_words.spelling_hint_words(judge, rated, roster, columns="model")
        + self_words.line_hint_words(
            judge, rated, roster, self_scope=self_scope, option="--self-scope line"
        )
    )


def _robustness_line(tab: pd.DataFrame, variants: int) -> str:
    """How many variants were fitted, and where their sign differs from the main fit's:
    the coefficients named are those whose sign some variant changes, the others keeping
    it in every one (the list read as if it were every coefficient checked)."""
    agree = _sign_agreement(tab)
    flips = [
        f"{k} {lab} ({share_percent(share, 0)})" for (k, lab), share in agree.items() if share < 1
    ]
    head = (
        f"robustness: {variants} variants (estimates in robustness.csv: n_term, the "
        "ratings each coefficient rests on; n_fit, the whole fit's); "
    )
    return head + (
        "same sign as the main fit everywhere"
        if not flips
        else "share of variants with the main fit's sign, where under 100% (every other "
        "coefficient keeps its sign in all): " + ", ".join(flips)
    )


def _sign_agreement(tab: pd.DataFrame) -> dict[tuple[str, str], float]:
    m = tab[tab["variant"] == "main"]
    main = {
        (str(k), str(lab)): float(e)
        for k, lab, e in zip(m["kind"], m["label"], m["estimate"], strict=True)
    }
    rest = tab[tab["variant"] != "main"]
    out = {}
    for (kind, label), g in rest.groupby(["kind", "label"], sort=False):
        key = (str(kind), str(label))
        if key in main and len(g):
            out[key] = float(((g["estimate"] > 0) == (main[key] > 0)).mean())
    return out
