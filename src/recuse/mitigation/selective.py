"""Selective judging with a guarantee: where a judge's verdict can be used, and a cascade
of judges that ends with a person.

**Confidence.** For one item the judge's probability that a is better, averaged over
the orders judged (``p_a``: Eq. 3 of the self-preference paper per order, then the
mean), gives the verdict (a when ``p_a > 0.5``, b when ``< 0.5``, a tie at 0.5) and the
confidence ``c = max(p_a, 1 - p_a)`` in [0.5, 1]. A judge that gives only picks
(every value 0, 0.5 or 1) has ``c = 1`` when both orders pick the same answer, 0.75 when
one order picks an answer and the other calls a tie, and 0.5 when they disagree or both
tie: its confidence is *order consistency*, and the result says so. An item such a judge
gave one verdict only (the other order unparsed or failed, or never judged) has shown no
consistency: it reads 0.5, as a flip does (read as its pick it would sit at 1 beside the
consistent pairs, and a table judged in one order would pass every pick a threshold of 1
certified on two; :func:`items_of`). The certificate counts them (``n_one_order``).
With ``recalibrate=True`` ``p_a`` is first mapped by isotonic regression
(:func:`recuse.metrics.calibration.recalibrate`, cross-fitted over prompts).

**Agreement.** The human label is a when ``human > 0.5``, b when ``< 0.5``, a tie at
0.5 (a share of votes counts by its majority). ``human_ties="exclude"`` (default)
leaves tied labels out of calibration and of the held-out check (their number is
reported); ``"count"`` keeps them, and a tie label agrees only with a tie verdict (so a
judge that picks a side disagrees with every tied label).

**Fixed-sequence test** (Jung, Brahman and Choi, "Trust or Escalate", ICLR 2025). On the
labelled calibration items, for thresholds ``λ_1 > λ_2 > …`` (the distinct
confidences, highest first, thinned to at most ``grid + 1``: the first confidence
whose kept count passes each multiple of ``⌈N / grid⌉`` — 1, 6, 11, …, 96 of 100
items at ``grid`` 20 — and the lowest; starting at the first that keeps at least
``max(min_labels, n_min)`` items, ``n_min = ⌈log δ / log t⌉`` — fewer could not reject
even with full agreement; this uses no label), with ``n(λ)`` items kept (``c ≥ λ``)
and ``k(λ)`` of them agreeing with the human, test ``H0: agreement(λ) < t`` by the
exact binomial upper tail::

    p(λ) = P(Binomial(n(λ), t) ≥ k(λ))

equivalently, the one-sided Clopper–Pearson bound ``L(λ) = Beta⁻¹(δ; k, n − k + 1) ≥ t``.
Walk down while ``p(λ) ≤ δ`` and keep the lowest threshold reached, ``λ̂``; if the first
test fails, nothing is certified. Because the tests are taken in a fixed order and the
walk stops at the first failure, no multiplicity correction is needed, and::

    P( agreement with humans on future items with c ≥ λ̂  ≥  t )  ≥  1 − δ

assuming the calibration items and the future items are exchangeable (drawn from the
same distribution; a shift in prompts, models or judge voids it). The agreement is
the population rate among kept items; a finite batch of future items scatters around it.
The binomial test counts each item as independent: items of one prompt that are right or
wrong together count as fewer than they are, and the guarantee fails more often than δ
(0.19 at δ = 0.1 with 10 items a prompt and a strong prompt effect; docs/certify.md).

**Strata.** Items where one answer is the judge's own (or its family's, the other's
not; :func:`recuse.metrics.self_preference.favored_side`, ``selves=`` from
:meth:`recuse.roster.Roster.self_map`) get their own threshold and guarantee, so a judge
over-confident on its own answers cannot hide in a pooled guarantee. The strata's
tests share δ by a union bound (``δ / m`` each, ``m`` strata with enough labels), so all
strata's guarantees — and hence the judge's pooled one — hold together with
probability ``≥ 1 − δ``. A stratum with fewer than ``max(min_labels, n_min)`` labelled
items, ``n_min`` at ``δ / m'`` (``m'``: the strata with labelled items; a label-free
rule), is never tested nor certified, and takes no share of δ; its items go to a
person. The strata are the roster's: the thresholds file keeps whose answers each
generator gave each judge (:func:`models_of`), and
:func:`recuse.mitigation.thresholds.apply_thresholds` refuses a roster that reads one of
them otherwise.

**Cascade.** Judges ``j_1, …, j_m`` in order: ``j_1`` is certified on all labelled items,
keeps what it can; ``j_k`` is certified on the items no earlier judge kept (an item a
judge did not judge passes to the next), each stage at ``δ / m`` (its strata share that
again). The rest goes to a person. Union bound: with probability ``≥ 1 − δ`` every
stage's kept agreement is ``≥ t``, so the agreement of all machine verdicts is ``≥ t``.
Each stage's threshold is taken as fixed when the next stage's items are chosen; it is
not quite (the labels that stopped stage k's fixed-sequence test, just below its
threshold, are among stage k+1's items), a dependence the bound does not cover: planted
simulations held it (1 run of 60 below target at δ = 0.1), no proof does.

**Held-out check.** The labelled items are split into ``folds`` folds by prompt
(seeded); each fold is decided with thresholds certified on the other folds, and the
agreement and coverage observed there are reported beside the guarantee.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal, TypeGuard

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy.stats import beta, binom

from recuse import numbers
from recuse.errors import ConfigError, EstimationError, InputError
from recuse.metrics.bootstrap import SettingError, check_seed
from recuse.metrics.calibration import FOLDS, gives_probabilities, recalibrate, stated_verdicts
from recuse.metrics.self_preference import favored_side
from recuse.metrics.verdicts import TIE_TOL, FloatArray, judged_in_both_orders
from recuse.reference import AGREEING_WITH, REFERENCE_NAMES, ReferenceKind
from recuse.roster import Roster, self_keys

__all__ = [
    "APPROXIMATE",
    "PERSON",
    "STRATA",
    "TIES_LEFT_OUT",
    "Cascade",
    "Certification",
    "HeldOut",
    "JudgeCertificate",
    "Stage",
    "StratumCertificate",
    "certify_items",
    "certify_judges",
    "clopper_pearson_lower",
    "confidence_of",
    "coverage_curve",
    "fixed_sequence",
    "naive_threshold",
    "strata_of",
]

TiedLabels = Literal["exclude", "count"]
Stratum = Literal["own", "family", "other", "all"]
STRATA: tuple[Stratum, ...] = ("own", "family", "other")
PERSON = "to a person"
MIN_LABELS = 30
GRID = 20
#: the thresholds file's format: 2 added judges' ``orders``, ``coverage`` and ``share``,
#: which a recuse reading format 1 refused as keys it does not read; it reads 2 as newer;
#: 3 added the ``sha256`` of the file's values (:func:`thresholds_checksum`), required in 3
THRESHOLDS_VERSION = 3
CONFIDENCE_WORDS = {
    "probability": "max(p_a, 1 - p_a) of the order-averaged probability (Eq. 3)",
    "recalibrated probability": "max(p, 1 - p) of the isotonic-recalibrated p_a "
    "(cross-fitted by prompt)",
    "order consistency": "order consistency: 1 when both orders pick the same answer, "
    "0.75 when one picks an answer and the other calls a tie, 0.5 when they disagree or "
    "both tie, and 0.5 for an item judged in one order only (no consistency seen; "
    "n_one_order counts them) (the judge gives picks, not probabilities)",
    "single verdict": "none usable: one pick per item (no probabilities, one order), so "
    "every verdict has the same confidence and a threshold keeps all or nothing",
}

#: what a guarantee adds when the confidence was recalibrated (``recalibrate=True``): the
#: isotonic map is cross-fitted on the labels that test it, and ``certify apply`` maps
#: with the fit on all of them, so the probability is not exact (docs/certify.md)
APPROXIMATE = (
    "; approximate: the confidence is recalibrated on these same labels (cross-fitted "
    "isotonic map; certify apply uses the map fitted on all of them), so the probability "
    "holds only roughly: fit the map on a separate labelled set for an exact guarantee"
)
#: what a guarantee certified with tied labels left out (``human_ties="exclude"``) is on:
#: the items whose label is a or b; counting a decided item with a tied label as a
#: disagreement (15% tied labels) reads its agreement 0.85 × 0.85 = 0.72
TIES_LEFT_OUT = (
    " (items whose label is a tie not counted, as at certification: the agreement is "
    "among those labelled a or b)"
)

#: what the lower bound of a stratum that certified nothing is of: not of its agreement
#: (null: none kept) but of the items its first test kept — ``recuse certify`` printed
#: "agreement: none certified" beside "bound 0.599" (26 of its 34 most confident agree)
#: The test starts at max(--min-labels, ⌈log δ / log t⌉) items (:func:`fixed_sequence`):
#: at target 0.95 and δ 0.1 that is 45, not --min-labels' 30, and the words said 30.
UNCERTIFIED_BOUND = (
    "where nothing is certified, the bound of the first threshold tested, on the items it "
    "keeps: its most confident, or where they are fewer than the test's start (--min-labels, "
    "or where that is more the fewest whose full agreement could pass, ⌈log δ / log "
    "target⌉ at the stratum's share of δ) the fewest more that reach it"
)

#: what a kept verdict agreeing is, beside each agreement certify writes: the audit's
#: agreement scores a verdict that flips with the order ½ (gpt-4 on llmbar-mtbench: 0.81
#: there, 74.5% here, with nothing said of why)
AGREEING = (
    "a verdict is the side of p_a averaged over the orders, so one at ½ (a flip between "
    "the orders, a tie) equals no label of a or b and counts as not agreeing, where the "
    "audit's agreement scores it ½"
)

#: what each number of a certification's JSON (:meth:`Certification.to_dict`) means, with
#: its unit; ``recuse certify`` prints the same words under its tables
FIELDS: dict[str, str] = {
    "target": "the agreement the guarantee is for (a share of kept verdicts, 0 to 1)",
    "delta": "allowed failure probability: the guarantee holds with probability 1 - delta",
    "threshold": "keep a verdict when the judge's confidence (confidence_definition) is at "
    "least this; null: nothing certified, every item of the stratum goes on",
    "n_labelled": "labelled items (ties per human_ties) of the stratum or judge",
    "n_kept": "labelled items whose confidence reaches the threshold",
    "n_agree": "kept items whose verdict equals the label",
    "coverage": "n_kept / n_labelled: share of the labelled items kept (0 to 1)",
    "agreement": "n_agree / n_kept: share of kept verdicts equal to the label, observed on "
    f"the calibration items (null: none kept); {AGREEING}",
    "lower_bound": "one-sided Clopper–Pearson lower bound of that agreement at 1 - delta "
    "(delta: this stratum's share); the guarantee holds where it is at least target; "
    f"{UNCERTIFIED_BOUND} (agreement null; the reason gives how many agree), as p_value "
    "is; null: no test",
    "p_value": "P(Binomial(n_kept, target) >= n_agree) at the threshold (at the first "
    "threshold tested when nothing was certified); null: no test",
    "best_target": "the highest target (to 0.01) these labels could certify at this delta",
    "n_ties_excluded": "labelled items left out because the label is a tie (of the judge; "
    "cascade: of the items it is certified on; 0 when ties are counted)",
    "n_one_order": "items judged in one order only, read at confidence 0.5 (order consistency)",
    "heldout_coverage": "coverage when each of 5 prompt folds is decided by thresholds "
    "certified on the other folds (null: no labels, or every item has one prompt, so no "
    "fold can be certified without its own items)",
    "heldout_n": "labelled items decided held out (each once, in its prompt fold)",
    "heldout_kept": "of those, the items kept by thresholds certified without their fold",
    "heldout_agreement": "agreement of those held-out kept verdicts (null: none kept)",
    "n_items": "cascade: labelled items the cascade is certified on",
    "heldout_person_share": "cascade: share no judge keeps held out",
    "reached": "cascade: share of the labelled items that reach this judge (no earlier "
    "judge kept them)",
    "share": "cascade: share of all labelled items this judge decides",
    "heldout_share": "cascade: the same, each fold decided by thresholds certified without it",
    "judgments_per_item": "cascade: orders judged per item (1 or 2, mean over the judge's "
    "verdicts; null: unknown)",
    "usd_per_1000_judgments": "cascade: the judge's price, USD per 1,000 judgments",
    "usd_per_1000_items": "cascade: USD per 1,000 items = sum over judges of reached x "
    "judgments_per_item x usd_per_1000_judgments (judges only, not the person); null: "
    "cost_unknown says why",
    "person_share": "cascade: share of the labelled items no judge keeps (to a person)",
}


def clopper_pearson_lower(k: int | FloatArray, n: int | FloatArray, delta: float) -> FloatArray:
    """One-sided ``1 − δ`` Clopper–Pearson lower bound of a binomial rate, ``k`` of ``n``:
    ``Beta⁻¹(δ; k, n − k + 1)``, 0 when ``k = 0``.

    >>> round(float(clopper_pearson_lower(20, 20, 0.1)), 4)  # 0.1 ** (1 / 20)
    0.8913
    """
    k_ = np.asarray(k, dtype=float)
    n_ = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore"):
        lb = beta.ppf(delta, np.maximum(k_, 1e-300), n_ - k_ + 1)
    return np.asarray(np.where(k_ > 0, lb, 0.0), dtype=float)


def n_min(target: float, delta: float) -> int:
    """Fewest kept items whose full agreement rejects ``agreement < target`` at ``delta``:
    ``⌈log δ / log t⌉``.

    >>> n_min(0.85, 0.1)
    15
    """
    return math.ceil(math.log(delta) / math.log(target) - 1e-12)


@dataclass(frozen=True)
class Walk:
    """What the fixed-sequence test found on one set of calibration items."""

    threshold: float | None  # lowest threshold reached; None: nothing certified
    n_kept: int
    n_agree: int
    lower_bound: float  # Clopper–Pearson bound at the threshold (or at the first step)
    p_value: float
    first: tuple[float, int, int] | None  # (λ, n, k) of the first test; None: no test
    #: (λ, n, k) of the highest threshold, the most confident items, where the test began
    #: below it (they were fewer than its start: --min-labels); None: it began there
    top: tuple[float, int, int] | None = None
    start: int = 1  # the fewest items the first threshold tested keeps
    #: items between the thresholds tested where ``grid`` thinned them (:func:`_steps`:
    #: ``⌈N / grid⌉``); 1: every distinct confidence was a threshold
    spacing: int = 1


def _steps(
    conf: FloatArray, agree: FloatArray, grid: int = 0
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Thresholds, highest first, with the items kept and agreeing at each: every
    distinct confidence, or with ``grid`` > 0 only the first whose kept count passes
    each multiple of ``⌈N / grid⌉`` (kept counts 1, 6, 11, …, 96 of 100 distinct
    confidences at ``grid`` 20) and the lowest (100): at most ``grid + 1``, a label-free
    thinning."""
    order = np.argsort(-conf, kind="stable")
    c, a = conf[order], agree[order]
    n_cum = np.arange(1, len(c) + 1, dtype=float)
    k_cum = np.cumsum(a)
    last = np.r_[c[1:] != c[:-1], True]  # the last position of each distinct value
    lam, n, k = c[last], n_cum[last], k_cum[last]
    if grid > 0 and len(lam) > 1:
        step = math.ceil(len(c) / grid)
        bucket = (n - 1) // step
        first = np.r_[True, bucket[1:] != bucket[:-1]]
        first[-1] = True
        lam, n, k = lam[first], n[first], k[first]
    return lam, n, k


def fixed_sequence(
    conf: FloatArray,
    agree: FloatArray,
    *,
    target: float,
    delta: float,
    start: int = 1,
    grid: int = 0,
) -> Walk:
    """The fixed-sequence test (module docstring) on calibration confidences ``conf`` and
    0/1 agreements ``agree``.

    >>> w = fixed_sequence(np.r_[np.full(30, 0.9), np.full(30, 0.6)],
    ...                    np.r_[np.ones(30), np.zeros(30)], target=0.85, delta=0.1)
    >>> w.threshold, w.n_kept, w.n_agree
    (0.9, 30, 30)
    """
    steps = _steps(np.asarray(conf, float), np.asarray(agree, float), grid)
    walk = _walk(steps, target=target, delta=delta, start=start)
    thinned = len(steps[0]) < len(np.unique(conf))
    return replace(walk, spacing=math.ceil(len(conf) / grid)) if thinned else walk


def _walk(
    steps: tuple[FloatArray, FloatArray, FloatArray], *, target: float, delta: float, start: int
) -> Walk:
    """:func:`fixed_sequence` on the thresholds ``steps`` (:func:`_steps`: they do not
    depend on the target, so :func:`best_target` sorts the items once for all)."""
    lam, n, k = steps
    need = max(start, n_min(target, delta))
    begin = np.flatnonzero(n >= need)
    if len(lam) == 0 or len(begin) == 0:
        return Walk(None, 0, 0, math.nan, math.nan, None)
    top = (float(lam[0]), int(n[0]), int(k[0])) if begin[0] > 0 else None
    lam, n, k = lam[begin[0] :], n[begin[0] :], k[begin[0] :]
    p = binom.sf(k - 1, n, target)
    failed = np.flatnonzero(p > delta)
    stop = int(failed[0]) if len(failed) else len(lam)
    first = (float(lam[0]), int(n[0]), int(k[0]))
    if stop == 0:
        lb = float(clopper_pearson_lower(k[0], n[0], delta))
        return Walk(None, 0, 0, lb, float(p[0]), first, top, need)
    i = stop - 1
    lb = float(clopper_pearson_lower(k[i], n[i], delta))
    return Walk(float(lam[i]), int(n[i]), int(k[i]), lb, float(p[i]), first, top, need)


def naive_threshold(conf: FloatArray, agree: FloatArray, *, target: float) -> float | None:
    """The rule without a test, for comparison: the lowest threshold whose kept
    calibration items agree at least ``target`` of the time (no bound, no δ)."""
    lam, n, k = _steps(np.asarray(conf, float), np.asarray(agree, float))
    ok = np.flatnonzero(k / np.maximum(n, 1) >= target)
    return float(lam[ok[-1]]) if len(ok) else None


def best_target(
    conf: FloatArray, agree: FloatArray, *, delta: float, start: int = 1, grid: int = 0
) -> float | None:
    """The highest target (to 0.01, in [0.5, 0.99]) this calibration set certifies.

    :func:`_walk` certifies a threshold at target ``t`` exactly when its first test
    passes: ``P(Binomial(n_b, t) ≥ k_b) ≤ δ`` at the first step ``b`` keeping at least
    ``max(start, ⌈log δ / log t⌉)`` items; so every target's first test is computed
    at once (one call of ``binom.sf`` for the 50 targets, not a walk for each).
    """
    _, n, k = _steps(np.asarray(conf, float), np.asarray(agree, float), grid)
    targets = np.round(np.arange(0.5, 0.995, 0.01), 2)
    need = np.array([max(start, n_min(float(t), delta)) for t in targets])
    begin = np.searchsorted(n, need)  # n rises along the steps: the first with n >= need
    held = begin < len(n)
    b = begin[held]
    passed = binom.sf(k[b] - 1, n[b], targets[held]) <= delta
    return float(targets[held][passed].max()) if passed.any() else None


# --- the items of one judge ---


def side_labels(p: FloatArray) -> NDArray[np.int8]:
    """+1 a, -1 b, 0 tie, for probabilities of a (NaN -> 0, callers mask it)."""
    out = np.where(p > 0.5 + TIE_TOL, 1, np.where(p < 0.5 - TIE_TOL, -1, 0))
    return np.asarray(out, dtype=np.int8)


def confidence_kind(rows: pd.DataFrame) -> str:
    """How the judge's confidence is read: probability, order consistency or none."""
    if gives_probabilities(stated_verdicts(rows)):
        return "probability"
    both = judged_in_both_orders(rows)
    return "order consistency" if bool(both.any()) else "single verdict"


def one_order(rows: pd.DataFrame) -> NDArray[np.bool_]:
    """Rows without a verdict in both orders (one order, or a ``p_a`` given without its
    orders)."""
    return np.asarray(~judged_in_both_orders(rows).to_numpy(), dtype=bool)


def confidence_of(p_a: FloatArray) -> FloatArray:
    """``max(p, 1 − p)``: the judge's confidence in its verdict (NaN stays NaN)."""
    p = np.asarray(p_a, dtype=float)
    return np.asarray(np.maximum(p, 1 - p), dtype=float)


def strata_of(
    rows: pd.DataFrame, roster: Roster | None, *, selves: Mapping[str, str] | None = None
) -> NDArray[np.object_]:
    """Each row's stratum for its judge: ``own`` (one answer is the judge's, the other's
    not), ``family`` (one answer by the judge's family, not itself, against an outsider)
    or ``other``; all ``all`` without a roster."""
    if roster is None:
        return np.full(len(rows), "all", dtype=object)
    own = favored_side(rows, relation="self", selves=selves) != 0
    fam = favored_side(rows, relation="family", families=roster, selves=selves) != 0
    return np.asarray(np.where(own, "own", np.where(fam, "family", "other")), dtype=object)


#: whose answers a generator gives a judge, as :func:`strata_of` draws the strata: the
#: judge's own (its self key: :meth:`~recuse.roster.Roster.self_map`), another model's
#: of its family, or an outsider's
WHOSE: dict[str, str] = {"own": "the judge's own", "family": "its family's",
                         "other": "an outsider's"}  # fmt: skip


def models_of(
    rows: pd.DataFrame, judge: str, roster: Roster | None, o: Options
) -> tuple[tuple[str, str], ...] | None:
    """Each generator id of one judge's ``rows`` (``model_a``, ``model_b``) and whose
    answers it gives the judge (:data:`WHOSE`), with each other spelling the roster has
    for it (its aliases: a file's name read as that id), sorted by name; None without
    strata (no roster, or ``o.strata`` off). These decide every item's stratum: own when
    one answer is own and the other known and not, else family when one is family and
    the other an outsider's, else other (:func:`strata_of`); a thresholds file keeps
    them, and :func:`recuse.mitigation.thresholds.apply_thresholds` refuses a roster that
    reads one of them otherwise (the aliases: one that roster makes a model of its own,
    an id of the new items)."""
    if roster is None or not o.strata:
        return None
    names = pd.concat([rows["model_a"], rows["model_b"]]).dropna()
    models = sorted(set(as_texts(names)))
    if not models:
        return ()
    keys = self_keys(pd.Series([judge, *models], dtype=object),
                     roster.self_map(o.self_scope))  # type: ignore[arg-type]  # fmt: skip
    family = roster.family(judge)
    whose = {m: "own" if k == keys.iloc[0] else "family" if roster.family(m) == family
             else "other" for m, k in zip(models, keys.iloc[1:], strict=True)}  # fmt: skip
    spelled = {a: whose[m] for m in models if m in roster.entries
               for a in roster.entries[m].aliases}  # fmt: skip
    return tuple(sorted({**spelled, **whose}.items()))


@dataclass(frozen=True)
class HeldOut:
    """Cross-fitted check on the labelled items: ``n`` items, ``kept`` decided by the
    judge with thresholds certified without their fold, ``agree`` of those agreeing.
    ``checked`` False: no check could be made (the items share one prompt, so every fold
    but one is empty and that one would be certified on no labels); its coverage and
    agreement are NaN, not 0 kept."""

    n: int
    kept: int
    agree: int
    checked: bool = True

    @property
    def coverage(self) -> float:
        return self.kept / self.n if self.n and self.checked else math.nan

    @property
    def agreement(self) -> float:
        return self.agree / self.kept if self.kept and self.checked else math.nan

    def __add__(self, other: HeldOut) -> HeldOut:
        return HeldOut(self.n + other.n, self.kept + other.kept, self.agree + other.agree,
                       self.checked and other.checked)  # fmt: skip


NO_HELD_OUT = HeldOut(0, 0, 0)


@dataclass(frozen=True)
class StratumCertificate:
    """One judge's certified threshold on one stratum (own / family / other / all).

    ``delta`` is this stratum's share of the judge's δ; ``coverage`` and ``agreement``
    are observed on the calibration items (kept share; agreement among the kept);
    ``lower_bound`` is the one-sided ``1 − delta`` Clopper–Pearson bound of the
    agreement at the threshold; ``best_target`` the highest target these labels could
    certify at ``delta`` (None: none)."""

    stratum: str
    target: float
    delta: float
    n_labelled: int
    threshold: float | None
    n_kept: int
    n_agree: int
    lower_bound: float
    p_value: float
    reason: str
    best_target: float | None
    heldout: HeldOut = NO_HELD_OUT

    @property
    def certified(self) -> bool:
        return self.threshold is not None

    @property
    def coverage(self) -> float:
        return self.n_kept / self.n_labelled if self.n_labelled else math.nan

    @property
    def agreement(self) -> float:
        return self.n_agree / self.n_kept if self.n_kept else math.nan

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("heldout")
        return d | {
            "certified": self.certified,
            "coverage": _num(self.coverage),
            "agreement": _num(self.agreement),
            "lower_bound": _num(self.lower_bound),
            "p_value": _num(self.p_value),
            "heldout_n": self.heldout.n,
            "heldout_kept": self.heldout.kept if self.heldout.checked else None,
            "heldout_coverage": _num(self.heldout.coverage),
            "heldout_agreement": _num(self.heldout.agreement),
        }


def _num(x: float) -> float | None:
    return None if not math.isfinite(x) else float(x)


@dataclass(frozen=True)
class JudgeCertificate:
    """A judge's certification: one :class:`StratumCertificate` per stratum, its
    confidence (``confidence``: how it was read, in words at :data:`CONFIDENCE_WORDS`),
    and the pooled numbers over the strata."""

    judge: str
    target: float
    delta: float
    confidence: str
    strata: tuple[StratumCertificate, ...]
    n_ties_excluded: int
    recalibration: tuple[tuple[float, ...], tuple[float, ...]] | None = None
    #: what the labels it agrees with are: its guarantee names them (:mod:`recuse.reference`)
    reference: ReferenceKind = "human"
    #: items given one verdict only where the confidence is order consistency (they read
    #: 0.5: :func:`items_of`)
    n_one_order: int = 0
    #: what drew its strata: each generator id of its verdicts and whose answers it gives
    #: the judge (:func:`models_of`); None: no strata (pooled, or no roster)
    models: tuple[tuple[str, str], ...] | None = None
    #: where its confidence is a probability, the orders its verdicts were judged in:
    #: ``both`` (each the mean of two orders), ``one`` or ``mixed`` (:func:`orders_of`);
    #: None for picks (an item of one order reads 0.5 there)
    orders: str | None = None

    @property
    def n_labelled(self) -> int:
        return sum(s.n_labelled for s in self.strata)

    @property
    def n_kept(self) -> int:
        return sum(s.n_kept for s in self.strata)

    @property
    def coverage(self) -> float:
        return self.n_kept / self.n_labelled if self.n_labelled else math.nan

    @property
    def agreement(self) -> float:
        n = self.n_kept
        return sum(s.n_agree for s in self.strata) / n if n else math.nan

    @property
    def certified(self) -> bool:
        return any(s.certified for s in self.strata)

    @property
    def heldout(self) -> HeldOut:
        out = NO_HELD_OUT
        for s in self.strata:
            out = out + s.heldout
        return out

    @property
    def thresholds(self) -> dict[str, float | None]:
        return {s.stratum: s.threshold for s in self.strata}

    def guarantee(self) -> str:
        """The guarantee in words, or why there is none."""
        if not self.certified:
            why = ""
            if not self.n_labelled:
                why = (
                    f" (no labelled item: its {self.n_ties_excluded} labels are ties, left "
                    "out; count them with --human-ties count)"
                    if self.n_ties_excluded
                    else " (no labelled item it gave a verdict on)"
                )
            return (
                f"{self.judge}: nothing certified at agreement ≥ "
                f"{numbers.exact(self.target, percent=True)} (δ = {numbers.general(self.delta)})"
                f"{why}; every item goes on"
            )
        kept = ", ".join(f"{s.stratum} c ≥ {numbers.exact(s.threshold)}"
                         for s in self.strata if s.threshold is not None)  # fmt: skip
        # the judge's share of all its labelled items: the coverage `recuse gate
        # --certified` and the audit read, beside the strata's own shares in the table
        cover = numbers.share_percent(self.coverage)
        share = f"{self.n_kept:,} of its {self.n_labelled:,} labelled items, {cover}"
        return (
            f"{self.judge}: agreement with {AGREEING_WITH[self.reference]} ≥ "
            f"{numbers.exact(self.target, percent=True)} on the items it keeps ({kept}: {share})"
            + (TIES_LEFT_OUT if self.n_ties_excluded else "")
            + f" with probability ≥ {numbers.complement(self.delta, least=2)}, assuming "
            "calibration and future items are exchangeable"
            + (APPROXIMATE if self.recalibration is not None else "")
        )

    def to_dict(self) -> dict[str, Any]:
        h = self.heldout
        return {
            "judge": self.judge,
            "target": self.target,
            "delta": self.delta,
            "confidence": self.confidence,
            "confidence_definition": CONFIDENCE_WORDS[self.confidence],
            "certified": self.certified,
            "n_labelled": self.n_labelled,
            "n_ties_excluded": self.n_ties_excluded,
            "n_one_order": self.n_one_order,
            "coverage": _num(self.coverage),
            "agreement": _num(self.agreement),
            "heldout_coverage": _num(h.coverage),
            "heldout_agreement": _num(h.agreement),
            "guarantee": self.guarantee(),
            "strata": [s.to_dict() for s in self.strata],
        }


@dataclass(frozen=True)
class Options:
    """How a certification is run (see :func:`certify_judges`)."""

    target: float = 0.85
    delta: float = 0.1
    strata: bool = True
    human_ties: TiedLabels = "exclude"
    recalibrate: bool = False
    folds: int = FOLDS
    seed: int = 0
    min_labels: int = MIN_LABELS
    grid: int = GRID
    self_scope: str = "snapshot"
    #: what the labels are (the input's kind, :mod:`recuse.reference`): the words of the
    #: guarantees; no number depends on it
    reference: ReferenceKind = "human"

    def check(self) -> None:
        """Raise a :class:`~recuse.metrics.bootstrap.SettingError` for a setting out of
        its range, named by its keyword of :func:`recuse.certify` (``agreement`` for
        ``target``): a Python caller reads ``agreement must be in [0.5, 1) (e.g. 0.85),
        got 80``; ``recuse certify`` says it of the flag (``--agreement = 80: ...``) by
        :func:`~recuse.metrics.bootstrap.named_settings`, as the audit does."""
        if not is_number(self.target) or not 0.5 <= self.target < 1:
            raise SettingError("agreement", self.target, "must be in [0.5, 1)", "0.85")
        if not is_number(self.delta) or not 0 < self.delta < 0.5:
            raise SettingError("delta", self.delta, "must be in (0, 0.5)", "0.1")
        if self.human_ties not in ("exclude", "count"):
            raise SettingError("human_ties", self.human_ties, "must be exclude or count")
        if not is_integer(self.folds) or self.folds < 2:
            raise SettingError("folds", self.folds, "must be an integer of at least 2", f"{FOLDS}")
        if not is_integer(self.min_labels) or self.min_labels < 1:
            raise SettingError(
                "min_labels", self.min_labels, "must be an integer of at least 1", f"{MIN_LABELS}"
            )
        check_seed(self.seed)  # numpy's generators take integers alone
        for name in ("strata", "recalibrate"):  # a text "no" is true
            if not isinstance(getattr(self, name), bool | np.bool_):
                raise SettingError(name, getattr(self, name), "must be True or False")
        if self.reference not in REFERENCE_NAMES:
            kinds = ", ".join(REFERENCE_NAMES)
            raise ConfigError(f"reference must be one of {kinds}; got {self.reference!r}")


def is_integer(value: object) -> TypeGuard[int]:
    """An integer (Python's or numpy's), not a bool: a count of folds or labels."""
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


def is_number(value: object) -> TypeGuard[float]:
    """A real number that can be compared (not a bool, not NaN, not a string)."""
    real = isinstance(value, int | float | np.integer | np.floating)
    nan = isinstance(value, float | np.floating) and math.isnan(value)  # (an int is no NaN,
    return real and not isinstance(value, bool | np.bool_) and not nan  # and may pass any float)


@dataclass(frozen=True)
class Items:
    """One judge's items as the certification reads them (arrays aligned by item)."""

    item_id: NDArray[np.object_]
    prompt: NDArray[np.object_]
    conf: FloatArray
    verdict: NDArray[np.int8]
    human: NDArray[np.int8]  # +1 a, -1 b, 0 tie
    labelled: NDArray[np.bool_]  # usable label (ties per the option)
    stratum: NDArray[np.object_]

    @property
    def agree(self) -> FloatArray:
        return (self.verdict == self.human).astype(float)

    def take(self, mask: NDArray[np.bool_]) -> Items:
        return Items(*(getattr(self, f)[mask] for f in Items.__dataclass_fields__))


#: a design effect (:func:`design_effect`) at or above this on a certified threshold's kept
#: items is said beside the guarantee: in simulations where the guarantee failed 0.15–0.22
#: of the time at δ = 0.1 (10–20 items a prompt) it read 2.6–9.5; with no prompt effect,
#: 1.0 (95th percentile 1.4 at 10 items a prompt)
CLUSTERED = 1.5


def _grouped(groups: NDArray[np.object_]) -> tuple[NDArray[np.int_], FloatArray]:
    """Each item's group as a code 0, 1, … in the groups' sorted order (whatever the
    items' order), and each group's size."""
    codes = pd.factorize(pd.Series(groups, dtype=object).astype(str), sort=True)[0]
    return codes, np.bincount(codes).astype(float)


def design_effect(groups: NDArray[np.object_], y: FloatArray) -> float:
    """Kish's design effect of the mean of ``y`` over items clustered in ``groups``::

        deff = 1 + (Σ_g n_g² / N − 1) · ρ

    ``ρ`` the one-way ANOVA estimate of the intra-class correlation, 0 at least::

        ρ = (MSB − MSW) / (MSB + (n₀ − 1) MSW),   n₀ = (N − Σ n_g² / N) / (G − 1)

    (``MSB``, ``MSW``: the between- and within-group mean squares, ``G`` groups). The
    items count as about ``N / deff`` independent ones. 1 where no two items share a
    group, or where every item has the same ``y``.

    >>> design_effect(np.array(["p", "p", "q", "q"]), np.array([1.0, 1.0, 0.0, 0.0]))
    2.0
    >>> design_effect(np.array(["p", "p", "q", "q"]), np.array([1.0, 0.0, 1.0, 0.0]))
    1.0
    """
    g, n = _grouped(groups)
    y = np.asarray(y, float)
    n_items, k = len(y), len(n)
    if k < 2 or n_items <= k:
        return 1.0
    means = np.bincount(g, weights=y, minlength=k) / n
    msb = float((n * (means - y.mean()) ** 2).sum()) / (k - 1)
    msw = float(((y - means[g]) ** 2).sum()) / (n_items - k)
    n0 = (n_items - float((n**2).sum()) / n_items) / (k - 1)
    spread = msb + (n0 - 1) * msw
    rho = max((msb - msw) / spread, 0.0) if spread > 0 else 0.0
    return 1.0 + (float((n**2).sum()) / n_items - 1.0) * rho


#: the permutation p-value (:func:`prompt_effect_p`) under which a design effect is said:
#: with agreement independent of the prompt, the design effect's estimate reached 1.5 in
#: 11–45% of tables (a few large prompts, or one among single items), and the ANOVA F
#: test's p under 0.01 in 6% of those with one large prompt among single items
PROMPT_EFFECT_P = 0.01
#: the permutations of :func:`prompt_effect_p` (the least p it gives is 1 / (1 + this))
PERMUTATIONS = 999


def prompt_effect_p(groups: NDArray[np.object_], y: FloatArray) -> float:
    """The permutation p-value of the hypothesis that ``y`` does not depend on its group:
    the share of :data:`PERMUTATIONS` shuffles of ``y`` over the items (the groups kept,
    the same shuffles each call) whose between-group sum of squares
    ``Σ_g n_g (ȳ_g − ȳ)²`` is at least the observed one, counting the observed
    (``(1 + hits) / (1 + B)``). With the groups fixed
    the total sum of squares is too, so the statistic orders the shuffles as the design
    effect and the ANOVA F do; unlike the F test's, its level holds for 0/1 agreement
    and for one large group among single items. 1 where fewer than two groups, or no
    item shares one.

    >>> g = np.array(["p"] * 6 + ["q"] * 6)
    >>> prompt_effect_p(g, np.array([1.0] * 6 + [0.0] * 6)) < 0.01
    True
    >>> prompt_effect_p(g, np.array([1.0, 0.0] * 6))
    1.0
    """
    codes, n = _grouped(groups)
    y = np.asarray(y, float)
    if len(n) < 2 or len(y) <= len(n):
        return 1.0
    # the items in one order whatever the input's (by group, then value), so the same
    # table gives the same p in any row order; a shuffle of the groups over them is a
    # shuffle of y, one at a time (a 999 × n array held 1.9 GB at 100,000 items)
    order = np.lexsort((y, codes))
    codes, y = codes[order], y[order]
    observed = float((np.bincount(codes, weights=y, minlength=len(n)) ** 2 / n).sum())
    rng = np.random.default_rng(0)  # the same shuffles each time: one answer per table
    hits = 0
    for _ in range(PERMUTATIONS):
        sums = np.bincount(rng.permutation(codes), weights=y, minlength=len(n))
        hits += float((sums**2 / n).sum()) >= observed - 1e-9 * max(abs(observed), 1.0)
    return (1 + hits) / (1 + PERMUTATIONS)


def clustering_note(judge: str, items: Items, thresholds: Mapping[str, float | None]) -> str:
    """What a guarantee counting its kept items one by one needs said where they agree or
    err together by prompt (:func:`design_effect` of their agreement at least
    :data:`CLUSTERED`, the prompts' differences past chance: :func:`prompt_effect_p` under
    :data:`PROMPT_EFFECT_P`): the binomial test then counts more independent items than there
    are, and the guarantee holds less often than ``1 − δ``. ``thresholds``: the certified
    threshold per stratum (None: not certified); "" where nothing is kept or the effect
    is smaller."""
    kept = kept_mask(items, thresholds) & items.labelled
    if kept.sum() < 2:
        return ""
    prompt, agree = items.prompt[kept], items.agree[kept]
    deff = design_effect(prompt, agree)
    if deff < CLUSTERED or prompt_effect_p(prompt, agree) >= PROMPT_EFFECT_P:
        return ""
    n, prompts = int(kept.sum()), len(set(prompt))
    return (
        f"{judge}: its {n:,} kept items lie on {prompts:,} prompts and agree or err together "
        f"by prompt (design effect {deff:.1f}: about {n / deff:,.0f} independent items); the "
        "test counts each item, so the guarantee holds less often than stated (a simulation "
        "with 10 items a prompt: 0.81 of the time for 0.90) — certify on one item a prompt, "
        "or on more prompts"
    )


def judge_rows(pairs: pd.DataFrame, judge: str) -> pd.DataFrame:
    """The rows of ``judge`` that have a verdict; an item twice is an :class:`InputError`."""
    rows = pairs[(pairs["judge"] == judge) & pairs["p_a"].notna()]
    dup = rows["item_id"].duplicated()
    if dup.any():
        raise InputError(
            f"judge {judge!r} judged item {rows['item_id'][dup].iloc[0]!r} twice",
            column="item_id",
            fix="keep one row per item and judge",
        )
    return rows.reset_index(drop=True)


def as_texts(values: pd.Series) -> NDArray[np.object_]:
    """``values`` as Python strings in an object array: pandas' string columns are
    iterated a cell at a time (a set of 200,000 item ids took 0.3 s; the array, 0.02)."""
    return np.asarray(values.astype(str).to_numpy(object), dtype=object)


def among(values: pd.Series, ids: set[str]) -> NDArray[np.bool_]:
    """Which of ``values`` (read as text) are in ``ids``: a set lookup per cell
    (``Series.isin`` of a set built a list of it and iterated the string column)."""
    texts = as_texts(values)
    return np.fromiter((v in ids for v in texts), dtype=bool, count=len(texts))


def map_points(x: FloatArray, points: tuple[tuple[float, ...], tuple[float, ...]]) -> FloatArray:
    return np.asarray(np.interp(x, np.asarray(points[0]), np.asarray(points[1])), dtype=float)


def items_of(
    rows: pd.DataFrame,
    roster: Roster | None,
    o: Options,
    *,
    p_a: FloatArray | None = None,
    kind: str | None = None,
) -> Items:
    """One judge's rows (:func:`judge_rows`) as :class:`Items`; ``p_a`` replaces the
    table's (recalibrated values). ``kind``: how its confidence is read
    (:data:`CONFIDENCE_WORDS`; default :func:`confidence_kind` of ``rows``, ``certify
    apply`` gives the certified one): for ``"order consistency"`` an item without a
    verdict in both orders has confidence 0.5 (:func:`one_order`), as a flip has."""
    p = rows["p_a"].to_numpy(float) if p_a is None else p_a
    if kind is None:
        kind = confidence_kind(rows) if len(rows) else "single verdict"
    conf = confidence_of(p)
    if kind == "order consistency":
        conf = np.where(one_order(rows) & np.isfinite(conf), 0.5, conf)
    h = rows["human"].to_numpy(float) if "human" in rows.columns else np.full(len(rows), np.nan)
    human = side_labels(np.nan_to_num(h, nan=0.5))
    labelled = np.isfinite(h) & ((human != 0) | (o.human_ties == "count"))
    selves = roster.self_map(o.self_scope) if roster is not None else None  # type: ignore[arg-type]
    return Items(
        item_id=as_texts(rows["item_id"]),
        prompt=as_texts(rows["prompt_id"]),
        conf=conf,
        verdict=side_labels(p),
        human=human,
        labelled=np.asarray(labelled, dtype=bool),
        stratum=strata_of(rows, roster if o.strata else None, selves=selves),
    )


def certify_items(
    items: Items, o: Options, delta: float, *, explain: bool = True
) -> list[StratumCertificate]:
    """Certify each stratum of ``items`` (labelled only) at a share of ``delta``: the
    union bound over strata, each stratum's fixed-sequence test (module docstring).
    ``explain=False`` skips the search for the best target a failed stratum could
    certify (``best_target`` None; a curve over many targets needs no such search)."""
    labelled = items.labelled
    stratum, conf_all, agree_all = (
        items.stratum[labelled],
        items.conf[labelled],
        items.agree[labelled],
    )
    where = {s: stratum == s for s in (*STRATA, "all")}  # (the other fields are not read)
    names = [s for s in (*STRATA, "all") if where[s].any()]
    sizes = {s: int(where[s].sum()) for s in names}
    # the rule (label-free): a stratum is tested when it has at least this many labelled
    # items, full agreement passing at δ shared by every stratum with labels (δ / m)
    m = max(len(names), 1)
    need = max(o.min_labels, n_min(o.target, delta / m))
    testable = [s for s in names if sizes[s] >= need]
    share = delta / max(len(testable), 1)
    level = _level(share, delta, len(testable), o)
    # a stratum left out is told that rule, not the need at the share of those tested:
    # 30 items read "too few: 30 (needs 29 ... at δ' = 0.05)", left out at δ/3 (33)
    left_level = _level(delta / m, delta, m, o)
    symbol = "δ'" if m > 1 else "δ"
    out = []
    for s in names:
        conf, agree = conf_all[where[s]], agree_all[where[s]]
        if s not in testable:
            # under min_labels no target is tested; else a lower target needs fewer items
            under = sizes[s] < o.min_labels
            best = None if under or not explain else best_target(
                conf, agree, delta=delta / m, start=o.min_labels, grid=o.grid)  # fmt: skip
            could = _could(best) if not under else (
                f"; no target can be certified from fewer than {o.min_labels} labelled items "
                "(--min-labels)")  # fmt: skip
            out.append(StratumCertificate(
                s, o.target, share, sizes[s], None, 0, 0, math.nan, math.nan,
                f"too few labelled items to certify: {sizes[s]} (needs {need}: at least "
                f"{o.min_labels}, and ⌈log {symbol}/log t⌉ = {n_min(o.target, delta / m)} for "
                f"full agreement to pass, at {left_level}); these items always go on{could}",
                best,
            ))  # fmt: skip
            continue
        w = fixed_sequence(conf, agree, target=o.target, delta=share, start=o.min_labels,
                           grid=o.grid)  # fmt: skip
        best = None
        if w.threshold is None and explain:
            best = best_target(conf, agree, delta=share, start=o.min_labels, grid=o.grid)
        out.append(StratumCertificate(
            s, o.target, share, sizes[s], w.threshold, w.n_kept, w.n_agree, w.lower_bound,
            w.p_value, "" if w.threshold is not None else _why_not(w, o, level, best), best,
        ))  # fmt: skip
    return out


def _could(best: float | None) -> str:
    if best is None:
        return "; these labels certify no target from 50%"
    return f"; these labels could certify agreement ≥ {numbers.exact(best, percent=True)} at most"


def _level(share: float, delta: float, m: int, o: Options) -> str:
    """The level a stratum is tested at, in words: ``δ = 0.1``, or its share,
    ``δ' = 0.0333 (δ = 0.1 shared by 3 strata)`` (a cascade stage's δ is named so)."""
    whole = f"δ = {numbers.general(delta)}" if delta == o.delta else f"its stage's δ = {delta:.3g}"
    return whole if m <= 1 else f"δ' = {share:.3g} ({whole} shared by {m} strata)"


def _why_not(w: Walk, o: Options, level: str, best: float | None) -> str:
    """Why a stratum tested is not certified; ``level``: its :func:`_level`."""
    target = numbers.exact(o.target, percent=True)
    could = _could(best)[2:]
    if w.first is None:
        return f"calibration set too small for agreement ≥ {target} at {level}; {could}"
    lam, n, k = w.first
    bound = (
        f"lower bound {numbers.lower_bound(w.lower_bound, percent=True)} at {level} < {target}; "
        + could
    )
    if w.top is not None:  # its most confident items were too few to be tested alone
        top_lam, top_n, top_k = w.top
        why = (
            "--min-labels"
            if w.start == o.min_labels
            else "the fewest whose full agreement could pass"
        )
        among = (
            f" of those tested (one each {w.spacing:,} items down the confidence order, "
            f"at most {o.grid + 1}, set before any label is read)"
            if w.spacing > 1
            else ""
        )
        return (
            f"never confident enough: its first threshold tested, c ≥ {numbers.exact(lam)}, "
            f"the highest keeping at least {w.start} items ({why}){among}, keeps {n} "
            f"items, which agree {k}/{n} (its {top_n} most confident, c ≥ "
            f"{numbers.exact(top_lam)}, {top_k} of them agreeing, are too few to test "
            f"alone), {bound}"
        )
    return (
        f"never confident enough: its most confident {n} items (c ≥ {numbers.exact(lam)}) agree "
        f"{k}/{n}, {bound}"
    )


def _prompt_folds(lab: Items, o: Options) -> NDArray[np.int_] | None:
    """Each item's fold (0 to ``o.folds - 1``): its prompt's, prompts dealt to the folds
    in a seeded random order; None where the items share one prompt (no fold could be
    certified without its own items)."""
    # each item's prompt as its place among the sorted prompts (hashed, not an object sort)
    codes, prompts = pd.factorize(lab.prompt, sort=True)
    if len(prompts) < 2:
        return None
    order = np.random.default_rng(o.seed).permutation(len(prompts))
    # more folds than prompts: a fold per prompt (a count past int64 is no array's divisor)
    folds = min(o.folds, len(prompts))
    fold_of = np.empty(len(prompts), dtype=int)  # the prompt dealt k-th goes to fold k % folds
    fold_of[order] = np.arange(len(prompts)) % folds
    return np.asarray(fold_of[codes], dtype=int)


def _heldout(
    items: Items, o: Options, delta: float, who: str, *, explain: bool = True
) -> dict[str, HeldOut]:
    """Each labelled item decided with thresholds certified on the other folds."""
    lab = items.take(items.labelled)
    fold = _prompt_folds(lab, o)
    if fold is None:
        return {str(s): HeldOut(int((lab.stratum == s).sum()), 0, 0, checked=False)
                for s in np.unique(lab.stratum)}  # fmt: skip
    out: dict[str, HeldOut] = {}
    for k in np.unique(fold):  # the folds that hold items (not range(o.folds): 10**9)
        test = fold == k
        certs = certify_items(lab.take(~test), o, delta, explain=explain)
        thresholds = {c.stratum: c.threshold for c in certs}
        part = lab.take(test)
        for s in np.unique(part.stratum):
            m = part.stratum == s
            lam = thresholds.get(str(s))
            kept = m & (part.conf >= lam) if lam is not None else np.zeros_like(m)
            got = HeldOut(int(m.sum()), int(kept.sum()), int(part.agree[kept].sum()))
            out[str(s)] = out.get(str(s), NO_HELD_OUT) + got
    return out


def _recalibrated(rows: pd.DataFrame, o: Options, who: str) -> tuple[FloatArray, Any]:
    """Cross-fitted isotonic p_a, and the map fitted on every labelled row (for apply)."""
    from recuse.metrics.calibration import isotonic_fit, outcomes

    cross = recalibrate(rows, method="isotonic", folds=o.folds, seed=o.seed)
    y = outcomes(rows)
    use = np.isfinite(y) & rows["p_a"].notna().to_numpy()
    if use.sum() < 2 or np.unique(y[use]).size < 2:
        raise EstimationError(f"{who}: recalibration needs labelled items of both outcomes")
    ux, fitted = isotonic_fit(rows["p_a"].to_numpy(float)[use], y[use])
    points = (tuple(float(x) for x in ux), tuple(float(v) for v in fitted))
    return cross["p_a_recalibrated"].to_numpy(float), points


def certify_judge(
    rows: pd.DataFrame,
    judge: str,
    roster: Roster | None,
    o: Options,
    *,
    delta: float | None = None,
    kind: str | None = None,
) -> tuple[JudgeCertificate, Items]:
    """Certify one judge on its rows (one per item, with a verdict) at ``delta``
    (default ``o.delta``); also returns its items for a cascade. ``kind``: how its
    confidence is read (:func:`confidence_kind`), when ``rows`` are some of its verdicts
    (a cascade stage's: none may reach it); default from ``rows``."""
    d = o.delta if delta is None else delta
    if kind is None:
        kind = confidence_kind(rows) if len(rows) else "single verdict"
    p_a, points = None, None
    if o.recalibrate and len(rows):
        if kind != "probability":
            raise ConfigError(
                f"--recalibrate: judge {judge!r} gives picks, not probabilities; its "
                "confidence is order consistency, which recalibration cannot improve"
            )
        p_a, points = _recalibrated(rows, o, f"judge {judge!r}")
        kind = "recalibrated probability"
    items = items_of(rows, roster, o, p_a=p_a, kind=kind)
    has_h = rows["human"].notna().to_numpy() if "human" in rows.columns else items.labelled
    ties = int((has_h & ~items.labelled).sum())
    certs = certify_items(items, o, d)
    held = _heldout(items, o, d, judge)
    strata = tuple(
        StratumCertificate(**{**c.__dict__, "heldout": held.get(c.stratum, NO_HELD_OUT)})
        for c in certs
    )
    ones = int(one_order(rows).sum()) if kind == "order consistency" else 0
    models = models_of(rows, judge, roster, o)
    orders = orders_of(rows) if kind.endswith("probability") else None
    cert = JudgeCertificate(judge, o.target, d, kind, strata, ties, points, o.reference, ones,
                            models, orders)  # fmt: skip
    return cert, items


def orders_of(rows: pd.DataFrame) -> str | None:
    """``both`` where every verdict of ``rows`` is the mean of two orders, ``one`` where
    none is, ``mixed`` otherwise (None: no rows). A probability averaged over two orders
    lies nearer 0.5 than one order's, which keeps the judge's position preference: a
    threshold certified on the first reads the second as more confident than it is."""
    if not len(rows):
        return None
    both = ~one_order(rows)
    return "both" if both.all() else ("one" if not both.any() else "mixed")


#: the targets of a coverage curve: agreement 0.50 to 0.99 in steps of 0.01
CURVE_TARGETS: tuple[float, ...] = tuple(round(0.5 + 0.01 * k, 2) for k in range(50))
#: the targets a curve also checks held out (every 0.05: the cross-fitting costs 5 fits)
CURVE_HELDOUT: tuple[float, ...] = CURVE_TARGETS[::5]
POOLED = "pooled"


def coverage_curve(
    items: Items,
    o: Options,
    *,
    targets: Sequence[float] = CURVE_TARGETS,
    heldout: Sequence[float] = CURVE_HELDOUT,
) -> pd.DataFrame:
    """Coverage against guaranteed agreement: for each target ``t``, the judge's items
    certified at ``t`` (at ``o.delta``, strata as ``o.strata``; :func:`certify_items`)
    and the same cross-fitted over prompt folds.

    One row per target and stratum, and a ``pooled`` row per target over the strata:
    ``coverage = Σ n_kept / Σ n_labelled`` — with probability ``≥ 1 − δ`` every certified
    stratum agrees with humans at ``≥ t`` on future items, so all kept items do. Each
    target is its own certification (its own statement at ``1 − δ``): read one target,
    not the best of several. Columns: ``target, stratum, n_labelled, n_kept, n_agree,
    coverage, agreement`` (observed among kept calibration items), ``threshold``,
    ``lower_bound`` (Clopper–Pearson at the stratum's share of δ; None pooled),
    ``certified``, ``heldout_kept, heldout_coverage, heldout_agreement`` (at the
    targets in ``heldout`` only; NaN at the others).

    >>> from recuse.simulate.selective import simulate_selective
    >>> sim = simulate_selective(300, seed=0)
    >>> items = items_of(sim.pairs, None, Options(delta=0.1))
    >>> c = coverage_curve(items, Options(delta=0.1), targets=(0.7, 0.99))
    >>> c[c.stratum == "pooled"][["target", "certified"]].values.tolist()
    [[0.7, True], [0.99, False]]
    """
    rows: list[dict[str, Any]] = []
    for t in targets:
        ot = replace(o, target=float(t))
        certs = certify_items(items, ot, o.delta, explain=False)
        checked = any(abs(t - h) < 1e-9 for h in heldout)
        held = _heldout(items, ot, o.delta, "", explain=False) if checked else {}
        pooled = [0, 0, 0]
        pooled_held: HeldOut | None = NO_HELD_OUT if checked else None
        for c in certs:
            h = held.get(c.stratum, NO_HELD_OUT) if checked else None
            rows.append(_curve_row(float(t), c.stratum, c.n_labelled, c.n_kept, c.n_agree,
                                   c.threshold, c.lower_bound, h))  # fmt: skip
            pooled = [pooled[0] + c.n_labelled, pooled[1] + c.n_kept, pooled[2] + c.n_agree]
            pooled_held = pooled_held + h if pooled_held is not None and h is not None else None
        n, kept, agree = pooled
        rows.append(_curve_row(float(t), POOLED, n, kept, agree, None, math.nan, pooled_held))
    return pd.DataFrame(rows).astype({"threshold": float})  # None (not certified) as NaN


def _curve_row(
    target: float, stratum: str, n: int, kept: int, agree: int, threshold: float | None,
    lower_bound: float, held: HeldOut | None,
) -> dict[str, Any]:  # fmt: skip
    return {
        "target": target,
        "stratum": stratum,
        "n_labelled": n,
        "n_kept": kept,
        "n_agree": agree,
        "coverage": kept / n if n else math.nan,
        "agreement": agree / kept if kept else math.nan,
        "threshold": threshold,
        "lower_bound": lower_bound,
        "certified": kept > 0,
        "heldout_kept": held.kept if held is not None and held.checked else None,
        "heldout_coverage": held.coverage if held is not None else math.nan,
        "heldout_agreement": held.agreement if held is not None else math.nan,
    }


def kept_mask(items: Items, thresholds: Mapping[str, float | None]) -> NDArray[np.bool_]:
    """Items a certificate's ``thresholds`` (per stratum; None: not certified) keep:
    certified stratum and confidence at its threshold."""
    keep = np.zeros(len(items.conf), dtype=bool)
    for s, lam in thresholds.items():
        if lam is not None:
            keep |= (items.stratum == s) & (items.conf >= lam)
    return keep


# --- cascades ---


@dataclass(frozen=True)
class Stage:
    """One judge of a cascade: the share of all items it decides (on the labelled
    calibration items, and held out), the items reaching it, its cost."""

    certificate: JudgeCertificate
    reached: float  # share of the items that reach this stage (judged or passed through)
    share: float  # share of all items this judge decides (calibration)
    heldout_share: float
    usd_per_1000_judgments: float | None
    #: judgments per item this judge spends (orders judged, mean over its verdicts);
    #: None when a verdict is a p_a given without its orders (how many is unknown)
    orders: float | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "judge": self.certificate.judge,
            "reached": self.reached,
            "share": self.share,
            "heldout_share": _num(self.heldout_share),
            "usd_per_1000_judgments": self.usd_per_1000_judgments,
            "judgments_per_item": self.orders,
            "certificate": self.certificate.to_dict(),
        }


@dataclass(frozen=True)
class Cascade:
    """A cascade's result: its stages, the share left to a person, the agreement of the
    machine verdicts (observed and held out), its cost and its guarantee."""

    stages: tuple[Stage, ...]
    target: float
    delta: float
    n_items: int
    person_share: float
    agreement: float
    heldout: HeldOut
    heldout_person_share: float
    reference: ReferenceKind = "human"  # what the labels are: the guarantee names them
    n_ties_excluded: int = 0  # labelled items left out because the label is a tie

    @property
    def usd_per_1000_items(self) -> float | None:
        """Σ_k (share of items reaching judge k) × judgments per item × USD per judgment
        × 1,000; None when a judge has no price or its judgments per item are unknown
        (:attr:`cost_unknown` says which)."""
        if self.cost_unknown:
            return None
        return sum(s.reached * (s.orders or 0.0) * (s.usd_per_1000_judgments or 0.0)
                   for s in self.stages)  # fmt: skip

    @property
    def cost_unknown(self) -> str:
        """Why the cost per 1,000 items is unknown, in words ("" when it is known)."""
        unpriced = [s.certificate.judge for s in self.stages if s.usd_per_1000_judgments is None]
        if unpriced:
            return (f"no price for {', '.join(unpriced)} (USD per 1,000 judgments: --cost "
                    "JUDGE=USD, --store/--prices, or costs=)")  # fmt: skip
        uncounted = [s.certificate.judge for s in self.stages if s.orders is None]
        if uncounted:
            return (f"the verdicts of {', '.join(uncounted)} are p_a without p_a_first / "
                    "p_a_second, so how many judgments (orders) each item cost is not "
                    "known: give the orders' verdicts")  # fmt: skip
        return ""

    def guarantee(self) -> str:
        m = len(self.stages)
        return (
            f"agreement with {AGREEING_WITH[self.reference]} ≥ "
            f"{numbers.exact(self.target, percent=True)} on all machine verdicts with probability "
            f"≥ {numbers.complement(self.delta, least=2)}: each of the {m} stages is certified at "
            f"δ/{m} = {self.delta / m:.3g} (its strata split that again), and by the union "
            "bound all hold together; assumes calibration and future items are exchangeable"
            + (TIES_LEFT_OUT if self.n_ties_excluded else "")
            + (APPROXIMATE if any(s.certificate.recalibration for s in self.stages) else "")
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "judges": [s.certificate.judge for s in self.stages],
            "target": self.target,
            "delta": self.delta,
            "n_items": self.n_items,
            "n_ties_excluded": self.n_ties_excluded,
            "person_share": self.person_share,
            "heldout_person_share": _num(self.heldout_person_share),
            "agreement": _num(self.agreement),
            "heldout_agreement": _num(self.heldout.agreement),
            "usd_per_1000_items": self.usd_per_1000_items,
            "cost_unknown": self.cost_unknown or None,
            "guarantee": self.guarantee(),
            "stages": [s.to_dict() for s in self.stages],
        }


def _orders(rows: pd.DataFrame) -> float | None:
    """Judgments per item among ``rows`` (one per order judged); None when a verdict is
    a ``p_a`` given without its orders (it stood for 0 judgments: a judge's whole cost
    was $0)."""
    n = rows["p_a_first"].notna().astype(int) + rows["p_a_second"].notna().astype(int)
    if bool((n == 0).any()):
        return None
    return float(n.mean()) if len(rows) else 0.0


def run_cascade(
    pairs: pd.DataFrame,
    judges: Sequence[str],
    roster: Roster | None,
    o: Options,
    *,
    costs: Mapping[str, float] | None = None,
) -> Cascade:
    """Certify ``judges`` in order as a cascade (module docstring), each at ``δ / m``."""
    if "human" not in pairs.columns:
        raise InputError("the table has no human labels to certify with", column="human")
    labelled_ids = _require_labelled(pairs, o)
    remaining = set(labelled_ids)
    held_left = set(labelled_ids)  # items no earlier stage decided, held out
    d = o.delta / len(judges)
    stages, agree, decided = [], 0, 0
    held = NO_HELD_OUT
    for judge in judges:
        rows = judge_rows(pairs, judge)
        reached = len(remaining) / len(labelled_ids)
        mine = rows[among(rows["item_id"], remaining)].reset_index(drop=True)
        # its kind is that of all its verdicts: no item may reach it (read as "single
        # verdict", apply refused its probabilities on the very table certified)
        kind = confidence_kind(rows) if len(rows) else None
        cert, items = certify_judge(mine, judge, roster, o, delta=d, kind=kind)
        # its strata as drawn for all its verdicts: apply may pass it any of them
        cert = replace(cert, models=models_of(rows, judge, roster, o))
        keep = kept_mask(items, cert.thresholds) & items.labelled
        agree += int(items.agree[keep].sum())
        decided += int(keep.sum())
        remaining -= set(items.item_id[keep])
        h_rows = rows[among(rows["item_id"], held_left)].reset_index(drop=True)
        h = _stage_heldout(h_rows, judge, roster, o, d, kind=kind)
        held_left -= h[0]
        held = held + h[1]
        cost = None if costs is None else costs.get(judge)
        h_share = h[1].kept / len(labelled_ids) if h[1].checked else math.nan
        stages.append(Stage(cert, reached, int(keep.sum()) / len(labelled_ids), h_share,
                            cost, _orders(mine)))  # fmt: skip
    n = len(labelled_ids)
    return Cascade(
        tuple(stages), o.target, o.delta, n, len(remaining) / n,
        agree / decided if decided else math.nan,
        HeldOut(n, held.kept, held.agree, held.checked),
        len(held_left) / n if held.checked else math.nan, o.reference,
        len(_labelled_items(pairs, replace(o, human_ties="count"))) - n,
    )  # fmt: skip


def _stage_heldout(
    rows: pd.DataFrame,
    judge: str,
    roster: Roster | None,
    o: Options,
    delta: float,
    *,
    kind: str | None = None,
) -> tuple[set[str], HeldOut]:
    """The held-out items a stage decides (cross-fitted) among those reaching it, their
    confidence read as the stage's certificate reads it: ``kind``, that of all the
    judge's verdicts (default: of ``rows``). Read from the rows reaching the stage, a
    stage reached only by one-order picks read them at 1 ("single verdict") where its
    certificate read them at 0.5 (order consistency), and its held-out figures kept
    items its certificate could not."""
    if not len(rows):
        return set(), NO_HELD_OUT
    if kind is None:
        kind = confidence_kind(rows)
    if o.recalibrate and kind == "probability":
        recalibrated = _recalibrated(rows, o, judge)[0]
        items = items_of(rows, roster, o, p_a=recalibrated, kind="recalibrated probability")
    else:
        items = items_of(rows, roster, o, kind=kind)
    lab = items.take(items.labelled)
    fold = _prompt_folds(lab, o)
    if fold is None:  # no held-out check (HeldOut.checked)
        return set(), HeldOut(0, 0, 0, checked=False)
    taken: set[str] = set()
    kept = agree = 0
    for k in np.unique(fold):  # the folds that hold items (not range(o.folds): 10**9)
        test = fold == k
        certs = certify_items(lab.take(~test), o, delta)
        cert = JudgeCertificate(judge, o.target, delta, "", tuple(certs), 0)
        part = lab.take(test)
        keep = kept_mask(part, cert.thresholds)
        taken |= set(part.item_id[keep])
        kept += int(keep.sum())
        agree += int(part.agree[keep].sum())
    return taken, HeldOut(0, kept, agree)


def _require_labelled(pairs: pd.DataFrame, o: Options) -> list[str]:
    """:func:`_labelled_items`, or an :class:`InputError` saying why there are none (all
    labels tied and left out, or none at all)."""
    labelled_ids = _labelled_items(pairs, o)
    if not labelled_ids:
        tied = len(_labelled_items(pairs, replace(o, human_ties="count")))
        if tied:
            raise InputError(
                f"no labelled item but ties: all {tied} labels are ties, and tied labels are "
                "left out", column="human",
                fix="count them (--human-ties count, human_ties='count': a tie then agrees "
                "only with a tie verdict), or give labels that pick a side",
            )  # fmt: skip
        raise InputError(
            "no labelled item: certification needs human labels", column="human",
            fix="give a table with a human column (a/b/tie or a probability)",
        )  # fmt: skip
    return labelled_ids


def _labelled_items(pairs: pd.DataFrame, o: Options) -> list[str]:
    """Item ids with a usable human label (ties per ``o.human_ties``)."""
    h = pd.to_numeric(pairs["human"], errors="coerce")
    ok = h.notna()
    if o.human_ties == "exclude":
        ok &= (h - 0.5).abs() > TIE_TOL
    return sorted(set(as_texts(pairs.loc[ok, "item_id"])))


# --- the whole result ---


def thresholds_checksum(spec: Mapping[str, Any]) -> str:
    """The SHA-256 of a thresholds file's values (every key but ``sha256``), as JSON with
    sorted keys and no spaces: the same for the file as written and as read back (JSON
    writes each float so that it reads back the same)."""
    import hashlib
    import json

    values = {k: v for k, v in spec.items() if k != "sha256"}
    text = json.dumps(values, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Certification:
    """What :func:`recuse.certify` returns: each judge's certificate (each at the full
    δ: one statement per judge) and, when asked, the cascade."""

    target: float
    delta: float
    judges: tuple[JudgeCertificate, ...]
    cascade: Cascade | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)
    #: what the input says of itself that a reader needs (a file mixing kinds of label)
    notes: tuple[str, ...] = ()

    @property
    def reference(self) -> ReferenceKind:
        """What the labels are (:mod:`recuse.reference`), as the options said."""
        kind: ReferenceKind = self.settings.get("reference", "human")
        return kind

    @property
    def table(self) -> pd.DataFrame:
        """One row per judge and stratum: threshold, coverage, observed agreement, the
        Clopper–Pearson bound, held-out coverage and agreement."""
        rows = [
            {"judge": j.judge, "confidence": j.confidence, **s.to_dict()}
            for j in self.judges
            for s in j.strata
        ]
        return pd.DataFrame(rows)

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "delta": self.delta,
            "settings": dict(self.settings),
            "reference": REFERENCE_NAMES[self.reference],
            "notes": list(self.notes),
            "definitions": dict(FIELDS),
            "judges": [j.to_dict() for j in self.judges],
            "cascade": None if self.cascade is None else self.cascade.to_dict(),
        }

    def thresholds(self) -> dict[str, Any]:
        """The certified thresholds as ``recuse certify apply`` reads them, with the
        ``sha256`` of their values (:func:`thresholds_checksum`): a value edited by hand
        (a target of 0.99 where 0.85 was certified) is refused, never printed as a
        guarantee the certification did not give."""
        spec = self._thresholds()
        return {**spec, "sha256": thresholds_checksum(spec)}

    def _thresholds(self) -> dict[str, Any]:
        stages = (
            [(s.certificate, s.share) for s in self.cascade.stages]
            if self.cascade is not None
            else [(j, j.coverage) for j in self.judges]
        )
        return {
            "recuse_thresholds": THRESHOLDS_VERSION,
            "target": self.target,
            "delta": self.delta,
            "cascade": self.cascade is not None,
            "strata": bool(self.settings.get("strata", True)),
            "self_scope": str(self.settings.get("self_scope", "snapshot")),
            "reference": self.reference,
            "human_ties": str(self.settings.get("human_ties", "exclude")),
            **({"reading": dict(self.settings["reading"])} if "reading" in self.settings else {}),
            "judges": [
                {
                    "judge": c.judge,
                    "confidence": c.confidence,
                    "thresholds": c.thresholds,
                    "recalibration": None
                    if c.recalibration is None
                    else {"x": list(c.recalibration[0]), "y": list(c.recalibration[1])},
                    **({} if c.models is None else {"models": dict(c.models)}),
                    **({} if c.orders is None else {"orders": c.orders}),
                    # what `certify apply` prints its kept shares beside (thresholds.Kept)
                    "coverage": {s.stratum: _num(s.coverage) for s in c.strata},
                    "share": _num(share),
                }
                for c, share in stages
            ],
        }


def certify_judges(
    pairs: pd.DataFrame,
    roster: Roster | None,
    o: Options,
    *,
    judges: Sequence[str] | None = None,
    cascade: Sequence[str] | None = None,
    costs: Mapping[str, float] | None = None,
) -> Certification:
    """Certify every judge of ``pairs`` (or ``judges``) and, given ``cascade``, the
    cascade of those judges in that order (module docstring for the formulas)."""
    o.check()
    if "human" not in pairs.columns or not pairs["human"].notna().any():
        raise InputError(
            "the table has no human labels: certification needs a labelled calibration set",
            column="human",
            fix="give a table with a human column (a/b/tie, or P(a better))",
        )
    present = sorted(set(as_texts(pairs["judge"].dropna()))) if "judge" in pairs else []
    if not present:
        raise InputError(
            "the table has no judge verdicts to certify", column="judge",
            fix="give a table with judge and p_a (or p_a_first/p_a_second) columns",
        )  # fmt: skip
    chosen = list(judges) if judges else present
    for j in [*chosen, *(cascade or [])]:
        if j not in present:
            raise ConfigError(f"judge {j!r} is not in the table; its judges: {', '.join(present)}")
    if cascade is not None and len(set(cascade)) != len(cascade):
        raise ConfigError(f"the cascade names a judge twice: {','.join(cascade)}")
    _require_labelled(pairs, o)
    done = [certify_judge(judge_rows(pairs, j), j, roster, o) for j in chosen]
    certs = tuple(cert for cert, _ in done)
    notes = [clustering_note(cert.judge, items, cert.thresholds) for cert, items in done]
    run = run_cascade(pairs, cascade, roster, o, costs=costs) if cascade else None
    settings = {k: v for k, v in asdict(o).items()}
    return Certification(o.target, o.delta, certs, run, settings, tuple(n for n in notes if n))
