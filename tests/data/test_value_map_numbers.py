"""Value maps match numbers by value (issue #24): a map written ``1=0,2=1`` reads cells
written ``1``/``2``, ``1.0``/``2.0`` (pandas, JSON floats, Parquet) and ``1e0`` alike; a map
that matches nothing is told; a map that already turns the swapped order is refused
with ``--swapped-frame presented``."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recuse.cli import main
from recuse.data.plain_tables import read_table
from recuse.data.value_maps import ValueMapUnmatched
from recuse.errors import ConfigError

# 12 pairs; the judge writes 1 when it prefers b and 2 when it prefers a (the opposite of
# AlpacaEval's 1 = first output): the map 1=0,2=1 says so
HUMAN = ["a", "b", "a", "a", "b", "b", "a", "b", "a", "a", "b", "a"]
WRITTEN = [2 if h == "a" else 1 for h in HUMAN]  # a judge that always agrees with humans
MAP = {"verdict": {"1": 0.0, "2": 1.0}}


def _frame(verdicts: list[object]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "item_id": [f"i{k}" for k in range(12)],
            "prompt_id": [f"p{k // 2}" for k in range(12)],
            "human": HUMAN,
            "judge": ["gpt-4"] * 12,
            "verdict": verdicts,
        }
    )


def _read(path: Path, **kw: object) -> pd.DataFrame:
    return read_table(path, table="pairs", mapping={"verdict": "p_a"}, values=MAP, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", ["int-csv", "float-csv", "json-floats", "parquet", "text-1e0"])
def test_one_map_reads_1_and_1_0_alike(tmp_path: Path, kind: str) -> None:
    expected = np.array([1.0 if h == "a" else 0.0 for h in HUMAN])  # by hand: the map
    if kind == "int-csv":
        path = tmp_path / "v.csv"
        _frame(WRITTEN).to_csv(path, index=False)
    elif kind == "float-csv":
        path = tmp_path / "v.csv"
        _frame([float(v) for v in WRITTEN]).to_csv(path, index=False)
        assert "2.0" in path.read_text()  # pandas writes floats as 2.0
    elif kind == "json-floats":
        path = tmp_path / "v.json"
        path.write_text(json.dumps(_frame([float(v) for v in WRITTEN]).to_dict("records")))
    elif kind == "parquet":
        path = tmp_path / "v.parquet"
        _frame([float(v) for v in WRITTEN]).to_parquet(path)
    else:
        path = tmp_path / "v.csv"
        _frame([f"{v}e0" for v in WRITTEN]).to_csv(path, index=False)
    table = _read(path)
    np.testing.assert_array_equal(table["p_a"].to_numpy(float), expected)
    # the judge agrees with every human label: accuracy 1, whatever the writer did
    assert ((table["p_a"] > 0.5) == (table["human"] > 0.5)).all()


def test_parquet_decimal_cells_match_by_value(tmp_path: Path) -> None:
    """A Parquet decimal column arrives as ``Decimal`` cells: the map 1=0,2=1 matches
    ``Decimal('2.00')`` (before: nothing matched, only a note, and the AlpacaEval rule
    read 2 as b better, inverting every verdict)."""
    import decimal

    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "v.parquet"
    table = pa.Table.from_pandas(_frame(WRITTEN).drop(columns=["verdict"]), preserve_index=False)
    cells = pa.array([decimal.Decimal(v) for v in WRITTEN], pa.decimal128(5, 2))
    pq.write_table(table.append_column("verdict", cells), path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ValueMapUnmatched)
        read = _read(path)
    assert read["p_a"].tolist() == [1.0 if h == "a" else 0.0 for h in HUMAN]


def test_map_keys_written_as_floats_match_integer_cells(tmp_path: Path) -> None:
    path = tmp_path / "v.csv"
    _frame(WRITTEN).to_csv(path, index=False)
    table = read_table(
        path, table="pairs", mapping={"verdict": "p_a"}, values={"verdict": {"1.0": 0, "2.00": 1}}
    )
    assert table["p_a"].tolist() == [1.0 if h == "a" else 0.0 for h in HUMAN]


def test_one_number_written_two_ways_with_two_values_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "v.csv"
    _frame(WRITTEN).to_csv(path, index=False)
    with pytest.raises(ConfigError, match=r"'1' and '1.0' are one value, given as 0 and 1"):
        read_table(path, table="pairs", values={"verdict": {"1": 0, "1.0": 1}})


def test_a_map_that_matches_nothing_is_told(tmp_path: Path) -> None:
    path = tmp_path / "v.csv"
    _frame(["A" if h == "a" else "B" for h in HUMAN]).to_csv(path, index=False)
    with pytest.warns(ValueMapUnmatched, match=r"value map for column 'verdict' \(1=0, 2=1\)"):
        table = _read(path)
    assert table["p_a"].tolist() == [1.0 if h == "a" else 0.0 for h in HUMAN]  # built-in rules


def test_cli_prints_the_unmatched_note_and_reads_floats_right(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "v.csv"
    _frame([float(v) for v in WRITTEN]).to_csv(path, index=False)
    argv = ["validate", str(path), "--map", "verdict=p_a", "--values", "verdict:1=0,2=1"]
    assert main(argv) == 0
    assert "matched none" not in capsys.readouterr().err
    words = tmp_path / "w.csv"
    _frame(["A" if h == "a" else "B" for h in HUMAN]).to_csv(words, index=False)
    assert main(["validate", str(words), "--map", "verdict=p_a", "--values", "verdict:1=0"]) == 0
    err = capsys.readouterr().err
    assert "recuse: note:" in err and "matched none of its values ('A', 'B')" in err


def test_presented_frame_with_a_map_that_already_turns_the_swap_is_refused(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.csv"
    frame = _frame(["A"] * 12).assign(swapped=["B"] * 12)
    frame.to_csv(path, index=False)
    mapping = {"verdict": "p_a_first", "swapped": "p_a_second"}
    with pytest.raises(ConfigError, match="already reads the swapped order in the a/b frame"):
        read_table(
            path,
            table="pairs",
            mapping=mapping,
            values={"swapped": {"A": 0, "B": 1}},
            swapped_frame="presented",
        )
    # the map as the judge wrote it, with presented: B (the second shown, a) turned once
    once = read_table(
        path,
        table="pairs",
        mapping=mapping,
        values={"swapped": {"A": 1, "B": 0}},
        swapped_frame="presented",
    )
    assert once["p_a_second"].tolist() == [1.0] * 12  # 'B' shown second is a
    # the turning map alone (original frame) reads the same
    alone = read_table(path, table="pairs", mapping=mapping, values={"swapped": {"A": 0, "B": 1}})
    assert alone["p_a_second"].tolist() == [1.0] * 12


def test_label_free_pairs_file_reads_without_human_and_prompt_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "nolabels.csv"
    pd.DataFrame(
        {"id": ["x1", "x2", "x3"], "judge": ["gpt-4"] * 3, "p_a_first": ["A", "B", "A"]}
    ).to_csv(path, index=False)
    with pytest.warns(UserWarning, match="each pair .item_id. is its own prompt"):
        table = read_table(path, table="pairs", mapping={"id": "item_id"})
    assert table["human"].isna().all()
    assert table["prompt_id"].tolist() == ["x1", "x2", "x3"]
    # one file column feeds two schema columns: no note, the same ids
    both = read_table(path, table="pairs", mapping={"id": ("item_id", "prompt_id")})
    assert both["item_id"].tolist() == both["prompt_id"].tolist() == ["x1", "x2", "x3"]
    assert main(["validate", str(path), "--map", "id=item_id,id=prompt_id"]) == 0
    assert "own prompt" not in capsys.readouterr().err
    assert main(["validate", str(path), "--map", "id=item_id"]) == 0
    assert "is its own prompt" in capsys.readouterr().err


def test_a_value_holding_an_equals_sign_can_be_mapped_on_the_cli(tmp_path: Path) -> None:
    """Arena-Hard writes A>B / A=B / B>A: ``--values 'v:A>B=1,A=B=0.5,B>A=0'`` split at
    the first '=' and refused 'A=B=0.5', so such a column could not be mapped at all."""
    from recuse.cli.app import parse_values

    written = {"a": "A>B", "b": "B>A", "tie": "A=B"}
    labels = ["a", "b", "tie", "a"] * 3
    path = tmp_path / "ah.csv"
    _frame([written[h] for h in labels]).assign(human=labels).to_csv(path, index=False)
    spec = "verdict:A>B=1,A=B=0.5,B>A=0"
    values = parse_values([spec])
    assert values == {"verdict": {"A>B": 1.0, "A=B": 0.5, "B>A": 0.0}}
    table = read_table(path, table="pairs", mapping={"verdict": "p_a"}, values=values)
    assert table["p_a"].tolist() == [{"a": 1.0, "b": 0.0, "tie": 0.5}[h] for h in labels]
    argv = ["validate", str(path), "--map", "verdict=p_a", "--values", spec]
    assert main(argv) == 0


def test_the_notes_quote_the_map_as_written_and_match_it_folded(tmp_path: Path) -> None:
    """A map's keys were folded when it was checked, so its notes quoted ``left=1``
    for ``Left=1``; they still match cells in any case and spacing."""
    path = tmp_path / "v.csv"
    _frame(["A" if h == "a" else "B" for h in HUMAN]).to_csv(path, index=False)
    mapping = {"verdict": "p_a"}
    with pytest.warns(ValueMapUnmatched, match=r"column 'verdict' \(Left=1, RIGHT=0\) matched"):
        read_table(
            path, table="pairs", mapping=mapping, values={"verdict": {"Left": 1, "RIGHT": 0}}
        )
    _frame(["left" if h == "a" else " Right " for h in HUMAN]).to_csv(path, index=False)
    values = {"verdict": {"Left": 1, "RIGHT": 0, "left": 1}}
    table = read_table(path, table="pairs", mapping=mapping, values=values)
    assert table["p_a"].tolist() == [1.0 if h == "a" else 0.0 for h in HUMAN]
