"""The metric functions' door (``verdicts.require_pairs``): a pairs table as pandas
users hold it (nullable dtypes, ``pd.NA`` in object columns, a name given twice)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recuse.errors import InputError
from recuse.metrics import Resampling, first_position_rate, pairwise_bias
from recuse.metrics.agreement import krippendorff_alpha
from recuse.metrics.bradley_terry import leaderboard
from recuse.metrics.verbosity import human_verbosity_curve, verbosity_bias
from recuse.simulate import simulate_pairs

BOOT = Resampling(n_boot=100)


def _table() -> pd.DataFrame:
    """A simulated pairs table with missing labels and verdicts (NaN)."""
    table = simulate_pairs(n_prompts=30, seed=2).pairs
    table.loc[table.index[:3], "human"] = np.nan
    table.loc[table.index[5:9], "p_a_first"] = np.nan
    return table


def test_missing_verdicts_and_labels_as_pd_na_are_missing() -> None:
    """A table whose missing verdicts and labels are ``pd.NA`` or ``None`` (an object
    column after ``where``/``concat`` of nullable data, or ``Float64``) stopped every
    metric function with ``float() argument must be ... not 'NAType'``. They are
    missing, as NaN is: the same numbers as the float table's."""
    table = _table()
    judge = str(table["judge"].iloc[0])
    mine = table[table["judge"] == judge].dropna(subset=["p_a_first", "p_a_second"])
    by_hand = ((mine["p_a_first"] + 1 - mine["p_a_second"]) / 2).mean()
    held = table.astype({"human": object, "p_a_first": object})
    held.loc[held.index[0], "human"] = pd.NA
    held.loc[held.index[1], "human"] = None
    held.loc[held.index[5], "p_a_first"] = pd.NA
    held.loc[held.index[6], "p_a_first"] = None
    nullable = table.astype({c: "Float64" for c in ("human", "p_a_first", "p_a_second", "p_a")})
    assert nullable["human"].isna().sum() == 3
    plain = pairwise_bias(table, boot=BOOT).to_dict()["results"]
    for given in (held, nullable):
        got = first_position_rate(given, judge=judge, boot=BOOT)
        assert got.estimate == pytest.approx(by_hand)
        assert pairwise_bias(given, boot=BOOT).to_dict()["results"] == plain
    families = {m: m for m in pd.concat([table["model_a"], table["model_b"]]).unique()}
    ranked = leaderboard(held, families=families, boot=BOOT).table()
    pd.testing.assert_frame_equal(ranked, leaderboard(table, families=families, boot=BOOT).table())


def test_a_column_named_twice_is_an_error_naming_it() -> None:
    """``concat(axis=1)`` of a table and one of its columns: ``table["human"]`` is a
    frame, and the metric functions stopped with ``'DataFrame' object has no attribute
    'dtype'`` or a numpy broadcast error."""
    table = _table()
    twice = pd.concat([table, table[["human"]]], axis=1)
    judge = str(table["judge"].iloc[0])
    judges = sorted(table["judge"].unique())
    for call in (
        lambda: first_position_rate(twice, judge=judge, boot=BOOT),
        lambda: human_verbosity_curve(twice, boot=BOOT),
        lambda: krippendorff_alpha(twice, judges=judges, boot=BOOT),
        lambda: leaderboard(twice, families={}, boot=BOOT),
    ):
        with pytest.raises(InputError, match="2 columns named 'human'") as err:
            call()
        assert err.value.column == "human"


def test_columns_made_the_index_are_read_as_columns() -> None:
    """``set_index("human")`` or ``set_index(["item_id", "judge"])`` left the metric
    functions without the column (pandas' KeyError 'human'; "the table has no judge
    column"), though validate_pairs and recuse.audit read a named index level as the
    column it was: the same numbers as the plain table."""
    table = _table()
    plain = pairwise_bias(table, boot=BOOT).to_dict()["results"]
    for indexed in (table.set_index("human"), table.set_index(["item_id", "judge"])):
        assert pairwise_bias(indexed, boot=BOOT).to_dict()["results"] == plain


def test_lengths_as_pandas_holds_them_are_numbers() -> None:
    """Lengths with a missing one as ``pd.NA`` (an object or ``Int64`` column) stopped
    the verbosity metrics with float()'s TypeError on NAType; a word there is named."""
    table = _table()
    table.loc[table.index[:4], "len_a"] = np.nan
    judge = str(table["judge"].iloc[0])
    want = verbosity_bias(table, judge=judge, boot=BOOT)
    held = table.astype({"len_a": object})
    held.loc[held.index[0], "len_a"] = pd.NA
    for given in (held, table.astype({"len_a": "Int64", "len_b": "Int64"})):
        got = verbosity_bias(given, judge=judge, boot=BOOT)
        assert (got.estimate, got.ci_low, got.ci_high) == (want.estimate, want.ci_low, want.ci_high)
    worded = held.assign(len_b=held["len_b"].astype(object))
    worded.loc[worded.index[2], "len_b"] = "long"
    with pytest.raises(InputError, match="'long' is not a number") as err:
        verbosity_bias(worded, judge=judge, boot=BOOT)
    assert (err.value.row, err.value.column) == (3, "len_b")
