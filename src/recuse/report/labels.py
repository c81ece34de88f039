"""What a ``report.json`` says that its readers read back, light to import: its schema
version, the words of a value fixed by construction, and how it names the judge of an
estimate or a skip that holds for all the judges of a dataset (the gate reads them;
:mod:`recuse.report.export` and :mod:`recuse.report.model` re-export them)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from recuse import interval_rules

__all__ = [
    "FDR_LABEL",
    "FIXED_WORDS",
    "ORDERS_LABEL",
    "READ_VERSIONS",
    "SCHEMA_VERSION",
    "all_judges_label",
    "fdr_adjusted",
    "is_all_judges_label",
    "option_said",
]

#: the version of report.json this recuse writes: 2, where a value fixed by construction
#: has ``n`` and ``clusters`` null (1, as first published, required an integer ``n``)
SCHEMA_VERSION = 2
#: the versions of report.json ``recuse gate`` reads (2 adds nulls only, which it reads)
READ_VERSIONS = (1, 2)

#: the provenance's label of the --orders option: a report is made by the command line
#: or from Python (``recuse.audit(orders=...)``), so its options are named both ways
ORDERS_LABEL = "verdicts (--orders / orders=)"
#: the provenance's label of the --fdr option, named both ways as :data:`ORDERS_LABEL`
FDR_LABEL = "multiple testing (--fdr / fdr=)"

#: what a value fixed by construction is, said where an interval would be (one string
#: with the metrics' printed line: :data:`recuse.interval_rules.FIXED_WORDS`)
FIXED_WORDS = interval_rules.FIXED_WORDS


def all_judges_label(n: int) -> str:
    """How an estimate or a skip that holds for all ``n`` judges of a dataset names its
    judge in the report, the JSON and the terminal: ``"all n judges"``."""
    return f"all {n} judges"


def is_all_judges_label(text: str) -> bool:
    """Whether ``text`` is an :func:`all_judges_label` (for readers of a written
    ``report.json``, the one place the label is read back)."""
    return re.fullmatch(r"all \d+ judges", text) is not None


#: each label above as a report of an earlier recuse wrote it (the command line's flag only)
_EARLIER = {ORDERS_LABEL: "verdicts (--orders)", FDR_LABEL: "multiple testing (--fdr)"}


def option_said(options: Mapping[str, object], label: str) -> str:
    """What a report's provenance ``options`` say of the option ``label`` (one of the
    labels above), read by its earlier label where the report is an earlier recuse's;
    "" where neither is there."""
    return str(options.get(label, options.get(_EARLIER[label], "")))


def fdr_adjusted(options: Mapping[str, object]) -> bool:
    """Whether a report's provenance ``options`` say its flags were adjusted for the
    number of tests (Benjamini–Hochberg), by :data:`FDR_LABEL` (:func:`option_said`)."""
    return option_said(options, FDR_LABEL).startswith("Benjamini")
