"""`recuse validate` says why an analysis is unsupported in whole sentences (issue #34)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import recuse.data
from recuse.cli.validate import as_sentence, supported_analyses
from recuse.data import registry
from recuse.roster import Roster

VERB = re.compile(r"\b(is|are|has|holds|needs|compares)\b")


def _is_sentence(text: str) -> bool:
    return text[:1].isupper() and text.endswith(".") and bool(VERB.search(text))


@pytest.mark.parametrize("name", sorted(registry.datasets()))
def test_every_reason_validate_prints_for_a_shared_dataset_is_a_sentence(
    name: str, shared_data: Path
) -> None:
    roster = Roster.load()
    table = recuse.data.load(name, data_dir=shared_data, roster=roster)
    kind = registry.get(name).table
    reasons = [why for _, why in supported_analyses(table, kind, roster) if why]
    for reason in reasons:
        text = as_sentence(reason)
        assert _is_sentence(text), (name, text)
        # the words are the analysis's own, only given a subject and a full stop
        assert reason[1:].rstrip(".") in text
    assert name in {"llmbar", "llmbar-mtbench", "play-favorites"} or reasons


@pytest.mark.parametrize(
    ("reason", "sentence"),
    [
        ("no perplexities in this data", "This file has no perplexities in this data."),
        ("not a probe table — run `recuse probe`", "This file is not a probe table — run "
         "`recuse probe`."),
        ("needs a ratings table (absolute scores); this is pairs",
         "The analysis needs a ratings table (absolute scores); this is pairs."),
        ("no row has both a verdict and a label", "No row has both a verdict and a label."),
        ("Already a sentence.", "Already a sentence."),
    ],
)  # fmt: skip
def test_as_sentence_by_hand(reason: str, sentence: str) -> None:
    assert as_sentence(reason) == sentence
