"""Judge a probe table: its self-recognition rows ask which answer the judge wrote,
every other row which answer is better; one store, one summary."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from recuse.judging.protocols import PairwiseProtocol
from recuse.judging.runner import Runner, RunSummary
from recuse.probes.design import RECOGNITION

__all__ = ["judge_probes"]


def judge_probes(
    runner: Runner, table: pd.DataFrame, protocol: PairwiseProtocol | None = None
) -> RunSummary:
    """Judge ``table`` (from :func:`~recuse.probes.build_probe_table` and/or
    :func:`~recuse.probes.build_recognition_table`) in both orders with ``protocol``
    (default direct), asking the authorship question on the self-recognition rows."""
    protocol = protocol or PairwiseProtocol(mode="direct")
    asks = table["probe"] == RECOGNITION if "probe" in table.columns else None
    parts = [(table, protocol)] if asks is None else [
        (table[~asks], protocol),
        (table[asks], replace(protocol, question="authorship")),
    ]  # fmt: skip
    done = [runner.pairwise(rows, proto) for rows, proto in parts if len(rows)]
    if not done:
        return runner.pairwise(table.iloc[:0], protocol)
    failures: dict[str, int] = {}
    for s in done:
        for reason, n in s.failures.items():
            failures[reason] = failures.get(reason, 0) + n
    return RunSummary(
        total=sum(s.total for s in done), cached=sum(s.cached for s in done),
        ok=sum(s.ok for s in done), unparsed=sum(s.unparsed for s in done),
        failed=sum(s.failed for s in done), seconds=sum(s.seconds for s in done),
        failures=failures,
    )  # fmt: skip
