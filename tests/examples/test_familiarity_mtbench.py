"""The MT-Bench familiarity example's committed analyses are recomputed from its committed
per-pair and per-answer files (the model runs are not repeated) and are the current
code's; ``--from-pairs`` rewrites them and keeps the model run's record, and refuses a
damaged input with one line (exit 2) without touching the committed results.

The per-generator mean log-perplexities and the pairs file's counts are also worked out
by hand from the committed rows."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from committed_outputs import assert_analyses_redone, committed_copy, damage_csv, same_json

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
OUTPUT = EXAMPLES / "output"
sys.path.insert(0, str(EXAMPLES))
example = pytest.importorskip("familiarity_mtbench")
WRITTEN = (  # what --from-pairs rewrites
    "familiarity_mtbench.json",
    "familiarity_mtbench_curve.csv",
    "familiarity_mtbench_ppl_by_model.csv",
    "familiarity_mtbench_ensemble.csv",
)
COMMITTED = ("familiarity_mtbench_pairs.csv", "familiarity_mtbench_answers.csv", *WRITTEN)


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    return dict(json.loads((OUTPUT / "familiarity_mtbench.json").read_text()))


def test_the_files_hold_ids_and_numbers_only_and_the_runs_counts(report: dict[str, Any]) -> None:
    pairs = pd.read_csv(OUTPUT / "familiarity_mtbench_pairs.csv")
    assert list(pairs.columns) == example.PAIR_COLUMNS
    for col in ("human", "p_a_first", "p_a_second", "p_a", "ppl_a", "ppl_b"):
        assert pd.api.types.is_float_dtype(pairs[col]), col
    for col in ("judge", "item_id", "model_a", "model_b"):  # no answer or question text
        assert pairs[col].astype(str).str.len().max() < 80, col
    assert len(pairs) == report["judged_rows"]
    assert pairs.groupby("judge").size().to_dict() == report["rows_by_judge"]
    assert pairs.groupby("judge")["p_a"].count().to_dict() == report["rows_with_verdict"]
    both = pairs["ppl_a"].notna() & pairs["ppl_b"].notna()
    assert both.groupby(pairs["judge"]).sum().to_dict() == report["rows_with_both_ppl"]
    # by hand: the mean log-perplexity of each generator's answers under each judge
    answers = pd.read_csv(OUTPUT / "familiarity_mtbench_answers.csv")
    assert list(answers.columns) == example.ANSWER_COLUMNS
    for key, cell in report["mean_log_ppl_by_answer_model"].items():
        judge, model = key.split("|")
        ppl = answers.loc[(answers["judge"] == judge) & (answers["model"] == model), "ppl"]
        assert cell["n"] == ppl.notna().sum() > 0, key
        assert cell["mean"] == pytest.approx(round(float(np.log(ppl).mean()), 4), abs=1e-12), key


@pytest.fixture(scope="module")
def redone() -> Any:
    """The analyses as ``--from-pairs`` computes them: the same inputs (the committed
    files, checked), the same options (the JSON's) and the same code."""
    _report, judged, answers, opts = example.committed_inputs()
    return example.analyse(judged, answers, **opts)


def test_committed_analyses_are_what_the_code_writes_now(
    report: dict[str, Any], redone: Any
) -> None:
    """Every analysis section of the committed JSON (Figure 5's means and gap, the
    familiarity bias, the mitigation) is what the current code writes from the committed
    files: fields, numbers, definitions, warnings and skip reasons. When this fails after
    a change to the metrics, regenerate: ``python examples/familiarity_mtbench.py
    --from-pairs``."""
    sections = json.loads(json.dumps(redone.sections(), default=str, allow_nan=False))
    for key, section in sections.items():
        assert key in report, key
        same_json(report[key], section, key)
    assert report["settings"]["bins"] == redone.bins


def test_committed_tables_are_what_the_code_writes_now(redone: Any) -> None:
    for name, table in redone.tables().items():
        assert (OUTPUT / name).read_text() == table.to_csv(index=False, float_format="%.4f"), name


def _few_resamples(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """``analyse`` with 20 resamples whatever the JSON says (the same code, faster); what
    it returned is appended to the list given back."""
    real, returned = example.analyse, []

    def quick(judged: pd.DataFrame, answers: pd.DataFrame, **opts: Any) -> Any:
        settings = {**opts["settings"], "n_boot": 20}
        returned.append(real(judged, answers, **{**opts, "settings": settings}))
        return returned[-1]

    monkeypatch.setattr(example, "analyse", quick)
    return returned


def test_from_pairs_rewrites_the_analyses_and_keeps_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = committed_copy(COMMITTED, tmp_path)
    before = json.loads((out / "familiarity_mtbench.json").read_text())
    monkeypatch.setattr(example, "OUT", out)
    returned = _few_resamples(monkeypatch)
    example.recompute_analyses()
    after = json.loads((out / "familiarity_mtbench.json").read_text())
    (done,) = returned
    # the analyses are replaced (20 resamples here, not the JSON's 2000); the model run's
    # record is kept, in its order, and the JSON says what was redone
    _, kept = assert_analyses_redone(out, before, after, done)
    assert {"settings", "runs", "timings", "rows_by_judge"} <= set(kept)
    assert "familiarity_bias[gemma-3-270m]" in capsys.readouterr().out


@pytest.mark.parametrize(
    "name", ["familiarity_mtbench_pairs.csv", "familiarity_mtbench_answers.csv"]
)
@pytest.mark.parametrize("how", ["truncated", "wrong columns", "bad value", "missing"])
def test_from_pairs_refuses_a_damaged_input_and_keeps_the_results(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    name: str,
    how: str,
) -> None:
    out = committed_copy(COMMITTED, tmp_path)
    before = {n: (out / n).read_bytes() for n in WRITTEN}
    damage_csv(out / name, how, 7 if "pairs" in name else 4)  # p_a_second / ppl
    monkeypatch.setattr(example, "OUT", out)
    with pytest.raises(SystemExit) as stop:
        example.recompute_analyses()
    assert stop.value.code == 2
    message = capsys.readouterr().err.strip()
    assert len(message.splitlines()) == 1 and name in message
    # the committed results are not replaced by skips or by numbers from a broken file
    assert {n: (out / n).read_bytes() for n in WRITTEN} == before


@pytest.mark.parametrize("text", ["{oops", '{"judges": {}}', ""])
def test_from_pairs_refuses_a_damaged_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    out = committed_copy(COMMITTED, tmp_path)
    (out / "familiarity_mtbench.json").write_text(text)
    monkeypatch.setattr(example, "OUT", out)
    with pytest.raises(SystemExit) as stop:
        example.recompute_analyses()
    assert stop.value.code == 2
    message = capsys.readouterr().err.strip()
    assert len(message.splitlines()) == 1 and "familiarity_mtbench.json" in message
    assert (out / "familiarity_mtbench.json").read_text() == text


def test_every_interval_of_the_run_takes_its_seed() -> None:
    """``--seed`` moved the mitigation's intervals only: the perplexity curve, the
    familiarity bias and Figure 5's gaps were resampled with seed 0 whatever the run's
    seed (``settings["seed"]``, which the JSON records). Each is now the metric's own
    result at the run's seed, and another seed moves it."""
    from recuse.metrics.bootstrap import Resampling
    from recuse.metrics.familiarity import familiarity_summary

    _report, judged, answers, opts = example.committed_inputs()

    def run(seed: int) -> Any:
        settings = {**opts["settings"], "n_boot": 50, "seed": seed}
        return example.analyse(judged, answers, **{**opts, "settings": settings})

    seeded, unseeded = run(7), run(0)
    direct, _ = familiarity_summary(judged, boot=Resampling(n_boot=50, seed=7), min_n=20)
    got = [(r.metric, r.judge, r.estimate, r.ci_low, r.ci_high) for r in seeded.fam]
    assert got == [(r.metric, r.judge, r.estimate, r.ci_low, r.ci_high) for r in direct]
    assert got
    assert [(r.ci_low, r.ci_high) for r in seeded.fam] != [
        (r.ci_low, r.ci_high) for r in unseeded.fam
    ]
    assert not seeded.curve.equals(unseeded.curve)
