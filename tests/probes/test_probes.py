"""Probes: the edits, the probe table, and planted sensitivities recovered end to end."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recuse.errors import ConfigError, InputError
from recuse.judging.runner import Runner
from recuse.judging.store import Store
from recuse.metrics.bootstrap import Resampling
from recuse.metrics.probes import probe_effects
from recuse.probes import PROBES, apply_probe, build_probe_table, probe_bases
from recuse.probes.transforms import undo
from recuse.testing.planted_judge import PlantedJudge

QUESTION = "How do I boil an egg?"
ANSWER = "Put the egg in boiling water for 8 minutes.\n\n- cool it\n- peel it"


@pytest.mark.parametrize("name", list(PROBES))
def test_each_edit_is_deterministic_invertible_and_changes_only_its_target(name: str) -> None:
    q1, a1 = apply_probe(QUESTION, ANSWER, name, author="gpt-4")
    assert (q1, a1) == apply_probe(QUESTION, ANSWER, name, author="gpt-4")
    assert (q1, a1) != (QUESTION, ANSWER)
    if PROBES[name].target == "answer":
        assert q1 == QUESTION and ANSWER in a1
    else:
        assert a1 == ANSWER and q1.startswith(QUESTION)
    assert undo(name, q1, a1) == (QUESTION, ANSWER)
    with pytest.raises(ValueError):
        undo(name, QUESTION, ANSWER)


def _pairs(n: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "item_id": [f"i{k}" for k in range(n)],
            "prompt_id": [f"q{k // 2}" for k in range(n)],
            "prompt": [f"Question {k}: what is {k} squared?" for k in range(n)],
            "response_a": [f"It is {k * k}. First answer number {k}." for k in range(n)],
            "response_b": [f"The square of {k} is {k * k}, second answer." for k in range(n)],
            "model_a": "gpt-4",
            "model_b": "claude-v1",
        }
    )


def test_probe_table_never_edits_the_other_answer() -> None:
    pairs = _pairs(40)
    table = build_probe_table(pairs, probes=list(PROBES), author="gpt-4", seed=3)
    assert set(table["probe"]) == {"original", *PROBES}
    assert len(table) == 40 * (1 + len(PROBES))
    base = pairs.set_index("item_id")
    for r in table.itertuples():
        other = "response_b" if r.treated == "a" else "response_a"
        assert getattr(r, other) == base.loc[r.base_item, other]
    assert 10 < (table.drop_duplicates("base_item")["treated"] == "a").sum() < 30
    with pytest.raises(ConfigError, match="unknown probe"):
        build_probe_table(pairs, probes=["flattery"])


def test_bad_options_and_inputs_are_clear_errors_before_any_rewrite() -> None:
    pairs = _pairs(10)
    for kwargs, words in [
        ({"probes": "padding"}, "a list of names"),
        ({"probes": []}, "no probe chosen"),
        ({"probes": ["placebo"]}, "no probe chosen"),
        ({"probes": ["padding"], "seed": -1}, "seed must be 0 or more"),
        ({"probes": ["padding"], "limit": 0}, "limit must be a whole number"),
        ({"probes": ["padding"], "limit": 2.5}, "limit must be a whole number"),
    ]:
        with pytest.raises(ConfigError, match=words):
            build_probe_table(pairs, **kwargs)  # type: ignore[arg-type]
    table = build_probe_table(pairs, probes=["padding"])
    with pytest.raises(InputError, match="already a probe table"):
        build_probe_table(table, probes=["padding"])
    with pytest.raises(InputError, match="no pair has all of prompt, response_a, response_b"):
        build_probe_table(pairs.assign(response_a=np.nan), probes=["padding"])


def test_pairs_without_texts_are_left_out_and_counted() -> None:
    pairs = _pairs(10)
    pairs.loc[[1, 2], "prompt"] = np.nan  # the bandwagon edit writes into the prompt
    pairs.loc[5, "response_b"] = None
    table = build_probe_table(pairs, probes=["bandwagon", "padding", "padding"])
    assert table.attrs["missing_texts"] == 3
    assert table["base_item"].nunique() == 7 and not {"i1", "i2", "i5"} & set(table["base_item"])
    assert len(table) == 7 * 4  # original, placebo, bandwagon, padding (asked twice, made once)
    assert probe_bases(pairs).attrs["missing_texts"] == 3


def test_limit_spreads_the_sample_over_prompts() -> None:
    table = build_probe_table(_pairs(40), probes=["padding"], limit=10, seed=0)
    base = table.drop_duplicates("base_item")
    assert len(base) == 10 and base["prompt_id"].nunique() == 10


def _judge(table: pd.DataFrame, judge: PlantedJudge, path: Path) -> pd.DataFrame:
    with Store(path) as store:
        Runner(judge, store, progress=False).pairwise(table)
        return store.export_pairs()


PLANTED = {"authority": 0.12, "bandwagon": 0.08, "padding": 0.0, "distraction": -0.06,
           "attribution-self": 0.05, "attribution-other": 0.0}  # fmt: skip


def test_planted_sensitivities_are_recovered_through_the_runner(tmp_path: Path) -> None:
    table = build_probe_table(_pairs(300), probes=list(PLANTED), author="planted-judge", seed=1)
    exported = _judge(table, PlantedJudge(PLANTED), tmp_path / "s.db")
    assert {"probe", "base_item", "treated"} <= set(exported.columns)
    results, skipped = probe_effects(exported, boot=Resampling(n_boot=400))
    assert not skipped
    got = {r.metric.removeprefix("probe_"): r for r in results}
    assert set(got) == set(PLANTED)
    for name, truth in PLANTED.items():
        r = got[name]
        assert r.estimate == pytest.approx(truth, abs=0.01), name
        assert r.ci_low - 0.005 <= truth <= r.ci_high + 0.005, (name, r.ci_low, r.ci_high)
    assert got["padding"].components["flip_rate"] == pytest.approx(
        got["padding"].components["placebo_flip_rate"], abs=0.05
    )


def test_a_killed_probe_run_resumes_to_the_same_store(tmp_path: Path) -> None:
    table = build_probe_table(_pairs(30), probes=["authority", "padding"], seed=2)
    whole = _judge(table, PlantedJudge(PLANTED), tmp_path / "whole.db")
    # first half, then everything (the second run judges only what is left)
    judge = PlantedJudge(PLANTED)
    half = table[table["base_item"].isin([f"i{k}" for k in range(15)])]
    _judge(half, judge, tmp_path / "resumed.db")
    calls = judge.calls
    resumed = _judge(table, judge, tmp_path / "resumed.db")
    assert judge.calls > calls
    cols = ["item_id", "judge", "p_a_first", "p_a_second", "probe", "treated"]
    a = whole[cols].sort_values("item_id").reset_index(drop=True)
    b = resumed[cols].sort_values("item_id").reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b)
    assert np.isfinite(a["p_a_first"]).all()


def test_probes_md_counts_and_times_the_run_it_shows(shared_data: Path) -> None:
    """docs/probes.md gave the judgments of `--limit 60` but no run time, which is most
    of an hour on a CPU. Its counts are the probe table's (both orders), the lengths it
    scales its measured times by are the samples', and it says how long to expect."""
    import re

    from recuse.data import load
    from recuse.roster import Roster

    text = " ".join((Path(__file__).parents[2] / "docs" / "probes.md").read_text("utf-8").split())
    pairs = load("mt-bench-human", data_dir=shared_data, roster=Roster.builtin())
    three = build_probe_table(pairs, probes=["padding", "authority", "bandwagon"], limit=60)
    assert 2 * len(three) == 600 and "5 versions here), in both orders: 600 judgments" in text
    one = build_probe_table(pairs, probes=["padding"], limit=60)
    assert 2 * len(one) == 360 and "`--probe padding --limit 60` is 360 judgments" in text
    assert "--probe padding,authority,bandwagon --limit 60" in text  # the command timed

    def characters(limit: int) -> float:  # prompt and both answers, per base pair
        base = probe_bases(pairs, limit=limit, seed=0)
        cols = ["prompt", "response_a", "response_b"]
        return float(sum(base[c].astype(str).str.len().sum() for c in cols) / len(base))

    said = f"average {round(characters(60), -1):,.0f} characters of prompt and answers "
    assert said + f"against {round(characters(10), -1):,.0f} for `--limit 10`" in text
    assert re.search(r"expect about \d+–\d+ minutes for its 600 judgments", text)
