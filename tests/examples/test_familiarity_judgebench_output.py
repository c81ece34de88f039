"""The JudgeBench example's committed analyses can be recomputed from its committed
per-pair file (the model runs are not repeated), and are the current code's.

The point estimates do not depend on the bootstrap, so a small ``n_boot`` recomputes
them; the own-pick rate and the own log-perplexity gap are also worked out by hand
from the rows. At the JSON's own settings the whole of steps 6 and 7 is recomputed and
compared with the committed JSON and tables: a change to a metric's fields, wording or
numbers makes the committed files stale, and the test says so (a few seconds).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from committed_outputs import same_json

from recuse.metrics.bootstrap import Resampling
from recuse.metrics.competence import calibrated_self_preference
from recuse.metrics.familiarity_mediation import familiarity_mediation
from recuse.numbers import decimal, signed

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
OUTPUT = EXAMPLES / "output"
sys.path.insert(0, str(EXAMPLES))
example = pytest.importorskip("familiarity_judgebench")
GENERATORS = {"smollm2-135m-instruct", "qwen2.5-coder-0.5b-instruct"}
ID_COLUMNS = {"judge", "item_id", "prompt_id", "task", "model_a", "model_b"}
NUMBER_COLUMNS = {"human", "p_a_first", "p_a_second", "p_a", "ppl_a", "ppl_b"}


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    return dict(json.loads((OUTPUT / "familiarity_judgebench.json").read_text()))


@pytest.fixture(scope="module")
def pairs() -> pd.DataFrame:
    return pd.read_csv(OUTPUT / "familiarity_judgebench_pairs.csv")


def test_pairs_file_holds_ids_and_numbers_only(pairs: pd.DataFrame, report: dict[str, Any]) -> None:
    assert set(pairs.columns) == ID_COLUMNS | NUMBER_COLUMNS
    for col in NUMBER_COLUMNS:
        assert pd.api.types.is_float_dtype(pairs[col]), col
    for col in ID_COLUMNS:  # names and ids, no answer or question text
        assert pairs[col].astype(str).str.len().max() < 80, col
        assert not pairs[col].astype(str).str.contains("\n").any(), col
    counts = report["counts"]
    assert len(pairs) == counts["judged_rows"]
    assert pairs.groupby("judge").size().to_dict() == counts["rows_with_verdict"]
    both = pairs["ppl_a"].notna() & pairs["ppl_b"].notna()
    assert both.groupby(pairs["judge"]).sum().to_dict() == counts["rows_with_both_ppl"]


def test_every_generator_is_estimated_or_skipped(report: dict[str, Any]) -> None:
    for key in ("calibrated_self_preference", "familiarity_mediation"):
        part = report[key]
        done = {r["judge"] for r in part["results"]} | {s["judge"] for s in part["skipped"]}
        assert done == GENERATORS, key


def _own_side(rows: pd.DataFrame, judge: str) -> tuple[pd.Series, pd.Series]:
    own_a = rows["model_a"] == judge
    own = own_a | (rows["model_b"] == judge)
    return own, own_a


def test_calibrated_estimates_recompute(pairs: pd.DataFrame, report: dict[str, Any]) -> None:
    results = report["calibrated_self_preference"]["results"]
    assert results
    for committed in results:
        judge = committed["judge"]
        again = calibrated_self_preference(
            pairs,
            judge=judge,
            boot=Resampling(n_boot=20, seed=0),
            min_n=report["settings"]["min_n"],
        )
        assert again.estimate == pytest.approx(committed["estimate"], abs=1e-9)
        # n is the judge's own pairs; its counts add the pairs its competence is learnt on
        own = committed["counts"]["pairs holding the judge's own answer"]
        assert again.n == own == committed["n"]
        assert sum(again.counts.values()) == len(pairs[pairs["judge"] == judge])
        assert again.n_clusters == committed["n_clusters"]
        for k, v in again.components.items():
            assert v == pytest.approx(committed["components"][k], abs=1e-9), k
        # by hand: the own-pick rate is the mean order-averaged verdict for its own answer
        rows = pairs[pairs["judge"] == judge]
        own, own_a = _own_side(rows, judge)
        picks = np.where(own_a, rows["p_a"], 1 - rows["p_a"])[own.to_numpy()]
        rate = committed["components"]["own_pick_rate"]
        assert rate == pytest.approx(picks.mean(), abs=1e-9)
        assert committed["estimate"] == pytest.approx(
            rate - committed["components"]["predicted_own_pick_rate"], abs=1e-9
        )


def test_mediation_recomputes(pairs: pd.DataFrame, report: dict[str, Any]) -> None:
    results = report["familiarity_mediation"]["results"]
    assert results
    calibrated = {r["judge"]: r for r in report["calibrated_self_preference"]["results"]}
    for judge in sorted({r["judge"] for r in results}):
        committed = {r["metric"]: r for r in results if r["judge"] == judge}
        again = familiarity_mediation(
            pairs,
            judge=judge,
            boot=Resampling(n_boot=20, seed=0),
            min_n=report["settings"]["min_n"],
        )
        assert [r.metric for r in again] == list(committed)
        for r in again:
            want = committed[r.metric]["estimate"]
            if want is None:  # NaN in the JSON
                assert np.isnan(r.estimate), r.metric
            else:
                assert r.estimate == pytest.approx(want, abs=1e-9), r.metric
        parts = committed["familiarity_indirect"]["components"]
        # direct = the calibrated estimate on the rows with perplexities - indirect
        assert committed["familiarity_direct"]["estimate"] == pytest.approx(
            parts["calibrated_self_preference"] - committed["familiarity_indirect"]["estimate"],
            abs=1e-9,
        )
        rows = pairs[pairs["judge"] == judge]
        if judge in calibrated and rows[["ppl_a", "ppl_b"]].notna().all(axis=None):
            assert parts["calibrated_self_preference"] == pytest.approx(
                calibrated[judge]["estimate"], abs=1e-9
            )
        # by hand: a = mean (log ppl_own - log ppl_other) over its own pairs
        rows = rows[rows["ppl_a"].notna() & rows["ppl_b"].notna()]
        own, own_a = _own_side(rows, judge)
        d = np.log(rows["ppl_a"]) - np.log(rows["ppl_b"])
        gap = np.where(own_a, d, -d)[own.to_numpy()]
        assert parts["own_log_ppl_gap"] == pytest.approx(gap.mean(), abs=1e-9)


@pytest.fixture(scope="module")
def redone() -> Any:
    """Steps 6 and 7 as ``--from-pairs`` computes them: the same inputs (the committed
    files, checked), the same options (the JSON's) and the same code."""
    _report, judged, opts = example.committed_inputs()
    return example.analyse(judged, **opts)


def test_committed_analyses_are_what_the_code_writes_now(
    report: dict[str, Any], redone: Any
) -> None:
    """Every analysis section of the committed JSON (self-preference, ensembles, Figure 5's
    gap, familiarity, calibrated, mediation) is what the current code writes from the
    committed per-pair file: its fields (``n_boot_unfit``, ``null``, ...), numbers,
    definitions, warnings and skip reasons. When this fails after a change to the
    metrics, regenerate: ``python examples/familiarity_judgebench.py --from-pairs``."""
    sections = json.loads(json.dumps(redone.sections(), default=str, allow_nan=False))
    for key, section in sections.items():
        assert key in report, key
        same_json(report[key], section, key)


def test_committed_tables_are_what_the_code_writes_now(redone: Any) -> None:
    for name, table in redone.tables().items():
        assert (OUTPUT / name).read_text() == table.to_csv(index=False, float_format="%.4f"), name


def _small_judges_section() -> str:
    text = (EXAMPLES.parent / "docs" / "self-preference.md").read_text("utf-8")
    start = text.index("## On the small local judges")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else None]


def _cell(r: dict[str, Any]) -> str:
    """A number with its interval as the page writes it, as recuse writes one: the sign on
    the estimate only, 3 digits, ⚠ if warned."""
    text = f"{signed(r['estimate'], 3)} [{decimal(r['ci_low'], 3)}, {decimal(r['ci_high'], 3)}]"
    return text + (" ⚠" if r.get("warnings") else "")


def test_the_docs_quote_the_committed_numbers(report: dict[str, Any]) -> None:
    """docs/self-preference.md's table and reading of this run are the committed JSON's."""
    section = _small_judges_section()
    text = " ".join(section.split())
    calibrated = {r["judge"]: r for r in report["calibrated_self_preference"]["results"]}
    mediation = {(r["judge"], r["metric"]): r for r in report["familiarity_mediation"]["results"]}
    single = {
        (r["member"], r["metric"]): r
        for r in report["self_preference"]["results"]
        if r["evaluator"] == "single"
    }
    names = {
        "smollm2-135m-instruct": "SmolLM2-135M",
        "qwen2.5-coder-0.5b-instruct": "Qwen2.5-Coder-0.5B",
    }
    for judge, name in names.items():
        c = calibrated[judge]["components"]
        row = [
            name,
            _cell(calibrated[judge]),
            f"{100 * c['own_pick_rate']:.1f}% / {100 * c['predicted_own_pick_rate']:.1f}%",
            _cell(single[(judge, "self_preference_eo")]),
            _cell(single[(judge, "self_preference_dp")]),
            _cell(mediation[(judge, "familiarity_indirect")]),
            _cell(mediation[(judge, "familiarity_direct")]),
        ]
        assert "| " + " | ".join(row) + " |" in section.splitlines(), name
    smol, qwen = names
    accuracy = report["own_answer_accuracy"]
    assert f"({accuracy[smol]['correct']} and {accuracy[qwen]['correct']} right)" in text
    assert f"({report['counts']['pairs']} pairs," in text
    assert f"its own {calibrated[smol]['n']} (SmolLM2) or {calibrated[qwen]['n']} (Qwen)" in text
    assert f"({calibrated[smol]['n_clusters']} questions; 90% intervals)" in text
    gap = [mediation[(j, "familiarity_indirect")]["components"]["own_log_ppl_gap"] for j in names]
    assert f"log-perplexity {decimal(gap[0], 2)} and {decimal(gap[1], 2)})" in text
    slope = [
        mediation[(j, "familiarity_indirect")]["components"]["perplexity_slope"] for j in names
    ]
    assert f"({signed(slope[0], 3)} and {signed(slope[1], 3)} per unit" in text
    shares = [mediation[(j, "familiarity_share")] for j in names]
    quoted = ", ".join(
        f"{signed(s['estimate'], 2)} [{decimal(s['ci_low'], 1)}, {decimal(s['ci_high'], 1)}]"
        for s in shares
    )
    assert f"The shares ({quoted}) say nothing" in text
