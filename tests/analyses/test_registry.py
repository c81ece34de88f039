"""Conformance of every registered analysis, and the import graph of the package."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from analyses.conftest import Planted
from recuse.analyses import BIASES, IDS, REGISTRY, get, selected
from recuse.analyses.base import Analysis, AuditOptions
from recuse.errors import ConfigError
from recuse.options import Settings
from recuse.roster import Roster
from recuse.tables import PAIRS, RATINGS


def test_ids_titles_and_bias_keys_are_unique() -> None:
    assert len(set(IDS)) == len(IDS)
    assert len({a.title for a in REGISTRY}) == len(REGISTRY)
    keys = [b.key for a in REGISTRY for b in a.biases]
    assert len(set(keys)) == len(keys) == len(BIASES)
    assert len({b.order for b in BIASES.values()}) == len(BIASES)


def test_the_registry_is_the_headings_in_their_order() -> None:
    """Each analysis's id, title, table and biases are its light heading's (recuse.biases,
    what the gate reads without the statistics), the very objects, in HEADINGS' order."""
    from recuse.biases import HEADINGS

    assert [a.id for a in REGISTRY] == [h.id for h in HEADINGS]
    for a, h in zip(REGISTRY, HEADINGS, strict=True):
        assert (a.id, a.title, a.table) == (h.id, h.title, h.table)
        assert a.biases is h.biases and a.headline is h.headline


@pytest.mark.parametrize("analysis", REGISTRY, ids=IDS)
def test_each_analysis_says_what_it_is_and_needs(analysis: Analysis) -> None:
    assert analysis.intro.strip() and analysis.requires.strip() and analysis.biases
    # the first bias is the one the summary shows; an analysis without a headline
    # bias (the leaderboard) fills only its section
    assert analysis.headline.headline or not any(b.headline for b in analysis.biases)
    for b in analysis.biases:
        assert b.unit.strip() and math.isfinite(b.null)
        assert len({b.positive, b.negative, b.none}) == 3
    for metric, bias in analysis.metrics.items():
        assert bias is None or bias in analysis.biases, metric
    assert get(analysis.id) is analysis


@pytest.mark.parametrize("analysis", REGISTRY, ids=IDS)
def test_needs_gives_a_reason_on_an_empty_table(analysis: Analysis) -> None:
    columns = (PAIRS if analysis.table == "pairs" else RATINGS).names
    reason = analysis.needs(pd.DataFrame(columns=list(columns)), Roster.builtin())
    assert isinstance(reason, str) and len(reason) > 10


def test_every_headline_bias_reaches_the_matrix_and_the_others_their_section(
    planted: Planted,
) -> None:
    matrix = planted.report.matrix()
    columns = {c.bias.key for c in matrix.columns}
    sections = {f.bias.key for s in planted.report.sections for f in s.findings}
    sections |= {k.bias.key for k in planted.report.skipped if k.bias and not k.headline}
    # an analysis the planted data cannot support (calibration: picks, no probabilities)
    # is skipped as a whole, with its reason, and named as estimated for nobody
    nowhere = {u.analysis for u in matrix.not_estimated_anywhere}
    for a in REGISTRY:
        if a.title in nowhere:
            assert not any(f.section == a.id for f in planted.report.findings), a.id
            continue
        for b in a.biases:
            if b.headline and not b.unadjusted:
                assert b.key in columns, b.key
            elif b.headline:  # shown beside the headline as what it is, never in its place
                assert b.key in columns | sections, b.key
            else:
                assert b.key in sections, b.key
    # the report's sections follow the registry and nothing else
    assert [s.id for s in planted.report.sections] == [i for i in IDS if i != "calibration"]
    assert nowhere == {"Calibration"}


#: the values each kind of estimate can take, worked out from its definition: a rate
#: or share in [0, 1]; a difference of two rates (recall, pick rate, a rate minus a
#: predicted probability, a change in a share of the win) in [-1, 1]; Cohen's κ in
#: [-1, 1]; Krippendorff's α at most 1; regression coefficients and slopes unbounded
SPANS = {
    **dict.fromkeys(("position", "self_recognition", "agreement_accuracy", "certified_coverage",
                     "certified_coverage_own", "calibration_ece", "calibration_brier",
                     "calibration_ece_isotonic", "calibration_brier_isotonic",
                     "calibration_ece_platt", "calibration_brier_platt"), (0.0, 1.0)),
    **dict.fromkeys(("familiarity", "self_bias", "family_bias", "bt_own", "bt_family",
                     "bt_length", "bt_first", "bt_headers", "bt_lists", "bt_bold"),
                    (-math.inf, math.inf)),
    "agreement_kappa": (-1.0, 1.0),
    "agreement_alpha": (-math.inf, 1.0),
}  # fmt: skip


def test_every_bias_states_the_values_its_estimate_can_take(planted: Planted) -> None:
    """Each bias carries its span beside its unit and no-bias value (the gate checks a
    bound against it); every other bias of the registry is a difference of rates, in
    [-1, 1]. The planted audit's estimates lie in their spans."""
    for key, bias in BIASES.items():
        assert bias.span == SPANS.get(key, (-1.0, 1.0)), key
        assert bias.span[0] <= bias.null <= bias.span[1], key
    found = {f.bias.key for f in planted.report.findings}
    assert len(found) > 25  # most of the registry is estimated, bounded and not
    for f in planted.report.findings:
        low, high = f.bias.span
        assert low <= f.estimate <= high, (f.bias.key, f.judge, f.estimate)


def test_only_and_skip_select_from_the_registry() -> None:
    assert [a.id for a in selected(AuditOptions(only=("position", "verbosity")))] == [
        "verbosity",
        "position",
    ]
    assert "favoritism" not in [a.id for a in selected(AuditOptions(skip=("favoritism",)))]
    with pytest.raises(ConfigError, match="unknown analysis 'nope'"):
        selected(AuditOptions(only=("nope",)))  # where the registry is in scope
    with pytest.raises(ConfigError, match="--skip: unknown analysis 'nope'"):
        Settings(skip=("nope",)).audit_options()  # before any work (CLI and API)
