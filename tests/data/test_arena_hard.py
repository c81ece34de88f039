"""Arena-Hard-Auto judgments (v0.1 and v2.0 layouts) -> pairs."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from recuse.data.arena_hard import LABELS, read_arena_hard
from recuse.data.importers import sniff
from recuse.errors import InputError
from recuse.metrics.bootstrap import Resampling
from recuse.roster import Roster

HERE = Path(__file__).parent / "importers"
V01 = HERE / "arena-hard-v0.1_claude-3-haiku-20240307.jsonl"
V2 = HERE / "arena-hard-v2.0_qwq-32b.jsonl"
REAL_V01 = HERE / "arena-hard-v0.1_gpt-4-0613.jsonl"  # real records, see SOURCES.md


@pytest.fixture(scope="module")
def v01() -> pd.DataFrame:
    return read_arena_hard(V01, roster=Roster.builtin())


@pytest.fixture(scope="module")
def v2() -> pd.DataFrame:
    return read_arena_hard(V2, roster=Roster.builtin(), unknown_models="keep")


def test_v01_model_is_a_and_the_config_baseline_is_b(v01: pd.DataFrame) -> None:
    assert set(v01["model_a"]) == {"claude-3-haiku-20240307"}  # a dated name: its own model
    assert set(v01["model_b"]) == {"gpt-4-0314"}  # arena-hard-v0.1's baseline, not "gpt-4"
    assert set(v01["judge"]) == {"gpt-4-1106-preview"}
    # games (baseline first, model first): (A>>B, B>A), (A=B, A>B), (B>>A, A>>B),
    # (null, B>A), (B>A, A<<B); by hand for a = the model:
    np.testing.assert_equal(v01["p_a_second"].to_numpy(), [0.0, 0.5, 1.0, np.nan, 1.0])
    np.testing.assert_equal(v01["p_a_first"].to_numpy(), [0.0, 1.0, 1.0, 0.0, 0.0])
    np.testing.assert_allclose(v01["p_a"], [0.0, 0.75, 1.0, 0.0, 0.5])
    np.testing.assert_equal(v01["strength_second"].to_numpy(), [-2, 0, 2, np.nan, 1])
    np.testing.assert_equal(v01["strength_first"].to_numpy(), [-1, 1, 2, -1, -2])
    assert list(v01["status_second"]) == ["ok", "ok", "ok", "unparsed", "ok"]


def test_v2_reads_baseline_category_and_null_games(v2: pd.DataFrame) -> None:
    assert list(v2["model_b"]) == [
        "o3-mini-2025-01-31", "gemini-2.0-flash-001", "o3-mini-2025-01-31", "o3-mini-2025-01-31",
    ]  # fmt: skip
    assert list(v2["category"]) == ["hard_prompt", "creative_writing", "coding", "math"]
    np.testing.assert_allclose(v2["p_a"], [1.0, 0.0, 0.5, np.nan])
    assert list(v2["status_second"]) == ["ok", "ok", "failed", "unparsed"]
    assert list(v2["status_first"]) == ["ok", "ok", "ok", "unparsed"]
    assert v2.loc[1, "strength_first"] == -2


def _upstream_score(record: dict[str, object], weight: int) -> float:
    """Arena-Hard's show_result.py battle outcomes for the model, re-derived here from its
    documented label table: game 2 as written, game 1 reversed; ``>>`` counts ``weight``."""
    win = {"A>B": 1.0, "A>>B": 1.0, "A=B": 0.5, "A<<B": 0.0, "A<B": 0.0, "B>A": 0.0,
           "B>>A": 0.0, "B=A": 0.5, "B<<A": 1.0, "B<A": 1.0}  # fmt: skip
    games = record["games"]
    assert isinstance(games, list)
    s1, s2 = games[0]["score"], games[1]["score"]
    n1, n2 = (weight if ">>" in s or "<<" in s else 1 for s in (s1, s2))
    outcomes = [win[s2]] * n2 + [1 - win[s1]] * n1
    return float(np.mean(outcomes))


def test_agrees_with_upstream_scoring(v01: pd.DataFrame) -> None:
    """p_a is upstream's battle mean with weight 1; the strength columns give its weight-3
    mean (a significant verdict counts three times)."""
    records = [json.loads(line) for line in V01.read_text().splitlines()]
    both = v01["status_first"].eq("ok") & v01["status_second"].eq("ok")
    for i in np.flatnonzero(both.to_numpy()):
        row = v01.iloc[i]
        assert row["p_a"] == pytest.approx(_upstream_score(records[i], 1))
        w = [3 if abs(row[f"strength_{o}"]) == 2 else 1 for o in ("first", "second")]
        p = [row["p_a_first"], row["p_a_second"]]
        assert np.dot(w, p) / sum(w) == pytest.approx(_upstream_score(records[i], 3))


def test_label_table_is_antisymmetric() -> None:
    for label, strength in LABELS.items():
        mirrored = label.replace("A", "x").replace("B", "A").replace("x", "B")
        assert LABELS[mirrored] == -strength


def test_baseline_option_and_sniffing() -> None:
    other = read_arena_hard(V01, roster=Roster.builtin(), baseline="gpt-3.5-turbo")
    assert set(other["model_b"]) == {"gpt-3.5-turbo"}
    assert sniff(V01) == "arena-hard" and sniff(V2) == "arena-hard"


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda r: r["games"][1].update(score="A>>>B"), "column 'games[1].score': unknown verdict"),
        (lambda r: r["games"][0].update(score=3), "column 'games[0].score': unknown verdict 3"),
        (lambda r: r.update(games="A>B"), "column 'games': games must be a list"),
        (lambda r: r.update(games=[{}, {}]), "column 'games[0]': a game must be an object"),
        (lambda r: r.pop("question_id"), "column 'uid': the record has neither uid"),
    ],
)
def test_bad_records_name_line_and_field(
    tmp_path: Path, edit: Callable[[dict[str, Any]], object], message: str
) -> None:
    records = [json.loads(line) for line in V01.read_text().splitlines()]
    edit(records[2])
    path = tmp_path / "judgments.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    with pytest.raises(InputError) as err:
        read_arena_hard(path, roster=Roster.builtin())
    assert "row 3" in str(err.value) and message in str(err.value)


def test_round_trip_recovers_a_planted_position_bias(tmp_path: Path) -> None:
    """A simulated judge preferring the first slot (rate 0.7), written as Arena-Hard-Auto
    v2.0 would (game 1 baseline first, game 2 model first), read back unchanged."""
    from recuse.metrics.position import first_position_rate
    from recuse.simulate.pairs import PlantedBias, simulate_pairs

    sim = simulate_pairs(
        judges={"gpt-4": PlantedBias(position=0.2, accuracy=0.7)},
        models=("gpt-4", "claude-v1", "vicuna-13b", "gpt-3.5-turbo"),
        n_prompts=150,
        pairs_per_prompt=2,
        seed=3,
    ).pairs
    records = [
        {
            "uid": f"u{i}",
            "category": "hard_prompt",
            "judge": "gpt-4",
            "model": row.model_a,
            "baseline": row.model_b,
            # game 1: baseline is A, the model (a) is B; game 2: the model is A
            "games": [
                {"score": "B>A" if row.p_a_second == 1 else "A>>B"},
                {"score": "A>>B" if row.p_a_first == 1 else "B>A"},
            ],
        }
        for i, row in enumerate(sim.itertuples())
    ]
    path = tmp_path / "gpt-4.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    back = read_arena_hard(path, roster=Roster.builtin())
    np.testing.assert_array_equal(back["p_a_first"], sim["p_a_first"])
    np.testing.assert_array_equal(back["p_a_second"], sim["p_a_second"])
    np.testing.assert_array_equal(back["strength_first"], np.where(sim["p_a_first"] == 1, 2, -1))
    np.testing.assert_array_equal(back["strength_second"], np.where(sim["p_a_second"] == 1, 1, -2))
    rate = first_position_rate(back, boot=Resampling(n_boot=200)).estimate
    assert rate == pytest.approx(first_position_rate(sim, boot=Resampling(n_boot=200)).estimate)
    assert rate == pytest.approx(0.7, abs=0.06)


def test_real_v01_file_keeps_the_two_gpt_4_snapshots_apart() -> None:
    """gpt-4-0613 judged against the baseline gpt-4-0314: two models, never one."""
    t = read_arena_hard(REAL_V01, roster=Roster.builtin())
    assert t["model_a"].tolist() == ["gpt-4-0613"] * 2
    assert t["model_b"].tolist() == ["gpt-4-0314"] * 2
    assert (t["model_a"] != t["model_b"]).all()
    assert t["baseline"].tolist() == ["gpt-4-0314"] * 2
    assert set(t["judge"]) == {"gpt-4-1106-preview"}
    # record 1: game 1 (baseline shown first) A>B, game 2 (model first) B>A: the baseline
    # wins both orders; record 2: A=B twice
    np.testing.assert_equal(t["p_a_first"].to_numpy(), [0.0, 0.5])
    np.testing.assert_equal(t["p_a_second"].to_numpy(), [0.0, 0.5])
    np.testing.assert_equal(t["p_a"].to_numpy(), [0.0, 0.5])


def test_a_first_line_missing_games_is_still_read_as_arena_hard(tmp_path: Path) -> None:
    """Recognised from the keys of the first lines: a first record without 'games'
    gets Arena-Hard's error naming the key; before, it was read as a plain table
    ('missing required column(s) item_id, prompt_id — did you mean --map uid=item_id')."""
    from recuse.data.inputs import load_input

    lines = REAL_V01.read_text().splitlines()
    first = json.loads(lines[0])
    del first["games"]
    path = tmp_path / "gpt-4-0613.jsonl"
    path.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    assert sniff(path) == "arena-hard"
    with pytest.raises(InputError, match="games") as err:
        load_input(path, roster=Roster.builtin())
    assert "--map" not in str(err.value)
