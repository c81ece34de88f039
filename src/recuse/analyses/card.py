"""The evaluator card as a report section (not an analysis: no bias, no registry entry).

:func:`recuse.judging.card.cards` computes the cards as typed numbers; this turns
them into the section the audit shows after the analyses, so the judging layer
never imports the report layer.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from recuse.judging.card import Card
from recuse.report.model import Section, Table

__all__ = ["card_section"]


def card_section(found: Sequence[Card], store: str, *, notes: Sequence[str] = ()) -> Section:
    """The cards as a report section, shown after the analyses; ``notes`` (e.g. the
    price rows that matched no judge) become the section's notes."""
    return Section(
        id="evaluator-card",
        title="Evaluator card",
        intro=(
            f"What each judge cost to run, from the runs recorded in {store}: answered "
            "judgments (ok or unparsed) per second of the runs, each from its first call "
            "to its last (a run an earlier recuse recorded timed whole, said in its own "
            "column; cached, copied and failed judgments do not count), "
            "tokens in and out per judgment where the server reported usage, the cost "
            "of 1,000 judgments from the price table (USD per million tokens), and the "
            "judge prompt its verdicts were made with (name, format, content hash)."
        ),
        tables=(
            Table("evaluator-card", "Evaluator card", pd.DataFrame([c.record() for c in found])),
        ),
        notes=tuple(notes),
    )
