"""The audit says which interval each number has, and carries the calibrated estimate's
caveats wherever its numbers are shown.

On the committed JudgeBench per-pair file (examples/output/familiarity_judgebench_pairs.csv):
the calibrated self-preference and the familiarity mediation use the percentile
interval (:data:`~recuse.metrics.competence.CALIBRATED_INTERVAL`), the other
pairwise metrics BCa, so the report's notes and settings must not say every pairwise
metric is BCa; and SmolLM2-135M's calibrated estimate is marked "extrapolated
competence", which the mediation's direct part and share carry (the indirect part is
learnt on other pairs) — in the mediation table of the page and of report.json too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from recuse.cli import main
from recuse.metrics.bootstrap import Resampling
from recuse.metrics.familiarity_mediation import familiarity_mediation

OUTPUT = Path(__file__).resolve().parents[2] / "examples" / "output"
PAIRS = OUTPUT / "familiarity_judgebench_pairs.csv"
SMOL = "smollm2-135m-instruct"
MARK = "extrapolated competence"


def _audit(tmp_path: Path, only: str) -> tuple[dict[str, Any], str]:
    out = tmp_path / only
    args = ["audit", str(PAIRS), "--only", only, "--n-boot", "100", "--robustness", "none"]
    assert main([*args, "--out", str(out)]) == 0
    return json.loads((out / "report.json").read_text()), (out / "report.html").read_text()


def test_notes_and_settings_name_the_percentile_interval_of_the_calibrated_estimate(
    tmp_path: Path,
) -> None:
    report, page = _audit(tmp_path, "self-preference")
    (section,) = [s for s in report["sections"] if s["id"] == "self-preference"]
    methods = {f["bias"]: f["method"] for f in section["findings"]}
    assert methods["self_preference_calibrated"].endswith(
        "90% percentile interval, cluster bootstrap over prompts (100 resamples)"
    )
    assert "BCa interval" in methods["self_preference_eo"]  # EO keeps BCa
    (note,) = [n for n in report["notes"] if n.startswith("Intervals:")]
    setting = report["provenance"]["options"]["bootstrap"]
    for text in (note, setting):
        assert "BCa" in text and "percentile" in text, text
        assert "calibrated self-preference" in text, text
        # the curves' bins and the ladder's rates read Wilson's interval at the
        # bootstrap's effective pairs (share_interval), the leaderboard's percentile ends
        # are expanded, and a probe's effect no pair moved is an exact bound: the words
        # named none of the three
        assert "the verbosity curves' bins and the self-preference ladder's rates: a Wilson" in text
        assert "leaderboard's coefficients (the leaderboard's expanded for the prompts'" in text
        assert "(a probe's effect: where no pair moves)" in text
        assert "moved both ways on at most half the prompts: the BCa interval expanded" in text
        assert "in proportion to the moving variance the fewer way carries" in text
        assert "past half the prompts moving, the expansion and padding fade" in text
        assert "where all move alike (the moving prompts counted by the size of" in text
    assert "pairwise metrics use a BCa bootstrap" not in page


def test_mediation_table_carries_the_calibrated_estimates_warning(tmp_path: Path) -> None:
    report, page = _audit(tmp_path, "familiarity")
    (name,) = [k for k in report["tables"] if k.startswith("mediation-")]
    rows = pd.DataFrame(report["tables"][name]["rows"])
    marked = {(r.judge, r.part) for r in rows.itertuples() if str(r.warnings).startswith(MARK)}
    assert marked == {(SMOL, "familiarity_direct"), (SMOL, "familiarity_share")}
    # the same words as the metric's own results
    pairs = pd.read_csv(PAIRS)
    direct = familiarity_mediation(pairs, judge=SMOL, boot=Resampling(n_boot=100))[1]
    (words,) = [w for w in direct.warnings if w.startswith(MARK)]
    shown = rows[(rows["judge"] == SMOL) & (rows["part"] == "familiarity_direct")]
    assert shown["warnings"].item() == "; ".join(direct.warnings)
    assert words.split(";")[0] in page


def test_every_finding_named_percentile_is_in_the_notes_list(tmp_path: Path) -> None:
    """The note's list of percentile exceptions holds the audit's percentile findings:
    the familiarity slopes (familiarity_bias) too, not only the calibrated estimate."""
    report, _page = _audit(tmp_path, "familiarity")
    (note,) = [n for n in report["notes"] if n.startswith("Intervals:")]
    percentile = {
        f["bias"]
        for s in report["sections"]
        for f in s["findings"]
        if "percentile interval" in f["method"]
    }
    assert "familiarity" in percentile
    assert "familiarity slopes" in note


def test_the_notes_name_the_ece_interval_which_is_no_bootstrap(tmp_path: Path) -> None:
    """The ECE's interval is a Student interval from the jackknife over prompts
    (:func:`~recuse.metrics.calibration.ece_results`); the notes' "pairwise metrics:
    cluster bootstrap ... unless a result's method names another" listed every other
    exception and not it, so a 99% report read as if the ECE were bootstrapped."""
    from recuse.metrics.calibration import ECE_INTERVAL

    rng = np.random.default_rng(1)
    p = rng.uniform(0.05, 0.95, 60)
    rows = pd.DataFrame({
        "item_id": [f"i{k}" for k in range(60)], "prompt_id": [f"q{k // 3}" for k in range(60)],
        "judge": "j", "model_a": "x", "model_b": "y",
        "human": (rng.random(60) < 0.1 + 0.8 * p).astype(float), "p_a": p.round(3),
    })  # fmt: skip
    data = tmp_path / "calib.csv"
    rows.to_csv(data, index=False)
    out = tmp_path / "r"
    args = ["audit", str(data), "--only", "calibration", "--n-boot", "200", "--level", "0.99"]
    assert main([*args, "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    (section,) = [s for s in report["sections"] if s["id"] == "calibration"]
    ece = [f for f in section["findings"] if f["bias"] == "calibration_ece"]
    assert ece and all(f["method"].endswith(f"99% {ECE_INTERVAL}") for f in ece)
    (note,) = [n for n in report["notes"] if n.startswith("Intervals:")]
    assert f"the calibration error (ECE): a {ECE_INTERVAL} (not a bootstrap)" in note
