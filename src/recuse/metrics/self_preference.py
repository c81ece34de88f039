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
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy import special

from recuse.errors import ConfigError, EstimationError, InputError
from recuse.metrics.bootstrap import (
    N_BOOT,
    GroupedStatistic,
    Interval,
    check_options,
    difference_of_ratios,
)
from recuse.metrics.estimate import MetricSpec, clusters_of, run_one, run_specs
from recuse.metrics.perplexity import log_perplexity_difference
from recuse.metrics.result import MetricResult
from recuse.metrics.verdicts import (
    TIE_TOL,
    HumanTies,
    JudgeTies,
    Verdict,
    attribute_gap_values,
    check_modes,
    judge_codes,
    judge_score,
    orient,
    ties_note,
)
from recuse.roster import Roster, self_keys

__all__ = [
    "CALIBRATED",
    "CALIBRATED_RUNGS",
    "CEILING",
    "EXTRAPOLATION_FACTOR",
    "FAMILY_CALIBRATED",
    "MEDIATION",
    "MIN_STRATUM_PAIRS",
    "STRATA_DISTANCE",
    "ConfusionMatrix",
    "Families",
    "Kind",
    "Relation",
    "calibrated_self_preference",
    "calibrated_spec",
    "calibrated_specs",
    "confusion_matrix",
    "extrapolation_warning",
    "familiarity_mediation",
    "family_preference",
    "favored_side",
    "label_strengths",
    "preference_spec",
    "self_preference",
    "strata_warning",
    "stratum_column",
]

Relation = Literal["self", "family"]
Kind = Literal["eo", "dp"]
Families = Roster | Mapping[str, str]


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
    kind: Kind,
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
    ties = ties_note(verdict, judge_ties)
    if kind == "eo":
        values, used = attribute_gap_values(h, v, human_ties=human_ties)
        group = np.where(used & (side != 0), codes, -1)
        stat = GroupedStatistic(
            name=f"{relation}_preference_eo",
            values=values,
            group=group,
            labels=labels,
            combine=difference_of_ratios,
            required=(
                (1, f"pairs where the human prefers {who}"),
                (3, f"pairs where the human prefers {other}"),
            ),
        )
        ref = "Def. 4.1" if relation == "self" else "Def. 4.1 with S = family member"
        method = (
            f"Equal-Opportunity bias ({ref}): recall when the human prefers {who} minus "
            f"recall when the human prefers {other}; {ties}, human ties {human_ties}"
        )
        return MetricSpec(f"{relation}_preference_eo", stat, method, _eo_components, labelled=True)
    if kind == "dp":
        # the same pairs on both sides: judged, holding S against a non-S answer, labelled
        used = np.isfinite(v) & np.isfinite(h) & (side != 0)
        values = np.column_stack(
            [
                np.where(used, v, 0.0),
                used.astype(float),
                np.where(used, h, 0.0),
                used.astype(float),
            ]
        )
        stat = GroupedStatistic(
            name=f"{relation}_preference_dp",
            values=values,
            group=np.where(used, codes, -1),
            labels=labels,
            combine=difference_of_ratios,
            required=((1, f"labelled, judged pairs with {who}"),),
        )
        method = (
            f"Demographic-parity bias as a difference: P(judge picks {who}) - P(human "
            f"prefers it), over the labelled pairs holding it; {ties}, human ties half"
        )
        return MetricSpec(f"{relation}_preference_dp", stat, method, _dp_components, labelled=True)
    raise ConfigError(f"kind must be 'eo' or 'dp'; got {kind!r}")


def single_judge(pairs: pd.DataFrame, judge: str | None) -> pd.DataFrame:
    """The rows of one judge; ``judge=None`` is allowed when the table has only one."""
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
    kind: Kind,
    verdict: Verdict,
    human_ties: HumanTies,
    judge_ties: JudgeTies,
    level: float,
    n_boot: int,
    seed: int | None,
    min_n: int,
    selves: Mapping[str, str] | None,
) -> MetricResult:
    check_options(level=level, n_boot=n_boot, min_n=min_n)
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
    return run_one(spec, clusters_of(rows), level=level, n_boot=n_boot, seed=seed, min_n=min_n)


def self_preference(
    pairs: pd.DataFrame,
    *,
    judge: str | None = None,
    kind: Kind = "eo",
    verdict: Verdict = "prob",
    human_ties: HumanTies = "drop",
    judge_ties: JudgeTies = "half",
    level: float = 0.9,
    n_boot: int = N_BOOT,
    seed: int | None = 0,
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

    The interval is a BCa cluster bootstrap over prompts at ``level``;
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
    >>> r = self_preference(t, min_n=4, n_boot=200)
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
        level=level,
        n_boot=n_boot,
        seed=seed,
        min_n=min_n,
        selves=selves,
    )


def family_preference(
    pairs: pd.DataFrame,
    families: Families,
    *,
    judge: str | None = None,
    kind: Kind = "eo",
    verdict: Verdict = "prob",
    human_ties: HumanTies = "drop",
    judge_ties: JudgeTies = "half",
    level: float = 0.9,
    n_boot: int = N_BOOT,
    seed: int | None = 0,
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
    ...                       min_n=4, n_boot=200)
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
        level=level,
        n_boot=n_boot,
        seed=seed,
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


# --- competence-calibrated self-preference -------------------------------------------

CALIBRATED = "self_preference_calibrated"
#: Newton steps of the competence fit (from 0; a fit converges in about 6, a judge that
#: separates the strengths perfectly drifts toward κ = ∞ where π no longer moves)
_NEWTON_STEPS = 30
#: most covariate patterns plus labelled model pairs the exact refit handles
MAX_PATTERNS = 2000
_CHUNK = 256  # resamples refitted at once
#: the calibrated estimate's interval: percentile, not BCa. For a near-perfect judge
#: (κ = 20) with no self term, over 300 simulated tables per cell, the BCa interval
#: held 0 in only 0.81–0.82 of tables (percentile: 0.86–0.88): its jackknife
#: acceleration swings with the few prompts where such a judge errs (a from −0.07 to
#: +0.10 over tables whose true value is 0) and pushes the interval off centre. In
#: benchmarks/self_preference_calibration.py (200 tables per cell) the percentile
#: interval holds a planted τ = 0.3 in 0.86–0.92 of tables and 0, with no self term,
#: in 0.84–0.94.
CALIBRATED_INTERVAL: Interval = "percentile"


def label_strengths(pairs: pd.DataFrame) -> dict[str, float]:
    """Bradley–Terry strengths of the models (log-odds, centred) fitted on the human
    labels, each labelled item once (:func:`recuse.metrics.bradley_terry.bradley_terry`).

    Raises :class:`EstimationError` when there are no labelled pairs of two known,
    different models or the models are not all connected by comparisons.
    """
    from recuse.metrics.bradley_terry import bradley_terry

    if "human" not in pairs.columns:
        raise EstimationError("no human labels to learn the models' strengths from")
    known = pairs["human"].notna() & pairs["model_a"].notna() & pairs["model_b"].notna()
    labelled = pairs[known].drop_duplicates("item_id")
    labelled = labelled[labelled["model_a"] != labelled["model_b"]].reset_index(drop=True)
    if labelled.empty:
        raise EstimationError(
            "no human-labelled pairs of two different known models to learn the models' "
            "strengths from"
        )
    fit = bradley_terry(
        labelled["human"].to_numpy(float),
        labelled["model_a"].astype(str),
        labelled["model_b"].astype(str),
        labelled["prompt_id"],
        n_boot=10,
        seed=0,
    )
    return {s: float(v) for s, v in zip(fit.systems, fit.strengths, strict=True)}


@dataclass(frozen=True)
class _Competence:
    """The competence model of :func:`calibrated_self_preference` as a function of sums.

    Its likelihood depends on the judge's verdicts only through each covariate
    pattern's weight ``Σ w`` and picks of a ``Σ w y`` (a pattern: the ordered pair of
    models ``ia, ib``, the order shown, whether a or b is the judge's own answer), and
    the strengths' Bradley–Terry likelihood on the labels only through each ordered
    model pair's count and ``Σ human``. So a resample's sums of those are enough to
    refit both exactly (:meth:`fit`) and to evaluate ``π`` at the refit
    (:meth:`parts`). With ``fixed`` strengths the labels are not refitted.

    Columns of the sums: ``P`` weights, ``P`` picks of a, ``L`` label counts, ``L``
    label sums, then the weight of rows holding the judge's own answer and of rows
    without it (:attr:`k` in all).
    """

    ia: NDArray[np.intp]  # (P,) model of side a
    ib: NDArray[np.intp]
    first: NDArray[np.float64]  # +1 a shown first, -1 second
    own: NDArray[np.float64]  # +1 a is the judge's own answer, -1 b, 0 neither
    la: NDArray[np.intp]  # (L,) labelled ordered model pairs
    lb: NDArray[np.intp]
    n_models: int
    fixed: NDArray[np.float64] | None = None  # strengths held fixed, or None
    #: +1 a is another model of the judge's family (against one from outside), -1 b, 0
    #: neither; None: no family term in the model
    fam: NDArray[np.float64] | None = None
    #: own patterns' rung (:data:`CALIBRATED_RUNGS`: 0 the human prefers the judge's own
    #: answer, 1 neither, 2 the other); None: no rungs
    rung: NDArray[np.intp] | None = None
    #: each pattern's stratum (an index into :attr:`stratum_names`; the declared stratum
    #: column, e.g. ``category``), or None: no strata
    stratum: NDArray[np.intp] | None = None
    stratum_names: tuple[str, ...] = ()
    #: each pattern's discrimination column (one ``κ_c`` per stratum with enough pairs
    #: without the judge's own answer, the others pooled); None: one ``κ`` for all
    kgroup: NDArray[np.intp] | None = None
    n_kappa: int = 1
    #: strata sharing one discrimination (too few pairs without the own answer)
    pooled: tuple[str, ...] = ()
    stratum_label: str = "category"
    #: +1 the human label of the pattern's pair prefers a, −1 b, 0 a tie or no label, for
    #: the judges whose competence is conditioned on the label (near its ceiling:
    #: :func:`_at_ceiling`), 0 for the others; None: no label term in the model
    label: NDArray[np.float64] | None = None

    @property
    def k(self) -> int:
        return 2 * len(self.ia) + 2 * len(self.la) + 3

    @property
    def col_own(self) -> int:
        """Column of the rows holding the judge's own answer."""
        return self.k - 3

    @property
    def col_other(self) -> int:
        """Column of the rows without its own answer (competence is learnt on them)."""
        return self.k - 2

    @property
    def col_family(self) -> int:
        """Column of the rows holding a family member's answer against an outsider's."""
        return self.k - 1

    def strengths(self, s: NDArray[np.float64]) -> NDArray[np.float64]:
        """Bradley–Terry strengths ``(..., models)`` (centred; Newton's method from 0)."""
        if self.fixed is not None:
            return np.broadcast_to(self.fixed, (*s.shape[:-1], self.n_models))
        p, n_l = len(self.ia), len(self.la)
        c = s[..., 2 * p : 2 * p + n_l]
        h = s[..., 2 * p + n_l : 2 * p + 2 * n_l]
        design = np.zeros((n_l, self.n_models))
        design[np.arange(n_l), self.la] += 1.0
        design[np.arange(n_l), self.lb] -= 1.0
        return _newton(design, c, h) if n_l else np.zeros((*s.shape[:-1], self.n_models))

    def placed(
        self, s: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_]]:
        """The patterns' weights and picks of a, 0 where these sums' labels do not place
        both models (as the estimator leaves such a pair out), and whether the labelled
        models are connected by comparisons (else the strengths are not comparable and
        the statistic is undefined). A resample that draws none of a model's labelled
        prompts is then the estimate on that resample, not its pairs at strength 0."""
        p, n_l = len(self.ia), len(self.la)
        n, y = s[..., :p], s[..., p : 2 * p]
        m = self.n_models
        if self.fixed is not None or m == 0:
            return n, y, np.ones(s.shape[:-1], dtype=bool)
        onto = np.zeros((n_l, m, m))
        onto[np.arange(n_l), self.la, self.lb] = 1.0
        onto[np.arange(n_l), self.lb, self.la] = 1.0
        adj = np.einsum("...l,lij->...ij", (s[..., 2 * p : 2 * p + n_l] > 0).astype(float), onto)
        seen = adj.sum(axis=-1) > 0  # (..., M)
        reach = np.zeros_like(seen)
        np.put_along_axis(reach, np.argmax(seen, axis=-1)[..., None], True, axis=-1)
        for _ in range(m):  # grow each resample's component of its first labelled model
            grown = reach | (np.einsum("...ij,...j->...i", adj, reach.astype(float)) > 0)
            if np.array_equal(grown, reach):
                break
            reach = grown
        keep = seen[..., self.ia] & seen[..., self.ib]
        return np.where(keep, n, 0.0), np.where(keep, y, 0.0), np.all(reach | ~seen, axis=-1)

    def fit(self, s: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``θ = (κ, β, τ)`` and the gap ``g = s_a − s_b`` of every pattern (over the
        patterns :meth:`placed` keeps)."""
        n, y, _ = self.placed(s)
        return self._fit(s, n, y)

    def _fit(
        self, s: NDArray[np.float64], n: NDArray[np.float64], y: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        st = self.strengths(s)
        g = st[..., self.ia] - st[..., self.ib]  # (..., P)
        if self.kgroup is None:
            cols = [g]
        else:  # κ_c (s_a − s_b): the gap in its stratum's own column
            cols = [np.where(self.kgroup == c, g, 0.0) for c in range(self.n_kappa)]
        cols += [np.broadcast_to(self.first, g.shape), np.broadcast_to(self.own, g.shape)]
        if self.fam is not None:
            cols.append(np.broadcast_to(self.fam, g.shape))
        if self.label is not None:
            cols.append(np.broadcast_to(self.label, g.shape))
        return _newton(np.stack(cols, -1), n, y), g

    def p0(self, theta: NDArray[np.float64], g: NDArray[np.float64]) -> NDArray[np.float64]:
        """Each pattern's P(picks a) without the own and family terms: ``expit(κ_c g +
        β·first [+ α·label])``, ``κ_c`` its stratum's discrimination (theta: κ's, β, τ[,
        φ][, α])."""
        kap = theta[..., :1] if self.kgroup is None else theta[..., self.kgroup]
        beta = theta[..., self.n_kappa : self.n_kappa + 1]
        eta = kap * g + beta * self.first
        if self.label is not None:
            eta = eta + theta[..., -1:] * self.label
        return np.asarray(special.expit(eta), dtype=float)

    def parts(
        self, s: NDArray[np.float64], relation: Relation = "self", rung: int | None = None
    ) -> tuple[NDArray[np.float64], ...]:
        """(the weight of the judge's own pairs — or, ``relation="family"``, its family
        pairs —, its picks of that answer, the predicted picks ``Σ π``) from sums; NaN
        where the labels leave the models disconnected. ``rung`` (self only): picks and
        predictions over that rung's own pairs, the weight still over all own pairs, so
        the rungs' parts add up to the whole."""
        n, y, connected = self.placed(s)
        theta, g = self._fit(s, n, y)
        # the prediction without the own and family terms
        p0 = self.p0(theta, g)
        if relation == "family":
            sel = self.fam if self.fam is not None else np.zeros_like(self.own)
        else:
            sel = self.own
        n_sel = np.where(sel != 0, n, 0.0).sum(axis=-1)  # each row's orders weigh 1 in all
        if rung is not None and self.rung is not None:
            sel = np.where(self.rung == rung, sel, 0.0)
        picks = np.where(sel > 0, y, np.where(sel < 0, n - y, 0.0)).sum(axis=-1)
        pred = np.where(sel > 0, n * p0, np.where(sel < 0, n * (1.0 - p0), 0.0)).sum(axis=-1)
        return n_sel, picks, np.where(connected, pred, np.nan)

    def _reduce(
        self, s: NDArray[np.float64], relation: Relation, rung: int | None
    ) -> NDArray[np.float64]:
        flat = s.reshape(-1, s.shape[-1])
        out = np.full(len(flat), np.nan)
        for start in range(0, len(flat), _CHUNK):  # bounded memory for many resamples
            n_sel, picks, pred = self.parts(flat[start : start + _CHUNK], relation, rung)
            part = out[start : start + _CHUNK]
            np.divide(picks - pred, n_sel, out=part, where=(n_sel != 0) & np.isfinite(pred))
        return out.reshape(s.shape[:-1])

    def combine(self, s: NDArray[np.float64]) -> NDArray[np.float64]:
        """The calibrated estimate ``(own picks − Σ π) / own weight`` from sums."""
        return self._reduce(s, "self", None)

    def combine_family(self, s: NDArray[np.float64]) -> NDArray[np.float64]:
        """The calibrated family preference ``(family picks − Σ π) / family weight``."""
        return self._reduce(s, "family", None)

    def combine_rung(self, rung: int) -> Callable[[NDArray[np.float64]], NDArray[np.float64]]:
        """One rung's part of the calibrated estimate: ``(own picks − Σ π)`` over the
        rung's own pairs, divided by the weight of all own pairs."""
        return lambda s: self._reduce(s, "self", rung)

    def components(self, t: NDArray[np.float64]) -> dict[str, float]:
        n_own, picks, pred = self.parts(t)
        if not n_own:
            return {"own_pick_rate": float("nan"), "predicted_own_pick_rate": float("nan")}
        return {
            "own_pick_rate": float(picks / n_own),
            "predicted_own_pick_rate": float(pred / n_own),
        }

    def components_family(self, t: NDArray[np.float64]) -> dict[str, float]:
        n_fam, picks, pred = self.parts(t, "family")
        if not n_fam:
            return {"family_pick_rate": float("nan"), "predicted_family_pick_rate": float("nan")}
        return {
            "family_pick_rate": float(picks / n_fam),
            "predicted_family_pick_rate": float(pred / n_fam),
        }

    def components_rung(self, rung: int) -> Callable[[NDArray[np.float64]], dict[str, float]]:
        """A rung's own-pick and predicted rates over its own pairs, and its share."""

        def parts(t: NDArray[np.float64]) -> dict[str, float]:
            n_own = self.parts(t)[0]
            mask = (self.own != 0) & (self.rung == rung) if self.rung is not None else self.own != 0
            n, _, _ = self.placed(t)
            n_rung = float(np.where(mask, n, 0.0).sum())
            _, picks, pred = self.parts(t, "self", rung)
            if not n_rung:
                return {"rung_share": 0.0}
            return {
                "rung_share": float(n_rung / n_own) if n_own else float("nan"),
                "own_pick_rate": float(picks / n_rung),
                "predicted_own_pick_rate": float(pred / n_rung),
            }

        return parts

    def warnings(self, t: NDArray[np.float64]) -> tuple[str, ...]:
        """:func:`extrapolation_warning` at the strengths these totals fit, over the
        patterns they place (each pair weighs 1 over its judged orders)."""
        n, _, _ = self.placed(t)
        st = self.strengths(t)
        gap = np.abs(st[self.ia] - st[self.ib])
        seen = n > 0
        own, other = seen & (self.own != 0), seen & (self.own == 0)
        out: list[str] = []
        if self.stratum is not None and own.any() and other.any():
            m = len(self.stratum_names)
            w_own = np.bincount(self.stratum[own], weights=n[own], minlength=m).astype(float)
            w_other = np.bincount(self.stratum[other], weights=n[other], minlength=m).astype(float)
            # strata with fewer than MIN_STRATUM_PAIRS pairs in all count as one: many
            # small strata would read as a different mix by chance alone
            small = (w_own + w_other) < MIN_STRATUM_PAIRS
            names = tuple(x for x, tiny in zip(self.stratum_names, small, strict=True) if not tiny)
            if small.any():
                names += ("(smaller strata together)",)
                w_own = np.append(w_own[~small], w_own[small].sum())
                w_other = np.append(w_other[~small], w_other[small].sum())
            words = strata_warning(
                own_weights=w_own, other_weights=w_other, names=names, label=self.stratum_label,
            )  # fmt: skip
            if words is not None:
                if self.kgroup is None:
                    words += (
                        "; the competence model has one discrimination for all of them (too "
                        f"few pairs per {self.stratum_label} to learn one each), so a judge "
                        f"that judges some {self.stratum_label} worse than others can read as "
                        "self-preference here — read the estimate with care"
                    )
                else:
                    words += (
                        f"; the competence model learns a discrimination per {self.stratum_label}"
                        + (
                            f" ({', '.join(self.pooled)} pooled: too few pairs)"
                            if self.pooled
                            else ""
                        )
                        + ", which adjusts for this where its pairs without the judge's own answer "
                        "cover the same strata"
                    )
                out.append(words)
        conditioned = self.label is not None and bool(np.any(seen & (self.label != 0)))
        if own.any() and not conditioned:
            n_own, _, pred = self.parts(t)
            rate = float(pred / n_own) if n_own else float("nan")
            if np.isfinite(rate) and not 1 - CEILING < rate < CEILING:
                out.append(
                    f"competence near its ceiling: it is predicted to pick its own answer "
                    f"{rate:.0%} of the time; if its remaining misses do not shrink with the "
                    "strength gap (a lapse rate the logistic curve lacks), the prediction is "
                    "too close to the ceiling and a self term would read low — about 40% low in a "
                    "simulation (a judge following the reference 97% of the time, which "
                    "prefers its answers 90% of the time), about 8% low at 76%; the "
                    "category term does not change this"
                )
        if not own.any() or not other.any() or not np.all(np.isfinite(gap[seen])):
            return tuple(out)
        words = extrapolation_warning(own_gaps=gap[own], own_weights=n[own], other_gaps=gap[other])
        return tuple(out) if words is None else (*out, words)


#: the calibrated estimate is marked as extrapolated when most of its own pairs' weight
#: lies more than this many times the largest strength gap of its pairs without its own
#: answer. SmolLM2-135M on JudgeBench (examples/familiarity_judgebench.py): all its own
#: pairs, at 4.1–4.7 times. In the calibration suite's design
#: (benchmarks/self_preference_calibration.py), where the logistic model is true and the
#: estimate unbiased, over 300 tables per cell with the strongest author (own_rate
#: 0.95, own pairs mostly beyond the others' gaps): 0 tables fire with 80 prompts, 1.3%
#: with 50 and 3.7% with 30 (labels that place the author far out); none with own_rate
#: 0.86 or less.
EXTRAPOLATION_FACTOR = 3.0


def extrapolation_warning(
    *,
    own_gaps: NDArray[np.float64],
    own_weights: NDArray[np.float64],
    other_gaps: NDArray[np.float64],
    factor: float = EXTRAPOLATION_FACTOR,
) -> str | None:
    """Whether the calibrated prediction extrapolates the judge's competence curve, in
    words (None when it does not).

    ``own_gaps``: the model-strength gaps ``|s_a − s_b|`` of the judge's own pairs
    (weights ``own_weights``); ``other_gaps``: those of its pairs without its own answer,
    on which ``κ`` is mostly learnt. It fires when::

        Σ own_weights[own_gaps > factor · max(other_gaps)] > ½ Σ own_weights

    i.e. most of its own pairs lie more than ``factor`` times as far apart as any pair
    the curve is fitted on, so ``π`` extends ``κ (s_a − s_b)`` far beyond the gaps seen
    and amplifies any error in ``κ`` or in the logistic shape by the same ratio.
    Smaller own gaps do not fire: the model places a pair of equal strengths at the
    judge's position lean alone, so a gap between 0 and the gaps seen interpolates.
    Gaps and weights must be finite and at least 0, one weight per own gap, and
    ``factor`` positive (else :class:`ConfigError`).

    >>> w = extrapolation_warning(own_gaps=np.array([1.03, 1.17]),
    ...                           own_weights=np.array([19.0, 21.0]),
    ...                           other_gaps=np.array([0.11, 0.25]))
    >>> for part in w.split("; ")[0].split(", "):
    ...     print(part)
    extrapolated competence: its own pairs are 1.03–1.17 apart in model strength
    the pairs its competence is learnt on 0.11–0.25
    >>> extrapolation_warning(own_gaps=np.array([2.0, 3.5]), own_weights=np.array([1., 1.]),
    ...                       other_gaps=np.array([0.1, 1.5])) is None
    True
    """
    own_gaps, own_weights, other_gaps = (
        np.asarray(x, dtype=float) for x in (own_gaps, own_weights, other_gaps)
    )
    for name, x in (("own_gaps", own_gaps), ("own_weights", own_weights),
                    ("other_gaps", other_gaps)):  # fmt: skip
        if x.ndim != 1 or not np.all(np.isfinite(x)) or np.any(x < 0):
            raise ConfigError(
                f"{name} must be a flat array of finite numbers of 0 or more (gaps are |s_a − s_b|)"
            )
    if own_weights.shape != own_gaps.shape:
        raise ConfigError(
            f"own_weights has {own_weights.size} entries, own_gaps {own_gaps.size}: give one "
            "weight per own pair"
        )
    if not (np.isfinite(factor) and factor > 0):
        raise ConfigError(f"factor must be a positive number (e.g. 3); got {factor!r}")
    total = float(np.sum(own_weights))
    if total <= 0 or len(other_gaps) == 0:
        return None
    widest = float(np.max(other_gaps))
    beyond = float(np.sum(own_weights[own_gaps > factor * widest]))
    if beyond <= total / 2:
        return None
    lo, hi = float(np.min(own_gaps)), float(np.max(own_gaps))
    share = "all its" if beyond >= total else f"{beyond:.0f} of its {total:.0f}"
    return (
        f"extrapolated competence: its own pairs are {lo:.2f}–{hi:.2f} apart in model "
        f"strength, the pairs its competence is learnt on {float(np.min(other_gaps)):.2f}–"
        f"{widest:.2f}; {share} own pairs are more than {factor:g}× as far apart as any "
        "of those, so the predicted own-pick rate extends the logistic curve far beyond "
        "the gaps it was fitted on and rests on that shape — read the estimate with care"
    )


#: a calibrated estimate whose predicted own-pick rate lies above this (or below one minus
#: it) is marked: a lapse rate (misses that do not shrink with the gap) would make it read
#: low (simulate.self_preference.simulate_lapse_judge: 0.60 of the planted value at a
#: predicted 0.90, 0.92 at 0.77)
CEILING = 0.85
#: a stratum (category, task) gets its own discrimination ``κ_c`` when every judge with
#: pairs in it has at least this many pairs in it without its own answer; the others
#: share one (pooled), or the largest stratum's when together they still have fewer
MIN_STRATUM_PAIRS = 20
#: the own pairs' strata are said to differ from the competence pairs' above this
#: total-variation distance. In simulate.self_preference's category design with no
#: confound (own pairs spread as the others, 4 strata, 30–60 own pairs) the distance
#: stays under 0.25 in 99% of tables; the confounded design (80% of the own pairs in
#: the stratum the judge judges worst against 25% of the others) reads about 0.55.
STRATA_DISTANCE = 0.3


def strata_warning(
    *,
    own_weights: NDArray[np.float64],
    other_weights: NDArray[np.float64],
    names: tuple[str, ...],
    threshold: float = STRATA_DISTANCE,
    label: str = "category",
) -> str | None:
    """Whether the judge's own pairs sit in other strata than the pairs its competence is
    learnt on, in words (None when they do not).

    ``own_weights[c]`` / ``other_weights[c]``: the weight of its own pairs / of its pairs
    without its own answer in stratum ``c`` (``names[c]``). With the shares
    ``o_c = own_c / Σ own`` and ``r_c = other_c / Σ other`` the distance is the total
    variation::

        D = ½ Σ_c |o_c − r_c|      (0 = the same mix, 1 = no stratum in common)

    and it fires when ``D > threshold``. A judge that judges one stratum worse than the
    others and has its own answers mostly there reads as biased (for or against its
    own answers) unless the competence model learns each stratum's discrimination.

    >>> w = strata_warning(own_weights=np.array([8.0, 2.0]), other_weights=np.array([2.0, 8.0]),
    ...                    names=("math", "writing"))
    >>> for part in w.replace(" (", "; ").split("; "):
    ...     print(part)
    own pairs in other categories than its competence pairs: total-variation distance 0.60
    0 = same mix, 1 = none in common
    said above 0.3), most in 'math'
    80% of its own pairs, 20% of the others)
    >>> strata_warning(own_weights=np.array([5.0, 5.0]), other_weights=np.array([4.0, 6.0]),
    ...                names=("math", "writing")) is None
    True
    """
    own = np.asarray(own_weights, dtype=float)
    other = np.asarray(other_weights, dtype=float)
    if own.shape != other.shape or own.ndim != 1 or len(names) != own.size:
        raise ConfigError("give one own weight, one other weight and one name per stratum")
    if not (np.all(np.isfinite(own)) and np.all(np.isfinite(other))) or (
        np.any(own < 0) or np.any(other < 0)
    ):
        raise ConfigError("stratum weights must be finite numbers of 0 or more")
    if not (np.isfinite(threshold) and 0 < threshold < 1):
        raise ConfigError(f"threshold must be between 0 and 1 (e.g. 0.3); got {threshold!r}")
    if own.sum() <= 0 or other.sum() <= 0:
        return None
    o, r = own / own.sum(), other / other.sum()
    distance = 0.5 * float(np.abs(o - r).sum())
    if distance <= threshold:
        return None
    top = int(np.argmax(o - r))
    plural = "categories" if label == "category" else f"{label}s"
    return (
        f"own pairs in other {plural} than its competence pairs: total-variation distance "
        f"{distance:.2f} (0 = same mix, 1 = none in common; said above {threshold:g}), most "
        f"in {names[top]!r} ({o[top]:.0%} of its own pairs, {r[top]:.0%} of the others)"
    )


def stratum_column(pairs: pd.DataFrame, stratum: str | None = "auto") -> str | None:
    """The column whose strata get their own discrimination in the competence model.

    ``"auto"``: ``category`` when some judge's rows hold at least two categories, else
    ``task`` likewise, else None. A column name: that column (it must exist, else
    :class:`InputError`). None: no strata.
    """
    if stratum is None:
        return None
    if stratum != "auto":
        if stratum not in pairs.columns:
            raise InputError(
                f"the stratum column {stratum!r} is not in the pairs table",
                column=stratum,
                fix="name a column of the table (e.g. category or task), or leave the stratum out",
            )
        return stratum
    for column in ("category", "task"):
        if column in pairs.columns and "judge" in pairs.columns:
            per_judge = pairs.groupby("judge", observed=True)[column].nunique(dropna=True)
            if len(per_judge) and int(per_judge.max()) >= 2:
                return column
    return None


def _stratum_groups(
    stratum: NDArray[np.intp],
    n_strata: int,
    codes: NDArray[np.intp],
    n_judges: int,
    usable: NDArray[np.bool_],
    side: NDArray[np.int8],
) -> tuple[NDArray[np.intp] | None, int, list[int]]:
    """Each stratum's discrimination column, their number, and the pooled strata.

    A stratum gets its own column when every judge with usable pairs in it has at least
    :data:`MIN_STRATUM_PAIRS` of them without its own answer; the rest share one column,
    which joins the largest qualified stratum's when it has too few such pairs itself.
    Fewer than two columns: None (one κ)."""
    j = np.where(usable, codes, -1)
    keep = j >= 0
    present = np.zeros((n_judges, n_strata))
    np.add.at(present, (j[keep], stratum[keep]), 1.0)
    comp = np.zeros((n_judges, n_strata))
    both = keep & (side == 0)
    np.add.at(comp, (j[both], stratum[both]), 1.0)
    ok = np.all((present == 0) | (comp >= MIN_STRATUM_PAIRS), axis=0) & (present.sum(0) > 0)
    rest = [c for c in range(n_strata) if not ok[c] and present[:, c].sum() > 0]
    group = np.full(n_strata, -1, dtype=np.intp)
    qualified = [c for c in range(n_strata) if ok[c]]
    for k, c in enumerate(qualified):
        group[c] = k
    n_kappa = len(qualified)
    if rest:
        p_rest, c_rest = present[:, rest].sum(1), comp[:, rest].sum(1)
        if np.all((p_rest == 0) | (c_rest >= MIN_STRATUM_PAIRS)) or not qualified:
            group[rest] = n_kappa
            n_kappa += 1
        else:
            group[rest] = group[qualified[int(np.argmax(comp[:, qualified].sum(0)))]]
    if n_kappa < 2:
        return None, 1, rest
    return group, n_kappa, rest


def _newton(
    x: NDArray[np.float64], n: NDArray[np.float64], y: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Weighted binomial maximum likelihood ``logit E[y/n] = x θ`` for every leading index
    of ``n`` and ``y`` (``(..., P)``; ``x`` is ``(P, d)`` or ``(..., P, d)``): Newton's
    method from 0 with the pseudo-inverse (a direction the data do not inform stays
    0); NaN where not finite."""
    d = x.shape[-1]
    theta = np.zeros((*n.shape[:-1], d))
    for _ in range(_NEWTON_STEPS):
        mu = special.expit(np.einsum("...pd,...d->...p", x, theta))
        grad = np.einsum("...p,...pd->...d", y - n * mu, x)
        info = np.einsum("...p,...pi,...pj->...ij", n * mu * (1.0 - mu), x, x)
        info = np.where(np.isfinite(info), info, 0.0)
        step = np.einsum("...ij,...j->...i", np.linalg.pinv(info), grad)
        theta = theta + step
        if np.all(np.abs(step) < 1e-10):
            break
    return np.where(np.isfinite(theta), theta, np.nan)


def _check_strengths(strengths: Mapping[str, float], judged: NDArray[np.object_]) -> None:
    """Strengths given: finite, and one for every model in the judged pairs (else its
    pairs would be left out without a word)."""
    for m, v in strengths.items():
        try:
            finite = bool(np.isfinite(float(v)))
        except (TypeError, ValueError):
            finite = False
        if not finite:
            raise ConfigError(f"the strength of model {m!r} is {v!r}; give a finite number")
    named = {str(m) for m in judged if isinstance(m, str)}
    missing = sorted(named - {str(m) for m in strengths})
    if missing:
        raise ConfigError(
            f"no strength given for model {missing[0]!r}"
            + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
            + " — give every model of the judged pairs a strength, or leave strengths "
            "out to learn them from the human labels"
        )


def _calibrated_parts(
    pairs: pd.DataFrame,
    codes: NDArray[np.intp],
    labels: tuple[str, ...],
    *,
    strengths: Mapping[str, float] | None = None,
    side: NDArray[np.int8] | None = None,
    family_side: NDArray[np.int8] | None = None,
    stratum: str | None = None,
    label_term: NDArray[np.bool_] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.intp], dict[str, str], NDArray[np.float64], _Competence]:
    """Per-row sums of the calibrated statistic (:class:`_Competence`), group codes,
    per-judge problems, each fitted row's predicted P(a) without the own (and family)
    term (order-averaged; NaN else), and the model. ``strengths`` None: learnt from each
    judge's labelled pairs, in the point estimate and in every resample.
    ``family_side`` (:func:`favored_side` with ``relation="family"``): adds a family
    term to the competence model where any pair holds a family member's answer.
    ``stratum`` (a column, e.g. ``category``; see :func:`stratum_column`): a
    discrimination ``κ_c`` per stratum with enough pairs (:func:`_stratum_groups`) and
    the :func:`strata_warning` of each judge. ``label_term`` (per judge code): condition
    that judge's competence on each pair's human label (``α·label``; see
    :func:`_at_ceiling`)."""
    n = len(pairs)
    pred_a = np.full(n, np.nan)
    if side is None:
        side = favored_side(pairs, relation="self")
    fam_side = (
        np.zeros(n, dtype=np.int8) if family_side is None else np.asarray(family_side, np.int8)
    )
    problems: dict[str, str] = {}
    a = pairs["model_a"].astype(object).to_numpy()
    b = pairs["model_b"].astype(object).to_numpy()
    human = pairs["human"].to_numpy(float) if "human" in pairs.columns else np.full(n, np.nan)
    if strengths is None:
        has = np.isfinite(human)
        models = sorted({str(m) for m in np.r_[a[has], b[has]] if isinstance(m, str)})
    else:
        models = sorted(str(m) for m in strengths)
    index = {m: i for i, m in enumerate(models)}
    ia = np.array([index.get(x, -1) if isinstance(x, str) else -1 for x in a], dtype=np.intp)
    ib = np.array([index.get(x, -1) if isinstance(x, str) else -1 for x in b], dtype=np.intp)
    y1 = pairs["p_a_first"].to_numpy(float)
    y2 = pairs["p_a_second"].to_numpy(float)
    ok1, ok2 = np.isfinite(y1), np.isfinite(y2)
    k_orders = ok1.astype(float) + ok2.astype(float)
    if strengths is not None:
        _check_strengths(strengths, np.r_[a[k_orders > 0], b[k_orders > 0]])
    pair_ok = (ia >= 0) & (ib >= 0) & (a != b)
    usable = pair_ok & (k_orders > 0)
    labelled = np.zeros(n, bool)
    if strengths is None:  # a pair enters where its judge's labels place both models
        labelled = usable & np.isfinite(human)
        for code in range(len(labels)):
            mine = codes == code
            seen = np.union1d(ia[labelled & mine], ib[labelled & mine])
            usable[mine] &= np.isin(ia[mine], seen) & np.isin(ib[mine], seen)
        labelled &= usable
    group = np.where(usable, codes, -1).astype(np.intp)
    # the rung of an own pair: the human prefers the judge's answer (0), neither (1),
    # the other (2); pairs without its own answer sit on rung 1 (they take no part)
    h_own = orient(human, side)
    rung = np.where(h_own > 0.5 + TIE_TOL, 0, np.where(h_own < 0.5 - TIE_TOL, 2, 1))
    rung = np.where(side != 0, rung, 1)
    # the label's direction, for the judges whose competence is conditioned on it
    hdir = np.where(human > 0.5 + TIE_TOL, 1, np.where(human < 0.5 - TIE_TOL, -1, 0))
    conditioned = label_term is not None and bool(np.any(label_term))
    if label_term is None or not conditioned:
        hdir = np.zeros(n, dtype=int)
    else:
        hdir = np.where(np.asarray(label_term, bool)[codes] & np.isfinite(human), hdir, 0)
    names: tuple[str, ...] = ()
    scode = np.zeros(n, dtype=np.intp)
    if stratum is not None:
        col = pairs[stratum].astype(object)
        col = col.where(col.notna(), "(none)").astype(str)
        scode, uniques = pd.factorize(col, sort=True)
        names = tuple(str(u) for u in uniques)
        scode = scode.astype(np.intp)
    # one row per judged order (weight 1 / orders judged), keyed by its pattern
    parts = []
    for ok, y, first in ((ok1, y1, 1.0), (ok2, y2, -1.0)):
        j = np.flatnonzero(usable & ok)
        columns = [ia[j], ib[j], np.full(len(j), first), side[j], fam_side[j], rung[j]]
        key = np.column_stack([*columns, scode[j], hdir[j]])
        parts.append((j, key, y[j]))
    ri = np.concatenate([j for j, _, _ in parts])
    keys = np.concatenate([k for _, k, _ in parts])
    yy = np.concatenate([y for _, _, y in parts])
    w = 1.0 / k_orders[ri]
    pats, pat = np.unique(keys, axis=0, return_inverse=True)
    pats = pats.reshape(-1, 8)
    pat = pat.reshape(-1)
    lab_rows = np.flatnonzero(labelled)
    lpairs, lab = np.unique(
        np.column_stack([ia[lab_rows], ib[lab_rows]]), axis=0, return_inverse=True
    )
    lpairs = lpairs.reshape(-1, 2)
    lab = lab.reshape(-1)
    fixed = None
    if strengths is not None:
        fixed = np.array([float(strengths[m]) for m in models])
    kgroup: NDArray[np.intp] | None = None
    n_kappa, pooled = 1, list[int]()
    if stratum is not None:
        group_of, n_kappa, pooled = _stratum_groups(
            scode, len(names), codes, len(labels), usable, side
        )
        if group_of is not None:
            kgroup = group_of[pats[:, 6].astype(np.intp)]
    model = _Competence(
        ia=pats[:, 0].astype(np.intp),
        ib=pats[:, 1].astype(np.intp),
        first=pats[:, 2].astype(float),
        own=pats[:, 3].astype(float),
        la=lpairs[:, 0].astype(np.intp),
        lb=lpairs[:, 1].astype(np.intp),
        n_models=len(models),
        fixed=fixed,
        fam=pats[:, 4].astype(float) if np.any(pats[:, 4] != 0) else None,
        rung=pats[:, 5].astype(np.intp),
        stratum=pats[:, 6].astype(np.intp) if stratum is not None else None,
        stratum_names=names,
        kgroup=kgroup,
        n_kappa=n_kappa,
        pooled=tuple(names[c] for c in pooled) if kgroup is not None else (),
        stratum_label=stratum or "category",
        label=pats[:, 7].astype(float) if conditioned else None,
    )
    p, n_l = len(pats), len(lpairs)
    if p + n_l > MAX_PATTERNS:
        why = (
            f"{p} covariate patterns and {n_l} labelled model pairs: more than the "
            f"{MAX_PATTERNS} the competence model's exact bootstrap handles"
        )
        return (np.zeros((n, 2)), np.full(n, -1, dtype=np.intp),
                {str(label): why for label in labels}, pred_a, model)  # fmt: skip
    values = np.zeros((n, model.k))
    np.add.at(values, (ri, pat), w)
    np.add.at(values, (ri, p + pat), w * yy)
    values[lab_rows, 2 * p + lab] = 1.0
    values[lab_rows, 2 * p + n_l + lab] = human[lab_rows]
    values[:, model.col_own] = np.where(usable & (side != 0), 1.0, 0.0)
    values[:, model.col_other] = np.where(usable & (side == 0), 1.0, 0.0)
    values[:, model.col_family] = np.where(usable & (fam_side != 0), 1.0, 0.0)
    lab_group = np.where(labelled, codes, -1)
    given = pairs["p_a"].to_numpy(float) if "p_a" in pairs.columns else np.full(n, np.nan)
    for code, label in enumerate(labels):
        mine = group == code
        if not (ok1 | ok2)[codes == code].any():
            if np.isfinite(given[codes == code]).any():
                problems[str(label)] = (
                    "its verdicts have no presentation order (p_a only); the competence "
                    "model has a position term per order — give p_a_first / p_a_second"
                )
            else:
                problems[str(label)] = "no verdicts (p_a_first / p_a_second) from this judge"
            continue
        if strengths is None:
            try:
                label_strengths(pairs[lab_group == code])
            except EstimationError as exc:
                problems[str(label)] = str(exc)
                continue
        if not (mine & (side != 0)).any() or not (mine & (side == 0)).any():
            continue  # the required counts say which kind of pair is missing
        theta, g = model.fit(values[mine].sum(axis=0))
        if not np.all(np.isfinite(theta)) or not np.all(np.isfinite(g)):
            problems[str(label)] = "the competence model could not be fitted (no finite fit)"
            continue
        rows = np.flatnonzero(np.isin(ri, np.flatnonzero(mine)))
        p0 = model.p0(theta, g)[pat[rows]]
        pred_a[np.flatnonzero(mine)] = 0.0
        np.add.at(pred_a, ri[rows], w[rows] * p0)
    for code, label in enumerate(labels):  # a judge that cannot be fitted gets no number
        if str(label) in problems:
            group[codes == code] = -1
    return values, group, problems, pred_a, model


#: the calibrated family preference (the family term of the same competence model)
FAMILY_CALIBRATED = "family_preference_calibrated"
#: the calibrated estimate's ladder: each rung's part, ``(own picks − Σ π)`` over the own
#: pairs on that rung divided by the weight of all own pairs; the parts add up to it
CALIBRATED_RUNGS: dict[str, str] = {
    "calibrated_rung_human_prefers_own": "own picks minus the competence-predicted own "
    "picks on the own pairs where the human prefers the judge's answer, per own pair",
    "calibrated_rung_human_neither": "the same on the own pairs the human calls a tie or "
    "did not label, per own pair",
    "calibrated_rung_human_prefers_other": "the same on the own pairs where the human "
    "prefers the other answer, per own pair",
}
#: what the calibrated estimate's ``n`` counts, and the count beside it
OWN_PAIRS = "pairs holding the judge's own answer"
COMPETENCE_PAIRS = "pairs without its own answer (its competence is learnt on them)"
FAMILY_PAIRS = "pairs holding a family member's answer against an outsider's"

_METHOD = (
    "own answer minus the rate its own competence predicts on the same pairs had "
    "authorship not mattered; competence = logit P(picks a) = κ (s_a − s_b) + β·first, "
    "s = Bradley–Terry strengths of the models from the human labels, fitted on all "
    "its pairs with an own-answer term τ·own{family} (weighted binomial likelihood, each "
    "judged order a row of weight 1/orders); the interval refits the strengths and "
    "κ, β, τ exactly in every resample"
)


def calibrated_specs(
    pairs: pd.DataFrame,
    codes: NDArray[np.intp],
    labels: tuple[str, ...],
    *,
    strengths: Mapping[str, float] | None = None,
    side: NDArray[np.int8] | None = None,
    family_side: NDArray[np.int8] | None = None,
    rungs: bool = False,
    stratum: str | None = "auto",
    label: LabelTerm = "auto",
) -> tuple[list[MetricSpec], dict[str, str]]:
    """The competence-calibrated self-preference of every judge in ``labels``, then (with
    ``family_side``) its calibrated family preference, then (``rungs``) the parts of
    :data:`CALIBRATED_RUNGS`, all from one competence model per judge; and, per judge
    that could not be fitted, why (see :func:`calibrated_self_preference`)."""
    values, group, problems, _, model = _calibrated_parts(
        pairs, codes, labels, strengths=strengths, side=side, family_side=family_side,
        stratum=stratum_column(pairs, stratum),
        label_term=_label_term(pairs, codes, labels, label, strengths=strengths, side=side,
                               family_side=family_side, stratum=stratum_column(pairs, stratum)),
    )  # fmt: skip
    own_req = (model.col_own, OWN_PAIRS)
    other_req = (model.col_other, COMPETENCE_PAIRS)
    held = "" if strengths is None else " (the strengths given are held fixed)"
    fam_words = "" if model.fam is None else " and a family term φ·family"
    held += _strata_words(model)
    held += _label_words(model)

    def stat(name: str, combine: Any, required: tuple[tuple[int, str], ...]) -> GroupedStatistic:
        return GroupedStatistic(
            name=name, values=values, group=group, labels=labels, combine=combine,
            interval=CALIBRATED_INTERVAL, required=required,
        )  # fmt: skip

    method = "Competence-calibrated self-preference: the judge's rate of picking its " + (
        _METHOD.format(family=fam_words) + held
    )
    specs = [
        MetricSpec(CALIBRATED, stat(CALIBRATED, model.combine, (own_req, other_req)), method,
                   model.components, warnings=model.warnings, n_count=OWN_PAIRS,
                   labelled=True)
    ]  # fmt: skip
    if family_side is not None:
        fam_method = (
            "Competence-calibrated family preference: the judge's rate of picking the answer "
            "of another model of its family (against a model from outside it) minus the rate "
            "its competence predicts, from the same competence model as its self-preference, "
            "where its own answers have their own term apart from its family's; "
            + _METHOD.split("; ", 1)[1].format(family=" and a family term φ·family")
            + held
        )
        fam_req = ((model.col_family, FAMILY_PAIRS), other_req)
        specs.append(
            MetricSpec(FAMILY_CALIBRATED, stat(FAMILY_CALIBRATED, model.combine_family, fam_req),
                       fam_method, model.components_family, n_count=FAMILY_PAIRS,
                       labelled=True)
        )  # fmt: skip
    if rungs:
        for r, (name, words) in enumerate(CALIBRATED_RUNGS.items()):
            specs.append(
                MetricSpec(name, stat(name, model.combine_rung(r), (own_req, other_req)),
                           f"Part of the calibrated self-preference: {words}",
                           model.components_rung(r), n_count=OWN_PAIRS,
                           labelled=True)
            )  # fmt: skip
    return specs, problems


#: whether the competence model conditions on each pair's human label: "auto" for the
#: judges at its ceiling (:func:`_at_ceiling`), True for every judge, False for none
LabelTerm = Literal["auto"] | bool


def _at_ceiling(
    values: NDArray[np.float64], group: NDArray[np.intp], model: _Competence, n_labels: int
) -> NDArray[np.bool_]:
    """Per judge code: whether the competence model without a label term predicts it to
    pick its own answer more than :data:`CEILING` of the time (or less than 1 − it).

    There a judge's few misses decide the prediction, and a logistic curve in the
    strength gap cannot tell misses that shrink with the gap from a lapse rate that
    does not (a judge that follows the human label but for a fixed few per cent): the
    prediction then sits too near the ceiling and a planted self term reads low (0.55
    of it at a 97%-accurate judge whose answers the reference prefers 90% of the time,
    :func:`recuse.simulate.self_preference.simulate_lapse_judge`). Conditioning the
    competence on each pair's human label, ``logit P = κ g + β·first + α·label``,
    predicts such a judge on the same pairs (1.0 of it there) and keeps 0 = no bias on
    judges whose errors come from the quality gap alone
    (``benchmarks/self_preference_calibration.py``)."""
    out = np.zeros(n_labels, dtype=bool)
    for code in range(n_labels):
        mine = group == code
        if not mine.any():
            continue
        n_own, _, pred = model.parts(values[mine].sum(axis=0))
        rate = float(pred / n_own) if n_own else float("nan")
        out[code] = bool(np.isfinite(rate) and not 1 - CEILING < rate < CEILING)
    return out


def _label_term(
    pairs: pd.DataFrame,
    codes: NDArray[np.intp],
    labels: tuple[str, ...],
    label: LabelTerm,
    **parts: Any,
) -> NDArray[np.bool_] | None:
    """Which judges' competence is conditioned on the human label (``label``)."""
    if label is False:
        return None
    if label is True:
        return np.ones(len(labels), dtype=bool)
    values, group, _, _, model = _calibrated_parts(pairs, codes, labels, **parts)
    if len(values) and values.shape[1] == model.k:
        gate = _at_ceiling(values, group, model, len(labels))
        return gate if gate.any() else None
    return None


def _label_words(model: _Competence) -> str:
    """The method's words on the label term ('' without one)."""
    if model.label is None:
        return ""
    return (
        "; near its ceiling, its competence is conditioned on each pair's human label "
        "(+ α·label, label = +1 / −1 / 0 when the human prefers a / b / neither), so a "
        "judge that follows the label but for a fixed few per cent is predicted on the "
        "same pairs"
    )


def _strata_words(model: _Competence) -> str:
    """The method's words on the strata term ('' without a κ per stratum: then the
    strata warning, where it fires, says that one κ serves them all)."""
    if model.stratum is None or model.kgroup is None:
        return ""
    label = model.stratum_label
    own = [n for n in model.stratum_names if n not in model.pooled]
    words = f"; κ is learnt per {label} (κ_c for {', '.join(own)}"
    if model.pooled:
        words += (
            f"; {', '.join(model.pooled)} pooled: fewer than {MIN_STRATUM_PAIRS} pairs without "
            "the judge's own answer"
        )
    return words + ")"


def calibrated_spec(
    pairs: pd.DataFrame,
    codes: NDArray[np.intp],
    labels: tuple[str, ...],
    *,
    strengths: Mapping[str, float] | None = None,
    side: NDArray[np.int8] | None = None,
    family_side: NDArray[np.int8] | None = None,
    stratum: str | None = "auto",
    label: LabelTerm = "auto",
) -> tuple[MetricSpec, dict[str, str]]:
    """The competence-calibrated self-preference of every judge in ``labels`` and, per
    judge that could not be fitted, why (see :func:`calibrated_self_preference`)."""
    specs, problems = calibrated_specs(
        pairs, codes, labels, strengths=strengths, side=side, family_side=family_side,
        stratum=stratum, label=label,
    )  # fmt: skip
    return specs[0], problems


def calibrated_self_preference(
    pairs: pd.DataFrame,
    *,
    judge: str | None = None,
    strengths: Mapping[str, float] | None = None,
    level: float = 0.9,
    n_boot: int = 2000,
    seed: int | None = 0,
    min_n: int = 5,
    families: Families | None = None,
    selves: Mapping[str, str] | None = None,
    stratum: str | None = "auto",
    label: LabelTerm = "auto",
) -> MetricResult:
    """Self-preference of ``judge`` measured against its own competence.

    The judge's competence is a Bradley–Terry model with a per-judge discrimination
    ``κ``, a position term ``β`` and an own-answer term ``τ``, fitted on every pair of
    two known models it judged, each presentation order a row of weight
    ``1 / (orders judged)``::

        logit P(judge picks a | order) = κ (s_a − s_b) + β·first + τ·own

    ``s`` are the models' Bradley–Terry strengths from the human labels of the
    judge's pairs (each labelled pair once, as :func:`label_strengths`; or
    ``strengths``, then held fixed), ``first`` = +1 when a is shown first and −1 when second,
    ``own`` = +1 / −1 / 0 when a / b / neither is the judge's own answer. ``κ`` and
    ``β`` are learnt mostly on the pairs without its own answer. The estimate, in
    probability units, over the pairs holding its own answer::

        Δ = mean(picks own) − mean(π),   π = P(picks own | κ, β, τ = 0)

    0 = it picks its own answer exactly as often as its competence predicts for
    answers of that strength; +0.1 = 10 points more often. Unlike the equal-opportunity
    gap, it is 0 for a judge without a self term however strong its own model is
    (``benchmarks/self_preference_calibration.py`` measures this).

    The interval is the percentile cluster bootstrap over prompts (:mod:`.bootstrap`;
    not BCa, see :data:`CALIBRATED_INTERVAL`); each resample refits the strengths and
    ``κ, β, τ`` exactly (both likelihoods depend on the data only through sums per
    covariate pattern and per labelled model pair, which are resampled) and evaluates
    ``π`` at the refit.
    Needs at least ``min_n`` pairs with and ``min_n`` without its own answer, and human
    labels for the strengths; else :class:`EstimationError`. ``strengths`` given must
    hold a finite strength for every model of the judged pairs (else
    :class:`ConfigError`).

    ``families`` (a roster or ``{model: family}``): the model gets a family term
    ``φ·family`` beside ``τ·own`` (+1 / −1 / 0 when a / b / neither is another model of
    the judge's family against one from outside it), as ``recuse audit`` fits it;
    ``selves``: what counts as the judge itself (:func:`favored_side`).

    ``stratum`` (default ``"auto"``: ``category``, else ``task``, where the judge's
    pairs hold two or more; see :func:`stratum_column`; None: off): ``κ`` becomes one
    ``κ_c`` per stratum, ``logit P = κ_c (s_a − s_b) + β·first + τ·own``, so a judge
    that judges some categories worse than others is predicted per category. A stratum
    with fewer than :data:`MIN_STRATUM_PAIRS` pairs without the judge's own answer
    shares a pooled ``κ`` (the method says which). A warning says when the own pairs'
    strata differ from the rest (:func:`strata_warning`).

    ``label`` (default ``"auto"``): where the model above predicts the judge to pick its
    own answer more than :data:`CEILING` of the time (or less than 1 − it), its
    competence is conditioned on each pair's human label, ``logit P = κ (s_a − s_b) +
    β·first + α·label + τ·own`` (label = +1 / −1 / 0 when the human prefers a / b /
    neither or did not label it): a near-perfect judge whose misses do not shrink with
    the gap (a lapse rate) is then predicted on the same pairs instead of by a curve
    that runs to the ceiling, which read a planted self term about half its size
    (:func:`_at_ceiling`). True: always; False: never (the ceiling then warns).

    ``components``: ``own_pick_rate`` and ``predicted_own_pick_rate``. ``warnings``
    say, with both ranges of strength gaps, when most of its own pairs lie far beyond
    the gaps its competence is learnt on (:func:`extrapolation_warning`).
    """
    check_options(level=level, n_boot=n_boot, min_n=min_n)
    rows = single_judge(pairs, judge)
    codes, labels = judge_codes(rows, None)
    side = favored_side(rows, relation="self", selves=selves)
    fam = None
    if families is not None:
        fam = favored_side(rows, relation="family", families=families, selves=selves)
    spec, problems = calibrated_spec(
        rows, codes, labels, strengths=strengths, side=side, family_side=fam, stratum=stratum,
        label=label,
    )  # fmt: skip
    if problems:
        raise EstimationError(f"judge {labels[0]!r}: {next(iter(problems.values()))}")
    return run_one(spec, clusters_of(rows), level=level, n_boot=n_boot, seed=seed, min_n=min_n)


# --- how much of it is familiarity: a mediation through perplexity -------------------

MEDIATION = ("familiarity_indirect", "familiarity_direct", "familiarity_share")


@dataclass(frozen=True)
class _Mediation:
    """The mediation's statistics from sums: the calibrated columns
    (:class:`_Competence`, ``k`` of them), then over the pairs without its own answer
    1, d, d², r, r·d (``r`` = verdict for a minus the competence prediction), then over
    its own pairs 1 and ``d_own``."""

    competence: _Competence

    def parts(self, s: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
        """(total Δ, indirect a·b)."""
        k = self.competence.k
        total = self.competence.combine(s[..., :k])
        n0 = s[..., k]
        with np.errstate(divide="ignore", invalid="ignore"):
            md, mr = s[..., k + 1] / n0, s[..., k + 3] / n0
            var = s[..., k + 2] / n0 - md * md
            slope = (s[..., k + 4] / n0 - mr * md) / var
            a = s[..., k + 6] / s[..., k + 5]
        slope = np.where(var > 1e-12, slope, np.nan)
        return total, a * slope

    def indirect(self, s: NDArray[np.float64]) -> NDArray[np.float64]:
        return self.parts(s)[1]

    def direct(self, s: NDArray[np.float64]) -> NDArray[np.float64]:
        total, indirect = self.parts(s)
        return total - indirect

    def share(self, s: NDArray[np.float64]) -> NDArray[np.float64]:
        total, indirect = self.parts(s)
        out = np.full(total.shape, np.nan)
        np.divide(indirect, total, out=out, where=np.abs(total) > 1e-12)
        return out

    def warnings(self, t: NDArray[np.float64]) -> tuple[str, ...]:
        """The calibrated estimate's caveats (direct and share rest on it)."""
        return self.competence.warnings(t[..., : self.competence.k])

    def components(self, t: NDArray[np.float64]) -> dict[str, float]:
        total, indirect = self.parts(t)
        k = self.competence.k
        n0, n1, gap = t[k], t[k + 5], t[k + 6]
        return {
            "calibrated_self_preference": float(total),
            "indirect": float(indirect),
            "own_log_ppl_gap": float(gap / n1) if n1 else float("nan"),
            "perplexity_slope": float(indirect / (gap / n1)) if n1 and gap else float("nan"),
            "pairs_without_own": float(n0),
        }


def familiarity_mediation(
    pairs: pd.DataFrame,
    *,
    judge: str | None = None,
    strengths: Mapping[str, float] | None = None,
    level: float = 0.9,
    n_boot: int = 2000,
    seed: int | None = 0,
    min_n: int = 5,
    families: Families | None = None,
    selves: Mapping[str, str] | None = None,
    stratum: str | None = "auto",
    label: LabelTerm = "auto",
) -> list[MetricResult]:
    """How much of ``judge``'s calibrated self-preference its familiarity explains.

    Over the judge's rows with both perplexities (``ppl_a``, ``ppl_b`` under the row's
    judge), ``Δ`` is :func:`calibrated_self_preference` and ``d = log ppl_a − log ppl_b``.
    A product-of-coefficients mediation (authorship → lower perplexity → the pick)::

        a = mean over its own pairs of (log ppl_own − log ppl_other)
        b = slope of r on d over its pairs without its own answer (least squares),
            r = verdict for a − P(picks a | competence)
        indirect = a · b          (the part of Δ its familiarity explains)
        direct   = Δ − a · b      (what remains)
        share    = a · b / Δ

    ``b`` is learnt where authorship plays no part, so it is the judge's pull toward
    the more familiar answer beyond the models' strengths; ``a`` is how much more
    familiar its own answers are. All three share one cluster bootstrap over prompts
    (:mod:`.bootstrap`; the competence model refitted exactly in each) and, like the
    calibrated estimate they split, its percentile interval (:data:`CALIBRATED_INTERVAL`).
    0 = no part explained (indirect), no self-preference left (direct). The share is
    unstable when ``Δ`` is near 0: read it with ``Δ``'s interval. Returns the three
    results in the order of :data:`MEDIATION`.

    ``Δ`` comes from the headline's competence model, with the same options as
    :func:`calibrated_self_preference`: a discrimination ``κ_c`` per ``stratum``
    (default: the category, where the judge's pairs hold two or more), the family term
    with ``families``, the label term near the ceiling (``label``), what counts as the
    judge itself (``selves``); so the parts add up to the headline on the same rows
    (the rows with both perplexities), not to a one-``κ`` refit of it.
    """

    check_options(level=level, n_boot=n_boot, min_n=min_n)
    rows = single_judge(pairs, judge)
    d = log_perplexity_difference(rows)
    rows = rows.loc[np.isfinite(d)].reset_index(drop=True)
    d = d[np.isfinite(d)]
    if rows.empty:
        raise EstimationError("no pairs with both perplexities (ppl_a, ppl_b) for this judge")
    codes, labels = judge_codes(rows, None)
    side = favored_side(rows, relation="self", selves=selves)
    fam = None
    if families is not None:
        fam = favored_side(rows, relation="family", families=families, selves=selves)
    column = stratum_column(rows, stratum)
    how: dict[str, Any] = {"strengths": strengths, "side": side, "family_side": fam,
                           "stratum": column}  # fmt: skip
    values, group, problems, pred_a, model = _calibrated_parts(
        rows, codes, labels, label_term=_label_term(rows, codes, labels, label, **how), **how
    )
    if problems:
        raise EstimationError(f"judge {labels[0]!r}: {next(iter(problems.values()))}")
    fitted = np.isfinite(pred_a)
    other = fitted & (side == 0)
    own = fitted & (side != 0)
    r = rows["p_a"].to_numpy(float) - pred_a
    more = np.zeros((len(rows), 7))
    more[other, 0] = 1.0
    more[other, 1] = d[other]
    more[other, 2] = d[other] ** 2
    more[other, 3] = r[other]
    more[other, 4] = r[other] * d[other]
    more[own, 5] = 1.0
    more[own, 6] = np.where(side > 0, d, -d)[own]
    values = np.column_stack([values, more])
    required = (
        (model.col_own, "pairs holding the judge's own answer, with perplexities"),
        (model.k, "pairs without its own answer, with perplexities"),
    )
    words = {
        "familiarity_indirect": "the part of the calibrated self-preference explained by "
        "the judge's lower perplexity on its own answers: (own − other log-perplexity on "
        "its own pairs) × (slope of its verdict beyond competence on the log-perplexity "
        "difference, on pairs without its own answer)",
        "familiarity_direct": "calibrated self-preference minus the part familiarity explains",
        "familiarity_share": "indirect / calibrated self-preference",
    }
    med = _Mediation(model)
    combines = {
        "familiarity_indirect": med.indirect,
        "familiarity_direct": med.direct,
        "familiarity_share": med.share,
    }
    specs = [
        MetricSpec(
            name,
            GroupedStatistic(
                name,
                values,
                group,
                labels,
                combines[name],
                required,
                interval=CALIBRATED_INTERVAL,
            ),
            words[name] + _strata_words(model) + _label_words(model),
            med.components,
            warnings=None if name == "familiarity_indirect" else med.warnings,
        )
        for name in MEDIATION
    ]
    results, skipped = run_specs(
        specs, clusters_of(rows), level=level, n_boot=n_boot, seed=seed, min_n=min_n
    )
    if skipped:
        raise EstimationError(f"cannot estimate the mediation: {skipped[0].reason}")
    return results
