"""`recuse audit DATA...`: every analysis the data supports, written as an HTML/JSON report."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from recuse.analyses.base import SE
from recuse.cli.app import (
    AllowUnknownOption,
    ConfidenceOfOption,
    ConfidenceOption,
    MapOption,
    ReferenceJudgeOption,
    ReferenceScorerOption,
    SwappedFrameOption,
    ValuesOption,
    app,
    parse_mapping,
    references,
    value_reading,
)
from recuse.cli.gate import SkipUnmeasuredOption
from recuse.data.importers import ImportFormat
from recuse.data.inputs import TableKind
from recuse.errors import ConfigError, InputError
from recuse.metrics.bootstrap import N_BOOT
from recuse.metrics.verdicts import Orders
from recuse.outputs import check_output_folder
from recuse.report.model import FigureFormat
from recuse.report.summary_table import judge_line, summary_sentences, summary_text
from recuse.roster import SelfScope

summary_line = judge_line  # the CLI's line for one judge of ``Report.summary()``


def _progress(start: float) -> Callable[[str], None]:
    """Each step of the audit as a line on stderr with the seconds elapsed."""

    def show(line: str) -> None:
        print(f"[{time.perf_counter() - start:6.1f} s] {line}", file=sys.stderr, flush=True)

    return show


def _ids(values: list[str] | None) -> tuple[str, ...]:
    """``--only a,b --only c`` as ("a", "b", "c")."""
    return tuple(v.strip() for text in values or () for v in text.split(",") if v.strip())


# config-file option (Python name) -> this command's parameter name
_CONFIG_PARAMS = {"judges": "judge", "format": "fmt"}


def _material(values: list[str] | None) -> dict[str, float]:
    """``--material position=0.03,verbosity=0.1`` (repeatable) as a mapping."""
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


@app.command("audit")
def audit_command(
    ctx: typer.Context,
    data: Annotated[
        list[str],
        typer.Argument(
            metavar="DATA...",
            help="Dataset names (see `recuse data list`) or files (.csv, .jsonl, .json, .parquet).",
        ),
    ],
    judge: Annotated[
        list[str] | None,
        typer.Option("--judge", "-j", help="Audit only this judge (repeat for several)."),
    ] = None,
    out: Annotated[
        Path,
        typer.Option("--out", "-o", help="Folder for report.html, report.json, tables/."),
    ] = Path("recuse-report"),
    level: float = typer.Option(0.9, "--level", help="Confidence level of the intervals."),
    n_boot: int = typer.Option(N_BOOT, "--n-boot", help="Bootstrap resamples per estimate."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap."),
    table: Annotated[
        TableKind | None,
        typer.Option("--table", help="What the files hold: pairs or ratings (default: guessed)."),
    ] = None,
    mapping: MapOption = None,
    values: ValuesOption = None,
    swapped_frame: SwappedFrameOption = "original",
    confidence: ConfidenceOption = None,
    confidence_of: ConfidenceOfOption = "winner",
    fmt: Annotated[
        ImportFormat | None,
        typer.Option(
            "--format",
            help="Files written by another tool: fastchat-pair, fastchat-single, arena-hard, "
            "alpaca-eval or inspect (default: recognised from each file).",
        ),
    ] = None,
    reference_scorer: ReferenceScorerOption = None,
    reference_judge: ReferenceJudgeOption = None,
    allow_unknown_models: AllowUnknownOption = False,  # no effect, kept for old scripts
    keep_unknown: Annotated[
        bool,
        typer.Option("--keep-unknown-models", hidden=True, help="No effect (old scripts)."),
    ] = False,
    data_dir: Annotated[
        Path | None,
        typer.Option(
            "--data-dir", help="Folder with the named datasets (default: $RECUSE_DATA_DIR)."
        ),
    ] = None,
    figures: Annotated[
        FigureFormat, typer.Option("--figures", help="Figure format: png or svg.")
    ] = "png",
    title: str = typer.Option("recuse audit", "--title", help="Title of the report."),
    robustness: str = typer.Option(
        "fast",
        "--robustness",
        help="Regression robustness checks: fast (default), all, none, or a comma list.",
    ),
    se: Annotated[
        SE,
        typer.Option(
            "--se",
            help="Regression standard errors: cluster (by prompt, CR1; default), HC0, HC1 or HC3.",
        ),
    ] = "cluster",
    store: Annotated[
        Path | None,
        typer.Option("--store", help="A store of `recuse judge`: adds its evaluator card."),
    ] = None,
    prices: Annotated[
        Path | None,
        typer.Option("--prices", help="Price table for the card (see `recuse judge card`)."),
    ] = None,
    fdr: bool = typer.Option(
        True,
        "--fdr/--no-fdr",
        help="Benjamini–Hochberg false-discovery control across the summary's tests "
        "(flags use adjusted values; intervals are raw).",
    ),
    self_scope: Annotated[
        SelfScope,
        typer.Option(
            "--self-scope",
            help="What counts as the judge's own answer: snapshot (its exact model id, "
            "default; the other snapshots of its line are its family) or line (every "
            "snapshot of its model line, e.g. gpt-4-0314 and gpt-4-0613 for gpt-4-0613).",
        ),
    ] = "snapshot",
    orders: Annotated[
        Orders,
        typer.Option(
            "--orders",
            help="Presentation orders whose verdicts count: both (averaged, default), first "
            "(p_a_first only) or second (p_a_second only); position needs both.",
        ),
    ] = "both",
    only: Annotated[
        list[str] | None,
        typer.Option("--only", help="Run only these analyses (ids, comma list or repeated)."),
    ] = None,
    skip: Annotated[
        list[str] | None,
        typer.Option("--skip", help="Do not run these analyses (see `recuse analyses`)."),
    ] = None,
    fail_on: Annotated[
        list[str] | None,
        typer.Option(
            "--fail-on",
            help="BIAS=x,...: after writing the report, apply `recuse gate --max` to it "
            "(exit 1 beyond a bound, 3 inconclusive or a judge not measured).",
        ),
    ] = None,
    skip_unmeasured: SkipUnmeasuredOption = False,
    material: Annotated[
        list[str] | None,
        typer.Option(
            "--material",
            help="BIAS=X,...: the smallest effect worth acting on (distance from no bias); "
            "flagged cells read material or small, intervals within ±X negligible "
            "(defaults per bias: `recuse analyses`).",
        ),
    ] = None,
    verbose: bool = typer.Option(
        False, "--verbose", "-v", help="After the summary table, every finding's sentence."
    ),
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help="A recuse.toml with default options, map, value maps, materiality and "
            "roster additions (default: ./recuse.toml if present); options given here win.",
        ),
    ] = None,
) -> None:
    """Run every bias analysis the data supports and write the report.

    Exit codes: 0 the report was written (and, with --fail-on, the gate passed); 2
    bad input, nothing written. With --fail-on, after the report is written: 1 some
    interval wholly beyond a bound; 3 inconclusive (an interval straddles a bound, or
    a judge's bias was not measured, unless --skip-unmeasured)."""
    from recuse.analyses import IDS
    from recuse.api import robustness_checks
    from recuse.config import find_config, load_config
    from recuse.driver import AuditOptions, audit
    from recuse.report import write_report

    config_path = find_config(config)
    cfg = load_config(config_path) if config_path is not None else None
    if cfg is not None:  # the file's options where the command line left the default
        given = dict(locals())
        for name, value in cfg.options.items():
            param = _CONFIG_PARAMS.get(name, name)
            given_by = ctx.get_parameter_source(param)  # typer's click: compare by name
            if given_by is None or given_by.name == "DEFAULT":
                given[param] = value
        level, n_boot, seed, judge = given["level"], given["n_boot"], given["seed"], given["judge"]
        only, skip, orders, fdr, se = (given[k] for k in ("only", "skip", "orders", "fdr", "se"))
        robustness, figures, title = given["robustness"], given["figures"], given["title"]
        table, fmt, data_dir = given["table"], given["fmt"], given["data_dir"]
        swapped_frame, confidence = given["swapped_frame"], given["confidence"]
        confidence_of, self_scope = given["confidence_of"], given["self_scope"]
        data_dir = Path(data_dir) if data_dir is not None else None
    checks = robustness_checks(robustness)
    materiality = {**(cfg.material if cfg else {}), **_material(material)}
    options = AuditOptions(
        level=level,
        n_boot=n_boot,
        seed=seed,
        judges=tuple(judge or ()),
        figure_format=figures,
        se=se,
        robustness=checks,
        only=_ids(only),
        skip=_ids(skip),
        orders=orders,
        fdr=fdr,
        self_scope=self_scope,
        material=materiality,
    )
    options.check(known=IDS)
    if fail_on:
        from recuse.cli.gate import registry_scopes
        from recuse.report.gate import check_thresholds, parse_thresholds

        aliases, scopes = registry_scopes()  # a bad threshold stops before the work
        check_thresholds(
            parse_thresholds(fail_on), aliases=aliases, scopes=scopes, option="--fail-on"
        )
    elif skip_unmeasured:
        raise ConfigError("--skip-unmeasured goes with --fail-on (it changes the gate)")
    how = value_reading(values, swapped_frame, confidence, confidence_of)
    roster = None
    column_map: dict[str, Any] | None = parse_mapping(mapping)
    if cfg is not None:
        from dataclasses import replace as _with

        from recuse.roster import Roster

        how = _with(how, values={**cfg.values, **(how.values or {})} or None)
        column_map = {**cfg.mapping, **(column_map or {})} or None
        roster = Roster.load()
        for entry in cfg.models:
            roster.add(entry)
    price_table = None  # the card's inputs are checked before the work
    if prices is not None and store is None:
        raise ConfigError("--prices goes with --store (it prices the store's evaluator card)")
    if prices is not None:
        from recuse.judging.card import read_prices

        price_table = read_prices(prices)
    if store is not None and not store.is_file():
        raise InputError("no such store", file=store, fix="give a store of `recuse judge`")
    check_output_folder(out)
    replaces = (out / "report.json").is_file() or (out / "report.html").is_file()
    start = time.perf_counter()
    report = audit(
        data,
        options=options,
        table=table,
        data_dir=data_dir,
        mapping=column_map,
        roster=roster,
        reading=how,
        title=title,
        progress=_progress(start),
        format=fmt,
        references=references(reference_scorer, reference_judge),
    )
    if store is not None:
        from dataclasses import replace as _replace

        from recuse.analyses.card import card_section
        from recuse.judging import Store
        from recuse.judging.card import cards

        with Store(store, read_only=True) as s:
            found = cards(s.runs(), price_table)
        if found:
            unpriced = (
                price_table.unmatched_notes([c.judge for c in found], str(store))
                if price_table is not None
                else []
            )
            section = card_section(found, str(store), notes=unpriced)
            report = _replace(report, sections=(*report.sections, section))
    paths = write_report(report, out)
    seconds = time.perf_counter() - start
    for source in report.provenance.sources:
        for note in source.notes:
            typer.echo(f"note: {note}")
    for section in report.sections:
        if section.id == "evaluator-card":
            for note in section.notes:
                typer.echo(f"note: {note}")
    typer.echo(summary_text(report))
    if verbose:
        typer.echo("\n".join(summary_sentences(report)))
    if report.skipped:
        n = len(report.skipped)
        what = "estimate or analysis" if n == 1 else "estimates or analyses"
        typer.echo(f"{n} {what} not made (reasons in the report)")
    verb = "replaced the earlier report: wrote" if replaces else "wrote"
    typer.echo(f"{verb} {paths['html']} and {paths['json']} in {seconds:.1f} s")
    if fail_on:
        from recuse.cli.gate import run_gate

        code = run_gate(paths["json"], list(fail_on), [], skip_unmeasured=skip_unmeasured)
        if code:
            raise typer.Exit(code)


@app.command("analyses")
def analyses_command(
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of text."),
) -> None:
    """List the analyses of the audit: what each estimates and what it needs."""
    from recuse.analyses import REGISTRY

    if as_json:
        import json

        rows = [
            {
                "id": a.id,
                "title": a.title,
                "table": a.table,
                "needs": a.requires,
                "biases": [
                    b.to_dict() | {"pooled": b.pooled, "headline": b.headline} for b in a.biases
                ],
            }
            for a in REGISTRY
        ]
        typer.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    for a in REGISTRY:
        typer.echo(f"{a.id} — {a.title} ({a.table})")
        typer.echo(f"  needs: {a.requires}")
        for b in a.biases:
            material = f"; material from ±{b.material:g}" if b.material is not None else ""
            typer.echo(f"  {b.key}: {b.unit}; {b.null_text}{material}")
