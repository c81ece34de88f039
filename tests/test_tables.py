"""Evidence-table validation: coercion, derived columns and the errors it raises."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recuse.errors import InputError, ReaderNote
from recuse.tables import (
    PAIRS,
    RATINGS,
    missing_columns_error,
    renaming_by,
    shown,
    suggest_columns,
    validate_pairs,
    validate_ratings,
    verdict_values,
)


def pairs(**overrides: object) -> pd.DataFrame:
    base: dict[str, object] = {
        "item_id": ["i1", "i2", "i3"],
        "prompt_id": ["p1", "p1", "p2"],
        "model_a": ["gpt-4", "gpt-4", None],
        "model_b": ["claude-v1", "vicuna-13b", None],
        "human": ["a", "tie", "b"],
        "judge": ["gpt-4", "gpt-4", "gpt-4"],
        "p_a_first": [1.0, 0.2, np.nan],
        "p_a_second": [0.6, np.nan, np.nan],
        "p_a": [np.nan, np.nan, 0.3],
    }
    base.update(overrides)
    return pd.DataFrame(base)


def ratings(**overrides: object) -> pd.DataFrame:
    base: dict[str, object] = {
        "prompt_id": ["p1", "p1", "p2"],
        "model": ["gpt-4o", "claude-2.1", "gpt-4o"],
        "dimension": ["faithfulness"] * 3,
        "judge": ["gpt-4o"] * 3,
        "rating": [4, 3, 2],
        "reference": [3.5, 3.0, 2.0],
    }
    base.update(overrides)
    return pd.DataFrame(base)


def test_pairs_labels_and_combined_probability() -> None:
    out = validate_pairs(pairs())
    assert out["human"].tolist() == [1.0, 0.5, 0.0]
    # mean of the judged orders; a lone order stands alone; a given p_a is kept
    assert out["p_a"].tolist() == pytest.approx([0.8, 0.2, 0.3])
    assert out["model_a"].isna().tolist() == [False, False, True]


def test_a_given_p_a_replaced_by_the_mean_of_the_orders_is_noted() -> None:
    """A file with its own p_a beside the per-order verdicts (averaged another way, or
    stale): recuse reads the mean of the orders, and says so (before: silently)."""
    import warnings

    from recuse.errors import ReaderNote

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = validate_pairs(pairs(p_a=[0.8, 1.0, 0.3]), file="v.csv")  # row 2: 1.0 vs 0.2
    assert out["p_a"].tolist() == pytest.approx([0.8, 0.2, 0.3])
    (note,) = [w for w in caught if issubclass(w.category, ReaderNote)]
    assert "v.csv: p_a differs from the mean of p_a_first and p_a_second in 1 row" in str(
        note.message
    )
    assert "(first: row 2)" in str(note.message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an agreeing p_a, and one with no orders: no note
        validate_pairs(pairs(p_a=[0.8, 0.2, 0.9]))


def test_pairs_accepts_numeric_ids_and_probabilities() -> None:
    out = validate_pairs(pairs(item_id=[1, 2, 3], human=[1, 0.25, None]))
    assert out["item_id"].tolist() == ["1", "2", "3"]
    assert out["human"].iloc[1] == 0.25 and np.isnan(out["human"].iloc[2])


@pytest.mark.parametrize(
    ("override", "row", "column", "reason"),
    [
        ({"human": ["a", "maybe", "b"]}, 2, "human", "unknown human label"),
        ({"p_a_first": [1.0, 1.7, None]}, 2, "p_a_first", "not a probability"),
        ({"p_a_second": [0.5, "high", None]}, 2, "p_a_second", "unknown verdict 'high'"),
        ({"item_id": ["i1", None, "i3"]}, 2, "item_id", "missing item_id"),
        ({"item_id": ["i1", "i1", "i3"]}, 2, None, "duplicate pairs row"),
        ({"judge": ["gpt-4", None, "gpt-4"]}, 2, "judge", "without a judge"),
        ({"len_a": [10, -1, 3]}, 2, "len_a", "negative"),
        ({"p_a_first": [1.0, float("inf"), None]}, 2, "p_a_first", "infinite"),
    ],
)
def test_pairs_errors_name_row_and_column(
    override: dict[str, object], row: int, column: str | None, reason: str
) -> None:
    with pytest.raises(InputError) as info:
        validate_pairs(pairs(**override), file="my.csv")
    err = info.value
    assert (err.file, err.row, err.column) == ("my.csv", row, column)
    assert reason in str(err) and err.fix


def test_a_duplicate_names_the_key_columns_it_has() -> None:
    """A table without judges (pairs to judge) has a duplicate item_id, and the error
    said "(item_id='i1', judge=None) — each (item_id, judge) may appear once"."""
    unjudged = pd.DataFrame({"item_id": ["i1", "i2", "i1"], "prompt_id": ["p1", "p2", "p3"]})
    with pytest.raises(InputError) as info:
        validate_pairs(unjudged, file="to-judge.csv")
    assert (info.value.row, info.value.reason) == (3, "duplicate pairs row (item_id='i1')")
    assert info.value.fix == "each item_id may appear once; remove or rename the duplicate"
    judged = unjudged.assign(judge="x", p_a=[1.0, 0.0, 1.0])
    with pytest.raises(InputError) as info:
        validate_pairs(judged)
    assert info.value.reason == "duplicate pairs row (item_id='i1', judge='x')"
    assert info.value.fix is not None and info.value.fix.startswith("each (item_id, judge) ")


def test_missing_columns_and_empty_table() -> None:
    with pytest.raises(InputError, match="missing required column"):
        validate_pairs(pairs().drop(columns=["human", "judge"]))
    with pytest.raises(InputError, match="empty"):
        validate_pairs(pairs().iloc[:0])


@pytest.mark.parametrize(
    ("columns", "file", "said"),
    [
        (["item_id", "prompt_id"], "t.csv", "t.csv: the pairs table is empty: it has columns "
         "but no data rows — add a row per pair under the header"),
        (["item_id", "judge", "p_a"], "t.csv", "t.csv: the pairs table is empty: it has "
         "columns but no data rows — add a row per pair under the header, with the "
         "column(s) prompt_id"),
        ([], None, "the pairs table is empty: it has no rows — add a row per pair, with the "
         "column(s) item_id, prompt_id"),
    ],
)  # fmt: skip
def test_an_empty_table_says_what_it_lacks(columns: list[str], file: str | None, said: str) -> None:
    """A table of no rows: 'it has columns' only of a file's header, and the columns
    its fix names only where the table lacks them (it named item_id, prompt_id to a
    header of both, and prompt_id to a file whose reader had just said it makes one
    per item_id)."""
    with pytest.raises(InputError) as info:
        validate_pairs(pd.DataFrame(columns=columns), file=file)
    assert str(info.value) == said


def test_a_header_alone_without_prompt_id_asks_for_rows_only(tmp_path: Path) -> None:
    """A file's reader fills prompt_id (one per item_id) and says so in a note: the
    empty table's fix then asks for rows, not for that column."""
    from recuse.data.plain_tables import read_table

    path = tmp_path / "pairs.csv"
    path.write_text("item_id,judge,p_a_first\n")
    with pytest.warns(ReaderNote, match="no prompt_id"), pytest.raises(InputError) as info:
        read_table(path, table="pairs")
    assert str(info.value).endswith("add a row per pair under the header"), info.value


def test_status_must_explain_missing_verdict() -> None:
    df = pairs(status_first=["ok", "ok", "unparsed"], p_a_first=[1.0, np.nan, np.nan])
    with pytest.raises(InputError, match="status_first is 'ok'") as info:
        validate_pairs(df)
    assert info.value.row == 2


def test_an_unparsed_or_failed_verdict_holds_no_value() -> None:
    """A verdict marked unparsed/failed/missing that still holds a number (another
    tool's placeholder, e.g. 0.5 for 'no verdict') is refused: before, the number was
    read as the judge's verdict and entered every estimate."""
    for status in ("unparsed", "failed", "missing"):
        df = pairs(status_second=["ok", status, "ok"], p_a_second=[1.0, 0.5, 0.0])
        with pytest.raises(InputError, match=f"status_second is '{status}' but p_a_second") as e:
            validate_pairs(df, file="x.csv")
        assert (e.value.row, e.value.column) == (2, "p_a_second") and e.value.fix
    # the same status with the cell empty is fine: counted, excluded, never defaulted
    ok = validate_pairs(pairs(status_second=["ok", "unparsed", "ok"],
                              p_a_second=[1.0, np.nan, 0.0]))  # fmt: skip
    assert np.isnan(ok.loc[1, "p_a_second"])


def test_an_unparsed_rating_holds_no_value() -> None:
    """A rating marked unparsed that holds a number (a placeholder) is refused; before,
    it entered the favoritism regression as the judge's rating."""
    with pytest.raises(InputError, match="status is 'unparsed' but rating holds 3") as e:
        validate_ratings(ratings(rating=[4.0, 3.0, 2.0], status=["ok", "unparsed", "ok"]))
    assert (e.value.row, e.value.column) == (2, "rating")


def test_ratings_status_rules() -> None:
    out = validate_ratings(ratings())
    assert out["status"].tolist() == ["ok"] * 3
    with pytest.raises(InputError, match="rating is missing") as info:
        validate_ratings(ratings(rating=[4, None, 2]))
    assert (info.value.row, info.value.column) == (2, "rating")
    ok = validate_ratings(ratings(rating=[4, None, 2], status=[None, "unparsed", None]))
    assert ok["status"].tolist() == ["ok", "unparsed", "ok"]


def test_ratings_duplicate_key() -> None:
    with pytest.raises(InputError, match="duplicate ratings row") as info:
        validate_ratings(ratings(prompt_id=["p1", "p1", "p1"], model=["gpt-4o"] * 3))
    assert info.value.row == 2


def test_two_references_of_one_answer_are_refused() -> None:
    """One answer (prompt p1, model gpt-4o, dimension d) rated by two judges, each row
    with its own reference: the fit adjusted each judge for a reference of its own and
    the corrections table took the first row's, with nothing said. Refused, as two
    human labels of one pairs item are; a missing reference agrees with any."""
    two = {"prompt_id": ["p1"] * 3, "model": ["gpt-4o"] * 3, "judge": ["j1", "j2", "j3"]}
    with pytest.raises(InputError, match=r"has reference 3 in row 1 \(judge 'j1'\) and 4 here"):
        validate_ratings(ratings(**two, reference=[3.0, 3.0, 4.0]))
    with pytest.raises(InputError) as info:
        validate_ratings(ratings(**two, reference=[3.0, 3.0, 4.0]))
    assert (info.value.row, info.value.column) == (3, "reference")
    out = validate_ratings(ratings(**two, reference=[3.0, None, 3.0]))
    assert out["reference"].tolist()[::2] == [3.0, 3.0]
    other_model = {**two, "model": ["gpt-4o", "gpt-4o", "claude-v1"]}
    validate_ratings(ratings(**other_model, reference=[3.0, 3.0, 4.0]))  # two answers


def test_one_reference_written_to_two_precisions_is_one() -> None:
    """A mean rating written to 10 digits in one judge's rows and to 16 in another's was
    refused as two references, its message reading '3.33333 in row 1 and 3.33333 here'.
    Within a millionth (relative) they are one; two that differ are named as written."""
    two = {"prompt_id": ["p1"] * 2, "model": ["gpt-4o"] * 2, "judge": ["j1", "j2"],
           "dimension": ["d"] * 2, "rating": [4, 3]}  # fmt: skip
    out = validate_ratings(ratings(**two, reference=[3.3333333333, 10 / 3]))
    assert out["reference"].tolist() == [3.3333333333, 10 / 3]
    with pytest.raises(
        InputError, match=r"reference 3\.33333 in row 1 \(judge 'j1'\) and 3\.3334 here"
    ):
        validate_ratings(ratings(**two, reference=[3.33333, 3.3334]))


def test_a_value_given_in_some_rows_of_an_item_only_is_said() -> None:
    """An item judged by two judges whose human label was joined onto one judge's row
    only: a missing value agrees with any, and the other judge's labelled analyses went
    without the comparison, with nothing said. A note counts the rows and names the
    first; an item whose rows all lack the label is no such item."""
    table = pairs(
        item_id=["i1", "i1", "i2"],
        prompt_id=["p1", "p1", "p2"],
        model_a=["gpt-4", None, "gpt-4"],
        model_b=["claude-v1", None, "claude-v1"],
        human=["a", None, None],
        judge=["gpt-4", "claude-v1", "gpt-4"],
        p_a_first=[1.0, 0.0, 1.0],
        p_a_second=[np.nan] * 3,
        p_a=[np.nan] * 3,
    )
    with pytest.warns(ReaderNote) as caught:
        out = validate_pairs(table, file="f.csv")
    (note,) = [str(w.message) for w in caught if "lack what its other rows give" in str(w.message)]
    assert note.startswith(
        "f.csv: rows of an item lack what its other rows give (1 row lacks human; 1 row lacks "
        "model_a; 1 row lacks model_b; first: data row 2, item 'i1', judge 'claude-v1', human)"
    )
    assert np.isnan(out["human"].iloc[1])  # said, not filled in
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReaderNote)
        validate_pairs(table.assign(human=None, model_a="gpt-4", model_b="claude-v1"))


def test_schemas_list_required_columns() -> None:
    assert PAIRS.required[:4] == ["item_id", "prompt_id", "model_a", "model_b"]
    assert RATINGS.key == ("prompt_id", "model", "dimension", "judge")


@pytest.mark.parametrize(
    ("column", "value", "what"),
    [
        ("item_id", ["x"], "JSON list"),
        ("model_a", {"id": 1}, "JSON object"),
        ("judge", np.array(["gpt-4"]), "list"),
        ("prompt_id", b"p1", "binary value"),
        ("p_a_first", (1, 0), "list"),
    ],
)
def test_nested_cells_in_schema_columns_are_refused(column: str, value: object, what: str) -> None:
    cells: list[object] = ["gpt-4", None, value] if column != "p_a_first" else [1.0, 0.2, value]
    if column in ("item_id", "prompt_id"):
        cells = ["i1", "i2", value]
    df = pairs(**{column: pd.Series(cells, dtype=object)})
    with pytest.raises(InputError, match=f"found a {what}") as err:
        validate_pairs(df, file="f.json")
    assert (err.value.row, err.value.column) == (3, column)


def test_nested_cells_in_extra_columns_are_kept() -> None:
    out = validate_pairs(pairs(meta=[{"a": 1}, [1, 2], None]))
    assert out["meta"].tolist() == [{"a": 1}, [1, 2], None]


def test_booleans_are_not_numbers() -> None:
    with pytest.raises(InputError, match="expected a number, got False") as err:
        validate_pairs(pairs(p_a_first=[1.0, False, 0.5]))
    assert (err.value.row, err.value.column) == (2, "p_a_first")
    with pytest.raises(InputError, match="expected a number, got True") as err:
        validate_ratings(ratings(rating=[True, True, False]))
    assert (err.value.row, err.value.column) == (1, "rating")
    with pytest.raises(InputError, match="got True") as err:
        validate_pairs(pairs(human=pd.Series(["a", True, "b"], dtype=object)))
    assert (err.value.row, err.value.column) == (2, "human")
    # pandas' nullable boolean: the error named its first cell, a missing one ("got
    # <NA>", row 1, "write 1 / 0 instead of true / false"); now its first value
    with pytest.raises(InputError, match="expected a number, got False") as err:
        validate_pairs(pairs(human=pd.array([None, False, True], dtype="boolean")))
    assert (err.value.row, err.value.column) == (2, "human")
    # with no value present it is a column of missing labels, as NaN would be
    empty = validate_pairs(pairs(human=pd.array([None] * 3, dtype="boolean")))
    assert empty["human"].isna().all()


def test_numbers_too_large_for_a_float() -> None:
    with pytest.raises(InputError, match="number too large: 1000") as err:
        validate_ratings(ratings(rating=pd.Series([4, 10**400, 2], dtype=object)))
    assert (err.value.row, err.value.column) == (2, "rating")
    with pytest.raises(InputError, match=r"number too large: .9999.*\(5,000 characters\)") as err:
        validate_ratings(ratings(reference=["1", "9" * 5000, "2"]))
    assert len(str(err.value)) < 300


def test_shown_cuts_long_values_and_unwraps_numpy() -> None:
    assert shown(np.int64(5)) == "5" and shown(np.True_) == "True"
    assert shown(np.array(["a"])) == "['a']"
    text = shown("x" * 10_000)
    assert text.endswith("… (10,000 characters)") and len(text) < 90


# --- values as users write them (issue #15) ---------------------------------------


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        (["A", "b", "TIE", "Tie"], [1.0, 0.0, 0.5, 0.5]),
        (["[[A]]", "[[B]]", "[[C]]", " [b] "], [1.0, 0.0, 0.5, 0.0]),
        (["model_a", "Model_B", "tie (bothbad)", "draw"], [1.0, 0.0, 0.5, 0.5]),
        (["0.25", "1", 0.75, "0"], [0.25, 1.0, 0.75, 0.0]),
    ],
)
def test_side_words_and_numbers(written: list[object], expected: list[float]) -> None:
    assert verdict_values(pd.Series(written, dtype=object)).values.tolist() == expected


@pytest.mark.parametrize(
    ("written", "expected", "alpaca"),
    [
        # every number is 1, 1.5 or 2 and some is 2 or 1.5: AlpacaEval preferences
        ([1, 2, 2, 1], [1.0, 0.0, 0.0, 1.0], True),
        ([1.5, 1.0, 1.5], [0.5, 1.0, 0.5], True),
        (["2", "1.5", None], [0.0, 0.5, np.nan], True),
        # only 1s, or 0s and 1s: probabilities (1 = a better), not codes
        ([1, 1, 1], [1.0, 1.0, 1.0], False),
        ([1, 0, 1], [1.0, 0.0, 1.0], False),
        # a value outside {1, 1.5, 2} keeps the column as probabilities (2 then fails)
        ([1, 2, 0.5], [1.0, 2.0, 0.5], False),
    ],
)
def test_alpaca_eval_codes_only_when_unambiguous(
    written: list[object], expected: list[float], alpaca: bool
) -> None:
    read = verdict_values(pd.Series(written, dtype=object))
    np.testing.assert_array_equal(read.values, np.array(expected))
    assert read.alpaca is alpaca


def test_alpaca_codes_in_a_table_and_a_mixed_column_refused() -> None:
    out = validate_pairs(pairs(human=[2, 1.5, 1], p_a_first=[2.0, 1.0, None]))
    assert out["human"].tolist() == [0.0, 0.5, 1.0]
    assert out["p_a_first"].tolist()[:2] == [0.0, 1.0]
    with pytest.raises(InputError, match="2 is not a probability") as info:
        validate_pairs(pairs(human=[1, 2, 0.5]), file="f.csv")
    assert info.value.row == 2 and "1, 1.5 or 2" in str(info.value)


def test_model_names_as_verdicts_compare_with_the_rows_models() -> None:
    out = validate_pairs(
        pairs(human=["GPT-4 ", "vicuna-13b", "tie"], p_a_first=["claude-v1", "gpt-4", None])
    )
    assert out["human"].tolist() == [1.0, 0.0, 0.5]
    assert out["p_a_first"].tolist()[:2] == [0.0, 1.0]
    # a model that is in neither slot of its row is not a verdict
    with pytest.raises(
        InputError,
        match="unknown verdict 'claude-v1' \\(this row compares 'gpt-4' and 'vicuna-13b'\\)",
    ) as info:
        validate_pairs(pairs(p_a_first=[1.0, "claude-v1", None]), file="f.csv")
    assert (info.value.row, info.value.column) == (2, "p_a_first")
    # a bare "c" is not MT-Bench's tie (only [[C]] is)
    with pytest.raises(InputError, match="unknown human label 'c'"):
        validate_pairs(pairs(human=["a", "c", "b"]))


def test_swapped_frame_presented_flips_positions_not_model_names() -> None:
    table = pairs(p_a_second=["A", "gpt-4", 0.3])  # row 3: a lone second order
    original = validate_pairs(table)
    presented = validate_pairs(table, swapped_frame="presented")
    assert original["p_a_second"].tolist() == [1.0, 1.0, 0.3]
    # "A" seen first in the swapped order is b: 1 - 1; a model name stays; 1 - 0.3
    assert presented["p_a_second"].tolist() == pytest.approx([0.0, 1.0, 0.7])
    assert presented["p_a_first"].tolist()[:2] == original["p_a_first"].tolist()[:2]
    assert presented["p_a"].tolist() == pytest.approx([0.5, 0.6, 0.7])


@pytest.mark.parametrize("column", ["human", "p_a_first", "p_a", "item_id"])
def test_a_confidence_column_recuse_reads_as_another_is_refused(column: str) -> None:
    """``--confidence human --confidence-of a`` made the human labels the judge's
    verdicts: ``recuse certify`` certified the judge at 100% agreement, without a word."""
    table = pairs(human=[1.0, 0.5, 0.0], p_a_first=[0.8, 0.3, 0.6])
    with pytest.raises(InputError) as err:
        validate_pairs(table, confidence=column, confidence_of="a", file="f.csv")
    assert str(err.value).startswith(
        f"f.csv, column '{column}': the confidence column is the table's '{column}' ("
    )
    assert "a judge's confidence in its verdict is a column of its own" in str(err.value)


def test_a_confidence_just_outside_0_1_is_written_outside_it() -> None:
    """A confidence of 1.0000000000000002 (a sum of probabilities' float noise) was
    refused as "confidence 1 is outside [0, 1]": ``:g`` wrote it as the end it passes.
    It is written as the file holds it; 85 reads 85 as before."""
    for value, said in ((1.0000000000000002, "1.0000000000000002"), (-1e-07, "\u22120.0000001"),
                        (85.0, "85")):  # fmt: skip
        table = pairs(p_a_first=["A", "B", "A"], conf=[0.9, value, 0.7])
        with pytest.raises(InputError) as err:
            validate_pairs(table, confidence="conf", file="f.csv")
        assert f"confidence {said} is outside [0, 1]" in str(err.value), str(err.value)


def test_confidence_of_the_winner_and_of_a() -> None:
    table = pairs(p_a_first=["A", "B", "tie"], conf=[0.9, 0.8, 0.7])
    winner = validate_pairs(table, confidence="conf")
    # P(a) = c where the verdict is a, 1 - c where it is b, a tie stays 0.5
    assert winner["p_a_first"].tolist() == pytest.approx([0.9, 0.2, 0.5])
    direct = validate_pairs(table, confidence="conf", confidence_of="a")
    assert direct["p_a_first"].tolist() == pytest.approx([0.9, 0.8, 0.7])
    # a row without a confidence keeps its verdict, a certainty beside the others'
    # probabilities: said in a note (it was silent); a tie without one is 0.5 either way
    with pytest.warns(ReaderNote) as notes:
        kept = validate_pairs(
            pairs(p_a_first=["A", "B", "tie"], conf=[None, 0.6, None]),
            confidence="conf",
            file="f.csv",
        )
    assert kept["p_a_first"].tolist() == pytest.approx([1.0, 0.4, 0.5])
    (note,) = [str(n.message) for n in notes if "confidence" in str(n.message)]
    assert note.startswith("f.csv: 1 verdict without a confidence in 'conf' (first: row 1)")
    with pytest.warns(ReaderNote, match="2 verdicts without a confidence"):  # P(a): ties too
        validate_pairs(pairs(p_a_first=["A", "B", "tie"], conf=[None, 0.6, None]),
                       confidence="conf", confidence_of="a")  # fmt: skip
    with warnings.catch_warnings(record=True) as seen:  # each row with its confidence
        warnings.simplefilter("always")
        validate_pairs(table, confidence="conf")
    assert not [w for w in seen if "without a confidence" in str(w.message)]
    with pytest.raises(InputError, match=r"confidence 1\.3 is outside") as info:
        validate_pairs(pairs(conf=[0.5, 1.3, 0.2]), confidence="conf", file="f.csv")
    assert (info.value.row, info.value.column) == (2, "conf")


def test_a_table_of_no_columns_is_told_so() -> None:
    """A table with no column at all (recuse.audit of an empty DataFrame): the fix
    ended "the file has " and nothing."""
    error = missing_columns_error(PAIRS, ["item_id"], [], None)
    assert (error.fix or "").endswith("; it has no columns")


def test_missing_columns_told_apart_with_guesses() -> None:
    table = pairs().rename(columns={"item_id": "id", "human": "human_winner"})
    with pytest.raises(InputError, match="missing required column") as info:
        validate_pairs(table, file="f.csv")
    fix = info.value.fix or ""
    # validate_pairs takes no mapping: the table is renamed (recuse's doors: below)
    assert "did you mean frame.rename(columns={'id': 'item_id', 'human_winner': 'human'})?" in fix
    needs, optional = fix.split("needs ")[1].split("; optional: ")
    assert needs == "item_id, prompt_id"
    assert optional.startswith("model_a, model_b, human, judge") and "ppl_b" in optional
    assert fix.endswith(
        "the file has id, prompt_id, model_a, model_b, human_winner, judge, p_a_first, "
        "p_a_second, p_a"
    )
    assert suggest_columns(["Question", "judge_model", "output_1"], ["prompt", "judge"]) == {
        "Question": "prompt",
        "judge_model": "judge",
    }
    assert suggest_columns(["itemid"], ["item_id"]) == {"itemid": "item_id"}  # difflib
    # what the message calls optional is optional to the library too (it was refused as
    # "missing required column(s) model_a, model_b, ..." by validate_pairs itself)
    bare = validate_pairs(pd.DataFrame({"item_id": ["1"], "prompt_id": ["p"], "human": ["a"]}))
    assert {"model_a", "model_b", "judge", "p_a_first", "p_a_second", "p_a"} <= set(bare.columns)
    assert bare[["model_a", "p_a"]].isna().all().all() and bare["human"].tolist() == [1.0]
    # by the reader's rules: one generator column without the other is still refused
    with pytest.raises(InputError, match=r"missing required column\(s\) model_b"):
        validate_pairs(pd.DataFrame({"item_id": ["1"], "prompt_id": ["p"], "human": ["a"],
                                     "model_a": ["gpt-4"]}))  # fmt: skip


def test_a_guess_names_the_renaming_of_the_door_used(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A table whose judge column is named ``grader``: ``recuse.audit(frame)`` said "did
    you mean --map grader=judge?", an option a Python caller cannot give. Each door's
    fix names its own renaming: the command line's ``--map``, ``recuse.audit``'s and
    ``recuse.data.load_input``'s ``mapping=`` (both outside and inside a command's run)."""
    import recuse
    from recuse.cli import main
    from recuse.data.inputs import load_input

    table = pairs().rename(columns={"judge": "grader"})
    path = tmp_path / "t.csv"
    table.to_csv(path, index=False)
    keyword = "did you mean mapping={'grader': 'judge'}?"
    for call in (lambda: recuse.audit(table), lambda: load_input(path)):
        with pytest.raises(InputError) as info:
            call()
        assert keyword in str(info.value) and "--map" not in str(info.value)
    assert main(["validate", str(path)]) == 2
    said = capsys.readouterr().err
    assert "did you mean --map grader=judge?" in said and "mapping=" not in said
    with renaming_by("flag"), pytest.raises(InputError, match="did you mean --map grader="):
        load_input(path)  # the command line reads files with load_input: its door wins
    with pytest.raises(InputError, match="did you mean mapping="):
        load_input(path)  # and leaves none behind


def test_a_guessed_rename_of_a_frame_renames_its_columns_as_named() -> None:
    """``validate_pairs(frame)`` with a column ``' id'`` (a space from a spreadsheet)
    suggested ``frame.rename(columns={'id': 'item_id'})``, which renames nothing (pandas
    matches names exactly): the same error again. The suggestion, applied as written,
    makes the frame valid."""
    import ast

    table = pairs().rename(columns={"item_id": " id", "judge": "grader"})
    with pytest.raises(InputError) as info:
        validate_pairs(table)
    said = re.search(r"frame\.rename\(columns=(\{.*?\})\)", str(info.value))
    assert said is not None, str(info.value)
    renaming = ast.literal_eval(said.group(1))
    assert renaming == {" id": "item_id", "grader": "judge"}
    validate_pairs(table.rename(columns=renaming))  # no error


def _probe_rows(**change: object) -> pd.DataFrame:
    t = pd.DataFrame(
        {
            "item_id": ["i1#original", "i1#placebo", "i1#authority", "i1#self-recognition"],
            "judge": "j",
            "base_item": "i1",
            "probe": ["original", "placebo", "authority", "self-recognition"],
            "treated": ["a", "a", "a", "b"],  # own answer on b: recognition rows may differ
        }
    )
    for column, (row, value) in change.items():
        t.loc[row, column] = value
    return t


def test_probe_columns_are_read_and_checked() -> None:
    from recuse.errors import InputError
    from recuse.probe_tables import check_probe_table

    plain = pd.DataFrame({"item_id": ["x"], "probe": ["set-1"]})  # not all three columns
    assert check_probe_table(plain) is plain
    same = check_probe_table(_probe_rows(treated=(2, " A "), probe=(1, "Placebo")))
    assert list(same["treated"]) == ["a", "a", "a", "b"]
    assert list(same["probe"]) == ["original", "placebo", "authority", "self-recognition"]
    # the original takes the edits' side (a self-recognition run may have stored its own)
    aligned = check_probe_table(_probe_rows(treated=(0, "b")))
    assert list(aligned["treated"]) == ["a", "a", "a", "b"]
    for change, words in [
        ({"treated": (2, "c")}, "row 3, column 'treated': treated is 'c', expected a or b"),
        ({"treated": (2, None)}, "row 3, column 'treated': empty treated"),
        ({"probe": (1, np.nan)}, "row 2, column 'probe': empty probe"),
        ({"base_item": (0, "")}, "row 1, column 'base_item': empty base_item"),
        ({"treated": (2, "b")}, "side a in placebo but on side b in authority"),
        ({"probe": (1, "authority")}, "version 'authority' of base pair 'i1' appears 2 times"),
    ]:
        with pytest.raises(InputError, match=words.replace("(", r"\(").replace(")", r"\)")):
            check_probe_table(_probe_rows(**change))


def test_an_original_row_may_leave_treated_empty() -> None:
    """The original has no edit: an empty treated takes the edits' side, or without
    edits the self-recognition rows' (the judge's own answer); with neither it is an
    error naming the row."""
    from recuse.errors import InputError
    from recuse.probe_tables import check_probe_table

    t = check_probe_table(_probe_rows(treated=(0, "")))
    assert list(t["treated"]) == ["a", "a", "a", "b"]
    asked = _probe_rows(treated=(0, None)).iloc[[0, 3]]
    assert list(check_probe_table(asked)["treated"]) == ["b", "b"]
    with pytest.raises(InputError, match=r"row 1, column 'treated': the original row of base pa"):
        check_probe_table(_probe_rows(treated=(0, "")).iloc[[0]])
    with pytest.raises(InputError, match=r"row 2, column 'treated': empty treated"):
        check_probe_table(_probe_rows(treated=(1, "")))  # only the original may


def test_a_base_pair_is_one_prompt_and_keeps_its_unedited_answer() -> None:
    """A base_item reused across prompts, or a treated side that names the answer left
    as it is, would mix pairs or turn each effect's sign: refused with the row named."""
    from recuse.errors import InputError
    from recuse.probe_tables import check_probe_table

    t = _probe_rows().assign(
        prompt_id="q1",
        response_a=["yes", "yes\n", "yes [1]", "mine"],
        response_b=["no", "no", "no", "theirs"],  # self-recognition: its own pair
    )
    assert list(check_probe_table(t)["treated"]) == ["a", "a", "a", "b"]
    assert list(check_probe_table(t.assign(response_a=None))["treated"]) == ["a", "a", "a", "b"]
    with pytest.raises(InputError, match=r"row 2, column 'base_item': base pair 'i1' spans pr"):
        check_probe_table(t.assign(prompt_id=["q1", "q2", "q1", "q1"]))
    flipped = t.assign(treated=["b", "b", "b", "b"])  # the edits are on a, not b
    words = (
        r"row 2, column 'treated': base pair 'i1': the answer that is not edited \(response_a\)"
        r" differs between version 'original' and version 'placebo'"
    )
    with pytest.raises(InputError, match=words):
        check_probe_table(flipped)
    # rows without texts are not compared
    assert len(check_probe_table(flipped.assign(response_a=[None, None, "y", "m"]))) == 4


def test_plain_pairs_beside_a_probe_table_stay_plain_pairs() -> None:
    """`recuse judge` and `recuse probe` into one store: the judged pairs have no probe
    columns; they stay plain pairs (kept by the other analyses, never probed)."""
    from recuse.analyses.base import unedited
    from recuse.probe_tables import check_probe_table

    plain = pd.DataFrame(
        {"item_id": ["p1"], "judge": "j", "base_item": [np.nan], "probe": [None], "treated": [""]}
    )
    t = check_probe_table(pd.concat([_probe_rows(), plain], ignore_index=True))
    assert t["probe"].isna().sum() == 1 and t["base_item"].isna().sum() == 1
    assert list(unedited(t)["item_id"]) == ["i1#original", "p1"]


def test_a_model_name_on_a_row_comparing_a_model_with_itself_says_so() -> None:
    """model_a and model_b both claude-2 and the label 'claude-2': the name cannot tell
    the two answers apart, and the error says that; before it called the label unknown
    although it is the row's model."""
    df = pairs(model_a=["gpt-4", "claude-2", None], model_b=["claude-v1", "claude-2", None],
               human=["a", "claude-2", "b"])  # fmt: skip
    with pytest.raises(InputError, match="names both answers") as e:
        validate_pairs(df, file="x.csv")
    assert (e.value.row, e.value.column) == (2, "human") and "A / B / tie" in e.value.fix


def test_the_rows_of_one_item_describe_one_comparison() -> None:
    """An item's rows (one per judge) must agree on its prompt, models and human label:
    a file merged from two tools that put a and b the other way round had its second
    judge's rows read in another frame than the first's (item-level analyses, such as
    agreement among judges, compared verdicts about different sides), silently."""
    base = pairs(item_id=["i1", "i1", "i2"], judge=["gpt-4", "claude-v1", "gpt-4"],
                 model_a=["gpt-4", "vicuna-13b", None],
                 model_b=["vicuna-13b", "gpt-4", None])  # fmt: skip
    with pytest.raises(InputError, match="item 'i1' has model_a 'gpt-4' in row 1") as e:
        validate_pairs(base, file="x.csv")
    assert (e.value.row, e.value.column) == (2, "model_a") and "item_id" in e.value.fix
    labels = pairs(item_id=["i1", "i1", "i2"], judge=["gpt-4", "claude-v1", "gpt-4"],
                   model_a=["gpt-4"] * 2 + [None], model_b=["vicuna-13b"] * 2 + [None],
                   human=["a", "b", "b"])  # fmt: skip
    with pytest.raises(InputError, match="human") as e:
        validate_pairs(labels)
    assert e.value.row == 2
    # a label on one row and none on the other is no disagreement
    ok = validate_pairs(labels.assign(human=["a", None, "b"]))
    assert len(ok) == 3


def test_a_table_of_the_other_kind_is_named_as_such() -> None:
    """A pairs table where ratings are needed (recuse favoritism pairs.csv), or the
    reverse, is said to be the other kind; before, the error guessed '--map
    model_b=model', a mapping that cannot turn pairs into ratings."""
    with pytest.raises(InputError, match="a pairs table, not the ratings table") as e:
        validate_ratings(pairs(), file="p.csv")
    assert "--map" not in str(e.value) and "recuse.audit reads either kind" in e.value.fix
    with pytest.raises(InputError, match="a ratings table, not the pairs table"):
        validate_pairs(ratings(), file="r.csv")


def test_a_table_of_the_other_kind_says_to_leave_table_out() -> None:
    """`recuse audit pairs.csv --table ratings` was told "`recuse audit` reads either
    kind" — the command it was running; what reads either kind is audit or validate
    without --table."""
    from recuse.tables import RATINGS, missing_columns_error, renaming_by

    have = ["item_id", "prompt_id", "judge", "p_a_first"]
    with renaming_by("flag"):
        said = str(missing_columns_error(RATINGS, ["model"], have, "p.csv"))
    assert said.startswith("p.csv: a pairs table, not the ratings table this needs — ")
    assert "`recuse audit` and `recuse validate` read either kind without --table" in said
    # from Python, the keyword (the command line's option named to a notebook user)
    said = str(missing_columns_error(RATINGS, ["model"], have, "p.csv"))
    assert said.endswith("recuse.audit reads either kind without table="), said


def test_a_column_named_twice_or_a_multiindex_header_is_named() -> None:
    """``validate_pairs`` / ``validate_ratings`` on a frame whose header names a column
    twice (``pd.concat(axis=1)``) or has two levels (``pivot_table``) ended in pandas'
    ``AttributeError: 'DataFrame' object has no attribute 'dtype'``."""
    twice = pd.concat([pairs(), pairs()[["judge"]]], axis=1)
    with pytest.raises(InputError) as info:
        validate_pairs(twice, file="t.csv")
    assert (info.value.file, info.value.column) == ("t.csv", "judge")
    assert "2 columns named 'judge'" in str(info.value) and "one name per column" in str(info.value)
    for table, check in ((pairs(), validate_pairs), (ratings(), validate_ratings)):
        two_levels = table.copy()
        two_levels.columns = pd.MultiIndex.from_arrays([table.columns, ["x"] * table.shape[1]])
        with pytest.raises(InputError, match=r"2 header levels \(a MultiIndex: ") as info:
            check(two_levels)
        assert "('item_id', 'x')" in str(info.value) or "('prompt_id', 'x')" in str(info.value)
    extra = pd.concat([ratings().assign(x=1), pd.DataFrame({"x": [0, 0, 0]})], axis=1)
    with pytest.raises(InputError, match="2 columns named 'x'"):
        validate_ratings(extra)


def test_a_column_made_the_index_is_a_column() -> None:
    """``validate_pairs(df.set_index("human"))`` read a table without labels (no error),
    and ``set_index("item_id")`` said item_id was missing."""
    plain = validate_pairs(pairs())
    for index in ("human", ["item_id", "judge"]):
        got = validate_pairs(pairs().set_index(index))
        pd.testing.assert_frame_equal(got[plain.columns], plain)
    rated = validate_ratings(ratings())
    got = validate_ratings(ratings().set_index(["prompt_id", "model"]))
    pd.testing.assert_frame_equal(got[rated.columns], rated)
    # row numbers are no column
    assert list(validate_pairs(pairs().set_axis([7, 8, 9])).columns) == list(plain.columns)


def test_two_index_levels_of_one_name_are_named() -> None:
    """A frame whose index has two levels of one name (``names=["a", "a"]``) ended in
    pandas' ``ValueError: The name a occurs multiple times`` when its named levels were
    read as columns (to_csv writes them as a header naming ``a`` twice)."""
    table = pairs()
    table.index = pd.MultiIndex.from_arrays([range(3), range(3)], names=["run", "run"])
    with pytest.raises(InputError) as info:
        validate_pairs(table, file="t.csv")
    assert (info.value.file, info.value.column) == ("t.csv", "run")
    assert "2 index levels named 'run'" in str(info.value) and "df.index.names" in str(info.value)
    # levels named like a column are no columns of their own, so no clash
    table.index = table.index.set_names(["judge", "judge"])
    assert len(validate_pairs(table)) == 3


def test_the_rows_of_one_item_agree_on_its_texts_and_lengths() -> None:
    """One comparison judged by two judges, its answer a different text in each row:
    `recuse judge` sent the first row's texts alone, and verbosity measured two lengths
    for one pair, with nothing said. Now an error naming the row and column, as a
    human label that differs is; a missing text agrees with any."""
    two = pairs(item_id=["i1", "i1", "i2"], judge=["gpt-4", "claude-v1", "gpt-4"],
                prompt_id=["p1", "p1", "p2"], model_a=["gpt-4"] * 3,
                model_b=["claude-v1"] * 3, human=["a", "a", "b"],
                prompt=["Q", "Q", "R"], response_a=["x", "x", "y"],
                response_b=["b", None, "c"])  # fmt: skip
    assert len(validate_pairs(two)) == 3
    for col, changed in (("response_a", "x, longer"), ("prompt", "Q?"), ("len_a", 9.0)):
        table = two.assign(len_a=[3.0, 3.0, 1.0]) if col == "len_a" else two.copy()
        table.loc[1, col] = changed
        with pytest.raises(InputError, match=r"item 'i1' has .* in row 1 and .* here") as err:
            validate_pairs(table, file="f.csv")
        assert (err.value.row, err.value.column) == (2, col)
    # one text written by two tools (CRLF and LF, spaces around it) is one text: kept
    # as written in each row
    crlf = two.assign(prompt=["Q\nwhy", "Q\r\nwhy ", "R"], response_a=["x\r\n", "x", "y"])
    got = validate_pairs(crlf)
    assert got["prompt"].tolist() == ["Q\nwhy", "Q\r\nwhy ", "R"]


def test_integer_ids_that_a_missing_one_made_floats_are_the_integers() -> None:
    """Model ids 7, 9 with one missing are a float column in pandas (7.0, NaN, 9.0):
    they were read as "7.0", a model of its own beside the judge 7, so the judge's own
    answers were no longer its own and self-preference lost them without a word."""
    table = pairs(
        model_a=[7.0, np.nan, 9.0], model_b=[9, 9, 7], judge=[7, 7, 7], human=[1.0, 0.0, 0.5]
    )
    assert table["model_a"].dtype == np.float64
    out = validate_pairs(table)
    assert out["model_a"].tolist()[::2] == ["7", "9"] and pd.isna(out["model_a"].iloc[1])
    assert out["model_b"].tolist() == ["9", "9", "7"] and set(out["judge"]) == {"7"}
    # a float that is no whole number is written as it is
    assert validate_pairs(pairs(model_a=[7.5, np.nan, 9.0]))["model_a"].iloc[0] == "7.5"


def test_missing_texts_are_found_as_pandas_isin_and_strip_find_them() -> None:
    """_missing_texts_in reads each distinct value in Python; pandas' own isin and
    str.strip (what read_missing_texts called, a millisecond each per column) mark the
    same cells, in object, Arrow and category columns, with lists and bytes beside."""
    from recuse import tables
    from recuse.cells import MISSING_TEXTS

    texts = [*sorted(MISSING_TEXTS), " NA ", "\tnull\n", "  ", "x", " x ", "N A", "nan!"]
    rng = np.random.default_rng(1)
    drawn = [texts[i] for i in rng.integers(0, len(texts), 300)]
    columns = [
        pd.Series([*drawn, None, np.nan, 1, 2.5, b"NA"], dtype=object),
        pd.Series([*drawn, None], dtype="string[pyarrow]"),
        pd.Series(drawn, dtype="category"),
    ]
    for s in columns:
        by_pandas = s.isin(MISSING_TEXTS).to_numpy(bool) | s.str.strip().isin(
            MISSING_TEXTS - {""}
        ).to_numpy(bool)
        assert tables._missing_texts_in(s).tolist() == by_pandas.tolist(), s.dtype
    with_lists = pd.Series([["NA"], " NA ", "x"], dtype=object)
    assert tables._missing_texts_in(with_lists).tolist() == [False, True, False]


def test_missing_texts_in_arrow_columns_are_those_python_strip_finds() -> None:
    """An Arrow text column is read in Arrow's kernels (a missing text as written, or
    one with ASCII spaces around it; a cell not in ASCII read in Python): each cell is
    marked as ``str.strip`` and the set of missing texts mark it, spaces past ASCII
    (U+0085, U+3000), control spaces (U+001C) and a zero-width space (no space to
    ``str.strip``) among them, in pandas' ``str`` and ``string[pyarrow]`` columns."""
    from recuse import tables
    from recuse.cells import MISSING_TEXTS

    spaces = ["", " ", "\t", "\x1c", "\x85", "\u3000", "\u200b", "\xa0 "]
    words = [*sorted(MISSING_TEXTS), "x", "1.5", "é", "NA x", "p7"]
    rng = np.random.default_rng(3)
    drawn: list[str | None] = [
        spaces[rng.integers(len(spaces))] + words[rng.integers(len(words))]
        + spaces[rng.integers(len(spaces))]
        for _ in range(2000)
    ]  # fmt: skip
    drawn[::97] = [None] * len(drawn[::97])
    by_python = [
        isinstance(v, str) and (v in MISSING_TEXTS or v.strip() in MISSING_TEXTS - {""})
        for v in drawn
    ]
    wide = [v for v, b in zip(drawn, by_python, strict=True) if b and v and v[0] == "\u3000"]
    assert sum(by_python) > 300 and wide
    for dtype in ("str", "string[pyarrow]"):
        s = pd.Series(drawn, dtype=dtype)
        assert tables._arrow_backed(s)
        assert tables._missing_texts_in(s).tolist() == by_python, dtype


def test_text_and_number_columns_read_by_value_are_those_read_row_by_row() -> None:
    """_coerce reads an object column of texts (a DataFrame's, or the model names the
    roster gave) each distinct text once, and an Arrow column's numbers from Python
    strings: the same cells as ``as_text`` and ``str.strip`` row by row (a missing
    cell as it is: None stays None, NaN NaN) and as ``pd.to_numeric`` of the column."""
    from recuse import tables
    from recuse.cells import as_text

    rng = np.random.default_rng(4)
    ids = [" p0", "p0 ", "p1", "\u3000p2", np.str_("p3 ")]
    cells = [ids[i] for i in rng.integers(0, len(ids), 500)]
    cells[::50] = [None, np.nan] * 5
    s = pd.Series(cells, dtype=object)
    # what _coerce did row by row: a missing cell as it is, any other as text
    cells_of = np.where(s.isna(), s.to_numpy(object), as_text(s).to_numpy(object))
    by_row = pd.Series(cells_of, dtype=object)
    for strip, want in ((True, by_row.str.strip()), (False, by_row)):
        got = tables._texts_by_value(s, strip=strip)
        assert got.dtype == object and len(got) == len(s)
        assert [type(v) for v in got] == [type(v) for v in want]
        assert got.fillna("<missing>").tolist() == want.fillna("<missing>").tolist()
        assert [v is None for v in got] == [v is None for v in s]
    numbers = [f"{x!r}" for x in rng.normal(size=400) * 10.0 ** rng.integers(-5, 5, 400)]
    numbers[::40] = ["x", "", " 2.5 ", "1e400", "-0", "7", "", "nan", "1_0", "inf"]
    text = pd.Series(numbers, dtype="str").replace("", np.nan)
    want = pd.to_numeric(pd.Series(numbers, dtype=object).replace("", np.nan), errors="coerce")
    got = tables._to_numeric(text)
    assert np.array_equal(got.to_numpy(float), want.to_numpy(float), equal_nan=True)


def test_ids_are_read_without_the_spaces_around_them() -> None:
    """A prompt_id "p0 " beside "p0" (a hand-edited CSV) was a second prompt: the bootstrap
    resampled the two as independent clusters, and a ratings file's dimension " ok" was
    a second dimension. Ids are read without the spaces around them, as model names are;
    inner spaces stay."""
    pairs = pd.DataFrame({"item_id": ["i1", " i2", "i3"], "prompt_id": ["p0", "p0 ", "p 1"],
                          "model_a": "m1", "model_b": "m2", "judge": "j",
                          "p_a": [0.9, 0.2, 0.6]})  # fmt: skip
    got = validate_pairs(pairs)
    assert got["prompt_id"].tolist() == ["p0", "p0", "p 1"]
    assert got["item_id"].tolist() == ["i1", "i2", "i3"]
    with pytest.raises(InputError, match="empty prompt_id"):
        validate_pairs(pairs.assign(prompt_id=["p0", "  ", "p1"]))
    for dtype in ("str", object):  # a CSV file's column, a DataFrame's: its row named
        with pytest.raises(InputError, match="empty prompt_id") as err:
            validate_pairs(pairs.assign(prompt_id=pd.Series(["p0", "p1", " "], dtype=dtype)))
        assert err.value.row == 3


def _rated(dimensions: list[str], *, answers: int) -> pd.DataFrame:
    """One judge's rating of each of ``answers`` answers in each of ``dimensions``."""
    rows = [
        {"prompt_id": f"p{i}", "model": "m", "dimension": d, "judge": "j",
         "rating": float(k + 1), "reference": float(k)}
        for i in range(answers)
        for k, d in enumerate(dimensions)
    ]  # fmt: skip
    return pd.DataFrame(rows)


def test_spellings_one_judge_rates_one_answer_in_stay_two_dimensions() -> None:
    """An Inspect log whose scorers 'match' and 'Match' both grade every sample: the two
    are two dimensions (one judge rates each answer in both). Joined as one spelling,
    each answer had two ratings in one dimension (a duplicate row, its two grades
    pooled), with a note saying they were one."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReaderNote)
        out = validate_ratings(_rated(["match", "Match"], answers=4))
    assert sorted(out["dimension"].unique()) == ["Match", "match"]
    assert not out.duplicated(["prompt_id", "model", "dimension", "judge"]).any()


def test_many_dimensions_spelled_two_ways_are_named_three_and_counted() -> None:
    """3,000 dimensions each written 'DimK' on one answer and 'dimK' on another: each
    pair is one dimension, and the note names the first three and counts the others
    (it listed all 3,000, 80,000 characters, and grouped them in a time quadratic in the
    dimensions: 273 s on 1M rows of 20,000 such pairs)."""
    k = 3_000
    t = pd.DataFrame(
        {"prompt_id": ["p", "q"] * k, "model": "m", "judge": "j", "rating": 1.0,
         "reference": 1.0,
         "dimension": [f"{c}{i}" for i in range(k) for c in ("Dim", "dim")]}
    )  # fmt: skip
    with pytest.warns(ReaderNote) as caught:
        out = validate_ratings(t)
    (note,) = [str(w.message) for w in caught if "dimension names" in str(w.message)]
    assert out["dimension"].nunique() == k
    assert out["dimension"].tolist() == [f"Dim{i}" for i in range(k) for _ in range(2)]
    assert "'Dim0', 'dim0' as 'Dim0'; 'Dim1', 'dim1' as 'Dim1'; 'Dim2', 'dim2' as 'Dim2'" in note
    assert "; and 2,997 more dimensions so spelled" in note and len(note) < 500


def test_spellings_that_give_one_answer_two_references_stay_two_dimensions() -> None:
    """Judge a rates each answer in 'Help' against a reference of 1, judge b in 'help'
    against 5: two dimensions on two scales, which 27857ce3 read as such. Joined, the
    file was refused (one answer with references 1 and 5)."""
    t = pd.concat(
        [_rated(["Help"], answers=4).assign(judge="a", reference=1.0),
         _rated(["help"], answers=4).assign(judge="b", reference=5.0)],
        ignore_index=True,
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReaderNote)
        out = validate_ratings(t)
    assert sorted(out["dimension"].unique()) == ["Help", "help"]
    with pytest.warns(ReaderNote, match="'Help', 'help' as 'Help'"):  # one scale: joined
        assert validate_ratings(t.assign(reference=1.0))["dimension"].unique().tolist() == ["Help"]


def test_among_is_isin_as_python_sets_read_it() -> None:
    """recuse.cells.among (the id lookups of replay, the familiarity ensemble, sample and
    the probe tables, where pandas 3's str ``isin`` made a pyarrow scalar per value) marks
    the cells a Python set holds, in str, string[pyarrow] and object columns and an Index,
    missing cells marked by no set of ids, from a set, a dict's keys, an array or an
    Index of values; the same as pandas' own ``isin``."""
    from recuse.cells import among

    rng = np.random.default_rng(7)
    ids = [f"item-{i}" for i in range(400)]
    cells: list[str | None] = [ids[i] for i in rng.integers(0, 400, 3000)]
    cells[::101] = [None] * len(cells[::101])
    chosen = [ids[i] for i in rng.choice(400, 150, replace=False)] + ["not-a-cell"]
    want = [c is not None and c in set(chosen) for c in cells]
    assert 0 < sum(want) < len(cells)
    for dtype in ("str", "string[pyarrow]", object):
        column = pd.Series(cells, dtype=dtype)
        for values in (set(chosen), dict.fromkeys(chosen), np.array(chosen, dtype=object),
                       pd.Index(chosen, dtype="str")):  # fmt: skip
            got = among(column, values)
            assert got.dtype == bool and got.tolist() == want, (dtype, type(values))
            assert got.tolist() == column.isin(list(values)).tolist()
        assert among(pd.Index(column), chosen).tolist() == want


def test_among_takes_any_missing_value_for_a_missing_text_cell_as_isin_does() -> None:
    """pandas' ``isin`` of a text (``str``, ``string[pyarrow]``, ``string[python]``) or
    categorical column takes None, NaN and pd.NA in the values for one missing value;
    ``among`` compared the cells as Python objects, where a NaN cell is not a None value
    (a ``str`` column's missing cell is NaN, a ``string`` one's pd.NA). Each case
    below was worked out by hand; pandas' own ``isin`` gives the same."""
    from recuse.cells import among

    cells = ["a", None, "b"]
    for dtype in ("str", "string[pyarrow]", "string[python]", "category"):
        column = pd.Series(cells, dtype=dtype)
        for values, want in (
            (["a", None], [True, True, False]),
            (["b", float("nan")], [False, True, True]),
            ([pd.NA], [False, True, False]),
            (pd.Index(["a", None], dtype="str"), [True, True, False]),
            (["a"], [True, False, False]),  # no missing value: a missing cell is not among
            ([], [False, False, False]),
        ):
            assert among(column, values).tolist() == want, (dtype, values)
            assert column.isin(list(values)).tolist() == want, (dtype, values)
        assert among(pd.Index(column), [None]).tolist() == [False, True, False]
    # object cells are Python objects, as isin reads them: a None cell is not a NaN value
    column = pd.Series(["a", None, float("nan")], dtype=object)
    assert among(column, [None]).tolist() == column.isin([None]).tolist() == [False, True, False]


def test_a_number_written_with_a_plus_sign_is_read_as_float_reads_it(tmp_path: Path) -> None:
    """A rating written "+0.12345678901234567e-1" is the float Python's ``float()`` gives
    (correctly rounded), as it is without the sign: pandas 3.1's ``to_numeric`` read
    about one such text in five as a neighbouring float (1,832 of these 10,000), where
    ``pandas.read_csv`` of the same file and every text without the sign were exact."""
    from recuse.data.inputs import load_input
    from recuse.simulate.ratings import simulate_ratings

    rng = np.random.default_rng(11)
    table = simulate_ratings(n_prompts=100, dimensions=("d1", "d2", "d3", "d4"), seed=3).ratings
    texts = [f"+{d:.17e}" for d in rng.random(len(table)) * 10.0 ** rng.integers(-5, 5)]
    texts[:3] = ["+9.678934028836e-50", " +3", "+.5"]
    table = table.assign(rating=texts, status="ok")
    table.to_csv(tmp_path / "r.csv", index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = load_input(tmp_path / "r.csv", table="ratings").frame["rating"].to_numpy()
    want = np.array([float(t) for t in texts])
    assert got.dtype == float and len(got) == len(texts) == 10_000
    assert np.array_equal(got.view(np.uint64), want.view(np.uint64))
    assert (want[:3] == [9.678934028836e-50, 3.0, 0.5]).all()
    assert np.array_equal(pd.read_csv(tmp_path / "r.csv")["rating"].to_numpy(), want)


def _decimal_texts(rng: np.random.Generator, n: int) -> list[str]:
    """``n`` random decimal texts (1 to 40 digits, a sign or none, an exponent from -330
    to 310 or none), the exact midpoints between neighbouring floats and the decimals
    just above and below them in 40 digits, and the edges of the float range."""
    from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, localcontext

    out = []
    for _ in range(n):
        digits = "".join(map(str, rng.integers(0, 10, int(rng.integers(1, 41)))))
        sign = ("", "-", "+")[int(rng.integers(0, 3))]
        if rng.random() < 0.3:
            cut = int(rng.integers(0, len(digits) + 1))
            out.append(
                f"{sign}{digits[:cut]}.{digits[cut:]}" if cut < len(digits) else sign + digits
            )
        else:
            out.append(f"{sign}{digits[0]}.{digits[1:]}e{int(rng.integers(-330, 311))}")
    bits = rng.integers(1, 0x7FEFFFFFFFFFFFFF, n // 20, dtype=np.int64).view(np.float64)
    for x in bits:
        with localcontext() as ctx:
            ctx.prec = 800  # the midpoint exactly (at most 767 significant digits)
            mid = (Decimal(float(x)) + Decimal(float(np.nextafter(x, np.inf)))) / 2
        out.append(str(mid))
        for rounding in (ROUND_CEILING, ROUND_FLOOR):  # 40 digits, just above and below
            with localcontext() as ctx:
                ctx.prec, ctx.rounding = 40, rounding
                out.append(str(+mid))
    return [
        *out,
        "1e309", "-1e309", "1e-400", "4.9406564584124654e-324", "2.4703282292062327e-324",
        "2.4703282292062328e-324", "1.7976931348623157e308", "1.7976931348623159e308",
        "9007199254740993", "18446744073709551617", "9" * 400, "-0", "007", ".5", "5.",
    ]  # fmt: skip


def test_plain_decimals_are_read_correctly_rounded_in_every_column_kind() -> None:
    """A plain decimal in a text column is the float Python's ``float()`` gives (the
    nearest, halves to even), bit for bit: 30,000 random decimals of up to 40 digits,
    1,500 exact midpoints of neighbouring floats (a tie: the even one) and 3,000
    decimals just beside them, and the range's
    edges, in an Arrow column (read by Arrow's cast) and an object one (by pandas'
    to_numeric), where pandas alone missed the signed ones."""
    from recuse.tables import _to_numeric

    texts = _decimal_texts(np.random.default_rng(5), 30_000)
    want = np.array([float(t) for t in texts])
    for dtype in ("str", object):
        got = _to_numeric(pd.Series(texts, dtype=dtype)).to_numpy(dtype=float)
        assert np.array_equal(got.view(np.uint64), want.view(np.uint64)), dtype
    # texts that are no plain decimal, or one pandas reads as no number (more than
    # 4,300 digits: Python's int_max_str_digits), as pandas reads them (NaN: no number)
    odd = [" 3 ", "nan", "NaN", "-inf", "Infinity", "1_000", "\u0663", "0x10", "3\u00a0",
           "\u30003", "+ 3", "1e", "9" * 5000, "1" * 4300, "1" * 4301, "-0", None]  # fmt: skip
    want_odd = [3.0, np.nan, np.nan, -np.inf, np.inf] + [np.nan] * 7
    want_odd += [np.nan, float("1" * 4300), np.nan, -0.0, np.nan]
    for dtype in ("str", object):
        got = _to_numeric(pd.Series(odd, dtype=dtype)).to_numpy(dtype=float)
        assert np.array_equal(got, want_odd, equal_nan=True), dtype
        assert np.signbit(got[-2])
