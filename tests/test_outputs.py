"""Output files: checked before the work, written atomically, spreadsheet-safe CSV."""

from __future__ import annotations

import errno
import io
import os
from pathlib import Path

import pandas as pd
import pytest

from recuse import outputs
from recuse.errors import OutputError


def test_check_output_refuses_folder_missing_parent_file_parent_and_long_name(
    tmp_path: Path,
) -> None:
    with pytest.raises(OutputError, match="is a folder"):
        outputs.check_output(tmp_path)
    with pytest.raises(OutputError, match="does not exist"):
        outputs.check_output(tmp_path / "missing" / "x.csv")
    (tmp_path / "f").write_text("x")
    with pytest.raises(OutputError, match="is a file, not a folder"):
        outputs.check_output(tmp_path / "f" / "x.csv")
    with pytest.raises(OutputError, match="longer than"):
        outputs.check_output(tmp_path / ("n" * 300 + ".csv"))
    with pytest.raises(OutputError, match="is a file"):
        outputs.check_output_folder(tmp_path / "f")
    assert outputs.check_output(tmp_path / "ok.csv") == tmp_path / "ok.csv"
    assert list(tmp_path.iterdir()) == [tmp_path / "f"]  # the probe leaves nothing


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_check_output_refuses_read_only_folder(tmp_path: Path) -> None:
    tmp_path.chmod(0o555)
    try:
        with pytest.raises(OutputError, match="permission denied"):
            outputs.check_output(tmp_path / "x.csv")
    finally:
        tmp_path.chmod(0o755)


def test_write_failure_leaves_old_file_and_no_part(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "out.csv"
    target.write_text("old")

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OutputError, match="disk is full"):
        outputs.write_text(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.csv"]


def test_staged_is_all_or_nothing(tmp_path: Path) -> None:
    out = tmp_path / "report"
    with pytest.raises(OutputError, match="disk is full"), outputs.staged(out) as stage:
        stage.write_text("report.html", "<html>")
        raise OSError(errno.ENOSPC, "No space left on device")
    assert list(out.iterdir()) == []
    with outputs.staged(out) as stage:
        stage.write_text("report.html", "<html>")
        stage.write_text("tables/a.csv", "x\n")
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == [
        "report.html",
        "tables",
        "tables/a.csv",
    ]


def test_csv_text_neutralises_formulas_in_text_but_not_numbers() -> None:
    frame = pd.DataFrame(
        {
            "judge": ['=HYPERLINK("http://x")', "+cmd|' /C calc'!A0", "@SUM(1)", "gpt-4"],
            "estimate": [-0.5, 0.1, 1.0, 2.0],
            "=bad": ["-1", "\tx", "ok", "a=b"],
        }
    )
    back = pd.read_csv(io.StringIO(outputs.csv_text(frame)), dtype={"'=bad": str})
    assert list(back.columns) == ["judge", "estimate", "'=bad"]
    assert list(back["judge"]) == [
        '\'=HYPERLINK("http://x")',
        "'+cmd|' /C calc'!A0",
        "'@SUM(1)",
        "gpt-4",
    ]
    assert list(back["estimate"]) == [-0.5, 0.1, 1.0, 2.0]
    assert list(back["'=bad"]) == ["'-1", "'\tx", "ok", "a=b"]
