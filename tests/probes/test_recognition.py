"""Self-recognition: the table, a hand computation, and planted recovery through the runner."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recuse.errors import InputError
from recuse.judging.protocols import Pair, PairwiseProtocol
from recuse.judging.runner import Runner
from recuse.judging.store import Store
from recuse.metrics.bootstrap import Resampling
from recuse.metrics.ladder import self_preference_ladder
from recuse.metrics.recognition import recognition_vs_preference, self_recognition
from recuse.probes import RECOGNITION, build_recognition_table
from recuse.probes.run import judge_probes
from recuse.testing.planted_judge import PlantedJudge


def _pairs(judges: list[str], n: int) -> pd.DataFrame:
    """n pairs per judge: its own answer (carrying its signature) against another model's,
    on alternating sides."""
    rows = []
    for j in judges:
        for k in range(n):
            own = f"{k} squared is {k * k}. ({j} style)"
            other = f"The square of {k} equals {k * k}."
            a_own = k % 2 == 0
            rows.append(
                {
                    "item_id": f"{j}-{k}",
                    "prompt_id": f"q{k // 2}",
                    "prompt": f"What is {k} squared?",
                    "response_a": own if a_own else other,
                    "response_b": other if a_own else own,
                    "model_a": j if a_own else "other-model",
                    "model_b": "other-model" if a_own else j,
                }
            )
    return pd.DataFrame(rows)


def test_the_table_holds_only_pairs_with_the_judges_own_answer() -> None:
    pairs = _pairs(["j1", "j2"], 6)
    mixed = pd.concat(
        [pairs, pairs.head(1).assign(item_id="x", model_a="m3", model_b="m4")], ignore_index=True
    )
    table = build_recognition_table(mixed, judge="j1")
    assert set(table["probe"]) == {"original", RECOGNITION} and len(table) == 12
    assert table["base_item"].str.startswith("j1-").all()
    own = np.where(table["treated"] == "a", table["model_a"], table["model_b"])
    assert (own == "j1").all()
    rec, orig = table[table["probe"] == RECOGNITION], table[table["probe"] == "original"]
    assert (
        rec[["prompt", "response_a", "response_b"]].to_numpy().tolist()
        == orig[["prompt", "response_a", "response_b"]].to_numpy().tolist()
    )  # same texts, only the question differs
    with pytest.raises(InputError, match="no pair holds an answer by 'j9'"):
        build_recognition_table(pairs, judge="j9")


def test_the_authorship_question_enters_the_prompt_and_the_key() -> None:
    pair = Pair("i", "Q?", "one", "two")
    quality, authorship = PairwiseProtocol(), PairwiseProtocol(question="authorship")
    assert "which answer you wrote" in authorship.prompt(pair, "first").messages[0].content
    assert (
        quality.prompt(pair, "first").messages[0].content
        != authorship.prompt(pair, "first").messages[0].content
    )
    assert "question" not in quality.key_params()  # old stores keep their keys
    assert authorship.key_params()["question"] == "authorship"


def test_accuracy_is_the_mean_share_given_to_the_own_answer_by_hand() -> None:
    # judge j: own answer on a, b, a, b, a, b; p_a = P("I wrote A")
    p_a = [0.9, 0.2, 0.6, 0.5, 0.3, 0.1]
    t = pd.DataFrame(
        {
            "judge": "j",
            "probe": RECOGNITION,
            "item_id": [f"i{k}" for k in range(6)],
            "prompt_id": [f"q{k}" for k in range(6)],
            "model_a": ["j", "o", "j", "o", "j", "o"],
            "model_b": ["o", "j", "o", "j", "o", "j"],
            "p_a": p_a,
        }
    )
    # shares to own: 0.9, 0.8, 0.6, 0.5, 0.3, 0.9 -> mean 4.0/6; picks 1,1,1,.5,0,1 -> 4.5/6
    (r,), skipped = self_recognition(t, boot=Resampling(n_boot=200))
    assert not skipped
    assert r.estimate == pytest.approx(4.0 / 6)
    assert r.components["pick_rate"] == pytest.approx(4.5 / 6)
    assert r.ci_low <= r.estimate <= r.ci_high and r.n == 6
    # rows of other probes are ignored
    (again,), _ = self_recognition(
        pd.concat([t, t.assign(probe="original", p_a=0.0)]), boot=Resampling(n_boot=200)
    )
    assert again.estimate == pytest.approx(4.0 / 6)


PLANTS = {"j0": (0.0, 0.0), "j1": (0.1, 0.04), "j2": (0.2, 0.08), "j3": (0.3, 0.12)}


def test_planted_recognition_is_recovered_and_related_to_self_preference(tmp_path: Path) -> None:
    pairs = _pairs(list(PLANTS), 120)
    with Store(tmp_path / "s.db") as store:
        for j, (rec, pref) in PLANTS.items():
            judge = PlantedJudge(
                {}, model_id=j, signature=f"({j} style)", recognition=rec, self_preference=pref
            )
            table = build_recognition_table(pairs, judge=j)
            summary = judge_probes(Runner(judge, store, judge=j, progress=False), table)
            assert summary.ok == 4 * 120
        exported = store.export_pairs()
    results, skipped = self_recognition(exported, boot=Resampling(n_boot=400))
    assert not skipped
    got = {r.judge: r for r in results}
    for j, (rec, _) in PLANTS.items():
        assert got[j].estimate == pytest.approx(0.5 + rec, abs=0.01), j
        assert got[j].ci_low - 0.005 <= 0.5 + rec <= got[j].ci_high + 0.005, j
    original = exported[exported["probe"] == "original"]
    ladder, _ = self_preference_ladder(original, boot=Resampling(n_boot=200))
    own_win = [r for r in ladder if r.metric == "own_win_rate"]
    for r in own_win:  # 0.5 + planted preference (the quality terms average out)
        assert r.estimate == pytest.approx(0.5 + PLANTS[str(r.judge)][1], abs=0.03)
    table, corr = recognition_vs_preference(results, own_win)
    assert list(table["judge"]) == list(PLANTS) and corr["judges"] == 4
    assert corr["spearman"] == pytest.approx(1.0) and corr["pearson"] > 0.95
    _, few = recognition_vs_preference(results[:2], own_win)
    assert few["spearman"] is None and few["judges"] == 2


def test_every_component_has_its_definition() -> None:
    from recuse.metrics.probes import COMPONENTS as PROBE_COMPONENTS
    from recuse.metrics.recognition import COMPONENTS

    t = pd.DataFrame(
        {"judge": "j", "probe": RECOGNITION, "item_id": ["i0", "i1"], "prompt_id": ["q0", "q1"],
         "model_a": ["j", "o"], "model_b": ["o", "j"], "p_a": [0.9, 0.2]}
    )  # fmt: skip
    (r,), _ = self_recognition(t, boot=Resampling(n_boot=50), min_n=1)
    assert set(r.components) == set(COMPONENTS)
    assert set(PROBE_COMPONENTS) == {
        "flip_rate", "placebo_flip_rate", "words_concise", "words_verbose"
    }  # fmt: skip


def test_recognition_p_value_is_against_chance_not_zero() -> None:
    """Self-recognition's p-value is against chance, 0.5 (the report's no-bias value):
    a judge giving its own answer exactly half the share of 'I wrote it' has p near 1;
    before, the p-value was against 0 and came out at the resamples' floor."""
    n = 40
    t = pd.DataFrame(
        {
            "judge": "j",
            "probe": RECOGNITION,
            "item_id": [f"i{k}" for k in range(n)],
            "prompt_id": [f"q{k // 2}" for k in range(n)],
            "model_a": ["j" if k % 2 == 0 else "o" for k in range(n)],
            "model_b": ["o" if k % 2 == 0 else "j" for k in range(n)],
            "p_a": [0.9 if k % 4 in (0, 1) else 0.1 for k in range(n)],
        }
    )  # own answer's share: 0.9, 0.1, 0.1, 0.9, ... -> mean 0.5
    (r,), _ = self_recognition(t, boot=Resampling(n_boot=400, seed=0))
    assert r.estimate == pytest.approx(0.5)
    assert r.p_value > 0.5
