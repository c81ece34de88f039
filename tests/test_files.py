"""recuse.files, the one way to read: the JSON / JSONL helpers (clear InputErrors that
name the file and line) and the one file hasher."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recuse.errors import ConfigError, InputError
from recuse.files import (
    MAX_INPUT_ENV,
    MAX_ROW_ENV,
    check_text,
    content_sha256,
    content_size,
    file_sha256,
    max_input_bytes,
    max_row_bytes,
    read_bytes,
    read_json,
    read_jsonl,
    read_text,
    require_keys,
    word_count,
)


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
    assert (err.value.row, err.value.line) == (2, 3)  # the blank line is no data row
    assert err.value.file == str(f)
    assert "line 3 (data row 2): the line is not valid JSON" in str(err.value)
    assert str(f) in str(err.value)


def test_read_jsonl_line_that_is_not_an_object(tmp_path: Path) -> None:
    f = _lines(tmp_path / "l.jsonl", '{"x": 1}', "[1, 2]")
    with pytest.raises(InputError, match=r"line 2 \(data row 2\): the line is a JSON array") as err:
        read_jsonl(f)
    assert err.value.row == 2


def test_read_jsonl_missing_key_counts_blank_lines(tmp_path: Path) -> None:
    f = _lines(tmp_path / "k.jsonl", '{"x": 1, "y": 1}', "", "", '{"x": 2}')
    with pytest.raises(
        InputError, match=r"line 4 \(data row 2\), column 'y': the line lacks"
    ) as err:
        read_jsonl(f, keys=("x", "y"))
    assert (err.value.line, err.value.row, err.value.column) == (4, 2, "y")


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
    with pytest.raises(InputError, match="a folder, not a file"):
        read_text(tmp_path)  # a folder is not a file, and it is there


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_pipe_is_said_to_be_one_not_a_missing_file(tmp_path: Path) -> None:
    """``recuse gate PIPE`` said 'cannot read the report: file not found', and ``certify
    apply PIPE`` 'thresholds file not found', of a path the user can see; nothing is
    opened (a pipe without a writer would wait for ever)."""
    pipe = tmp_path / "report.json"
    os.mkfifo(pipe)
    with pytest.raises(InputError) as err:
        read_text(pipe)
    assert err.value.reason == "not a regular file (a pipe, socket or device)"
    assert err.value.fix == "write the data to a file and give its path"


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


@pytest.mark.parametrize(
    ("name", "packed", "kind"),
    [
        ("g.jsonl", gzip.compress(b'{"a": 1}\n'), "gzip"),
        ("g.csv", gzip.compress(b"a,b\n1,2\n"), "gzip"),
        ("z.json", b"PK\x03\x04" + b"\0" * 30, "zip"),
        ("x.jsonl", b"\xfd7zXZ\x00" + b"\0" * 30, "xz"),
        ("b.csv", b"BZh91AY&SY" + b"\0" * 30, "bzip2"),
        ("s.jsonl", b"\x28\xb5\x2f\xfd" + b"\0" * 30, "zstd"),
    ],
    ids=["gzip-jsonl", "gzip-csv", "zip", "xz", "bzip2", "zstd"],
)
def test_compressed_file_without_its_suffix_is_named_as_compressed(
    tmp_path: Path, name: str, packed: bytes, kind: str
) -> None:
    # a gzip'd file named .jsonl used to read as 'not UTF-8 text (byte 0x8b)' with the
    # fix 'save the file as UTF-8': the bytes are compressed, not mis-encoded
    path = tmp_path / name
    path.write_bytes(packed)
    reader = read_jsonl if name.endswith(".jsonl") else read_text
    with pytest.raises(InputError) as caught:
        reader(path)
    message = str(caught.value)
    assert name in message
    assert f"{kind}-compressed" in message
    assert "UTF-8" not in message
    if kind == "gzip":
        assert f"rename it to {name}.gz" in message
    else:
        assert "decompress it" in message


@pytest.mark.parametrize(("codec", "kind"), [("utf-16", "UTF-16"), ("utf-32", "UTF-32")])
@pytest.mark.parametrize("name", ["t.csv", "t.jsonl", "t.json"])
def test_utf16_and_utf32_text_is_named_by_its_byte_order_mark(
    tmp_path: Path, codec: str, kind: str, name: str
) -> None:
    # a spreadsheet's 'Unicode text' export read as 'not UTF-8 text (byte 0xff)'
    path = tmp_path / name
    path.write_bytes('{"a": 1}\n'.encode(codec))  # Python writes the mark first
    reader = read_jsonl if name.endswith(".jsonl") else read_text
    with pytest.raises(InputError) as caught:
        reader(path)
    assert str(caught.value) == (
        f"{path}: the file is {kind} text (it starts with a {kind} byte-order mark), not "
        f"UTF-8 — save it as UTF-8 (in a spreadsheet: CSV UTF-8), or convert it, e.g. "
        f"iconv -f {kind} -t UTF-8"
    )


@pytest.mark.parametrize("codec", ["UTF-16LE", "UTF-16BE"])
@pytest.mark.parametrize("name", ["t.csv", "t.jsonl", "t.json"])
def test_utf16_text_without_a_byte_order_mark_is_named(
    tmp_path: Path, codec: str, name: str
) -> None:
    """UTF-16 without a mark read as UTF-8: the NUL between letters split nothing,
    and a CSV's error was its last line's 'fewer fields than the header (1, not 14)'."""
    path = tmp_path / name
    path.write_bytes('{"a": 1}\n'.encode(codec))  # no mark: the codec names the order
    reader = read_jsonl if name.endswith(".jsonl") else read_text
    with pytest.raises(InputError) as caught:
        reader(path)
    assert str(caught.value) == (
        f"{path}: the file is {codec} text (every other byte of its first characters is "
        f"NUL; it has no byte-order mark), not UTF-8 — save it as UTF-8 (in a spreadsheet: "
        f"CSV UTF-8), or convert it, e.g. iconv -f {codec} -t UTF-8"
    )


@pytest.mark.parametrize("text", ["\ufeffa,b\n1,2\n", "a,b\n1,2\n"], ids=["mark", "no mark"])
def test_utf16_text_in_a_gz_file_is_named(tmp_path: Path, text: str) -> None:
    """A ``.gz`` file's decompressed bytes are read as its text: UTF-16 in it is named
    as in a plain file, where it was read as UTF-8: 'byte 0xff in the header' with a
    mark, the last line's 'fewer fields than the header' without (fails before)."""
    path = tmp_path / "t.csv.gz"
    path.write_bytes(gzip.compress(text.encode("utf-16-le")))
    with pytest.raises(InputError) as caught:
        read_text(path)
    said = (
        "a UTF-16 byte-order mark), not UTF-8"
        if text.startswith("\ufeff")
        else "it has no byte-order mark), not UTF-8"
    )
    assert said in str(caught.value)
    assert str(caught.value).startswith(f"{path}: the file is UTF-16")


@pytest.mark.parametrize("head", [b"\x01\x00\x02\x00", b"\x00\x07\x00\x1b", b"\x85\x00\x80\x00"])
def test_binary_bytes_with_nuls_are_not_named_utf16(tmp_path: Path, head: bytes) -> None:
    """Little-endian integers (``01 00 02 00``) or C0/C1 control characters between
    NULs are no text: not named UTF-16LE/BE text with an iconv fix (fails before)."""
    path = tmp_path / "t.csv"
    path.write_bytes(head + b"junk\n")
    try:
        said = read_text(path)  # its bytes as they are, for the reader to refuse
    except InputError as exc:  # C1 bytes are no UTF-8: said so
        said = str(exc)
        assert said.startswith(f"{path}: not UTF-8 text (byte 0x85 on line 1)")
    else:
        assert said == (head + b"junk\n").decode("ascii")
    assert "UTF-16" not in said


def test_utf16_text_of_latin1_letters_and_tabs_is_named(tmp_path: Path) -> None:
    """UTF-16LE text beginning with a Latin-1 letter and a tab (U+00E9, U+0009) is
    still named."""
    path = tmp_path / "t.tsv"
    path.write_bytes("\u00e9\tx\n".encode("utf-16-le"))
    with pytest.raises(InputError, match="the file is UTF-16LE text"):
        read_text(path)


def test_text_that_starts_like_a_compressed_file_is_still_text(tmp_path: Path) -> None:
    # 'PK' or 'BZh' at the start of a CSV header is a column name, not a magic number
    path = tmp_path / "t.csv"
    path.write_text("PK,BZh\n1,2\n", encoding="utf-8")
    assert read_text(path) == "PK,BZh\n1,2\n"


def test_a_key_named_twice_is_refused_with_both_values(tmp_path: Path) -> None:
    # json.loads keeps the last of two values of one key without a word: a label 'A'
    # then 'B' read as B; a CSV header naming a column twice was already refused
    lines = _lines(tmp_path / "t.jsonl", '{"a": 1}', "", '{"a": 2, "b": "x", "a": 3}')
    with pytest.raises(InputError) as caught:
        read_jsonl(lines)
    assert str(caught.value).startswith(f"{lines}, line 3 (data row 2), column 'a': ")
    assert "names this key twice (2 and 3)" in str(caught.value)
    nested = _lines(tmp_path / "n.jsonl", '{"a": {"k": "A", "k": "B"}}')
    with pytest.raises(InputError, match=r"line 1 \(data row 1\), column 'k': .*\('A' and 'B'\)"):
        read_jsonl(nested)
    array = tmp_path / "t.json"
    array.write_text('[{"h": "A"},\n {"h": "A", "h": "B"}]', encoding="utf-8")
    with pytest.raises(InputError, match=r"t\.json, data row 2, column 'h': .*\('A' and 'B'\)"):
        read_json(array)
    document = tmp_path / "d.json"
    document.write_text('{"eval": {"x": 1, "x": 1}}', encoding="utf-8")
    with pytest.raises(InputError, match=r"d\.json, column 'x': "):
        read_json(document)
    # one key per object, the same key in two objects: read as before
    assert read_json(_lines(tmp_path / "ok.json", '[{"h": 1}, {"h": 2, "g": {"h": 3}}]')) == [
        {"h": 1},
        {"h": 2, "g": {"h": 3}},
    ]


def test_require_keys(tmp_path: Path) -> None:
    f = tmp_path / "arr.json"
    f.write_text(json.dumps([{"a": 1, "b": 2}, {"a": 1}]), encoding="utf-8")
    data = read_json(f)
    with pytest.raises(InputError, match="data row 2, column 'b': the element lacks key") as err:
        require_keys(data, ("a", "b"), file=f)
    assert (err.value.row, err.value.column) == (2, "b")
    with pytest.raises(InputError, match="expected a JSON array"):
        require_keys({"a": 1}, ("a",), file=f)
    with pytest.raises(InputError, match="element 1 is a JSON number"):
        require_keys([3], ("a",), file=f)
    assert require_keys(data[:1], ("a", "b"), file=f) == [{"a": 1, "b": 2}]


def test_check_text_names_first_non_string() -> None:
    frame = pd.DataFrame({"t": ["a", "b", 3, None]}, dtype=object)
    with pytest.raises(InputError, match="t must be text, found 3") as err:
        check_text(frame, ["t"], file="f.json")
    assert err.value.row == 3
    # a JSON null (None, or NaN once pandas reads it) is named as missing, not as "nan"
    for missing in (None, float("nan")):
        frame = pd.DataFrame({"t": ["a", missing]}, dtype=object)
        with pytest.raises(InputError, match=r"found nothing \(an empty cell or a JSON null\)"):
            check_text(frame, ["t"], file="f.json")


def test_word_count_by_hand() -> None:
    texts = pd.Series(["two words", "  lead\tand\ntrail  ", "", "non\u00a0breaking", None])
    got = word_count(texts)
    assert got.iloc[:4].tolist() == [2.0, 3.0, 0.0, 2.0]
    assert pd.isna(got.iloc[4])


# --- issue #12: hostile files -------------------------------------------------------


def test_jsonl_line_separators_inside_strings_are_text(tmp_path: Path) -> None:
    # json.dumps(ensure_ascii=False) writes U+2028, U+2029 and U+0085 raw; str.splitlines()
    # would cut the line there. CR LF line ends are read too.
    records = [{"t": "a\u2028b\u2029c\x85d\x0be\x0cf\x1cg"}, {"t": "plain"}]
    f = tmp_path / "sep.jsonl"
    f.write_bytes(
        "\r\n".join(json.dumps(r, ensure_ascii=False) for r in records).encode() + b"\r\n"
    )
    assert read_jsonl(f) == records


def test_deep_json_is_a_clear_error(tmp_path: Path) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    f = tmp_path / "deep.json"
    f.write_text(deep, encoding="utf-8")
    with pytest.raises(InputError, match="nested too deeply") as err:
        read_json(f)
    assert err.value.file == str(f)
    g = tmp_path / "deep.jsonl"
    g.write_text('{"a": 1}\n{"a": ' + deep + "}\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"line 2 \(data row 2\): JSON nested too deeply") as err:
        read_jsonl(g)
    assert err.value.row == 2


def test_integer_beyond_python_conversion_limit_is_a_clear_error(tmp_path: Path) -> None:
    digits = "7" * 5000
    f = tmp_path / "big.json"
    f.write_text(f'[{{"a": {digits}}}]', encoding="utf-8")
    with pytest.raises(InputError, match="integer has more than 4,300 digits"):
        read_json(f)
    g = tmp_path / "big.jsonl"
    g.write_text(f'{{"a": 1}}\n\n{{"a": {digits}}}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"line 3 \(data row 2\): a JSON integer") as err:
        read_jsonl(g)
    assert (err.value.line, err.value.row) == (3, 2)
    assert len(str(err.value)) < 300


def test_not_utf8_in_json_names_the_line_not_a_row(tmp_path: Path) -> None:
    # a line of a JSON document is not a record (errors.InputError: row = element)
    f = tmp_path / "latin1.json"
    f.write_bytes(b'[\n {"x": "ok"},\n {"x": "caf\xe9"}\n]')
    with pytest.raises(InputError, match=r"byte 0xe9 on line 3") as err:
        read_json(f)
    assert err.value.row is None


def test_lone_surrogate_escape_is_a_clear_error(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    f.write_text('{"x": "\\ud83d\\ude00 fine"}\n{"x": "ok", "y": "bad \\udc00"}\n', "utf-8")
    with pytest.raises(InputError, match="lone UTF-16 surrogate") as err:
        read_jsonl(f)
    assert (err.value.row, err.value.column) == (2, "y")
    g = tmp_path / "s.json"
    g.write_text('[{"x": "\\uD83D\\uDE00"}, {"x": ["\\uD800"]}]', "utf-8")
    with pytest.raises(InputError, match="lone UTF-16 surrogate") as err:
        read_json(g)
    assert (err.value.row, err.value.column) == (2, "x")
    g.write_text('[{"x": "\\uD83D\\uDE00", "y": "\\\\ud800 is text"}]', "utf-8")
    assert read_json(g) == [{"x": "\U0001f600", "y": "\\ud800 is text"}]


def test_gzip_bomb_stops_at_the_input_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bomb = tmp_path / "bomb.jsonl.gz"
    bomb.write_bytes(gzip.compress(b" " * 50_000_000, 1))  # 50 MB of blanks, ~70 KB
    monkeypatch.setenv(MAX_INPUT_ENV, "1_000_000")
    tracemalloc.start()
    try:
        with pytest.raises(InputError, match="decompresses to more than 1,000,000 bytes") as err:
            read_jsonl(bomb)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10_000_000  # stopped at the limit, not after inflating 50 MB
    assert MAX_INPUT_ENV in str(err.value)
    plain = tmp_path / "plain.json"
    plain.write_bytes(b"[" + b" " * 1_000_000 + b"]")
    with pytest.raises(InputError, match="the file holds more than 1,000,000 bytes"):
        read_json(plain)
    monkeypatch.setenv(MAX_INPUT_ENV, "2000000")
    assert read_json(plain) == []


def test_limits_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert max_input_bytes() == 512 * 1024 * 1024 and max_row_bytes() == 4 * 1024 * 1024
    monkeypatch.setenv(MAX_ROW_ENV, "lots")
    with pytest.raises(ConfigError, match="RECUSE_MAX_ROW_BYTES must be a positive whole"):
        max_row_bytes()
    monkeypatch.setenv(MAX_ROW_ENV, "20")
    f = _lines(tmp_path / "r.jsonl", '{"a": 1}', '{"a": "a longer line"}')
    with pytest.raises(
        InputError, match=r"line 2 \(data row 2\): the row is longer than 20 b"
    ) as err:
        read_jsonl(f)
    assert MAX_ROW_ENV in str(err.value)


def test_one_file_hasher_for_every_caller(tmp_path: Path) -> None:
    from recuse.data import fetch
    from recuse.data.recorded import file_revision
    from recuse.judging.fingerprint import cached_sha256

    data = np.random.default_rng(7).bytes(2_500_000)
    path = tmp_path / "w.bin.gz"  # the bytes as stored: a .gz file is not decompressed
    path.write_bytes(data)
    want = hashlib.sha256(data).hexdigest()
    chunks: list[int] = []
    assert file_sha256(path, on_read=chunks.append) == want
    assert sum(chunks) == len(data) and len(chunks) == 3 and max(chunks) == 1 << 20
    assert file_sha256(str(path)) == want
    # its callers: the weight fingerprint's cache, recorded replies' revision, fetch
    assert cached_sha256(path, cache=tmp_path / "c.json") == want
    assert file_revision(path) == want[:16]
    file = fetch.SourceFile(folder="f", path=path.name, url="u", size=len(data), sha256=want)
    assert fetch.is_present(file, tmp_path.parent / "x") is False  # not there
    target = file.target(tmp_path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    assert fetch.is_present(file, tmp_path)
    target.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))  # same size, one bit changed
    assert not fetch.is_present(file, tmp_path)
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    assert file_sha256(empty) == hashlib.sha256(b"").hexdigest()


def test_content_size_and_sha256_read_a_gz_file_decompressed(tmp_path: Path) -> None:
    """A file and its gzip copy: one size (the trailer's, no decompressing) and one
    digest (hashlib's of the plain bytes); a broken gzip stream is an OSError."""
    data = np.random.default_rng(3).bytes(1_500_000)
    plain, packed = tmp_path / "a.csv", tmp_path / "a.csv.gz"
    plain.write_bytes(data)
    packed.write_bytes(gzip.compress(data))
    assert content_size(plain) == content_size(packed) == 1_500_000
    assert packed.stat().st_size != 1_500_000
    assert content_sha256(plain) == content_sha256(packed) == hashlib.sha256(data).hexdigest()
    assert file_sha256(packed) != content_sha256(packed)  # the bytes as stored
    cut = tmp_path / "cut.csv.gz"
    cut.write_bytes(packed.read_bytes()[:-100])
    with pytest.raises(OSError):
        content_sha256(cut)
    tiny = tmp_path / "tiny.gz"
    tiny.write_bytes(b"\x1f\x8b")
    assert content_size(tiny) == -1  # no gzip trailer


def test_json_of_the_wrong_shape_is_named_in_json_words(tmp_path: Path) -> None:
    """A file holding null or one object where an array of objects is expected said
    'found a JSON NoneType' / 'a JSON dict' (Python's names) and gave no fix."""
    for text, kind in (("null", "null"), ('{"a": 1}', "object"), ('"x"', "string")):
        path = tmp_path / "records.json"
        path.write_text(text, "utf-8")
        with pytest.raises(InputError) as err:
            require_keys(read_json(path), ["a"], file=path)
        assert f"expected a JSON array of objects, found a JSON {kind}" in str(err.value)
        assert "write the records as one array" in str(err.value)
    with pytest.raises(InputError, match=r"element 2 is a JSON null, not an object — each"):
        require_keys([{"a": 1}, None], ["a"], file=tmp_path / "records.json")


def test_is_file_names_a_path_it_cannot_look_at(tmp_path: Path) -> None:
    from recuse.files import is_file

    (tmp_path / "f.csv").write_text("x\n", encoding="utf-8")
    assert is_file(tmp_path / "f.csv") and not is_file(tmp_path / "f.csv", folder=True)
    assert is_file(tmp_path, folder=True) and not is_file(tmp_path)
    assert not is_file(tmp_path / "none.csv") and not is_file(tmp_path / "f.csv" / "x")
    deep = tmp_path.joinpath(*["d" * 200] * 25, "x.csv")  # past PATH_MAX (4,096 bytes)
    with pytest.raises(InputError, match="path is longer than the system allows") as err:
        is_file(deep)
    assert err.value.file == str(deep) and "shorter path" in (err.value.fix or "")


@pytest.mark.parametrize(
    "args",
    [
        ["judge", "-d", "p.csv", "-o", "s.db", "--base-url", "http://127.0.0.1:9/v1",
         "--template", "{deep}/t.toml"],
        ["judge", "card", "s.db", "--prices", "{deep}/p.toml"],
        ["judge", "replay", "{deep}/r.json", "-o", "s.db"],
        ["judge", "-d", "p.csv", "-o", "s.db", "-m", "{deep}/m", "--ray", "local"],
        ["audit", "p.csv", "--store", "{deep}/s.db", "--out", "o"],
        ["data", "summary", "--data-dir", "{deep}"],
        ["audit", "mt-bench-human", "--data-dir", "{deep}", "--out", "o"],
    ],
)  # fmt: skip
def test_each_file_option_names_a_path_too_long(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """--template, --prices, a recording, --store, --data-dir: each was an OSError
    traceback."""
    from recuse.cli import main

    monkeypatch.chdir(tmp_path)
    Path("p.csv").write_text("item_id,prompt,response_a,response_b\ni,q,a,b\n", "utf-8")
    Path("s.db").touch()
    deep = str(tmp_path.joinpath(*["d" * 200] * 25))
    assert main([a.replace("{deep}", deep) for a in args]) == 2
    err = capsys.readouterr().err
    assert "longer than the system allows" in err and "Traceback" not in err


def test_read_toml_names_the_file_and_a_nesting_too_deep(tmp_path: Path) -> None:
    """A TOML file nested 100,000 deep was a RecursionError traceback from every command
    (recuse.toml is read by all of them); a bad line names the file and says the fix."""
    from recuse.files import read_toml

    f = tmp_path / "x.toml"
    f.write_bytes(b"\xef\xbb\xbf[audit]\nlevel = 0.9\n")
    assert read_toml(f) == {"audit": {"level": 0.9}}
    f.write_text("a = " + "[" * 100_000 + "]" * 100_000 + "\n", "utf-8")
    with pytest.raises(ConfigError) as err:
        read_toml(f)
    assert str(err.value) == (
        f"{f}: arrays or tables nested too deeply for Python's TOML reader — nest them less "
        "(recuse's files need two levels at most)"
    )
    f.write_text("[a\n", "utf-8")
    with pytest.raises(ConfigError) as err:
        read_toml(f, fix="see the docs")
    assert str(err.value) == (
        f"{f}: not valid TOML (Expected ']' at the end of a table declaration (at line 1, "
        "column 3)) — see the docs"
    )


@pytest.mark.parametrize(("inner", "undo"), [("gzip", "gunzip"), ("xz", "unxz")])
def test_a_gz_file_compressed_twice_is_said_so(tmp_path: Path, inner: str, undo: str) -> None:
    """`gzip` run twice (or an .xz inside the .gz): the inner file's first byte was
    "not UTF-8 text (byte 0x8b in the header) — save the file as UTF-8"."""
    import gzip
    import lzma

    text = b"item_id,human\n1,a\n"
    packed = gzip.compress(text) if inner == "gzip" else lzma.compress(text)
    path = tmp_path / "pairs.csv.gz"
    path.write_bytes(gzip.compress(packed))
    with pytest.raises(InputError) as err:
        read_bytes(path)
    assert str(err.value) == (
        f"{path}: the file decompresses to {inner}-compressed bytes (compressed twice) — "
        f"decompress it until the text shows (gunzip, then {undo}) and give that file, or "
        "that file gzip-compressed once"
    )
    path.write_bytes(gzip.compress(text))
    assert read_bytes(path) == text


@pytest.mark.parametrize("text", ["１２３", "١٢٣", "+20", "2e6", "1__0", "_10", "0", "-5"])
def test_an_environment_limit_is_ascii_digits_only(
    monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    """int() reads full-width '１２３' and Arabic-Indic "١٢٣" as 123, and '+20' as 20: the
    limit took them; each is refused now, naming the variable and the value given."""
    for env, read in ((MAX_ROW_ENV, max_row_bytes), (MAX_INPUT_ENV, max_input_bytes)):
        monkeypatch.setenv(env, text)
        with pytest.raises(ConfigError) as err:
            read()
        said = str(err.value)
        assert f"{env} must be a positive whole number in ASCII digits" in said
        assert repr(text) in said
        monkeypatch.delenv(env)


def test_an_environment_limit_reads_ascii_digits_and_underscores(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for text, value in (("123", 123), (" 1_000_000 ", 1_000_000), ("0042", 42)):
        monkeypatch.setenv(MAX_ROW_ENV, text)
        assert max_row_bytes() == value


@pytest.mark.parametrize(
    "text", ["9" * 5000, "0" * 5000 + "7", "1" + "_000" * 2000], ids=["9s", "0s-7", "1_000s"]
)
def test_an_environment_limit_of_thousands_of_digits_is_read_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    """int() refuses a string of over 4,300 digits (ValueError): the limit's reader let
    it out as a traceback. A number past sys.maxsize reads as sys.maxsize (no file is
    near it); leading zeros do not count toward the size."""
    import sys

    monkeypatch.setenv(MAX_INPUT_ENV, text)
    expected = 7 if text.startswith("0") else sys.maxsize
    assert max_input_bytes() == expected
