"""The delimited-text reader: only an empty cell is missing; every other text, "None"
and "NA" among them, is kept as written (a model may answer "None")."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pandas as pd
import pytest

from recuse.cells import MISSING_TEXTS
from recuse.data.delimited import read_csv


@pytest.mark.parametrize("sep", [",", "\t"])
def test_texts_pandas_reads_as_missing_are_kept_and_only_an_empty_cell_is_missing(
    tmp_path: Path, sep: str
) -> None:
    texts = sorted(MISSING_TEXTS - {""})
    rows = [sep.join(["x", f'"{t}"', "y"]) for t in texts] + [sep.join(["x", "", "y"])]
    path = tmp_path / "t.txt"
    path.write_text(sep.join(["a", "answer", "b"]) + "\n" + "\n".join(rows) + "\n")
    got = read_csv(path, sep=sep)["answer"]
    assert got.iloc[:-1].tolist() == texts
    assert got.iloc[:-1].notna().all() and pd.isna(got.iloc[-1])


def test_numbers_still_read_as_numbers_and_an_empty_number_is_missing(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("rating,text\n3,None\n,NA\n4.5,\n")
    got = read_csv(path, as_str=False)
    assert got["rating"].dtype.kind == "f"
    assert got["rating"].tolist()[0] == 3.0 and math.isnan(got["rating"].tolist()[1])
    assert got["text"].tolist()[:2] == ["None", "NA"] and pd.isna(got["text"].iloc[2])


class _Waits(list[str]):
    """A file's lines whose reading waits: after the first line, ``then()`` is called."""

    def __init__(self, lines: list[str], then: Callable[[], object]) -> None:
        super().__init__(lines)
        self.then = then

    def __iter__(self) -> Iterator[str]:
        for k, line in enumerate(list.__iter__(self)):
            if k == 1:
                self.then()
            yield line


def test_files_read_in_two_threads_keep_csvs_field_limit_wide_until_the_last_ends(
    tmp_path: Path,
) -> None:
    # csv's field limit is the process's: each scan set it and put back what it found,
    # so the first to end put back the default 128 KiB under the second (its 200 KB
    # field: "cannot parse the file") and the second left its own limit for good
    import csv

    from recuse.data.delimited import CsvScan

    wait = 30.0  # seconds: a bound on each wait, never reached when the code is right
    default = csv.field_size_limit()
    a_in, b_in, a_done = threading.Event(), threading.Event(), threading.Event()
    long = "x" * 200_000
    first = _Waits(["a,b", "1,2", "3,4"], lambda: (a_in.set(), b_in.wait(wait)))
    second = _Waits(["a,b", "1,2", f"{long},5"], lambda: (b_in.set(), a_done.wait(wait)))
    got: dict[str, object] = {}

    def scan(name: str, lines: list[str], done: threading.Event | None) -> None:
        try:
            got[name] = CsvScan(lines, ",", tmp_path / f"{name}.csv").run()
        except Exception as exc:  # said below
            got[name] = exc
        finally:
            if done is not None:
                done.set()

    threads = [
        threading.Thread(target=scan, args=("first", first, a_done)),
        threading.Thread(target=scan, args=("second", second, None)),
    ]
    threads[0].start()
    assert a_in.wait(wait)  # the first scan reads: the second begins
    threads[1].start()
    for t in threads:
        t.join(4 * wait)
    assert got == {"first": 2, "second": 2}
    assert csv.field_size_limit() == default


def _as_pandas_reads_text(path: Path, sep: str = ",") -> pd.DataFrame:
    """The frame ``read_csv`` gave before it read text columns its faster way."""
    return pd.read_csv(
        path, sep=sep, dtype=str, index_col=False, keep_default_na=False, na_values=[""]
    )


def _same_frame(got: pd.DataFrame, want: pd.DataFrame) -> None:
    assert list(got.columns) == list(want.columns)
    assert list(got.dtypes) == list(want.dtypes)
    assert got.equals(want)
    for k in range(want.shape[1]):  # cell by cell: types and texts, NaN where missing
        g, w = got.iloc[:, k].tolist(), want.iloc[:, k].tolist()
        assert [repr(v) for v in g] == [repr(v) for v in w], want.columns[k]


def test_columns_of_numbers_true_false_and_empties_are_read_as_the_texts_written(
    tmp_path: Path,
) -> None:
    # pandas would read these as numbers, true/false or all-missing; every cell must be
    # the text written: ids keep their zeros, '1e5' is not 100000.0, 'True' not True
    path = tmp_path / "t.csv"
    rows = [f"{k:03d},{k}.50,1e5,{'True' if k % 2 else 'false'},,text {k}" for k in range(300)]
    rows.append('" 007 ",-0,inf,TRUE,,"a ""b"", c\nd"')
    path.write_text("id,p,big,flag,none,\n" + "\n".join(rows) + "\n")
    got = read_csv(path)
    _same_frame(got, _as_pandas_reads_text(path))
    assert got["id"].iloc[0] == "000" and got["big"].iloc[0] == "1e5"
    assert got["flag"].iloc[1] == "True" and got["none"].isna().all()
    assert got.iloc[-1, -1] == 'a "b", c\nd'


def test_a_column_read_as_text_at_first_and_as_numbers_further_down_stays_text(
    tmp_path: Path,
) -> None:
    # pandas reads a long file in blocks (262,144 rows), each block's numbers as numbers:
    # a column whose first rows are words and whose later rows are numbers comes out of
    # pandas' own reading mixed (object: '7' and 7.0); it must be read as text throughout
    path = tmp_path / "t.csv"
    n = 300_000
    head = "id,answer,score\n" + "".join(f"r{k},word {k},x\n" for k in range(200))
    path.write_text(head + "".join(f"{k:06d},{k},{k}.0\n" for k in range(200, n)))
    got = read_csv(path)
    _same_frame(got, _as_pandas_reads_text(path))
    assert got["answer"].iloc[-1] == f"{n - 1}" and got["score"].iloc[-1] == f"{n - 1}.0"
    assert got["id"].iloc[-1] == f"{n - 1:06d}"


@pytest.mark.parametrize("words", [0, 200])
def test_an_empty_cell_among_ids_past_the_64_bit_signed_range_is_missing(
    tmp_path: Path, words: int
) -> None:
    # ids such as 64-bit hashes (2**63 and over) with cells left empty: pandas gives up
    # on unsigned integers with a missing cell and hands the column back as text, its
    # empty cells '' (not missing); read as text, an empty cell is NaN. With words, the
    # column is words for its first rows and the hashes fill the rest, so that only a
    # later block of pandas' reading (262,144 rows a block here) is hashes and empties
    path = tmp_path / "t.csv"
    n = 300_000 if words else 4
    ids = ["" if k % 1000 == 1 else f"{2**63 + k}" for k in range(n)]
    head = "".join(f"w{k},a\n" for k in range(words))
    path.write_text("id,answer\n" + head + "".join(f"{i},a\n" for i in ids))
    got = read_csv(path)
    _same_frame(got, _as_pandas_reads_text(path))
    empty = [k for k, i in enumerate(ids) if not i]
    assert got["id"].isna().sum() == len(empty) == (n + 998) // 1000
    assert got["id"].iloc[words:].isna().tolist() == [not i for i in ids]
    assert got["id"].iloc[-1] == ids[-1] and got["id"].iloc[words] == f"{2**63}"


@pytest.mark.parametrize("ending", ["\r", "\r\n", "\n"], ids=["cr", "crlf", "lf"])
def test_a_line_break_inside_a_quoted_cell_is_read_whatever_the_line_ending(
    tmp_path: Path, ending: str
) -> None:
    """Excel for Mac's "CSV (Macintosh)" ends lines in CR alone, and a cell with a line
    break in it (Alt-Enter) holds an LF, quoted: the scan split such a file at that LF
    (any LF made the file an LF file) and refused it, "a carriage return (CR, \\r) inside
    an unquoted field", where pandas reads it. A CR quoted in a cell of an LF or CRLF
    file is text too. Each cell as written, in every line ending."""
    cells = ["first part\nsecond part", "one\rtwo", "plain"]
    lines = ["id,note", *(f'{k},"{c}"' for k, c in enumerate(cells)), "3,end"]
    path = tmp_path / "t.csv"
    path.write_bytes((ending.join(lines) + ending).encode())
    got = read_csv(path)
    assert got["note"].tolist() == [*cells, "end"]
    assert got["id"].astype(int).tolist() == [0, 1, 2, 3]


def test_plain_files_are_checked_over_bytes_as_line_by_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The scan's fast check of a file without quotes (each line a record with the
    header's separators) counts lines and separators over the bytes in numpy; seeded
    files (CRLF, CR and LF endings, a BOM, blank and space-only lines at the end or
    within, U+3000 lines, a blank header, rows one separator short or long, names given
    twice, lines over the row limit in bytes but not in characters) get the answer, or
    the error, the line-by-line check gives."""
    import numpy as np

    from recuse.data import delimited as d
    from recuse.errors import InputError

    monkeypatch.setenv("RECUSE_MAX_ROW_BYTES", "40")
    monkeypatch.setattr(d, "_TRAILING_BLANKS", 3)
    rng = np.random.default_rng(11)
    cells = ["1", "é", "abc", "", " ", "x\u3000", "0.25", "ééééééééééééé"]
    ends = ["", " ", "\u3000", "\t"]
    outcomes = set()

    def outcome(check: Callable[..., bool], *args: object) -> str:
        try:
            return str(check(*args))
        except InputError as exc:
            return f"error {exc}"

    for _ in range(400):
        sep, newline = [",", ";", "\t"][rng.integers(3)], ["\n", "\r\n", "\r"][rng.integers(3)]
        names = ["a", "b", "c", "a"][: rng.integers(1, 5)]
        lines = [sep.join(names) if rng.random() > 0.05 else " "]
        for _ in range(rng.integers(0, 6)):
            width = len(names) + (rng.integers(-1, 2) if rng.random() < 0.1 else 0)
            lines.append(sep.join(cells[rng.integers(len(cells))] for _ in range(max(width, 1))))
        lines += [ends[rng.integers(len(ends))] for _ in range(rng.integers(0, 6))]
        body = newline.join(lines) + (newline if rng.random() < 0.5 else "")
        raw = (d.BOM if rng.random() < 0.3 else b"") + body.encode("utf-8")
        start = len(d.BOM) if raw.startswith(d.BOM) else 0
        text = raw[start:].decode("utf-8")
        ending = d.line_ending(text)
        path = Path("t.csv")
        fast = outcome(d._plainly_fine_bytes, raw, start, text, sep, ending, path)
        lines = d._csv_lines(text, join_blank=False, newline=ending)
        slow = outcome(d._plainly_fine, lines, sep, path)
        assert fast == slow, repr(body)
        outcomes.add(slow.split(":")[0])
    assert {"True", "False"} <= outcomes and any(o.startswith("error") for o in outcomes)
