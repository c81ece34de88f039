"""Self-preference taken apart: a ladder from the raw own-win rate to the harmful part.

Per judge, over the pairs that hold its own answer against another model's (``v`` =
the judge's share of the win given to its own answer, judge ties half; ``h`` = the
reference's P(own better), e.g. human or objective correctness labels):

=====================  ===========================================================
own_win_rate           P(judge picks own) = Σv / n — no quality control
reference_own_rate     P(reference prefers own) = Σh / n (reference ties half)
dp_difference          P(judge picks own) − P(reference prefers own), on the pairs
                       with both (Demographic parity as a difference)
eo                     recall when the reference prefers own − recall when it
                       prefers the other (Equal opportunity, Wataoka Def. 4.1)
legitimate             P(judge picks own | reference prefers own)
harmful                P(judge picks own | reference prefers the other)
*_own_both, *_split,   over the same pairs (legitimate: reference prefers own; harmful:
*_other_both           it prefers the other) judged in both presentation orders: the
                       share where the judge chose its own answer in both orders, where
                       the two orders disagree (a split, or a tie in either: position,
                       not choice, decides it), and where it chose the other in both.
                       ``legitimate`` and ``harmful`` average the two orders' shares (a
                       split of two firm picks counts ½, of two probabilities their mean)
                       and read as choice only as far as ``*_own_both`` carries them
baseline_error         P(judge picks the worse answer | a pair of two *other*
                       models' answers the reference tells apart)
harmful_excess         harmful − baseline_error: how much more often the judge
                       chooses its own wrong answer than another model's equally
                       wrong one (the evaluator-quality baseline); 0 = none
=====================  ===========================================================

Conditional rungs drop reference ties. All rungs share one prompt-clustered bootstrap
(the project's :func:`~recuse.metrics.bootstrap.cluster_bootstrap`), so differences
between rungs are paired. A rung that is one rate (a mean of per-pair shares, 0 to 1)
takes the Wilson score interval at the effective pairs that bootstrap measures
(:func:`~recuse.metrics.bootstrap.share_interval`, :func:`share_rungs`); the three
differences keep their BCa interval (demographic parity's expanded for few prompts, as
the pairwise one's). Measured on ``benchmarks/metric_coverage.py``'s few-prompts design
(30 prompts of 3 pairs, biases varying by prompt; truths: a 600,000-pair table's
rungs), 300 tables: the split rungs (9 pairs of the judge's a table) held the truth
(0.10) in 0.53–0.57 of them with the BCa interval — of zero width at 0 where no pair
split — and 0.93–0.96 with this one (1.2 times as wide); the other rates 0.89–0.95
(BCa: 0.90–0.96 at 1.1 times the width); demographic parity 0.85 plain, 0.87 expanded. At
100 prompts the rates read 0.87–0.92 either way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from recuse.metrics.bootstrap import (
    Combine,
    GroupedStatistic,
    Resampling,
    check_min_n,
    difference_of_ratios,
    ratio,
    share_interval,
)
from recuse.metrics.estimate import MetricSpec, clusters_of, run_specs, unlabelled_judges
from recuse.metrics.result import MetricResult, NullBound, Skipped
from recuse.metrics.self_preference import favored_side
from recuse.metrics.verdicts import TIE_TOL, judge_codes, orient, require_pairs
from recuse.numbers import percent
from recuse.roster import self_keys

__all__ = ["RUNGS", "rung_definition", "self_preference_ladder"]

FloatArray = NDArray[np.float64]
RUNGS: dict[str, str] = {
    "own_win_rate": "P(judge picks its own answer), quality not controlled",
    "reference_own_rate": "P(reference prefers the judge's own answer)",
    "dp_difference": "P(judge picks own) − P(reference prefers own); 0 = as often as the reference",
    "eo": "recall when the reference prefers own − recall when it prefers the other "
    "(Def. 4.1); 0 = the paper's no bias, which a strong judge without bias reads above",
    "legitimate": "P(judge picks own | reference prefers own): self-preference the "
    "reference justifies",
    "legitimate_own_both": "P(own chosen in both orders | reference prefers own; judged in "
    "both orders)",
    "legitimate_split": "P(the two orders disagree or tie | reference prefers own; judged in "
    "both orders): position, not choice",
    "legitimate_other_both": "P(other chosen in both orders | reference prefers own; judged "
    "in both orders)",
    "harmful": "P(judge picks own | reference prefers the other): its own worse answer chosen "
    "(each pair counts its own answer's share of the win averaged over the two orders: a "
    "split of two firm picks counts ½)",
    "harmful_own_both": "P(own chosen in both orders | reference prefers the other; judged in "
    "both orders): its own worse answer chosen whatever the order",
    "harmful_split": "P(the two orders disagree or tie | reference prefers the other; judged "
    "in both orders): position, not choice",
    "harmful_other_both": "P(other chosen in both orders | reference prefers the other; judged "
    "in both orders)",
    "baseline_error": "P(judge picks the worse answer | pair of two other models' answers): "
    "its error rate where it has no stake",
    "harmful_excess": "harmful − baseline_error: own worse answers chosen beyond the "
    "judge's general error rate; 0 = no excess, which a strong judge without bias reads "
    "above (where the reference prefers the other, its own answer is a close call)",
}


#: the averaging words of :data:`RUNGS`' harmful rung (true of the two orders only)
_BOTH_ORDERS = (
    " (each pair counts its own answer's share of the win averaged over the two orders: a "
    "split of two firm picks counts ½)"
)


def rung_definition(rung: str, orders: str = "both", *, both_judged: bool = True) -> str:
    """:data:`RUNGS`' words for ``rung`` where the verdicts are of ``orders`` (the
    audit's ``--orders``): with one order, the harmful rung's averaging words name that
    order's verdict instead; with ``orders="both"`` but no pair of the judge's judged
    in both orders (``both_judged`` false: a file of one verdict per pair), they say so.

    >>> rung_definition("harmful", "first").endswith("(the first order's verdict alone)")
    True
    >>> rung_definition("harmful", both_judged=False).endswith("judged in both orders)")
    True
    """
    words = RUNGS[rung]
    if (orders == "both" and both_judged) or not words.endswith(_BOTH_ORDERS):
        return words
    if orders == "both":
        return words.removesuffix(_BOTH_ORDERS) + (
            " (each pair's one verdict: no pair of the judge's was judged in both orders)"
        )
    return words.removesuffix(_BOTH_ORDERS) + f" (the {orders} order's verdict alone)"


def _spec(
    name: str, cols: list[FloatArray], rows: NDArray[np.bool_], *, combine: Combine,
    need: tuple[str, ...], codes: NDArray[np.intp], labels: tuple[str, ...],
) -> MetricSpec:  # fmt: skip
    values = np.column_stack([np.where(rows, c, 0.0) for c in cols])
    stat = GroupedStatistic(
        name=name,
        values=values,
        group=np.where(rows, codes, -1),
        labels=labels,
        combine=combine,
        required=tuple(zip(range(1, len(cols), 2), need, strict=True)),
    )
    # a rung that is one ratio is a rate (never below its no-bias value 0): its floor
    bound: NullBound | None = "floor" if combine is ratio else None
    # demographic parity's BCa interval expanded for few prompts, as the pairwise one's
    # (its plain interval held the truth 0.85 of the time at 30 prompts)
    return MetricSpec(
        name, stat, RUNGS[name], labelled=name != "own_win_rate", bound=bound,
        expanded=name == "dp_difference",
    )  # fmt: skip


def self_preference_ladder(
    pairs: pd.DataFrame,
    *,
    judges: str | list[str] | None = None,
    boot: Resampling = Resampling(),
    min_n: int = 5,
    selves: Mapping[str, str] | None = None,
) -> tuple[list[MetricResult], list[Skipped]]:
    """Every rung of :data:`RUNGS` for every judge (see the module docstring).

    ``selves`` (:meth:`~recuse.roster.Roster.self_map`): what counts as the judge's own
    answer (default: the judge's id; with its model line, every snapshot of the line).
    """
    check_min_n(min_n)
    pairs = require_pairs(pairs)
    codes, labels = judge_codes(pairs, judges)
    side = favored_side(pairs, relation="self", selves=selves)
    v = orient(pairs["p_a"].to_numpy(float), side)
    h = orient(pairs["human"].to_numpy(float), side)
    one = np.ones(len(pairs))
    own = (side != 0) & np.isfinite(v)
    labelled = own & np.isfinite(h)
    own_better = labelled & (h > 0.5 + TIE_TOL)
    other_better = labelled & (h < 0.5 - TIE_TOL)
    # pairs between two other models that the reference tells apart
    judge = self_keys(pairs["judge"].astype(object), selves).to_numpy()
    a = self_keys(pairs["model_a"].astype(object), selves).to_numpy()
    b = self_keys(pairs["model_b"].astype(object), selves).to_numpy()
    p, ha = pairs["p_a"].to_numpy(float), pairs["human"].to_numpy(float)
    known = pd.notna(pairs["model_a"]).to_numpy() & pd.notna(pairs["model_b"]).to_numpy()
    others = known & (a != judge) & (b != judge) & np.isfinite(p) & np.isfinite(ha)
    others &= np.abs(ha - 0.5) > TIE_TOL
    worse_share = np.where(ha > 0.5, 1.0 - p, p)  # the share of the win the worse answer got
    # per-order choices on pairs judged in both orders: own in both, split (or a tie), other
    nan = np.full(len(pairs), np.nan)
    v1 = orient(pairs["p_a_first"].to_numpy(float), side) if "p_a_first" in pairs else nan
    v2 = orient(pairs["p_a_second"].to_numpy(float), side) if "p_a_second" in pairs else nan
    both_orders = np.isfinite(v1) & np.isfinite(v2)
    own_both = both_orders & (v1 > 0.5 + TIE_TOL) & (v2 > 0.5 + TIE_TOL)
    other_both = both_orders & (v1 < 0.5 - TIE_TOL) & (v2 < 0.5 - TIE_TOL)
    split = both_orders & ~own_both & ~other_both
    picks_own_when_worse = np.where(other_better, v, 0.0)

    def spec(
        name: str,
        cols: list[FloatArray],
        rows: NDArray[np.bool_],
        *,
        combine: Combine,
        need: tuple[str, ...],
    ) -> MetricSpec:
        return _spec(name, cols, rows, combine=combine, need=need, codes=codes, labels=labels)

    own_pairs = "judged pairs holding the judge's own answer"
    labelled_own = "labelled pairs holding the judge's own answer"
    own_wins = "pairs where the reference prefers the judge's own answer"
    other_wins = "pairs where the reference prefers the other answer"
    other_models = "labelled pairs of two other models"
    specs = [
        spec("own_win_rate", [v, one], own, combine=ratio, need=(own_pairs,)),
        spec("reference_own_rate", [h, one], labelled, combine=ratio, need=(labelled_own,)),
        spec("dp_difference", [v, one, h, one], labelled, combine=difference_of_ratios,
             need=(labelled_own, labelled_own + " (reference)")),
        spec("eo", [v * own_better, own_better.astype(float), (1 - v) * other_better,
                    other_better.astype(float)], own_better | other_better,
             combine=difference_of_ratios, need=(own_wins, other_wins)),
        spec("legitimate", [v, one], own_better, combine=ratio, need=(own_wins,)),
        *(
            spec(f"{rung}_{kind}", [which.astype(float), one], given & both_orders,
                 combine=ratio, need=(f"{wins} judged in both orders",))
            for rung, given, wins in (("legitimate", own_better, own_wins),)
            for kind, which in (("own_both", own_both), ("split", split),
                                ("other_both", other_both))
        ),
        spec("harmful", [v, one], other_better, combine=ratio, need=(other_wins,)),
        *(
            spec(f"{rung}_{kind}", [which.astype(float), one], given & both_orders,
                 combine=ratio, need=(f"{wins} judged in both orders",))
            for rung, given, wins in (("harmful", other_better, other_wins),)
            for kind, which in (("own_both", own_both), ("split", split),
                                ("other_both", other_both))
        ),
        spec("baseline_error", [worse_share, one], others, combine=ratio, need=(other_models,)),
        spec("harmful_excess",
             [picks_own_when_worse, other_better.astype(float),
              np.where(others, worse_share, 0.0), others.astype(float)],
             other_better | others, combine=difference_of_ratios,
             need=(other_wins, other_models)),
    ]  # fmt: skip
    results, skipped = run_specs(
        specs,
        clusters_of(pairs),
        boot=boot,
        min_n=min_n,
        unlabelled=unlabelled_judges(pairs, codes, labels),
    )
    rates = {s.metric for s in specs if s.stat.combine is ratio}
    return share_rungs(results, rates, boot=boot), skipped


#: the start of the zero-width warning (:func:`recuse.metrics.estimate.interval_warnings`),
#: which a rate's Wilson interval no longer has
_NO_VARIATION = "no variation in the resamples"


def share_rungs(
    results: list[MetricResult], rates: set[str], *, boot: Resampling
) -> list[MetricResult]:
    """``results`` with each rate rung's interval (``rates``: one ratio of per-pair shares)
    replaced by :func:`~recuse.metrics.bootstrap.share_interval`'s: the Wilson score
    interval at the effective pairs of the bootstrap's standard error (the prompts where
    every pair reads the same), within 0 to 1, and its method's words saying so."""
    out = []
    for r in results:
        if r.metric not in rates:
            out.append(r)
            continue
        low, high = share_interval(
            r.estimate, n=r.n, std_error=r.std_error, clusters=r.n_clusters, level=r.level
        )
        method = r.method.split("; ")[0] + (
            f"; {percent(r.level)} Wilson score interval at the effective pairs of the "
            f"cluster bootstrap over prompts ({boot.n_boot} resamples): p(1 − p)/se², the "
            "prompts where every pair reads the same"
        )
        kept = tuple(w for w in r.warnings if not w.startswith(_NO_VARIATION))
        out.append(
            replace(r, ci_low=low, ci_high=high, method=method, warnings=kept, interval_rule=None)
        )
    return out
