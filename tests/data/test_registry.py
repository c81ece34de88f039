"""The datasets' registry: its near-miss suggestion, which `recuse data fetch` and an
unknown dataset's error share."""

from __future__ import annotations

from pathlib import Path

import pytest

from recuse.data import registry
from recuse.errors import DatasetNotFoundError


def test_a_near_miss_is_compared_as_datasets_are_spelt() -> None:
    names = ["mt_bench", "mt-bench-human", "llmbar"]  # a folder and two datasets
    assert registry.near_miss("llm bar", names) == "llmbar"
    assert registry.near_miss("MT-Bench", names) == "mt_bench"  # the folder, as written
    assert registry.near_miss("mt-bench-humans", names) == "mt-bench-human"
    assert registry.near_miss("zzz", names) is None
    # a dataset and a folder spelt alike: the later of the two is named
    assert registry.near_miss("alpaca eval", ["alpaca_eval", "alpaca-eval"]) == "alpaca-eval"


def test_an_unknown_dataset_names_the_one_meant() -> None:
    with pytest.raises(DatasetNotFoundError, match="did you mean 'llmbar'"):
        registry.get("llm bar")
    with pytest.raises(DatasetNotFoundError) as caught:
        registry.get("zzz")
    assert "did you mean" not in str(caught.value)


def test_a_data_folder_that_is_a_file_or_missing_says_so_and_names_where_it_came_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """RECUSE_DATA_DIR naming a file read "dataset 'llmbar' is not in FILE" with nothing
    said of the file; and a --data-dir given on the command line was told to point
    RECUSE_DATA_DIR elsewhere, which it had not used."""
    root = tmp_path
    a_file = root / "data.txt"
    a_file.write_text("x", encoding="utf-8")
    cases = {a_file: "a file, not a folder", root / "none": "no such folder", root: "without"}
    for where, said in cases.items():
        with pytest.raises(DatasetNotFoundError, match=said) as caught:
            registry.folder("llmbar", where)
        assert "give --data-dir a folder that has llmbar/" in str(caught.value)
    monkeypatch.setenv(registry.DATA_DIR_ENV, str(a_file))
    with pytest.raises(DatasetNotFoundError, match="a file, not a folder") as caught:
        registry.folder("llmbar")
    assert f"point {registry.DATA_DIR_ENV} at a folder" in str(caught.value)
