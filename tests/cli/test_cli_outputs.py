"""What `audit`, `metrics pairs` and `favoritism` write, and what they refuse to write.

Issue #12: a full disk, a read-only target, a wrong `--out`, very long input names,
spreadsheet formulas and markup in names, out-of-range options and a run without a
terminal from a very deep folder. Each ends in one line and exit 2 with nothing that
looks like a result written, or in a complete, safe result.
"""

from __future__ import annotations

import csv
import errno
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import markupsafe
import pytest

import recuse
from recuse import outputs
from recuse.cli import main
from recuse.errors import OutputError
from recuse.simulate.pairs import PlantedBias, simulate_pairs
from recuse.simulate.ratings import simulate_ratings

SRC = Path(recuse.__file__).parents[1]  # the child runs the recuse this test imports
FAST_AUDIT = ("--n-boot", "100", "--robustness", "none")
FAST_METRICS = ("--n-boot", "100", "--min-n", "5")

# names a dataset may hold: a spreadsheet formula, a command, markup of rich and of
# HTML, matplotlib mathtext that does not parse, a newline
HOSTILE_JUDGE = '=HYPERLINK("http://evil.example","x") $\\foo{$ [bold] <i>x</i>'
HOSTILE_OTHER = "+cmd|' /C calc'!A0 <script>alert(1)</script> [/]"
HOSTILE_THIRD = "@SUM(1+1)\nsecond line -2+3"


@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")


def _pairs(path: Path, names: dict[str, str] | None = None) -> Path:
    sim = simulate_pairs(
        judges={"gpt-4": PlantedBias(self_preference=0.3, accuracy=0.65)},
        models=("gpt-4", "claude-v1", "vicuna-13b"),
        n_prompts=60,
        pairs_per_prompt=2,
        seed=5,
    )
    frame = sim.pairs
    for col in ("model_a", "model_b", "judge"):
        frame[col] = frame[col].map(lambda v: (names or {}).get(v, v))
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def pairs_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _pairs(tmp_path_factory.mktemp("pairs") / "pairs.csv")


@pytest.fixture(scope="module")
def hostile_pairs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    names = {"gpt-4": HOSTILE_JUDGE, "claude-v1": HOSTILE_OTHER, "vicuna-13b": HOSTILE_THIRD}
    return _pairs(tmp_path_factory.mktemp("hostile") / "d[/]x" / "x[bold].csv", names)


def _ratings(folder: Path, families: dict[str, str] | None = None) -> tuple[Path, Path]:
    """ratings.csv and a roster naming its judges; returns (roster, ratings)."""
    sim = simulate_ratings(seed=1, n_prompts=30, families=families)
    folder.mkdir(parents=True, exist_ok=True)
    roster = folder / "roster.toml"
    roster.write_text(
        "".join(
            f"[[model]]\nid = {json.dumps(j)}\nfamily = {json.dumps(f)}\n\n"
            for j, f in sim.families.items()
        ),
        encoding="utf-8",
    )
    sim.ratings.to_csv(folder / "ratings.csv", index=False)
    return roster, folder / "ratings.csv"


@pytest.fixture(scope="module")
def ratings(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return _ratings(tmp_path_factory.mktemp("ratings"))


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


PROGRESS = re.compile(r"\[\s*\d+\.\d s\] ")


def assert_one_line(code: int, err: str, *fragments: str) -> None:
    """Exit 2 and one error line (after any ``[  1.2 s] step`` progress lines)."""
    assert code == 2, err
    lines = [line for line in err.strip().splitlines() if not PROGRESS.match(line)]
    assert len(lines) == 1 and lines[0].startswith("recuse: error: "), err
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


@pytest.fixture
def no_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if a command starts loading or analysing data."""

    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("the command did work before checking its output")

    import recuse.data.inputs
    import recuse.driver

    monkeypatch.setattr(recuse.driver, "audit", forbidden)
    # what `recuse metrics pairs` and `recuse favoritism` read their data with
    monkeypatch.setattr(recuse.data.inputs, "load_input", forbidden)


def _commands(
    pairs: Path, ratings: tuple[Path, Path], out_dir: Path, out_file: Path
) -> dict[str, list[str]]:
    roster, table = ratings
    return {
        "audit": ["audit", str(pairs), *FAST_AUDIT, "--out", str(out_dir)],
        "metrics": ["metrics", "pairs", str(pairs), *FAST_METRICS, "--out", str(out_file)],
        "favoritism": ["--roster", str(roster), "favoritism", str(table), "--out", str(out_dir)],
    }


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


# ------------------------------------------------------------------ tmpfs mounts


def _mount(where: Path, options: str) -> Iterator[Path]:
    where.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace')}")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=False)


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Path]:
    """A real read-only file system (root can write into chmod-ed folders)."""
    yield from _mount(tmp_path / "ro", "ro,size=64k")


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A real file system with no space left: 64 KiB, filled to the last block."""
    for where in _mount(tmp_path / "full", "size=64k"):
        fd = os.open(where / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fd, b"\0" * 4096):
                pass
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
        finally:
            os.close(fd)
        yield where


# ------------------------------------------------------------ 1. disk full


@pytest.mark.parametrize("command", ["audit", "metrics", "favoritism"])
def test_full_disk_gives_one_line_and_leaves_nothing(
    command: str,
    full_disk: Path,
    pairs_csv: Path,
    ratings: tuple[Path, Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = _commands(pairs_csv, ratings, full_disk / "out", full_disk / "out.csv")[command]
    code, _, err = run(capsys, *args)
    assert_one_line(code, err, "disk is full")
    assert _files(full_disk) == ["filler"]


def _failing_write(monkeypatch: pytest.MonkeyPatch, name: str, code: int, said: str) -> None:
    """The staged write of the file ``name`` fails as the OS fails it (``code``)."""
    real = outputs.Staging.write_text

    def write_text(self: outputs.Staging, file: str, text: str) -> None:
        if file == name:
            raise OSError(code, said)
        real(self, file, text)

    monkeypatch.setattr(outputs.Staging, "write_text", write_text)


def test_audit_disk_full_while_writing_the_page_leaves_no_report(
    pairs_csv: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Before: tables/*.csv and report.html.part stayed behind (a report that looks
    complete). Now the tables, the JSON and the page appear together or not at all."""
    _failing_write(monkeypatch, "report.html", errno.ENOSPC, "No space left on device")
    out = tmp_path / "report"
    code, _, err = run(capsys, "audit", pairs_csv, *FAST_AUDIT, "--out", out)
    assert_one_line(code, err, "disk is full", str(out))
    assert not out.exists()


def test_metrics_disk_full_keeps_the_old_file(
    pairs_csv: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "bias.csv"
    out.write_text("old")

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    code, _, err = run(capsys, "metrics", "pairs", pairs_csv, *FAST_METRICS, "--out", out)
    assert_one_line(code, err, "disk is full", f"the {out} from before is left as it was")
    assert out.read_text() == "old" and _files(tmp_path) == ["bias.csv"]


def test_audit_failing_over_an_earlier_report_says_that_report_is_not_this_runs(
    pairs_csv: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Before: a second audit into the same --out failing as it wrote (a file size
    limit, a full disk) said only 'cannot write OUT', and OUT's report.json (the
    first run's) read as this run's result. Now the error says it is from before."""
    out = tmp_path / "report"
    assert run(capsys, "audit", pairs_csv, *FAST_AUDIT, "--out", out)[0] == 0
    before = (out / "report.json").read_bytes()
    _failing_write(monkeypatch, "report.json", errno.EFBIG, "File too large")
    code, _, err = run(capsys, "audit", pairs_csv, *FAST_AUDIT, "--out", out)
    assert_one_line(
        code, err, "ulimit -f", f"{out} still holds the report.json, report.html from before"
    )
    assert (out / "report.json").read_bytes() == before


def test_audit_refused_before_the_work_names_the_earlier_report(
    pairs_csv: Path, read_only: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A read-only --out holding a report: the refusal says that report is not this run's."""
    subprocess.run(["mount", "-o", "remount,rw", str(read_only)], check=True)
    (read_only / "report.json").write_text("{}")
    subprocess.run(["mount", "-o", "remount,ro", str(read_only)], check=True)
    code, _, err = run(capsys, "audit", pairs_csv, *FAST_AUDIT, "--out", read_only)
    assert_one_line(code, err, "read-only", "holds the report.json from before, left as")
    # one file (metrics --out): refused before the work, the same said of the old file
    code, _, err = run(
        capsys, "metrics", "pairs", pairs_csv, *FAST_METRICS, "--out", read_only / "report.json"
    )
    assert_one_line(code, err, "read-only", "report.json from before is left as it was")
    # a refusal that is no failed write (the output is the input) says nothing of it
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "report.json").write_text("{}")
    code, _, err = run(capsys, "audit", tmp_path / "w" / "report.json", "--out", tmp_path / "w")
    assert_one_line(code, err, "is the input")
    assert "from before" not in err


def test_favoritism_disk_full_on_the_last_file_writes_none(
    ratings: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    real = outputs.Staging.write_text

    def write_text(self: outputs.Staging, name: str, text: str) -> None:
        if name == "debiased.csv":
            raise OSError(errno.ENOSPC, "No space left on device")
        real(self, name, text)

    monkeypatch.setattr(outputs.Staging, "write_text", write_text)
    roster, table = ratings
    out = tmp_path / "fav"
    code, _, err = run(capsys, "--roster", roster, "favoritism", table, "--out", out)
    assert_one_line(code, err, "disk is full")
    assert not out.exists()


def test_favoritism_json_moves_in_last_beside_every_table_of_its_run(
    ratings: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`recuse favoritism` killed (kill -9) at any rename of its write: favoritism.json,
    which holds every result, is in --out only beside all the CSVs. It was written
    first, so it moved in first: killed at the next rename, the folder held it alone,
    whole, its coefficients.csv, robustness.csv and debiased.csv missing."""
    roster, table = ratings
    out = tmp_path / "fav"
    real, seen = os.replace, []

    def replace(src: str | Path, dst: str | Path) -> None:
        if out.is_dir():
            seen.append(sorted(str(p.relative_to(out)) for p in out.rglob("*.*")))
        real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    code, _, err = run(capsys, "--roster", roster, "favoritism", table, "--out", out)
    assert code == 0, err
    files = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert len(files) == 7 and len(seen) == 7  # 4 files, 3 spreadsheet copies
    for k, there in enumerate(seen, 1):
        assert "favoritism.json" not in there, f"rename {k}: {there}"


# ------------------------------------------------------------ 2. read-only target


@pytest.mark.parametrize("command", ["audit", "metrics", "favoritism"])
def test_read_only_file_system_is_refused_before_the_work(
    command: str,
    read_only: Path,
    pairs_csv: Path,
    ratings: tuple[Path, Path],
    no_work: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = _commands(pairs_csv, ratings, read_only / "out", read_only / "out.csv")[command]
    code, _, err = run(capsys, *args)
    assert_one_line(code, err, "read-only")


@pytest.mark.parametrize("command", ["audit", "metrics", "favoritism"])
def test_a_folder_that_takes_no_file_is_refused_with_what_to_do(
    command: str,
    tmp_path: Path,
    pairs_csv: Path,
    ratings: tuple[Path, Path],
    no_work: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--out /proc/x``: /proc exists, but its file system answers a new file with
    "No such file or directory", which the error repeated with nothing to do about it.
    The line now says the folder takes no file and to write elsewhere (exit 2, before
    any work). Here as on Linux: creating a file in the folder raises ENOENT."""
    target = tmp_path / "virtual"
    target.mkdir()
    _no_new_file(monkeypatch, target, FileNotFoundError(errno.ENOENT, "No such file or directory"))
    args = _commands(pairs_csv, ratings, target / "out", target / "out.csv")[command]
    code, _, err = run(capsys, *args)
    assert_one_line(code, err, "no file can be created in that folder", "write elsewhere")
    assert list(target.iterdir()) == []


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="no /proc (Linux only)")
def test_audit_out_under_proc_says_to_write_elsewhere(
    pairs_csv: Path, no_work: None, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "audit", str(pairs_csv), "--out", "/proc/recuse-out")
    assert_one_line(code, err, "/proc/recuse-out", "/proc", "write elsewhere with --out")


def _no_new_file(monkeypatch: pytest.MonkeyPatch, target: Path, error: OSError) -> None:
    """``os.open`` creating a file under ``target`` raises ``error`` (its errno and
    words, with the path), as a folder without write permission or /proc answers."""
    real_open = os.open

    def refuse(path: str | Path, flags: int, *args: int, **kwargs: object) -> int:
        if str(path).startswith(str(target)) and flags & os.O_CREAT:
            raise type(error)(error.errno, error.strerror, str(path))
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", refuse)


@pytest.mark.parametrize("command", ["audit", "metrics", "favoritism"])
def test_unwritable_folder_is_refused_before_the_work(
    command: str,
    tmp_path: Path,
    pairs_csv: Path,
    ratings: tuple[Path, Path],
    no_work: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """As a normal user in a folder without write permission (root ignores chmod)."""
    target = tmp_path / "locked"
    target.mkdir()
    _no_new_file(monkeypatch, target, PermissionError(errno.EACCES, "Permission denied"))
    args = _commands(pairs_csv, ratings, target / "out", target / "out.csv")[command]
    code, _, err = run(capsys, *args)
    assert_one_line(code, err, "permission denied")
    assert _files(target) == []


# ------------------------------------------------------------ 3. wrong --out


@pytest.mark.parametrize(
    ("command", "target", "message"),
    [
        ("audit", "FILE", "is a file — give a folder"),
        ("audit", "MISSING/deeper", "does not exist"),
        ("audit", "FILE/inside", "is a file, not a folder"),
        ("favoritism", "FILE", "is a file — give a folder"),
        ("favoritism", "MISSING/deeper", "does not exist"),
        ("metrics", "FOLDER.csv", "is a folder — give a file name"),
        ("metrics", "MISSING/x.csv", "does not exist"),
        ("metrics", "FILE/x.csv", "is a file, not a folder"),
        ("metrics", "n" * 300 + ".csv", "longer than 255 bytes"),
    ],
)
def test_wrong_out_is_refused_before_the_work(
    command: str,
    target: str,
    message: str,
    tmp_path: Path,
    pairs_csv: Path,
    ratings: tuple[Path, Path],
    no_work: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "FILE").write_text("mine")
    (tmp_path / "FOLDER.csv").mkdir()
    out = tmp_path / target
    args = _commands(pairs_csv, ratings, out, out)[command]
    code, _, err = run(capsys, *args)
    assert_one_line(code, err, "--out", message)
    assert _files(tmp_path) == ["FILE", "FOLDER.csv"]
    assert (tmp_path / "FILE").read_text() == "mine"


@pytest.mark.parametrize("command", ["audit", "favoritism"])
@pytest.mark.parametrize("leads_to", ["gone/report", "LINK"])
def test_out_a_link_to_no_folder_says_so_before_the_work(
    command: str,
    leads_to: str,
    tmp_path: Path,
    pairs_csv: Path,
    ratings: tuple[Path, Path],
    no_work: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """--out a link to a folder that does not exist (or a link to itself) read
    'cannot write LINK: File exists' (mkdir's words), with nothing to do about it."""
    out = tmp_path / "LINK"
    out.symlink_to(leads_to)
    code, _, err = run(capsys, *_commands(pairs_csv, ratings, out, out)[command])
    assert_one_line(code, err, f"--out {out}: is a link to {leads_to}, which leads to no folder")
    assert "File exists" not in err and _files(tmp_path) == ["LINK"]


@pytest.mark.parametrize("command", ["audit", "favoritism"])
def test_out_a_link_to_a_file_says_it_is_a_link(
    command: str,
    tmp_path: Path,
    pairs_csv: Path,
    ratings: tuple[Path, Path],
    no_work: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """--out a link to a file read 'is a file — give a folder': the user, who sees a
    link in the folder listing and made no file of that name, was not told why."""
    (tmp_path / "FILE").write_text("mine")
    out = tmp_path / "LINK"
    out.symlink_to("FILE")
    code, _, err = run(capsys, *_commands(pairs_csv, ratings, out, out)[command])
    assert_one_line(
        code,
        err,
        f"--out {out}: is a link to FILE, a file, not a folder — give another --out, or "
        "remove the link (the file it leads to stays)",
    )
    assert _files(tmp_path) == ["FILE", "LINK"] and (tmp_path / "FILE").read_text() == "mine"


@pytest.mark.parametrize("command", ["audit", "metrics", "favoritism"])
@pytest.mark.parametrize("spelling", ["--out", "-o", "--out="])
def test_an_empty_out_is_refused_not_read_as_the_current_folder(
    command: str,
    spelling: str,
    tmp_path: Path,
    pairs_csv: Path,
    ratings: tuple[Path, Path],
    no_work: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--out "$DIR"`` with DIR unset: the empty path was read as ``.`` and the audit's
    report.html, report.json and tables/ (favoritism's four files) went into the
    current folder."""
    if spelling == "-o" and command == "favoritism":
        pytest.skip("favoritism has no -o")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.txt").write_text("mine")
    args = _commands(pairs_csv, ratings, tmp_path, tmp_path)[command]
    k = args.index("--out")
    given = [spelling] if spelling.endswith("=") else [spelling, ""]
    code, _, err = run(capsys, *args[:k], *given, *args[k + 2 :])
    name = spelling.rstrip("=")
    assert_one_line(code, err, f"{name} is given an empty value", "unset shell variable")
    assert _files(tmp_path) == ["mine.txt"]


@pytest.mark.parametrize("invisible", ["\ufeff", "\u200b", " \u2060 "])
def test_an_out_of_invisible_characters_only_is_refused_as_empty(
    invisible: str,
    tmp_path: Path,
    pairs_csv: Path,
    no_work: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--out`` of a byte-order mark or a zero-width space alone (pasted): before, the
    report went into a folder whose name shows nothing ("wrote \ufeff/report.html"),
    where a blank --out is refused; so is such a data argument."""
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "audit", str(pairs_csv), "--out", invisible)
    assert_one_line(code, err, "--out is given an empty value")
    code, _, err = run(capsys, "audit", invisible, "--out", "o")
    assert_one_line(code, err, f"an empty argument {invisible!r} for DATA")
    assert _files(tmp_path) == []


def test_a_flag_before_an_empty_argument_is_not_an_empty_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--verbose`` takes no value: the "" after it is the data argument, refused as
    an empty argument (:func:`test_an_empty_argument_is_refused_not_read_as_the_current_folder`)."""
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "audit", "--verbose", "", "--out", "o")
    assert code == 2 and "empty value" not in err
    assert_one_line(code, err, "an empty argument '' for DATA")
    code, _, err = run(capsys, "audit", "x.csv", "--title", " ", "--out", "o")
    assert_one_line(code, err, "--title is given an empty value")


@pytest.mark.parametrize(
    ("args", "which"),
    [
        (["audit", "", "--out", "o"], "DATA"),
        (["validate", " "], "PATH"),
        (["certify", "apply", "t.json", "", "--out", "d.csv"], "SOURCE"),
        (["--roster", "r.toml", "judge", "export", "", "--out", "x.csv"], "STORE"),
        # after --, as a careful script writes it: the current folder was read still
        (["audit", "--out", "o", "--", ""], "DATA"),
        (["certify", "apply", "--out", "d.csv", "--", "t.json", ""], "SOURCE"),
    ],
)
def test_an_empty_argument_is_refused_not_read_as_the_current_folder(
    args: list[str],
    which: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``recuse audit "$DATA"`` with DATA unset: the empty path was ``.``, the current
    folder, read as the data (a folder of another tool's files there was audited) or
    named in the error (".: the folder holds no file recuse recognises") as if given."""
    monkeypatch.chdir(tmp_path)
    empty = next(a for a in args if not a.strip())
    code, _, err = run(capsys, *args)
    assert_one_line(
        code,
        err,
        f"recuse: error: an empty argument {empty!r} for {which} (an unset shell "
        "variable?) — give a file, folder or dataset name",
    )
    assert _files(tmp_path) == []


# ------------------------------------------------------------ 4. long input names


def test_audit_of_a_file_with_a_240_character_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: `File name too long` naming a table file, and an empty tables/."""
    path = _pairs(tmp_path / ("p" * 236 + ".csv"))
    out = tmp_path / "report"
    code, _, err = run(capsys, "audit", path, *FAST_AUDIT, "--out", out)
    assert code == 0, err
    files = [f for f in (out / "tables").iterdir() if f.is_file()]
    assert files and all(len(f.name.encode()) <= 120 for f in files)
    report = json.loads((out / "report.json").read_text("utf-8"))
    # each table's name in the report is its file's name: the page's links hold
    assert {f"{name}.csv" for name in report["tables"]} == {f.name for f in files}


# ------------------------------------------------------------ 5. formula injection


def _cells(path: Path) -> set[str]:
    with open(path, newline="", encoding="utf-8") as fh:
        return {cell for row in csv.reader(fh) for cell in row}


def _formula_cells(path: Path) -> list[str]:
    """Cells a spreadsheet would run as a formula (a number like -0.5 is fine)."""
    bad = []
    with open(path, newline="", encoding="utf-8") as fh:
        for row in csv.reader(fh):
            for cell in row:
                if not cell.startswith(outputs.FORMULA_STARTS):
                    continue
                try:
                    float(cell)
                except ValueError:
                    bad.append(cell)
    return bad


def test_hostile_names_through_audit(
    hostile_pairs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Formulas, markup, mathtext and newlines in judge/model names and in the path:
    the audit runs, every figure is drawn, no CSV cell is a formula, the page shows
    the names as text. Before: a mathtext parse error after every analysis ran."""
    out = tmp_path / "o[" / "]ut [bold]"  # .../o[/]ut [bold]
    out.parent.mkdir()
    code, printed, err = run(
        capsys, "audit", hostile_pairs, *FAST_AUDIT, "--allow-unknown-models", "--out", out
    )
    assert code == 0, err
    assert f"wrote {out / 'report.html'}" in printed
    tables = list((out / "tables" / "for-spreadsheets").glob("*.csv"))
    assert tables and len(tables) == len(list((out / "tables").glob("*.csv")))
    for table in tables:
        assert _formula_cells(table) == [], table.name
    assert any(f"'{HOSTILE_JUDGE}" in _cells(t) for t in tables)  # kept, made safe
    assert any(HOSTILE_JUDGE in _cells(t) for t in (out / "tables").glob("*.csv"))  # exact
    report = json.loads((out / "report.json").read_text("utf-8"))
    figures = [f for s in report["sections"] for f in s["figures"]]
    assert any(HOSTILE_JUDGE in f["title"] for f in figures)  # the confusion matrix
    page = (out / "report.html").read_text("utf-8")
    assert "<i>x</i>" not in page and str(markupsafe.escape(HOSTILE_JUDGE)) in page


def test_hostile_names_through_metrics(
    hostile_pairs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bias.csv"
    args = ["metrics", "pairs", hostile_pairs, *FAST_METRICS, "--allow-unknown-models"]
    code, printed, err = run(capsys, *args, "--out", out)
    assert code == 0, err
    assert f"{hostile_pairs}: pairwise bias" in printed  # the path printed as written
    assert "[bold]" in printed
    copy = tmp_path / "for-spreadsheets" / "bias.csv"
    assert _formula_cells(copy) == []
    assert f"'{HOSTILE_JUDGE}" in _cells(copy) and HOSTILE_JUDGE in _cells(out)


def test_hostile_names_through_favoritism(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    families = {
        HOSTILE_JUDGE: "=fam",
        "@SUM(1)": "=fam",
        "-2+3": "+fam [bold]",
        "j3": "+fam [bold]",
        "j4 $x$": "@fam",
    }
    roster, table = _ratings(tmp_path / "in[/]put", families)
    out = tmp_path / "fav"
    code, printed, err = run(capsys, "--roster", roster, "favoritism", table, "--out", out)
    assert code == 0, err
    assert str(table) in printed and "+fam [bold]" in printed
    for name in ("coefficients.csv", "robustness.csv", "debiased.csv"):
        assert _formula_cells(out / "for-spreadsheets" / name) == [], name
    assert "'@SUM(1)" in _cells(out / "for-spreadsheets" / "debiased.csv")
    assert "@SUM(1)" in _cells(out / "debiased.csv")
    json.loads((out / "favoritism.json").read_text("utf-8"))  # strict JSON


# ------------------------------------------------------------ 7. markup in paths


def test_paths_with_markup_are_printed_as_written(
    hostile_pairs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: rich.errors.MarkupError: closing tag '[/]' has nothing to close."""
    out = tmp_path / "[/]" / "x[bold].json"
    out.parent.mkdir(parents=True)  # folders '[' and ']'
    args = ["metrics", "pairs", hostile_pairs, *FAST_METRICS, "--allow-unknown-models"]
    code, printed, err = run(capsys, *args, "--out", out)
    assert code == 0, err
    assert f"wrote {out}" in printed


# ------------------------------------------------------------ 8. numeric options


@pytest.mark.parametrize(
    ("command", "option", "value"),
    [
        ("audit", "--seed", "-1"),
        ("audit", "--n-boot", "0"),
        ("audit", "--level", "1.5"),
        ("audit", "--level", "nan"),
        ("metrics", "--seed", "-1"),
        ("metrics", "--n-boot", "0"),
        ("metrics", "--level", "1.5"),
        ("metrics", "--level", "0"),
        ("metrics", "--min-n", "-1"),
        ("favoritism", "--level", "1.5"),
        ("favoritism", "--level", "-0.1"),
    ],
)
def test_out_of_range_options_are_refused_before_the_work(
    command: str,
    option: str,
    value: str,
    tmp_path: Path,
    pairs_csv: Path,
    ratings: tuple[Path, Path],
    no_work: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = _commands(pairs_csv, ratings, tmp_path / "out", tmp_path / "out.csv")[command]
    code, _, err = run(capsys, *args, f"{option}={value}")
    name = option.lstrip("-").replace("-", "_")
    assert_one_line(code, err)
    assert option in err or name in err, err
    assert _files(tmp_path) == []


@pytest.mark.parametrize("command", ["audit", "metrics", "favoritism", "plan"])
@pytest.mark.parametrize("value", ["0.3", "0.4999", "1", "nan"])
def test_every_level_option_has_the_audits_rule_and_message(
    command: str,
    value: str,
    tmp_path: Path,
    pairs_csv: Path,
    ratings: tuple[Path, Path],
    no_work: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """One rule for --level, [0.5, 1), and one message, in every command that takes it:
    `metrics pairs` and `favoritism` once took any level in (0, 1)."""
    commands = _commands(pairs_csv, ratings, tmp_path / "out", tmp_path / "out.csv")
    args = commands.get(command, ["plan", "--quiet"])
    code, _, err = run(capsys, *args, "--level", value)
    assert_one_line(code, err)
    assert f"--level = {float(value)}: must be in [0.5, 1), e.g. 0.9" in err, err
    assert _files(tmp_path) == []


# ------------------------------------------------------------ 9. no terminal, deep cwd


def _deep(root: Path, levels: int = 40) -> tuple[str, ...]:
    """Make a folder ``levels`` deep under ``root`` whose absolute path is longer than
    PATH_MAX (4096 bytes); returns its parts relative to ``root``."""
    parts = tuple(f"{i:02d}" + "d" * 110 for i in range(levels))
    fd = os.open(root, os.O_RDONLY)
    try:
        for name in parts:
            os.mkdir(name, dir_fd=fd)
            new = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = new
    finally:
        os.close(fd)
    return parts


def test_audit_without_a_terminal_from_a_very_deep_folder(pairs_csv: Path, tmp_path: Path) -> None:
    """No TERM, stdin closed, not a tty, a working folder 40 levels (4,000+ bytes)
    deep: the audit runs and writes its report there. Before: `File name too long`
    (tempfile made the relative output path absolute)."""
    parts = _deep(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("TERM", "COLUMNS")}
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")])
    # the walk down is relative: the kernel refuses an absolute path this long
    script = (
        "import os, sys\n"
        f"for part in {parts!r}: os.chdir(part)\n"
        "os.close(0)\n"
        "from recuse.cli import main\n"
        "code = main(sys.argv[1:])\n"
        "print(sorted(os.listdir('recuse-report')))\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, "audit", str(pairs_csv), *FAST_AUDIT],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "wrote recuse-report/report.html" in done.stdout
    assert "['report.html', 'report.json', 'tables']" in done.stdout


def test_validate_prints_a_path_with_markup_as_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "d[" / "]x"
    folder.mkdir(parents=True)
    good = folder / "x[bold].csv"
    good.write_text(
        "item_id,prompt_id,model_a,model_b,human,judge,p_a_first\n"
        "1,q1,gpt-4,claude-v1,a,gpt-4,0.7\n"
    )
    code = main(["validate", str(good)])
    out, err = capsys.readouterr()
    assert code == 0, err  # was a rich MarkupError traceback
    assert "x[bold].csv" in "".join(out.split())


def test_no_hard_wrap_from_a_deep_directory_without_a_terminal(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    deep = tmp_path
    for k in range(30):
        deep = deep / f"folder-number-{k:02d}-of-thirty"
    deep.mkdir(parents=True)
    good = deep / "pairs_with_a_rather_long_file_name.csv"
    good.write_text("item_id,prompt_id,human\ni1,q1,a\ni2,q2,b\n")
    env = {k: v for k, v in os.environ.items() if k not in ("TERM", "COLUMNS")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2] / "src")
    run = subprocess.run(
        [sys.executable, "-m", "recuse", "validate", str(good)],
        cwd=deep, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert f"{good}: a valid pairs table" in run.stdout  # a 900-character path, one line
    run = subprocess.run(
        [sys.executable, "-m", "recuse", "validate", str(deep / "missing.csv")],
        cwd=deep, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip
    assert run.returncode == 2
    assert str(deep / "missing.csv") in run.stderr  # one unbroken line
    assert "\x1b[" not in run.stdout + run.stderr


def test_help_off_a_terminal_is_plain_and_whole() -> None:
    """Piped help: no rich box (80 columns, text cut with "…"), no colour codes, and each
    option's help whole on its line (the probe list was cut after "authori…")."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("TERM", "COLUMNS")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2] / "src")
    run = subprocess.run(
        [sys.executable, "-m", "recuse", "probe", "--help"],
        env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "…" not in run.stdout and "╭" not in run.stdout and "\x1b[" not in run.stdout
    probe_line = next(line for line in run.stdout.splitlines() if "--probe " in line)
    assert "attribution-self,attribution-other,concise,verbose,self-recognition" in probe_line
    assert "[default: padding,authority,distraction,bandwagon," in probe_line
    usage = subprocess.run(
        [sys.executable, "-m", "recuse", "audit", "--no-such-option"],
        env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip
    assert usage.returncode == 2
    assert "No such option: --no-such-option" in usage.stderr and "╭" not in usage.stderr


@pytest.mark.parametrize("where", ["before", "after"])
def test_an_empty_roster_is_refused_not_ignored(
    where: str, tmp_path: Path, pairs_csv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--roster "$ROSTER"`` with ROSTER unset read as no roster at all: the models it
    was to name were each their own family, with nothing said."""
    audit = ["audit", str(pairs_csv), "--out", str(tmp_path / "o")]
    args = ["--roster", "", *audit] if where == "before" else [*audit, "--roster", ""]
    code, _, err = run(capsys, *args)
    assert_one_line(code, err, "--roster is given an empty value")
    assert not (tmp_path / "o").exists()


def test_a_json_error_to_a_reader_that_stopped_reading_is_no_traceback(tmp_path: Path) -> None:
    """`recuse validate bad.csv --json | true`: the one-line error on stderr, then the
    JSON printed to a pipe nobody reads any more gave two tracebacks (BrokenPipeError,
    once when printing, once when Python flushed stdout at exit)."""
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n", encoding="utf-8")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")])
    read, write = os.pipe()
    os.close(read)  # the reader is gone before recuse writes a byte
    try:
        done = subprocess.run(
            [sys.executable, "-m", "recuse", "validate", str(bad), "--json"],
            stdout=write, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
            env=env, text=True, timeout=120, check=False,
        )  # fmt: skip
    finally:
        os.close(write)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr
    assert done.stderr.startswith(f"recuse: error: {bad}: missing required column(s) item_id")
    assert len(done.stderr.strip().splitlines()) == 1


def _limit_file_size() -> None:
    """In the child: no file may grow past 512 bytes (``ulimit -f``, a full disk's
    stand-in), its standard output's file included."""
    import resource

    resource.setrlimit(resource.RLIMIT_FSIZE, (512, 512))


@pytest.mark.parametrize(
    "args, encoding",
    [(["analyses"], "utf-8"), (["analyses", "--json"], "utf-8"), (["analyses"], "ascii")],
    ids=["table", "json", "ascii-locale"],
)
def test_standard_output_on_a_full_disk_is_one_line_and_exit_2(
    tmp_path: Path, args: list[str], encoding: str
) -> None:
    """`recuse analyses > out.txt` with the disk full (here: past `ulimit -f`): the
    table gave a traceback and exit 1; the JSON, one write, gave exit 0 and a file cut
    at 512 bytes that read as the command's whole answer (Python's buffered writer
    lost the part the system refused, with no error). Under an ASCII locale click
    writes the lines to stdout's buffer (it takes the stream for misconfigured), past
    the guard: exit 0 and the file cut short again, until the buffer was guarded too."""
    env = {**os.environ, "PYTHONPATH": str(SRC), "PYTHONIOENCODING": encoding}
    whole = subprocess.run(
        [sys.executable, "-m", "recuse", *args], capture_output=True,
        env=env, timeout=120, check=True,
    )  # fmt: skip
    assert len(whole.stdout) > 512  # more than the limit lets through
    out = tmp_path / "out.txt"
    with out.open("wb") as stdout:
        done = subprocess.run(
            [sys.executable, "-m", "recuse", *args],
            stdout=stdout, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
            env=env, timeout=120, check=False, preexec_fn=_limit_file_size,
        )  # fmt: skip
    assert done.returncode == 2, done.stderr
    said = (
        "recuse: error: cannot write standard output (what was printed is cut short): a "
        "file would pass the largest file size this process may write (ulimit -f) — raise "
        "that limit, or write elsewhere with a redirect (> FILE) to another file or disk\n"
    )  # as Python writes stderr in the locale: \u2014 for the dash under ASCII
    assert done.stderr == said.encode(encoding, "backslashreplace").decode(encoding)
    assert out.read_bytes() == whole.stdout[:512]


def _close_stdout() -> None:
    """In the child before it runs: standard output closed, as ``recuse ... >&-``."""
    os.close(1)


@pytest.mark.parametrize(
    "args, code",
    [(["analyses"], 0), (["validate", "no-such.csv", "--json"], 2)],
    ids=["table", "json-error"],
)
def test_standard_output_closed_is_no_traceback(args: list[str], code: int) -> None:
    """`recuse analyses >&-`: Python sets sys.stdout to None, and recuse's own
    ``sys.stdout.isatty()`` (then the guard's wrapping of None) ended every command in a
    traceback, exit 1. What is printed now goes nowhere, as print and click do there;
    the command ends as it would (an error still said on stderr, with its code)."""
    done = subprocess.run(
        [sys.executable, "-m", "recuse", *args], stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL, text=True, env={**os.environ, "PYTHONPATH": str(SRC)},
        timeout=120, check=False, preexec_fn=_close_stdout,
    )  # fmt: skip
    assert "Traceback" not in done.stderr
    assert done.returncode == code, done.stderr
    expected = "" if code == 0 else "recuse: error: no-such.csv: file not found"
    assert done.stderr.startswith(expected)


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="no /proc (Linux only)")
def test_the_fix_names_the_option_that_gave_the_path(
    pairs_csv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``recuse certify --thresholds /proc/t.json`` (as in a read-only folder) said
    "write elsewhere with --out", an option certify does not have; the fix names the
    option given, and the library's writer is said as a method, not as a flag."""
    args = ["certify", str(pairs_csv), "--agreement", "0.8", "--thresholds", "/proc/t.json"]
    code, _, err = run(capsys, *args)
    assert_one_line(code, err, "/proc/t.json", "write elsewhere with --thresholds")
    assert "--out" not in err
    from recuse.errors import OutputError
    from recuse.outputs import check_output

    with pytest.raises(OutputError, match=r"write elsewhere with Report\.to_json\(path\)$"):
        check_output("/proc/r.json", option="Report.to_json")


def test_a_full_disk_met_writing_names_the_option_that_gave_the_path(
    pairs_csv: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A full disk met as the file is written (past check_output's probe: a 40 KB
    tmpfs took the probe, not the thresholds) said "write elsewhere with --out" for
    ``certify run --thresholds``, and for the library's Report.to_json / to_html; the
    fix names the option or method that gave the path, as the probe's error does."""

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    rules = tmp_path / "t.json"
    args = ["certify", "run", str(pairs_csv), "--agreement", "0.8", "--thresholds", str(rules)]
    code, _, err = run(capsys, *args)
    assert_one_line(code, err, f"cannot write {rules}: the disk is full", "with --thresholds")
    assert "--out" not in err and _files(tmp_path) == []
    report = recuse.audit(pairs_csv, n_boot=100, robustness="none")
    for method in ("to_json", "to_html"):
        with pytest.raises(OutputError, match=rf"with Report\.{method}\(path\)$"):
            getattr(report, method)(tmp_path / f"r.{method}")
    assert _files(tmp_path) == []


@pytest.mark.parametrize("earlier", [True, False])
def test_certify_run_failing_on_its_out_file_leaves_no_thresholds_of_this_run(
    pairs_csv: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    earlier: bool,
) -> None:
    """``certify run --thresholds t.json -o run.json`` on a disk that fills writing
    run.json exited 2 and left this run's t.json, which `certify apply` takes; the
    earlier t.json is put back (or the new one removed), as they were before."""
    rules, run_file = tmp_path / "t.json", tmp_path / "run.json"
    if earlier:
        rules.write_text("old")
    real = outputs.write_bytes

    def write_bytes(path: str | Path, data: bytes, **options: str) -> Path:
        if Path(path).name == "run.json":
            raise outputs.output_error(path, OSError(errno.ENOSPC, "No space left on device"))
        return real(path, data, **options)

    monkeypatch.setattr(outputs, "write_bytes", write_bytes)
    args = ["certify", "run", pairs_csv, "--agreement", "0.8"]
    code, _, err = run(capsys, *args, "--thresholds", rules, "-o", run_file)
    there = {p.name: p.read_text() for p in tmp_path.iterdir()}
    assert there == ({"t.json": "old"} if earlier else {})
    assert_one_line(code, err, f"cannot write {run_file}: the disk is full")


def test_a_named_pipe_where_the_report_goes_is_refused_not_waited_on(
    pairs_csv: Path, tmp_path: Path
) -> None:
    """`mkfifo out/report.json`, then `recuse audit --out out`: the audit opened the
    pipe to read the earlier report's table names and waited for a writer for good,
    before any check of its folder (exit 124 under `timeout`). Now: one line, exit 2,
    the pipe left as it was."""
    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / "report.json")
    done = subprocess.run(
        [sys.executable, "-m", "recuse", "audit", str(pairs_csv), "--out", str(out),
         "--only", "position", "--no-config"],
        capture_output=True, stdin=subprocess.DEVNULL, text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)}, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        f"recuse: error: --out {out}: report.json there is not a regular file (a pipe, "
        "socket or device), where recuse writes a file — move or remove it, or give "
        "another --out\n"
    )
    assert [p.name for p in out.iterdir()] == ["report.json"]
    assert (out / "report.json").is_fifo()


def test_an_input_whose_name_is_not_utf8_is_audited(
    pairs_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file named in Latin-1 (`caf\\xe9.csv`, as an old system or an unzipped archive
    leaves it): its name, held by Python with a lone surrogate, named the tables
    (pyarrow: "surrogates not allowed", a traceback) and the report's page. Now the
    name reads `caf\\xe9.csv` wherever it is shown, and the report is written."""
    data = tmp_path / os.fsdecode(b"caf\xe9.csv")
    data.write_bytes(pairs_csv.read_bytes())
    out = tmp_path / "out"
    code = main(["audit", str(data), "--out", str(out), "--only", "position", "--no-config"])
    err = capsys.readouterr().err
    assert code == 0, err
    (source,) = json.loads((out / "report.json").read_text("utf-8"))["provenance"]["sources"]
    assert source["name"] == "caf\\xe9.csv"
    assert source["files"] == ["caf\\xe9.csv"]
    assert source["location"] == f"{tmp_path.resolve()}/caf\\xe9.csv"
    assert f"<code>{tmp_path.resolve()}/caf\\xe9.csv</code>" in (out / "report.html").read_text(
        "utf-8"
    )


@pytest.mark.parametrize("encoding", ["ascii", "latin-1", "ascii:surrogateescape"])
def test_output_under_a_locale_without_the_dash_is_escaped_not_a_traceback(
    pairs_csv: Path, encoding: str
) -> None:
    """Standard output in ASCII or Latin-1 (an old system's locale, PYTHONIOENCODING):
    the em dash of `recuse validate`'s table and `recuse certify`'s lines ended the
    command in a traceback (UnicodeEncodeError, exit 1). Now it is written as Python
    writes it to stderr, ``\\u2014``; so too under a C locale, whose ASCII output
    writes with ``surrogateescape`` (a traceback still, before its own fallback)."""
    for args in (["validate", str(pairs_csv)], ["certify", "run", str(pairs_csv)]):
        done = subprocess.run(
            [sys.executable, "-m", "recuse", *args, "--no-config"], capture_output=True,
            stdin=subprocess.DEVNULL, timeout=120, check=False,
            env={**os.environ, "PYTHONPATH": str(SRC), "PYTHONIOENCODING": encoding},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr.decode(errors="replace")
        assert b"Traceback" not in done.stderr
        assert b"\\u2014" in done.stdout
        done.stdout.decode(encoding.split(":")[0])  # nothing the locale cannot show


def test_a_name_that_is_not_utf8_reads_as_report_json_writes_it_in_every_output(
    pairs_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`caf\\xe9.csv` (Latin-1): report.json writes `caf\\xe9.csv`, but `recuse validate
    --json` wrote "caf\\udce9.csv" (the lone surrogate Python holds, escaped), its table
    the raw byte, `recuse metrics --out`, `certify run --json`, `certify apply --out`
    and `gate --json` "\\udce9" too, and a line naming it on a UTF-8 stream ended in a
    traceback ("surrogates not allowed"). Now each writes the name as report.json does
    (recuse.files.path_text in JSON, recuse.terminal.shown in text)."""
    data = tmp_path / os.fsdecode(b"caf\xe9.csv")
    data.write_bytes(pairs_csv.read_bytes())
    shown = f"{tmp_path}/caf\\xe9.csv"
    assert main(["validate", str(data), "--json", "--no-config"]) == 0
    assert json.loads(capsys.readouterr().out)["file"] == shown
    assert main(["validate", str(data), "--no-config"]) == 0
    said = capsys.readouterr().out
    assert "caf\\xe9.csv: a valid pairs table" in said and "\udce9" not in said
    out = tmp_path / "m.json"
    args = ["metrics", "pairs", str(data), "--metric", "flip_rate", "--out", str(out)]
    assert main([*args, "--no-config"]) == 0, capsys.readouterr().err
    assert json.loads(out.read_text("utf-8"))["settings"]["source"] == shown
    assert "caf\\xe9.csv: pairwise bias" in capsys.readouterr().out
    rules = tmp_path / os.fsdecode(b"r\xe9gles.json")
    assert main(["certify", "run", str(data), "--json", "--thresholds", str(rules)]) == 0
    assert json.loads(capsys.readouterr().out)["source"] == shown
    decided = tmp_path / "d.json"
    args = ["certify", "apply", str(rules), str(data), "--out", str(decided)]
    assert main(args) == 0, capsys.readouterr().err
    assert json.loads(decided.read_text("utf-8"))["thresholds"] == f"{tmp_path}/r\\xe9gles.json"
    report = tmp_path / os.fsdecode(b"rapport\xe9")
    assert main(["audit", str(data), "--out", str(report), "--only", "position"]) == 0
    capsys.readouterr()
    main(["gate", str(report / "report.json"), "--json", "--max", "position=0.4"])
    said = json.loads(capsys.readouterr().out)["report"]
    assert said == f"{tmp_path}/rapport\\xe9/report.json"
