"""A judge whose self-bias the ratings cannot estimate because its own answers are
recorded under another name: its model line's snapshot (``gpt-4o`` judging answers
recorded as ``gpt-4o-2024-08-06``) or a spelling of its name (``acme-judge`` rating
``acme-judge-v2``'s answers). The not-estimated reason said only "it never rates its
own completions"; it now names the generator and the way to count it as the judge,
as the pairs analyses' reasons do."""

from __future__ import annotations

import dataclasses
import warnings

import pandas as pd
import pytest

from analyses.conftest import OPTIONS, _input
from recuse.analyses.favoritism import SELF_BIAS
from recuse.driver import run_audit
from recuse.roster import Entry, Roster
from recuse.simulate import simulate_ratings


def _renamed(judge: str, model: str) -> pd.DataFrame:
    """Simulated ratings (5 judges = 5 models) with j0 renamed: ``judge`` as a judge,
    ``model`` as the model whose answers it rated."""
    r = simulate_ratings(n_prompts=30, dimensions=("d1",), seed=0).ratings.copy()
    r["judge"] = r["judge"].astype(str).replace({"j0": judge})
    r["model"] = r["model"].astype(str).replace({"j0": model})
    return r


def _roster(frame: pd.DataFrame) -> Roster:
    """The built-in roster, j1-j4 each its own family, and any other name of ``frame``
    it does not know kept as its own model (as a file's unknown names are read)."""
    roster = Roster.builtin()
    for name in ("j1", "j2", "j3", "j4"):
        roster.add(Entry(name, name))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the note naming the names kept
        roster.keep([n for n in {*frame["judge"], *frame["model"]} if n not in roster])
    return roster


def _reason(frame: pd.DataFrame, judge: str) -> str:
    report = run_audit([_input("r", "ratings", frame)], options=OPTIONS, roster=_roster(frame))
    row = {x.judge: x for x in report.summary()}[judge]
    (reason,) = [m.reason for m in row.not_estimated if m.bias is SELF_BIAS]
    assert not [f for f in report.findings if f.bias is SELF_BIAS and f.judge == judge]
    return reason


def test_a_snapshot_of_the_judges_line_is_named_with_self_scope_line() -> None:
    frame = _renamed("gpt-4o", "gpt-4o-2024-08-06")
    reason = _reason(frame, "gpt-4o")
    assert reason.startswith("self-bias of gpt-4o not estimable: it never rates its own")
    assert "'gpt-4o-2024-08-06' of its model line" in reason
    assert 'self_scope="line"' in reason  # the Python API's words (the CLI's: --self-scope)
    # and the option it names does estimate it: the snapshot's answers are its own
    report_line = run_audit(
        [_input("r", "ratings", frame)],
        options=dataclasses.replace(OPTIONS, self_scope="line"),
        roster=_roster(frame),
    )
    assert [f.judge for f in report_line.findings if f.bias is SELF_BIAS].count("gpt-4o") == 1


def test_a_generator_spelt_like_the_judge_is_named() -> None:
    reason = _reason(_renamed("acme-judge", "acme-judge-v2"), "acme-judge")
    assert "if 'acme-judge-v2' is this judge's model under another name" in reason


def test_a_judge_that_rates_no_kin_keeps_the_plain_reason() -> None:
    r = _renamed("j0", "j0")
    frame = r[~((r["judge"] == "j0") & (r["model"] == "j0"))]
    assert (
        _reason(frame, "j0") == "self-bias of j0 not estimable: it never rates its own completions"
    )


def test_the_correction_under_self_scope_line_takes_gamma_off_the_lines_answers() -> None:
    """With self_scope="line" the fit reads gpt-4o's ratings of gpt-4o-2024-08-06 as its
    own (γ̂ of gpt-4o is estimated, as above), but the correction read self as the exact
    id: γ̂ came off none of them (the snapshot's change was 0, its ratings read as
    family, a family with no λ̂). By hand: the snapshot's mean after = its mean before
    minus γ̂ × (its ratings by gpt-4o) / (all its ratings) — every judge is in the
    correction and j1-j4 each its own family."""
    frame = _renamed("gpt-4o", "gpt-4o-2024-08-06")
    report = run_audit(
        [_input("r", "ratings", frame)],
        options=dataclasses.replace(OPTIONS, self_scope="line"),
        roster=_roster(frame),
    )
    (gamma,) = [f.estimate for f in report.findings if f.bias is SELF_BIAS and f.judge == "gpt-4o"]
    (table,) = [t.frame for t in report.tables if t.name.startswith("debiased")]
    row = table.set_index("model").loc["gpt-4o-2024-08-06"]
    snap = frame[frame["model"] == "gpt-4o-2024-08-06"]
    share = float((snap["judge"] == "gpt-4o").mean())
    assert 0 < share < 1 and abs(gamma) > 0.01
    assert row["after"] - row["before"] == pytest.approx(-gamma * share, abs=1e-12)
