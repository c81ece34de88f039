"""The committed probe run (``examples/output/probes_small_models.*``) and the reading of
it in docs/probes.md: each row is well formed, its definition is the one the library gives
that probe today, and every number the page quotes is the committed one (the model runs
themselves are not repeated here)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd

from recuse.metrics.probes import DESCRIPTIONS
from recuse.probes import PROBES
from recuse.probes.rewrite import REWRITES

REPO = Path(__file__).resolve().parents[2]
OUTPUT = REPO / "examples" / "output"


def _committed() -> tuple[pd.DataFrame, dict[str, Any]]:
    table = pd.read_csv(OUTPUT / "probes_small_models.csv")
    record = json.loads((OUTPUT / "probes_small_models.json").read_text("utf-8"))
    return table, record["probes"]


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
    for probe, definition in table.groupby("probe")["definition"].first().items():
        assert definition.startswith(f"probe {probe} ({DESCRIPTIONS[probe]}): mean over base")
    # every judge has every probe on each data set, or a recorded reason why not
    for data, part in table.groupby("data"):
        gone = {(s["judge"], s["metric"]) for s in probes[f"skipped_{data}"]}
        for judge in probes["judges"]:
            have = set(part.loc[part["judge"] == judge, "probe"])
            missing = {p for p in set(table["probe"]) - have if (judge, f"probe_{p}") not in gone}
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
    assert f"with {len(table)} estimates" in reading
    placebo = table["placebo_flip_rate"]
    assert f"{100 * placebo.min():.0f}–{100 * placebo.max():.0f}% of their picks" in reading
    verbosity = table[(table["probe"] == "verbosity") & (table["judge"].str.startswith("qwen"))]
    (row,) = verbosity.itertuples()
    assert f"Qwen +{row.effect:.3f} [{row.ci_low:.3f}, {row.ci_high:.3f}]" in reading
