"""The competence-calibrated self- and family preference of a judge.

A judge that is simply good picks the better answer, and its own model's answers may
be the better ones; the Equal-Opportunity gap (:mod:`recuse.metrics.self_preference`)
controls for that only through the human label of each pair. This estimate compares
the judge's rate of picking its own answer with the rate its *competence* predicts::

    logit P(judge picks a | order) = κ (s_a − s_b) + β·first + τ·own [+ φ·family]
    Δ = mean(picks own) − mean(π),   π = P(picks own | κ, β, τ = 0)

``s``: Bradley–Terry strengths of the models from the human labels
(:func:`label_strengths`). The model (:class:`CompetenceModel`) depends on the data
only through sums per covariate pattern and per labelled model pair, so the cluster
bootstrap resamples those sums and refits both likelihoods exactly in each resample.
Here too: its warnings (:func:`extrapolation_warning`, :func:`strata_warning`, the
ceiling, :data:`CEILING`), the strata of its discrimination (:func:`stratum_column`),
the ladder's calibrated rungs (:data:`CALIBRATED_RUNGS`) and the calibrated family
preference (:data:`FAMILY_CALIBRATED`).
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy import sparse, special

from recuse.choices import CALIBRATED_RUNGS as CALIBRATED_RUNGS
from recuse.errors import ConfigError, EstimationError, InputError
from recuse.metrics.bootstrap import (
    GroupedStatistic,
    Interval,
    Resampling,
    Sums,
    check_min_n,
    ratio,
)
from recuse.metrics.estimate import MetricSpec, clusters_of, items_of, run_one
from recuse.metrics.result import REFIT_WORDS as REFIT_WORDS
from recuse.metrics.result import MetricResult, Refit
from recuse.metrics.self_preference import (
    FAMILY_PAIRS,
    OWN_PAIRS,
    Families,
    Relation,
    favored_side,
    single_judge,
)
from recuse.metrics.verdicts import TIE_TOL, judge_codes, orient
from recuse.numbers import decimal_beside, share_percent

__all__ = [
    "CALIBRATED",
    "CALIBRATED_INTERVAL",
    "CALIBRATED_RUNGS",
    "CEILING",
    "EXTRAPOLATION_FACTOR",
    "FAMILY_CALIBRATED",
    "LAPSE_LR",
    "LAPSE_MIN",
    "MAX_PATTERNS",
    "MIN_STRATUM_PAIRS",
    "REFIT_WORDS",
    "STRATA_DISTANCE",
    "CompetenceModel",
    "LabelTerm",
    "LapseTerm",
    "LapseTest",
    "calibrated_parts",
    "calibrated_self_preference",
    "calibrated_spec",
    "calibrated_specs",
    "extrapolation_warning",
    "gated_parts",
    "label_conditioned",
    "label_strengths",
    "label_words",
    "lapse_test",
    "lapse_words",
    "strata_warning",
    "strata_words",
    "stratum_column",
    "table_judges",
]

CALIBRATED = "self_preference_calibrated"
#: Newton steps of the competence fit (from 0; a fit converges in about 6, a judge that
#: separates the strengths perfectly drifts toward κ = ∞ where π no longer moves)
_NEWTON_STEPS = 30
#: the slot lapse's fit (:func:`_lapse_fit`): its starting λ, EM steps, then at most so
#: many Fisher-scoring steps
_LAPSE_START = 0.25
_EM_STEPS = 5
_SCORING_STEPS = 50
_HALVINGS = 30
#: most covariate patterns plus labelled model pairs, times the judges, that the exact
#: refit handles (each resample refits every judge over all of them); past it, each
#: resample takes one Newton step from the full-sample fit (:class:`_OneStep`)
MAX_PATTERNS = 2000
_CHUNK = 256  # resamples refitted at once
#: chunks of refits a model keeps (:attr:`CompetenceModel._refits`): 256 resamples'
#: strengths and θ, under 100 KiB with 40 models, and 2,000 resamples of up to 8 judges
#: are 64 chunks
_REFITS_KEPT = 512
#: full-sample strengths a model keeps (:attr:`CompetenceModel._strengths_of`): one per
#: judge's sums, M floats each
_STRENGTHS_KEPT = 256
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
    different models, or the labels give the strengths no finite estimate: the models
    are not all connected by comparisons, or a group of them never lost to the rest
    (Ford's condition, :func:`~recuse.metrics.bradley_terry.no_finite_strengths`; a
    fit would stop at an arbitrary, huge gap and the calibrated estimate built on it
    would be a number the labels cannot give).
    """
    from recuse.metrics.bradley_terry import bradley_terry

    if "human" not in pairs.columns:
        raise EstimationError("no human labels to learn the models' strengths from")
    known = pairs["human"].notna() & pairs["model_a"].notna() & pairs["model_b"].notna()
    labelled = pairs[known]
    labelled = labelled[~items_of(labelled).duplicated()]
    labelled = labelled[labelled["model_a"] != labelled["model_b"]].reset_index(drop=True)
    if labelled.empty:
        raise EstimationError(
            "no human-labelled pairs of two different known models to learn the models' "
            "strengths from"
        )
    try:
        fit = bradley_terry(
            labelled["human"].to_numpy(float),
            labelled["model_a"].astype(str),
            labelled["model_b"].astype(str),
            clusters_of(labelled),
            boot=Resampling(n_boot=10, seed=0),
        )
    except EstimationError as exc:
        raise EstimationError(f"the human labels: {exc}") from None
    return {s: float(v) for s, v in zip(fit.systems, fit.strengths, strict=True)}


@dataclass(frozen=True)
class CompetenceModel:
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
    #: the judges whose competence is conditioned on the label (the method names them: a
    #: table's judges share one method, and the others' competence is not conditioned)
    conditioned: tuple[str, ...] = ()
    #: per pattern: the slot (+1 first shown, −1 second) whose answer the pattern's judge
    #: takes on a share λ of its orders whatever the pair, for the judges whose
    #: competence has that slot lapse (:func:`lapse_test`), 0 for the others; None: no
    #: lapse in the model. ``θ`` then ends with λ
    lapse: NDArray[np.float64] | None = None
    #: the judges whose competence has the slot lapse (the method names them)
    lapsed: tuple[str, ...] = ()
    #: the slot lapse is off (``lapse=False``): not tested for, a warning where it fires
    lapse_off: bool = False
    #: the bootstrap's one-step linearisation (:class:`_OneStep`), or None: exact refits
    one_step: _OneStep | None = None
    #: the whole table's covariate patterns (without the label term) plus labelled model
    #: pairs, whichever judges are chosen: with :func:`table_judges`, what decides
    #: between exact and one-step resamples (``one_step=None``)
    table_size: int = 0
    #: the refits (strengths, θ) of resampled sums already made (:meth:`_fit`), by the
    #: sums' digest: the
    #: calibrated estimate, its family form and its three rungs refit the same model on
    #: the same resamples, and each refitted all of them (five times the work)
    _refits: dict[bytes, tuple[NDArray[np.float64], NDArray[np.float64]]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    #: the full-sample strengths of label sums already fitted (:meth:`strengths`, one
    #: sum vector), by the sums' digest, shared by the models ``replace`` derives from
    #: this one: a judge's strengths were refitted five times over (its fit, the
    #: one-step Jacobian, the components, the warnings), each Newton step an ``M × M``
    #: eigendecomposition (at 200 models and 20 judges, 30 of a 45 s ``metrics pairs``)
    _strengths_of: dict[bytes, NDArray[np.float64]] = field(
        default_factory=dict, repr=False, compare=False
    )

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
        if not n_l:
            return np.zeros((*s.shape[:-1], self.n_models))
        if s.ndim == 1:  # one fit: by index sums, not the dense (L, M) design; once
            key = _strengths_key(c, h, self.la, self.lb, self.n_models)
            kept = self._strengths_of.get(key)
            if kept is None:
                kept = _pair_newton(self.la, self.lb, self.n_models, c, h)
                if len(self._strengths_of) >= _STRENGTHS_KEPT:  # the oldest goes
                    with contextlib.suppress(KeyError, RuntimeError, StopIteration):
                        self._strengths_of.pop(next(iter(self._strengths_of)))
                self._strengths_of[key] = kept
            return kept.copy()
        design = np.zeros((n_l, self.n_models))
        design[np.arange(n_l), self.la] += 1.0
        design[np.arange(n_l), self.lb] -= 1.0
        return _newton(design, c, h)

    def placed(
        self, s: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_]]:
        """The patterns' weights and picks of a, 0 where these sums' labels do not place
        both models (as the estimator leaves such a pair out), and whether the labelled
        models are connected by comparisons (else the strengths are not comparable and
        the statistic is undefined). A resample that draws none of a model's labelled
        prompts is then the estimate on that resample, not its pairs at strength 0."""
        p = len(self.ia)
        n, y = s[..., :p], s[..., p : 2 * p]
        if self.fixed is not None or self.n_models == 0:
            return n, y, np.ones(s.shape[:-1], dtype=bool)
        beat, seen = self._label_graph(s)
        keep = seen[..., self.ia] & seen[..., self.ib]
        compared = beat | np.swapaxes(beat, -1, -2)
        connected = _strongly_connected(compared, seen, directed=False)
        return np.where(keep, n, 0.0), np.where(keep, y, 0.0), connected

    def finite(self, s: NDArray[np.float64]) -> NDArray[np.bool_]:
        """Whether these sums' labels give the models' strengths a finite estimate:
        Ford's condition as :func:`~recuse.metrics.bradley_terry.no_finite_strengths`
        checks it, on the label sums (a labelled model beat or tied another at least
        once where ``Σ human > 0`` with it as a, or ``< count`` as b; each must reach
        every other along such wins and be reached from it). True with strengths held
        fixed.

        The full sample must pass (else :func:`label_strengths` refuses, with the
        reason). A resample need not: its strengths are refitted by Newton's method from
        0, and where it fails they run toward an infinite gap and stop after
        :data:`_NEWTON_STEPS`; the replicate is kept. That is harmless to the percentile
        interval, which reads only on which side of its quantiles such a replicate falls
        (``benchmarks/ford_resamples.py``: :func:`~recuse.simulate.self_preference.
        simulate_self_preference` tables, five models, the judge's answers preferred
        0.95 of the time, competence 3; 300 tables per cell, 90% intervals of 300
        resamples; the tables whose full sample passes):

        =======  ===========  ========================  ==============================
        prompts  full sample  tables with such          interval holds the planted
                 passes       resamples (median share)  value (no self term / τ = 0.3)
        =======  ===========  ========================  ==============================
        12       83%          97% (11%)                 0.88 / 0.89
        20       95%          86% (4.0%)                0.90 / 0.88
        30       99%          67% (0.5%)                0.89 / 0.87
        =======  ===========  ========================  ==============================

        as the estimator does where none occur (:data:`CALIBRATED_INTERVAL`). With 12
        prompts: 60 steps instead of 30 move an interval end by at most 0.010 (of about
        0.12) and hold the value in 0.90 / 0.89; dropping such resamples as undefined (as
        for models the labels do not connect) refuses 59% of the tables (more than a
        tenth dropped) and holds it in 0.83 / 0.79 of the rest (0.85 / 0.83 kept); the
        one-step bootstrap (:class:`_OneStep`) holds it in 0.86 / 0.84. The full samples
        that fail, now refused, had intervals holding it in 0.82 / 0.04. The shared data
        have none: on LLMBar's MT-Bench set (192 labelled pairs, 73 prompts) and
        MT-Bench's human judgments (910, 80), 0 of 2,000 resamples break it.

        Nor does the coverage fall as the share of such resamples grows (the bootstrap
        counts them, ``MetricResult.n_boot_unfit``; ``ford_resamples.py --by-share``,
        each table on its own seed, 300 resamples): with the design above at 10–20
        prompts (2,850 tables passing), the tables above a tenth of such resamples hold
        the planted value in 0.91 ± 0.007 (1,499 tables; above 30%: 0.90 ± 0.011, 757),
        those with some up to a tenth in 0.91 ± 0.008 (1,217); with the judge's answers
        preferred 0.98 of the time at 8–12 prompts (609 tables), 0.88 ± 0.014 above a
        tenth (555) against 0.70 at or below it (54). The share is mostly how many
        prompts hold the strong model's losses (one: about 35%, two: 13%).

        The tables with none (share 0) hold it in only 0.81 ± 0.034 (134 of the 2,850,
        123 of them at 15–20 prompts), but not for the share: they are the tables where
        the judge's own model lost on the most prompts in the labels (2.6 above its
        cell's mean, on average), and there the estimate reads high (mean error +0.021,
        every miss above) whether or not a resample breaks the condition. By that
        excess over the cell's mean, coverage is 0.85 (169 tables 1.5 or more below),
        0.93 (2,295 within 1.5), 0.85 (263, 1.5–2.5 above) and 0.76 ± 0.038 (123, more;
        0.73 of the 75 with no breaking resample, 0.81 of the 48 with some); the 0.98
        design's 54 tables are the same tail (1.3 above the mean; 0.64 of the 33 at
        1.5–2.5 above, 30 of them at or below a tenth). Each cell's coverage is 0.88–0.94.
        The gap-only prediction falls 1.25–1.43 times as fast with each of those losses
        as the judge's own picks do (no self term; with τ = 0.3 the table's own
        self-preference also grows with them). The label term does not remove it: with
        ``label="auto"`` (``--label-auto``) the 123 zero-share tables at 15–20 prompts
        cover 0.78 ± 0.037 (0.81 without), the term on for every table 0.76, each cell's
        estimate then 0.012–0.025 high. An interval shape cannot move that (the
        zero-share intervals are wider than their cells' others: median width 0.116
        against 0.096 at 15 prompts, 0.098 against 0.080 at 20), and a table cannot
        tell its excess (it is over a mean across the tables of its design):
        a share of 0 marks it only where a share of 0 is rare — with the judge's answers
        preferred 0.86 of the time at 15 prompts, 42% of tables have none and hold the
        value in 0.89 ± 0.024 (168), and on the shared data no resample breaks it. So no
        warning is given for the share or for its absence; the 0.98 design's shortfall
        with no self term (0.79 above a tenth, 0.71 below) does not come with the
        share."""
        if self.fixed is not None or self.n_models == 0:
            return np.ones(s.shape[:-1], dtype=bool)
        return _strongly_connected(*self._label_graph(s))

    def unfit(self, s: NDArray[np.float64]) -> NDArray[np.bool_]:
        """Not :meth:`finite`, over any leading axes a chunk of resamples at a time: the
        bootstrap counts such replicates (:attr:`~recuse.metrics.bootstrap.
        GroupedStatistic.unfit`, ``MetricResult.n_boot_unfit``)."""
        flat = s.reshape(-1, s.shape[-1])
        out = np.zeros(len(flat), dtype=bool)
        for start in range(0, len(flat), _CHUNK):
            out[start : start + _CHUNK] = ~self.finite(flat[start : start + _CHUNK])
        return out.reshape(s.shape[:-1])

    def _label_graph(self, s: NDArray[np.float64]) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
        """From the label sums: ``(..., M, M)`` whether model i beat (or tied) model j at
        least once, and ``(..., M)`` whether each model has a labelled pair.

        Each labelled model pair ``l = (a_l, b_l)`` drawn sets ``beat[a_l, b_l]`` where
        ``Σ human > 0`` (a won or tied once), ``beat[b_l, a_l]`` where ``Σ human <
        count``, and ``seen`` at both: set by flat index, ``O(resamples · (L + M²))``
        (the one-hot ``(L, M, M)`` array contracted before cost ``L · M²`` a resample:
        4,950 pairs of 100 models, 50 million products each)."""
        p, n_l, m = len(self.ia), len(self.la), self.n_models
        lead = s.shape[:-1]
        counts = s[..., 2 * p : 2 * p + n_l].reshape(-1, n_l)
        sums = s[..., 2 * p + n_l : 2 * p + 2 * n_l].reshape(-1, n_l)
        drawn = counts > 0
        la, lb = np.asarray(self.la, np.intp), np.asarray(self.lb, np.intp)
        base = np.arange(len(counts), dtype=np.intp)[:, None]
        beat = np.zeros(len(counts) * m * m, dtype=bool)
        beat[(base * (m * m) + la * m + lb)[drawn & (sums > 0)]] = True
        beat[(base * (m * m) + lb * m + la)[drawn & (sums < counts)]] = True
        seen = np.zeros(len(counts) * m, dtype=bool)
        seen[(base * m + la)[drawn]] = True
        seen[(base * m + lb)[drawn]] = True
        return beat.reshape(*lead, m, m), seen.reshape(*lead, m)

    def fit(self, s: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``θ = (κ, β, τ)`` and the gap ``g = s_a − s_b`` of every pattern (over the
        patterns :meth:`placed` keeps)."""
        n, y, _ = self.placed(s)
        return self._fit(s, n, y)

    def _fit(
        self, s: NDArray[np.float64], n: NDArray[np.float64], y: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        key = None
        if n.ndim > 1:  # resampled sums: refitted once (:attr:`_refits`), by their values
            as_float = np.ascontiguousarray(s, dtype=np.float64)  # not int's bytes
            digest = hashlib.blake2b(as_float.tobytes(), digest_size=16)
            digest.update(repr(s.shape).encode())
            key = digest.digest()
        if key is not None and key in self._refits:
            st, theta = self._refits[key]
            return theta, st[..., self.ia] - st[..., self.ib]
        st = self.strengths(s)
        g = st[..., self.ia] - st[..., self.ib]  # (..., P)
        if self.lapse is None:
            theta = _newton(self.design(g), n, y)
        else:
            theta = _lapse_fit(self.design(g), n, y, self.first == self.lapse, self.lapse != 0)
        if key is not None:
            if len(self._refits) >= _REFITS_KEPT:  # the oldest goes (another thread may
                with contextlib.suppress(KeyError, RuntimeError, StopIteration):  # have)
                    self._refits.pop(next(iter(self._refits)))
            self._refits[key] = (st, theta)
        return theta, g

    def design(self, g: NDArray[np.float64]) -> NDArray[np.float64]:
        """The logistic part's design ``(..., P, d)`` at strength gaps ``g``: the gap (one
        column per discrimination), first, own[, family][, label]."""
        if self.kgroup is None:
            cols = [g]
        else:  # κ_c (s_a − s_b): the gap in its stratum's own column
            cols = [np.where(self.kgroup == c, g, 0.0) for c in range(self.n_kappa)]
        cols += [np.broadcast_to(self.first, g.shape), np.broadcast_to(self.own, g.shape)]
        if self.fam is not None:
            cols.append(np.broadcast_to(self.fam, g.shape))
        if self.label is not None:
            cols.append(np.broadcast_to(self.label, g.shape))
        return np.stack(cols, -1)

    def p0(self, theta: NDArray[np.float64], g: NDArray[np.float64]) -> NDArray[np.float64]:
        """Each pattern's P(picks a) without the own and family terms: ``expit(κ_c g +
        β·first [+ α·label])``, ``κ_c`` its stratum's discrimination (theta: κ's, β, τ[,
        φ][, α][, λ]); with a slot lapse, ``λ·[a in the slot] + (1 − λ)·`` that."""
        kap = theta[..., :1] if self.kgroup is None else theta[..., self.kgroup]
        beta = theta[..., self.n_kappa : self.n_kappa + 1]
        eta = kap * g + beta * self.first
        if self.label is not None:
            at = -2 if self.lapse is not None else -1
            eta = eta + theta[..., at : at + 1 or None] * self.label
        p = np.asarray(special.expit(eta), dtype=float)
        if self.lapse is None:
            return p
        lam = theta[..., -1:]
        mixed = lam * (self.first == self.lapse) + (1.0 - lam) * p
        return np.where(self.lapse != 0, mixed, p)

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
        """The own-pick and predicted rates, and ``pairs_without_own``: the judge's usable
        pairs without its own answer, on which its competence is mostly learnt (the
        count its unit promises beside n)."""
        n_own, picks, pred = self.parts(t)
        other = float(t[..., self.col_other])
        if not n_own:
            return {
                "own_pick_rate": float("nan"),
                "predicted_own_pick_rate": float("nan"),
                "pairs_without_own": other,
            } | self.lapse_share(t)
        return {
            "own_pick_rate": float(picks / n_own),
            "predicted_own_pick_rate": float(pred / n_own),
            "pairs_without_own": other,
        } | self.lapse_share(t)

    def lapse_share(self, t: NDArray[np.float64]) -> dict[str, float]:
        """``slot_lapse``: λ, the share of its orders that take one slot's answer whatever
        the pair, and ``slot_lapse_slot``: that slot (+1 first shown, −1 second), for a
        judge whose competence has a slot lapse; else empty."""
        if self.lapse is None:
            return {}
        n, _, _ = self.placed(t)
        mine = (self.lapse != 0) & (n > 0)
        if not mine.any():
            return {}
        theta, _ = self.fit(t)
        return {"slot_lapse": float(theta[-1]), "slot_lapse_slot": float(self.lapse[mine][0])}

    def components_family(self, t: NDArray[np.float64]) -> dict[str, float]:
        n_fam, picks, pred = self.parts(t, "family")
        if not n_fam:
            return {"family_pick_rate": float("nan"), "predicted_family_pick_rate": float("nan")}
        return {
            "family_pick_rate": float(picks / n_fam),
            "predicted_family_pick_rate": float(pred / n_fam),
        }

    def warnings_family(self, t: NDArray[np.float64]) -> tuple[str, ...]:
        """The family preference's caveat: where the judge picked its family member's
        answer on every family pair (or on none) and judged fewer than
        :data:`SEPARATED_MIN` pairs holding neither its own nor a family answer, the
        family term takes every pick (``φ`` runs to ±∞) and ``κ`` is learnt on nothing,
        so ``π`` is where the fit started, not a measurement (a judge picking
        gpt-3.5-turbo on all 40 of its pairs, each against an outsider: +0.50 [0.4995,
        0.5003] with nothing said)."""
        if self.fam is None:
            return ()
        n, y, _ = self.placed(t)
        fam = self.fam != 0
        n_fam = float(n[fam].sum())
        neither = float(n[(self.own == 0) & ~fam].sum())
        if not n_fam or neither >= SEPARATED_MIN:
            return ()
        picks = float(np.where(self.fam > 0, y, n - y)[fam].sum())
        if TIE_TOL * n_fam < picks < n_fam * (1 - TIE_TOL):
            return ()
        which = "every one" if picks > n_fam / 2 else "none"
        return (
            f"it picked a family member's answer on {which} of its {n_fam:,.0f} family pairs "
            f"and judged {neither:,.0f} pairs between two models outside its family (under "
            f"{SEPARATED_MIN}): its family term takes every pick, its competence is learnt on "
            "nothing, and the predicted rate is the fit's starting point, not the data's (its "
            "interval too narrow to read) — add pairs between models outside its family",
        )

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
                    f"{share_percent(rate, 0)} of the time; if its remaining misses do not "
                    "shrink with the "
                    "strength gap (a lapse rate the logistic curve lacks), the prediction is "
                    "too close to the ceiling and a self term would read low — about 40% low in a "
                    "simulation (a judge following the reference 97% of the time, which "
                    "prefers its answers 90% of the time), about 8% low at 76%; the "
                    "category term does not change this"
                )
        untested = self.one_step is not None or self.lapse_off
        if untested and self.lapse is None and own.any() and self.finite(t):
            test = lapse_test(self, t)
            if test.lapsed:
                out.append(lapse_warning(test, off=self.lapse_off))
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
    shown = decimal_beside(distance, [threshold], 2)  # 0.3004 read "0.30 (said above 0.3)"
    return (
        f"own pairs in other {plural} than its competence pairs: total-variation distance "
        f"{shown} (0 = same mix, 1 = none in common; said above {threshold:g}), most "
        f"in {names[top]!r} ({share_percent(o[top], 0)} of its own pairs, "
        f"{share_percent(r[top], 0)} of the others)"
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
    # a stratum none of the judges has usable pairs in holds only other judges' rows (a
    # table of more judges than those estimated): any column fits them, since they weigh
    # nothing in these judges' fits; -1 was read as the last column, or refused by the
    # one-step resamples' bincount ("'list' argument must have no negative elements")
    group[present.sum(0) == 0] = 0
    return group, n_kappa, rest


def _strongly_connected(
    beat: NDArray[np.bool_], seen: NDArray[np.bool_], *, directed: bool = True
) -> NDArray[np.bool_]:
    """Whether the models ``seen`` (``(..., M)``) form one strongly connected component of
    the directed graph ``beat`` (``(..., M, M)``, i → j when i beat j): each reaches the
    first seen model and is reached from it (``directed=False``: ``beat`` is symmetric,
    reached is enough). True where none or one is seen."""
    edges = beat.astype(float)
    start = np.zeros_like(seen)
    np.put_along_axis(start, np.argmax(seen, axis=-1)[..., None], True, axis=-1)
    start &= seen
    ok = np.ones(seen.shape[:-1], dtype=bool)
    rules = ("...ij,...i->...j", "...ij,...j->...i")  # reached from it; reaching it
    for rule in rules if directed else rules[:1]:
        reach = start
        for _ in range(seen.shape[-1]):
            grown = reach | (np.einsum(rule, edges, reach.astype(float)) > 0)
            if np.array_equal(grown, reach):
                break
            reach = grown
        ok &= np.all(reach | ~seen, axis=-1)
    return ok


def _newton(
    x: NDArray[np.float64],
    n: NDArray[np.float64],
    y: NDArray[np.float64],
    *,
    start: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """Weighted binomial maximum likelihood ``logit E[y/n] = x θ`` for every leading index
    of ``n`` and ``y`` (``(..., P)``; ``x`` is ``(P, d)`` or ``(..., P, d)``): Newton's
    method from 0, ``θ ← θ + I⁺ xᵀ(y − n μ)`` with ``μ = expit(x θ)`` and the information
    ``I = xᵀ diag(n μ (1 − μ)) x``, by the pseudo-inverse (a direction the data do not
    inform stays 0); NaN where not finite. Products are matrix products (batched over
    the leading indices), not three-operand einsums: the same numbers to rounding, in
    half the time, where the bootstrap refits it for every resample. ``start``: from
    that ``θ`` instead of 0 (non-finite entries from 0)."""
    d = x.shape[-1]
    theta = np.zeros((*n.shape[:-1], d))
    if start is not None:
        theta = np.where(np.isfinite(start), start, 0.0)
    if n.ndim > 1:  # a batch: each fit steps until its own step is small
        return _newton_batch(x, n, y, theta)
    xt = np.swapaxes(x, -1, -2)
    for _ in range(_NEWTON_STEPS):
        step = _newton_step(x, xt, n, y, theta)
        theta = theta + step
        if np.all(np.abs(step) < 1e-10):
            break
    return np.where(np.isfinite(theta), theta, np.nan)


def _lapse_fit(
    x: NDArray[np.float64],
    n: NDArray[np.float64],
    y: NDArray[np.float64],
    in_slot: NDArray[np.bool_],
    lapsed: NDArray[np.bool_],
) -> NDArray[np.float64]:
    """:func:`_newton`'s fit with a slot lapse: on the ``lapsed`` patterns ``P(picks a) =
    λ·[a in the slot] + (1 − λ)·expit(x θ)`` (``in_slot``: a is the slot's answer, else
    b), by maximum likelihood, for every leading index of ``n`` and ``y``. ``θ`` with
    ``λ`` appended; λ = 0 where no lapsed pattern has weight (the plain fit).

    From the plain fit and λ = :data:`_LAPSE_START`, :data:`_EM_STEPS` EM steps (the
    E-step splits each pattern's picks of the slot's answer ``c`` into lapses, ``z = c λ /
    (λ + (1 − λ) P_slot)``, ``P_slot`` the logistic part's chance of that answer; the
    M-step sets ``λ = Σ z / Σ n`` and refits ``θ`` on the weights ``n − z`` and the picks
    less the lapses), then Fisher scoring on ``(θ, λ)``: ``φ ← φ + I⁺ U`` with the score
    ``U = Σ (y − n p) ∂p / (p (1 − p))`` and the expected information ``I = Σ n ∂p ∂pᵀ /
    (p (1 − p))``, λ kept in [0, 1): at λ = 0 with a score pointing below it, ``θ``
    alone steps (EM alone crawls there, hundreds of steps)."""
    theta = _newton(x, n, y)
    total = np.where(lapsed, n, 0.0).sum(axis=-1, keepdims=True)
    if not np.any(total > 0):
        return np.concatenate([theta, np.zeros((*theta.shape[:-1], 1))], axis=-1)
    slot = (in_slot & lapsed).astype(float)
    slot_picks = np.where(lapsed, np.where(in_slot, y, n - y), 0.0)
    lam = np.where(total > 0, _LAPSE_START, 0.0)
    for _ in range(_EM_STEPS):
        mu = special.expit((x @ theta[..., None])[..., 0])
        share = lam / np.maximum(lam + (1.0 - lam) * np.where(in_slot, mu, 1.0 - mu), 1e-300)
        z = slot_picks * share
        lam = np.divide(z.sum(axis=-1, keepdims=True), total, out=np.zeros_like(lam),
                        where=total > 0)  # fmt: skip
        theta = _newton(x, n - z, np.where(in_slot, y - z, y), start=theta)
    return _lapse_scoring(x, n, y, slot, lapsed.astype(float), theta, lam)


def _lapse_scoring(
    x: NDArray[np.float64],
    n: NDArray[np.float64],
    y: NDArray[np.float64],
    slot: NDArray[np.float64],
    lap: NDArray[np.float64],
    theta: NDArray[np.float64],
    lam: NDArray[np.float64],
) -> NDArray[np.float64]:
    """:func:`_lapse_fit`'s Fisher scoring from ``(θ, λ)``, each fit of the batch stepped
    until its own step is under 1e-10 in every coordinate (as :func:`_newton_batch`): a
    few resamples that creep took every other fit of their batch through all
    :data:`_SCORING_STEPS` steps with them, most done in 15 (a lapse table's estimate
    took 4.8 times a plain one's)."""
    d, k = x.shape[-1], n.shape[-1]
    lead = theta.shape[:-1]
    out_t, out_l = theta.reshape(-1, d).copy(), lam.reshape(-1, 1).copy()
    active = np.arange(len(out_t))
    xs = x.reshape(-1, k, d) if x.ndim > 2 else x
    ns, ys = n.reshape(-1, k), y.reshape(-1, k)
    th, lm = out_t, out_l

    def mixture(
        xs: NDArray[np.float64], theta: NDArray[np.float64], lam: NDArray[np.float64]
    ) -> tuple[Any, Any]:
        mu = special.expit((xs @ theta[..., None])[..., 0])
        return mu, np.clip(lam * slot + (1.0 - lam * lap) * mu, 1e-12, 1.0 - 1e-12)

    mu, p = mixture(xs, th, lm)
    at = _loglik(p, ns, ys)
    for _ in range(_SCORING_STEPS):
        xt = np.swapaxes(xs, -1, -2)
        v = p * (1.0 - p)
        d_theta = (1.0 - lm * lap) * mu * (1.0 - mu)  # ∂p/∂θ = that · x
        d_lam = lap * (slot - mu)
        r = (ys - ns * p) / v
        score = np.concatenate(
            [(xt @ (r * d_theta)[..., None])[..., 0], (r * d_lam).sum(-1, keepdims=True)], -1
        )
        w = ns / v
        i_tt = xt @ (xs * (w * d_theta * d_theta)[..., None])
        i_tl = (xt @ (w * d_theta * d_lam)[..., None])[..., 0]
        i_ll = (w * d_lam * d_lam).sum(-1)
        info = np.concatenate(
            [np.concatenate([i_tt, i_tl[..., None]], -1),
             np.concatenate([i_tl, i_ll[..., None]], -1)[..., None, :]], -2,
        )  # fmt: skip
        info = np.where(np.isfinite(info), info, 0.0)
        step = (_symmetric_pinv(info) @ score[..., None])[..., 0]
        alone = (_symmetric_pinv(info[..., :d, :d]) @ score[..., :d, None])[..., 0]
        pinned = ((lm[..., 0] <= 0.0) & (score[..., d] <= 0.0))[..., None]
        step = np.where(pinned, np.concatenate([alone, np.zeros_like(lm)], -1), step)
        step = np.where(np.isfinite(step), step, 0.0)
        # halved where it lowers the likelihood (a mixture's is not concave)
        for _ in range(_HALVINGS):
            new_theta = th + step[..., :d]
            new_lam = np.clip(lm + step[..., d:], 0.0, 1.0 - 1e-9)
            new_mu, new_p = mixture(xs, new_theta, new_lam)
            new_at = _loglik(new_p, ns, ys)
            worse = ~(new_at >= at - 1e-9 * np.abs(at))
            if not worse.any():
                break
            step = np.where(worse[..., None], step / 2.0, step)
        else:
            keep = worse[..., None]
            new_theta = np.where(keep, th, new_theta)
            new_lam = np.where(keep, lm, new_lam)
            new_mu, new_p = mixture(xs, new_theta, new_lam)
            new_at = _loglik(new_p, ns, ys)
        # NaN keeps moving, as in one fit
        moving = ~(
            np.all(np.abs(new_theta - th) < 1e-10, axis=-1)
            & np.all(np.abs(new_lam - lm) < 1e-10, axis=-1)
        )
        th, lm, mu, p, at = new_theta, new_lam, new_mu, new_p, new_at
        out_t[active], out_l[active] = th, lm
        if not moving.any():
            break
        if not moving.all():
            active, th, lm = active[moving], th[moving], lm[moving]
            mu, p, at = mu[moving], p[moving], at[moving]
            ns, ys = ns[moving], ys[moving]
            xs = xs[moving] if xs.ndim > 2 else xs
    fitted = np.concatenate([out_t, out_l], axis=-1).reshape(*lead, d + 1)
    return np.where(np.isfinite(fitted), fitted, np.nan)


def _loglik(
    p: NDArray[np.float64], n: NDArray[np.float64], y: NDArray[np.float64]
) -> NDArray[np.float64]:
    """The weighted binomial log-likelihood ``Σ y log p + (n − y) log(1 − p)`` over the
    last axis (one per fit of a batch)."""
    q = np.clip(p, 1e-300, 1.0 - 1e-16)
    return np.sum(special.xlogy(y, q) + special.xlogy(n - y, 1.0 - q), axis=-1)


def _strengths_key(
    c: NDArray[Any], h: NDArray[Any], la: NDArray[Any], lb: NDArray[Any], n_models: int
) -> bytes:
    """The key of one fit's strengths in :attr:`CompetenceModel._strengths_of`: a digest
    of the values (the sums as float64, the pairs as int64, so that integer sums and
    floats with the same bytes differ and the same values in another dtype agree), the
    four lengths (no two splits of one byte string meet) and ``n_models``."""
    sizes = np.array([len(c), len(h), len(la), len(lb), n_models], dtype=np.int64)
    digest = hashlib.blake2b(sizes.tobytes(), digest_size=16)
    for part, kind in ((c, np.float64), (h, np.float64), (la, np.int64), (lb, np.int64)):
        digest.update(np.ascontiguousarray(part, dtype=kind).tobytes())
    return digest.digest()


def _pair_newton(
    la: NDArray[np.intp],
    lb: NDArray[np.intp],
    m: int,
    n: NDArray[np.float64],
    y: NDArray[np.float64],
) -> NDArray[np.float64]:
    """:func:`_newton` of one fit whose design is Bradley–Terry's (row ``l``: +1 at model
    ``la[l]``, −1 at ``lb[l]``; ``m`` models), from index sums: the gradient
    ``g_i = Σ_{l: a=i} r_l − Σ_{l: b=i} r_l`` (``r = y − n μ``) and the information, the
    weighted Laplacian ``I_ii = Σ_{l ∋ i} v_l``, ``I_ij = −Σ_{l = (i, j) or (j, i)} v_l``
    (``v = n μ (1 − μ)``), the same steps and stopping rule. Each step costs ``O(L + M³)``
    where the dense design's product costs ``L · M²`` (19,900 labelled pairs of 200
    models: 8·10⁸ a step, for every judge)."""
    theta = np.zeros(m)
    for _ in range(_NEWTON_STEPS):
        mu = special.expit(theta[la] - theta[lb])
        r, v = y - n * mu, n * mu * (1.0 - mu)
        grad = np.bincount(la, r, m) - np.bincount(lb, r, m)
        info = np.zeros((m, m))
        np.add.at(info, (la, la), v)
        np.add.at(info, (lb, lb), v)
        np.add.at(info, (la, lb), -v)
        np.add.at(info, (lb, la), -v)
        info = np.where(np.isfinite(info), info, 0.0)
        step = _symmetric_pinv(info) @ grad
        theta = theta + step
        if np.all(np.abs(step) < 1e-10):
            break
    return np.where(np.isfinite(theta), theta, np.nan)


def _newton_step(
    x: NDArray[np.float64],
    xt: NDArray[np.float64],
    n: NDArray[np.float64],
    y: NDArray[np.float64],
    theta: NDArray[np.float64],
) -> NDArray[np.float64]:
    """One Newton step of :func:`_newton` at ``theta``: ``I⁺ xᵀ(y − n μ)``."""
    mu = special.expit((x @ theta[..., None])[..., 0])
    grad = (xt @ (y - n * mu)[..., None])[..., 0]
    info = xt @ (x * (n * mu * (1.0 - mu))[..., None])
    info = np.where(np.isfinite(info), info, 0.0)
    return (_symmetric_pinv(info) @ grad[..., None])[..., 0]


def _newton_batch(
    x: NDArray[np.float64],
    n: NDArray[np.float64],
    y: NDArray[np.float64],
    theta: NDArray[np.float64],
) -> NDArray[np.float64]:
    """:func:`_newton` over a batch of fits (``n``, ``y``: ``(B, P)``; ``x``: ``(P, d)`` or
    ``(B, P, d)``), each stepped until its own step is under 1e-10 in every coordinate:
    a resample whose judge separates the strengths (its κ drifting toward ∞) took every
    other fit of its batch through all :data:`_NEWTON_STEPS` steps with it, and a
    one-order table's calibrated estimate took 5 s where it takes a fraction of that."""
    out = theta.reshape(-1, theta.shape[-1]).copy()
    active = np.arange(len(out))
    # the active fits' rows, taken again only when some stop (a copy of x per step
    # took a fifth of the time)
    xs = x.reshape(-1, *x.shape[-2:]) if x.ndim > 2 else x
    ns, ys = n.reshape(-1, n.shape[-1]), y.reshape(-1, y.shape[-1])
    ts = out
    for _ in range(_NEWTON_STEPS):
        step = _newton_step(xs, np.swapaxes(xs, -1, -2), ns, ys, ts)
        ts = ts + step
        out[active] = ts
        moving = ~np.all(np.abs(step) < 1e-10, axis=-1)  # NaN keeps moving, as in one fit
        if not moving.any():
            break
        if not moving.all():
            active, ts, ns, ys = active[moving], ts[moving], ns[moving], ys[moving]
            xs = xs[moving] if xs.ndim > 2 else xs
    fitted = out.reshape(theta.shape)
    return np.where(np.isfinite(fitted), fitted, np.nan)


def _symmetric_pinv(a: NDArray[np.float64]) -> NDArray[np.float64]:
    """The pseudo-inverse of symmetric matrices ``a`` (``(..., d, d)``) as
    ``np.linalg.pinv`` gives it (eigenvalues within ``1e-15`` of the largest in size
    count as 0), from their eigendecomposition ``a = V diag(w) Vᵀ``: ``V diag(w⁺) Vᵀ``.
    A symmetric matrix's singular values are its eigenvalues' sizes, so the cut is
    pinv's; ``eigh`` costs less than pinv's SVD."""
    w, v = np.linalg.eigh(a)
    cut = 1e-15 * np.abs(w).max(axis=-1, keepdims=True)
    kept = np.abs(w) > cut
    inverse = np.where(kept, 1.0 / np.where(kept, w, 1.0), 0.0)
    return (v * inverse[..., None, :]) @ np.swapaxes(v, -1, -2)


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


def _unique_columns(columns: list[NDArray[Any]]) -> tuple[NDArray[np.int64], NDArray[np.intp]]:
    """``np.unique(np.column_stack(columns), axis=0, return_inverse=True)`` for integer
    ``columns`` (equal lengths): the distinct rows in lexicographic order, as ``(rows,
    k)`` int64, and each row's index into them, without stacking or sorting the rows as
    records. Each row is one integer in mixed radix; where those integers span few
    values (at most four per row) the distinct ones are marked in a table, else sorted."""
    n, k = (len(columns[0]) if columns else 0), len(columns)
    if n == 0:
        return np.zeros((0, k), dtype=np.int64), np.zeros(0, dtype=np.intp)
    low = np.array([int(c.min()) for c in columns], dtype=np.int64)
    span = np.array([int(c.max()) for c in columns], dtype=np.int64) - low + 1
    if float(np.prod(span.astype(float))) >= 2.0**62:  # too wide for one integer
        stacked = np.column_stack(columns).astype(np.int64)
        uniq, inverse = np.unique(stacked, axis=0, return_inverse=True)
        return uniq.reshape(-1, k), inverse.reshape(-1).astype(np.intp)
    code = np.zeros(n, dtype=np.int64)
    for j, c in enumerate(columns):
        code *= span[j]
        code += c.astype(np.int64) - low[j]
    total = int(np.prod(span))
    if total <= 4 * n + 1024:  # a table of every possible code
        present = np.zeros(total, dtype=bool)
        present[code] = True
        codes = np.flatnonzero(present)
        where = np.zeros(total, dtype=np.intp)
        where[codes] = np.arange(len(codes))
        inverse = where[code]
    else:
        codes, inverse = np.unique(code, return_inverse=True)
        inverse = inverse.reshape(-1).astype(np.intp)
    rows = np.empty((len(codes), k), dtype=np.int64)
    rest = codes.astype(np.int64)
    for j in range(k - 1, -1, -1):  # undo the mixed radix, last column first
        rows[:, j] = rest % span[j] + low[j]
        rest //= span[j]
    return rows, inverse


def _values_matrix(
    n: int,
    k: int,
    orders: tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.float64], NDArray[np.float64]],
    labels: tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.float64], int],
    indicators: Mapping[int, NDArray[np.bool_]],
) -> sparse.csr_array:
    """The exact bootstrap's per-row terms ``(n × k)``, held sparse (CSR): each row
    touches at most two pattern weights and picks (one per judged order), one labelled
    pair's count and human sum, and two of the three indicator columns (own and without
    its own answer exclude each other), of ``k`` that grow with the
    patterns (739 at 600,000 rows: a dense matrix of 3.5 GB). ``orders``: each judged
    order's row, pattern, weight and weighted pick (columns ``pat`` and ``p + pat``, with
    ``p`` the patterns, ``k = 2p + 2 n_l + 3``; orders of one row on one pattern add up);
    ``labels``: each labelled row, its count column (``2p + pair``), its human value and
    ``n_l`` (its human column lies ``n_l`` further); ``indicators``: column -> rows with a
    1. The entries are those of the dense matrix (whole and half numbers, summed in any
    order to the same bits); stored zeros are dropped."""
    ri, pat, w, wy = orders
    lab_rows, lab_col, human, n_l = labels
    p = (k - 3 - 2 * n_l) // 2
    ind_rows = [np.flatnonzero(rows) for rows in indicators.values()]
    row = np.concatenate([ri, ri, lab_rows, lab_rows, *ind_rows])
    col = np.concatenate([
        pat, p + pat, lab_col, lab_col + n_l,
        *(np.full(len(r), c, dtype=np.intp) for c, r in zip(indicators, ind_rows, strict=True)),
    ])  # fmt: skip
    data = np.concatenate([w, wy, np.ones(len(lab_rows)), human, np.ones(sum(map(len, ind_rows)))])
    out = sparse.csr_array((data, (row, col)), shape=(n, k))  # duplicates summed
    out.sum_duplicates()
    out.eliminate_zeros()
    return out


def _contrast_sums(
    a: NDArray[np.float64], ia: NDArray[np.intp], ib: NDArray[np.intp], n_models: int
) -> NDArray[np.float64]:
    """``Aᵀ E`` ``(d, M)`` for ``A`` ``(P, d)`` and the patterns' model contrasts ``E``
    (``E[p, ia_p] = +1``, ``E[p, ib_p] = −1``) without building ``E``: column ``k``,
    model ``m`` is ``Σ_{p: ia_p = m} A[p, k] − Σ_{p: ib_p = m} A[p, k]``, by index sums,
    ``O(P · d)`` (the dense product costs ``P · M · d`` and ``P · M`` memory)."""
    d = a.shape[1]
    at = np.arange(d, dtype=np.intp) * n_models
    flat = a.T.ravel()  # column by column, as the index below
    plus = np.bincount((at[:, None] + ia[None, :]).ravel(), weights=flat, minlength=d * n_models)
    minus = np.bincount((at[:, None] + ib[None, :]).ravel(), weights=flat, minlength=d * n_models)
    return np.asarray(plus - minus, dtype=float).reshape(d, n_models)


def _pair_laplacian(
    w: NDArray[np.float64], la: NDArray[np.intp], lb: NDArray[np.intp], n_models: int
) -> NDArray[np.float64]:
    """``Eᵀ diag(w) E`` ``(M, M)`` for the labelled pairs' contrasts ``E`` (``+1`` at
    ``la``, ``−1`` at ``lb``) by index sums: ``+w_l`` at ``(a_l, a_l)`` and ``(b_l,
    b_l)``, ``−w_l`` at ``(a_l, b_l)`` and ``(b_l, a_l)``; ``O(L + M²)``, not ``L · M²``."""
    m = n_models
    idx = np.concatenate([la * m + la, lb * m + lb, la * m + lb, lb * m + la])
    weights = np.concatenate([w, w, -w, -w])
    sums = np.bincount(idx, weights=weights, minlength=m * m)
    return np.asarray(sums, dtype=float).reshape(m, m)


@dataclass(frozen=True)
class _OrderRows:
    """The rows behind the competence model's sums: one entry per judged order (its row
    ``ri``, pattern ``pat``, weight ``w`` and pick of a ``y``) and per labelled row (its
    row, labelled model pair ``lab`` and human label), with each row's group."""

    ri: NDArray[np.intp]
    pat: NDArray[np.intp]
    w: NDArray[np.float64]
    y: NDArray[np.float64]
    lab_rows: NDArray[np.intp]
    lab: NDArray[np.intp]
    human: NDArray[np.float64]
    group: NDArray[np.intp]
    n: int
    #: per row: holds the judge's own answer, holds neither, holds a family member's
    ind: NDArray[np.float64]


@dataclass(frozen=True)
class _JudgeFit:
    """One judge's competence model at its full-sample fit, as :class:`_OneStep` uses it:
    the patterns' weights, the strengths, the design ``x``, ``μ``, each pattern's ``κ``
    and its column, the strength gaps, ``π`` without the own and family terms,
    whether the strengths are fitted (False: held fixed) and ``(J⁺)ᵀ``."""

    n_p: NDArray[np.float64]
    st: NDArray[np.float64]
    x: NDArray[np.float64]
    mu: NDArray[np.float64]
    kap: NDArray[np.float64]
    kcol: NDArray[np.intp]
    gap: NDArray[np.float64]
    p0: NDArray[np.float64]
    free: bool
    pinv_t: NDArray[np.float64]


@dataclass(frozen=True)
class _OneStep:
    """The calibrated estimate's resamples by one Newton step from the full-sample fit.

    Per judge, the strengths ``s`` (Bradley–Terry on the labels) and ``θ = (κ, β, τ[, φ])``
    solve the stacked score equations ``ψ(φ) = Σ_rows ψ_row(φ) = 0``, ``φ = (s, θ)``. A
    resample's sums ``ψ_b(φ̂) = Σ_c n_bc ψ_c(φ̂)`` give its one-step fit
    ``φ_b = φ̂ − J⁺ ψ_b(φ̂)`` (``J = ∂ψ/∂φ`` at the full-sample fit; ``⁺`` the
    pseudo-inverse, the strengths being centred) and, to first order, its predicted picks
    ``Π_b(φ_b) = Π_b(φ̂) + ∇Π · (φ_b − φ̂)``. So each row carries::

        numerator_row = picks_row − Π_row(φ̂) + (J⁺ᵀ ∇Π) · ψ_row(φ̂)

    and a resample's estimate is ``Σ_b numerator / Σ_b own weight`` — two resampled sums
    per statistic, however many covariate patterns the model has. It differs from the
    exact refit by ``O(1/n)`` (the Newton step's error is quadratic in ``φ_b − φ̂ =
    O(n^-1/2)``), against a bootstrap spread of ``O(n^-1/2)``; on the full sample it is the
    exact estimate (``ψ(φ̂) = 0``)."""

    model: CompetenceModel
    rows: _OrderRows
    #: each fitted judge's code: its totals and ``θ̂``
    fits: dict[int, tuple[NDArray[np.float64], NDArray[np.float64]]]
    #: what every statistic's columns share (:meth:`_fitted`, :meth:`_orders`), kept
    #: after the first
    _shared: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def _fitted(self) -> dict[int, _JudgeFit]:
        """Each fitted judge's model at its full-sample fit: what does not depend on the
        statistic (the pseudo-inverse of the Jacobian included)."""
        if "fitted" in self._shared:
            return dict(self._shared["fitted"])
        m = self.model
        p_n = len(m.ia)
        kcol = np.zeros(p_n, dtype=np.intp) if m.kgroup is None else m.kgroup
        n_l_all = len(m.la)
        out: dict[int, _JudgeFit] = {}
        for code, (t, theta) in self.fits.items():
            n_p, y_p, _ = m.placed(t)
            st = m.strengths(t)
            d, k_n = len(theta), m.n_kappa
            gap = st[m.ia] - st[m.ib]
            x = np.zeros((p_n, d))
            x[np.arange(p_n), kcol] = gap
            x[:, k_n], x[:, k_n + 1] = m.first, m.own
            if m.fam is not None:
                x[:, k_n + 2] = m.fam
            if m.label is not None:  # α·label, theta's last (CompetenceModel._fit)
                x[:, d - 1] = m.label
            mu = special.expit(x @ theta)
            kap = theta[kcol]
            p0 = m.p0(theta, gap)  # without the own and family terms
            j_tt = -(x * (n_p * mu * (1.0 - mu))[:, None]).T @ x
            if m.fixed is None:  # by index sums: no dense (P, M) or (L, M) design
                c_l = t[2 * p_n : 2 * p_n + n_l_all]
                q = special.expit(st[m.la] - st[m.lb])
                a_t = -(x * (n_p * mu * (1.0 - mu) * kap)[:, None])
                a_t[np.arange(p_n), kcol] += y_p - n_p * mu
                j_ts = _contrast_sums(a_t, m.ia, m.ib, m.n_models)
                j_ss = -_pair_laplacian(c_l * q * (1.0 - q), m.la, m.lb, m.n_models)
                jac = np.block([[j_ss, np.zeros((m.n_models, d))], [j_ts, j_tt]])
            else:
                jac = j_tt
            free = m.fixed is None
            out[code] = _JudgeFit(n_p, st, x, mu, kap, kcol, gap, p0, free, np.linalg.pinv(jac).T)
        self._shared["fitted"] = out
        return dict(out)

    def _orders(self) -> tuple[NDArray[Any], ...]:
        """The fitted judges' judged orders at placed patterns (each row belongs to one
        judge): row, pattern, weight, pick of a, index into a (judge code x pattern)
        table, the residual ``y − μ`` and ``π`` without the own and family terms; then the
        labelled rows of the fitted judges: row, labelled model pair, human label, judge
        code."""
        if "orders" in self._shared:
            return tuple(self._shared["orders"])
        r, fits = self.rows, self._fitted()
        p_n = len(self.model.ia)
        n_codes = max(fits, default=-1) + 1
        placed = np.zeros((n_codes + 1, p_n), dtype=bool)  # last row: not fitted
        mu_of, p0_of = np.zeros((n_codes + 1, p_n)), np.zeros((n_codes + 1, p_n))
        for code, f in fits.items():
            placed[code], mu_of[code], p0_of[code] = f.n_p > 0, f.mu, f.p0
        gi = r.group[r.ri]
        gi = np.where((gi >= 0) & (gi < n_codes), gi, n_codes)
        o = placed[gi, r.pat]
        ri, pat, w, y = r.ri[o], r.pat[o], r.w[o], r.y[o]
        at = gi[o] * p_n + pat
        gl = r.group[r.lab_rows]
        gl = np.where((gl >= 0) & (gl < n_codes), gl, n_codes)
        lo = np.zeros(n_codes + 1, dtype=bool)
        lo[list(fits)] = True
        lo = lo[gl]
        out = (ri, pat, w, y, at, y - mu_of.ravel()[at], p0_of.ravel()[at],
               r.lab_rows[lo], r.lab[lo], r.human[lo], gl[lo])  # fmt: skip
        self._shared["orders"] = out
        return tuple(out)

    def columns(self, relation: Relation = "self", rung: int | None = None) -> NDArray[np.float64]:
        """Per row (:data:`ONE_STEP_COLUMNS`): the linearised numerator and the weight of
        the estimate's pairs (the two resampled), then for the point estimate only: its
        picks, the predicted picks, the weight of the selected pairs (the rung's, for a
        rung), the three pair indicators of the model's required counts, 1 per row and
        its judge's code + 1 (so a judge's totals name it: code = id / rows − 1)."""
        m, r = self.model, self.rows
        base = m.own if relation == "self" else (m.fam if m.fam is not None else 0 * m.own)
        sel = base if rung is None or m.rung is None else np.where(m.rung == rung, base, 0.0)
        p_n = len(m.ia)
        fits = self._fitted()
        # per fitted judge and pattern: μ, π without the own and family terms, the score
        # direction; per judge and model: the strengths and their direction (last row:
        # the rows of judges not fitted, which take no part)
        n_codes = max(fits, default=-1) + 1
        dir_of = np.zeros((n_codes + 1, p_n))
        st_of, vs_of = np.zeros((n_codes + 1, m.n_models)), np.zeros((n_codes + 1, m.n_models))
        for code, f in fits.items():
            d, k_n = f.x.shape[1], m.n_kappa
            # ∇Π over the selected patterns (+: picks a, −: picks b)
            dens = f.n_p * f.p0 * (1.0 - f.p0) * np.sign(sel)
            g_theta = np.zeros(d)
            g_theta[:k_n] = np.bincount(f.kcol, weights=dens * f.gap, minlength=k_n)
            g_theta[k_n] = float(np.sum(dens * m.first))
            if m.label is not None:
                g_theta[d - 1] = float(np.sum(dens * m.label))
            if f.free:
                by_model = _contrast_sums((dens * f.kap)[:, None], m.ia, m.ib, m.n_models)[0]
                grad = np.concatenate([by_model, g_theta])
            else:
                grad = g_theta
            v = f.pinv_t @ grad
            dir_of[code] = f.x @ v[-d:]  # each pattern's score direction
            if m.fixed is None:
                st_of[code], vs_of[code] = f.st, v[: m.n_models]
        ri, pat, w, y, at, resid, p0_o, rows_l, lab, human, gl = self._orders()
        # every order's w (picks − Π + (y − μ)·direction); picks and Π only on the
        # selected orders (0 elsewhere, where adding them changes nothing)
        term = resid * dir_of.ravel()[at]
        s_p = sel[pat]
        on = np.flatnonzero(s_p != 0)
        pos = s_p[on] > 0
        y_on, p0_on, w_on = y[on], p0_o[on], w[on]
        picks = np.where(pos, y_on, 1.0 - y_on)
        pred = np.where(pos, p0_on, 1.0 - p0_on)
        term[on] = picks - pred + term[on]
        term *= w
        out = np.empty((r.n, len(ONE_STEP_COLUMNS)))
        num = out[:, 0]
        num[:] = np.bincount(ri, weights=term, minlength=r.n)
        if m.fixed is None and len(rows_l):  # the labels' scores, through the strengths
            la, lb = m.la[lab], m.lb[lab]
            q_l = special.expit(st_of[gl, la] - st_of[gl, lb])
            b_l = vs_of[gl, la] - vs_of[gl, lb]
            num += np.bincount(rows_l, weights=(human - q_l) * b_l, minlength=r.n)
        den_on = np.flatnonzero((base if relation == "family" else m.own)[pat] != 0)
        out[:, 1] = np.bincount(ri[den_on], weights=w[den_on], minlength=r.n)
        ri_on = ri[on]
        out[:, 2] = np.bincount(ri_on, weights=w_on * picks, minlength=r.n)
        out[:, 3] = np.bincount(ri_on, weights=w_on * pred, minlength=r.n)
        out[:, 4] = np.bincount(ri_on, weights=w_on, minlength=r.n)
        if "rest" not in self._shared:  # the required counts' indicators, rows, judge
            entered = r.group >= 0
            self._shared["rest"] = np.column_stack(
                [r.ind * entered[:, None], entered, np.where(entered, r.group + 1, 0)]
            ).astype(float)
        out[:, 5:] = self._shared["rest"]
        return out

    def judge_of(self, t: NDArray[np.float64]) -> int:
        """The judge's code from its totals of :meth:`columns` (-1: no rows)."""
        return int(np.rint(t[9] / t[8])) - 1 if t[8] > 0 else -1


#: the columns of :meth:`_OneStep.columns`; the first two are resampled
ONE_STEP_COLUMNS = ("numerator", "weight", "picks", "predicted", "selected", "own", "other",
                    "family", "rows", "judge")  # fmt: skip


def calibrated_parts(
    pairs: pd.DataFrame,
    codes: NDArray[np.intp],
    labels: tuple[str, ...],
    *,
    strengths: Mapping[str, float] | None = None,
    side: NDArray[np.int8] | None = None,
    family_side: NDArray[np.int8] | None = None,
    stratum: str | None = None,
    label_term: NDArray[np.bool_] | None = None,
    lapse_term: NDArray[np.int8] | None = None,
    one_step: bool | None = False,
) -> tuple[Sums, NDArray[np.intp], dict[str, str], NDArray[np.float64], CompetenceModel]:
    """Per-row sums of the calibrated statistic (:class:`CompetenceModel`), group codes,
    per-judge problems, each fitted row's predicted P(a) without the own (and family)
    term (order-averaged; NaN else), and the model. ``strengths`` None: learnt from each
    judge's labelled pairs, in the point estimate and in every resample.
    ``family_side`` (:func:`favored_side` with ``relation="family"``): adds a family
    term to the competence model where any pair holds a family member's answer.
    ``stratum`` (a column, e.g. ``category``; see :func:`stratum_column`): a
    discrimination ``κ_c`` per stratum with enough pairs (:func:`_stratum_groups`) and
    the :func:`strata_warning` of each judge. ``label_term`` (per judge code): condition
    that judge's competence on each pair's human label (``α·label``; see
    :func:`_at_ceiling`). ``lapse_term`` (per judge code: its slot, +1 first or −1
    second, or 0): give that judge's competence a slot lapse (:func:`lapse_test`; exact
    refits only)."""
    n = len(pairs)
    pred_a = np.full(n, np.nan)
    if side is None:
        side = favored_side(pairs, relation="self")
    fam_side = (
        np.zeros(n, dtype=np.int8) if family_side is None else np.asarray(family_side, np.int8)
    )
    problems: dict[str, str] = {}
    # one code per distinct name over both sides (-1 = missing): the names are looked up
    # once each, not once per row
    sides_codes, side_names = pd.factorize(
        pd.concat([pairs["model_a"], pairs["model_b"]], ignore_index=True)
    )
    ca, cb = sides_codes[:n], sides_codes[n:]
    name_of = np.asarray(side_names, dtype=object)

    def names_in(rows: NDArray[np.bool_]) -> NDArray[np.object_]:
        """The distinct known names of either side in ``rows``."""
        used = np.unique(np.r_[ca[rows], cb[rows]])
        return name_of[used[used >= 0]]

    human = pairs["human"].to_numpy(float) if "human" in pairs.columns else np.full(n, np.nan)
    if strengths is None:
        has = np.isfinite(human)
        models = sorted({str(m) for m in names_in(has) if isinstance(m, str)})
    else:
        models = sorted(str(m) for m in strengths)
    index = {m: i for i, m in enumerate(models)}
    # each side's model index, -1 where unknown (a dict lookup per distinct name)
    lookup = np.array([index.get(m, -1) for m in name_of] + [-1], dtype=np.intp)
    ia, ib = lookup[ca], lookup[cb]
    y1 = pairs["p_a_first"].to_numpy(float)
    y2 = pairs["p_a_second"].to_numpy(float)
    ok1, ok2 = np.isfinite(y1), np.isfinite(y2)
    k_orders = ok1.astype(float) + ok2.astype(float)
    if strengths is not None:
        _check_strengths(strengths, names_in(k_orders > 0))
    pair_ok = (ia >= 0) & (ib >= 0) & (ca != cb)
    usable = pair_ok & (k_orders > 0)
    labelled = np.zeros(n, bool)
    every = usable.copy()  # before the chosen judges' rows are narrowed: the table's size
    if strengths is None:  # a pair enters where its judge's labels place both models
        labelled = usable & np.isfinite(human)
        judged = np.flatnonzero(usable & (codes >= 0))
        if len(judged):
            seen = np.zeros((len(labels), len(models)), dtype=bool)  # judge x model
            lrows = np.flatnonzero(labelled & (codes >= 0))
            seen[codes[lrows], ia[lrows]] = True
            seen[codes[lrows], ib[lrows]] = True
            cj = codes[judged]
            usable[judged] = seen[cj, ia[judged]] & seen[cj, ib[judged]]
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
    # the slot of the judges whose competence has a slot lapse (0: none)
    lapsing = lapse_term is not None and bool(np.any(lapse_term))
    ldir = np.zeros(n, dtype=np.int8)
    if lapse_term is not None and lapsing:
        ldir = np.where(codes >= 0, np.asarray(lapse_term, np.int8)[codes], 0).astype(np.int8)
    names: tuple[str, ...] = ()
    scode = np.zeros(n, dtype=np.intp)
    if stratum is not None:
        col = pairs[stratum].astype(object)
        col = col.where(col.notna(), "(none)").astype(str)
        scode, uniques = pd.factorize(col, sort=True)
        names = tuple(str(u) for u in uniques)
        scode = scode.astype(np.intp)
    # one row per judged order (weight 1 / orders judged), keyed by its pattern
    j1, j2 = np.flatnonzero(usable & ok1), np.flatnonzero(usable & ok2)
    ri = np.concatenate([j1, j2])
    yy = np.concatenate([y1[j1], y2[j2]])
    first = np.repeat(np.array([1, -1], dtype=np.int8), [len(j1), len(j2)])
    w = 1.0 / k_orders[ri]
    key_columns = [ia[ri], ib[ri], first, side[ri], fam_side[ri], rung[ri], scode[ri], hdir[ri],
                   ldir[ri]]  # fmt: skip
    pats, pat = _unique_columns(key_columns)
    lab_rows = np.flatnonzero(labelled)
    lpairs, lab = _unique_columns([ia[lab_rows], ib[lab_rows]])
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
    model = CompetenceModel(
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
        conditioned=(
            tuple(labels[c] for c in np.flatnonzero(np.asarray(label_term, bool)))
            if conditioned
            else ()
        ),
        lapse=pats[:, 8].astype(float) if lapsing else None,
        lapsed=(
            tuple(labels[c] for c in np.flatnonzero(np.asarray(lapse_term)))
            if lapse_term is not None and lapsing
            else ()
        ),
    )
    p, n_l = len(pats), len(lpairs)
    # the table's patterns and labelled model pairs, over every judge's usable rows (not
    # only the chosen judges', whose label term and labels narrow them): the same for
    # any choice of judges, so the choice of resampling is too
    e1, e2 = np.flatnonzero(every & ok1), np.flatnonzero(every & ok2)
    er = np.concatenate([e1, e2])
    efirst = np.repeat(np.array([1, -1], dtype=np.int8), [len(e1), len(e2)])
    elab = np.flatnonzero(every & np.isfinite(human))
    e_keys = [ia[er], ib[er], efirst, side[er], fam_side[er], rung[er], scode[er]]
    size = len(_unique_columns(e_keys)[0]) + len(_unique_columns([ia[elab], ib[elab]])[0])
    model = replace(model, table_size=size)
    if one_step is None:
        one_step = size * table_judges(pairs, labels) > MAX_PATTERNS
    elif not one_step and p + n_l > MAX_PATTERNS:
        # the limit counts the patterns of the fit made, with the label term's and the
        # lapse's splits: the refit's memory and time grow with them (a table of 1,638
        # patterns and pairs without them, 4,248 with, took 1.7 GB and 123 s for 2,000
        # resamples, where 2,202 took 0.8 GB and 32 s)
        why = f"{p} covariate patterns and {n_l} labelled model pairs"
        terms = {"label term": "label=False"} if conditioned else {}
        if lapsing:
            terms["slot lapse"] = "lapse=False"
        if terms:
            why += (
                f" ({len(_unique_columns(key_columns[:7])[0])} patterns without the splits "
                f"of the {' and '.join(terms)}; set {' and '.join(terms.values())} to fit "
                "without them)"
            )
        why += f": more than the {MAX_PATTERNS} the competence model's exact bootstrap handles"
        return (np.zeros((n, 2)), np.full(n, -1, dtype=np.intp),
                {str(label): why for label in labels}, pred_a, model)  # fmt: skip
    values: Sums
    ind = np.column_stack([usable & (side != 0), usable & (side == 0), usable & (fam_side != 0)])
    ind = ind.astype(float)

    n_j = len(labels)

    def any_per_judge(rows: NDArray[np.bool_], of: NDArray[np.intp]) -> NDArray[np.bool_]:
        """Per judge code: whether any of ``rows`` has that code in ``of``."""
        return np.bincount(of[rows & (of >= 0)], minlength=n_j)[:n_j] > 0

    def all_totals() -> NDArray[np.float64]:
        """The model's sums over each judge's rows (judge code x :attr:`~CompetenceModel.k`),
        from the rows behind them (without a rows x columns matrix)."""
        gi = group[ri]
        o = gi >= 0
        at = gi[o] * p + pat[o]
        gl = group[lab_rows]
        lo = gl >= 0
        at_l = gl[lo] * n_l + lab[lo]
        inside = group >= 0
        return np.concatenate([
            np.bincount(at, weights=w[o], minlength=n_j * p).reshape(n_j, p),
            np.bincount(at, weights=(w * yy)[o], minlength=n_j * p).reshape(n_j, p),
            np.bincount(at_l, minlength=n_j * n_l).reshape(n_j, n_l).astype(float),
            np.bincount(at_l, weights=human[lab_rows][lo], minlength=n_j * n_l).reshape(n_j, n_l),
            np.column_stack([
                np.bincount(group[inside], weights=ind[inside, c], minlength=n_j)
                for c in range(ind.shape[1])
            ]).reshape(n_j, ind.shape[1]),
        ], axis=1)  # fmt: skip

    if one_step:  # the statistics' columns come from _OneStep, per statistic
        values = np.zeros((n, 0))
    else:
        values = _values_matrix(
            n, model.k, (ri, pat, w, w * yy), (lab_rows, 2 * p + lab, human[lab_rows], n_l),
            {model.col_own: usable & (side != 0), model.col_other: usable & (side == 0),
             model.col_family: usable & (fam_side != 0)},
        )  # fmt: skip
    totals_of = all_totals() if one_step else np.zeros((n_j, 0))
    fits: dict[int, tuple[NDArray[np.float64], NDArray[np.float64]]] = {}
    lab_group = np.where(labelled, codes, -1)
    given = pairs["p_a"].to_numpy(float) if "p_a" in pairs.columns else np.full(n, np.nan)
    has_orders = any_per_judge(ok1 | ok2, codes)
    has_given = any_per_judge(np.isfinite(given), codes)
    has_labels = any_per_judge(labelled, lab_group)
    has_own, has_other = any_per_judge(side != 0, group), any_per_judge(side == 0, group)
    has_family = any_per_judge(fam_side != 0, group)
    p0_of = np.zeros((n_j, p))  # each fitted judge's patterns' P(a) without own / family
    for code, label in enumerate(labels):
        if not has_orders[code]:
            if has_given[code]:
                problems[str(label)] = (
                    "its verdicts have no presentation order (p_a only); the competence "
                    "model has a position term per order — give p_a_first / p_a_second"
                )
            else:
                problems[str(label)] = "no verdicts (p_a_first / p_a_second) from this judge"
            continue
        if strengths is None and not (
            one_step and has_labels[code] and model.finite(totals_of[code])
        ):  # (one-step, i.e. large tables: called only for its message, where it fails)
            try:
                label_strengths(pairs[lab_group == code])
            except EstimationError as exc:
                problems[str(label)] = str(exc)
                continue
        if not has_other[code] or not (has_own[code] or has_family[code]):
            continue  # the required counts say which kind of pair is missing
        # A judge without own pairs (its model's answers absent) is still fitted where it
        # has family pairs: its own column is 0 on every pattern it weighs, so the
        # pseudo-inverse Newton step (:func:`_newton`; the one-step Jacobian likewise)
        # leaves τ at 0 — the model without the own term — and φ, κ, β are its fit;
        # its self-preference is then refused by the required own-pair count.
        totals = totals_of[code] if one_step else np.asarray(values[group == code].sum(axis=0))
        theta, g = model.fit(totals)
        if not np.all(np.isfinite(theta)) or not np.all(np.isfinite(g)):
            problems[str(label)] = "the competence model could not be fitted (no finite fit)"
            continue
        fits[code] = (totals, theta)
        p0_of[code] = model.p0(theta, g)
    if fits:  # each fitted judge's rows: the order-weighted sum of P(a) over their orders
        fitted = np.zeros(n_j + 1, dtype=bool)  # (the last entry: group -1)
        fitted[list(fits)] = True
        rows_fit = fitted[group]
        o = rows_fit[ri]
        summed = np.bincount(ri[o], weights=w[o] * p0_of[group[ri[o]], pat[o]], minlength=n)
        pred_a[rows_fit] = summed[rows_fit]
    for code, label in enumerate(labels):  # a judge that cannot be fitted gets no number
        if str(label) in problems:
            group[codes == code] = -1
            fits.pop(code, None)
    if one_step:
        rows_of = _OrderRows(ri=ri, pat=pat, w=w, y=yy, lab_rows=lab_rows, lab=lab,
                             human=human[lab_rows], group=group, n=n, ind=ind)  # fmt: skip
        model = replace(model, one_step=_OneStep(model, rows_of, fits))
    return values, group, problems, pred_a, model


#: the calibrated family preference (the family term of the same competence model)
FAMILY_CALIBRATED = "family_preference_calibrated"
#: the fewest pairs with neither the judge's own nor a family answer below which a family
#: pick rate of 0 or 1 leaves the competence unlearnt (:meth:`CompetenceModel.warnings_family`)
SEPARATED_MIN = 5
#: the count beside the calibrated estimate's ``n`` (which counts :data:`OWN_PAIRS` or
#: :data:`FAMILY_PAIRS`, the words of :mod:`recuse.metrics.self_preference`)
COMPETENCE_PAIRS = "pairs without its own answer (its competence is learnt on them)"

_METHOD = (
    "own answer minus the rate its own competence predicts on the same pairs had "
    "authorship not mattered; competence = logit P(picks a) = κ (s_a − s_b) + β·first, "
    "s = Bradley–Terry strengths of the models from the human labels (human ties "
    "count ½ a win to each model, whatever human_ties says), fitted on all "
    "its pairs with an own-answer term τ·own{family} (weighted binomial likelihood, each "
    "judged order a row of weight 1/orders); the interval refits the strengths and "
    "κ, β, τ exactly in every resample"
)
_EXACT_WORDS = "refits the strengths and κ, β, τ exactly in every resample"
_ONE_STEP_INTERVAL = (
    "takes one Newton step from the full-sample fit of the strengths and κ, β, τ in every "
    "resample (a first-order refit, exact on the full sample)"
)
_ONE_STEP_WORDS = (
    "; one-step resamples: {n} covariate patterns and labelled model pairs for the "
    "table's {judges} judge(s), more than the {most} refitted exactly"
)


def table_judges(pairs: pd.DataFrame, labels: Sequence[object]) -> int:
    """How many judges the exact-or-one-step choice counts (times the table's patterns,
    :attr:`CompetenceModel.table_size`): every judge of the table, not only those
    chosen (``labels``), so that choosing fewer judges does not switch
    a judge's resamples from one Newton step to exact refits and move its interval
    (GPT-4 on llmbar-mtbench read [−0.123, +0.050] in the audit and [−0.108, +0.064]
    with ``--judge gpt-4 --judge ChatGPT``); at least 1."""
    present = pairs["judge"].nunique() if "judge" in pairs.columns else 0
    return max(int(present), len(labels), 1)


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
    one_step: bool | None = None,
    lapse: LapseTerm = None,
) -> tuple[list[MetricSpec], dict[str, str]]:
    """The competence-calibrated self-preference of every judge in ``labels``, then (with
    ``family_side``) its calibrated family preference, then (``rungs``) the parts of
    :data:`CALIBRATED_RUNGS`, all from one competence model per judge; and, per judge
    that could not be fitted, why (see :func:`calibrated_self_preference`).
    ``one_step``: how the bootstrap refits, ``lapse``: whether the slot lapse is tested
    for (see :func:`calibrated_self_preference`)."""
    how: dict[str, Any] = dict(strengths=strengths, side=side, family_side=family_side,
                               stratum=stratum_column(pairs, stratum))  # fmt: skip
    values, group, problems, _, model = gated_parts(
        pairs, codes, labels, label=label, one_step=one_step, lapse=lapse, **how
    )
    own_req = (model.col_own, OWN_PAIRS)
    other_req = (model.col_other, COMPETENCE_PAIRS)
    held = "" if strengths is None else " (the strengths given are held fixed)"
    fam_words = "" if model.fam is None else " and a family term φ·family"
    held += strata_words(model)
    held += label_words(model)
    held += lapse_words(model)

    one = model.one_step
    # chosen by calibrated_parts; the estimate and its family preference carry it (the
    # rungs, its parts, are resampled the same way and not marked)
    refit: Refit = "exact" if one is None else "one-step"

    def stat(
        name: str,
        combine: Any,
        required: tuple[tuple[int, str], ...],
        relation: Relation = "self",
        rung: int | None = None,
    ) -> GroupedStatistic:
        if one is None:
            return GroupedStatistic(
                name=name, values=values, group=group, labels=labels, combine=combine,
                interval=CALIBRATED_INTERVAL, required=required,
                unfit=None if model.fixed is not None else model.unfit,
            )  # fmt: skip
        # one-step: the linearised numerator and the weight (the only two columns
        # resampled), then the columns of the components and the required counts
        where = {model.col_own: 5, model.col_other: 6, model.col_family: 7}
        return GroupedStatistic(
            name=name, values=one.columns(relation, rung), group=group, labels=labels,
            combine=ratio, interval=CALIBRATED_INTERVAL, boot_k=2,
            required=tuple((where[c], d) for c, d in required),
        )  # fmt: skip

    def rates(t: NDArray[np.float64], own: str, rung: bool = False) -> dict[str, float]:
        """One-step components from :meth:`_OneStep.columns`' totals, as the model's."""
        n_all, picks, pred, n_sel = t[1], t[2], t[3], t[4]
        if rung:
            if not n_sel:
                return {"rung_share": 0.0}
            return {
                "rung_share": float(n_sel / n_all) if n_all else float("nan"),
                "own_pick_rate": float(picks / n_sel),
                "predicted_own_pick_rate": float(pred / n_sel),
            }
        # the self headline's count of pairs without its own answer (as the model's)
        other = {"pairs_without_own": float(t[ONE_STEP_COLUMNS.index("other")])}
        extra = other if own == "own" else {}
        if not n_all:
            return {
                f"{own}_pick_rate": float("nan"), f"predicted_{own}_pick_rate": float("nan"),
            } | extra  # fmt: skip
        return {
            f"{own}_pick_rate": float(picks / n_all),
            f"predicted_{own}_pick_rate": float(pred / n_all),
        } | extra

    warned: dict[int, tuple[str, ...]] = {}
    fam_warned: dict[int, tuple[str, ...]] = {}
    if one is not None:  # each judge's caveats from its model sums, looked up by judge
        warned = {code: model.warnings(t) for code, (t, _) in one.fits.items()}
        fam_warned = {code: model.warnings_family(t) for code, (t, _) in one.fits.items()}

    def after(f: Callable[[NDArray[np.float64]], Any], own: str = "own", rung: bool = False,
              warn: bool = False) -> Callable[[NDArray[np.float64]], Any]:  # fmt: skip
        """The model's components (or warnings); one-step: from the leading columns."""
        if one is None:
            return f
        if warn:
            said = fam_warned if own == "family" else warned
            return lambda t: said.get(one.judge_of(t), ())
        return lambda t: rates(t, own, rung)

    if one is not None:
        n_pat, n_judges = model.table_size, table_judges(pairs, labels)
        held += (
            _ONE_STEP_WORDS.format(n=n_pat, judges=n_judges, most=MAX_PATTERNS)
            if n_pat * n_judges > MAX_PATTERNS
            else "; one-step resamples (asked for)"
        )
    method = "Competence-calibrated self-preference: the judge's rate of picking its " + (
        _METHOD.format(family=fam_words) + held
    )
    if one is not None:
        method = method.replace(_EXACT_WORDS, _ONE_STEP_INTERVAL)
    specs = [
        MetricSpec(CALIBRATED, stat(CALIBRATED, model.combine, (own_req, other_req)), method,
                   after(model.components), warnings=after(model.warnings, warn=True),
                   n_count=OWN_PAIRS, labelled=True, refit=refit)
    ]  # fmt: skip
    if family_side is not None:
        fam_method = (
            "Competence-calibrated family preference: the judge's rate of picking the answer "
            "of another model of its family (against a model from outside it) minus the rate "
            "its competence predicts, from the same competence model as its self-preference, "
            "where its own answers have their own term apart from its family's (a judge "
            "none of whose pairs hold its own answer: the model without that term); "
            + _METHOD.split("; ", 1)[1].format(family=" and a family term φ·family")
            + held
        )
        if one is not None:
            fam_method = fam_method.replace(_EXACT_WORDS, _ONE_STEP_INTERVAL)
        fam_req = ((model.col_family, FAMILY_PAIRS), other_req)
        specs.append(
            MetricSpec(FAMILY_CALIBRATED,
                       stat(FAMILY_CALIBRATED, model.combine_family, fam_req, "family"),
                       fam_method, after(model.components_family, "family"), n_count=FAMILY_PAIRS,
                       labelled=True, refit=refit,
                       warnings=after(model.warnings_family, "family", warn=True))
        )  # fmt: skip
    if rungs:
        for r, (name, words) in enumerate(CALIBRATED_RUNGS.items()):
            specs.append(
                MetricSpec(name, stat(name, model.combine_rung(r), (own_req, other_req),
                                      "self", r),
                           f"Part of the calibrated self-preference: {words}",
                           after(model.components_rung(r), rung=True), n_count=OWN_PAIRS,
                           labelled=True,
                           constant=_empty_rung(after(model.components_rung(r), rung=True)))
            )  # fmt: skip
    return specs, problems


def _empty_rung(
    parts: Callable[[NDArray[np.float64]], dict[str, float]],
) -> Callable[[NDArray[np.float64]], str | None]:
    """Why a rung's part is 0 by construction, from its components (``parts``, which
    give no own-pick rate when none of the judge's own pairs is on the rung: LLMBar's
    MT-Bench set has no human ties), said instead of the zero-width interval's "add
    harder pairs", which would not help; None when some are."""

    def why(t: NDArray[np.float64]) -> str | None:
        if "own_pick_rate" in parts(t):
            return None
        return (
            "none of its own pairs is on this rung: the part is 0 by construction, not a "
            "measurement"
        )

    return why


#: whether the competence model conditions on each pair's human label: "auto" for the
#: judges at its ceiling (:func:`_at_ceiling`), True for every judge, False for none
LabelTerm = Literal["auto"] | bool
#: whether the competence model may gain a slot lapse: None tests each judge for one
#: (:func:`lapse_test`), False never models one (where the test fires, a warning says so)
LapseTerm = Literal[False] | None


def _at_ceiling(
    totals: Mapping[int, NDArray[np.float64]], model: CompetenceModel, n_labels: int
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
    for code, t in totals.items():
        if not model.finite(t):  # no calibrated estimate (label_strengths says why)
            continue
        n_own, _, pred = model.parts(t)
        rate = float(pred / n_own) if n_own else float("nan")
        out[code] = bool(np.isfinite(rate) and not 1 - CEILING < rate < CEILING)
    return out


def label_conditioned(
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
    # the fit either bootstrap path makes: past the exact refit's limit the one-step
    # fits hold each judge's model sums (the exact path's rows would be refused there)
    first = calibrated_parts(pairs, codes, labels, one_step=None, **parts)
    return _ceiling_gate(_judge_totals(first, len(labels)), first[4], len(labels))


def gated_parts(
    pairs: pd.DataFrame,
    codes: NDArray[np.intp],
    labels: tuple[str, ...],
    *,
    label: LabelTerm,
    one_step: bool | None,
    lapse: LapseTerm = None,
    **how: Any,
) -> tuple[Sums, NDArray[np.intp], dict[str, str], NDArray[np.float64], CompetenceModel]:
    """:func:`calibrated_parts` with the label term on the judges ``label`` conditions
    (:func:`label_conditioned`) and the slot lapse on the judges whose likelihood calls
    for it (:func:`_lapse_gate`; none with ``one_step=True`` or ``lapse=False``), the
    preparation made once where it can be: the fit without either (with ``one_step``
    False, exact, else ``one_step=None``) decides the lapse and, with ``label="auto"``,
    the label term (:func:`_ceiling_gate`), and where it gives neither to any judge
    that fit is the answer when its bootstrap is the one asked for. ``how``: the other
    options of :func:`calibrated_parts`."""
    if lapse is not None and lapse is not False:
        raise ConfigError(
            f"lapse must be None (test each judge for a slot lapse) or False (never model "
            f"one), got {lapse!r}"
        )
    # with one_step=False the gates read the exact fit: read from one_step=None's, a table
    # past MAX_PATTERNS times its judges but within the exact refit's limit was refitted
    # exactly without its judges' lapse (one-step fits test none) and without a warning
    first = calibrated_parts(
        pairs, codes, labels, one_step=False if one_step is False else None, **how
    )
    totals = _judge_totals(first, len(labels))  # each judge's sums, for both gates
    tested = one_step is not True and lapse is None
    slots = _lapse_gate(totals, first[4], len(labels)) if tested else None
    if label is not False and label is not True:  # "auto": the fit without a label term
        gate = _ceiling_gate(totals, first[4], len(labels))
    else:
        gate = label_conditioned(pairs, codes, labels, label, **how)
    if gate is None and slots is None and one_step is not True:
        out = first  # no judge needs the label term or the lapse: that fit
    else:
        out = calibrated_parts(
            pairs, codes, labels, one_step=one_step, label_term=gate, lapse_term=slots, **how
        )
    if lapse is False:
        out = (*out[:4], replace(out[4], lapse_off=True))
    return out


def _judge_totals(
    parts: tuple[Sums, NDArray[np.intp], Any, Any, CompetenceModel], n_labels: int
) -> dict[int, NDArray[np.float64]] | None:
    """Each judge's model sums in :func:`calibrated_parts`' answer, by judge code: the
    one-step fits' where its resamples take one Newton step, else the sums of its rows;
    None where it holds neither (its rows refused by the exact refit's size)."""
    values, group, _, _, model = parts
    if model.one_step is not None:
        return {code: t for code, (t, _) in model.one_step.fits.items()}
    if not (values.shape[0] and values.shape[1] == model.k):
        return None
    return {
        code: values[group == code].sum(axis=0) for code in range(n_labels) if (group == code).any()
    }


def _ceiling_gate(
    totals: Mapping[int, NDArray[np.float64]] | None, model: CompetenceModel, n_labels: int
) -> NDArray[np.bool_] | None:
    """:func:`label_conditioned`'s answer from the judges' sums (:func:`_judge_totals`)
    of :func:`calibrated_parts` without a label term (:func:`gated_parts`' first fit): the
    judges at the ceiling (:func:`_at_ceiling`), or None."""
    if totals is None:
        return None
    gate = _at_ceiling(totals, model, n_labels)
    return gate if gate.any() else None


#: the slot lapse enters a judge's competence model (:func:`lapse_test`) where its
#: maximum-likelihood share of lapsed orders is at least :data:`LAPSE_MIN` and the
#: likelihood ratio against the model without it at least :data:`LAPSE_LR`. Under no
#: lapse λ = 0 is on its boundary, so with one order per pair the ratio's null
#: distribution is ½χ²₀ + ½χ²₁ (Self & Liang 1987), on which 10.83 is p = 0.0005 (p =
#: 0.001 would be 9.55); on plain planted judges judged in one order
#: (``benchmarks/lapse_null.py``: κ 0.3–20, β 0–1.5, 80 prompts, 1,440 tables) it
#: reached 2.71, 5.41 and 10.83 in 0.047, 0.013 and 0.0007 of tables (the mixture's
#: 0.05, 0.01, 0.0005). With both orders judged each weighs ½ in the likelihood and
#: the ratio is smaller: over 360 such tables with 0/1 picks it reached 2.71 in 0.003
#: and 5.41 in none (largest 2.99), with probability verdicts none (largest 0.44)
LAPSE_MIN = 0.1
LAPSE_LR = 10.83


@dataclass(frozen=True)
class LapseTest:
    """:func:`lapse_test`'s answer for one judge: the slot (+1 first shown, −1 second),
    the fitted share ``λ`` of its orders that take that slot's answer whatever the pair,
    the likelihood-ratio statistic against the model without it, and whether the model
    gains it (``λ ≥`` :data:`LAPSE_MIN` and LR ``≥`` :data:`LAPSE_LR`)."""

    slot: int
    share: float
    lr: float

    @property
    def lapsed(self) -> bool:
        return self.share >= LAPSE_MIN and self.lr >= LAPSE_LR


def lapse_test(model: CompetenceModel, t: NDArray[np.float64]) -> LapseTest:
    """Whether a judge (its totals ``t`` of ``model``, which has no lapse) takes the answer
    in one slot on a share of its orders whatever the pair: the model's position term is
    a shift in log-odds, whose slot preference vanishes as the strength gap grows; such
    a judge's does not, and the logistic curve fitted to it is too flat where the gaps
    are large — its own pairs, when its model is strong — so its self-preference reads
    low (:func:`recuse.simulate.self_preference.simulate_slot_lapse_judge`, half of its
    orders lapsed, its answers preferred 95% of the time, no self term: −0.035 on
    average over 20 tables, 0.6 of its 90% intervals holding 0; −0.038 and 0.45 with
    probability verdicts; a planted +0.012 read −0.019). The slot is the one its
    position term favours; the model with the lapse (:func:`_lapse_fit`) is compared
    with the model without by their likelihoods. ``docs/self-preference.md`` has what
    the lapse model reads on the same tables."""
    n, y, _ = model.placed(t)
    theta, g = model._fit(t, n, y)
    slot = 1 if not theta[model.n_kappa] < 0 else -1
    x = model.design(g)
    plain = float(_loglik(special.expit(x @ theta), n, y))
    in_slot, every = model.first == slot, np.ones(len(n), dtype=bool)
    mixed = _lapse_fit(x, n, y, in_slot, every)
    lam = float(mixed[-1])
    p = lam * in_slot + (1.0 - lam) * special.expit(x @ mixed[:-1])
    lr = 2.0 * (float(_loglik(p, n, y)) - plain)
    return LapseTest(
        slot, lam if np.isfinite(lam) else 0.0, max(lr, 0.0) if np.isfinite(lr) else 0.0
    )


def lapse_warning(test: LapseTest, *, off: bool = False) -> str:
    """What a result says where a judge's slot lapse is not modelled: ``off``, by
    ``lapse=False``, else by one-step resamples (whose linearisation has no lapse)."""
    which = "first" if test.slot > 0 else "second"
    fix = (
        "lapse=False keeps it out of the model (the default, lapse=None, models it where "
        "the resamples are refitted exactly)"
        if off
        else "the exact refit models the lapse: audit fewer judges or models (one-step "
        "resamples are used past the exact refit's size)"
    )
    return (
        f"slot lapse not modelled: on about {share_percent(test.share, 0)} of its orders it "
        f"takes the answer shown {which} whatever the pair (likelihood ratio "
        f"{test.lr:,.1f} against the position term alone), which the position term cannot "
        "fit; with its answers often the better ones the estimate then reads low (−0.035 "
        f"on average in a simulation with half its orders lapsed and no self term) — {fix}"
    )


def _lapse_gate(
    totals: Mapping[int, NDArray[np.float64]] | None, model: CompetenceModel, n_labels: int
) -> NDArray[np.int8] | None:
    """Per judge code, from the judges' sums (:func:`_judge_totals`) of
    :func:`calibrated_parts` without a lapse: the slot of the judges whose competence
    gains a slot lapse (:func:`lapse_test`), 0 for the others; None where none does, or
    where the resamples take one Newton step (the lapse is then a warning,
    :meth:`CompetenceModel.warnings`)."""
    if totals is None or model.one_step is not None:
        return None
    out = np.zeros(n_labels, dtype=np.int8)
    for code, t in totals.items():
        if not model.finite(t):
            continue
        test = lapse_test(model, t)
        if test.lapsed:
            out[code] = test.slot
    return out if out.any() else None


def lapse_words(model: CompetenceModel) -> str:
    """The method's words on the slot lapse ('' without one and with the test on)."""
    if model.lapse_off:
        return "; slot lapse not modelled (lapse=False)"
    if model.lapse is None:
        return ""
    return (
        "; where a judge takes the answer in one slot on a share λ of its orders whatever "
        f"the pair (here {', '.join(model.lapsed)}: a slot lapse, which the position term, a "
        "shift in log-odds, cannot fit), P(picks a) = λ·[a in that slot] + (1 − λ)·the "
        "curve above, by maximum likelihood; λ and the slot are in its components (slot_lapse, "
        "slot_lapse_slot)"
    )


def label_words(model: CompetenceModel) -> str:
    """The method's words on the label term ('' without one)."""
    if model.label is None:
        return ""
    # one method serves every judge of the table: name those whose competence is
    # conditioned, or the words read as if every judge's were (GPT-3.5's said so on
    # llmbar-mtbench, where only GPT-4's is)
    who = f"; here that of {', '.join(model.conditioned)}" if model.conditioned else ""
    return (
        "; near its ceiling, a judge's competence is conditioned on each pair's human label "
        f"(+ α·label, label = +1 / −1 / 0 when the human prefers a / b / neither{who}), so "
        "a judge that follows the label but for a fixed few per cent is predicted on the "
        "same pairs"
    )


def strata_words(model: CompetenceModel) -> str:
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
    one_step: bool | None = None,
    lapse: LapseTerm = None,
) -> tuple[MetricSpec, dict[str, str]]:
    """The competence-calibrated self-preference of every judge in ``labels`` and, per
    judge that could not be fitted, why (see :func:`calibrated_self_preference`)."""
    specs, problems = calibrated_specs(
        pairs, codes, labels, strengths=strengths, side=side, family_side=family_side,
        stratum=stratum, label=label, one_step=one_step, lapse=lapse,
    )  # fmt: skip
    return specs[0], problems


def calibrated_self_preference(
    pairs: pd.DataFrame,
    *,
    judge: str | None = None,
    strengths: Mapping[str, float] | None = None,
    boot: Resampling = Resampling(),
    min_n: int = 5,
    families: Families | None = None,
    selves: Mapping[str, str] | None = None,
    stratum: str | None = "auto",
    label: LabelTerm = "auto",
    one_step: bool | None = None,
    lapse: LapseTerm = None,
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
    ``π`` at the refit. Where the model has more than :data:`MAX_PATTERNS` covariate
    patterns and labelled model pairs, times the judges (``one_step=None``), or with
    ``one_step=True``,
    each resample instead takes one Newton step from the full-sample fit (:class:`_OneStep`:
    two resampled sums per judge, a first-order refit); ``one_step=False`` refits exactly
    or, past :data:`MAX_PATTERNS` patterns and labelled model pairs of the judges chosen
    (not times the judges; the label term's and the lapse's splits of the patterns
    counted: the refit's memory and time grow with them), gives no estimate.
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

    ``lapse`` (default None): each judge is tested for a slot lapse (:func:`lapse_test`),
    taking the answer in one slot on a share ``λ`` of its orders whatever the pair, and
    where the test fires its competence is ``P(picks a) = λ·[a in the slot] + (1 − λ)·``
    the model above, in the estimate and every exact resample. False: never (the method
    says "slot lapse not modelled (lapse=False)", and where the test fires a warning).

    ``components``: ``own_pick_rate`` and ``predicted_own_pick_rate``. ``warnings``
    say, with both ranges of strength gaps, when most of its own pairs lie far beyond
    the gaps its competence is learnt on (:func:`extrapolation_warning`).
    """
    check_min_n(min_n)
    rows = single_judge(pairs, judge)
    codes, labels = judge_codes(rows, None)
    side = favored_side(rows, relation="self", selves=selves)
    fam = None
    if families is not None:
        fam = favored_side(rows, relation="family", families=families, selves=selves)
    spec, problems = calibrated_spec(
        rows, codes, labels, strengths=strengths, side=side, family_side=fam, stratum=stratum,
        label=label, one_step=one_step, lapse=lapse,
    )  # fmt: skip
    if problems:
        raise EstimationError(f"judge {labels[0]!r}: {next(iter(problems.values()))}")
    return run_one(spec, clusters_of(rows), boot=boot, min_n=min_n)
