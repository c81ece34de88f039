"""One planted simulation audited once: pairs with self-preference, verbosity and
position biases, pairs with a familiarity effect, and ratings with a self-bias."""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recuse.data.inputs import Input
from recuse.driver import AuditOptions, run_audit
from recuse.judging.runner import Runner
from recuse.judging.store import Store
from recuse.probes import build_probe_table, build_recognition_table
from recuse.probes.rewrite import REWRITES, RunnerRewriter
from recuse.probes.run import judge_probes
from recuse.report import AuditReport, Source
from recuse.report.model import Figure, FigureFormat
from recuse.roster import Entry, Roster
from recuse.simulate import (
    PlantedBias,
    PlantedFamiliarity,
    simulate_familiarity,
    simulate_pairs,
    simulate_ratings,
)
from recuse.testing.planted_judge import PlantedJudge

OPTIONS = AuditOptions(level=0.9, n_boot=200, seed=0, min_n=10, robustness=())
BOOT = {"boot": OPTIONS.resampling, "min_n": 10}


@dataclass(frozen=True)
class Planted:
    report: AuditReport
    pairs: pd.DataFrame
    familiar: pd.DataFrame
    ratings: pd.DataFrame
    roster: Roster
    probes: pd.DataFrame


PROBE_PLANTS = {"authority": 0.12, "padding": 0.0, "bandwagon": 0.08, "distraction": -0.06,
                "attribution-self": 0.05, "attribution-other": 0.0}  # fmt: skip


RECOGNITION_PLANT = 0.2
LENGTH_PLANT = 0.1  # per unit of log word-count ratio (the rewrites' only planted effect)


def _probe_table(folder: Path) -> pd.DataFrame:
    """A probe table of 120 base pairs judged by a judge with planted sensitivities."""
    base = pd.DataFrame(
        {
            "item_id": [f"b{k}" for k in range(120)],
            "prompt_id": [f"q{k // 2}" for k in range(120)],
            "prompt": [f"Question {k}?" for k in range(120)],
            "response_a": [f"First answer to question {k}." for k in range(120)],
            "response_b": [f"Second answer, to question {k}." for k in range(120)],
        }
    )
    judge = PlantedJudge(
        PROBE_PLANTS, signature="(mine)", recognition=RECOGNITION_PLANT, length=LENGTH_PLANT
    )
    store = Store(folder / "probes.db")
    table = build_probe_table(
        base, probes=[*PROBE_PLANTS, *REWRITES], author="planted-judge", seed=0,
        rewriter=RunnerRewriter(Runner(judge, store, progress=False)),
    )  # fmt: skip
    # self-recognition: its own answers (they carry its signature) against another model's
    own = base.assign(
        model_a=["planted-judge" if k % 2 else "other-model" for k in range(120)],
        model_b=["other-model" if k % 2 else "planted-judge" for k in range(120)],
    )
    own["response_a"] = np.where(own["model_a"] == "planted-judge", own["response_a"] + " (mine)",
                                 own["response_a"])  # fmt: skip
    own["response_b"] = np.where(own["model_b"] == "planted-judge", own["response_b"] + " (mine)",
                                 own["response_b"])  # fmt: skip
    own["item_id"] = "own-" + own["item_id"]
    recognition = build_recognition_table(own, judge="planted-judge")
    with store:
        judge_probes(Runner(judge, store, progress=False), pd.concat([table, recognition]))
        return store.export_pairs()


def _input(name: str, table: str, frame: pd.DataFrame) -> Input:
    judges = tuple(sorted(str(j) for j in frame["judge"].dropna().unique()))
    return Input(name, table, frame, Source(name, table, len(frame), judges=judges))  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Planted:
    pairs = simulate_pairs(
        judges={
            "gpt-4": PlantedBias(self_preference=0.3, accuracy=0.65),
            "claude-v1": PlantedBias(verbosity=0.25, position=0.1, accuracy=0.65),
        },
        models=("gpt-4", "gpt-3.5-turbo", "claude-v1", "vicuna-13b", "palm-2"),
        n_prompts=300,
        pairs_per_prompt=3,
        texts=True,
        seed=3,
    ).pairs
    fam = simulate_familiarity(
        {"fam-judge": PlantedFamiliarity(judge_slope=-1.5)},
        human_slope=-0.5,
        n_prompts=150,
        seed=3,
    ).pairs
    ratings = simulate_ratings(
        n_prompts=60,
        self_bias={"j0": 0.15, "j1": 0.0, "j2": 0.0, "j3": 0.0, "j4": 0.0},
        family_bias={"A": 0.0, "B": 0.0},
        seed=2,
    )
    roster = Roster.builtin()
    for j, f in ratings.families.items():
        roster.add(Entry(j, f))
    for name in {*fam["model_a"], *fam["model_b"], *fam["judge"], "planted-judge"}:
        roster.add(Entry(str(name), str(name)))
    probes = _probe_table(tmp_path_factory.mktemp("probes"))
    inputs = [
        _input("sim-pairs", "pairs", pairs),
        _input("sim-familiar", "pairs", fam),
        _input("sim-ratings", "ratings", ratings.ratings),
        _input("sim-probes", "pairs", probes),
    ]
    report = run_audit(inputs, options=OPTIONS, roster=roster)
    return Planted(report, pairs, fam, ratings.ratings, roster, probes)


def audit_only(
    analysis: str,
    frame: pd.DataFrame,
    roster: Roster,
    *,
    table: str = "pairs",
    figure_format: FigureFormat = "png",
) -> AuditReport:
    """One analysis of ``recuse audit`` (the driver, as the CLI runs it) on one table; an
    SVG figure keeps its texts as ``<text>`` (not paths), for a test to read them."""
    import matplotlib

    options = AuditOptions(level=0.9, n_boot=200, seed=0, min_n=10, robustness=(),
                           only=(analysis,), figure_format=figure_format)  # fmt: skip
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        return run_audit([_input("planted", table, frame)], options=options, roster=roster)


def red_pixels(fig: Figure) -> int:
    """Pixels of the figures' red (#d62728), the colour of an interval off no bias."""
    import matplotlib.image as mpimg

    img = np.asarray(mpimg.imread(io.BytesIO(base64.b64decode(fig.data)), format="png"))
    red = np.array([0xD6, 0x27, 0x28]) / 255
    return int((np.abs(img[..., :3] - red).max(axis=-1) < 0.08).sum())
