"""Position bias: does the verdict depend on which response is shown first?

Only rows judged in BOTH orders enter (with one order, position and quality cannot
be told apart). Per order the verdict becomes a pick: a (``p > 0.5``), b
(``p < 0.5``) or tie (``p == 0.5``); ``p_a_first`` / ``p_a_second`` are both in the
a/b frame of the table.

* consistency — share of pairs whose two picks are the same (a/a, b/b or tie/tie),
  as in Zheng et al.'s MT-Bench study;
* flip rate — share of pairs whose winner reverses (a/b or b/a); the remaining
  ``1 - consistency - flip rate`` changed between a win and a tie. Their no-bias
  values (flip rate 0, consistency 1) are those of a judge whose verdict is a fixed
  function of the two answers: a judge with no slot preference whose verdicts are
  drawn anew on each call (sampling) flips the pairs it is unsure of, and reads a flip
  rate well above 0 (:data:`NOT_ONLY_POSITION`); only the first-position rate
  separates a slot preference from that noise;
* first-position preference rate — how much of the win goes to the response shown
  first, averaged over the two orders::

      rate = mean( (P_first(a | a first) + P_first(b | b first)) / 2 )
           = mean( (p_a_first + 1 - p_a_second) / 2 )

  0.5 = no position preference, > 0.5 = prefers the first slot, < 0.5 = the
  second. With ``verdict="prob"`` the probabilities are used; with ``"pick"`` the
  picks (a tie counts half).

A judge whose verdict is the same in both orders on every pair (``p_a_first ==
p_a_second``, as a reward model's: it scores each answer alone) has rate 0.5,
consistency 1 and flip rate 0, and resamples that cannot vary; the interval is then the
one the prompts bound (:func:`recuse.metrics.estimate.unseen_span`: the share of prompts
whose verdict could change with the order, none of ``n`` seen), since the data cannot
tell a judge blind to the order from one that sees it on a few pairs; each of the three
says so (:func:`order_blind`) in place of the zero-width warning. Where a few pairs do
change, the three rest on those prompts: their BCa intervals are widened by Student's t
on the prompts' effective number, within the exact bound on the prompts that change
(:func:`recuse.metrics.estimate.moved_span`; the statistics are ``sparse``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from recuse.metrics.bootstrap import GroupedStatistic, Resampling, check_min_n, ratio
from recuse.metrics.estimate import MetricSpec, clusters_of, run_one
from recuse.metrics.result import MetricResult
from recuse.metrics.self_preference import single_judge
from recuse.metrics.verdicts import Verdict, check_modes, judge_codes, judge_score, order_picks

__all__ = [
    "NOT_ONLY_POSITION",
    "consistency_spec",
    "first_position_rate",
    "first_position_spec",
    "flip_rate",
    "flip_spec",
    "position_consistency",
]

FloatArray = NDArray[np.float64]

#: what the flip rate's 0 and the consistency's 1 are, in the words of their ``method``:
#: a judge with no slot preference whose verdicts vary from call to call flips too
NOT_ONLY_POSITION = (
    "its no-bias value holds for a judge whose verdict is a fixed function of the two "
    "answers; one that picks at random between calls (sampled verdicts) flips the pairs it "
    "is unsure of with no slot preference at all (picks of P(a) = expit(2·gap), gap ~ "
    "N(0, 1), drawn anew in each order: flip rate 0.30), so the first-position rate "
    "(0.5 = none) tells a slot preference from such noise"
)


def _both(pairs: pd.DataFrame) -> tuple[FloatArray, FloatArray, NDArray[np.bool_]]:
    f = pairs["p_a_first"].to_numpy(float)
    s = pairs["p_a_second"].to_numpy(float)
    return f, s, np.isfinite(f) & np.isfinite(s)


def _rate_stat(
    name: str, hit: FloatArray, both: NDArray[np.bool_], codes: NDArray[np.intp],
    labels: tuple[str, ...], extra: FloatArray | None = None,
) -> GroupedStatistic:  # fmt: skip
    """The rate ``Σ hit / Σ both`` per judge; ``extra`` columns (rows × m) are summed
    beside it for the point estimate only (components, :func:`order_blind`)."""
    values = np.column_stack([np.where(both, hit, 0.0), both.astype(float)])
    if extra is not None:
        values = np.column_stack([values, np.where(both[:, None], extra, 0.0)])
    return GroupedStatistic(
        name=name,
        values=values,
        group=np.where(both, codes, -1),
        labels=labels,
        combine=ratio,
        required=((1, "pairs judged in both orders"),),
        boot_k=2,
        sparse=True,
    )


def _differs(f: FloatArray, s: FloatArray) -> FloatArray:
    """1 where the verdicts of the two orders differ (a/b frame), else 0."""
    return (np.abs(np.nan_to_num(f) - np.nan_to_num(s)) > 1e-12).astype(float)


def order_blind(totals: FloatArray) -> str | None:
    """What the judge's position metrics are, from a group's totals (``[Σ hit, pairs in
    both orders, …, pairs whose two verdicts differ]``), when no pair's verdict changes
    with the order: a judge that cannot see the order (a reward model, which scores each
    answer alone) reads so by construction, one that can by chance; the interval is the
    one the number of prompts allows (:func:`recuse.metrics.estimate.unseen_span`);
    None otherwise.

    >>> order_blind(np.array([175.0, 350.0, 0.0]))[:55]
    'its verdict is the same in both orders on all 350 pairs'
    >>> order_blind(np.array([170.0, 350.0, 4.0])) is None
    True
    """
    pairs, differ = int(totals[1]), totals[-1]
    if pairs == 0 or differ > 0:
        return None
    return (
        f"its verdict is the same in both orders on all {pairs:,} pairs (p_a_first = "
        "p_a_second): a judge that cannot see the order (a reward model, scoring each "
        "answer alone) reads so by construction, one that can by chance; the resamples "
        "cannot vary, so the interval is the one the prompts allow — the share of them "
        "whose verdict could change with the order, none seen (its exact bound at the "
        "interval's level); more prompts narrow it"
    )


def consistency_spec(
    pairs: pd.DataFrame, codes: NDArray[np.intp], labels: tuple[str, ...]
) -> MetricSpec:
    """Share of both-order pairs with the same pick in the two orders, per judge."""
    f, s, both = _both(pairs)
    pf, ps = order_picks(f), order_picks(s)
    hit = (pf == ps).astype(float)
    flips = ((pf * ps) == -1).astype(float)
    extra = np.column_stack([flips, _differs(f, s)])
    stat = _rate_stat("position_consistency", hit, both, codes, labels, extra)

    def components(t: FloatArray) -> dict[str, float]:
        n = t[1]
        return {
            "consistent": float(t[0]),
            "flipped": float(t[2]),
            "half_flipped": float(n - t[0] - t[2]),
        }

    method = (
        "position consistency: share of pairs with the same pick (a/b/tie) in both orders; "
        f"1 = always consistent; {NOT_ONLY_POSITION}"
    )
    # 1, no position effect, is the most a share can be: its ceiling (no p-value)
    return MetricSpec(
        "position_consistency", stat, method, components, null=1.0, constant=order_blind,
        unseen=True, bound="ceiling", expanded=True, extent=(0.0, 1.0),
    )  # fmt: skip


def flip_spec(pairs: pd.DataFrame, codes: NDArray[np.intp], labels: tuple[str, ...]) -> MetricSpec:
    """Share of both-order pairs whose winner reverses when the order is swapped, per judge."""
    f, s, both = _both(pairs)
    hit = ((order_picks(f) * order_picks(s)) == -1).astype(float)
    stat = _rate_stat("flip_rate", hit, both, codes, labels, _differs(f, s)[:, None])
    method = (
        "flip rate: share of pairs whose winner reverses (a/b or b/a) when the order is "
        f"swapped; {NOT_ONLY_POSITION}"
    )
    return MetricSpec(
        "flip_rate", stat, method, constant=order_blind, unseen=True, bound="floor",
        expanded=True, extent=(0.0, 1.0),
    )  # fmt: skip


def first_position_spec(
    pairs: pd.DataFrame,
    codes: NDArray[np.intp],
    labels: tuple[str, ...],
    *,
    verdict: Verdict,
) -> MetricSpec:
    """Mean share of the win given to the first-shown response, per judge."""
    check_modes(verdict=verdict)
    f, s, both = _both(pairs)
    sf = judge_score(f, verdict=verdict, judge_ties="half")
    ss = judge_score(s, verdict=verdict, judge_ties="half")
    hit = (sf + 1.0 - ss) / 2.0
    stat = _rate_stat("first_position_rate", hit, both, codes, labels, _differs(f, s)[:, None])
    method = (
        "first-position preference rate: mean of (p_a_first + 1 - p_a_second) / 2, "
        f"0.5 = none; verdict={verdict}"
    )
    return MetricSpec(
        "first_position_rate", stat, method, null=0.5, constant=order_blind, unseen=True,
        expanded=True, extent=(0.0, 1.0),
    )  # fmt: skip


def _single(
    pairs: pd.DataFrame,
    judge: str | None,
    build: str,
    verdict: Verdict,
    boot: Resampling,
    min_n: int,
) -> MetricResult:
    check_min_n(min_n)
    rows = single_judge(pairs, judge)
    codes, labels = judge_codes(rows, None)
    if build == "consistency":
        spec = consistency_spec(rows, codes, labels)
    elif build == "flip":
        spec = flip_spec(rows, codes, labels)
    else:
        spec = first_position_spec(rows, codes, labels, verdict=verdict)
    return run_one(spec, clusters_of(rows), boot=boot, min_n=min_n)


def position_consistency(
    pairs: pd.DataFrame,
    *,
    judge: str | None = None,
    boot: Resampling = Resampling(),
    min_n: int = 5,
) -> MetricResult:
    """Share of pairs judged in both orders whose two picks agree (a/a, b/b or tie/tie).

    ``consistency = sum(pick_first == pick_second) / n_both``. ``components`` counts
    the consistent, flipped (a/b reversed) and half-flipped (win vs tie) pairs.

    >>> from recuse.tables import validate_pairs
    >>> t = validate_pairs(pd.DataFrame({
    ...     "item_id": list("abcdefgh"), "prompt_id": list("abcdefgh"), "model_a": None,
    ...     "model_b": None, "human": None, "judge": "j",
    ...     "p_a_first": [1, 1, 0, 0, 1, 1, 0.5, 1], "p_a_second": [1, 0, 0, 1, 0, 0.5, 0.5, None],
    ...     "p_a": None}))
    >>> r = position_consistency(t, min_n=1, boot=Resampling(n_boot=200))
    >>> r.estimate, r.n, r.components["flipped"]  # 3 of the 7 both-order pairs agree
    (0.42857142857142855, 7, 3.0)
    """
    return _single(pairs, judge, "consistency", "prob", boot, min_n)


def flip_rate(
    pairs: pd.DataFrame,
    *,
    judge: str | None = None,
    boot: Resampling = Resampling(),
    min_n: int = 5,
) -> MetricResult:
    """Share of pairs judged in both orders whose winner reverses.

    ``flip_rate = sum(pick_first * pick_second == -1) / n_both`` (picks: a = 1, b = -1).

    >>> from recuse.tables import validate_pairs
    >>> t = validate_pairs(pd.DataFrame({
    ...     "item_id": list("abcdefgh"), "prompt_id": list("abcdefgh"), "model_a": None,
    ...     "model_b": None, "human": None, "judge": "j",
    ...     "p_a_first": [1, 1, 0, 0, 1, 1, 0.5, 1], "p_a_second": [1, 0, 0, 1, 0, 0.5, 0.5, None],
    ...     "p_a": None}))
    >>> round(flip_rate(t, min_n=1, boot=Resampling(n_boot=200)).estimate, 4)  # 3 of 7
    0.4286
    """
    return _single(pairs, judge, "flip", "prob", boot, min_n)


def first_position_rate(
    pairs: pd.DataFrame,
    *,
    judge: str | None = None,
    verdict: Verdict = "prob",
    boot: Resampling = Resampling(),
    min_n: int = 5,
) -> MetricResult:
    """Share of the win the judge gives to the response shown first (0.5 = no position bias).

    ``rate = mean((p_a_first + 1 - p_a_second) / 2)`` over pairs judged in both orders.

    >>> from recuse.tables import validate_pairs
    >>> t = validate_pairs(pd.DataFrame({
    ...     "item_id": list("abcd"), "prompt_id": list("abcd"), "model_a": None,
    ...     "model_b": None, "human": None, "judge": "j",
    ...     "p_a_first": [1, 1, 0.9, 0], "p_a_second": [1, 0, 0.3, 0], "p_a": None}))
    >>> r = first_position_rate(t, min_n=1, boot=Resampling(n_boot=200))
    >>> round(r.estimate, 6)  # (0.5+1+0.8+0.5)/4
    0.7
    """
    return _single(pairs, judge, "first", verdict, boot, min_n)
