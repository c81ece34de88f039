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
    return RunSummary.combine(done)
