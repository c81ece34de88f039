"""HH-RLHF reader against the real file: splitting, the seeded a/b assignment, errors."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest

from recuse.data import registry
from recuse.data.hh_rlhf import SEED, chosen_is_a, read_hh_rlhf, split_dialogues, split_pair
from recuse.errors import InputError
from recuse.roster import Roster


@pytest.fixture(scope="module")
def raw(shared_data: Path) -> list[dict[str, str]]:
    with gzip.open(shared_data / "hh_rlhf" / "harmless-base_test.jsonl.gz", "rt") as f:
        return [json.loads(line) for line in f]


@pytest.fixture(scope="module")
def table(shared_data: Path) -> pd.DataFrame:
    return registry.load("hh-rlhf", data_dir=shared_data)


def test_rows_and_human_only(table: pd.DataFrame) -> None:
    assert len(table) == 2312
    assert table["judge"].isna().all() and table["p_a"].isna().all()
    assert table["model_a"].isna().all() and table["model_b"].isna().all()
    assert set(table["human"]) == {0.0, 1.0}
    # seeded hash: about half each way, the exact split is fixed by SEED
    assert (table["human"] == 1.0).sum() == 1138
    assert 0.45 < table["human"].mean() < 0.55


def test_assignment_is_the_documented_hash(table: pd.DataFrame) -> None:
    for line in (1, 2, 3, 1000, 2312):
        digest = hashlib.blake2b(f"hh-rlhf/{SEED}/{line}".encode(), digest_size=8).digest()
        expected = 1.0 if digest[0] % 2 == 0 else 0.0
        assert table["human"].iloc[line - 1] == expected
        assert chosen_is_a(line) == (expected == 1.0)


def test_responses_come_from_the_right_texts(
    table: pd.DataFrame, raw: list[dict[str, str]]
) -> None:
    for i, rec in enumerate(raw):
        row = table.iloc[i]
        chosen, rejected = (
            (row["response_a"], row["response_b"])
            if row["human"] == 1.0
            else (row["response_b"], row["response_a"])
        )
        assert rec["chosen"].rstrip().endswith(chosen)
        assert rec["rejected"].rstrip().endswith(rejected)
        assert rec["chosen"].strip().startswith(row["prompt"])
        assert rec["rejected"].strip().startswith(row["prompt"])


def test_ordinary_split_is_last_assistant_marker(raw: list[dict[str, str]]) -> None:
    rec = raw[0]
    cut = rec["chosen"].rfind("\n\nAssistant:")
    s = split_pair(rec["chosen"], rec["rejected"])
    assert s is not None and s.matched
    assert s.prompt == rec["chosen"][:cut].strip()
    assert s.chosen == rec["chosen"][cut + len("\n\nAssistant:") :].strip()


def test_prefix_mismatches_are_counted(shared_data: Path, raw: list[dict[str, str]]) -> None:
    _, mismatched = split_dialogues(shared_data / "hh_rlhf" / "harmless-base_test.jsonl.gz")
    assert mismatched == 5
    odd = [
        i + 1
        for i, r in enumerate(raw)
        if r["chosen"][: r["chosen"].rfind("\n\nAssistant:")]
        != r["rejected"][: r["rejected"].rfind("\n\nAssistant:")]
    ]
    assert odd == [1255, 1689, 1951, 1953, 2037]
    # line 1255: the chosen reply runs on with an inline "Human:" turn
    s = split_pair(raw[1254]["chosen"], raw[1254]["rejected"])
    assert s is not None and not s.matched
    assert s.prompt.endswith("Human: Isn't that drag kings?")
    assert s.rejected.startswith("A drag king is the opposite")
    assert "Human: Then how do they" in s.chosen


def test_no_shared_turn_is_an_error(tmp_path: Path) -> None:
    folder = tmp_path / "hh_rlhf"
    folder.mkdir()
    lines = [
        json.dumps(
            {
                "chosen": "\n\nHuman: hi\n\nAssistant: yo",
                "rejected": "\n\nHuman: hi\n\nAssistant: no",
            }
        ),
        json.dumps({"chosen": "plain text", "rejected": "other"}),
    ]
    with gzip.open(folder / "harmless-base_test.jsonl.gz", "wt") as f:
        f.write("\n".join(lines) + "\n")
    with pytest.raises(InputError, match="share no") as err:
        read_hh_rlhf(folder, Roster.builtin())
    assert err.value.row == 2


def test_missing_and_corrupt_file(tmp_path: Path) -> None:
    folder = tmp_path / "hh_rlhf"
    folder.mkdir()
    with pytest.raises(InputError, match="file not found"):
        read_hh_rlhf(folder, Roster.builtin())
    (folder / "harmless-base_test.jsonl.gz").write_bytes(b"not gzip at all")
    with pytest.raises(InputError, match="gzip"):
        read_hh_rlhf(folder, Roster.builtin())
