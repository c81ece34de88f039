"""The committed probe run (``examples/output/probes_small_models.*``,
``ladder_judgebench.csv``, ``recognition_judgebench.csv``) and the reading of it in
docs/probes.md: each row is well formed, its definition is word for word the one the
library writes for it today (taken from the metric run on a small made-up table with the
run's settings), and every number the page quotes is the committed one (the model runs
themselves are not repeated here: they need the models and over an hour; a definition
that changes makes this test fail until the example is rerun)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from committed_outputs import committed_copy, damage_csv

from recuse.metrics.bootstrap import Resampling
from recuse.metrics.estimate import (
    expanded_method,
    extrapolated_words,
    padded_method,
    partly_expanded_method,
)
from recuse.metrics.ladder import RUNGS
from recuse.metrics.probes import COMPONENTS, probe_effects
from recuse.metrics.recognition import COMPONENTS as RECOGNITION_COMPONENTS
from recuse.metrics.recognition import self_recognition
from recuse.numbers import estimate_text
from recuse.probes import PROBES, RECOGNITION
from recuse.probes.rewrite import REWRITES
from recuse.tables import validate_pairs

REPO = Path(__file__).resolve().parents[2]
OUTPUT = REPO / "examples" / "output"


def _committed() -> tuple[pd.DataFrame, dict[str, Any]]:
    table = pd.read_csv(OUTPUT / "probes_small_models.csv")
    record = json.loads((OUTPUT / "probes_small_models.json").read_text("utf-8"))
    return table, record["probes"]


def _boot(part: dict[str, Any]) -> Resampling:
    """The resampling the script used for a part (from the settings it recorded)."""
    return Resampling(n_boot=int(part["settings"]["n-boot"]), seed=int(part["settings"]["seed"]))


def _probe_definitions(probes: set[str], boot: Resampling) -> dict[str, str]:
    """What ``probe_effects`` writes as each probe's definition (its ``method``) today:
    run on six made-up base pairs holding every version, with the run's resampling."""
    versions = {"concise", "verbose"} if "verbosity" in probes else set()
    versions = ["original", "placebo", *sorted((probes - {"verbosity"}) | versions)]
    rng = np.random.default_rng(0)
    rows = [
        {"item_id": f"i{i}#{v}", "prompt_id": f"q{i}", "judge": "j", "base_item": f"i{i}",
         "probe": v, "treated": "a", "human": np.nan,
         "p_a_first": rng.uniform(0.2, 0.8), "p_a_second": rng.uniform(0.2, 0.8)}
        for i in range(6)
        for v in versions
    ]  # fmt: skip
    results, skipped = probe_effects(validate_pairs(pd.DataFrame(rows)), boot=boot, min_n=5)
    assert not skipped
    return {r.metric.removeprefix("probe_"): r.method for r in results}


def _masked(text: str) -> str:
    return re.sub(r"\d+(?:\.\d+)?", "#", text)


def _rule_words_now(rule: str, boot: Resampling) -> str:
    """The interval's words the code writes today for the branch a committed row's words
    name (partly expanded, padded both ways, weighted, extrapolated), its numbers masked:
    a probe interval's words carry its own table's counts, so they are compared as a
    template. Words of a rule before the current one (a plain BCa interval) differ."""
    body, _, extra = rule.partition("; its ")
    share = 0.5 if "part of the way" in body else 1.0
    moved = 1.5 if "by the size of their moves" in body else None
    if "both ways" in body:
        weight = 0.5 if "w / ν" in body else 1.0
        now = padded_method(boot=boot, clusters=4, moving=2, effective=3.0, weight=weight,
                            share=share, moved=moved)  # fmt: skip
    elif share < 1:
        now = partly_expanded_method(boot=boot, share=share, moving=2, clusters=4, moved=moved)
    else:
        now = expanded_method(boot=boot)
    if extra:
        side = re.match(r"(ends|low end|high end) ", extra)
        assert side is not None, extra
        now = f"{now}; {extrapolated_words(side.group(1))}"
    return _masked(now)


def _recognition_definition(boot: Resampling) -> str:
    """What ``self_recognition`` writes as its definition today (six made-up pairs)."""
    t = pd.DataFrame(
        {
            "judge": "j",
            "probe": RECOGNITION,
            "item_id": [f"i{k}" for k in range(6)],
            "prompt_id": [f"q{k}" for k in range(6)],
            "model_a": ["j", "o"] * 3,
            "model_b": ["o", "j"] * 3,
            "p_a": [0.9, 0.2, 0.6, 0.5, 0.3, 0.1],
        }
    )
    (result,), _ = self_recognition(t, boot=boot, min_n=5)
    return result.method


def _reading() -> str:
    text = (REPO / "docs" / "probes.md").read_text("utf-8")
    start = text.index("## A real run, read honestly")
    end = text.find("\n## ", start + 1)
    return " ".join(text[start : end if end > 0 else None].split())


def test_every_row_is_an_estimate_inside_its_interval_with_the_current_definition() -> None:
    table, probes = _committed()
    assert set(table["judge"]) == set(probes["judges"])
    known = {n for n in {**PROBES, **REWRITES} if n != "placebo"} | {"verbosity"}
    assert set(table["probe"]) <= known
    assert table["effect"].between(table["ci_low"], table["ci_high"]).all()
    assert table[["flip_rate", "placebo_flip_rate"]].stack().between(0, 1).all()
    # the estimator's words as the code writes them today, and the interval's rule: its
    # words carry the row's own counts (moving prompts, m*, ν), so the template is checked
    boot = _boot(probes)
    current = _probe_definitions(set(table["probe"]), boot)
    for row in table.itertuples():
        what, rule = str(row.definition).split("; ", 1)
        assert what == current[row.probe].split("; ", 1)[0], (row.data, row.judge, row.probe)
        assert _masked(rule) == _rule_words_now(rule, boot), (row.data, row.judge, row.probe)
    # every judge has every probe on each data set, or a recorded reason why not
    for data, part in table.groupby("data"):
        gone = {(s["judge"], s["metric"]) for s in probes[f"skipped_{data}"]}
        for judge in probes["judges"]:
            have = set(part.loc[part["judge"] == judge, "probe"])
            missing = {p for p in known - have if (judge, f"probe_{p}") not in gone}
            assert not missing, (data, judge, missing)


def test_the_readme_quotes_the_committed_numbers() -> None:
    table, probes = _committed()
    reading = _reading()
    first = probes["first_slot_rate_original"]["by_judge"]
    quoted = re.search(
        r"Gemma-3-270M gives the answer shown first (\d+)% of the win, SmolLM2-135M (\d+)% "
        r"and Qwen2.5-Coder-0.5B (\d+)%",
        reading,
    )
    assert quoted is not None
    judges = ["gemma-3-270m", "smollm2-135m-instruct", "qwen2.5-coder-0.5b-instruct"]
    assert [int(q) for q in quoted.groups()] == [round(100 * first[j]) for j in judges]
    # the largest effect on MT-Bench, and the largest overall with its interval
    mt = table[table["data"] == "mt-bench-human"]
    assert f"more than {mt['effect'].abs().max():.3f}" in reading
    top = table.loc[table["effect"].abs().idxmax()]
    assert top["data"] == "judgebench" and top["probe"] == "padding"
    assert f"+{top['effect']:.3f} [{top['ci_low']:.3f}, {top['ci_high']:.3f}]" in reading
    # how many intervals exclude 0, against chance at the run's level
    excludes = (table["ci_low"] > 0) | (table["ci_high"] < 0)
    assert f"{excludes.sum()} of the {len(table)} intervals exclude 0" in reading
    chance = 0.1 * len(table)
    assert f"the {int(chance)}–{int(chance) + 1} that chance alone would give at 90%" in reading
    # the attribution labels and the bandwagon note of SmolLM2 and Qwen that exclude 0
    social = table[
        excludes
        & table["probe"].isin(["attribution-self", "attribution-other", "bandwagon"])
        & ~table["judge"].str.startswith("gemma")
    ]["effect"]
    assert (social < 0).all()
    assert f"−{-social.max():.3f} to −{-social.min():.3f} for the attribution labels" in reading
    rest = table[excludes & (table["effect"] != top["effect"])]["effect"].abs().max()
    assert f"all but Qwen's JudgeBench padding within ±{rest:.3f}" in reading
    placebo = table["placebo_flip_rate"]
    assert f"{100 * placebo.min():.0f}–{100 * placebo.max():.0f}% of their picks" in reading
    # verbose vs concise, each judge's as recuse writes an estimate: the page wrote
    # Gemma's −0.00205 [−0.00689, −0.00004] as "−0.002 [−0.007, −0.00004]", in two formats
    names = {"smollm2-135m-instruct": "SmolLM2", "gemma-3-270m": "Gemma",
             "qwen2.5-coder-0.5b-instruct": "Qwen"}  # fmt: skip
    verbosity = table[table["probe"] == "verbosity"]
    assert set(verbosity["judge"]) == set(names)
    for row in verbosity.itertuples():
        written = estimate_text(row.effect, row.ci_low, row.ci_high, null=0.0, span=(-1, 1))
        assert f"{names[str(row.judge)]} {written}" in reading


def test_the_ladder_reading_quotes_the_committed_ladder() -> None:
    """docs/probes.md's ladder bullet: demographic parity, the harmful excess and the
    split rungs of SmolLM2 and Qwen on JudgeBench, as recuse writes each estimate, from
    the committed ladder (whose rows test_the_committed_ladder_is_what_the_code_writes_now
    recomputes)."""
    ladder = pd.read_csv(OUTPUT / "ladder_judgebench.csv").set_index(["judge", "rung"])
    reading = _reading()
    smol, qwen = "smollm2-135m-instruct", "qwen2.5-coder-0.5b-instruct"

    def written(judge: str, rung: str, signed: bool = True) -> str:
        r = ladder.loc[(judge, rung)]
        span = (-1.0, 1.0) if signed else (0.0, 1.0)
        return estimate_text(r["estimate"], r["ci_low"], r["ci_high"], signed=signed, span=span)

    def percent(judge: str, rung: str) -> str:
        return f"{ladder.loc[(judge, rung), 'estimate']:.0%}"

    assert (f"far more often than the reference prefers it ({percent(smol, 'reference_own_rate')}"
            f" and {percent(qwen, 'reference_own_rate')})") in reading  # fmt: skip
    dp = [f"{ladder.loc[(j, 'dp_difference'), 'estimate']:+.2f}" for j in (smol, qwen)]
    assert f"demographic parity says {dp[0]} and {dp[1]}" in reading
    excess = [written(j, "harmful_excess") for j in (smol, qwen)]
    assert f"is {excess[0]} and {excess[1]}." in reading
    for judge, name in ((qwen, "Qwen"), (smol, "SmolLM2")):
        split = ladder.loc[(judge, "harmful_split")]
        n_split = round(split["estimate"] * split["n"])
        assert f"{n_split} for {name} ({written(judge, 'harmful_split', signed=False)})" in reading


def test_recognition_rows_carry_the_current_definitions() -> None:
    record = json.loads((OUTPUT / "probes_small_models.json").read_text("utf-8"))
    recognition = pd.read_csv(OUTPUT / "recognition_judgebench.csv")
    assert set(recognition["preference_metric"]) == {"own_win_rate", "eo"}
    preference = recognition["preference_metric"].map(RUNGS)
    assert (recognition["preference_definition"] == preference).all()
    current = _recognition_definition(_boot(record["ladder"]))
    assert (recognition["recognition_definition"] == current).all()
    # the columns the JSON defines beside the numbers, as the library defines them today
    assert record["ladder"]["recognition"]["columns"] == RECOGNITION_COMPONENTS
    columns = record["probes"]["columns"]
    assert {k: columns[k] for k in COMPONENTS} == COMPONENTS


def test_ladder_rows_carry_the_current_definitions_and_every_rung() -> None:
    record = json.loads((OUTPUT / "probes_small_models.json").read_text("utf-8"))
    ladder = pd.read_csv(OUTPUT / "ladder_judgebench.csv")
    assert set(ladder["rung"]) <= set(RUNGS)
    # every judge has every rung the library computes today, or a recorded reason why not
    gone = {(s["judge"], s["metric"]) for s in record["ladder"]["skipped"]}
    for judge in record["ladder"]["judges"]:
        have = set(ladder.loc[ladder["judge"] == judge, "rung"])
        missing = {r for r in RUNGS if r not in have and (judge, r) not in gone}
        assert not missing, (judge, sorted(missing))
    stale = ladder[ladder["definition"] != ladder["rung"].map(RUNGS)]
    assert stale.empty, sorted(set(stale["rung"]))


def test_the_definitions_come_from_the_metric_run() -> None:
    """The made-up runs above give the probe's description and the interval the run used:
    a definition check that could not fail would be worthless."""
    boot = Resampling(n_boot=2000, seed=0)
    current = _probe_definitions({"padding", "verbosity"}, boot)
    assert set(current) == {"padding", "concise", "verbose", "verbosity"}
    assert (
        current["padding"].startswith("probe padding (")
        and "(2000 resamples)" in current["padding"]
    )
    assert "(200 resamples)" in _probe_definitions({"padding"}, Resampling(n_boot=200))["padding"]
    assert "(2000 resamples)" in _recognition_definition(boot)


# the ladder part's per-pair file and --from-pairs (the script imported from examples/)
sys.path.insert(0, str(REPO / "examples"))
example = pytest.importorskip("probes_small_models")
LADDER_WRITTEN = ("probes_small_models.json", "ladder_judgebench.csv", "recognition_judgebench.csv")
LADDER_COMMITTED = (example.LADDER_PAIRS, *LADDER_WRITTEN)


def _ladder_pairs() -> pd.DataFrame:
    return pd.read_csv(OUTPUT / example.LADDER_PAIRS, dtype={"prompt_id": str})


def test_the_ladder_pairs_file_is_the_runs_and_its_rates_recompute_by_hand() -> None:
    record = json.loads((OUTPUT / "probes_small_models.json").read_text("utf-8"))["ladder"]
    rows = _ladder_pairs()
    assert list(rows.columns) == example.LADDER_COLUMNS
    assert rows.groupby("judge").size().to_dict() == record["judged_rows"]
    assert set(rows["probe"].dropna()) == {RECOGNITION}
    assert set(rows.loc[rows["probe"].notna(), "judge"]) == set(record["generators"])
    ladder = pd.read_csv(OUTPUT / "ladder_judgebench.csv").set_index(["judge", "rung"])
    plain = rows[rows["probe"].isna()]
    for judge in record["generators"]:
        mine = plain[plain["judge"] == judge]
        own_a, own_b = mine["model_a"] == judge, mine["model_b"] == judge
        own = mine[own_a | own_b]
        # by hand: the judge's share of the win for its own answer, and the label's
        v = np.where(own["model_a"] == judge, own["p_a"], 1 - own["p_a"])
        h = np.where(own["model_a"] == judge, own["human"], 1 - own["human"])
        assert ladder.loc[(judge, "own_win_rate"), "estimate"] == pytest.approx(v.mean())
        assert ladder.loc[(judge, "reference_own_rate"), "estimate"] == pytest.approx(h.mean())
        assert ladder.loc[(judge, "own_win_rate"), "n"] == len(own)


@pytest.fixture(scope="module")
def ladder_redone() -> Any:
    record = json.loads((OUTPUT / "probes_small_models.json").read_text("utf-8"))["ladder"]
    rows = _ladder_pairs()
    return example.analyse_ladder(rows, record["generators"], _boot(record))


def test_the_committed_ladder_is_what_the_code_writes_now(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ladder_redone: Any
) -> None:
    """The two CSV files and the ladder's analysis fields are what the current code
    computes from the committed per-pair file; when this fails after a change to the
    metrics, regenerate: ``python examples/probes_small_models.py --from-pairs``."""
    record = json.loads((OUTPUT / "probes_small_models.json").read_text("utf-8"))["ladder"]
    monkeypatch.setattr(example, "OUT", tmp_path)
    runs: dict[str, Any] = {"recognition": {}}
    ladder_redone.write(runs)
    for name in ("ladder_judgebench.csv", "recognition_judgebench.csv"):
        assert (tmp_path / name).read_text() == (OUTPUT / name).read_text(), name
    again = json.loads(json.dumps(example._plain(runs)))
    assert again["skipped"] == record["skipped"]
    for key, value in again["recognition"].items():
        assert record["recognition"][key] == value, key


def test_from_pairs_rewrites_the_ladder_and_keeps_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = committed_copy(LADDER_COMMITTED, tmp_path)
    before = json.loads((out / "probes_small_models.json").read_text())
    monkeypatch.setattr(example, "OUT", out)
    example.redo_ladder()
    after = json.loads((out / "probes_small_models.json").read_text())
    for name in LADDER_WRITTEN[1:]:  # the same numbers: the committed files are current
        assert (out / name).read_bytes() == (OUTPUT / name).read_bytes(), name
    assert after["probes"] == before["probes"]
    redone = after["ladder"].pop("analyses_redone")
    # the committed record may itself be a --from-pairs redo (after a metric's change)
    before["ladder"].pop("analyses_redone", None)
    assert "--from-pairs" in redone
    assert after == before


@pytest.mark.parametrize("how", ["truncated", "wrong columns", "bad value", "missing"])
def test_from_pairs_refuses_a_damaged_ladder_file_and_keeps_the_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    out = committed_copy(LADDER_COMMITTED, tmp_path)
    before = {n: (out / n).read_bytes() for n in LADDER_WRITTEN}
    damage_csv(out / example.LADDER_PAIRS, how, 6)  # p_a_first
    monkeypatch.setattr(example, "OUT", out)
    with pytest.raises(SystemExit) as stop:
        example.redo_ladder()
    assert stop.value.code == 2
    message = capsys.readouterr().err.strip()
    assert len(message.splitlines()) == 1 and example.LADDER_PAIRS in message
    assert {n: (out / n).read_bytes() for n in LADDER_WRITTEN} == before
