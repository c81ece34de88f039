"""Turning verdicts and human labels into the numbers the metrics average.

Conventions shared by every pairwise metric:

* A judge's verdict on a row is ``p_a`` of the ``pairs`` table: its probability
  that response a is better, averaged over the presentation orders it judged
  (Eq. 3 of the self-preference paper, averaged over both orders; a single-order
  judge contributes the one order it has). Rows with ``p_a`` missing (not judged
  or unparsed in every order) are left out and counted, never scored.
* ``verdict="prob"`` uses that probability as it is (soft verdicts);
  ``verdict="pick"`` turns it into a discrete pick: 1 if ``p > 0.5``, 0 if
  ``p < 0.5``; a judge tie (``p == 0.5``, e.g. a verdict-only judge whose two
  orders disagree) counts as half a pick with ``judge_ties="half"`` (default) or
  leaves the row out with ``judge_ties="drop"``.
* A human label is ``human`` = P(a better). ``human_ties="drop"`` (default) keeps
  rows whose label leans to one side (``human != 0.5``) and assigns each to the
  side it leans to; ``human_ties="split"`` gives every labelled row weight
  ``human`` in the "a preferred" group and ``1 - human`` in the "b preferred"
  group, so a tie counts half in each.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from recuse.cells import shown
from recuse.errors import ConfigError, EstimationError, InputError
from recuse.tables import (
    PAIRS,
    VERDICTS,
    caller_option,
    check_header,
    index_as_columns,
    with_optional_pairs_columns,
)

__all__ = [
    "TIE_TOL",
    "HumanTies",
    "JudgeTies",
    "Verdict",
    "attribute_gap_values",
    "check_modes",
    "judge_codes",
    "judge_score",
    "judged_in_both_orders",
    "order_picks",
    "orient",
    "ties_note",
    "use_orders",
]

from recuse.choices import HumanTies as HumanTies
from recuse.choices import JudgeTies as JudgeTies
from recuse.choices import Orders as Orders
from recuse.choices import Verdict as Verdict

FloatArray = NDArray[np.float64]

TIE_TOL = 1e-9


ORDERS_NOTE: dict[str, str] = {
    "both": "the judge's probabilities averaged over the orders it judged (both where both)",
    "first": "the first presentation order only (p_a_first: a shown first)",
    "second": "the second presentation order only (p_a_second: b shown first)",
}


def judged_in_both_orders(pairs: pd.DataFrame) -> pd.Series:
    """Per row, whether the pair has a verdict in both presentation orders
    (``p_a_first`` and ``p_a_second`` given); all False without those columns.

    >>> t = pd.DataFrame({"p_a_first": [1.0, None], "p_a_second": [0.0, 0.5]})
    >>> judged_in_both_orders(t).tolist()
    [True, False]
    """
    if not {"p_a_first", "p_a_second"} <= set(pairs.columns):
        return pd.Series(False, index=pairs.index)
    return pairs["p_a_first"].notna() & pairs["p_a_second"].notna()


def orders_as_set(orders: Orders, said: str | None = None) -> str:
    """The orders option in the words of the one who set it: ``said``
    (:func:`recuse.options.option_as_set`, ``orders = "first" in recuse.toml``), else as
    the caller gives it, ``--orders first`` on the command line and ``orders="first"``
    to a Python caller of :func:`use_orders` or
    :func:`~recuse.metrics.summary.pairwise_bias`, who has no ``--orders``.

    >>> orders_as_set("first"), orders_as_set("second", "orders = 'second' in r.toml")
    ('orders="first"', "orders = 'second' in r.toml")
    """
    return said or caller_option(f"--orders {orders}", f'orders="{orders}"')


def use_orders(
    pairs: pd.DataFrame, orders: Orders, *, source: str = "", said: str | None = None
) -> pd.DataFrame:
    """The table with ``p_a`` from the presentation orders asked for.

    ``"both"`` leaves the table as it is (``p_a`` is the mean of the orders judged);
    ``"first"`` / ``"second"`` set ``p_a`` to ``p_a_first`` / ``p_a_second`` (both
    already in the a/b frame) and blank the other order, so every analysis sees one
    order only and a row without it has no verdict. ``said``: the option as the user
    set it (:func:`recuse.options.option_as_set`: ``orders = "first" in recuse.toml``),
    named in its errors and status (default :func:`orders_as_set`'s).

    >>> t = pd.DataFrame({"p_a_first": [1.0, None], "p_a_second": [0.0, 0.5], "p_a": [0.5, 0.5]})
    >>> one = use_orders(t, "first")
    >>> one["p_a"].tolist(), bool(one["p_a_second"].isna().all())
    ([1.0, nan], True)
    """
    if orders not in ORDERS_NOTE:
        raise ConfigError(f"--orders must be both, first or second; got {orders!r}")
    if orders == "both":
        return pairs
    column = f"p_a_{orders}"
    where = f"{source}: " if source else ""
    said = orders_as_set(orders, said)
    if column not in pairs.columns:
        raise ConfigError(f"{where}{said}: the table has no {column} column")
    other = "second" if orders == "first" else "first"
    verdicts = [c for c in ("p_a_first", "p_a_second", "p_a") if c in pairs.columns]
    if pairs[column].isna().all() and any(pairs[c].notna().any() for c in verdicts):
        # every analysis would read each verdict as missing ("unparsed or missing")
        has_other = f"p_a_{other}" in pairs.columns and pairs[f"p_a_{other}"].notna().any()
        use = (
            caller_option(f"--orders {other} or both", f'orders="{other}" or "both"')
            if has_other
            else caller_option("--orders both", 'orders="both"')
            + " (its verdicts, in p_a, are of an order not recorded)"
        )
        raise ConfigError(
            f"{where}{said}: no row has a verdict of the {orders} order ({column} "
            f"is empty in every row, while the table has verdicts) — use {use}, or map "
            f"the column that holds that order's verdicts to {column} (--map)"
        )
    out = pairs.assign(p_a=pairs[column].to_numpy(float), **{f"p_a_{other}": np.nan})
    if f"status_{other}" in out.columns:
        out[f"status_{other}"] = f"not used ({said})"
    return out


def check_modes(
    *, verdict: str | None = None, human_ties: str | None = None, judge_ties: str | None = None
) -> None:
    """Raise :class:`ConfigError` for a mode name that does not exist."""
    for name, value, allowed in (
        ("verdict", verdict, ("prob", "pick")),
        ("human_ties", human_ties, ("drop", "split")),
        ("judge_ties", judge_ties, ("half", "drop")),
    ):
        if value is not None and value not in allowed:
            raise ConfigError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")


def judge_score(p: FloatArray, *, verdict: Verdict, judge_ties: JudgeTies) -> FloatArray:
    """Judge verdict as the share of a win it gives to side a (NaN = row left out).

    >>> judge_score(np.array([0.8, 0.5, 0.2, np.nan]), verdict="pick", judge_ties="half")
    array([1. , 0.5, 0. , nan])
    """
    check_modes(verdict=verdict, judge_ties=judge_ties)
    p = np.asarray(p, dtype=float)
    if verdict == "prob":
        return p.copy()
    out = np.where(p > 0.5 + TIE_TOL, 1.0, np.where(p < 0.5 - TIE_TOL, 0.0, 0.5))
    out[np.isnan(p)] = np.nan
    if judge_ties == "drop":
        out[out == 0.5] = np.nan
    return out


def order_picks(p: FloatArray) -> NDArray[np.float64]:
    """Discrete pick of one presentation order: 1 (a), -1 (b), 0 (tie), NaN (none)."""
    p = np.asarray(p, dtype=float)
    out = np.where(p > 0.5 + TIE_TOL, 1.0, np.where(p < 0.5 - TIE_TOL, -1.0, 0.0))
    out[np.isnan(p)] = np.nan
    return out


def orient(x: FloatArray, side: NDArray[np.int8]) -> FloatArray:
    """Re-express a P(a)-type value for the response on ``side`` (+1 = a, -1 = b).

    Rows with ``side == 0`` become NaN.
    """
    x = np.asarray(x, dtype=float)
    out = np.where(side > 0, x, 1.0 - x)
    out[side == 0] = np.nan
    return out


def attribute_gap_values(
    human_s: FloatArray, judge_s: FloatArray, *, human_ties: HumanTies
) -> tuple[FloatArray, NDArray[np.bool_]]:
    """Per-row terms of an accuracy gap between two human-label groups.

    ``human_s`` is the human P(the response with the attribute S is better) and
    ``judge_s`` the judge's verdict for that response (see :func:`judge_score`).
    With ``w1`` = weight of "the human prefers the S response" and ``w0`` = weight
    of "the human prefers the other one", the columns are
    ``[w1 * v, w1, w0 * (1 - v), w0]`` so that
    ``s0/s1 - s2/s3 = P(Y'=S | Y=S) - P(Y'≠S | Y≠S)``: the judge's recall when the
    human prefers the S response minus its recall when the human prefers the other.
    Returns the terms and the mask of rows that enter.

    >>> vals, used = attribute_gap_values(np.array([1.0, 0.0, 0.5]), np.array([1.0, 1.0, 0.0]),
    ...                                   human_ties="drop")
    >>> vals.tolist(), used.tolist()
    ([[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0]], [True, True, False])
    """
    check_modes(human_ties=human_ties)
    h = np.asarray(human_s, dtype=float)
    v = np.asarray(judge_s, dtype=float)
    if human_ties == "drop":
        w1 = (h > 0.5 + TIE_TOL).astype(float)
        w0 = (h < 0.5 - TIE_TOL).astype(float)
    else:
        w1, w0 = h.copy(), 1.0 - h
    used = np.isfinite(h) & np.isfinite(v) & ((w1 + w0) > 0)
    w1 = np.where(used, w1, 0.0)
    w0 = np.where(used, w0, 0.0)
    vv = np.where(used, v, 0.0)
    values = np.column_stack([w1 * vv, w1, w0 * (1.0 - vv), w0])
    return values, used


#: the pairs columns of numbers that are no probability: lengths and perplexities
MEASURES = tuple(c.name for c in PAIRS.columns if c.kind == "nonneg")


def require_pairs(table: pd.DataFrame, *, judged: bool = True) -> pd.DataFrame:
    """A metric function's table as the metric reads it: a ``pairs`` table whose verdict
    and label columns hold probabilities, and its lengths and perplexities numbers, as
    floats (NaN = missing), however pandas stores them (``Float64`` or an object column
    with ``pd.NA`` / ``None``, a category, ``Decimal``, ``int8``), and its named index
    levels as columns (``set_index("human")``), as the file reader and ``recuse.audit``
    read them. An :class:`InputError` names what it lacks (a ratings table has no
    verdicts), a header that is not one name per column, or a cell that is no
    probability or number, where a ``TypeError`` or ``KeyError`` came from deep inside
    the metric. ``judged=False``: the table may hold labels only (no verdict column).
    Tables of only the columns a metric reads stay welcome.

    >>> t = require_pairs(pd.DataFrame({"p_a": pd.array([1, None], dtype="Float64")}))
    >>> t["p_a"].dtype, t["p_a"].isna().tolist()
    (dtype('float64'), [False, True])
    """
    if not isinstance(table, pd.DataFrame):
        raise InputError(
            f"expected a pairs table (a pandas DataFrame), got {type(table).__name__}",
            fix="read it with recuse.data.load(NAME_OR_FILE)",
        )
    check_header(table)  # table[column] is one column below
    table = index_as_columns(table)
    if judged and not any(c in table.columns for c in VERDICTS):
        ratings = {"model", "rating"} <= set(map(str, table.columns))
        raise InputError(
            f"expected a pairs table; this one has no verdict column ({', '.join(VERDICTS)})"
            + (": it looks like a ratings table" if ratings else ""),
            fix="read it with recuse.data.load(NAME_OR_FILE) or check it with "
            "recuse.validate_pairs(frame); ratings go to recuse.regression.fit_favoritism",
        )
    generators = [c for c in ("model_a", "model_b") if c in table.columns]
    if len(generators) == 1:
        (other,) = {"model_a", "model_b"} - set(generators)
        raise InputError(
            f"the table has {generators[0]} but no {other} column: a pair's two answers "
            "need their models named alike",
            fix=f"add {other}, or drop {generators[0]} (then the generators are unknown)",
        )
    # the label and generator columns a table left out, added empty as the file reader
    # adds them (no human label, unknown generators): a metric then says it has no
    # labelled pairs, or none with the judge's own answer, where pandas raised
    # KeyError: 'human' (the verdicts are not added: p_a is read from the two orders)
    table = with_optional_pairs_columns(table, verdicts=False)
    read = {c: _probabilities(table[c], c) for c in (*VERDICTS, "human") if c in table.columns}
    read |= {c: _numbers(table[c], c, "a number") for c in MEASURES if c in table.columns}
    stored = {c: v for c, v in read.items() if table[c].dtype != np.float64}
    orders = [read[c] for c in ("p_a_first", "p_a_second") if c in read]
    if "p_a" not in table.columns and orders:  # the mean over the orders judged, as read
        stored["p_a"] = _mean_of_judged(np.vstack(orders))
    if any(c in table.columns for c in VERDICTS):  # an order not given: none judged in it
        empty = np.full(len(table), np.nan)
        stored |= {c: empty for c in ("p_a_first", "p_a_second") if c not in table.columns}
    return table.assign(**stored) if stored else table


def _mean_of_judged(orders: NDArray[np.float64]) -> NDArray[np.float64]:
    """Each column's mean over its non-NaN rows (NaN where none): ``np.nanmean`` without
    its "mean of empty slice" warning, which hiding took the process's one warnings
    state (another thread's warnings went unseen meanwhile)."""
    judged = ~np.isnan(orders)
    with np.errstate(invalid="ignore"):  # 0 / 0: judged in neither order
        return np.where(judged, orders, 0.0).sum(axis=0) / judged.sum(axis=0)


_NUMERIC_KINDS = frozenset({"floating", "integer", "mixed-integer-float", "decimal", "empty"})
_FIX = (
    "verdicts and labels are P(a better) in [0, 1], lengths and perplexities numbers, "
    "missing = none: read the table with recuse.validate_pairs(frame) (it reads A / B / "
    "tie, model names and AlpacaEval's 1 / 2) or recuse.data.load(NAME_OR_FILE), or map "
    "other values (scores, True / False) to P(a better) first"
)


def _numbers(s: pd.Series, column: str, what: str) -> NDArray[np.float64]:
    """``s`` as floats (missing: NaN), or an :class:`InputError` at the first cell of
    ``s`` (``row``: its position in the table) that is no number (``"A"``, ``True``):
    ``what`` it should be, a column as written in a table that recuse has not read."""
    if isinstance(s.dtype, pd.CategoricalDtype):
        s = s.astype(object)  # its values, not its codes: read as a column of them
    if pd.api.types.is_bool_dtype(s.dtype) or (
        not pd.api.types.is_numeric_dtype(s.dtype)
        and pd.api.types.infer_dtype(s, skipna=True) not in _NUMERIC_KINDS
    ):
        number = s.map(lambda v: isinstance(v, int | float | np.number) and not isinstance(
            v, bool | np.bool_))  # fmt: skip
        odd = np.flatnonzero(~(number.to_numpy(bool) | s.isna().to_numpy(bool)))
        if len(odd):  # else every value is a number
            i = int(odd[0])
            raise InputError(
                f"{shown(s.iloc[i])} is not {what} (a table not read by recuse?)",
                row=i + 1,
                column=column,
                fix=_FIX,
            )
    return pd.to_numeric(s, errors="coerce").to_numpy(float, na_value=np.nan)


def _probabilities(s: pd.Series, column: str) -> NDArray[np.float64]:
    """``s`` as floats (missing: NaN), or an :class:`InputError` at the first cell of
    ``s`` that is no probability: a verdict or label as written (``"A"``, ``True``, a
    score of 70) in a table that recuse has not read, where the metric would fail deep
    in numpy or, worse, average it (a "share of the win" of 35). Missing is allowed."""
    values = _numbers(s, column, "a probability")
    odd = np.flatnonzero(np.isinf(values) | (values < 0) | (values > 1))
    if len(odd):
        i = int(odd[0])
        raise InputError(
            f"{values[i]:g} is not a probability (a table not read by recuse?)",
            row=i + 1,
            column=column,
            fix=_FIX,
        )
    return values


def judge_codes(
    pairs: pd.DataFrame, judges: str | Sequence[str] | None
) -> tuple[NDArray[np.intp], tuple[str, ...]]:
    """Group code of each row by its judge (-1 = not one of ``judges``) and the labels.

    ``judges=None`` takes every judge in the table. Unknown judge names raise
    :class:`ConfigError` listing the judges that are there.
    """
    if "judge" not in pairs.columns:
        raise EstimationError("the table has no judge column, so there are no verdicts to assess")
    present = sorted({str(j) for j in pairs["judge"].dropna().unique()})
    if not present:
        raise EstimationError(
            "the table has no judge verdicts (no row names a judge) — run a judge first "
            f"(recuse judge), or map the file's judge and verdict columns "
            f"({caller_option('--map', 'mapping=')})"
        )
    if judges is None:
        wanted = present
    else:
        wanted = [judges] if isinstance(judges, str) else list(judges)
        missing = [j for j in wanted if j not in present]
        if missing:
            raise ConfigError(
                f"judge {missing[0]!r} is not in the table — judges present: {', '.join(present)}"
            )
    labels = tuple(dict.fromkeys(wanted))
    index = {j: i for i, j in enumerate(labels)}
    raw, uniques = pd.factorize(pairs["judge"])
    lookup = np.array([index.get(str(u), -1) for u in uniques] + [-1], dtype=np.intp)
    codes = lookup[raw]  # raw -1 (no judge) picks the trailing -1
    return codes, labels


def ties_note(verdict: Verdict, judge_ties: JudgeTies) -> str:
    """How verdicts were read, for a metric's ``method`` text.

    >>> ties_note("pick", "half"), ties_note("prob", "half")
    ('verdict=pick, judge ties half', 'verdict=prob')
    """
    return f"verdict={verdict}" + (f", judge ties {judge_ties}" if verdict == "pick" else "")


def human_ties_noun(pairs: pd.DataFrame, tied: NDArray[np.bool_]) -> str:
    """What the human labels of 0.5 on the rows ``tied`` are, in words.

    A label that is one vote is 0.5 only where the human called it a tie: "human
    ties". A label that is the share of several votes (``human_votes`` > 1, as
    MT-Bench's expert votes) is 0.5 also where the votes split evenly (one for a,
    one for b): "tied or evenly split human votes" as soon as one such row is tied.

    >>> t = pd.DataFrame({"human": [0.5, 0.5, 1.0], "human_votes": [1, 2, 3]})
    >>> human_ties_noun(t, np.array([True, False, False]))
    'human ties'
    >>> human_ties_noun(t, np.array([True, True, False]))
    'tied or evenly split human votes'
    >>> human_ties_noun(t.drop(columns="human_votes"), np.array([True, True, False]))
    'human ties'
    """
    if "human_votes" not in pairs.columns:
        return "human ties"
    votes = pd.to_numeric(pairs["human_votes"], errors="coerce").to_numpy(float)
    several = np.nan_to_num(votes, nan=1.0) > 1
    return "tied or evenly split human votes" if bool(np.any(tied & several)) else "human ties"


def human_ties_words(pairs: pd.DataFrame, tied: NDArray[np.bool_], human_ties: HumanTies) -> str:
    """How a metric used the labels of 0.5 on the rows ``tied``, for its ``method``:
    :func:`human_ties_noun` and "left out" (``human_ties="drop"``) or "count ½".

    >>> t = pd.DataFrame({"human": [0.5, 1.0], "human_votes": [2, 1]})
    >>> human_ties_words(t, np.array([True, False]), "drop")
    'tied or evenly split human votes left out'
    >>> human_ties_words(t.drop(columns="human_votes"), np.array([True, False]), "split")
    'human ties count ½'
    """
    noun = human_ties_noun(pairs, tied)
    return f"{noun} left out" if human_ties == "drop" else f"{noun} count ½"
