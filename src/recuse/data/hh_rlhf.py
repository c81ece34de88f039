"""Anthropic HH-RLHF, harmlessness test split: which of two assistant replies people preferred.

Dataset ``hh-rlhf`` -> a human-only ``pairs`` table (no judge, no generator names),
one row per line of ``harmless-base_test.jsonl.gz`` (2,312 rows).

Splitting. ``chosen`` and ``rejected`` are the same dialogue with a different last
assistant reply. The prompt is the longest common prefix of the two texts cut back
to the end of its last ``"\\n\\nAssistant:"`` marker; the responses are what follows
(stripped of surrounding white space); ``prompt`` is the part before that marker.
For all but 5 rows this is exactly "split each text at its last Assistant marker".
In those 5 rows (lines 1255, 1689, 1951, 1953, 2037) a reply itself contains
``"Human:"`` text without the ``\\n\\n`` separator, so the two texts have a
different number of turns; the common-prefix rule keeps the dialogue both share as
the prompt and the two diverging continuations as the responses.
:func:`split_dialogues` returns how many rows needed it (``n_mismatched``).

Which reply is ``a``. Upstream always stores the preferred reply as ``chosen``; putting
it in slot ``a`` every time would make ``human`` constantly 1 and confound "is a"
with "is better" (a judge that always says "a" would look perfect, and the shown
order of a and b would be the same as the label). Each row is assigned by a seeded
hash instead: chosen is ``a`` iff the first byte of BLAKE2b(``"hh-rlhf/<seed>/<line>"``)
is even. About half the rows get ``human = 1.0`` (a is the chosen reply) and half
``0.0``; the assignment is the same on every machine and run (seed ``SEED``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from recuse.data.registry import Dataset, register
from recuse.errors import InputError
from recuse.files import read_jsonl, word_count
from recuse.roster import Roster
from recuse.tables import validate_pairs

NAME = "hh-rlhf"
FOLDER = "hh_rlhf"
FILE = "harmless-base_test.jsonl.gz"
MARKER = "\n\nAssistant:"
SEED = 20240101


@dataclass(frozen=True)
class Split:
    """Shared prompt and the two final replies of one chosen/rejected pair."""

    prompt: str
    chosen: str
    rejected: str
    matched: bool  # True when both texts split at their own last marker agree


def split_pair(chosen: str, rejected: str) -> Split | None:
    """Split two dialogues into the shared prompt and the two final replies.

    Returns None when they share no ``"\\n\\nAssistant:"`` marker at all.
    """
    cut_c, cut_r = chosen.rfind(MARKER), rejected.rfind(MARKER)
    if cut_c >= 0 and cut_c == cut_r and chosen[:cut_c] == rejected[:cut_r]:
        end = cut_c + len(MARKER)
        return Split(chosen[:cut_c].strip(), chosen[end:].strip(), rejected[end:].strip(), True)
    n = next((i for i, (x, y) in enumerate(zip(chosen, rejected, strict=False)) if x != y), None)
    common = chosen[: min(len(chosen), len(rejected)) if n is None else n]
    cut = common.rfind(MARKER)
    if cut < 0:
        return None
    end = cut + len(MARKER)
    return Split(common[:cut].strip(), chosen[end:].strip(), rejected[end:].strip(), False)


def chosen_is_a(line: int, *, seed: int = SEED) -> bool:
    """Whether the chosen reply goes to slot ``a`` for 1-based ``line`` (seeded hash)."""
    digest = hashlib.blake2b(f"hh-rlhf/{seed}/{line}".encode(), digest_size=8).digest()
    return digest[0] % 2 == 0


def _prompt_id(prompt: str) -> str:
    return "hh-" + hashlib.blake2b(prompt.encode("utf-8"), digest_size=6).hexdigest()


def split_dialogues(path: Path, *, seed: int = SEED) -> tuple[pd.DataFrame, int]:
    """Read the gzip JSONL file into unvalidated ``pairs`` rows; also the mismatch count."""
    records = read_jsonl(path, keys=("chosen", "rejected"))
    if not records:
        raise InputError("no rows in the file", file=path, fix=f"run `recuse data fetch {NAME}`")
    rows = []
    mismatched = 0
    for line, rec in enumerate(records, start=1):
        chosen, rejected = rec["chosen"], rec["rejected"]
        if not isinstance(chosen, str) or not isinstance(rejected, str):
            raise InputError(
                "chosen and rejected must be strings",
                file=path,
                row=line,
                column="chosen" if not isinstance(chosen, str) else "rejected",
            )
        split = split_pair(chosen, rejected)
        if split is None:
            raise InputError(
                "chosen and rejected share no '\\n\\nAssistant:' turn",
                file=path,
                row=line,
                column="chosen",
                fix="each text must be a Human/Assistant dialogue ending in an assistant reply",
            )
        mismatched += not split.matched
        a_is_chosen = chosen_is_a(line, seed=seed)
        a, b = (split.chosen, split.rejected) if a_is_chosen else (split.rejected, split.chosen)
        rows.append(
            (
                f"hh-rlhf/harmless-base/test/{line}",
                _prompt_id(split.prompt),
                1.0 if a_is_chosen else 0.0,
                split.prompt,
                a,
                b,
            )
        )
    raw = pd.DataFrame(
        rows, columns=["item_id", "prompt_id", "human", "prompt", "response_a", "response_b"]
    )
    out = pd.DataFrame(
        {
            "item_id": raw["item_id"],
            "prompt_id": raw["prompt_id"],
            "model_a": None,
            "model_b": None,
            "human": raw["human"],
            "judge": None,
            "p_a_first": np.nan,
            "p_a_second": np.nan,
            "p_a": np.nan,
            "prompt": raw["prompt"],
            "response_a": raw["response_a"],
            "response_b": raw["response_b"],
            "source": NAME,
            "task": "harmlessness",
            "len_a": word_count(raw["response_a"]),
            "len_b": word_count(raw["response_b"]),
        }
    )
    return out, mismatched


def read_hh_rlhf(folder: Path, roster: Roster) -> pd.DataFrame:
    """Read the HH-RLHF harmless-base test split in ``folder`` (roster unused: no models)."""
    path = Path(folder) / FILE
    table, _ = split_dialogues(path)
    return validate_pairs(table, file=path)


register(
    Dataset(
        name=NAME,
        folder=FOLDER,
        table="pairs",
        summary="Anthropic HH-RLHF harmless-base test: human choice between two assistant "
        "replies to 2,312 dialogues (no judge, no generator names)",
        reader=read_hh_rlhf,
    )
)
