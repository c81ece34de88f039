"""Errors about a row of a file name the line an editor goes to and the data row."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from recuse.cli import main
from recuse.data.plain_tables import read_table
from recuse.data.record_lines import record_line
from recuse.errors import InputError

HEADER = "item_id,prompt_id,model_a,model_b,human,judge,p_a_first,p_a_second,prompt\n"


def _row(k: int, verdict: str = "0.7", prompt: str = "plain") -> str:
    return f"{k},q{k},gpt-4,claude-v1,a,gpt-4,{verdict},0.4,{prompt}\n"


def _record(k: int) -> dict[str, str]:
    """Row ``k`` of :func:`_row` as a JSON object."""
    return dict(zip(HEADER.strip().split(","), _row(k).strip().split(","), strict=True))


def _refused(path: Path) -> InputError:
    with pytest.raises(InputError) as caught:
        read_table(path, table="pairs")
    return caught.value


def test_a_csv_row_is_its_line_after_the_header_and_blank_lines(tmp_path: Path) -> None:
    """'row 3' was the data row: an editor's line 3 is the second row, the bad one is
    on line 5 (the header, then a blank line before it)."""
    path = tmp_path / "pairs.csv"
    path.write_text(HEADER + _row(1) + _row(2) + "\n" + _row(3, "banana"), encoding="utf-8")
    err = _refused(path)
    assert (err.line, err.row, err.column) == (5, 3, "p_a_first")
    assert str(err).startswith(f"{path}, line 5 (data row 3), column 'p_a_first': ")
    assert path.read_text().splitlines()[4].startswith("3,q3,")  # line 5, counted by hand


def test_a_quoted_field_over_several_lines_moves_the_next_rows_down(tmp_path: Path) -> None:
    prompt = '"first line\nsecond line\nthird line"'
    path = tmp_path / "pairs.csv"
    path.write_text(HEADER + _row(1, prompt=prompt) + _row(2, "banana"), encoding="utf-8")
    err = _refused(path)
    assert (err.line, err.row) == (5, 2)  # header 1, row 1 on lines 2-4
    assert f"{path}, line 5 (data row 2), column 'p_a_first'" in str(err)


def test_a_jsonl_row_skips_blank_lines(tmp_path: Path) -> None:
    rows = [_record(k) for k in (1, 2)]
    rows[1]["p_a_first"] = "banana"
    path = tmp_path / "pairs.jsonl"
    path.write_text(json.dumps(rows[0]) + "\n\n" + json.dumps(rows[1]) + "\n", encoding="utf-8")
    err = _refused(path)
    assert (err.line, err.row) == (3, 2)
    broken = tmp_path / "broken.jsonl"  # the reader's own error: the same words
    broken.write_text(json.dumps(rows[0]) + "\n\n\n" + '{"item_id": "2",\n', encoding="utf-8")
    err = _refused(broken)
    assert (err.line, err.row) == (4, 2)
    assert "line 4 (data row 2): the line is not valid JSON" in str(err)


def test_a_json_array_element_is_the_line_it_starts_on(tmp_path: Path) -> None:
    rows = [_record(k) for k in (1, 2)]
    rows[1]["p_a_first"] = "banana"
    path = tmp_path / "pairs.json"
    path.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    err = _refused(path)
    # '[', then element 1 as '{', 9 keys, '},' (11 lines), so element 2 opens line 13
    assert (err.line, err.row) == (13, 2)
    assert path.read_text().splitlines()[12] == " {"


def test_the_cli_says_line_and_data_row(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "pairs.csv"
    path.write_text(HEADER + _row(1, prompt='"a\nb"') + _row(2, "1.7"), encoding="utf-8")
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert f"{path}, line 4 (data row 2), column 'p_a_first': 1.7 is not a probability" in err


def test_record_line_reads_tsv_gzip_and_crlf_and_knows_when_it_cannot(tmp_path: Path) -> None:
    tsv = tmp_path / "t.tsv.gz"
    tsv.write_bytes(gzip.compress(b'a\tb\r\n\r\n1\t"x\r\ny"\r\n2\t3\r\n'))
    assert [record_line(tsv, k) for k in (1, 2, 3)] == [3, 5, None]
    other = tmp_path / "t.parquet"
    other.write_bytes(b"PAR1")
    assert record_line(other, 1) is None  # no lines
    assert record_line(tmp_path / "gone.csv", 1) is None
    assert record_line(tmp_path / "t.tsv.gz", 0) is None


def test_a_frame_given_in_python_has_data_rows_only() -> None:
    import pandas as pd

    from recuse.tables import validate_pairs

    frame = pd.DataFrame([{**_record(1), "p_a_first": 1.7}])
    with pytest.raises(InputError, match=r"^data row 1, column 'p_a_first'") as caught:
        validate_pairs(frame)
    assert caught.value.line is None
