"""The datasets' registry: its near-miss suggestion, which `recuse data fetch` and an
unknown dataset's error share."""

from __future__ import annotations

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
