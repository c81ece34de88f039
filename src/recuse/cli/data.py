"""`recuse data ...`: list, show, fetch and summarise the datasets recuse knows."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)

from recuse.cli.app import app, cli_roster
from recuse.cli.console import TerminalTable, cell
from recuse.cli.console import console as make_console
from recuse.errors import DatasetNotFoundError, RecuseError
from recuse.lazy import lazy_module
from recuse.numbers import share_percent

if TYPE_CHECKING:
    import pandas as pd

    from recuse import files as recuse_files
    from recuse.data import fetch as fetching
    from recuse.data import registry
else:  # imported as a command first uses them (recuse.lazy)
    pd = lazy_module("pandas")
    recuse_files = lazy_module("recuse.files")
    fetching = lazy_module("recuse.data.fetch")
    registry = lazy_module("recuse.data.registry")

data_app = typer.Typer(
    help="List, describe, download and summarise the public datasets.", no_args_is_help=True
)
app.add_typer(data_app, name="data")

DATA_DIR_HELP = "Folder with one sub-folder per dataset (default: $RECUSE_DATA_DIR or the cache)."
FAILED = ("unparsed", "failed")


def _root(data_dir: str | None) -> Path:
    """The data folder; one the system cannot look at (a path too long) is an error here."""
    root = Path(data_dir).expanduser() if data_dir else registry.default_data_dir()
    recuse_files.is_file(root, folder=True)
    return root


def _console() -> Console:
    return make_console()


def presence(name: str, root: Path) -> tuple[str, int, int]:
    """("complete" | "partial" | "missing", files present, files expected) by size only."""
    try:
        files = fetching.files_for(name)
    except DatasetNotFoundError:
        present = (root / registry.get(name).folder).is_dir()
        return ("complete" if present else "missing"), int(present), 1
    have = 0
    for f in files:
        target = f.target(root)
        if target.is_file() and target.stat().st_size == f.size:
            have += 1
    state = "complete" if have == len(files) else "missing" if have == 0 else "partial"
    return state, have, len(files)


#: what each count of `recuse data summary` is, printed under its table (:func:`summarize`)
SUMMARY_WORDS = (
    "rows: pairs, one per (item, judge); ratings, one per (prompt, model, dimension, "
    "judge). items: pairs, distinct item_id; ratings, distinct (prompt, model) "
    "completions. models: distinct model_a ∪ model_b (pairs), model (ratings). "
    "labels (rows): pairs, rows by their label (human > 0.5: a, < 0.5: b, = 0.5: tie), so "
    "an item judged by 4 judges counts 4 times; ratings, the dimensions and the share of "
    "rows with a reference score. unparsed (per order): pairs, verdicts unparsed or "
    "failed, one per shown order where the table records the order (status_first / "
    "status_second): a row with both orders unparsed counts 2 and one with a single "
    "order unparsed counts 1, where `recuse validate` counts the judged rows left without "
    "any verdict; else judged rows without any verdict; "
    "ratings, ratings unparsed or failed."
)


def summarize(table: pd.DataFrame, kind: str) -> dict[str, Any]:
    """What `recuse data summary` prints for one evidence table, each count as
    :data:`SUMMARY_WORDS` defines it."""
    out: dict[str, Any] = {"rows": len(table), "prompts": table["prompt_id"].nunique()}
    if kind == "pairs":
        models = pd.concat([table["model_a"], table["model_b"]]).dropna()
        human = table["human"]
        judged = table["judge"].notna()
        statuses = [c for c in ("status_first", "status_second") if c in table.columns]
        per_order = sum(int(table[c].isin(FAILED).sum()) for c in statuses)
        any_failed = (
            pd.concat([table[c].isin(FAILED) for c in statuses], axis=1).any(axis=1)
            if statuses
            else pd.Series(False, index=table.index)
        )
        no_verdict = int((judged & table["p_a"].isna() & ~any_failed).sum())
        out |= {
            "items": table["item_id"].nunique(),
            "models": models.nunique(),
            "judges": table["judge"].nunique(),
            "labelled": int(human.notna().sum()),
            "labels": (
                f"a {int((human > 0.5).sum()):,} / b {int((human < 0.5).sum()):,} / "
                f"tie {int((human == 0.5).sum()):,}"
                if human.notna().any()
                else "no human labels"
            ),
            "unparsed": per_order + no_verdict,
        }
    else:
        dims = sorted(table["dimension"].unique())
        ref = table["reference"].notna()
        out |= {
            "items": len(table[["prompt_id", "model"]].drop_duplicates()),
            "models": table["model"].nunique(),
            "judges": table["judge"].nunique(),
            "labelled": int(ref.sum()),
            "labels": f"{len(dims)} dimension{'s' if len(dims) != 1 else ''} "
            f"({', '.join(dims)}); reference on {share_percent(ref.mean(), 0)} of rows",
            "unparsed": int(table["status"].isin(FAILED).sum()) if "status" in table else 0,
        }
    return out


@data_app.command("list")
def list_datasets(
    data_dir: str = typer.Option(None, "--data-dir", help=DATA_DIR_HELP),
) -> None:
    """The datasets recuse can read, their table kind, folders and whether they are here."""
    root = _root(data_dir)
    out = TerminalTable(title=cell(f"Datasets (data dir: {root})"))
    for col in ("name", "table", "folders", "in data dir", "what"):
        out.add_column(col, overflow="fold")
    for name, ds in sorted(registry.datasets().items()):
        try:
            folders = ", ".join(fetching.folders_for(name))
        except DatasetNotFoundError:
            folders = ds.folder
        state, have, total = presence(name, root)
        shown = {"complete": "[green]yes[/]", "missing": "[red]no[/]"}.get(
            state, f"[yellow]partial ({have}/{total} files)[/]"
        )
        out.add_row(name, ds.table, folders, shown, cell(ds.summary))
    _console().print(out)


def _cell(value: Any, width: int = 40) -> str:
    if isinstance(value, float):
        return "" if pd.isna(value) else f"{value:g}"
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return ""
    text = " ".join(str(value).split())
    return text if len(text) <= width else text[: width - 1] + "…"


@data_app.command("show")
def show(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="Dataset name (see `recuse data list`)."),
    data_dir: str = typer.Option(None, "--data-dir", help=DATA_DIR_HELP),
    rows: int = typer.Option(5, "--rows", min=0, help="How many rows to print."),
) -> None:
    """Describe one dataset: summary, upstream files, row count, columns, a few rows."""
    if name not in registry.datasets() and recuse_files.is_file(name):
        raise DatasetNotFoundError(
            f"{name} is a file, not a dataset name — `recuse data show` describes the "
            f"datasets of `recuse data list`; check your file with `recuse validate {name}`"
        )
    ds = registry.get(name)
    root = _root(data_dir)
    console = _console()
    console.print(cell(f"{name} — {ds.table} table"), style="bold")
    console.print(cell(ds.summary))
    try:
        files = fetching.files_for(name)
    except DatasetNotFoundError:
        files = []
    if files:
        about = fetching.sources().about
        for folder in fetching.folders_for(name):
            console.print(cell(f"{folder}/: {about.get(folder, '')}"))
        listing = TerminalTable(title=cell(f"Files under {root}"))
        listing.add_column("file", overflow="fold")
        listing.add_column("bytes", justify="right")
        listing.add_column("here")
        for f in files:
            target = f.target(root)
            ok = target.is_file() and target.stat().st_size == f.size
            listing.add_row(
                cell(f"{f.folder}/{f.path}"), f"{f.size:,}", "[green]yes[/]" if ok else "[red]no[/]"
            )
        console.print(listing)
    state, _, _ = presence(name, root)
    if state != "complete":
        console.print(
            cell(f"Not (fully) in {root} — run `recuse data fetch {name}` to download it.")
        )
        return
    table = registry.load(name, data_dir=root, roster=cli_roster(ctx))
    console.print(cell(f"{len(table):,} rows; columns: {', '.join(map(str, table.columns))}"))
    for i, (_, row) in enumerate(table.head(rows).iterrows(), start=1):
        record = TerminalTable(title=f"row {i}", show_header=False)
        record.add_column("column", style="bold")
        record.add_column("value", overflow="fold")
        for col in table.columns:
            record.add_row(cell(col), cell(_cell(row[col], 100)))
        console.print(record)


class _RichFetchProgress:
    """A byte progress bar over all files of a fetch (skipped files count as done)."""

    def __init__(self, progress: Progress, task: TaskID) -> None:
        self.progress = progress
        self.task = task
        self.done: dict[tuple[str, str], int] = {}

    def start(self, file: fetching.SourceFile) -> None:
        self.progress.update(self.task, description=f"{file.folder}/{file.path}")
        self.done[(file.folder, file.path)] = 0

    def advance(self, file: fetching.SourceFile, nbytes: int) -> None:
        self.done[(file.folder, file.path)] += nbytes
        self.progress.update(self.task, advance=nbytes)

    def restart(self, file: fetching.SourceFile) -> None:
        self.progress.update(self.task, advance=-self.done[(file.folder, file.path)])
        self.done[(file.folder, file.path)] = 0

    def finish(self, file: fetching.SourceFile, *, skipped: bool) -> None:
        if skipped:
            self.progress.update(self.task, advance=file.size)


@data_app.command("fetch")
def fetch_command(
    names: Annotated[list[str], typer.Argument(help="Dataset names (or dataset folder names).")],
    dest: str = typer.Option(None, "--dest", help=DATA_DIR_HELP),
    base_url: str = typer.Option(
        None, "--base-url", help="Mirror to use instead of https://raw.githubusercontent.com."
    ),
) -> None:
    """Download datasets from their pinned upstream commits, verifying size and SHA-256."""
    files = {(f.folder, f.path): f for n in names for f in fetching.files_for(n)}
    total = sum(f.size for f in files.values())
    root = _root(dest)
    console = _console()
    with Progress(
        TextColumn("{task.description}", table_column=None),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    ) as progress:
        task = progress.add_task("starting", total=total)
        report = fetching.fetch(  # None: the default folder, whose error names the variable
            names, root if dest else None, base_url=base_url,
            progress=_RichFetchProgress(progress, task),
        )  # fmt: skip
    console.print(
        cell(
            f"{len(report.downloaded)} file(s) downloaded "
            f"({report.bytes_downloaded / 1e6:,.1f} MB), {len(report.skipped)} already "
            f"present, in {report.dest}"
        )
    )


@data_app.command("summary")
def summary(
    ctx: typer.Context,
    data_dir: str = typer.Option(None, "--data-dir", help=DATA_DIR_HELP),
) -> None:
    """Load every dataset that is in the data dir and count what it holds."""
    root = _root(data_dir)
    roster = cli_roster(ctx)
    out = TerminalTable(title=cell(f"Datasets in {root}"), caption=cell(SUMMARY_WORDS))
    for col in ("dataset", "table", "rows", "items", "prompts", "models", "judges"):
        out.add_column(col, justify="left" if col in ("dataset", "table") else "right")
    out.add_column("human / reference rows", justify="right")
    out.add_column("labels (rows)", overflow="fold")
    out.add_column("unparsed (per order)", justify="right")
    failures: list[str] = []
    shown = 0
    for name, ds in sorted(registry.datasets().items()):
        if not (root / ds.folder).is_dir():
            continue
        shown += 1
        try:
            table = registry.load(name, data_dir=root, roster=roster)
        except RecuseError as exc:
            failures.append(f"{name}: {exc}")
            out.add_row(name, ds.table, *([""] * 7), cell(f"error: {exc}", style="red"))
            continue
        s = summarize(table, ds.table)
        out.add_row(
            name,
            ds.table,
            *(f"{s[k]:,}" for k in ("rows", "items", "prompts", "models", "judges", "labelled")),
            cell(s["labels"]),
            f"{s['unparsed']:,}",
        )
    if shown == 0:
        raise DatasetNotFoundError(
            f"no dataset folders in {root} — run `recuse data fetch NAME` or point "
            f"--data-dir / {registry.DATA_DIR_ENV} at the data"
        )
    console = _console()
    console.print(out)
    if failures:
        raise RecuseError(f"{len(failures)} dataset(s) could not be read; first: {failures[0]}")
