"""What a person reads when an estimate is not made (issue #34, "A summary a person reads"):
judges with nothing estimated leave the ladder's table for a one-line note, label-free
files say "no human labels", a judge without own answers misses the headline bias (not
EO), and a section with nothing estimated is one line in the page."""

from __future__ import annotations

from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from recuse.analyses.self_preference_ladder import left_out_notes
from recuse.data.inputs import Input
from recuse.driver import AuditOptions, run_audit
from recuse.metrics.bootstrap import Resampling
from recuse.metrics.ladder import self_preference_ladder
from recuse.metrics.summary import pairwise_bias
from recuse.report import AuditReport, Source
from recuse.report.html import render_html
from recuse.report.summary_table import summary_text
from recuse.roster import Roster
from recuse.simulate import PlantedBias, simulate_pairs

OPTIONS = dict(level=0.9, n_boot=200, seed=0, min_n=10, robustness=())
LABEL_FREE = "no human labels"


@pytest.fixture(scope="module")
def pairs() -> pd.DataFrame:
    """gpt-4 judges pairs that hold its own answers; palm-2 judges the same pairs, none
    of them its own (palm-2 is no generator here)."""
    return simulate_pairs(
        judges={"gpt-4": PlantedBias(accuracy=0.7), "palm-2": PlantedBias(accuracy=0.7)},
        models=("gpt-4", "gpt-3.5-turbo", "claude-v1", "vicuna-13b"),
        n_prompts=80,
        pairs_per_prompt=3,
        seed=5,
    ).pairs


def _audit(frame: pd.DataFrame, only: tuple[str, ...], name: str = "sim") -> AuditReport:
    judges = tuple(sorted(str(j) for j in frame["judge"].dropna().unique()))
    inp = Input(name, "pairs", frame, Source(name, "pairs", len(frame), judges=judges))
    return run_audit([inp], options=AuditOptions(**OPTIONS, only=only), roster=Roster.builtin())  # type: ignore[arg-type]


def _section(report: AuditReport, sid: str):  # type: ignore[no-untyped-def]
    return next(s for s in report.sections if s.id == sid)


def test_ladder_table_leaves_out_a_judge_without_own_answers_and_says_so(
    pairs: pd.DataFrame,
) -> None:
    report = _audit(pairs, ("self-preference-ladder",))
    section = _section(report, "self-preference-ladder")
    (table,) = [t for t in section.tables if t.name == "ladder-sim"]
    assert set(table.frame["judge"]) == {"gpt-4"}  # palm-2's 14 "not estimated" rows gone
    (note,) = [n for n in section.notes if "left out" in n]
    assert note.startswith("1 judge left out of the rung-by-rung table of sim (palm-2)")
    assert note.endswith("no judged pairs holding the judge's own answer.")


def test_a_file_where_no_judge_has_own_answers_is_one_line_in_the_page(
    pairs: pd.DataFrame,
) -> None:
    report = _audit(pairs[pairs["judge"] == "palm-2"], ("self-preference-ladder",))
    section = _section(report, "self-preference-ladder")
    assert not section.findings and not section.tables and not section.figures

    class Tags(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.depth, self.tags, self.text = 0, [], []  # inside the ladder section

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if tag == "section" and ("id", "self-preference-ladder") in attrs:
                self.depth = 1
            elif self.depth:
                self.tags.append(tag)

        def handle_endtag(self, tag: str) -> None:
            if tag == "section":
                self.depth = 0

        def handle_data(self, data: str) -> None:
            if self.depth and data.strip():
                self.text.append(data.strip())

    parser = Tags()
    parser.feed(render_html(report))
    assert parser.tags == ["h2", "p"]  # the title and the one reason: no table, no figure
    title, reason = parser.text
    assert title == "Self-preference, taken apart"
    assert reason.startswith("Nothing estimated: 1 judge left out")


def test_label_free_pairs_say_no_human_labels(pairs: pd.DataFrame) -> None:
    free = pairs.assign(human=np.nan)
    result = pairwise_bias(
        free,
        Roster.builtin(),
        boot=AuditOptions(**OPTIONS).resampling,
        min_n=OPTIONS["min_n"],  # type: ignore[arg-type]
    )
    n = free.groupby("judge").size()  # each judge's pairs, counted by hand
    labelled = {
        "self_preference_eo", "self_preference_dp", "family_preference_eo",
        "family_preference_dp", "self_preference_calibrated", "verbosity_bias",
        "verbosity_deviation", "verbosity_longer_gap",
    }  # fmt: skip
    seen = set()
    for s in result.skipped:
        if s.metric in labelled:
            assert s.reason.startswith(f"{LABEL_FREE} (none of its {n[s.judge]:,} pairs has one"), (
                s.metric,
                s.reason,
            )
            seen.add(s.metric)
    assert {"self_preference_eo", "self_preference_calibrated", "verbosity_bias"} <= seen
    assert not [s for s in result.skipped if "human prefers" in s.reason]
    # the raw ladder too: every rung but the own-win rate needs the labels
    _, skipped = self_preference_ladder(free, boot=Resampling(n_boot=200), min_n=10)
    rungs = {s.metric for s in skipped if s.judge == "gpt-4"}
    assert "own_win_rate" not in rungs and "eo" in rungs
    assert all(s.reason.startswith(LABEL_FREE) for s in skipped if s.judge == "gpt-4")


def test_a_judge_without_own_answers_misses_the_headline_not_eo(pairs: pd.DataFrame) -> None:
    report = _audit(pairs, ("self-preference",))
    mine = [k for k in report.skipped if k.judge == "palm-2" and k.headline]
    assert [k.bias.key for k in mine if k.bias] == ["self_preference_calibrated"]
    assert mine[0].metric == "self_preference_calibrated"
    assert mine[0].said == ("self_preference_calibrated: no pairs holding the judge's own answer")
    row = next(line for line in summary_text(report).splitlines() if "palm-2" in line)
    assert "Self-preference (own-pick rate" in row and "(EO)" not in row
    # the EO skip stays in the list of skips, out of the summary
    assert any(
        k.judge == "palm-2" and k.bias and k.bias.key == "self_preference_eo" and not k.headline
        for k in report.skipped
    )


def test_a_left_out_reason_with_a_colon_is_kept_whole() -> None:
    """The note of judges left out of the ladder table cut each reason at its first
    ': ' (a leftover of reasons written 'metric: reason'; a Skipped reason has no metric
    in front), so a judge named 'lab: m1' read "m1' has no verdicts in this table"."""
    reason = "judge 'lab: m1' has no verdicts in this table"
    (note,) = left_out_notes([("lab: m1", reason)], what="the table", why="none")
    assert note == f"1 judge left out of the table (lab: m1) — none: {reason}."
