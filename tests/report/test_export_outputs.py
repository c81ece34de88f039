"""The report's files through recuse.outputs: all or nothing, safe CSV, bounded names;
figures draw names from data as plain text."""

from __future__ import annotations

import errno
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recuse import outputs
from recuse.errors import OutputError
from recuse.report import AuditReport, Table, write_report, write_tables
from recuse.report import figures as fig
from recuse.report.export import table_file

MATH = "$\\foo{$ judge"  # not valid mathtext: matplotlib raised ValueError drawing it


def _with_tables(report: AuditReport, *tables: Table) -> AuditReport:
    section = report.sections[0]
    return replace(report, sections=(replace(section, tables=tables),))


def test_disk_full_leaves_no_report_no_tables_no_part(
    sample_report: AuditReport, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: report.html.part and tables/*.csv stayed behind."""
    real = outputs.Staging.write_text

    def write_text(self: outputs.Staging, name: str, text: str) -> None:
        if name == "report.json":
            raise OSError(errno.ENOSPC, "No space left on device")
        real(self, name, text)

    monkeypatch.setattr(outputs.Staging, "write_text", write_text)
    out = tmp_path / "report"
    with pytest.raises(OutputError, match="disk is full"):
        write_report(sample_report, out)
    assert not out.exists()


def test_a_failed_rewrite_keeps_the_previous_report(
    sample_report: AuditReport, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_report(sample_report, tmp_path)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}

    def full(self: outputs.Staging, name: str, text: str) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(outputs.Staging, "write_text", full)
    with pytest.raises(OutputError):
        write_report(sample_report, tmp_path)
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


def test_tables_are_exact_and_have_a_spreadsheet_copy(
    sample_report: AuditReport, tmp_path: Path
) -> None:
    """Before: one file, ``'+1 when…`` in it: neither exact for pandas nor marked."""
    text = ["=1+1", "@SUM(A1)", "+1 when asked", "gpt-4"]
    frame = pd.DataFrame({"judge": text, "estimate": [-0.5, 0.1, 0.2, 0.3]})
    report = _with_tables(sample_report, Table("t", "T", frame))
    paths = write_report(report, tmp_path)
    assert paths["t"] == tmp_path / "tables" / "t.csv"
    back = pd.read_csv(tmp_path / "tables" / "t.csv")
    pd.testing.assert_frame_equal(back, frame)
    lines = (tmp_path / "tables" / "for-spreadsheets" / "t.csv").read_text("utf-8").splitlines()
    assert lines == ["judge,estimate", "'=1+1,-0.5", "'@SUM(A1),0.1", "'+1 when asked,0.2",
                     "gpt-4,0.3"]  # fmt: skip
    assert write_tables(report, tmp_path / "only") == [tmp_path / "only" / "t.csv"]
    for name in ("t.csv", "for-spreadsheets/t.csv"):
        assert (tmp_path / "only" / name).read_bytes() == (tmp_path / "tables" / name).read_bytes()


def test_long_table_names_get_bounded_unique_files(
    sample_report: AuditReport, tmp_path: Path
) -> None:
    """Before: OSError File name too long, and an empty tables/ left behind."""
    frame = pd.DataFrame({"x": [1]})
    names = ["a" * 300, "a" * 301, "b/../../escape", "short"]
    report = _with_tables(sample_report, *(Table(n, n, frame) for n in names))
    paths = write_report(report, tmp_path)
    files = sorted(p.name for p in (tmp_path / "tables").iterdir() if p.is_file())
    assert len(files) == 4 and "short.csv" in files
    assert all(len(f.encode()) <= outputs.FILE_STEM_MAX + 4 for f in files)
    assert {table_file(n) for n in names} == set(files)
    assert not (tmp_path.parent / "escape.csv").exists()
    assert paths["short"] == tmp_path / "tables" / "short.csv"


@pytest.mark.parametrize("format", ["png", "svg"])
def test_every_figure_draws_dollar_signs_as_text(format: str) -> None:
    labels = [MATH, "$x$ <b>", "plain\nname [/]"]
    ones = np.ones(3)
    drawn = [
        fig.bars(labels, ones, ones * 0.5, ones * 1.5, id="b", title=MATH, xlabel=MATH,
                 format=format),  # type: ignore[arg-type]
        fig.coefficients(labels, ones, ones * 0.5, ones * 1.5, id="c", title=MATH,
                         xlabel="$", format=format),  # type: ignore[arg-type]
        fig.heatmap(np.eye(3), rows=labels, cols=labels, id="h", title=MATH, row_label=MATH,
                    format=format),  # type: ignore[arg-type]
        fig.confusion_matrix(np.eye(3), rows=labels, cols=labels, id="m", title=MATH,
                             format=format),  # type: ignore[arg-type]
        fig.curves(labels, [fig.Series(MATH, [1, 2, 3]), fig.Series("$a$", [2, 3, 4])],
                   id="k", title=MATH, xlabel=MATH, ylabel="$y$", format=format),  # type: ignore[arg-type]
    ]  # fmt: skip
    assert all(f.data for f in drawn)
    if format == "svg":  # the text is there as written, not as a formula
        assert "foo" in drawn[0].data


def test_plain_text_does_not_leak_into_other_figures() -> None:
    import matplotlib

    fig.bars(["a"], [1.0], [0.5], [1.5], id="b", title="t", xlabel="x")
    assert matplotlib.rcParams["text.parse_math"] is True


def test_long_names_are_shortened_on_the_axes_but_kept_in_the_alt_text() -> None:
    """Before: a 5,000-character judge name pushed the plot and the other names out
    of the figure."""
    long = "judge-" + "L" * 5000 + "-v2"
    drawn = fig.bars([long, "gpt-4"], [0.1, 0.2], [0.0, 0.1], [0.2, 0.3], id="b", title="t",
                     xlabel="x", format="svg")  # fmt: skip
    assert "L" * 100 not in drawn.data and "-v2" in drawn.data and "gpt-4" in drawn.data
    assert long in drawn.alt


def test_a_new_report_removes_the_earlier_reports_tables_only(
    sample_report: AuditReport, tmp_path: Path
) -> None:
    """Before: tables of an earlier audit stayed in tables/ beside the new report."""
    frame = pd.DataFrame({"x": [1]})
    write_report(_with_tables(sample_report, Table("old", "Old", frame)), tmp_path)
    (tmp_path / "tables" / "mine.csv").write_text("kept")
    write_report(_with_tables(sample_report, Table("new", "New", frame)), tmp_path)
    assert sorted(p.name for p in (tmp_path / "tables").iterdir()) == [
        "for-spreadsheets",
        "mine.csv",
        "new.csv",
    ]
    assert [p.name for p in (tmp_path / "tables" / "for-spreadsheets").iterdir()] == ["new.csv"]


def test_two_reports_written_into_one_folder_at_once_leave_one_whole_report(
    sample_report: AuditReport, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two audits with one --out at once: the second (tables a and b) wrote its whole
    report while the first (table a) staged its own. Before: the first then moved in
    its report.json beside the second's b.csv, which its report does not list (it had
    looked for an earlier report's tables before the second wrote any), so b.csv passed
    for the first run's. Now the folder is locked from that look to the last file moved
    in: the second waits and its whole report is the folder's."""
    import json
    import threading

    frame = pd.DataFrame({"x": [1]})
    first = _with_tables(sample_report, Table("a", "A", frame))
    second = _with_tables(sample_report, Table("a", "A", frame), Table("b", "B", frame))
    real = outputs.Staging.write_text
    errors: list[BaseException] = []
    waits_or_ends = threading.Event()  # the second run waits for the lock, or is done
    note = outputs._note_waiting

    def write_second() -> None:
        try:
            write_report(second, tmp_path)
        except BaseException as exc:  # said by the assertion below
            errors.append(exc)
        finally:
            waits_or_ends.set()

    def waiting(folder: Path) -> None:
        note(folder)
        waits_or_ends.set()

    other = threading.Thread(target=write_second)

    def write_text(self: outputs.Staging, name: str, text: str) -> None:
        real(self, name, text)
        if name == "report.html" and not other.is_alive() and other.ident is None:
            other.start()  # the second run, while the first has staged all its files
            waits_or_ends.wait(timeout=30)  # without the lock it has finished by now

    monkeypatch.setattr(outputs, "_note_waiting", waiting)
    monkeypatch.setattr(outputs.Staging, "write_text", write_text)
    with pytest.warns(outputs.WaitingForFolder):  # the second run's, said as it waits
        write_report(first, tmp_path)
        other.join(timeout=30)
    assert not other.is_alive() and not errors
    listed = set(json.loads((tmp_path / "report.json").read_text("utf-8"))["tables"])
    on_disk = {p.stem for p in (tmp_path / "tables").glob("*.csv")}
    assert on_disk == listed == {"a", "b"}
    assert not list(tmp_path.glob(".recuse-staging-*"))
