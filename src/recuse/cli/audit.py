"""`recuse audit DATA...`: every analysis the data supports, written as an HTML/JSON report."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import typer

from recuse.cli.app import app, settings_parameters
from recuse.cli.console import echo, echo_lines, one_line
from recuse.errors import ConfigError
from recuse.interrupt import complete_over, raise_if_stopped
from recuse.numbers import decimal

if TYPE_CHECKING:
    from recuse.options import Settings
    from recuse.report.model import AuditReport, SummaryRow


def summary_line(row: SummaryRow) -> str:
    """The CLI's line for one judge of ``AuditReport.summary()``
    (:func:`recuse.report.summary_table.judge_line`)."""
    from recuse.report.summary_table import judge_line

    return judge_line(row)


def _progress(start: float) -> Callable[[str], None]:
    """Each step of the audit as a line on stderr with the seconds elapsed."""

    def show(line: str) -> None:
        raise_if_stopped()  # a stop a library dropped on its way
        elapsed = time.perf_counter() - start
        print(f"[{elapsed:6.1f} s] {one_line(line)}", file=sys.stderr, flush=True)

    return show


def _print_report(report: AuditReport, *, verbose: bool = False) -> None:
    """The notes, the summary table (with ``verbose``, every finding's sentence after
    it), and the count of skips "in all" where no input's line holds it (one input's
    line says them all: the count was printed twice; beside several inputs' counts a
    bare total read as a third): each line one line, text from the data escaped
    (:func:`~recuse.cli.console.echo`; the table's cells as the table is built)."""
    from recuse.report.summary_table import (
        not_made_words,
        source_lines,
        summary_sentences,
        summary_text,
    )

    for source in report.provenance.sources:
        for note in source.notes:
            echo(f"note: {note}")
    for section in report.sections:
        if section.id == "evaluator-card":
            for note in section.notes:
                echo(f"note: {note}")
    echo_lines(summary_text(report))
    for line in source_lines(report):  # every input named, with what was done with it
        echo(f"data: {line}")
    for line in report.headlines:  # each tool's own number (AlpacaEval, Arena-Hard, FastChat)
        echo(line)
    if verbose:
        for sentence in summary_sentences(report):
            echo(sentence)
    sources = report.provenance.sources
    if report.skipped and not (  # one input's line has already said them all
        len(sources) == 1 and all(m.dataset == sources[0].name for m in report.skipped)
    ):
        typer.echo(f"{not_made_words(len(report.skipped))} in all (reasons in the report)")


def _check_gate(settings: Settings) -> None:
    """A bad --fail-on threshold stops before the work; one set in recuse.toml is named
    where it is written (it read "--fail-on: cannot read 'position'", a flag never typed)."""
    fail_on = settings.fail_on
    if not fail_on:
        if settings.skip_unmeasured:
            raise ConfigError("--skip-unmeasured goes with --fail-on (it changes the gate)")
        return
    from recuse.cli.gate import registry_scopes
    from recuse.report.gate import check_thresholds, parse_thresholds

    aliases, scopes = registry_scopes()
    try:
        given = parse_thresholds(fail_on, option="--fail-on")
        check_thresholds(given, aliases=aliases, scopes=scopes, option="--fail-on")
    except ConfigError as exc:
        if not settings.sources.get("fail_on", "").startswith("config"):
            raise
        raise ConfigError(f"{settings.said('fail_on')}: {exc}") from None


def audit_command(ctx: typer.Context, data: list[str], **given: Any) -> None:
    """Run every bias analysis the data supports and write the report.

    Exit codes: 0 the report was written (and, with --fail-on, the gate passed); 2
    bad input, nothing written. With --fail-on, after the report is written: 1 some
    interval wholly beyond a bound; 3 inconclusive (an interval straddles a bound, or
    a judge's bias was not measured, unless --skip-unmeasured)."""
    from recuse.api import run
    from recuse.cli.app import cli_context, settings_files
    from recuse.data.inputs import read_paths
    from recuse.outputs import check_output_folder, files_there, keeping_earlier
    from recuse.report import write_report
    from recuse.report.export import REPORT_FOLDERS, report_files

    settings, roster = cli_context(ctx)
    _check_gate(settings)
    # an input named like a file the report writes or removes there would be replaced
    inputs = [path for spec in data for path in read_paths(spec, settings.data_dir)]
    inputs += settings_files(ctx)
    pages = ("report.json", "report.html")
    with keeping_earlier(settings.out, pages):
        check_output_folder(settings.out, inputs=inputs, files=report_files(settings.out),
                            folders=REPORT_FOLDERS)  # fmt: skip
    there = files_there(settings.out, pages)  # named as files: they may be another tool's
    start = time.perf_counter()
    report = run(data, settings, roster=roster, progress=_progress(start))
    # its tables' names are known now (they name the inputs): checked before writing
    raise_if_stopped()  # no report of a run asked to stop
    with keeping_earlier(settings.out, pages):
        check_output_folder(settings.out, inputs=inputs, files=report_files(settings.out, report))
        paths = write_report(report, settings.out)
    whole = f"{paths['html']}, {paths['json']} and their tables are complete and in place"
    # a stop from here on is said over whole files: the summary, --profile's lines and
    # --fail-on's gate (which `recuse gate` can run on the report.json in place)
    with complete_over(whole):
        _print_report(report, verbose=settings.verbose)
        were = "was" if len(there) == 1 else "were"
        verb = f"replaced the {' and '.join(there)} that {were} there: wrote" if there else "wrote"
        took = decimal(time.perf_counter() - start, 1)
        echo(f"{verb} {paths['html']} and {paths['json']} in {took} s")
        _profile_and_gate(report, settings)


def _profile_and_gate(report: AuditReport, settings: Settings) -> None:
    """What the audit does after its report is written: --profile's lines, and
    --fail-on's gate (exit 1 when it fails)."""
    if settings.profile:
        from recuse.driver import profile_lines

        for line in profile_lines(report):
            echo(line)
    if settings.fail_on:
        from recuse.cli.gate import run_gate

        code = run_gate(
            report, list(settings.fail_on), [], skip_unmeasured=settings.skip_unmeasured
        )
        if code:
            raise typer.Exit(code)


_DATA_HELP = "Dataset names (see `recuse data list`) or files (.csv, .jsonl, .json, .parquet)."
app.command("audit")(settings_parameters(audit_command, data_help=_DATA_HELP))


@app.command("analyses")
def analyses_command(
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of text."),
) -> None:
    """List the analyses of the audit: what each estimates (unit, no-bias value, the
    values it takes) and what it needs."""
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
                    b.to_dict() | {"pooled": b.pooled, "headline": b.headline, "span": b.span_json}
                    for b in a.biases
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
            span = f"; takes values in {b.span_text}"
            typer.echo(f"  {b.key}: {b.unit}; {b.null_text}{span}{material}")
