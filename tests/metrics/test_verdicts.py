"""The metric functions' door (``verdicts.require_pairs``): a pairs table as pandas
users hold it (nullable dtypes, ``pd.NA`` in object columns, a name given twice)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recuse import metrics
from recuse.errors import EstimationError, InputError
from recuse.metrics import (
    Resampling,
    calibrated_self_preference,
    confusion_matrix,
    family_preference,
    first_position_rate,
    pairwise_bias,
    self_preference,
)
from recuse.metrics.agreement import krippendorff_alpha
from recuse.metrics.bradley_terry import leaderboard
from recuse.metrics.verbosity import human_verbosity_curve, verbosity_bias
from recuse.roster import Roster
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


_METRICS = {
    "self_preference": lambda t: self_preference(t, judge="gpt-4", boot=BOOT),
    "family_preference": lambda t: family_preference(
        t, judge="gpt-4", families=Roster.builtin(), boot=BOOT
    ),
    "verbosity_bias": lambda t: verbosity_bias(t, judge="gpt-4", boot=BOOT),
    "first_position_rate": lambda t: first_position_rate(t, judge="gpt-4", boot=BOOT),
    "confusion_matrix": lambda t: confusion_matrix(t, judge="gpt-4"),
    "calibrated": lambda t: calibrated_self_preference(t, judge="gpt-4", boot=BOOT),
    "pairwise_bias": lambda t: pairwise_bias(t, Roster.builtin(), boot=BOOT, curves=False),
    "human_verbosity_curve": lambda t: human_verbosity_curve(t, boot=BOOT),
    "leaderboard": lambda t: leaderboard(t, families={}, boot=BOOT),
    "krippendorff_alpha": lambda t: krippendorff_alpha(t, boot=BOOT),
}


@pytest.mark.parametrize("column", ["human", "model_a", "model_b", "prompt_id", "item_id", "judge"])
@pytest.mark.parametrize("metric", sorted(_METRICS))
def test_a_table_without_a_column_is_a_recuse_error_not_a_key_error(
    metric: str, column: str
) -> None:
    # a notebook user's table without `human` (or prompt_id, or one generator column)
    # raised pandas' KeyError: 'human' from deep inside the metric. Left out, human and
    # the pair of generator columns read as the file reader reads them (no labels,
    # unknown generators); one generator column alone, and no prompt_id (the bootstrap
    # resamples prompts), are InputErrors saying what to add; so is no item_id where a
    # pair's human label or its judges' agreement counts once per item (the calibrated
    # metrics, the human curve, the leaderboard, alpha: KeyError: 'item_id'); no judge
    # column has no verdicts to assess (alpha raised KeyError: 'judge')
    table = simulate_pairs(n_prompts=30, seed=1).pairs.drop(columns=[column])
    try:
        _METRICS[metric](table)
    except InputError as exc:
        assert column in str(exc) and exc.fix
    except EstimationError as exc:  # no labelled pairs, or none with its own answer
        assert column == "human" or (column == "judge" and "no judge" in str(exc)), exc


@pytest.mark.parametrize("dropped", [["p_a_first"], ["p_a_second"], ["p_a_first", "p_a_second"]])
def test_a_table_without_an_order_reads_as_the_file_reader_reads_it(dropped: list[str]) -> None:
    # a table of single verdicts (p_a, or one order) raised KeyError: 'p_a_first' from
    # the position metrics, the calibrated metric and pairwise_bias; the file reader adds
    # the order left out empty (none judged in it): left out, it reads as that column of
    # NaN, and the position metrics say no pair was judged in both orders
    table = simulate_pairs(n_prompts=30, seed=1).pairs
    without, empty = table.drop(columns=dropped), table.assign(**dict.fromkeys(dropped, np.nan))

    def read(metric: str, given: pd.DataFrame) -> object:
        try:
            got = _METRICS[metric](given)
        except EstimationError as exc:  # the calibrated metric without either order
            return str(exc)
        return got.estimate, got.ci_low, got.ci_high

    for metric in ("self_preference", "calibrated"):
        assert read(metric, without) == read(metric, empty)
    with pytest.raises(EstimationError, match="no pairs judged in both orders"):
        first_position_rate(without, judge="gpt-4", boot=BOOT)
    for name in ("position_consistency", "flip_rate"):
        with pytest.raises(EstimationError, match="no pairs judged in both orders"):
            getattr(metrics, name)(without, judge="gpt-4", boot=BOOT)
    result = pairwise_bias(without, Roster.builtin(), boot=BOOT, curves=False)
    assert not any(r.metric.startswith(("position", "flip", "first")) for r in result.results)
    assert any(s.metric == "flip_rate" for s in result.skipped)
    assert any(r.metric == "self_preference_eo" for r in result.results)


def test_a_table_without_p_a_reads_it_from_the_two_orders() -> None:
    # p_a is the mean over the orders judged (the reader's rule); left out it raised
    # KeyError: 'p_a'
    table = simulate_pairs(n_prompts=30, seed=1).pairs
    table.loc[0, "p_a_second"] = np.nan  # one order judged: its verdict alone
    table["p_a"] = table[["p_a_first", "p_a_second"]].mean(axis=1)
    for metric in ("self_preference", "verbosity_bias", "first_position_rate"):
        whole, without = _METRICS[metric](table), _METRICS[metric](table.drop(columns=["p_a"]))
        assert (without.estimate, without.ci_low, without.ci_high) == (
            whole.estimate, whole.ci_low, whole.ci_high
        )  # fmt: skip
    no_models = table.drop(columns=["model_a", "model_b"])
    with pytest.raises(EstimationError, match="own answer"):
        self_preference(no_models, judge="gpt-4", boot=BOOT)  # unknown generators


def test_p_a_from_the_orders_is_their_mean_where_judged_without_a_warning() -> None:
    import warnings

    from recuse.metrics.verdicts import require_pairs

    t = pd.DataFrame({"p_a_first": [0.2, np.nan, np.nan, 1.0],
                      "p_a_second": [0.6, 0.3, np.nan, 0.0]})  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's "mean of empty slice" among them
        got = require_pairs(t)["p_a"].to_numpy()
    np.testing.assert_array_equal(got, [0.4, 0.3, np.nan, 0.5])  # (0.2 + 0.6) / 2 = 0.4
