"""Bring-your-own files: every format reads the same table; every bad input a clear error."""

from __future__ import annotations

import gzip
import json
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from recuse.data.inputs import load_input
from recuse.data.model_names import canonical_ids
from recuse.data.plain_tables import read_table
from recuse.errors import ConfigError, DatasetNotFoundError, InputError
from recuse.roster import ModelsNotInRoster, Roster
from recuse.tables import Renaming, renaming_by

MALFORMED = Path(__file__).resolve().parents[1] / "malformed"

ROWS = [
    {
        "id": "x1",
        "question": "q1",
        "A": "ChatGPT",
        "B": "gpt4",
        "winner": "a",
        "judge": "GPT-4",
        "first": 1.0,
        "second": 0.0,
    },
    {
        "id": "x2",
        "question": "q1",
        "A": "claude",
        "B": "gpt4",
        "winner": "tie",
        "judge": "GPT-4",
        "first": 0.8,
        "second": None,
    },
    {
        "id": "x3",
        "question": "q2",
        "A": "vicuna-13b",
        "B": "alpaca-13b",
        "winner": "b",
        "judge": "gpt-4",
        "first": 0.0,
        "second": 0.0,
    },
]
MAPPING = {
    "id": "item_id",
    "question": "prompt_id",
    "A": "model_a",
    "B": "model_b",
    "winner": "human",
    "first": "p_a_first",
    "second": "p_a_second",
}


def _write(path: Path, fmt: str) -> Path:
    df = pd.DataFrame(ROWS)
    if fmt == "csv":
        df.to_csv(path, index=False)
    elif fmt == "tsv":
        df.to_csv(path, index=False, sep="\t")
    elif fmt in ("semicolon.csv", "tab.csv"):  # spreadsheets' CSV in many locales
        df.to_csv(path, index=False, sep=";" if fmt.startswith("semi") else "\t")
    elif fmt == "csv.gz":
        with gzip.open(path, "wt", encoding="utf-8") as f:
            df.to_csv(f, index=False)
    elif fmt == "json":
        path.write_text(json.dumps(ROWS), encoding="utf-8")
    elif fmt == "jsonl":
        path.write_text("\n".join(json.dumps(r) for r in ROWS) + "\n", encoding="utf-8")
    elif fmt == "parquet":
        df.to_parquet(path)
    return path


@pytest.mark.parametrize(
    "fmt", ["csv", "tsv", "csv.gz", "semicolon.csv", "tab.csv", "json", "jsonl", "parquet"]
)
def test_every_format_gives_the_same_pairs(tmp_path: Path, fmt: str) -> None:
    path = _write(tmp_path / f"mine.{fmt}", fmt)
    t = read_table(path, table="pairs", mapping=MAPPING)
    assert t["item_id"].tolist() == ["x1", "x2", "x3"]
    assert t["model_a"].tolist() == ["gpt-3.5-turbo", "claude-v1", "vicuna-13b"]
    assert t["model_b"].tolist() == ["gpt-4", "gpt-4", "alpaca-13b"]
    assert t["judge"].tolist() == ["gpt-4"] * 3
    assert t["human"].tolist() == [1.0, 0.5, 0.0]
    # p_a = mean of the judged orders: (1 + 0)/2, 0.8 (one order), 0
    np.testing.assert_allclose(t["p_a"], [0.5, 0.8, 0.0])


def test_a_semicolon_file_with_decimal_commas_is_told_to_use_dots(tmp_path: Path) -> None:
    path = tmp_path / "mine.csv"
    path.write_text("item_id;prompt_id;human;judge;p_a_first\nx1;q1;A;gpt-4;0,7\n")
    with pytest.raises(
        InputError, match=r"line 2 \(data row 1\), column 'p_a_first'.*'0,7'"
    ) as info:
        read_table(path, table="pairs")
    assert "dot as decimal separator" in str(info.value)


def test_ratings_file(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text(
        "prompt_id,model,dimension,judge,rating,reference,length\n"
        "007,gpt-4o-2024-05-13,helpfulness,ChatGPT,4,3.5,120\n"
        "008,gpt4,helpfulness,ChatGPT,,4,80\n",
        encoding="utf-8",
    )
    with pytest.raises(InputError, match="rating is missing") as err:
        read_table(path, table="ratings")
    assert err.value.row == 2
    path.write_text(path.read_text().replace(",,4,80", ",2,4,80"), encoding="utf-8")
    t = read_table(path, table="ratings")
    assert t["prompt_id"].tolist() == ["007", "008"]  # ids stay text
    assert t["model"].tolist() == ["gpt-4o-2024-05-13", "gpt-4"]  # a snapshot; the gpt-4 line
    assert t["judge"].tolist() == ["gpt-3.5-turbo"] * 2
    assert t["rating"].tolist() == [4.0, 2.0]


def test_human_only_and_single_verdict_files(tmp_path: Path) -> None:
    human = tmp_path / "h.csv"
    human.write_text("item_id,prompt_id,human\n1,p,a\n2,p,b\n", encoding="utf-8")
    t = read_table(human, table="pairs")
    assert t["judge"].isna().all() and t["p_a"].isna().all() and t["model_a"].isna().all()
    single = tmp_path / "s.csv"
    single.write_text(
        "item_id,prompt_id,model_a,model_b,human,judge,p_a\n1,p,gpt-4,claude,,gpt-4,0.25\n",
        encoding="utf-8",
    )
    t = read_table(single, table="pairs")
    assert t["p_a"].tolist() == [0.25] and t["p_a_first"].isna().all()


def test_unknown_models_keep_adds_own_family(tmp_path: Path) -> None:
    roster = Roster.builtin()
    path = Path(__file__).parent / "unknown_models" / "pairs_mixed_models_no_roster.csv"
    with pytest.raises(InputError, match="zephyr-7b-beta") as err:
        read_table(path, table="pairs", roster=roster, unknown_models="error")
    assert (err.value.row, err.value.column) == (3, "model_a")
    with pytest.warns(ModelsNotInRoster, match="model 'zephyr-7b-beta' is not in the roster"):
        t = read_table(path, table="pairs", roster=roster)  # keep: the default
    assert t["model_a"].tolist() == ["gpt-4", "gpt-4", "zephyr-7b-beta"]
    assert roster.families(t["model_a"]).tolist() == ["gpt", "gpt", "zephyr-7b-beta"]


def test_mapping_errors(tmp_path: Path) -> None:
    f = MALFORMED / "pairs_needs_mapping.csv"
    good = {
        "item": "item_id",
        "q": "prompt_id",
        "ma": "model_a",
        "mb": "model_b",
        "label": "human",
        "j": "judge",
        "p1": "p_a_first",
        "p2": "p_a_second",
    }
    t = read_table(f, table="pairs", mapping=good)
    assert t["p_a"].tolist() == [0.5]
    with pytest.raises(InputError, match="'nope', which is not in the file"):
        read_table(f, table="pairs", mapping={**good, "nope": "prompt"})
    with pytest.raises(InputError, match="not a pairs column"):
        read_table(f, table="pairs", mapping={**good, "q": "question"})
    with pytest.raises(InputError, match="gives 'judge' twice"):
        read_table(f, table="pairs", mapping={**good, "ma": "judge"})


def test_a_bad_value_in_a_mapped_column_names_the_files_column(tmp_path: Path) -> None:
    """The error names the column as the file does, the name --values takes (the schema
    name, 'human', sent the user to a --values column the file does not have)."""
    f = tmp_path / "peer.csv"
    pd.DataFrame({"id": ["x1", "x2"], "q": ["q1", "q2"], "human_winner": ["A", "neither"]}).to_csv(
        f, index=False
    )
    mapping = {"id": "item_id", "q": "prompt_id", "human_winner": "human"}
    with pytest.raises(InputError) as err:
        read_table(f, table="pairs", mapping=mapping)
    assert (err.value.row, err.value.column) == (2, "human_winner")
    assert "unknown human label 'neither' (the column mapped to 'human')" in str(err.value)
    # the value map the message points to, on the column it names, reads the file
    t = read_table(f, table="pairs", mapping=mapping, values={"human_winner": {"neither": 0.5}})
    assert t["human"].tolist() == [1.0, 0.5]
    # an unmapped column keeps its (schema) name
    unmapped = {"item_id": ["x1"], "prompt_id": ["q1"], "human": ["maybe"]}
    pd.DataFrame(unmapped).to_csv(f, index=False)
    with pytest.raises(InputError, match=r"column 'human': unknown human label 'maybe' —"):
        read_table(f, table="pairs")


# malformed corpus: file -> (row, column, words in the message); None = not named
EXPECTED: dict[str, tuple[int | None, str | None, str]] = {
    "pairs_duplicate_ids.csv": (2, None, "duplicate pairs row"),
    "pairs_empty.csv": (None, None, "empty"),
    "pairs_empty.jsonl": (None, None, "empty"),
    "pairs_garbage.parquet": (None, None, "not a readable Parquet file"),
    "pairs_header_only.csv": (None, None, "empty"),
    "pairs_infinite.csv": (2, "p_a_first", "infinite"),
    "pairs_json_not_array.json": (None, None, "expected a JSON array of objects"),
    "pairs_line_not_object.jsonl": (2, None, "not an object"),
    "pairs_missing_column.csv": (None, None, "missing required column(s) item_id —"),
    "pairs_missing_item_id.csv": (2, "item_id", "missing item_id"),
    "pairs_nan_prompt_id.csv": (2, "prompt_id", "missing prompt_id"),
    "pairs_needs_mapping.csv": (None, None, "missing required column"),
    "pairs_negative_length.csv": (2, "len_a", "negative"),
    "pairs_not_utf8.csv": (3, None, "not UTF-8"),
    "pairs_prob_out_of_range.csv": (2, "p_a_first", "not a probability"),
    "pairs_ragged_row.csv": (1, None, "more fields than the header"),
    "pairs_status_ok_but_empty.csv": (2, "p_a_first", "is 'ok' but"),
    "pairs_text_in_number.csv": (2, "p_a_first", "unknown verdict 'high'"),
    "pairs_truncated.jsonl": (2, None, "not valid JSON"),
    "pairs_unclosed_quote.csv": (2, None, "cannot parse"),
    "pairs_unknown_extension.xlsx": (None, None, "unknown file type"),
    "pairs_unknown_label.csv": (2, "human", "unknown human label"),
    "pairs_unknown_status.csv": (1, "status_first", "unknown status"),
    "pairs_verdict_without_judge.csv": (1, "judge", "without a judge"),
    "ratings_duplicate.csv": (2, None, "duplicate ratings row"),
    "ratings_missing_dimension.csv": (1, "dimension", "missing dimension"),
    "ratings_missing_reference.csv": (None, None, "reference"),
    "ratings_nan_rating.csv": (2, "rating", "rating is missing"),
    "ratings_negative_length.csv": (1, "length", "negative"),
    "ratings_text_rating.csv": (1, "rating", "expected a number"),
    "ratings_unknown_status.csv": (1, "status", "unknown status"),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_malformed_file_gives_one_clear_error(name: str) -> None:
    path = MALFORMED / name
    table = "ratings" if name.startswith("ratings") else "pairs"
    with pytest.raises(InputError) as err:
        read_table(path, table=table)  # type: ignore[arg-type]
    row, column, words = EXPECTED[name]
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith(str(path))
    assert words in message
    assert (err.value.row, err.value.column) == (row, column)


def test_missing_file_folder_and_whitespace_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        read_table(tmp_path / "nope.csv", table="pairs")
    with pytest.raises(InputError, match="folder"):
        read_table(tmp_path, table="pairs")
    blank = tmp_path / "blank.csv"
    blank.write_text("\n\n  \n", encoding="utf-8")
    with pytest.raises(InputError, match="empty"):
        read_table(blank, table="pairs")


def test_a_file_without_item_id_is_told_item_id_alone(tmp_path: Path) -> None:
    """A file reads its prompt_id from a prompt column, else one per item_id, so it
    needs item_id alone: a file with `id` and `prompt` was told "missing ... item_id,
    prompt_id" beside "a pairs file needs item_id, prompt_id", though `--map
    id=item_id` was all it took (docs/your-data.md's peer file)."""
    path = tmp_path / "peer.csv"
    path.write_text("id,prompt,judge,p_a_first\nx1,q1,gpt-4,1\nx2,q1,gpt-4,0\n", "utf-8")
    for columns, first in (("id,prompt,judge,p_a_first", "x1,q1,gpt-4,1"), ("a,b", "1,2")):
        bare = tmp_path / "bare.csv"
        bare.write_text(f"{columns}\n{first}\n", encoding="utf-8")
        with pytest.raises(InputError) as info:
            read_table(bare, table="pairs")
        message = str(info.value)
        assert "missing required column(s) item_id —" in message
        assert "needs item_id (prompt_id: from a prompt column, else one per item_id" in message
    table = read_table(path, table="pairs", mapping={"id": "item_id"})
    assert table["item_id"].tolist() == ["x1", "x2"]
    assert table["prompt_id"].nunique() == 1  # both rows share the prompt text q1


def test_a_column_name_holding_a_comma_is_quoted_in_the_list_of_columns(
    tmp_path: Path,
) -> None:
    """docs/your-data.md: a column ``score, raw`` is mapped as --map '"score, raw"=human'.
    The errors listing the file's columns wrote it bare, "p_a_first, score, raw", two
    columns to the eye; it is quoted there now, the other names still bare."""
    path = tmp_path / "comma.csv"
    path.write_text('id,judge,p_a_first,"score, raw"\nx1,gpt-4,1,A\n', encoding="utf-8")
    with pytest.raises(InputError) as missing:
        read_table(path, table="pairs")
    assert str(missing.value).endswith("the file has id, judge, p_a_first, 'score, raw'")
    with pytest.raises(InputError) as unknown:
        read_table(path, table="pairs", mapping={"ident": "item_id"})
    assert str(unknown.value).endswith(
        "use the file's own column names (before mapping= renames them): id, judge, "
        "p_a_first, 'score, raw'"
    )


def test_json_array_of_non_objects_and_empty_array(tmp_path: Path) -> None:
    f = tmp_path / "a.json"
    f.write_text('[{"item_id": 1}, 5]', encoding="utf-8")
    with pytest.raises(InputError, match="element 2 is a JSON number") as err:
        read_table(f, table="pairs")
    assert err.value.row == 2
    f.write_text("[]", encoding="utf-8")
    with pytest.raises(InputError, match="empty"):
        read_table(f, table="pairs")
    f.write_text('[{"item_id": 1},\n {"item_id": ', encoding="utf-8")
    with pytest.raises(InputError, match="line 2, column"):
        read_table(f, table="pairs")


def test_bad_gzip(tmp_path: Path) -> None:
    f = tmp_path / "a.jsonl.gz"
    f.write_bytes(b"this is not gzip")
    with pytest.raises(InputError, match="gzip"):
        read_table(f, table="pairs")


def test_load_input_by_name_and_path(shared_data: Path, tmp_path: Path) -> None:
    t = load_input("hh-rlhf", table="pairs", data_dir=shared_data).frame
    assert len(t) == 2312
    with pytest.raises(InputError, match="is a ratings table") as info:
        load_input("play-favorites", table="pairs", data_dir=shared_data)
    assert "choose a pairs dataset: " in str(info.value) and "hh-rlhf" in str(info.value)
    with pytest.raises(DatasetNotFoundError, match="unknown dataset 'no-such-set'"):
        load_input("no-such-set", table="pairs", data_dir=shared_data)
    with pytest.raises(ConfigError, match="mapping"):
        load_input("hh-rlhf", table="pairs", data_dir=shared_data, mapping={"a": "b"})
    path = _write(tmp_path / "mine.csv", "csv")
    t = load_input(str(path), table="pairs", mapping=MAPPING).frame
    assert len(t) == 3
    with pytest.raises(InputError, match="file not found"):
        load_input(str(tmp_path / "missing.jsonl"), table="pairs")


def test_canonical_ids_equals_roster_canonicalize() -> None:
    roster = Roster.builtin()
    names = pd.Series(["ChatGPT", None, "gpt4", "ChatGPT", " Claude ", np.nan, "gpt-4"])
    fast = canonical_ids(names, roster)
    slow = roster.canonicalize(names)
    assert fast.tolist()[:5] == ["gpt-3.5-turbo", None, "gpt-4", "gpt-3.5-turbo", "claude-v1"]
    assert fast.isna().tolist() == slow.isna().tolist()
    assert fast.dropna().tolist() == slow.dropna().tolist()
    assert canonical_ids(pd.Series([None, None]), roster).isna().all()
    names = pd.Series(["gpt4", "gpt4", "nobody"])
    with pytest.raises(InputError, match="'nobody'") as err:
        canonical_ids(names, roster, file="f.csv", column="judge", unknown_models="error")
    assert (err.value.row, err.value.column, err.value.file) == (3, "judge", "f.csv")
    with pytest.warns(ModelsNotInRoster, match="f.csv: model 'nobody' is not in the roster"):
        kept = canonical_ids(names, roster, file="f.csv", column="judge")
    assert kept.tolist() == ["gpt-4", "gpt-4", "nobody"]


# --- issue #12: hostile files -------------------------------------------------------

PAIR = {
    "item_id": "1",
    "prompt_id": "q1",
    "model_a": "gpt-4",
    "model_b": "claude-v1",
    "human": "a",
    "judge": "gpt-4",
    "p_a_first": 1.0,
    "p_a_second": 0.0,
}
HEADER = ",".join(PAIR) + "\n"
ROW = "1,q1,gpt-4,claude-v1,a,gpt-4,1,0\n"


def _records(path: Path, records: list[dict[str, object]]) -> Path:
    if path.suffix == ".json":
        path.write_text(json.dumps(records), encoding="utf-8")
    elif path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    else:
        pd.DataFrame(records).to_parquet(path)
    return path


@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".parquet"])
@pytest.mark.parametrize(
    ("column", "value", "what"),
    [
        ("model_a", {"name": "gpt-4"}, "object"),
        ("model_b", ["claude-v1"], "list"),
        ("judge", ["gpt-4", "gpt-4"], "list"),
        ("item_id", [7], "list"),
        ("prompt_id", {"q": 1}, "object"),
        ("human", ["a"], "list"),
        ("p_a_first", [1.0], "list"),
    ],
)
def test_nested_value_in_a_scalar_column(
    tmp_path: Path, suffix: str, column: str, value: object, what: str
) -> None:
    first = PAIR if suffix != ".parquet" else {**PAIR, column: value}  # one type per column
    path = _records(tmp_path / f"n{suffix}", [first, {**PAIR, "item_id": "2", column: value}])
    with pytest.raises(InputError, match=f"expected one text or number, found a .*{what}") as e:
        read_table(path, table="pairs")
    assert (e.value.row, e.value.column) == (2 if suffix != ".parquet" else 1, column)


def test_nested_values_in_extra_columns_are_kept(tmp_path: Path) -> None:
    path = _records(tmp_path / "x.jsonl", [{**PAIR, "meta": {"seed": 1, "tags": ["x"]}}])
    table = read_table(path, table="pairs")
    assert table["meta"].iloc[0] == {"seed": 1, "tags": ["x"]}


def test_nested_ratings_dimension(tmp_path: Path) -> None:
    rec = {"prompt_id": "p", "model": "gpt-4", "judge": "gpt-4", "rating": 1, "reference": 1}
    path = _records(tmp_path / "r.jsonl", [{**rec, "dimension": {"a": 1}}])
    with pytest.raises(InputError, match="found a JSON object") as err:
        read_table(path, table="ratings")
    assert (err.value.row, err.value.column) == (1, "dimension")


def test_non_text_model_names_read_plainly(tmp_path: Path) -> None:
    path = _records(tmp_path / "m.jsonl", [{**PAIR, "model_a": 5}])
    with pytest.raises(InputError, match=r"model 5 is not in the roster"):
        read_table(path, table="pairs", unknown_models="error")
    with pytest.warns(ModelsNotInRoster, match="model '5' is not in the roster"):
        assert read_table(path, table="pairs")["model_a"].tolist() == ["5"]
    path = _records(tmp_path / "b.jsonl", [{**PAIR, "model_b": True}])
    with pytest.raises(InputError, match=r"model True is not in the roster"):
        read_table(path, table="pairs", unknown_models="error")


def _peak(fn: object) -> tuple[InputError, float, int]:
    """The InputError ``fn()`` raises, the CPU seconds it took and the peak traced
    memory. CPU time, not the wall clock: a loaded machine stretches the wall clock
    (1.4 s of CPU took 16 s on two cores shared with four busy processes), not this."""
    tracemalloc.start()
    start = time.process_time()
    try:
        with pytest.raises(InputError) as err:
            fn()  # type: ignore[operator]
        seconds = time.process_time() - start
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return err.value, seconds, peak


def test_one_row_of_five_million_fields_is_cheap(tmp_path: Path) -> None:
    path = tmp_path / "wide.csv"
    path.write_text(HEADER + ROW.strip() + ",x" * 5_000_000 + "\n", encoding="utf-8")
    error, seconds, peak = _peak(lambda: read_table(path, table="pairs"))
    assert "line 2 (data row 1): the row is longer than 4,194,304 bytes" in str(error)
    assert "RECUSE_MAX_ROW_BYTES" in str(error)
    assert seconds < 45 and peak < 100_000_000  # was 91 s and 6.9 GB


def test_many_fields_within_the_row_limit_name_the_row(tmp_path: Path) -> None:
    path = tmp_path / "wide.csv"
    path.write_text(HEADER + ROW + ROW.strip() + "," * 1_000_000 + "\n", encoding="utf-8")
    error, seconds, peak = _peak(lambda: read_table(path, table="pairs"))
    assert "line 3 (data row 2): the row has more fields than the header (1,000,008, not 8" in str(
        error
    )
    assert seconds < 45 and peak < 100_000_000


def test_a_header_of_200000_columns_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "cols.csv"
    names = ",".join(f"c{i}" for i in range(200_000))
    path.write_text(HEADER.strip() + "," + names + "\n" + ROW, encoding="utf-8")
    error, seconds, _ = _peak(lambda: read_table(path, table="pairs"))
    assert "the header has 200,008 columns, more than the 10,000 recuse reads" in str(error)
    assert error.row is None and seconds < 45  # was 57 s, then accepted


def test_csv_gzip_bomb_is_cheap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # ~100 KB of gzip expanding to 100 MB on one line (was 7.5 GB and growing)
    path = tmp_path / "bomb.csv.gz"
    path.write_bytes(gzip.compress(HEADER.encode() + b"0" * 100_000_000, 9))
    assert path.stat().st_size < 200_000
    error, seconds, peak = _peak(lambda: read_table(path, table="pairs"))
    assert "line 2 (data row 1): the row is longer than" in str(error)
    assert seconds < 45 and peak < 400_000_000
    monkeypatch.setenv("RECUSE_MAX_INPUT_BYTES", "10000000")
    error, seconds, peak = _peak(lambda: read_table(path, table="pairs"))
    assert "decompresses to more than 10,000,000 bytes" in str(error)
    assert "RECUSE_MAX_INPUT_BYTES" in str(error)
    assert seconds < 45 and peak < 40_000_000


# The time bounds in these tests are loose on purpose (speed is measured in benchmarks):
# they only catch the pathological minutes-long reads the bounds were added against.
# They bound CPU time, which a loaded machine does not stretch.


def test_many_blank_lines_are_skipped_fast(tmp_path: Path) -> None:
    path = tmp_path / "blank.csv"
    path.write_text(HEADER + "\n" * 5_000_000 + ROW + "\r\n  \n" * 1_000_000, encoding="utf-8")
    start = time.process_time()
    table = read_table(path, table="pairs")
    assert len(table) == 1 and time.process_time() - start < 45


def test_short_row_and_duplicate_header(tmp_path: Path) -> None:
    path = tmp_path / "short.csv"
    path.write_text(HEADER + ROW + '2,"q\n2",gpt-4\n' + ROW, encoding="utf-8")
    with pytest.raises(InputError, match=r"fewer fields than the header \(3, not 8") as err:
        read_table(path, table="pairs")
    assert err.value.row == 2
    dup = tmp_path / "dup.tsv"
    dup.write_text("item_id\tprompt_id\thuman\tjudge\thuman\n1\tq\ta\t\tb\n", encoding="utf-8")
    with pytest.raises(InputError, match="the header names this column twice") as err:
        read_table(dup, table="pairs")
    assert (err.value.row, err.value.column) == (None, "human")


def test_not_utf8_row_is_the_data_record(tmp_path: Path) -> None:
    # header not counted, blank lines skipped, a quoted line break inside one record
    path = tmp_path / "bad.csv"
    text = HEADER.encode() + b'1,"q\n1",gpt-4,claude-v1,a,gpt-4,1,0\n\n2,q2,gpt-4,claude-v1,a,'
    path.write_bytes(text + b"gpt-4,1,0\n3,q3,caf\xe9,claude-v1,a,gpt-4,1,0\n")
    with pytest.raises(InputError, match=r"not UTF-8 text \(byte 0xe9\)") as err:
        read_table(path, table="pairs")
    assert (err.value.line, err.value.row) == (6, 3)
    jsonl = tmp_path / "bad.jsonl"
    jsonl.write_bytes(b'{"a": 1}\n\n{"a": "caf\xe9"}\n')
    with pytest.raises(InputError, match=r"line 3 \(data row 2\): not UTF-8") as err:
        read_table(jsonl, table="pairs")
    assert (err.value.line, err.value.row) == (3, 2)  # the blank line is no data row


def test_text_variants_still_read(tmp_path: Path) -> None:
    """BOM, CR LF, CR-only line ends, quoted line breaks, blank lines: one table."""
    want = read_table(_write(tmp_path / "a.csv", "csv"), table="pairs", mapping=MAPPING)
    text = (tmp_path / "a.csv").read_text(encoding="utf-8")
    variants = {
        "bom.csv": "\ufeff" + text,
        "crlf.csv": text.replace("\n", "\r\n"),
        "cr.csv": text.replace("\n", "\r"),
        "blank.csv": text.replace("\n", "\n\n   \n") + "\n\n",
    }
    for name, body in variants.items():
        path = tmp_path / name
        path.write_bytes(body.encode("utf-8"))
        got = read_table(path, table="pairs", mapping=MAPPING)
        pd.testing.assert_frame_equal(got, want, obj=name)
    quoted = tmp_path / "q.csv"
    quoted.write_text(
        HEADER.strip() + ',prompt\n1,q1,gpt-4,claude-v1,a,gpt-4,1,0,"two\r\n\nlines"\n'
    )
    assert read_table(quoted, table="pairs")["prompt"].iloc[0] == "two\r\n\nlines"


def test_unclosed_quote_at_the_end_names_its_row(tmp_path: Path) -> None:
    path = tmp_path / "q.csv"
    path.write_text(HEADER + ROW + '2,"q2,gpt-4\n\n3,q3\n', encoding="utf-8")
    with pytest.raises(InputError, match="quoted field is still open") as err:
        read_table(path, table="pairs")
    assert err.value.row == 2
    path.write_text(HEADER + '1,q1 5" screen,gpt-4,claude-v1,a,gpt-4,1,0\n', encoding="utf-8")
    assert read_table(path, table="pairs")["prompt_id"].iloc[0] == 'q1 5" screen'


def test_damaged_parquet_page_is_one_clear_error(tmp_path: Path) -> None:
    rows = [{**PAIR, "item_id": str(i), "prompt": f"PROMPTTEXT{i:04d}"} for i in range(50)]
    path = tmp_path / "d.parquet"
    pd.DataFrame(rows).to_parquet(path, compression=None, use_dictionary=False)
    raw = bytearray(path.read_bytes())
    raw[raw.index(b"PROMPTTEXT0007") + 3] = 0xFF
    path.write_bytes(bytes(raw))
    with pytest.raises(InputError, match=r"not a readable Parquet file .*Invalid UTF8") as err:
        read_table(path, table="pairs")
    assert err.value.column == "prompt" and len(str(err.value)) < 400


def test_parquet_with_a_column_name_twice(tmp_path: Path) -> None:
    table = pa.table([["1"], ["q"], ["a"], ["b"]], names=["item_id", "prompt_id", "human", "human"])
    path = tmp_path / "dup.parquet"
    pq.write_table(table, path)
    with pytest.raises(InputError, match="two columns of this name") as err:
        read_table(path, table="pairs")
    assert err.value.column == "human"


def test_parquet_shape_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "many.parquet"
    pd.DataFrame({"item_id": ["1"] * 100_000, "prompt_id": "q", "human": "a"}).to_parquet(path)
    monkeypatch.setenv("RECUSE_MAX_INPUT_BYTES", "200000")
    with pytest.raises(InputError, match=r"300,000 cells.* more than 200,000 bytes"):
        read_table(path, table="pairs")


def test_booleans_and_huge_numbers_are_not_numbers(tmp_path: Path) -> None:
    path = _records(tmp_path / "b.jsonl", [{**PAIR, "human": True}])
    with pytest.raises(InputError, match="expected a number, got True") as err:
        read_table(path, table="pairs")
    assert (err.value.row, err.value.column) == (1, "human")
    path.write_text(json.dumps(PAIR)[:-1] + ', "len_a": ' + "9" * 400 + "}\n", encoding="utf-8")
    with pytest.raises(InputError, match="number too large: 9999") as err:
        read_table(path, table="pairs")
    assert err.value.column == "len_a"


def test_damaged_pandas_metadata_in_parquet(tmp_path: Path) -> None:
    table = pa.table({"item_id": ["1"], "prompt_id": ["q1"], "human": ["a"]})
    path = tmp_path / "m.parquet"
    pq.write_table(table.replace_schema_metadata({"pandas": '{"columns": [ broken'}), path)
    with pytest.raises(InputError, match=r"not a readable Parquet file .JSONDecodeError"):
        read_table(path, table="pairs")


def test_blank_model_names_are_missing(tmp_path: Path) -> None:
    rows = [{**PAIR, "item_id": "1", "model_a": ""}, {**PAIR, "item_id": "2", "model_b": "  "}]
    table = read_table(_records(tmp_path / "b.jsonl", rows), table="pairs")
    assert table["model_a"].isna().tolist() == [True, False]
    assert table["model_b"].isna().tolist() == [False, True]
    rows = [PAIR, {**PAIR, "item_id": "2", "judge": " ", "model_a": "", "model_b": "nobody"}]
    with pytest.raises(InputError, match="model 'nobody' is not in the roster") as err:
        read_table(_records(tmp_path / "u.jsonl", rows), table="pairs", unknown_models="error")
    assert (err.value.row, err.value.column) == (2, "model_b")
    rows = [PAIR, {**PAIR, "item_id": "2", "judge": ""}]
    with pytest.raises(InputError, match="judge verdict without a judge name") as err:
        read_table(_records(tmp_path / "j.jsonl", rows), table="pairs", unknown_models="keep")
    assert err.value.row == 2


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_json_rows_with_ever_new_keys_are_refused_cheaply(tmp_path: Path, suffix: str) -> None:
    """JSON rows each naming new keys widen the table to their union: 3,000 rows of
    5 new keys each (650 KB) became a 15,000-column frame, 12 s and 1.6 GB (memory grows
    as rows x keys). The union is bounded like a CSV header (10,000 columns)."""
    base = dict(zip(PAIR, ["1", "q1", "gpt-4", "claude-v1", "a", "gpt-4", 1, 0], strict=True))
    rows = [dict(base, item_id=str(k), **{f"x{k}_{m}": 1 for m in range(5)}) for k in range(3000)]
    path = tmp_path / f"keys{suffix}"
    if suffix == ".json":
        path.write_text(json.dumps(rows), encoding="utf-8")
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    error, seconds, peak = _peak(lambda: read_table(path, table="pairs"))
    assert "more than the 10,000 columns recuse reads" in str(error)
    assert error.row == 1999  # the row whose keys pass the limit
    assert seconds < 5 and peak < 300_000_000


def test_one_json_row_of_20000_keys_is_refused(tmp_path: Path) -> None:
    base = dict(zip(PAIR, ["1", "q1", "gpt-4", "claude-v1", "a", "gpt-4", 1, 0], strict=True))
    path = tmp_path / "wide.jsonl"
    path.write_text(json.dumps(dict(base, **{f"c{i}": i for i in range(20_000)})) + "\n")
    error, _, _ = _peak(lambda: read_table(path, table="pairs"))
    assert "more than the 10,000 columns recuse reads" in str(error) and error.row == 1


def test_a_parquet_files_named_index_is_a_column(tmp_path: Path) -> None:
    """pandas writes a named index into a Parquet file as a column with metadata that
    makes it the index again on reading: ``df.set_index("human").to_parquet(p)`` read
    as a table without labels (no error), ``set_index("item_id")`` as one without
    item_id."""
    frame = pd.DataFrame({
        "item_id": ["i1", "i2", "i3"], "prompt_id": ["p1", "p1", "p2"],
        "human": [1.0, 0.0, 0.5], "judge": ["gpt-4"] * 3, "p_a_first": [1.0, 0.0, 1.0],
    })  # fmt: skip
    plain = read_table(_write_parquet(frame, tmp_path / "plain.parquet"), table="pairs")
    for index in ("human", ["item_id", "judge"]):
        path = tmp_path / "indexed.parquet"
        frame.set_index(index).to_parquet(path)
        got = read_table(path, table="pairs")
        pd.testing.assert_frame_equal(got[plain.columns], plain)
    assert plain["human"].tolist() == [1.0, 0.0, 0.5]


def _write_parquet(frame: pd.DataFrame, path: Path) -> Path:
    frame.to_parquet(path, index=False)
    return path


def test_a_pairs_column_named_in_another_case_is_noted(tmp_path: Path) -> None:
    """A file whose label column is ``Human`` (or lengths ``Len_A``, ``Len_B``) was read
    without labels (or lengths) and said nothing: the audit's human-referenced analyses
    (verbosity) were skipped with no word of the column that was there."""
    frame = pd.DataFrame({
        "item_id": ["i1", "i2"], "prompt_id": ["p1", "p2"], "human": [1.0, 0.0],
        "judge": ["gpt-4"] * 2, "p_a_first": [1.0, 0.0], "len_a": [3, 4], "len_b": [5, 6],
    })  # fmt: skip
    path = tmp_path / "t.csv"
    for renamed, said in (
        ({"human": "Human"}, "no human column, so the file is read without labels; these "
         "columns look like verdicts or labels and were not read: 'Human'"),
        ({"len_a": "Len_A", "len_b": " len_b"}, "'Len_A', ' len_b' are named like len_a, "
         "len_b in another case or spacing and not read"),
    ):  # fmt: skip
        frame.rename(columns=renamed).to_csv(path, index=False)
        with pytest.warns(UserWarning) as told:
            read_table(path, table="pairs")
        notes = [str(w.message) for w in told if said in str(w.message)]
        assert len(notes) == 1, [str(w.message) for w in told]
    assert "mapping={'Len_A': 'len_a', 'len_b': 'len_b'}" in notes[0]
    # the exact names: nothing to say
    frame.to_csv(path, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_table(path, table="pairs")


def test_a_parquet_file_with_two_header_levels_or_index_names_twice_is_named(
    tmp_path: Path,
) -> None:
    """pandas writes a two-level header (a MultiIndex, from pivot_table) and index
    levels of one name into a Parquet file, and reads them back so: ``recuse validate``
    of such a file ended in a traceback (``'DataFrame' object has no attribute
    'dtype'``; ``The name a occurs multiple times``), as a DataFrame no longer did."""
    frame = pd.DataFrame({
        "item_id": ["i1", "i2"], "prompt_id": ["p1", "p2"], "human": [1.0, 0.0],
        "judge": ["gpt-4"] * 2, "p_a_first": [1.0, 0.0],
    })  # fmt: skip
    path = tmp_path / "t.parquet"
    two = frame.copy()
    two.columns = pd.MultiIndex.from_arrays([frame.columns, ["x"] * frame.shape[1]])
    two.to_parquet(path)
    with pytest.raises(InputError, match=r"2 header levels \(a MultiIndex") as info:
        read_table(path, table="pairs")
    assert info.value.file == str(path)
    frame.set_axis(pd.MultiIndex.from_arrays([[0, 1], [0, 1]], names=["a", "a"])).to_parquet(path)
    with pytest.raises(InputError, match="2 index levels named 'a'") as info:
        read_table(path, table="pairs")
    assert (info.value.file, info.value.column) == (str(path), "a")


def test_the_map_that_a_misnamed_column_note_gives_can_be_typed(tmp_path: Path) -> None:
    """The note for ``"Len_A "`` and ``" len_b"`` said ``--map Len_A =len_a, len_b=len_b``:
    typed in a shell, the spaces split it into three arguments, the first mapping
    nothing. --map drops the spaces around a name and finds the padded column."""
    frame = pd.DataFrame({
        "item_id": ["i1", "i2"], "prompt_id": ["p1", "p2"], "human": [1.0, 0.0],
        "judge": ["gpt-4"] * 2, "p_a_first": [1.0, 0.0], "Len_A ": [3, 4], " len_b": [5, 6],
    })  # fmt: skip
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    doors: list[tuple[Renaming, str]] = [
        ("flag", "or map: --map Len_A=len_a,len_b=len_b"),
        ("keyword", "or map: mapping={'Len_A': 'len_a', 'len_b': 'len_b'}"),
    ]
    for door, hint in doors:
        with renaming_by(door), pytest.warns(UserWarning, match="named like len_a") as told:
            read_table(path, table="pairs")
        said = next(str(w.message) for w in told if "named like" in str(w.message))
        assert said.endswith(hint)
    got = read_table(path, table="pairs", mapping={"Len_A": "len_a", "len_b": "len_b"})
    assert got["len_a"].tolist() == [3, 4] and got["len_b"].tolist() == [5, 6]


def test_the_columns_not_read_are_quoted_so_their_spaces_show(tmp_path: Path) -> None:
    """The "were not read" note listed the names bare: a label column ``'human '`` (a
    trailing space) read "were not read: human ", the space invisible, so the note seemed
    to say the file's human column was ignored for no reason. Each name is quoted, as the
    note of misnamed columns quotes them."""
    frame = pd.DataFrame({
        "item_id": ["i1", "i2"], "prompt_id": ["p1", "p2"], "human ": [1.0, 0.0],
        "judge": ["gpt-4"] * 2, "p_a_first": [1.0, 0.0],
    })  # fmt: skip
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    with pytest.warns(UserWarning) as told:
        read_table(path, table="pairs")
    notes = [str(w.message) for w in told if "were not read" in str(w.message)]
    assert len(notes) == 1 and "were not read: 'human ' — map" in notes[0], notes


def test_a_schema_named_column_mapped_to_free_text_keeps_its_none(tmp_path: Path) -> None:
    """A file column that bears a schema column's name but is mapped to a free-text one
    (``--map category=prompt``) is free text: its ``None`` is kept as written, as the
    same column named ``question`` is, and no note says it was read as missing (it read
    every ``None`` prompt as missing, and said so)."""
    frame = pd.DataFrame({
        "item_id": ["i1", "i2", "i3"], "prompt_id": ["p1", "p2", "p3"],
        "judge": ["gpt-4"] * 3, "p_a_first": [1.0, 0.0, 1.0],
        "text": ["None", "Explain.", "N/A"],
    })  # fmt: skip
    got = {}
    for name in ("question", "category"):
        path = tmp_path / f"{name}.jsonl"
        frame.rename(columns={"text": name}).to_json(path, orient="records", lines=True)
        with warnings.catch_warnings(record=True) as told:
            warnings.simplefilter("always")
            got[name] = read_table(path, table="pairs", mapping={name: "prompt"})
        assert not [w for w in told if "read as missing" in str(w.message)], name
    assert got["category"]["prompt"].tolist() == ["None", "Explain.", "N/A"]
    pd.testing.assert_frame_equal(got["category"], got["question"])


@pytest.mark.parametrize(
    ("way", "confidence", "renamed"),
    [("flag", "--confidence", "--map"), ("keyword", "confidence=", "mapping=")],
)
def test_a_confidence_column_the_file_lacks_is_named_as_the_caller_gave_it(
    tmp_path: Path, way: Renaming, confidence: str, renamed: str
) -> None:
    """``recuse.audit(frame, confidence="conf")`` said "--confidence names 'conf' ...
    (before --map renames them)", two flags a Python caller never wrote."""
    path = tmp_path / "p.csv"
    path.write_text("item_id,prompt_id,judge,p_a_first,conf_\nx,p,gpt-4,1,0.8\n")
    with pytest.raises(InputError) as err, renaming_by(way):
        read_table(path, table="pairs", confidence="conf")
    assert err.value.reason == f"{confidence} names 'conf', which is not in the file"
    assert (err.value.fix or "").startswith(
        f"did you mean 'conf_'? use the file's own column names (before {renamed} renames them)"
    )


def test_verdict_cells_that_are_numbers_are_not_looked_up_as_model_names() -> None:
    """A verdict column read as text names models (gpt4 -> gpt-4) among its numbers;
    every distinct probability was keyed and looked up in the roster as a name as well
    (200,000 of them: 2 s of a 4 s read). Now only texts that are not numbers are, and
    the column reads as before: names canonical, numbers and words as written."""
    from recuse.data.model_names import canonical_label_names

    roster = Roster.load()
    looked: list[str] = []
    lookup = roster.lookup

    def spy(names: pd.Series) -> tuple[pd.Series, pd.Series]:
        looked.extend(str(n) for n in names if n is not None)
        return lookup(names)

    roster.lookup = spy  # type: ignore[method-assign]
    cells = ["gpt4", "0.25", "2", "1.5", "1e5", "inf", "A", "tie", "claude", None, " 1 "]
    df = pd.DataFrame({"p_a": pd.Series(cells * 3, dtype=object), "model_a": "gpt-4"})
    out = canonical_label_names(df, roster)
    read = ["gpt-4", "0.25", "2", "1.5", "1e5", "inf", "A", "tie", "claude-v1", None, " 1 "]
    assert out["p_a"].tolist() == read * 3
    assert sorted(set(looked)) == ["claude", "gpt4"]


def test_a_label_naming_a_roster_model_whose_name_reads_as_a_number_still_names_it(
    tmp_path: Path,
) -> None:
    """A roster alias that reads as a number ("1.5", "007"): a label cell naming it was
    looked up and named the model, until label cells that read as numbers were no longer
    looked up; then "1.5" (model a's alias, a wins) read as AlpacaEval's tie and "007"
    was refused as no probability."""
    from recuse.roster import Entry

    roster = Roster.load()
    roster.add(Entry("house-model", "house", ("1.5", "007")))
    for alias in ("1.5", "007"):
        rows = [  # model a is house-model under its alias; the labels name the winner
            {"item_id": "x", "model_a": alias, "model_b": "gpt-4o", "human": alias},
            {"item_id": "y", "model_a": alias, "model_b": "gpt-4o", "human": "gpt-4o"},
            {"item_id": "z", "model_a": "gpt-4o", "model_b": alias, "human": alias},
        ]
        path = tmp_path / "labels.csv"
        pd.DataFrame(rows).to_csv(path, index=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            frame = load_input(path, roster=roster).frame
        assert frame["model_a"].tolist() == ["house-model", "house-model", "gpt-4o"]
        assert frame["human"].tolist() == [1.0, 0.0, 0.0]  # a, b, then b wins
