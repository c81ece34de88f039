"""FastChat MT-Bench pair judgments (model_judgment/*_pair.jsonl) -> pairs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recuse.data.fastchat import read_fastchat_pairs
from recuse.data.importers import sniff
from recuse.data.inputs import load_input
from recuse.errors import InputError
from recuse.metrics.bootstrap import Resampling
from recuse.roster import ModelsNotInRoster, Roster

FIXTURE = Path(__file__).parent / "importers" / "gpt-4_pair.jsonl"

# by hand from the fixture: (item, p_a_first from g1, p_a_second from g2, statuses)
EXPECTED = {
    "81/gpt-4/vicuna-13b-v1.2/turn1": (1.0, 1.0, "ok", "ok"),
    "81/gpt-4/vicuna-13b-v1.2/turn2": (1.0, 0.0, "ok", "ok"),
    "82/claude-v1/gpt-3.5-turbo/turn1": (0.5, 0.0, "ok", "ok"),
    "82/alpaca-13b/gpt-4/turn1": (np.nan, 0.0, "unparsed", "ok"),
    "111/llama-13b/gpt-3.5-turbo/turn1": (np.nan, np.nan, "failed", "unparsed"),
    "83/vicuna-13b-v1.2/gpt-3.5-turbo/turn1": (0.0, 0.5, "ok", "ok"),
}


@pytest.fixture(scope="module")
def pairs() -> pd.DataFrame:
    return read_fastchat_pairs(FIXTURE, roster=Roster.builtin())


def test_both_games_in_the_ab_frame(pairs: pd.DataFrame) -> None:
    assert list(pairs["item_id"]) == list(EXPECTED)
    for _, row in pairs.iterrows():
        first, second, s1, s2 = EXPECTED[row["item_id"]]
        np.testing.assert_equal([row["p_a_first"], row["p_a_second"]], [first, second])
        assert (row["status_first"], row["status_second"]) == (s1, s2)
    # p_a is the mean over the games with a verdict: 1, .5, .25, 0 (one game), NaN, .25
    np.testing.assert_allclose(pairs["p_a"], [1.0, 0.5, 0.25, 0.0, np.nan, 0.25])
    assert pairs["human"].isna().all()


def test_names_go_through_the_roster(pairs: pd.DataFrame) -> None:
    assert set(pairs["judge"]) == {"gpt-4"}
    assert pairs.loc[0, "model_b"] == "vicuna-13b"  # vicuna-13b-v1.2 is an alias
    assert list(pairs["prompt_id"]) == ["81", "81", "82", "82", "111", "83"]
    assert list(pairs["turn"]) == [1, 2, 1, 1, 1, 1]
    assert pairs.loc[4, "judge_prompt"] == "pair-math-v1"


def test_games_follow_the_raw_winners() -> None:
    """Independently of the reader: g1 names the winner with model_1 shown first, g2 with
    model_2 shown first, both by model name."""
    table = read_fastchat_pairs(FIXTURE, roster=Roster.builtin())
    raw = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
    for rec, (_, row) in zip(raw, table.iterrows(), strict=True):
        for game, col in (("g1", "p_a_first"), ("g2", "p_a_second")):
            winner = rec[f"{game}_winner"]
            want = {"model_1": 1.0, "model_2": 0.0, "tie": 0.5}.get(winner, np.nan)
            np.testing.assert_equal(row[col], want)


def test_sniffed_and_loaded_as_an_input() -> None:
    assert sniff(FIXTURE) == "fastchat-pair"
    inp = load_input(FIXTURE, roster=Roster.builtin())
    assert inp.table == "pairs" and inp.source.format == "fastchat-pair"
    assert inp.source.judges == ("gpt-4",) and len(inp.frame) == 6


def _write(tmp_path: Path, records: list[dict[str, object]]) -> Path:
    path = tmp_path / "judge_pair.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _records() -> list[dict[str, object]]:
    return [json.loads(line) for line in FIXTURE.read_text().splitlines()[:2]]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("g2_winner", "model_3", "row 2, column 'g2_winner': unknown winner 'model_3'"),
        ("g1_winner", "A", "row 2, column 'g1_winner': unknown winner 'A'"),
        ("judge", ["gpt-4"], "row 2, column 'judge': judge must be [judge model, prompt name]"),
        ("turn", 3, "row 2, column 'turn': turn must be 1 or 2"),
        ("model_1", None, "row 2, column 'model_1': expected a name or id"),
        ("m1_score", 7, "row 2, column 'm1_score': a single-answer grading record"),
    ],
)
def test_bad_records_name_line_and_field(
    tmp_path: Path, field: str, value: object, message: str
) -> None:
    records = _records()
    records[1][field] = value
    with pytest.raises(InputError) as err:
        read_fastchat_pairs(_write(tmp_path, records), roster=Roster.builtin())
    assert message in str(err.value)


def test_missing_key_and_unknown_model(tmp_path: Path) -> None:
    records = _records()
    del records[0]["g2_winner"]
    with pytest.raises(
        InputError, match=r"line 1 \(data row 1\), column 'g2_winner': the line lacks key"
    ):
        read_fastchat_pairs(_write(tmp_path, records), roster=Roster.builtin())
    records = _records()
    records[0]["model_2"] = "my-model"
    with pytest.raises(InputError, match="'my-model' is not in the roster"):
        read_fastchat_pairs(
            _write(tmp_path, records), roster=Roster.builtin(), unknown_models="error"
        )
    with pytest.warns(ModelsNotInRoster, match="model 'my-model' is not in the roster"):
        kept = read_fastchat_pairs(_write(tmp_path, records), roster=Roster.builtin())
    assert kept.loc[0, "model_b"] == "my-model"


def test_round_trip_recovers_a_planted_position_bias(tmp_path: Path) -> None:
    """A simulated judge preferring the first slot (rate 0.7), written as FastChat would
    (winners by model name, game 2 swapped), read back: the same verdicts, the same
    first-position rate, near the planted one."""
    from recuse.metrics.position import first_position_rate
    from recuse.simulate.pairs import PlantedBias, simulate_pairs

    sim = simulate_pairs(
        judges={"gpt-4": PlantedBias(position=0.2, accuracy=0.7)},
        models=("gpt-4", "claude-v1", "vicuna-13b", "gpt-3.5-turbo"),
        n_prompts=150,
        pairs_per_prompt=2,
        seed=3,
    ).pairs
    winner = {1.0: "model_1", 0.0: "model_2", 0.5: "tie"}
    records = [
        {
            "question_id": i,
            "model_1": row.model_a,
            "model_2": row.model_b,
            "g1_winner": winner[row.p_a_first],
            "g2_winner": winner[row.p_a_second],  # by model name, as FastChat maps game 2
            "judge": ["gpt-4", "pair-v2"],
            "turn": 1,
        }
        for i, row in enumerate(sim.itertuples())
    ]
    back = read_fastchat_pairs(_write(tmp_path, records), roster=Roster.builtin())
    np.testing.assert_array_equal(back["p_a_first"], sim["p_a_first"])
    np.testing.assert_array_equal(back["p_a_second"], sim["p_a_second"])
    rate = first_position_rate(back, boot=Resampling(n_boot=200)).estimate
    assert rate == pytest.approx(first_position_rate(sim, boot=Resampling(n_boot=200)).estimate)
    assert rate == pytest.approx(0.7, abs=0.06)


def test_a_first_line_missing_a_winner_is_still_read_as_fastchat(tmp_path: Path) -> None:
    """The format is recognised from the keys of the first lines, not the first line
    alone: a file whose first record lacks g2_winner gets FastChat's error naming the
    key; before, it was read as a plain table and the error said to flatten 'judge'."""
    records = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
    del records[0]["g2_winner"]
    path = _write(tmp_path, records)
    assert sniff(path) == "fastchat-pair"
    with pytest.raises(InputError, match="g2_winner") as err:
        load_input(path, roster=Roster.builtin())
    assert "flatten" not in str(err.value)
