"""`recuse audit DATA...`: every analysis the data supports, written as an HTML/JSON report."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any, Literal, cast

import typer

from recuse.cli import app, parse_mapping
from recuse.errors import ConfigError
from recuse.outputs import check_output_folder


def summary_line(row: dict[str, Any]) -> str:
    """The CLI's line for one judge of ``Report.summary()``."""
    missing = len(row["not_estimated"])
    if not row["findings"]:
        why = f"{missing} reason(s) in the report" if missing else "no data for any bias"
        return f"{row['judge']}: nothing could be estimated ({why})"
    flagged = sum(1 for f in row["findings"] if f["significant"])
    text = f"{row['judge']}: {flagged} of {len(row['findings'])} estimated biases flagged"
    return text + (f"; {missing} not estimated (reasons in the report)" if missing else "")


@app.command("audit")
def audit_command(
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
    n_boot: int = typer.Option(1000, "--n-boot", help="Bootstrap resamples per estimate."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap."),
    table: str = typer.Option(
        None, "--table", help="What the files hold: pairs or ratings (default: guessed)."
    ),
    mapping: str = typer.Option(
        None, "--map", help="Rename file columns: FILE_COLUMN=SCHEMA_COLUMN,..."
    ),
    keep_unknown: bool = typer.Option(
        False, "--keep-unknown-models", help="Accept model names the roster does not know."
    ),
    data_dir: Annotated[
        Path | None,
        typer.Option(
            "--data-dir", help="Folder with the named datasets (default: $RECUSE_DATA_DIR)."
        ),
    ] = None,
    figures: str = typer.Option("png", "--figures", help="Figure format: png or svg."),
    title: str = typer.Option("recuse audit", "--title", help="Title of the report."),
    robustness: str = typer.Option(
        "fast",
        "--robustness",
        help="Regression robustness checks: fast (default), all, none, or a comma list.",
    ),
    se: str = typer.Option(
        "HC0", "--se", help="Regression standard errors: HC0, HC1, HC3, cluster."
    ),
) -> None:
    """Run every bias analysis the data supports and write the report."""
    from recuse.audit import FAST_CHECKS, AuditOptions, audit
    from recuse.report import write_report

    if table not in (None, "pairs", "ratings"):
        raise ConfigError(f"--table must be pairs or ratings; got {table!r}")
    if figures not in ("png", "svg"):
        raise ConfigError(f"--figures must be png or svg; got {figures!r}")
    if se not in ("HC0", "HC1", "HC3", "cluster"):
        raise ConfigError(f"--se must be HC0, HC1, HC3 or cluster; got {se!r}")
    checks: tuple[str, ...] = {"fast": FAST_CHECKS, "all": ("all",), "none": ()}.get(
        robustness, tuple(c.strip() for c in robustness.split(",") if c.strip())
    )
    from recuse.regression.robustness import CHECKS

    unknown = [c for c in checks if c not in (*CHECKS, "all")]
    if unknown:
        raise ConfigError(
            f"--robustness: unknown check(s) {', '.join(unknown)} — use fast, all, none "
            f"or a comma list of {', '.join(CHECKS)}"
        )
    options = AuditOptions(
        level=level,
        n_boot=n_boot,
        seed=seed,
        judges=tuple(judge or ()),
        figure_format=cast(Literal["png", "svg"], figures),
        se=cast(Literal["HC0", "HC1", "HC3", "cluster"], se),
        robustness=checks,
    )
    options.check()
    check_output_folder(out)
    start = time.perf_counter()
    report = audit(
        data,
        options=options,
        table=cast(Literal["pairs", "ratings"] | None, table),
        data_dir=data_dir,
        mapping=parse_mapping(mapping),
        unknown_models="keep" if keep_unknown else "error",
        title=title,
    )
    paths = write_report(report, out)
    seconds = time.perf_counter() - start
    for row in report.summary():
        typer.echo(summary_line(row))
        for f in row["findings"]:
            if f["significant"]:
                typer.echo(f"  - {f['verdict']}")
    if report.skipped:
        typer.echo(f"{len(report.skipped)} analyses skipped (reasons in the report)")
    typer.echo(f"wrote {paths['html']} and {paths['json']} in {seconds:.1f} s")
