"""The JSON / JSONL helpers: clear InputErrors that name the file and line."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd
import pytest

from recuse.data._io import check_text, read_json, read_jsonl, read_text, require_keys, word_count
from recuse.errors import InputError


def _lines(path: Path, *lines: str) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_read_jsonl_reads_objects_and_skips_blank_lines(tmp_path: Path) -> None:
    f = _lines(tmp_path / "a.jsonl", '{"x": 1}', "", '{"x": 2, "y": "é"}')
    assert read_jsonl(f) == [{"x": 1}, {"x": 2, "y": "é"}]


def test_read_jsonl_truncated_line_names_file_and_line(tmp_path: Path) -> None:
    f = _lines(tmp_path / "t.jsonl", '{"x": 1}', "", '{"x": 2, "y": "tru')
    with pytest.raises(InputError) as err:
        read_jsonl(f)
    assert err.value.row == 3
    assert err.value.file == str(f)
    assert "line 3 is not valid JSON" in str(err.value)
    assert str(f) in str(err.value)


def test_read_jsonl_line_that_is_not_an_object(tmp_path: Path) -> None:
    f = _lines(tmp_path / "l.jsonl", '{"x": 1}', "[1, 2]")
    with pytest.raises(InputError, match="line 2 is a JSON list, not an object") as err:
        read_jsonl(f)
    assert err.value.row == 2


def test_read_jsonl_missing_key_counts_blank_lines(tmp_path: Path) -> None:
    f = _lines(tmp_path / "k.jsonl", '{"x": 1, "y": 1}', "", "", '{"x": 2}')
    with pytest.raises(InputError, match="line 4 lacks key") as err:
        read_jsonl(f, keys=("x", "y"))
    assert (err.value.row, err.value.column) == (4, "y")


def test_not_utf8_names_the_line(tmp_path: Path) -> None:
    f = tmp_path / "latin1.jsonl"
    f.write_bytes(b'{"x": "ok"}\n{"x": "caf\xe9"}\n')
    with pytest.raises(InputError, match="not UTF-8") as err:
        read_jsonl(f)
    assert err.value.row == 2
    assert "0xe9" in str(err.value)


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    f = tmp_path / "bom.json"
    f.write_bytes(b'\xef\xbb\xbf{"a": 1}')
    assert read_json(f) == {"a": 1}


def test_missing_file_and_folder(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found") as err:
        read_json(tmp_path / "nope.json")
    assert err.value.file == str(tmp_path / "nope.json")
    with pytest.raises(InputError, match="file not found"):
        read_text(tmp_path)  # a folder is not a file


def test_read_json_syntax_error_gives_line_and_column(tmp_path: Path) -> None:
    f = tmp_path / "bad.json"
    f.write_text('[\n  {"a": 1},\n  {"a": 2\n]\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"not valid JSON at line 4, column 1"):
        read_json(f)


def test_gzip_jsonl_and_broken_gzip(tmp_path: Path) -> None:
    good = tmp_path / "g.jsonl.gz"
    good.write_bytes(gzip.compress(b'{"a": 1}\n{"a": 2}\n'))
    assert read_jsonl(good) == [{"a": 1}, {"a": 2}]
    bad = tmp_path / "b.jsonl.gz"
    bad.write_bytes(gzip.compress(b'{"a": 1}\n' * 50)[:-12])  # truncated stream
    with pytest.raises(InputError, match="not a readable gzip file"):
        read_jsonl(bad)


def test_require_keys(tmp_path: Path) -> None:
    f = tmp_path / "arr.json"
    f.write_text(json.dumps([{"a": 1, "b": 2}, {"a": 1}]), encoding="utf-8")
    data = read_json(f)
    with pytest.raises(InputError, match="element 2 lacks key") as err:
        require_keys(data, ("a", "b"), file=f)
    assert (err.value.row, err.value.column) == (2, "b")
    with pytest.raises(InputError, match="expected a JSON array"):
        require_keys({"a": 1}, ("a",), file=f)
    with pytest.raises(InputError, match="element 1 is a JSON int"):
        require_keys([3], ("a",), file=f)
    assert require_keys(data[:1], ("a", "b"), file=f) == [{"a": 1, "b": 2}]


def test_check_text_names_first_non_string() -> None:
    frame = pd.DataFrame({"t": ["a", "b", 3, None]}, dtype=object)
    with pytest.raises(InputError, match="t must be text, found 3") as err:
        check_text(frame, ["t"], file="f.json")
    assert err.value.row == 3


def test_word_count_by_hand() -> None:
    texts = pd.Series(["two words", "  lead\tand\ntrail  ", "", "non\u00a0breaking", None])
    got = word_count(texts)
    assert got.iloc[:4].tolist() == [2.0, 3.0, 0.0, 2.0]
    assert pd.isna(got.iloc[4])
