"""The judgment store's export: what it says about the rows it writes."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from judging.helpers import FakeBackend, fake_pairs
from recuse.judging import Runner, Store


@pytest.mark.parametrize("mixed", [True, False])
def test_an_export_of_two_datasets_says_so(tmp_path: Path, mixed: bool) -> None:
    """A store reused for a second --data (the docs' runs/smol.sqlite for llmbar-mtbench,
    then mt-bench-human) exported both datasets' pairs as one file without a word, and
    an audit read them as one table. One dataset: nothing said."""
    pairs = pd.DataFrame(fake_pairs(5))
    pairs["source"] = ["llmbar"] * 3 + ["mt-bench-human" if mixed else "llmbar"] * 2
    notes: list[str] = []
    with Store(tmp_path / "s.db") as store:
        Runner(FakeBackend(), store, progress=False).pairwise(pairs)
        df = store.export_pairs(notes=notes)
    assert sorted(df["source"]) == sorted(pairs["source"])
    said = [
        "the store holds pairs of 2 datasets (rows: llmbar 3, mt-bench-human 2), exported "
        "together: an audit of this file reads them as one table; to export one dataset "
        "alone, give --source NAME (e.g. --source llmbar)"
    ]
    assert notes == (said if mixed else [])


def _two_judges_two_datasets(path: Path) -> pd.DataFrame:
    """A store at ``path`` of 5 pairs (3 llmbar, 2 mt-bench-human), each judged by the
    judge ids 'x' and 'y'; the pairs judged."""
    pairs = pd.DataFrame(fake_pairs(5))
    pairs["source"] = ["llmbar"] * 3 + ["mt-bench-human"] * 2
    with Store(path) as store:
        for judge in ("x", "y"):
            Runner(FakeBackend(), store, judge=judge, progress=False).pairwise(pairs)
    return pairs


def test_an_export_keeps_the_judges_and_datasets_asked_for(tmp_path: Path) -> None:
    """A store of two judges over two datasets exported everything together; --judge
    and --source (the library's ``judges``/``sources``) keep the rows asked for."""
    pairs = _two_judges_two_datasets(tmp_path / "s.db")
    with Store(tmp_path / "s.db", read_only=True) as store:
        every = store.export_pairs()
        notes: list[str] = []
        one = store.export_pairs(notes=notes, judges=["y"], sources=["mt-bench-human"])
        both = store.export_pairs(judges=["x", "y"], sources=["llmbar"])
    assert len(every) == 10
    assert sorted(one["item_id"]) == ["i3", "i4"] and set(one["judge"]) == {"y"}
    assert notes == []  # one dataset asked for: no note that several were exported
    assert len(both) == 6 and set(both["item_id"]) == {"i0", "i1", "i2"}
    # the rows kept are the rows of the whole export, unchanged
    mine = every[(every["judge"] == "y") & every["item_id"].isin(["i3", "i4"])]
    pd.testing.assert_series_equal(
        one.sort_values("item_id")["p_a_first"].reset_index(drop=True),
        mine.sort_values("item_id")["p_a_first"].reset_index(drop=True),
    )
    assert set(pairs["item_id"]) == set(every["item_id"])


@pytest.mark.parametrize(
    ("kwargs", "said"),
    [
        (
            {"judges": ["x", "z"]},
            "--judge 'z' matches no row of the store; its judge ids (rows): 'x' 10, 'y' 10 "
            "— give --judge one of those, as written",
        ),
        (
            {"sources": ["LLMBar"]},
            "--source 'LLMBar' matches no row of the store; its datasets (rows): 'llmbar' 6, "
            "'mt-bench-human' 4 — give --source one of those, as written",
        ),
    ],
)
def test_an_export_filter_matching_nothing_names_what_the_store_holds(
    tmp_path: Path, kwargs: dict[str, list[str]], said: str
) -> None:
    from recuse.errors import InputError

    _two_judges_two_datasets(tmp_path / "s.db")
    with Store(tmp_path / "s.db", read_only=True) as store, pytest.raises(InputError) as err:
        store.export_pairs(**kwargs)
    assert str(err.value) == f"{tmp_path / 's.db'}: {said}"


def test_a_source_filter_on_a_store_without_sources_says_none_was_recorded(
    tmp_path: Path,
) -> None:
    from recuse.errors import InputError

    with Store(tmp_path / "s.db") as store:
        Runner(FakeBackend(), store, progress=False).pairwise(pd.DataFrame(fake_pairs(2)))
        with pytest.raises(InputError, match="its datasets \\(rows\\): none recorded — leave"):
            store.export_pairs(sources=["llmbar"])
