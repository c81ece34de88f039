"""Output files: checked before the work, written atomically, spreadsheet-safe CSV."""

from __future__ import annotations

import csv
import errno
import io
import json
import os
import shutil
import subprocess
import sys
import threading
import warnings
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


def test_check_output_refuses_a_folder_it_may_not_write_even_as_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The read-only-folder test above is skipped where tests run as root (CI): the
    permission error is faked here, so the refusal is checked there too."""
    real_open = os.open

    def denied(path: str | os.PathLike[str], flags: int, mode: int = 0o777) -> int:
        if Path(path).parent == tmp_path:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, flags, mode)

    monkeypatch.setattr(os, "open", denied)
    with pytest.raises(OutputError, match="permission denied") as err:
        outputs.check_output(tmp_path / "x.csv")
    assert str(tmp_path / "x.csv") in str(err.value)
    with pytest.raises(OutputError, match="permission denied"):
        outputs.check_output_folder(tmp_path)
    assert list(tmp_path.iterdir()) == []


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


def test_a_file_past_the_size_limit_says_which_limit_and_leaves_the_old_file(
    tmp_path: Path,
) -> None:
    # a real RLIMIT_FSIZE (ulimit -f) in a child: the write fails with EFBIG, whose
    # strerror alone ('File too large') said neither which limit nor what to do
    target = tmp_path / "out.txt"
    target.write_text("old")
    code = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))\n"
        "from recuse import outputs\n"
        "from recuse.errors import OutputError\n"
        "try:\n"
        "    outputs.write_text(sys.argv[1], 'x' * 100_000)\n"
        "except OutputError as exc:\n"
        "    print(exc)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(outputs.__file__).parents[1])}
    done = subprocess.run(
        [sys.executable, "-c", code, str(target)], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "ulimit -f" in done.stdout and "write elsewhere with --out" in done.stdout
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_staged_is_all_or_nothing(tmp_path: Path) -> None:
    out = tmp_path / "report"
    with pytest.raises(OutputError, match="disk is full"), outputs.staged(out) as stage:
        stage.write_text("report.html", "<html>")
        raise OSError(errno.ENOSPC, "No space left on device")
    assert not out.exists()  # the folder it made is gone too
    with outputs.staged(out) as stage:
        stage.write_text("report.html", "<html>")
        stage.write_text("tables/a.csv", "x\n")
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == [
        "report.html",
        "tables",
        "tables/a.csv",
    ]


# Text a spreadsheet would run, and text a script must read back as written.
RISKY = ["+1 when the judge", "-0.5", "=SUM(A1)", "@me", "\tx", "\rx", "- a list", "a\r\nb"]


def test_csv_text_reads_back_exactly() -> None:
    """Before: ``+1 when…`` came back from pandas as ``'+1 when…``."""
    frame = pd.DataFrame(
        {"text": RISKY, "estimate": [-0.5, 0.1, 1.0, 2.0, -3.0, 0.0, 1.5, 2.5], "=bad": RISKY}
    )
    back = pd.read_csv(io.StringIO(outputs.csv_text(frame)), dtype=str, keep_default_na=False)
    assert list(back.columns) == ["text", "estimate", "=bad"]
    assert list(back["text"]) == RISKY and list(back["=bad"]) == RISKY
    assert [float(x) for x in back["estimate"]] == list(frame["estimate"])


def test_csv_text_without_carriage_returns_ends_lines_in_newline() -> None:
    assert outputs.csv_text(pd.DataFrame({"a": ["+x", "y"]})) == "a\n+x\ny\n"


def _cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text, newline="")) for cell in row]


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def test_spreadsheet_copy_never_starts_a_text_cell_with_a_formula_character() -> None:
    frame = pd.DataFrame(
        {
            "judge": ['=HYPERLINK("http://x")', "+cmd|' /C calc'!A0", "@SUM(1)", "gpt-4"],
            "estimate": [-0.5, 0.1, 1.0, 2.0],
            "=bad": ["-1", "\tx", "\rx", "a=b"],
            "cat": pd.Categorical(["=1+1", "ok", "ok", "-x"]),
        }
    )
    cells = _cells(outputs.spreadsheet_csv_text(frame))
    risky = [c for c in cells if c.startswith(outputs.FORMULA_STARTS)]
    assert risky == ["-0.5"]  # the one number: a spreadsheet reads it as a number
    assert all(_is_number(c) for c in risky)
    assert cells[:4] == ["judge", "estimate", "'=bad", "cat"]
    assert cells[4:8] == ['\'=HYPERLINK("http://x")', "-0.5", "'-1", "'=1+1"]
    assert "'\rx" in cells and "'\tx" in cells and "a=b" in cells


def test_the_written_line_names_every_character_the_copy_guards() -> None:
    """The line a command prints for a CSV and its spreadsheet copy says which text cells
    get a leading ': it named =, +, -, @ and left out the tab and the carriage return
    that the copy guards too (FORMULA_STARTS), and that docs/your-data.md lists."""
    line = outputs.written(Path("runs/p.csv"), Path("runs/for-spreadsheets/p.csv"))
    said = line.split("a text cell starting with ", 1)[1].split(" gets a leading '")[0]
    names = {"\t": "a tab", "\r": "a carriage return"}
    words = [w.strip() for part in said.split(" or ") for w in part.split(",")]
    assert words == [names.get(c, c) for c in outputs.FORMULA_STARTS]


def test_write_csv_writes_the_exact_file_and_the_spreadsheet_copy(tmp_path: Path) -> None:
    frame = pd.DataFrame({"text": RISKY})
    exact, copy = outputs.write_csv(tmp_path / "pairs.csv", frame)
    assert copy == tmp_path / "for-spreadsheets" / "pairs.csv"
    back = pd.read_csv(exact, dtype=str, keep_default_na=False)
    assert list(back["text"]) == RISKY
    safe = pd.read_csv(copy, dtype=str, keep_default_na=False)
    assert list(safe["text"]) == [
        "'" + t if t.startswith(outputs.FORMULA_STARTS) else t for t in RISKY
    ]
    assert sorted(p.name for p in tmp_path.rglob("*")) == [
        "for-spreadsheets",
        "pairs.csv",
        "pairs.csv",
    ]


@pytest.mark.parametrize("earlier", [True, False])
def test_write_csv_failing_on_the_copy_leaves_no_exact_file_of_this_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, earlier: bool
) -> None:
    """A full disk met writing the spreadsheet copy: ``recuse metrics pairs -o o.csv``
    exited 2 and left this run's o.csv, a whole result, beside the earlier copy (or
    none). The earlier exact file is put back (or, where there was none, the new one
    removed), and nothing else is left beside it."""
    if earlier:
        (tmp_path / "for-spreadsheets").mkdir()
        for name in ("pairs.csv", "for-spreadsheets/pairs.csv"):
            (tmp_path / name).write_text("old")
    real = outputs.write_bytes

    def write_bytes(path: str | Path, data: bytes, **options: str) -> Path:
        if "for-spreadsheets" in str(path):
            raise outputs.output_error(path, OSError(errno.ENOSPC, "No space left on device"))
        return real(path, data, **options)

    monkeypatch.setattr(outputs, "write_bytes", write_bytes)
    with pytest.raises(OutputError, match="disk is full"):
        outputs.write_csv(tmp_path / "pairs.csv", pd.DataFrame({"a": [1]}))
    there = {str(p.relative_to(tmp_path)): p.read_text() for p in tmp_path.rglob("*.*")}
    assert there == ({"pairs.csv": "old", "for-spreadsheets/pairs.csv": "old"} if earlier else {})


def test_staged_failure_keeps_an_existing_folder_as_it_was(tmp_path: Path) -> None:
    out = tmp_path / "report"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(OutputError, match="disk is full"), outputs.staged(out) as stage:
        stage.write_text("tables/a.csv", "x\n")
        stage.write_text("report.html", "<html>")
        raise OSError(errno.ENOSPC, "No space left on device")
    assert sorted(p.name for p in out.rglob("*")) == ["notes.txt"]


def test_staged_failure_while_moving_removes_what_was_moved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rename that fails half-way (the page not yet in place) leaves none of the
    files: no tables without their report."""
    out = tmp_path / "report"
    real = os.replace

    def replace(src: str | Path, dst: str | Path) -> None:
        if str(dst).endswith("report.html"):
            raise OSError(errno.ENOSPC, "No space left on device")
        real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OutputError, match="disk is full"), outputs.staged(out) as stage:
        stage.write_text("tables/a.csv", "x\n")
        stage.write_text("report.json", "{}")
        stage.write_text("report.html", "<html>")
    assert not out.exists()


def test_a_write_killed_at_any_rename_leaves_no_report_beside_files_not_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write over an earlier report, killed (``kill -9``: nothing put back) before
    any one of its renames: the folder as that rename finds it holds report.json
    only beside every file of its own run and none of the other's. The old files
    moved aside in the order written, so from the 2nd rename of this write the
    earlier report.json stood beside one of its two tables, then none (``recuse
    audit`` killed so left the earlier report.json and page, its tables gone)."""
    out = tmp_path / "report"
    names = ["tables/a.csv", "tables/b.csv", "report.json", "report.html"]
    for name in names:
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text("old")
    real, seen = os.replace, []

    def replace(src: str | Path, dst: str | Path) -> None:
        seen.append({n: (out / n).read_text() for n in names if (out / n).is_file()})
        real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with outputs.staged(out) as stage:
        for name in names:
            stage.write_text(name, "new")
    assert len(seen) == 8  # 4 moved aside, 4 moved in
    for k, there in enumerate(seen, 1):
        if "report.json" in there:
            run = there["report.json"]
            assert there == dict.fromkeys(names[:3], run) | (
                {"report.html": run} if "report.html" in there else {}
            ), f"rename {k}: {there}"
    assert {n: (out / n).read_text() for n in names} == dict.fromkeys(names, "new")


def test_staged_other_errors_also_leave_nothing(tmp_path: Path) -> None:
    out = tmp_path / "report"
    with pytest.raises(KeyError), outputs.staged(out) as stage:
        stage.write_text("report.html", "<html>")
        raise KeyError("boom")
    assert not out.exists()


@pytest.mark.parametrize(
    "stem",
    ["x" * 300, "模型" * 100, "../etc/passwd", "a/b", ".hidden", "", "name\nwith newline"],
)
def test_file_name_is_safe_bounded_and_unique(tmp_path: Path, stem: str) -> None:
    name = outputs.file_name(stem, ".csv")
    assert len(name.encode("utf-8")) <= outputs.FILE_STEM_MAX + 4
    assert "/" not in name and "\n" not in name and not name.startswith(".")
    assert outputs.file_name(stem + "y", ".csv") != name
    (tmp_path / name).write_text("ok")  # the file system takes it


def test_file_name_keeps_a_plain_short_stem() -> None:
    assert outputs.file_name("self-preference-my-pairs-csv", ".csv") == (
        "self-preference-my-pairs-csv.csv"
    )
    assert outputs.file_name("x" * 300, limit=100) != outputs.file_name("x" * 301, limit=100)
    assert len(outputs.file_name("x" * 300, limit=100)) == 100


def test_relative_targets_work_below_the_path_limit(tmp_path: Path) -> None:
    """From a working folder whose absolute path exceeds PATH_MAX, relative targets
    are still written (tempfile.mkstemp made them absolute: File name too long)."""
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        for i in range(40):
            name = f"{i:02d}" + "d" * 110
            os.mkdir(name)
            os.chdir(name)
        outputs.check_output("x.csv")
        outputs.check_output_folder("report")
        outputs.write_text("x.csv", "a\n")
        with outputs.staged("report") as stage:
            stage.write_text("tables/t.csv", "b\n")
        assert open("x.csv").read() == "a\n" and open("report/tables/t.csv").read() == "b\n"
    finally:
        os.chdir(here)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes need POSIX")
def test_check_output_refuses_a_pipe_or_device_it_would_replace(tmp_path: Path) -> None:
    """Before: a named pipe (or, as root, /dev/full) passed the check, and the atomic
    write renamed a regular file over it: the device or pipe was gone."""
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    with pytest.raises(OutputError, match="not a regular file"):
        outputs.check_output(pipe)
    assert pipe.exists() and not pipe.is_file()


def test_a_path_longer_than_the_system_allows_is_one_line(tmp_path: Path) -> None:
    """Every name fits (200 bytes) but the path is longer than PATH_MAX (4,096 bytes on
    Linux): looking at it raised ENAMETOOLONG, a traceback and exit 1 for `--out`."""
    deep = tmp_path.joinpath(*["d" * 200] * 25)
    assert len(os.fsencode(deep)) > 4096
    for check, target in ((outputs.check_output, deep / "m.json"),
                          (outputs.check_output_folder, deep / "report")):  # fmt: skip
        with pytest.raises(OutputError, match="the path or a name in it is too long"):
            check(target)


def test_an_output_that_is_an_input_is_refused(tmp_path: Path) -> None:
    """Writing the output would replace a file the command reads: by another spelling
    of its path, or a link to it, too."""
    src = tmp_path / "pairs.csv"
    src.write_text("x\n", encoding="utf-8")
    (tmp_path / "link.csv").symlink_to(src)
    for out in (src, tmp_path / "." / "pairs.csv", tmp_path / "link.csv"):
        with pytest.raises(OutputError, match=r"is the input .*pairs\.csv — writing it would"):
            outputs.check_output(out, inputs=["a-dataset-name", src])
    assert outputs.check_output(tmp_path / "other.csv", inputs=[src]) == tmp_path / "other.csv"
    assert src.read_text(encoding="utf-8") == "x\n"
    # a file in an input folder (a dataset's, a tool's), by any spelling; a new one is fine
    with pytest.raises(OutputError, match=r"is a file in the input folder .* — writing it"):
        outputs.check_output(tmp_path / "." / "pairs.csv", inputs=[tmp_path / "."])
    assert outputs.check_output(tmp_path / "new.csv", inputs=[tmp_path]) == tmp_path / "new.csv"


def test_an_output_folder_whose_file_is_an_input_is_refused(tmp_path: Path) -> None:
    """A folder output (recuse favoritism --out DIR) would replace an input named like
    one of the files it writes there, its spreadsheet copies included."""
    out = tmp_path / "out"
    (out / "for-spreadsheets").mkdir(parents=True)
    src = out / "for-spreadsheets" / "debiased.csv"
    src.write_text("x\n", encoding="utf-8")
    files = ["debiased.csv", *outputs.csv_names("debiased.csv")]
    with pytest.raises(OutputError, match=r"--out .*debiased\.csv: is the input .*debiased\.csv"):
        outputs.check_output_folder(out, inputs=[src], files=files)
    # the input is not among the files written, or there is no input: the folder is fine
    assert outputs.check_output_folder(out, inputs=[src], files=["debiased.csv"]) == out
    assert outputs.check_output_folder(out, files=files) == out
    assert src.read_text(encoding="utf-8") == "x\n"


def test_staged_failure_while_moving_puts_back_the_files_from_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rename that fails half-way over an earlier report (report.json in place, the
    page not): report.json was removed with what was moved, and with it the earlier
    run's, while the error said the earlier report.json was left as it was. Every
    file from before is back, as it was; a file of someone else's beside them too."""
    out = tmp_path / "report"
    (out / "tables").mkdir(parents=True)
    earlier = {"report.json": "{earlier}", "report.html": "<earlier>", "tables/a.csv": "old\n"}
    earlier["notes.txt"] = "mine"
    for name, text in earlier.items():
        (out / name).write_text(text)
    real = os.replace
    failed: list[str] = []

    def replace(src: str | Path, dst: str | Path) -> None:  # the new page's move fails
        if str(src).endswith("report.html") and "/.before/" not in str(src) and not failed:
            failed.append(str(src))
            raise OSError(errno.ENOSPC, "No space left on device")
        real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with (
        pytest.raises(OutputError, match=r"holds the report\.json, report\.html from before"),
        outputs.keeping_earlier(out, ("report.json", "report.html")),
        outputs.staged(out) as stage,
    ):
        stage.write_text("tables/a.csv", "new\n")
        stage.write_text("tables/b.csv", "new\n")
        stage.write_text("report.json", "{new}")
        stage.write_text("report.html", "<new>")
    found = {p.relative_to(out).as_posix(): p.read_text() for p in out.rglob("*") if p.is_file()}
    assert found == earlier
    monkeypatch.setattr(os, "replace", real)
    with outputs.staged(out) as stage:  # and a run that succeeds replaces them
        stage.write_text("report.json", "{new}")
    assert (out / "report.json").read_text() == "{new}"
    assert sorted(p.name for p in out.iterdir()) == [
        "notes.txt",
        "report.html",
        "report.json",
        "tables",
    ]


def test_a_dash_is_refused_not_written_as_a_file_named_dash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``recuse certify --thresholds -`` wrote a file named ``-`` in the working folder
    (and ``audit --out -`` a folder so named): ``-`` is standard output to most tools."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(OutputError, match=r"^--thresholds -: recuse writes a file here, not "):
        outputs.check_output("-", option="--thresholds")
    with pytest.raises(OutputError, match=r"^--out -: recuse writes a folder here, not stand"):
        outputs.check_output_folder(Path("-"))
    assert list(tmp_path.iterdir()) == []
    assert outputs.check_output("-x.json") == Path("-x.json")  # a name starting with one is one


def test_a_write_killed_while_files_move_in_leaves_no_old_file_beside_a_new_one(
    tmp_path: Path,
) -> None:
    # kill -9 between two renames: nothing can be put back; the earlier report's
    # report.json stayed beside the new tables and read as this run's result
    out = tmp_path / "report"
    code = (
        "import os, sys\n"
        "from recuse import outputs\n"
        "out, kill_after = sys.argv[1], int(sys.argv[2])\n"
        "real, done = os.replace, [0]\n"
        "def replace(src, dst):\n"
        "    if '/.before/' in str(dst):  # an old file moved aside\n"
        "        return real(src, dst)\n"
        "    if done[0] == kill_after:\n"
        "        os._exit(9)\n"
        "    real(src, dst)\n"
        "    done[0] += 1\n"
        "os.replace = replace\n"
        "with outputs.staged(out) as stage:\n"
        "    for name in ('tables/a.csv', 'tables/b.csv', 'report.json', 'report.html'):\n"
        "        stage.write_text(name, sys.argv[3])\n"
    )
    run = [sys.executable, "-c", code, str(out)]
    assert subprocess.run([*run, "99", "old"], timeout=60).returncode == 0
    names = ["report.html", "report.json", "tables/a.csv", "tables/b.csv"]
    assert {n: (out / n).read_text() for n in names} == dict.fromkeys(names, "old")
    assert subprocess.run([*run, "1", "new"], timeout=60).returncode == 9
    left = {n: (out / n).read_text() for n in names if (out / n).exists()}
    assert left == {"tables/a.csv": "new"}  # no report.json: no result that looks valid
    assert subprocess.run([*run, "99", "new"], timeout=60).returncode == 0  # run again
    assert {n: (out / n).read_text() for n in names} == dict.fromkeys(names, "new")
    # the killed write's staging folder held only files this write replaced: removed
    assert sorted(p.name for p in out.iterdir()) == ["report.html", "report.json", "tables"]


def _fail_the_page_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """os.replace fails once, moving the new report.html in (the disk full)."""
    real = os.replace
    failed: list[str] = []

    def replace(src: str | Path, dst: str | Path) -> None:
        if str(src).endswith("report.html") and "/.before/" not in str(src) and not failed:
            failed.append(str(src))
            raise OSError(errno.ENOSPC, "No space left on device")
        real(src, dst)

    monkeypatch.setattr(os, "replace", replace)


def test_staged_failure_puts_back_files_on_a_file_system_without_hard_links(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without hard links the old files were not kept: a failed move removed the
    earlier report.json and tables while the error said they were left as they were."""
    out = tmp_path / "report"
    (out / "tables").mkdir(parents=True)
    earlier = {"report.json": "{earlier}", "report.html": "<earlier>", "tables/a.csv": "old\n"}
    for name, text in earlier.items():
        (out / name).write_text(text)

    def no_link(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_link)
    _fail_the_page_once(monkeypatch)
    with (
        pytest.raises(OutputError, match=r"holds the report\.json, report\.html from before"),
        outputs.keeping_earlier(out, ("report.json", "report.html")),
        outputs.staged(out) as stage,
    ):
        for name in ("tables/a.csv", "report.json", "report.html"):
            stage.write_text(name, "new")
    found = {p.relative_to(out).as_posix(): p.read_text() for p in out.rglob("*") if p.is_file()}
    assert found == earlier


def test_staged_failure_puts_back_a_symbolic_link_it_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """report.json a symbolic link: it was replaced, not kept, and gone after a failed
    move, while the error said it was left as it was."""
    out = tmp_path / "report"
    out.mkdir()
    (tmp_path / "kept.json").write_text("{earlier}")
    (out / "report.json").symlink_to(tmp_path / "kept.json")
    _fail_the_page_once(monkeypatch)
    with (
        pytest.raises(OutputError, match=r"holds the report\.json from before"),
        outputs.keeping_earlier(out, ("report.json", "report.html")),
        outputs.staged(out) as stage,
    ):
        stage.write_text("report.json", "{new}")
        stage.write_text("report.html", "<new>")
    assert os.readlink(out / "report.json") == str(tmp_path / "kept.json")
    assert (tmp_path / "kept.json").read_text() == "{earlier}"
    assert sorted(p.name for p in out.iterdir()) == ["report.json"]


def test_staged_failure_that_cannot_put_a_file_back_says_where_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The put-back failing too: the old report.json was deleted with the staging
    folder, and the error said it was left as it was."""
    out = tmp_path / "report"
    out.mkdir()
    (out / "report.json").write_text("{earlier}")
    real = os.replace

    def replace(src: str | Path, dst: str | Path) -> None:
        if "/.before/" in str(src) or str(dst).endswith("report.html"):
            raise OSError(errno.ENOSPC, "No space left on device")
        real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with (
        pytest.raises(OutputError) as caught,
        outputs.keeping_earlier(out, ("report.json", "report.html")),
        outputs.staged(out) as stage,
    ):
        stage.write_text("report.json", "{new}")
        stage.write_text("report.html", "<new>")
    message = str(caught.value)
    assert "from before, left as they were" not in message
    (staging,) = out.glob(".recuse-staging-*")
    aside = staging / ".before" / "report.json"
    assert f"{out / 'report.json'} is at {aside}): move them back by hand" in message
    assert aside.read_text() == "{earlier}"
    assert not (out / "report.json").exists()
    assert [p.name for p in staging.iterdir()] == [".before"]


@pytest.mark.parametrize(
    ("argv", "where"),
    [
        (["audit", "llmbar-mtbench", "--only", "position"], "tables"),
        (["metrics", "pairs", "llmbar-mtbench", "-m", "flip_rate"], "for-spreadsheets"),
        (["favoritism", "play-favorites"], "for-spreadsheets"),
    ],
)
def test_a_file_where_a_folder_goes_is_named_before_the_work(
    tmp_path: Path,
    shared_data: Path,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    where: str,
) -> None:
    """A file named ``tables`` (or ``for-spreadsheets``) where the command writes its
    folder: after the whole run, "cannot write …/tables: File exists" with no fix (the
    metrics command named …/for-spreadsheets/m.csv). Now refused before the work."""
    from recuse.cli import main

    out = tmp_path / "out"
    out.mkdir()
    (out / where).write_text("x")
    target = str(out / "m.csv") if argv[0] == "metrics" else str(out)
    code = main([*argv, "--data-dir", str(shared_data), "--out", target])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert f"--out {out}: {where} there is a file, where recuse writes a folder — move or " in err
    assert sorted(p.name for p in out.iterdir()) == [where]


def test_a_folder_where_a_file_goes_is_named_before_the_work_and_by_the_write(
    tmp_path: Path,
) -> None:
    """report.html a folder in --out: after the work, the write said "cannot write
    OUT: Is a directory" of the folder given, as if --out could not be a folder."""
    out = tmp_path / "report"
    (out / "report.html").mkdir(parents=True)
    (out / "report.json").write_text("{earlier}")
    with pytest.raises(OutputError) as checked:
        outputs.check_output_folder(out, files=["report.json", "report.html"])
    assert str(checked.value) == (
        f"--out {out}: report.html there is a folder, where recuse writes a file — move or "
        "remove it, or give another --out"
    )
    with pytest.raises(OutputError) as caught, outputs.staged(out) as stage:
        stage.write_text("report.json", "{new}")
        stage.write_text("report.html", "<new>")
    assert str(caught.value).startswith(f"cannot write {out / 'report.html'}: ")
    assert (out / "report.json").read_text() == "{earlier}"
    assert outputs.check_output_folder(out, files=["report.json"]) == out


def test_a_file_staged_twice_is_moved_in_once_as_last_written(tmp_path: Path) -> None:
    """Its second rename found nothing there and the whole write failed, saying no
    file could be created in that folder."""
    out = tmp_path / "report"
    with outputs.staged(out) as stage:
        stage.write_text("tables/a.csv", "first\n")
        stage.write_text("report.json", "{}")
        stage.write_text("tables/a.csv", "second\n")
    assert (out / "tables" / "a.csv").read_text() == "second\n"
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == [
        "report.json",
        "tables",
        "tables/a.csv",
    ]


def test_a_write_into_a_folder_an_interrupted_write_left_says_so(tmp_path: Path) -> None:
    """A write killed while its files moved in leaves its staging folder (the files it
    replaced under .before) and no report.json: nothing said so, then or after."""
    out = tmp_path / "report"
    stale = out / ".recuse-staging-0123456789ab"
    (stale / ".before").mkdir(parents=True)
    (stale / ".before" / "report.json").write_text("{earlier}")
    (out / "tables.csv").write_text("new\n")  # moved in before the kill
    with pytest.warns(outputs.InterruptedWrite) as said, outputs.staged(out) as stage:
        stage.write_text("report.json", "{new}")
    (note,) = [str(w.message) for w in said]
    assert note == (
        f"{stale}: an earlier write into {out} was stopped while its files moved in (its "
        f"process killed): the files it replaced are under {stale / '.before'}, some of its "
        f"own were moved into {out}; this write replaces those it writes — remove {stale} "
        "once nothing in it is wanted"
    )
    assert (out / "report.json").read_text() == "{new}"
    assert (stale / ".before" / "report.json").read_text() == "{earlier}"  # left to the user
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        shutil.rmtree(stale)
        with outputs.staged(out) as stage:  # none left: nothing said
            stage.write_text("report.json", "{newer}")


_KILLED_WRITER = (
    "import os, sys\n"
    "from recuse import outputs\n"
    "with outputs.staged(sys.argv[1]) as stage:\n"
    "    for name in sys.argv[2:]:\n"
    "        stage.write_text(name, 'half')\n"
    "    os.kill(os.getpid(), 9)  # kill -9 before anything moved in\n"
)


def _staging_folders(out: Path) -> list[Path]:
    return sorted(out.glob(".recuse-staging-*"))


def test_a_write_killed_before_its_files_moved_in_is_cleaned_up_by_the_next(
    tmp_path: Path,
) -> None:
    """A report write killed (kill -9) while its files were written left its staging
    folder, the whole unfinished report in it, for good: the next write now removes it,
    its owner being gone; nothing of it was ever moved in."""
    out = tmp_path / "report"
    killed = subprocess.run(
        [sys.executable, "-c", _KILLED_WRITER, str(out), "report.json", "tables/a.csv"],
        timeout=60,
    )
    assert killed.returncode == -9
    (stale,) = _staging_folders(out)
    assert (stale / "report.json").read_text() == "half"
    assert not (out / "report.json").exists()  # nothing that looks valid
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing to say: nothing of it was in place
        with outputs.staged(out) as stage:
            stage.write_text("report.json", "{new}")
    assert sorted(p.name for p in out.iterdir()) == ["report.json"]
    assert (out / "report.json").read_text() == "{new}"


def test_a_staging_folder_of_a_running_write_is_left_alone(tmp_path: Path) -> None:
    """Two writes into one folder at once: the one that starts second must not remove
    the first one's staging folder (its owner runs: here, this very process)."""
    out = tmp_path / "report"
    with outputs.staged(out) as first:
        first.write_text("report.json", "{first}")
        with outputs.staged(out) as second:
            second.write_text("tables/a.csv", "second")
        assert (first.root / "report.json").read_text() == "{first}"
    assert (out / "report.json").read_text() == "{first}"
    assert (out / "tables" / "a.csv").read_text() == "second"
    assert _staging_folders(out) == []


def test_a_staging_folder_whose_pid_was_reused_is_taken_for_a_dead_one(tmp_path: Path) -> None:
    """The owner's pid now runs another process (this one, started at another time):
    the owner is gone. A pid alone would keep the folder for as long as that runs."""
    if outputs._started(os.getpid()) is None:
        pytest.skip("no /proc: a process's start time cannot be read here")
    out = tmp_path / "report"
    stale = out / ".recuse-staging-0123456789ab"
    stale.mkdir(parents=True)
    owner = {
        "pid": os.getpid(),
        "host": outputs.socket.gethostname(),
        "start": 1,
        "machine": outputs._machine(),
    }
    (stale / outputs.OWNER_FILE).write_text(json.dumps(owner))
    (stale / "report.json").write_text("half")
    assert outputs._owner_alive(stale) is False
    owner["start"] = outputs._started(os.getpid())
    (stale / outputs.OWNER_FILE).write_text(json.dumps(owner))
    assert outputs._owner_alive(stale) is True
    owner["host"] = "another-host"  # a shared file system: cannot be told, kept
    (stale / outputs.OWNER_FILE).write_text(json.dumps(owner))
    assert outputs._owner_alive(stale) is None


def test_a_live_write_in_another_pid_namespace_of_the_same_host_name_is_kept(
    tmp_path: Path,
) -> None:
    """A write from a container that shares the host's name but not its pids (``docker
    run --network host``), or from another machine of the same name on a shared file
    system: its pid means nothing here. Its staging folder, holding the write's files
    while it runs, was removed as a dead owner's wherever that pid was free here."""
    here = outputs._machine()
    if here is None:
        pytest.skip("no /proc: the boot and pid namespace cannot be read here")
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    pid = int(gone.stdout)  # a pid free here (the process has ended)
    out = tmp_path / "report"
    live = out / ".recuse-staging-0123456789ab"
    live.mkdir(parents=True)
    for machine in ("another-boot pid:[4026531836]", here.split()[0] + " pid:[1]"):
        owner = {"pid": pid, "host": outputs.socket.gethostname(), "start": 5, "machine": machine}
        (live / outputs.OWNER_FILE).write_text(json.dumps(owner))
        (live / "report.json").write_text("being written")
        assert outputs._owner_alive(live) is None
        with outputs.staged(out) as stage:
            stage.write_text("tables/a.csv", "mine")
        assert (live / "report.json").read_text() == "being written"
    owner["machine"] = here  # this boot and namespace: that pid is gone
    (live / outputs.OWNER_FILE).write_text(json.dumps(owner))
    assert outputs._owner_alive(live) is False


def test_a_killed_write_whose_old_files_this_write_does_not_replace_stays_and_is_said(
    tmp_path: Path,
) -> None:
    """A write killed while its files moved in, then a write of fewer files: the old
    files under .before that this write does not replace (tables/b.csv) are not deleted;
    the note says where they are."""
    out = tmp_path / "report"
    code = (
        "import os, sys\n"
        "from recuse import outputs\n"
        "real = os.replace\n"
        "def replace(src, dst):\n"
        "    if '/.before/' not in str(dst) and sys.argv[2] == 'kill':\n"
        "        os._exit(9)  # the first new file about to move in\n"
        "    real(src, dst)\n"
        "os.replace = replace\n"
        "with outputs.staged(sys.argv[1]) as stage:\n"
        "    for name in ('tables/a.csv', 'tables/b.csv', 'report.json'):\n"
        "        stage.write_text(name, sys.argv[2])\n"
    )
    run = [sys.executable, "-c", code, str(out)]
    assert subprocess.run([*run, "old"], timeout=60).returncode == 0
    assert subprocess.run([*run, "kill"], timeout=60).returncode == 9
    (stale,) = _staging_folders(out)
    with pytest.warns(outputs.InterruptedWrite) as said, outputs.staged(out) as stage:
        stage.write_text("report.json", "{new}")
    assert [str(w.message).split(":")[0] for w in said] == [str(stale)]
    assert (stale / ".before" / "tables" / "b.csv").read_text() == "old"
    with warnings.catch_warnings():  # a write of every file it replaced: removed
        warnings.simplefilter("error")
        with outputs.staged(out) as stage:
            for name in ("tables/a.csv", "tables/b.csv", "report.json"):
                stage.write_text(name, "newer")
    assert _staging_folders(out) == []


def test_an_output_folder_or_a_file_in_it_that_is_a_pipe_is_refused(tmp_path: Path) -> None:
    """A named pipe given as the folder was "is a file"; one at a name the command writes
    in the folder was replaced by the rename, unsaid (a single --out file refused it)."""
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    with pytest.raises(OutputError) as err:
        outputs.check_output_folder(pipe)
    assert (
        str(err.value) == f"--out {pipe}: is a pipe, socket or device, not a folder — give a folder"
    )
    folder = tmp_path / "out"
    folder.mkdir()
    os.mkfifo(folder / "report.json")
    with pytest.raises(OutputError) as err:
        outputs.check_output_folder(folder, files=["report.html", "report.json"])
    assert str(err.value) == (
        f"--out {folder}: report.json there is not a regular file (a pipe, socket or device), "
        "where recuse writes a file — move or remove it, or give another --out"
    )


@pytest.mark.skipif(sys.platform == "win32", reason="flock: POSIX")
@pytest.mark.parametrize("then", ["removed", "made again"])
def test_a_folder_removed_while_a_write_waited_for_its_lock_is_made_and_locked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, then: str
) -> None:
    """The write waited on had created the folder, failed (or was stopped) and removed
    it as it does; the waiting write then held the lock of the removed folder. Before:
    with the folder gone it failed "no file can be created in that folder"; with
    another made in its place (by a third write) it wrote into it unlocked, so the
    third, which locked the new folder, ran at once beside it."""
    import fcntl

    out = tmp_path / "out"
    real = fcntl.flock
    calls: list[int] = []

    def flock(fd: int, op: int) -> None:
        if not calls:  # the wait ends after the write waited on removed its folder
            out.rmdir()
            if then == "made again":
                out.mkdir()
        calls.append(fd)
        real(fd, op)

    monkeypatch.setattr(fcntl, "flock", flock)
    with outputs.staged(out) as stage:
        stage.write_text("a.txt", "ours")
        other = os.open(out, os.O_RDONLY)  # a third write into the folder now at out
        try:
            with pytest.raises(BlockingIOError):  # waits: this write holds its lock
                real(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(other)
    assert (out / "a.txt").read_text("utf-8") == "ours"
    assert len(calls) == 2  # the lock of the removed folder let go, the new one's taken
    assert sorted(p.name for p in out.iterdir()) == ["a.txt"]


@pytest.mark.skipif(sys.platform == "win32", reason="flock: POSIX")
def test_a_ctrl_c_while_waiting_for_the_lock_leaves_no_folder_and_no_open_descriptor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: the folder the write had just made stayed, empty, and the descriptor
    opened to lock it stayed open (a notebook that stops a write and goes on leaked
    one per stop)."""
    import fcntl

    out = tmp_path / "new" / "out"
    waited: list[int] = []

    def flock(fd: int, op: int) -> None:
        waited.append(fd)
        raise KeyboardInterrupt

    monkeypatch.setattr(fcntl, "flock", flock)
    with pytest.raises(KeyboardInterrupt), outputs.staged(out):
        pytest.fail("the block ran without the lock")
    assert not out.exists()
    with pytest.raises(OSError) as closed:
        os.fstat(waited[0])
    assert closed.value.errno == errno.EBADF


@pytest.mark.skipif(sys.platform == "win32", reason="flock: POSIX")
def test_a_write_waiting_for_another_writes_lock_says_so_then_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: the second of two runs with one --out sat after its last progress line
    without a word for as long as the first took (for good where the first was
    suspended with Ctrl-Z). The other write's lock is real here, let go once the note
    is out (no thread, no timing)."""
    import fcntl

    out = tmp_path / "out"
    out.mkdir()
    holder = os.open(out, os.O_RDONLY)  # the other write, holding the folder
    fcntl.flock(holder, fcntl.LOCK_EX)
    said = outputs._note_waiting
    ended = threading.Lock()

    def other_ends() -> None:
        if ended.acquire(blocking=False):  # once
            os.close(holder)

    def note_then_other_ends(folder: Path) -> None:
        said(folder)
        other_ends()

    monkeypatch.setattr(outputs, "_note_waiting", note_then_other_ends)
    unstick = threading.Timer(30, other_ends)  # where no note came: a failure, not a hang
    unstick.start()
    try:
        with pytest.warns(outputs.WaitingForFolder) as notes, outputs.staged(out) as stage:
            stage.write_text("a.txt", "ours")
    finally:
        unstick.cancel()
        other_ends()
    assert [str(n.message) for n in notes] == [
        f"another write into {out} is under way (another recuse run, or this process's "
        "other thread): this one waits for it to end, then writes its files whole — stop "
        "that one, or write elsewhere"
    ]
    assert (out / "a.txt").read_text("utf-8") == "ours"


@pytest.mark.skipif(sys.platform == "win32", reason="flock: POSIX")
def test_a_folder_that_cannot_be_locked_is_still_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file system without locks (flock fails: ENOLCK): the write goes on unlocked,
    neither an error nor a wait, and one note says so (it went on without a word)."""
    import fcntl

    def flock(fd: int, op: int) -> None:
        raise OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))

    monkeypatch.setattr(fcntl, "flock", flock)
    with pytest.warns(outputs.UnlockedFolder) as notes, outputs.staged(tmp_path / "out") as stage:
        stage.write_text("a.txt", "ours")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a.txt"]
    assert [str(n.message) for n in notes] == [
        f"{tmp_path / 'out'} cannot be locked (its file system has no locks: "
        f"{os.strerror(errno.ENOLCK)}): this write goes on unlocked — run one write into it "
        "at a time, or write to a local folder"
    ]


@pytest.mark.skipif(sys.platform == "win32", reason="flock: POSIX")
@pytest.mark.parametrize("code", ["EOPNOTSUPP", "ENOLCK"])
def test_a_write_without_locks_says_it_once_per_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: str
) -> None:
    """certify run's pair of files (outputs.locked) on a file system without locks:
    one note for their folder, not one per file; the model cache's lock says nothing."""
    import fcntl

    from recuse.judging import models

    number = getattr(errno, code)

    def flock(fd: int, op: int) -> None:
        raise OSError(number, os.strerror(number))

    monkeypatch.setattr(fcntl, "flock", flock)
    with (
        pytest.warns(outputs.UnlockedFolder) as notes,
        outputs.locked(tmp_path / "a.json", tmp_path / "b.json"),
    ):
        outputs.write_text(tmp_path / "a.json", "{}")
        outputs.write_text(tmp_path / "b.json", "{}")
    assert len(notes) == 1 and "its file system has no locks" in str(notes[0].message)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        assert models._lock(tmp_path, wait=True) is None
    assert said == []


def _unreadable(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``folder`` opened for reading fails as a folder with write but not read
    permission does for a user other than root (chmod 0300)."""
    real = os.open

    def refusing(path: object, flags: int, *args: object, **kwargs: object) -> int:
        if Path(str(path)) == folder and flags == os.O_RDONLY:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return real(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", refusing)


@pytest.mark.skipif(sys.platform == "win32", reason="flock: POSIX")
def test_a_folder_that_cannot_be_read_is_written_unlocked_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The folder lock opens the folder for reading: a folder with write but not read
    permission was written unlocked without a word. Now a note says it is unlocked,
    why and the fix; the files are still written (staged and locked alike)."""
    out = tmp_path / "out"
    out.mkdir()
    _unreadable(out, monkeypatch)
    with pytest.warns(outputs.UnlockedFolder) as notes, outputs.staged(out) as stage:
        stage.write_text("a.txt", "ours")
    assert [str(n.message) for n in notes] == [
        f"{out} cannot be locked (no read permission on it; the lock that keeps two writes "
        "into one folder apart opens the folder for reading): this write goes on unlocked — "
        f"run one write into it at a time, give it read permission (chmod u+r {out}), or "
        "write elsewhere"
    ]
    assert (out / "a.txt").read_text("utf-8") == "ours"
    with pytest.warns(outputs.UnlockedFolder), outputs.locked(out / "b.txt"):
        outputs.write_text(out / "b.txt", "ours")
    assert (out / "b.txt").read_text("utf-8") == "ours"


@pytest.mark.skipif(sys.platform == "win32", reason="flock: POSIX")
def test_the_model_cache_and_the_writes_take_one_folder_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model cache's lock (recuse.judging.models._lock) was a copy of the writes'
    (_lock_folder) without its notes: both are outputs.lock_folder now, the cache's
    without notes. A lock either takes keeps the other out (flock: two open
    descriptions of one folder conflict, in one process too); the cache's refuses a
    held folder at once, without a word; an unreadable folder is said by the writes'
    lock only."""
    import fcntl

    from recuse.judging import models

    folder = tmp_path / "cache"
    folder.mkdir()
    held = os.open(folder, os.O_RDONLY)
    fcntl.flock(held, fcntl.LOCK_EX)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        assert outputs.lock_folder(folder, wait=False, notes=True) is None
        assert models._lock(folder, wait=False) is None
    os.close(held)
    assert said == []
    fd = models._lock(folder, wait=False)
    assert fd is not None
    assert outputs.lock_folder(folder, wait=False, notes=False) is None  # the cache holds it
    os.close(fd)
    _unreadable(folder, monkeypatch)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        assert models._lock(folder, wait=True) is None
    assert said == []
    with pytest.warns(outputs.UnlockedFolder, match="no read permission"):
        assert outputs.lock_folder(folder, wait=True, notes=True) is None


@pytest.mark.skipif(
    sys.platform == "win32" or os.geteuid() == 0, reason="flock: POSIX; root reads any folder"
)
def test_a_folder_without_read_permission_is_said_unlocked(tmp_path: Path) -> None:
    """The same with a real folder of mode 0300 (write and search, no read)."""
    out = tmp_path / "out"
    out.mkdir()
    out.chmod(0o300)
    try:
        with pytest.warns(outputs.UnlockedFolder), outputs.staged(out) as stage:
            stage.write_text("a.txt", "ours")
        assert (out / "a.txt").read_text("utf-8") == "ours"
    finally:
        out.chmod(0o700)


@pytest.mark.skipif(sys.platform == "win32", reason="flock: POSIX")
def test_a_csv_and_its_copy_are_written_under_the_folder_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """write_csv writes two files (the exact one, then its spreadsheet copy): another
    run writing the same file at once could leave its file beside this one's copy. Now
    it takes the folder lock first: with another write holding it (a real lock, let go
    once the note is out: no thread, no timing) it says it waits, then writes both."""
    import fcntl

    holder = os.open(tmp_path, os.O_RDONLY)
    fcntl.flock(holder, fcntl.LOCK_EX)
    said = outputs._note_waiting
    written: list[bool] = []

    def note_then_other_ends(folder: Path) -> None:
        written.append((tmp_path / "d.csv").exists())
        said(folder)
        os.close(holder)

    monkeypatch.setattr(outputs, "_note_waiting", note_then_other_ends)
    try:
        with pytest.warns(outputs.WaitingForFolder):
            outputs.write_csv(tmp_path / "d.csv", pd.DataFrame({"a": ["=1"]}))
    finally:
        if not written:
            os.close(holder)
    assert written == [False]  # nothing written before the lock was taken
    assert (tmp_path / "d.csv").read_text("utf-8") == "a\n=1\n"
    assert (tmp_path / "for-spreadsheets" / "d.csv").read_text("utf-8") == "a\n'=1\n"


@pytest.mark.skipif(sys.platform == "win32", reason="flock: POSIX")
def test_locked_holds_each_files_folder_once_and_lets_go(tmp_path: Path) -> None:
    """outputs.locked: the folders of the files named are locked for the block (a lock
    taken here, by another descriptor, is refused until it ends), each once (two files
    in one folder, and a staged write nested in it, do not wait on themselves)."""
    import fcntl

    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()

    def free(folder: Path) -> bool:
        fd = os.open(folder, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        finally:
            os.close(fd)
        return True

    with outputs.locked(one / "a.json", one / "b.json", two / "c.json"):
        assert not free(one) and not free(two)
        with outputs.staged(one) as stage:  # this thread's: no wait
            stage.write_text("d.txt", "x")
    assert free(one) and free(two)
    assert (one / "d.txt").read_text("utf-8") == "x"


@pytest.mark.skipif(sys.platform == "win32", reason="flock: POSIX")
def test_an_audit_stopped_while_waiting_for_its_folder_exits_130_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Ctrl-C while `recuse audit --out` waits for another run's lock on the folder:
    the interrupted line, exit 130, no traceback, no folder (as run by hand: a real
    SIGINT to a run blocked in flock ends the same way)."""
    import fcntl

    from recuse.cli import main
    from recuse.simulate import PlantedBias, simulate_pairs

    pairs = tmp_path / "pairs.csv"
    simulate_pairs(judges={"gpt-4": PlantedBias(position=0.1)}, n_prompts=30,
                   seed=3).pairs.to_csv(pairs, index=False)  # fmt: skip

    def flock(fd: int, op: int) -> None:
        raise KeyboardInterrupt  # the Ctrl-C, in the wait

    monkeypatch.setattr(fcntl, "flock", flock)
    out = tmp_path / "out"
    args = ["audit", str(pairs), "--out", str(out), "--only", "position", "--n-boot", "200"]
    assert main(args) == 130
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.splitlines()[-1].startswith("recuse: interrupted")
    assert not out.exists()


@pytest.mark.skipif(sys.platform == "win32", reason="flock, SIGKILL: POSIX")
def test_a_write_killed_while_holding_the_lock_lets_the_next_one_in_and_is_cleaned(
    tmp_path: Path,
) -> None:
    """kill -9 of a write inside its block: the lock goes with its process (no later
    write waits for it) and its staging folder, nothing of it moved in, is removed by
    the next write (held on main; the lock must not outlive the process)."""
    out = tmp_path / "out"
    code = (
        "import sys, time\n"
        "from recuse import outputs\n"
        "with outputs.staged(sys.argv[1]) as stage:\n"
        "    stage.write_text('theirs.txt', 'x')\n"
        "    print('in', flush=True)\n"
        "    time.sleep(120)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(outputs.__file__).parents[1])}
    killed = subprocess.Popen(
        [sys.executable, "-c", code, str(out)], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert killed.stdout is not None and killed.stdout.readline() == "in\n"
    finally:
        killed.kill()
        killed.wait()
    assert [p.name[:16] for p in out.iterdir()] == [".recuse-staging-"]
    with outputs.staged(out) as stage:
        stage.write_text("ours.txt", "y")
    assert sorted(p.name for p in out.iterdir()) == ["ours.txt"]


@pytest.mark.skipif(sys.platform == "win32", reason="flock: POSIX")
def test_one_folder_spelled_two_ways_is_locked_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The folders a write holds were told apart by their real path: where two
    spellings lead to one folder without a link (a bind mount; another letter case on a
    case-insensitive file system, which realpath keeps as typed, simulated here by a
    realpath that leaves the path as given), `certify run --out Res/r.json --thresholds
    res/t.json` locked it twice, by two descriptors, and waited on itself for good (run
    by hand with `mount --bind`: it hung). Now a folder is its (device, inode): locked
    once, a nested write into it does not wait, and it is let go after. A wait would
    be said first (WaitingForFolder): made an error here, so the old code fails, not
    hangs."""
    import fcntl

    def waits(folder: Path) -> None:
        raise AssertionError(f"waits on its own lock of {folder}")

    monkeypatch.setattr(outputs, "_note_waiting", waits)
    monkeypatch.setattr(os.path, "realpath", lambda path, **_: os.fspath(path))
    one = tmp_path / "one"
    (one / "sub").mkdir(parents=True)
    other = one / "sub" / ".."  # the same folder, another spelling
    with outputs.locked(one / "a.json", other / "b.json"):
        outputs.write_text(other / "b.json", "b")
        with outputs.staged(other) as stage:
            stage.write_text("c.txt", "c")
        outputs.write_csv(other / "d.csv", pd.DataFrame({"a": [1]}))
    fd = os.open(one, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # let go: BlockingIOError if not
    finally:
        os.close(fd)
    names = ["b.json", "c.txt", "d.csv", "for-spreadsheets", "sub"]
    assert sorted(p.name for p in one.iterdir()) == names


def test_a_csv_into_a_folder_that_is_not_there_is_refused_and_makes_none(
    tmp_path: Path,
) -> None:
    """write_csv into a folder that does not exist failed, naming the file (as
    write_text does); taking the folder lock (outputs.locked) made the folder and its
    parents instead, unasked, and wrote into them. Now a folder that is not there is
    not locked, nor made: the write fails as before and leaves nothing."""
    with pytest.raises(OutputError, match=r"cannot write .*x\.csv: no file can be"):
        outputs.write_csv(tmp_path / "no" / "such" / "x.csv", pd.DataFrame({"a": [1]}))
    assert list(tmp_path.iterdir()) == []


def test_a_csv_under_a_file_is_refused_as_not_a_folder(tmp_path: Path) -> None:
    """write_csv under a file (a.txt/x.csv) failed "cannot write a.txt/x.csv: Not a
    directory"; taking the folder lock tried to make a.txt a folder first and said
    "cannot write a.txt: File exists", naming the file that is there as the one not
    written. Now a file is no folder to lock: the write says what it said before."""
    (tmp_path / "a.txt").write_text("keep")
    with pytest.raises(OutputError) as info:
        outputs.write_csv(tmp_path / "a.txt" / "x.csv", pd.DataFrame({"a": [1]}))
    assert str(info.value).startswith(f"cannot write {tmp_path / 'a.txt' / 'x.csv'}: ")
    assert (tmp_path / "a.txt").read_text() == "keep"


@pytest.mark.skipif(sys.platform == "win32", reason="flock: POSIX")
@pytest.mark.parametrize("code", ["EIO", "EACCES", "EPERM"])
def test_a_folder_whose_flock_fails_otherwise_is_written_unlocked_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: str
) -> None:
    """flock failing with another error than NO_LOCKS (EIO from a network file system,
    EACCES or EPERM from a FUSE one) let the write go on unlocked without a word, where
    ENOLCK said so: now one note says it, naming the error; the files are written; the
    model cache's lock stays silent."""
    import fcntl

    from recuse.judging import models

    number = getattr(errno, code)

    def flock(fd: int, op: int) -> None:
        raise OSError(number, os.strerror(number))

    monkeypatch.setattr(fcntl, "flock", flock)
    with pytest.warns(outputs.UnlockedFolder) as notes, outputs.staged(tmp_path / "out") as stage:
        stage.write_text("a.txt", "ours")
    assert (tmp_path / "out" / "a.txt").read_text("utf-8") == "ours"
    assert [str(n.message) for n in notes] == [
        f"{tmp_path / 'out'} cannot be locked (locking it failed, {code}: "
        f"{os.strerror(number)}): this write goes on unlocked — run one write into it at a "
        "time, or write to a local folder"
    ]
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        assert models._lock(tmp_path, wait=True) is None
    assert said == []
