"""The plain-table reader's value options (issue #15): value maps, swapped frame,
confidence, model names in verdict cells, half mappings, errors that teach."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recuse.cli.app import parse_values
from recuse.data.columns import IGNORED, ColumnsIgnored
from recuse.data.inputs import load_input
from recuse.data.plain_tables import read_table
from recuse.data.value_maps import ValueReading
from recuse.errors import ConfigError, InputError
from recuse.roster import ModelsNotInRoster

PEER = Path(__file__).parents[2] / "examples" / "data" / "peer_verdicts.csv"
PEER_MAP = {
    "id": "item_id",
    "human_winner": "human",
    "judge_model": "judge",
    "judge_winner": "p_a_first",
    "judge_winner_swapped": "p_a_second",
}
SIDES = {"A": 1.0, "B": 0.0, "tie": 0.5}


def _csv(tmp_path: Path, rows: dict[str, list[object]], name: str = "f.csv") -> Path:
    path = tmp_path / name
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_peer_file_read_with_map_and_values_matches_a_hand_reading() -> None:
    raw = pd.read_csv(PEER, dtype=str)
    table = read_table(
        PEER, table="pairs", mapping=PEER_MAP, values={"human_winner": {"NEITHER": 0.5}}
    )
    human = raw["human_winner"].map({**SIDES, "neither": 0.5})
    np.testing.assert_array_equal(table["human"], human.to_numpy(float))
    np.testing.assert_array_equal(table["p_a_first"], raw["judge_winner"].map(SIDES))
    # the swapped column in the original frame is read as written ...
    np.testing.assert_array_equal(table["p_a_second"], raw["judge_winner_swapped"].map(SIDES))
    # ... and in the presented frame as 1 - p, the same as mapping A=0, B=1 by hand
    presented = read_table(
        PEER,
        table="pairs",
        mapping=PEER_MAP,
        values={"human_winner": {"neither": 0.5}},
        swapped_frame="presented",
    )
    by_map = read_table(
        PEER,
        table="pairs",
        mapping=PEER_MAP,
        values={"human_winner": {"neither": 0.5}, "judge_winner_swapped": {"A": 0, "B": 1}},
    )
    flipped = 1 - raw["judge_winner_swapped"].map(SIDES).to_numpy(float)
    np.testing.assert_array_equal(presented["p_a_second"], flipped)
    np.testing.assert_array_equal(by_map["p_a_second"], flipped)
    np.testing.assert_allclose(presented["p_a"], (table["p_a_first"] + flipped) / 2)
    # undated roster aliases became canonical ids; no prompt_id: one per prompt text
    assert set(table["model_a"]) >= {"claude-3.5-sonnet", "llama-3-70b"}
    assert table["prompt_id"].nunique() == raw["prompt"].nunique()
    assert (table.groupby("prompt_id")["prompt"].nunique() == 1).all()
    # the confidence column is not read, and it looks like a verdict
    why = "its name looks like a judge, verdict or label column"
    assert table.attrs[IGNORED] == {"judge_confidence": why}


def test_confidence_column_by_its_file_name() -> None:
    raw = pd.read_csv(PEER, dtype=str)
    table = read_table(
        PEER,
        table="pairs",
        mapping=PEER_MAP,
        values={"human_winner": {"neither": 0.5}},
        confidence="judge_confidence",
    )
    conf = raw["judge_confidence"].astype(float)
    expected = np.select(
        [raw["judge_winner"] == "A", raw["judge_winner"] == "B"], [conf, 1 - conf], 0.5
    )
    np.testing.assert_allclose(table["p_a_first"], expected)
    assert table.attrs[IGNORED] == {}  # the confidence column is used now
    direct = read_table(
        PEER,
        table="pairs",
        mapping=PEER_MAP,
        values={"human_winner": {"neither": 0.5}},
        confidence="judge_confidence",
        confidence_of="a",
    )
    np.testing.assert_allclose(direct["p_a_first"], conf)


def test_value_map_applies_to_its_file_column_only(tmp_path: Path) -> None:
    path = _csv(
        tmp_path,
        {
            "item_id": ["1", "2", "3"],
            "prompt_id": ["p", "p", "q"],
            "label": ["yes", "no", "B"],  # "B" is left to the built-in rules
            "judge": ["gpt-4"] * 3,
            "verdict": ["Output (a)", "Output (b)", "0.25"],
        },
    )
    table = read_table(
        path,
        table="pairs",
        mapping={"label": "human", "verdict": "p_a"},
        values={"label": {"YES": 1, "no": 0}, "verdict": {"output (a)": 1, "output (b)": 0}},
    )
    assert table["human"].tolist() == [1.0, 0.0, 0.0]
    assert table["p_a"].tolist() == [1.0, 0.0, 0.25]
    with pytest.raises(ConfigError, match="not a probability"):
        read_table(path, table="pairs", values={"label": {"yes": 3}})
    with pytest.raises(InputError, match=r"the value map .* names 'human'") as info:
        read_table(path, table="pairs", mapping={"label": "human"}, values={"human": {"yes": 1}})
    assert "before mapping= renames them" in (info.value.fix or "")
    # one written value given two numbers (in any case) is refused, never last-one-wins
    with pytest.raises(ConfigError, match=r"'yes' and ' YES' are one value, given as 1 and 0"):
        read_table(path, table="pairs", values={"label": {"yes": 1, " YES": 0}})
    same = {"label": {"yes": 1, "Yes": 1, "no": 0}, "verdict": {"output (a)": 1, "output (b)": 0}}
    again = read_table(
        path, table="pairs", mapping={"label": "human", "verdict": "p_a"}, values=same
    )
    assert again["human"].tolist() == [1.0, 0.0, 0.0]


def test_values_option_refuses_a_value_given_two_numbers() -> None:
    assert parse_values(["label:yes=1;label:no=0", "label:yes=1"]) == {"label": {"yes": 1, "no": 0}}
    with pytest.raises(ConfigError, match=r"--values label: 'yes' is given twice, as 1 and 0.5"):
        parse_values(["label:yes=1,no=0", "label:yes=0.5"])


def test_model_names_as_verdicts_go_through_the_roster(tmp_path: Path) -> None:
    path = _csv(
        tmp_path,
        {
            "item_id": ["1", "2", "3"],
            "prompt_id": ["p", "p", "q"],
            "model_a": ["gpt4", "ChatGPT", "claude-3-5-sonnet"],
            "model_b": ["claude-v1", "gpt4_0613", "llama3-70b-instruct"],
            "human": ["GPT-4", "gpt-4-0613", "Claude-3.5-Sonnet"],
            "judge": ["gpt-4"] * 3,
            "p_a_first": ["claude", "gpt-3.5-turbo", "meta-llama-3-70b-instruct"],
        },
    )
    table = read_table(path, table="pairs")
    assert table["human"].tolist() == [1.0, 0.0, 1.0]
    assert table["p_a_first"].tolist() == [0.0, 1.0, 0.0]


def test_every_unknown_model_of_every_column_in_one_error(tmp_path: Path) -> None:
    path = _csv(
        tmp_path,
        {
            "item_id": ["1", "2", "3"],
            "prompt_id": ["p", "p", "q"],
            "model_a": ["gpt-4", "zeta-7b", "zeta-7b"],
            "model_b": ["omega-2", "claude-v1", "gpt-4"],
            "human": ["a", "b", "a"],
            "judge": ["gpt-4", "gpt-4", "house-judge"],
            "p_a_first": [1, 0, 1],
        },
    )
    with pytest.raises(InputError) as info:
        read_table(path, table="pairs", unknown_models="error")
    err = info.value
    listed = "3 model names are not in the roster: 'house-judge' (1 cell), 'omega-2' (1 cell), "
    assert listed in str(err)
    assert "'zeta-7b' (2 cells)" in str(err)
    assert (err.row, err.column) == (1, "model_b")  # the first row with one
    assert "unknown_models='keep'" in (err.fix or "")
    with pytest.warns(ModelsNotInRoster) as caught:  # the default: kept, one note
        table = read_table(path, table="pairs")
    assert table["model_a"].tolist() == ["gpt-4", "zeta-7b", "zeta-7b"]
    notes = [str(w.message) for w in caught if issubclass(w.category, ModelsNotInRoster)]
    assert len(notes) == 1 and "'house-judge', 'omega-2', 'zeta-7b'" in notes[0]


def test_half_mapping_warns_and_missing_columns_are_guessed(tmp_path: Path) -> None:
    with pytest.warns(ColumnsIgnored, match="no judge or verdict columns") as caught:
        table = read_table(
            PEER,
            table="pairs",
            mapping={"id": "item_id", "human_winner": "human"},
            values={"human_winner": {"neither": 0.5}},
        )
    message = str(caught[0].message)
    for col in ("judge_model", "judge_winner", "judge_winner_swapped", "judge_confidence"):
        assert col in message
    assert table["judge"].isna().all() and "category" not in table.attrs[IGNORED]
    # a column of A/B/tie words is a verdict by its values, whatever its name
    path = _csv(
        tmp_path,
        {"item_id": ["1", "2"], "prompt_id": ["p", "q"], "human": ["a", "b"], "col7": ["A", "B"]},
    )
    with pytest.warns(ColumnsIgnored, match="col7"):
        read_table(path, table="pairs")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_table(PEER, table="pairs", mapping=PEER_MAP, values={"human_winner": {"neither": 0}})
    with pytest.raises(InputError, match=r"missing required column\(s\) item_id —") as info:
        read_table(PEER, table="pairs")
    fix = info.value.fix or ""
    assert fix.startswith(  # read_table's own keyword (the command line's: --map)
        "did you mean mapping={'id': 'item_id', 'human_winner': 'human', 'judge_model': "
        "'judge', 'judge_winner': 'p_a_first', 'judge_winner_swapped': 'p_a_second'}"
    )
    assert "optional: model_a, model_b, human, judge, p_a_first" in fix
    # mapped, the file reads without labels, and the label-like column is named
    with pytest.warns(ColumnsIgnored, match="read without labels or verdicts.*human_winner"):
        read_table(PEER, table="pairs", mapping={"id": "item_id"})
    judged = {"id": "item_id", "judge_model": "judge", "judge_winner": "p_a_first"}
    with pytest.warns(ColumnsIgnored, match="no human column.*: 'human_winner', 'judge_winner_sw"):
        read_table(PEER, table="pairs", mapping=judged)
    # the file's own columns, not the ones the reader fills in
    assert fix.endswith("judge_winner_swapped, judge_confidence, category")


def test_value_options_refused_for_named_datasets_and_ratings(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="apply to files, not to named datasets"):
        load_input("llmbar-mtbench", table="pairs", reading=ValueReading(swapped_frame="presented"))
    with pytest.raises(ConfigError, match="pairs files, not ratings"):
        read_table(PEER, table="ratings", confidence="judge_confidence")


def test_a_judge_without_verdicts_is_told_which_columns_to_map() -> None:
    with pytest.raises(InputError, match="names a judge but has no verdict column") as info:
        read_table(
            PEER,
            table="pairs",
            mapping={"id": "item_id", "human_winner": "human", "judge_model": "judge"},
        )
    fix = info.value.fix or ""
    assert fix.startswith(
        "did you mean mapping={'judge_winner': 'p_a_first', 'judge_winner_swapped': 'p_a_second'}?"
    )


def test_value_map_leaves_nested_cells_to_the_scalar_check(tmp_path: Path) -> None:
    path = tmp_path / "nested.jsonl"
    path.write_text(
        '{"item_id": "1", "prompt_id": "p", "human": "yes", "judge": "gpt-4", "p_a": 1}\n'
        '{"item_id": "2", "prompt_id": "p", "human": ["no"], "judge": "gpt-4", "p_a": 0}\n',
        "utf-8",
    )
    with pytest.raises(InputError, match="found a JSON list") as info:
        read_table(path, table="pairs", values={"human": {"yes": 1, "no": 0}})
    assert (info.value.row, info.value.column) == (2, "human")


def test_nested_or_boolean_confidence_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "conf.jsonl"
    rows = (
        '{"item_id": "%s", "prompt_id": "p", "human": "a", "judge": "gpt-4", "p_a": "A", "c": %s}\n'
    )
    path.write_text(rows % ("1", "0.7") + rows % ("2", "[0.8]"), "utf-8")
    with pytest.raises(InputError, match="found a JSON list") as info:
        read_table(path, table="pairs", confidence="c")
    assert (info.value.row, info.value.column) == (2, "c")
    path.write_text(rows % ("1", "0.7") + rows % ("2", "true"), "utf-8")
    with pytest.raises(InputError, match=r"expected a confidence .* got True"):
        read_table(path, table="pairs", confidence="c")
    path.write_text(rows % ("1", "0.7") + rows % ("2", "0.6"), "utf-8")
    table = read_table(path, table="pairs", confidence="c")
    assert table["p_a"].tolist() == [0.7, 0.6]  # p_a alone: the confidence goes with it


def test_a_column_with_spaces_around_its_name_is_mapped_by_the_name_without_them(
    tmp_path: Path,
) -> None:
    # --map strips what it is given, so the hint for " item_id" and "human " names them
    # without the spaces, and that mapping finds them (it said "--map  item_id=item_id,
    # human =human", which --map could not take)
    path = _csv(
        tmp_path,
        {" item_id": ["1", "2"], "prompt_id": ["p", "q"], "human ": ["a", "b"]},
    )
    with pytest.raises(InputError, match=r"missing required column\(s\) item_id —") as info:
        read_table(path, table="pairs")
    hint = "did you mean mapping={'item_id': 'item_id', 'human': 'human'}? "
    assert (info.value.fix or "").startswith(hint)
    got = read_table(path, table="pairs", mapping={"item_id": "item_id", "human": "human"})
    assert list(got["item_id"]) == ["1", "2"] and list(got["human"]) == [1.0, 0.0]
    # a name the file holds as it is given wins over a padded one
    both = _csv(tmp_path, {"item_id": ["1"], " item_id": ["9"], "prompt_id": ["p"]})
    assert list(read_table(both, table="pairs", mapping={"item_id": "item_id"})["item_id"]) == ["1"]


def test_two_columns_of_one_name_but_for_spaces_are_named_not_a_wrong_guess(
    tmp_path: Path,
) -> None:
    # " human" and "human " both in the file: --map human=human said "did you mean
    # 'human '?", a name --map strips back to human; neither column could be mapped
    path = _csv(
        tmp_path,
        {
            "item_id": ["1", "2"],
            "prompt_id": ["p", "q"],
            " human": ["a", "b"],
            "human ": ["b", "a"],
        },
    )
    with pytest.raises(InputError) as info:
        read_table(path, table="pairs", mapping={"human": "human"})
    assert info.value.column == "human" and "did you mean" not in str(info.value)
    assert "2 columns named so with spaces around it: ' human', 'human '" in str(info.value)
    assert "in Python give the exact name (' human' or 'human ')" in (info.value.fix or "")
    # the exact name (Python's mapping=) reads the one meant
    got = read_table(path, table="pairs", mapping={"human ": "human"})
    assert list(got["human"]) == [0.0, 1.0]


@pytest.mark.parametrize(
    ("column", "value", "feeds"),
    [
        ("model_a", "gpt-4o", "feeds model_a"),
        ("id", "peer-000", "feeds item_id"),
        ("judge_model", "gpt-4o", "feeds judge"),
        ("judge_confidence", "0.93", "is not read as a label or verdict"),
        ("prompt", "x", "feeds prompt"),
    ],
)
def test_a_value_map_of_a_column_that_is_no_label_or_verdict_is_refused(
    column: str, value: str, feeds: str
) -> None:
    """A value map gives P(a better): one on a model, id, judge or confidence column
    wrote numbers there, read as a model '1.0' (a note), an item id or a confidence
    with nothing said. Now an error naming the file column and what it feeds."""
    values = {"human_winner": {"neither": 0.5}, column: {value: 1.0}}
    with pytest.raises(InputError) as err:
        read_table(PEER, table="pairs", mapping=PEER_MAP, values=values)
    assert err.value.column == column and feeds in err.value.reason
    assert "p_a_first" in (err.value.fix or "")


@pytest.mark.parametrize("number", [10**400, -(10**400), float("nan"), True, "1"])
def test_a_value_maps_number_that_is_no_probability_is_refused_by_name(number: object) -> None:
    """values={'human': {'Left': 10**400}} (an int past any float) was an OverflowError
    traceback from the check; each is the map's own error, naming the value."""
    from recuse.data.value_maps import check_value_map

    with pytest.raises(ConfigError, match=r"^value map for 'human': 'Left' → .* is not a prob"):
        check_value_map({"human": {"Left": number, "Right": 0}})  # type: ignore[dict-item]


def test_a_value_map_error_names_the_flag_and_the_recuse_toml_section() -> None:
    """A recuse.toml's [values] is read by every command: its errors said 'the value
    map (--values)' of a flag never given."""
    from recuse.data.value_maps import apply_values
    from recuse.tables import renaming_by

    df = pd.DataFrame({"w": ["A"]})
    with pytest.raises(InputError) as err, renaming_by("flag"):  # as the command line reads
        apply_values(df, {"nosuch": {"A": 1.0}}, Path("t.csv"))
    assert str(err.value).startswith(
        "t.csv, column 'nosuch': the value map (--values, or [values] in recuse.toml) names "
        "'nosuch', which is not in the file"
    )
    # a Python caller gave values= (recuse.audit(frame, values=...)): no flag it never wrote
    with pytest.raises(InputError) as err:
        apply_values(df, {"nosuch": {"A": 1.0}}, Path("t.csv"))
    assert str(err.value).startswith(
        "t.csv, column 'nosuch': the value map (values=) names 'nosuch', which is not in the file"
    )
    assert "--" not in str(err.value)


def test_a_swapped_column_read_in_the_wrong_frame_is_said() -> None:
    """The peer file's swapped verdicts are written as the judge saw them. Read in the
    default frame (A = a), they agree with the humans less often than chance while the
    first order agrees more often, and every estimate set the two orders against each
    other (agreement 0.50, self-preference −0.008 'no detectable bias', for 0.61 and a
    material +0.20) with nothing said. A note says so, only in the wrong frame."""
    from recuse.data.reading_notes import balanced_agreement

    raw = pd.read_csv(PEER, dtype=str)
    human = raw["human_winner"].map(SIDES)  # 'neither' is no label here
    labelled = human.isin((0.0, 1.0))
    h = human[labelled].to_numpy(float)
    first = raw["judge_winner"].map(SIDES)[labelled].to_numpy(float)
    second = raw["judge_winner_swapped"].map(SIDES)[labelled].to_numpy(float)

    def ba(p: np.ndarray) -> float:  # by hand: the two labels' shares of the win, halved
        return 0.5 * p[h == 1].mean() + 0.5 * (1 - p[h == 0]).mean()

    assert balanced_agreement(first, h)[0] == pytest.approx(ba(first))
    assert (round(100 * ba(first)), round(100 * ba(second))) == (61, 43)
    mapping, values = PEER_MAP, {"human_winner": {"neither": 0.5}}
    wrong = load_input(PEER, table="pairs", mapping=mapping, reading=ValueReading(values=values))
    (note,) = [n for n in wrong.source.notes if "orders" in n]
    assert note.startswith(
        f"judge 'gpt-4o': over its {int(labelled.sum())} labelled pairs judged in both "
        "orders, its verdicts with a shown first give the human-preferred answer 61% of the "
        "win and those with b shown first 43%"
    )
    assert "swapped_frame='presented'" in note
    right = load_input(
        PEER,
        table="pairs",
        mapping=mapping,
        reading=ValueReading(values=values, swapped_frame="presented"),
    )
    assert not [n for n in right.source.notes if "orders" in n]


def test_a_confidence_below_one_half_in_the_verdict_given_is_refused(tmp_path: Path) -> None:
    """The confidence of the verdict given (--confidence-of winner) is read as
    P(a better) = c for A and 1 - c for B: a 0.4 beside A read 0.4, a pick of b. A judge's
    confidence below 0.5 is no two-way confidence (the chosen option's share among A, B
    and tie can be 0.4), and a quarter of the verdicts of a file so written were turned
    with nothing said. Refused, naming the row, the count and the way out; a tie's
    confidence and one at 0.5 stay readable, and --confidence-of a reads 0.4 as P(a)."""
    rows = {
        "item_id": ["1", "2", "3", "4"],
        "prompt_id": ["p", "q", "r", "s"],
        "human": ["A", "B", "A", "B"],
        "judge": "gpt-4",
        "p_a_first": ["A", "tie", "B", "A"],
        "c": [0.9, 0.4, 0.45, 0.4],
    }
    path = _csv(tmp_path, rows)
    with pytest.raises(InputError, match=r"confidence 0\.45 in a verdict for b") as info:
        read_table(path, table="pairs", confidence="c")
    assert (info.value.row, info.value.column) == (3, "c")
    assert "2 rows of the table hold one" in str(info.value)
    assert "confidence_of='a'" in (info.value.fix or "")
    direct = read_table(path, table="pairs", confidence="c", confidence_of="a")
    assert direct["p_a_first"].tolist() == [0.9, 0.4, 0.45, 0.4]
    rows["c"] = [0.9, 0.4, 0.5, 0.6]  # a tie at 0.4 is a tie; 0.5 is no pick either way
    table = read_table(_csv(tmp_path, rows), table="pairs", confidence="c")
    assert table["p_a_first"].tolist() == [0.9, 0.5, 0.5, 0.6]
