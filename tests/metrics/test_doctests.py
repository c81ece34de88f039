"""The examples in the docstrings of the metrics modules and the simulator run and hold."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "recuse.metrics.agreement",
    "recuse.metrics.bootstrap",
    "recuse.metrics.bradley_terry",
    "recuse.metrics.calibration",
    "recuse.metrics.competence",
    "recuse.metrics.estimate",
    "recuse.metrics.length_controlled",
    "recuse.metrics.perplexity",
    "recuse.metrics.position",
    "recuse.metrics.probes",
    "recuse.metrics.result",
    "recuse.metrics.self_preference",
    "recuse.metrics.verbosity",
    "recuse.metrics.verdicts",
    "recuse.report.multiplicity",
    "recuse.regression.favoritism",
    "recuse.simulate.length_controlled",
    "recuse.simulate.pairs",
    "recuse.simulate.self_preference",
    "recuse.cells",
    "recuse.tables",
    "recuse.numbers",
    "recuse.errors",
    "recuse.data.record_lines",
    "recuse.data.reading_notes",
    "recuse.data.judgebench",
    "recuse.files",
    "recuse.terminal",
    "recuse.judging.served",
    "recuse.judging.backends.http",
    "recuse.report.bias",
    "recuse.interval_rules",
    "recuse.cli.app",
    "recuse.report.figures",
    "recuse.analyses.favoritism",
    "recuse.judging.handlers.pairwise",
    "recuse.analyses.base",
    "recuse.analyses.self_preference",
    "recuse.analyses.verbosity",
    "recuse.driver",
]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
