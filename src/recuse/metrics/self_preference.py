"""Self-preference and family preference of a judge (Equal Opportunity / Demographic Parity).

Notation of the self-preference paper (self-preference-bias.txt, §3–4): for a pair
``(y0, y1)`` let ``Y`` be the index of the response the human prefers, ``Y'`` the one
the judge prefers and ``S`` the one the judge itself generated.

* Equal-Opportunity bias, Definition 4.1 (Eq. 2)::

      Bias_EO = P(Y' = 1 | S = 1, Y = 1) - P(Y' = 1 | S = 0, Y = 1)

  with ``y1`` the human-preferred response (no loss of generality, §4.1). The first
  term is the judge's recall on pairs where the human prefers the judge's own
  response, the second its recall (picking the other response) on pairs where the
  human prefers the other response. 0 = no bias, +1 = always picks itself, -1 =
  always picks the other.

* Demographic-Parity bias, Eq. 4 (appendix)::

      Bias_DP = P(Y' = 1 | S = 1) - P(Y' = 1 | S = 0)

  needs no human label; with ``y1`` assigned to a side at random it equals
  ``2 * P(judge prefers own) - 1``. Alone it is no statement of unfairness (quality
  is not controlled for), so recuse reports DP as peers do, a difference with the
  humans on the same pairs::

      DP = P(judge picks own) - P(human prefers own)

  over the labelled, judged pairs with the judge's response on exactly one side
  (human ties count half); 0 = the judge picks its own answer as often as the
  humans prefer it. Both rates are its components (``judge_prefers_s``,
  ``human_prefers_s``); Wataoka's Eq. 4 is ``2 * judge_prefers_s - 1``.

* Family preference: the same two formulas with ``S`` = the response of a model
  from the judge's family (per the roster) that is not the judge itself, over pairs
  without the judge's own response whose other response comes from outside the
  family.

Verdicts, judge ties and human ties follow :mod:`recuse.metrics.verdicts`: verdicts
are the order-averaged ``p_a`` (Eq. 3 averaged over the orders judged), used as a
probability (``verdict="prob"``, default) or as a pick (``"pick"``); human ties are
left out of the EO bias (``human_ties="drop"``, default) or split half/half
(``"split"``); judge ties in pick mode count half (``"half"``, default) or are left
out (``"drop"``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from os import PathLike
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from recuse.cells import shown
from recuse.errors import ConfigError, EstimationError, InputError
from recuse.metrics.bootstrap import GroupedStatistic, Resampling, check_min_n, difference_of_ratios
from recuse.metrics.estimate import MetricSpec, clusters_of, run_one
from recuse.metrics.result import MetricResult
from recuse.metrics.verdicts import (
    TIE_TOL,
    HumanTies,
    JudgeTies,
    Verdict,
    attribute_gap_values,
    check_modes,
    human_ties_words,
    judge_codes,
    judge_score,
    orient,
    require_pairs,
    ties_note,
)
from recuse.numbers import share_percent
from recuse.renaming import caller_option
from recuse.roster import Roster, self_keys
from recuse.terminal import one_line

#: the pairs an estimate of the preference for the judge's own (family's) answer needs,
#: in the words every metric that skips for want of them uses (the EO/DP here, the
#: calibrated estimate of :mod:`recuse.metrics.competence`): one cause, one wording
OWN_PAIRS = "pairs holding the judge's own answer"
FAMILY_PAIRS = "pairs holding a family member's answer against an outsider's"

__all__ = [
    "FAMILY_PAIRS",
    "OWN_PAIRS",
    "ConfusionMatrix",
    "Criterion",
    "Families",
    "Relation",
    "confusion_matrix",
    "family_preference",
    "favored_side",
    "preference_spec",
    "self_preference",
    "single_judge",
]

#: whose answer the judge is measured for: its own, or another model of its family
Relation = Literal["self", "family"]
#: the fairness criterion of the bias: Equal Opportunity (Def. 4.1, needs human labels)
#: or Demographic Parity (Eq. 4, as a difference with the humans)
Criterion = Literal["eo", "dp"]
#: a roster, or a ``{model: family}`` mapping
Families = Roster | Mapping[str, str]


def check_families(families: object) -> None:
    """Refuse a ``families=`` that is no roster and no ``{model: family}`` mapping: a
    roster file's path (``"my-roster.toml"``) was read as a mapping, every model "has no
    entry in the family mapping", and ``pairwise_bias`` skipped each family metric with
    that reason instead of saying what to pass."""
    if families is None or isinstance(families, Roster | Mapping):
        return
    what = f"the {type(families).__name__} {one_line(shown(families))}"
    if isinstance(families, str | PathLike):
        fix = "load the roster file first: Roster.load(path)"
    elif isinstance(families, pd.Series):  # a model-indexed column of families
        fix = "give it as a dict: families=series.to_dict()"
    else:
        fix = "give Roster.load() (the built-in roster) or a dict"
    raise ConfigError(f"families takes a Roster or a {{model: family}} mapping, got {what} — {fix}")


def _family_of(families: Families, name: str, column: str) -> str:
    """Family of one (canonical) name; an unknown name raises :class:`InputError`."""
    if isinstance(families, Roster):
        if name not in families:
            raise InputError(
                f"model {name!r} is not in the roster, so its family is unknown",
                column=column,
                fix="add it to a roster file ([[model]] id/family/aliases) and pass --roster",
            )
        return families.family(name)
    if name not in families:
        raise InputError(
            f"model {name!r} has no entry in the family mapping",
            column=column,
            fix="give every model and judge a family",
        )
    return str(families[name])


def favored_side(
    pairs: pd.DataFrame,
    *,
    relation: Relation = "self",
    families: Families | None = None,
    selves: Mapping[str, str] | None = None,
) -> NDArray[np.int8]:
    """Which side holds the row judge's own (or family) response: +1 = a, -1 = b, 0 = neither.

    ``relation="self"``: the response whose model equals the row's judge, when the
    other response has a known model that is not the judge. ``"family"``: the
    response of a family member that is not the judge, when the other response has
    a known model from outside the family (so pairs with the judge's own response
    are 0). Rows without a judge are 0. ``selves`` (:meth:`Roster.self_map`) widens
    "equals the judge" to "has the judge's key" (e.g. its model line: every snapshot
    of the line is the judge itself); None compares the ids.

    >>> t = pd.DataFrame({"judge": ["gpt-4"] * 3, "model_a": ["gpt-4", "claude-v1", "gpt-4"],
    ...                   "model_b": ["claude-v1", "gpt-4", "gpt-4"]})
    >>> favored_side(t).tolist()
    [1, -1, 0]
    """
    n = len(pairs)
    # one integer code per name over judge, model_a and model_b (-1 = missing)
    stacked = pd.concat([pairs["judge"], pairs["model_a"], pairs["model_b"]], ignore_index=True)
    codes, names = pd.factorize(stacked)
    cj, ca, cb = codes[:n], codes[n : 2 * n], codes[2 * n :]
    has_judge, known_a, known_b = cj >= 0, ca >= 0, cb >= 0
    # "self" compares keys: the names themselves, or what ``selves`` maps them to
    keys = np.append(pd.factorize(self_keys(pd.Series(names, dtype=object), selves))[0], -1)
    kj, ka, kb = keys[cj], keys[ca], keys[cb]  # code -1 -> key -1
    if relation == "self":
        s_a = has_judge & known_a & (ka == kj)
        s_b = has_judge & known_b & (kb == kj)
        out_a, out_b = known_a & ~s_a, known_b & ~s_b
    elif relation == "family":
        if families is None:
            raise ConfigError("family preference needs a roster or a model -> family mapping")
        check_families(families)
        columns = ("judge", "model_a", "model_b")
        where = {int(c): columns[k] for k, part in enumerate((cj, ca, cb)) for c in np.unique(part)}
        fam_names = [_family_of(families, str(name), where.get(i, "model_a"))
                     for i, name in enumerate(names)]  # fmt: skip
        fam_codes = np.append(pd.factorize(pd.Series(fam_names, dtype=object))[0], -1)
        fj, fa, fb = fam_codes[cj], fam_codes[ca], fam_codes[cb]  # code -1 -> family -1
        same_a = has_judge & known_a & (fa == fj)
        same_b = has_judge & known_b & (fb == fj)
        s_a = same_a & (ka != kj)
        s_b = same_b & (kb != kj)
        out_a, out_b = known_a & ~same_a, known_b & ~same_b
    else:
        raise ConfigError(f"relation must be 'self' or 'family'; got {relation!r}")
    side = np.zeros(n, dtype=np.int8)
    side[s_a & out_b] = 1
    side[s_b & out_a] = -1
    return side


#: the least share of a judge's pairs (net of the other slot) that show its own (family)
#: answer in one slot and were judged in one order only, and the fewest such pairs, from
#: which :func:`one_slot_words` speaks (at half exactly too: 10 of 20 pairs, 0 in the
#: other slot, half the judge's slot preference in the number)
ONE_SLOT_SHARE = 0.5
ONE_SLOT_MIN = 10


def one_slot_columns(pairs: pd.DataFrame, side: NDArray[np.int8]) -> NDArray[np.float64]:
    """Per row, ``(shown first only, shown second only)``: whether the favoured answer
    (``side``: +1 = a, -1 = b) was shown first (second) in the only order judged: a with
    ``p_a_first`` alone, b with ``p_a_second`` alone. Both 0 where both orders or only
    ``p_a`` (an unknown order) were given.

    >>> t = pd.DataFrame({"p_a_first": [1.0, 1.0, 1.0], "p_a_second": [None, None, 0.0]})
    >>> one_slot_columns(t, np.array([1, -1, 1], dtype=np.int8)).tolist()
    [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]
    """
    n = len(pairs)

    def given(column: str) -> NDArray[np.bool_]:
        if column not in pairs.columns:
            return np.zeros(n, dtype=bool)
        return np.asarray(pairs[column].notna().to_numpy(), dtype=bool)

    first, second = given("p_a_first"), given("p_a_second")
    a_first_only, a_second_only = first & ~second, second & ~first
    shown_first = ((side == 1) & a_first_only) | ((side == -1) & a_second_only)
    shown_second = ((side == 1) & a_second_only) | ((side == -1) & a_first_only)
    return np.column_stack([shown_first, shown_second]).astype(float)


#: what the one-slot warning calls the favoured answer of each relation
SLOT_WHO = {
    "self": "the judge's own answer",
    "family": "a family member's answer",
    "longer": "the longer answer",
}


def one_slot_words(first: float, second: float, n: float, *, who: str) -> str | None:
    """The warning where ``who`` (an answer the metric favours: the judge's own, a family
    member's, the longer) was shown in one slot on most of the judge's ``n`` pairs, each
    judged in that order only (``first`` / ``second`` of them,
    :func:`one_slot_columns`): its preference for a position then reads as a preference
    for that answer, in every number of the metric (a judge that always picks the answer
    shown first, its own answer always in a, judged with a first only: EO +1, DP the
    share the humans prefer the other). None where ``|first − second|`` is under
    :data:`ONE_SLOT_SHARE` of ``n`` or under :data:`ONE_SLOT_MIN` (under ``n`` where
    ``n`` is smaller: 8 pairs all so shown and judged are its whole number). A table
    with ``p_a`` only (the order unknown) never raises it: its pairs count in neither
    slot (:func:`one_slot_columns`), which docs/self-preference.md says.

    >>> one_slot_words(20, 0, 20, who=SLOT_WHO["self"])[:52]
    "the judge's own answer was shown first on 20 of its "
    >>> one_slot_words(6, 4, 20, who=SLOT_WHO["self"]) is None
    True
    """
    net = first - second
    if n <= 0 or abs(net) < max(ONE_SLOT_SHARE * n, min(ONE_SLOT_MIN, n)):
        return None
    (slot, count), (other, rest) = sorted(
        (("first", first), ("second", second)), key=lambda s: s[1], reverse=True
    )
    return (
        f"{who} was shown {slot} on {count:,.0f} of its {n:,.0f} pairs, each judged in "
        f"that order alone: the judge's preference for the answer shown {slot} reads "
        "here as a preference for that answer — judge the other order too (p_a_second "
        "beside p_a_first; where the table has it, "
        + caller_option("--orders both", 'orders="both"')
        + " reads it), or put the answer in a or b at random (said where such "
        f"pairs outnumber those showing it {other} in the one order judged, {rest:,.0f} "
        f"here, by {share_percent(ONE_SLOT_SHARE, 0)} of its pairs and {ONE_SLOT_MIN} "
        f"pairs or more, all its pairs where it has fewer than {ONE_SLOT_MIN})"
    )


def one_slot_note(first: float, second: float, n: float, *, who: str) -> str | None:
    """The note where some of the judge's ``n`` pairs show ``who`` (the answer the metric
    favours, as in :func:`one_slot_words`) in one slot and were judged in that order only
    (``first`` / ``second`` of them, :func:`one_slot_columns`), but too few or too evenly
    split between the slots for the warning of :func:`one_slot_words`, whose rule reads
    the difference of the two: their verdicts still carry the judge's preference for a
    slot, which the other order would cancel, so they move the number as far as the two
    slots do not balance it; it is computed from them unchanged (a note, no warning: no
    gate fails on it). None where there are none, or where the warning speaks (a result
    has the one or the other). JudgeBench's claude-3-haiku: 13 of 265 pairs, the longer
    answer shown first in 8 and second in 5; read in the first order only
    (``--orders first``), every pair of a judge is one such, e.g. 347 of 347, 172 and
    175: not "fewer" than the rule asks, only 3 more in one slot.

    >>> one_slot_note(8, 5, 265, who=SLOT_WHO["longer"])[:70]
    "13 of the judge's 265 pairs were judged in one order only, the longer "
    >>> one_slot_note(0, 1, 188, who=SLOT_WHO["longer"])[:83]  # LLMBar's palm-2
    "1 of the judge's 188 pairs was judged in one order only, the longer answer shown se"
    >>> one_slot_note(172, 175, 347, who=SLOT_WHO["longer"])[78:146]
    'shown first in 172 and second in 175 (3 more in one slot than in the'
    >>> one_slot_note(0, 0, 265, who=SLOT_WHO["longer"]) is None
    True
    >>> one_slot_note(20, 0, 20, who=SLOT_WHO["self"]) is None  # the warning's
    True
    """
    count = first + second
    if count <= 0 or one_slot_words(first, second, n, who=who) is not None:
        return None
    one = count == 1
    if first == 0 or second == 0:  # all in one slot: "first in 5 and second in 0" said less
        slot = "first" if second == 0 else "second"
        where = f"{who} shown {slot}" + ("" if one else f" in all {count:,.0f}")
    else:
        net = abs(first - second)
        apart = (
            "as many in each slot" if net == 0 else f"{net:,.0f} more in one slot than in the other"
        )
        where = f"{who} shown first in {first:,.0f} and second in {second:,.0f} ({apart})"
    return (
        f"{count:,.0f} of the judge's {n:,.0f} pairs {'was' if one else 'were'} judged in "
        f"one order only, {where}: below the one-slot warning's rule (the pairs in one "
        f"slot outnumbering those in the other by at least "
        f"{share_percent(ONE_SLOT_SHARE, 0)} of the judge's pairs and {ONE_SLOT_MIN} or "
        f"more, or being all its pairs where it has fewer than {ONE_SLOT_MIN}), yet "
        + ("its verdict carries" if one else "their verdicts carry")
        + " any preference of the judge for one slot into the number"
        + (", as far as the two slots do not balance it," if first and second else ",")
        + " which judging the other order too would cancel"
    )


def one_slot_warnings(
    who: str, columns: tuple[int, int, int]
) -> Callable[[NDArray[np.float64]], tuple[str, ...]]:
    """A metric's warnings from its totals: ``columns`` = the totals' columns of the
    answer shown first only and second only (:func:`one_slot_columns`) and of its pairs
    (:func:`one_slot_words`, of ``who``)."""
    first, second, n = columns

    def warnings(t: NDArray[np.float64]) -> tuple[str, ...]:
        said = one_slot_words(float(t[first]), float(t[second]), float(t[n]), who=who)
        return () if said is None else (said,)

    return warnings


def one_slot_notes(
    who: str, columns: tuple[int, int, int]
) -> Callable[[NDArray[np.float64]], tuple[str, ...]]:
    """A metric's notes from its totals, the columns as :func:`one_slot_warnings` reads
    them: the pairs judged in one order only with ``who`` in one slot where they are
    below its warning's rule (:func:`one_slot_note`)."""
    first, second, n = columns

    def notes(t: NDArray[np.float64]) -> tuple[str, ...]:
        said = one_slot_note(float(t[first]), float(t[second]), float(t[n]), who=who)
        return () if said is None else (said,)

    return notes


def _eo_components(t: NDArray[np.float64]) -> dict[str, float]:
    return {
        "recall_human_prefers_s": float(t[0] / t[1]) if t[1] else float("nan"),
        "recall_human_prefers_other": float(t[2] / t[3]) if t[3] else float("nan"),
    }


def _dp_components(t: NDArray[np.float64]) -> dict[str, float]:
    return {
        "judge_prefers_s": float(t[0] / t[1]) if t[1] else float("nan"),
        "human_prefers_s": float(t[2] / t[3]) if t[3] else float("nan"),
    }


def preference_spec(
    pairs: pd.DataFrame,
    codes: NDArray[np.intp],
    labels: tuple[str, ...],
    *,
    relation: Relation,
    kind: Criterion,
    families: Families | None,
    verdict: Verdict,
    human_ties: HumanTies,
    judge_ties: JudgeTies,
    side: NDArray[np.int8] | None = None,
    selves: Mapping[str, str] | None = None,
) -> MetricSpec:
    """The EO or DP statistic for every judge in ``labels`` (rows grouped by ``codes``).

    ``side`` may pass :func:`favored_side` when it is already computed; else it is
    computed with ``selves`` (what counts as the judge itself, :func:`favored_side`).
    """
    check_modes(verdict=verdict, human_ties=human_ties, judge_ties=judge_ties)
    if side is None:
        side = favored_side(pairs, relation=relation, families=families, selves=selves)
    v = orient(
        judge_score(pairs["p_a"].to_numpy(float), verdict=verdict, judge_ties=judge_ties), side
    )
    h = orient(pairs["human"].to_numpy(float), side)
    who = "the judge's own response" if relation == "self" else "a family member's response"
    other = "the other response"
    # a judge none of whose pairs holds S beside another answer is told so, not told
    # what that leaves missing (LLaMA-2 on LLMBar read "no pairs where the human prefers
    # the judge's own response", as if its answers had all lost)
    holds = np.bincount(codes[(side != 0) & (codes >= 0)], minlength=len(labels)) > 0
    holding = OWN_PAIRS if relation == "self" else FAMILY_PAIRS
    empty = tuple(None if h else holding for h in holds[: len(labels)])
    ties = ties_note(verdict, judge_ties)
    tied = (side != 0) & (np.abs(h - 0.5) <= TIE_TOL)  # labels of 0.5: a tie or split votes
    slots = one_slot_columns(pairs, side)  # summed beside the statistic, for its warning
    if kind == "eo":
        values, used = attribute_gap_values(h, v, human_ties=human_ties)
        group = np.where(used & (side != 0), codes, -1)
        stat = GroupedStatistic(
            name=f"{relation}_preference_eo",
            values=np.column_stack([values, slots, np.ones(len(values))]),
            boot_k=4,
            group=group,
            labels=labels,
            combine=difference_of_ratios,
            required=(
                (1, f"pairs where the human prefers {who}"),
                (3, f"pairs where the human prefers {other}"),
            ),
            empty=empty,
        )
        ref = "Def. 4.1" if relation == "self" else "Def. 4.1 with S = family member"
        method = (
            f"Equal-Opportunity bias ({ref}): recall when the human prefers {who} minus "
            f"recall when the human prefers {other}; {ties}, "
            + human_ties_words(pairs, tied, human_ties)
        )
        return MetricSpec(
            f"{relation}_preference_eo", stat, method, _eo_components, labelled=True,
            warnings=one_slot_warnings(SLOT_WHO[relation], (4, 5, 6)),
            notes=one_slot_notes(SLOT_WHO[relation], (4, 5, 6)),
        )  # fmt: skip
    if kind == "dp":
        # the same pairs on both sides: judged, holding S against a non-S answer, labelled
        used = np.isfinite(v) & np.isfinite(h) & (side != 0)
        values = np.column_stack(
            [
                np.where(used, v, 0.0),
                used.astype(float),
                np.where(used, h, 0.0),
                used.astype(float),
                slots[:, 0],
                slots[:, 1],
                np.ones(len(v)),
            ]
        )
        stat = GroupedStatistic(
            name=f"{relation}_preference_dp",
            values=values,
            boot_k=4,
            group=np.where(used, codes, -1),
            labels=labels,
            combine=difference_of_ratios,
            required=((1, f"labelled, judged pairs with {who}"),),
            empty=empty,
        )
        method = (
            f"Demographic-parity bias as a difference: P(judge picks {who}) - P(human "
            f"prefers it), over the labelled pairs holding it; {ties}, "
            + human_ties_words(pairs, tied, "split")
        )
        return MetricSpec(
            f"{relation}_preference_dp", stat, method, _dp_components, labelled=True,
            expanded=True, warnings=one_slot_warnings(SLOT_WHO[relation], (4, 5, 6)),
            notes=one_slot_notes(SLOT_WHO[relation], (4, 5, 6)),
        )  # fmt: skip
    raise ConfigError(f"kind must be 'eo' or 'dp'; got {kind!r}")


def single_judge(pairs: pd.DataFrame, judge: str | None) -> pd.DataFrame:
    """The rows of one judge (:func:`require_pairs`: its verdicts and labels as floats);
    ``judge=None`` is allowed when the table has only one."""
    pairs = require_pairs(pairs)
    codes, labels = judge_codes(pairs, judge)
    if judge is None and len(labels) > 1:
        raise ConfigError(
            f"the table has {len(labels)} judges ({', '.join(labels)}) — choose one with judge="
        )
    return pairs.loc[codes == 0].reset_index(drop=True)


def _preference(
    pairs: pd.DataFrame,
    *,
    relation: Relation,
    families: Families | None,
    judge: str | None,
    kind: Criterion,
    verdict: Verdict,
    human_ties: HumanTies,
    judge_ties: JudgeTies,
    boot: Resampling,
    min_n: int,
    selves: Mapping[str, str] | None,
) -> MetricResult:
    check_min_n(min_n)
    rows = single_judge(pairs, judge)
    codes, labels = judge_codes(rows, None)
    spec = preference_spec(
        rows,
        codes,
        labels,
        relation=relation,
        kind=kind,
        families=families,
        verdict=verdict,
        human_ties=human_ties,
        judge_ties=judge_ties,
        selves=selves,
    )
    return run_one(spec, clusters_of(rows), boot=boot, min_n=min_n)


def self_preference(
    pairs: pd.DataFrame,
    *,
    judge: str | None = None,
    kind: Criterion = "eo",
    verdict: Verdict = "prob",
    human_ties: HumanTies = "drop",
    judge_ties: JudgeTies = "half",
    boot: Resampling = Resampling(),
    min_n: int = 5,
    selves: Mapping[str, str] | None = None,
) -> MetricResult:
    """Self-preference bias of ``judge`` over the pairs that contain its own response.

    ``kind="eo"`` (Definition 4.1)::

        Bias = P(Y'=own | Y=own) - P(Y'=other | Y=other)
             = sum(w1*v)/sum(w1) - sum(w0*(1-v))/sum(w0)

    where ``v`` is the judge's verdict for its own response (order-averaged
    probability or pick) and ``w1``/``w0`` the weights of "the human prefers the
    judge's own / the other response". ``kind="dp"`` (demographic parity as a
    difference with the humans, over the labelled pairs)::

        Bias = P(Y'=own) - P(Y=own) = mean(v) - mean(h)

    Neither is adjusted for the judge's competence: EO reads high for a strong judge
    with no bias (its own-better pairs are easy) and low for a weak one; DP moves with
    its accuracy (a noisy unbiased judge of a strong model reads below 0). The audit's
    headline, 0 for an unbiased judge however strong its model, is
    :func:`~recuse.metrics.competence.calibrated_self_preference`.

    The interval is a BCa cluster bootstrap over prompts at ``boot.level``;
    groups with fewer than ``min_n`` pairs raise :class:`EstimationError`. The
    result's ``components`` hold the two recalls (EO) or ``P(Y'=own)`` and
    ``P(Y=own)`` (DP). See the module docstring for the tie options.

    >>> from recuse.tables import validate_pairs
    >>> t = validate_pairs(pd.DataFrame({
    ...     "item_id": list("abcdefgh"), "prompt_id": list("abcdefgh"),
    ...     "model_a": ["gpt-4"] * 8, "model_b": ["claude-v1"] * 8,
    ...     "human": [1, 1, 1, 1, 0, 0, 0, 0], "judge": ["gpt-4"] * 8,
    ...     "p_a_first": [1, 1, 1, 0, 1, 1, 0, 0], "p_a_second": [1, 1, 1, 0, 1, 0, 0, 0],
    ...     "p_a": None}))
    >>> r = self_preference(t, min_n=4, boot=Resampling(n_boot=200))
    >>> # verdicts for gpt-4's own response (a): 1, 1, 1, 0 | 1, 0.5, 0, 0
    >>> r.components["recall_human_prefers_s"], r.components["recall_human_prefers_other"]
    (0.75, 0.625)
    >>> r.estimate, r.n
    (0.125, 8)
    """
    return _preference(
        pairs,
        relation="self",
        families=None,
        judge=judge,
        kind=kind,
        verdict=verdict,
        human_ties=human_ties,
        judge_ties=judge_ties,
        boot=boot,
        min_n=min_n,
        selves=selves,
    )


def family_preference(
    pairs: pd.DataFrame,
    families: Families,
    *,
    judge: str | None = None,
    kind: Criterion = "eo",
    verdict: Verdict = "prob",
    human_ties: HumanTies = "drop",
    judge_ties: JudgeTies = "half",
    boot: Resampling = Resampling(),
    min_n: int = 5,
    selves: Mapping[str, str] | None = None,
) -> MetricResult:
    """Family preference of ``judge``: :func:`self_preference` with S = a family member.

    Over pairs without the judge's own response where one response comes from a
    model of the judge's family (``families``: a :class:`Roster` or a
    ``{model: family}`` mapping) and the other from outside it::

        Bias_EO = P(Y'=fam | Y=fam) - P(Y'=other | Y=other)
        Bias_DP = P(Y'=fam) - P(Y=fam)

    >>> from recuse.tables import validate_pairs
    >>> t = validate_pairs(pd.DataFrame({
    ...     "item_id": list("abcdefgh"), "prompt_id": list("abcdefgh"),
    ...     "model_a": ["gpt-3.5-turbo"] * 8, "model_b": ["claude-v1"] * 8,
    ...     "human": [1, 1, 1, 1, 0, 0, 0, 0], "judge": ["gpt-4"] * 8,
    ...     "p_a_first": [1, 1, 1, 1, 1, 1, 0, 0], "p_a_second": None, "p_a": None}))
    >>> r = family_preference(t, {"gpt-4": "gpt", "gpt-3.5-turbo": "gpt", "claude-v1": "claude"},
    ...                       min_n=4, boot=Resampling(n_boot=200))
    >>> r.estimate  # recall 4/4 when the human prefers gpt-3.5, 2/4 otherwise
    0.5
    """
    return _preference(
        pairs,
        relation="family",
        families=families,
        judge=judge,
        kind=kind,
        verdict=verdict,
        human_ties=human_ties,
        judge_ties=judge_ties,
        boot=boot,
        min_n=min_n,
        selves=selves,
    )


@dataclass(frozen=True)
class ConfusionMatrix:
    """Human label x judge verdict over the pairs holding the judge's own (or family) response.

    Cells (counts; fractional when verdicts are probabilities or ties are split)::

                              judge: own     judge: other
        human: own            own_own        own_other
        human: other          other_own      other_other

    ``recall_own = own_own / (own_own + own_other)`` (the judge's recall when the
    human prefers its own response), ``recall_other = other_other / (other_own +
    other_other)``, and ``bias = recall_own - recall_other`` is Definition 4.1.

    Figure 2 of the paper, GPT-4: the text computes 0.945 ≈ 1852 / (108 + 1852)
    and 0.425 ≈ 118 / (160 + 118) and calls them the recalls for "human rated
    favourably" and "human rated unfavourably". So the 1960 pairs in which the
    human prefers GPT-4's response split into 1852 where GPT-4 agrees (own_own)
    and 108 where it picks the other response (own_other); the 278 pairs in which
    the human prefers the other response split into 118 where GPT-4 agrees
    (other_other) and 160 where it still picks itself (other_own). The caption's
    "higher true-positive than true-negative rate" matches: positive = own
    response preferred.

    >>> m = ConfusionMatrix(own_own=1852, own_other=108, other_own=160, other_other=118)
    >>> round(m.recall_own, 3), round(m.recall_other, 3), round(m.bias, 3)
    (0.945, 0.424, 0.52)

    (118 / 278 = 0.42446, which the paper rounds to 0.425.)
    """

    own_own: float
    own_other: float
    other_own: float
    other_other: float
    judge: str | None = None
    relation: Relation = "self"
    n_excluded: int = 0

    @property
    def n(self) -> float:
        return self.own_own + self.own_other + self.other_own + self.other_other

    @property
    def recall_own(self) -> float:
        den = self.own_own + self.own_other
        return self.own_own / den if den else float("nan")

    @property
    def recall_other(self) -> float:
        den = self.other_own + self.other_other
        return self.other_other / den if den else float("nan")

    @property
    def bias(self) -> float:
        return self.recall_own - self.recall_other

    def to_frame(self) -> pd.DataFrame:
        """The 2 x 2 table, human label in rows, judge verdict in columns."""
        return pd.DataFrame(
            [[self.own_own, self.own_other], [self.other_own, self.other_other]],
            index=pd.Index(["own", "other"], name="human prefers"),
            columns=pd.Index(["own", "other"], name="judge prefers"),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "relation": self.relation,
            "own_own": self.own_own,
            "own_other": self.own_other,
            "other_own": self.other_own,
            "other_other": self.other_other,
            "recall_own": self.recall_own,
            "recall_other": self.recall_other,
            "bias": self.bias,
            "n_excluded": self.n_excluded,
        }


def confusion_matrix(
    pairs: pd.DataFrame,
    *,
    judge: str | None = None,
    relation: Relation = "self",
    families: Families | None = None,
    verdict: Verdict = "pick",
    human_ties: HumanTies = "drop",
    judge_ties: JudgeTies = "half",
    selves: Mapping[str, str] | None = None,
) -> ConfusionMatrix:
    """Figure 2's confusion matrix for ``judge`` over the pairs with its own (family) response.

    With ``v`` the judge's verdict for its own response and ``w1``/``w0`` the human
    weights (see :func:`self_preference`): ``own_own = sum(w1*v)``, ``own_other =
    sum(w1*(1-v))``, ``other_own = sum(w0*v)``, ``other_other = sum(w0*(1-v))``.
    Defaults to discrete picks (judge ties count half in each column).
    ``n_excluded`` counts the pairs with the response that had no usable human
    label or verdict. Its ``bias`` equals :func:`self_preference` with the same
    options.
    """
    rows = single_judge(pairs, judge)
    check_modes(verdict=verdict, human_ties=human_ties, judge_ties=judge_ties)
    side = favored_side(rows, relation=relation, families=families, selves=selves)
    v = orient(
        judge_score(rows["p_a"].to_numpy(float), verdict=verdict, judge_ties=judge_ties), side
    )
    h = orient(rows["human"].to_numpy(float), side)
    values, used = attribute_gap_values(h, v, human_ties=human_ties)
    used &= side != 0
    if not used.any():
        who = "its own" if relation == "self" else "a family member's"
        name = str(rows["judge"].iloc[0])
        raise EstimationError(f"judge {name!r} has no labelled, judged pairs with {who} response")
    s = values[used].sum(axis=0)
    w1, w0 = s[1], s[3]
    return ConfusionMatrix(
        own_own=float(s[0]),
        own_other=float(w1 - s[0]),
        other_own=float(w0 - s[2]),
        other_other=float(s[2]),
        judge=str(rows["judge"].iloc[0]),
        relation=relation,
        n_excluded=int(((side != 0) & ~used).sum()),
    )
