"""Simulated author-judges whose errors come from the quality gap alone, plus a planted
self term: the planted truth behind the competence-calibrated self-preference.

Generative model (all pairs of ``models`` on every prompt, judged by every judge in
both presentation orders):

* every model ``m`` has a strength ``theta_m``; its answer to prompt ``p`` has quality
  ``q_pm = theta_m + quality_sd * z_pm`` (standard normal ``z``);
* the reference label of a pair is ``human = 1`` when ``q_a > q_b`` (``0`` else): the
  better answer, as a careful human would see it. With ``reference_competence = c``
  the label is instead a draw with ``P(human = 1) = logistic(c (q_a - q_b))``;
* judge ``j`` (competence ``kappa_j``, position preference ``beta_j``) picks ``a`` in
  one order with probability ``logistic(kappa_j (q_a - q_b) ± beta_j)`` (``+`` when
  ``a`` is shown first). That is all a judge without a self term does: its errors
  depend only on the quality gap (and the slot), so when its own model is strong the
  pairs where the reference prefers its answer are easy and the others hard — the
  Equal-Opportunity gap of Wataoka et al. is then not 0 although nothing favours the
  judge's own answers;
* the self term: when ``j`` is also an author (its name is one of ``models``) and
  its answer is in the pair, a pick of the other answer is switched to its own with
  probability ``tau_j``, in each order independently.

Population value of the calibrated self-preference (the judge's rate of picking its
own answer minus the rate its competence predicts had authorship not mattered)::

    true_value(j) = tau_j * (1 - E[P0_own])

where ``P0_own`` is the no-self-term probability of picking its own answer in one
order, averaged over the judge's own pairs (every opponent equally often) and both
orders; the expectation over the quality draws is an adaptive quadrature (to
~1e-10). With ``tau_j = 0`` the truth is 0 whatever the judge's competence, position
preference and strength.

:func:`theta_for_own_rate` places a model's strength so that the reference prefers its
answer a chosen share of the time against the others (e.g. 0.84, GPT-4's rate on
LLMBar's MT-Bench pairs).

>>> sim = simulate_self_preference(
...     {"m0": AuthorJudge(competence=2.0, tau=0.3)}, {"m0": 1.0, "m1": 0.0, "m2": -0.5},
...     n_prompts=5, seed=0)
>>> len(sim.pairs), round(sim.true_value("m0"), 4)
(15, 0.0687)
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from scipy import integrate, optimize, special, stats

from recuse.errors import ConfigError
from recuse.metrics.bootstrap import Resampling
from recuse.tables import validate_pairs

__all__ = [
    "OTHER_STRENGTHS",
    "AuthorJudge",
    "CellResult",
    "SimulatedSelfPreference",
    "StratifiedSelfPreference",
    "calibration_cell",
    "reference_own_rate",
    "simulate_category_confound",
    "simulate_lapse_judge",
    "simulate_self_preference",
    "simulate_slot_lapse_judge",
    "theta_for_own_rate",
]

#: the opponents' strengths in the calibration cells (the focal author "m0" is placed
#: by :func:`theta_for_own_rate`)
OTHER_STRENGTHS: dict[str, float] = {"m1": 0.5, "m2": 0.0, "m3": -0.5, "m4": -1.0}
_Z_EDGE = 12.0  # |z| past which the standard normal's density is under 1e-31
_SQRT_2PI = math.sqrt(2.0 * math.pi)


@dataclass(frozen=True)
class AuthorJudge:
    """One simulated judge: ``competence`` (log-odds of a pick per unit quality gap;
    near 0 = chance, 20 = near perfect), ``position`` (log-odds toward the first-shown
    answer) and ``tau`` (the probability of switching a pick of the other answer to
    its own)."""

    competence: float
    position: float = 0.0
    tau: float = 0.0


@dataclass(frozen=True)
class SimulatedSelfPreference:
    """A validated ``pairs`` table and what was planted in it."""

    pairs: pd.DataFrame
    strengths: Mapping[str, float]
    judges: Mapping[str, AuthorJudge]
    settings: Mapping[str, float] = field(default_factory=dict)

    def _p0_own(self, judge: str) -> float:
        """``E[P0_own]``: the no-self-term chance of picking its own answer in one order,
        ``E_z[logistic(κ (θ_own − θ_other + sd √2 z) ± β)]`` by adaptive quadrature with
        a break at the curve's midpoint (a competent judge's curve is nearly a step in
        ``z``, which a fixed Gauss–Hermite rule misses: 80 nodes read 0.777 for κ = 20
        where the integral is 0.760)."""
        b = self.judges[judge]
        sd = float(self.settings["quality_sd"]) * np.sqrt(2.0)
        own = self.strengths[judge]
        vals = []
        for other, theta in self.strengths.items():
            if other == judge:
                continue
            d = own - theta
            for sign in (1.0, -1.0):
                shift = sign * b.position

                def f(z: float, d: float = d, shift: float = shift) -> float:
                    # logistic(η) φ(z) in plain floats: SciPy's scalar pdf cost 60 µs a
                    # point of the quadrature
                    eta = b.competence * (d + sd * z) + shift
                    return float(special.expit(eta)) * math.exp(-0.5 * z * z) / _SQRT_2PI

                mid = -(d + shift / b.competence) / sd if b.competence else 0.0
                edge = _Z_EDGE + abs(mid)
                value, _err = integrate.quad(
                    f, -edge, edge, points=[mid], limit=200, epsabs=1e-12, epsrel=1e-10
                )
                vals.append(value)
        return float(np.mean(vals))

    def true_value(self, judge: str) -> float:
        """Population calibrated self-preference of ``judge`` (0 for a non-author)."""
        if judge not in self.strengths:
            return 0.0
        return self.judges[judge].tau * (1.0 - self._p0_own(judge))

    def reference_own_rate(self, judge: str) -> float:
        """Population share of ``judge``'s own pairs where the reference prefers its answer."""
        return reference_own_rate(
            self.strengths, judge, quality_sd=float(self.settings["quality_sd"])
        )


def reference_own_rate(strengths: Mapping[str, float], model: str, *, quality_sd: float) -> float:
    """``mean over opponents o of Phi((theta_model - theta_o) / (quality_sd * sqrt 2))``."""
    own = strengths[model]
    gaps = [own - t for m, t in strengths.items() if m != model]
    return float(np.mean(stats.norm.cdf(np.asarray(gaps) / (quality_sd * np.sqrt(2.0)))))


def theta_for_own_rate(
    rate: float, others: Mapping[str, float], *, quality_sd: float = 1.0
) -> float:
    """The strength at which the reference prefers a model's answer with share ``rate``
    against ``others`` (each opponent equally often)."""
    if not 0.0 < rate < 1.0:
        raise ConfigError(f"rate must be between 0 and 1, got {rate!r}")
    thetas = np.asarray(list(others.values()), float)

    def f(x: float) -> float:
        return float(np.mean(stats.norm.cdf((x - thetas) / (quality_sd * np.sqrt(2.0))))) - rate

    return float(optimize.brentq(f, -50.0, 50.0, xtol=1e-12))


def simulate_self_preference(
    judges: Mapping[str, AuthorJudge],
    strengths: Mapping[str, float],
    *,
    n_prompts: int = 80,
    quality_sd: float = 1.0,
    reference_competence: float | None = None,
    seed: int | None = 0,
    validated: bool = True,
    probabilities: bool = False,
) -> SimulatedSelfPreference:
    """A ``pairs`` table: every pair of ``strengths``' models on each of ``n_prompts``
    prompts (sides at random), judged by every judge of ``judges`` in both orders
    (0/1 picks). See the module docstring for the model and the planted truth.
    ``validated=False``: the table before :func:`recuse.tables.validate_pairs`, for a
    caller that reshapes it and validates what it makes (as below). ``probabilities``:
    each verdict is the judge's probability of picking a (its own answer's raised by
    the switch, ``p + τ (1 − p)``) instead of a draw from it, as a judge read from the
    probabilities of "A" and "B" gives it; the planted truth is the same."""
    if len(strengths) < 2:
        raise ConfigError("simulate_self_preference needs at least two models")
    if n_prompts < 2:
        raise ConfigError("n_prompts must be at least 2")
    if not judges:
        raise ConfigError("simulate_self_preference needs at least one judge")
    for name, b in judges.items():
        if not 0.0 <= b.tau <= 1.0:
            raise ConfigError(f"judge {name!r}: tau must be in [0, 1], got {b.tau!r}")
    rng = np.random.default_rng(seed)
    models = list(strengths)
    theta = np.asarray([strengths[m] for m in models], float)
    q = theta[None, :] + quality_sd * rng.standard_normal((n_prompts, len(models)))
    combos = np.asarray(list(itertools.combinations(range(len(models)), 2)))
    n_pairs = len(combos)
    prompt = np.repeat(np.arange(n_prompts), n_pairs)
    ia = np.tile(combos[:, 0], n_prompts)
    ib = np.tile(combos[:, 1], n_prompts)
    swap = rng.random(len(ia)) < 0.5
    ia, ib = np.where(swap, ib, ia), np.where(swap, ia, ib)
    gap = q[prompt, ia] - q[prompt, ib]
    if reference_competence is None:
        human = (gap > 0).astype(float)
    else:
        human = (rng.random(len(gap)) < special.expit(reference_competence * gap)).astype(float)
    names = np.asarray(models, dtype=object)
    n = len(gap)
    frames = []
    for j, b in judges.items():
        own_a = names[ia] == j
        own_b = names[ib] == j
        picks = []
        for sign in (1.0, -1.0):  # a shown first, then a shown second
            p_a = special.expit(b.competence * gap + sign * b.position)
            if probabilities:
                p_a = np.where(own_a, p_a + b.tau * (1.0 - p_a), p_a)
                picks.append(np.where(own_b, p_a * (1.0 - b.tau), p_a))
                continue
            pick_a = rng.random(n) < p_a
            switch = rng.random(n) < b.tau
            pick_a = np.where(own_a & ~pick_a & switch, True, pick_a)
            pick_a = np.where(own_b & pick_a & switch, False, pick_a)
            picks.append(pick_a.astype(float))
        frames.append(
            pd.DataFrame(
                {
                    "item_id": [
                        f"p{p}-{names[x]}-{names[y]}"
                        for p, x, y in zip(prompt, ia, ib, strict=True)
                    ],
                    "prompt_id": [f"p{p}" for p in prompt],
                    "model_a": names[ia],
                    "model_b": names[ib],
                    "human": human,
                    "judge": j,
                    "p_a_first": picks[0],
                    "p_a_second": picks[1],
                    "p_a": np.nan,
                    "source": "simulated",
                }
            )
        )
    table = pd.concat(frames, ignore_index=True)
    settings = {"quality_sd": float(quality_sd), "n_prompts": float(n_prompts)}
    pairs = validate_pairs(table) if validated else table
    return SimulatedSelfPreference(pairs, dict(strengths), dict(judges), settings)


@dataclass(frozen=True)
class CellResult:
    """One cell of the calibration suite: ``reps`` simulated tables, judge ``m0``.

    ``mean``: the calibrated estimate's mean over the tables where it was reported
    (``reported`` of them); ``truth``: its population value; ``bias`` = ``mean -
    truth``; ``coverage``: share of the ``boot.level`` intervals holding ``truth``;
    ``eo_mean``: the equal-opportunity gap's mean (Def. 4.1) on the same tables, whose
    no-bias value is also 0 when ``tau = 0``; ``flagged``: share of intervals excluding 0.
    """

    own_rate: float
    competence: float
    judges: int
    position: float
    tau: float
    reps: int
    reported: int
    mean: float
    truth: float
    bias: float
    coverage: float
    flagged: float
    eo_mean: float

    def to_dict(self) -> dict[str, float]:
        return {k: float(v) for k, v in self.__dict__.items()}


def calibration_cell(
    *,
    own_rate: float,
    competence: float,
    judges: int = 1,
    position: float = 0.0,
    tau: float = 0.0,
    reps: int = 100,
    n_prompts: int = 80,
    boot: Resampling = Resampling(n_boot=500),
    one_step: bool | None = None,
) -> CellResult:
    """Run the calibrated self-preference and the EO gap on ``reps`` tables of one cell.

    Judge ``m0`` (``competence``, ``position``, ``tau``) is an author whose answers the
    reference prefers ``own_rate`` of the time against :data:`OTHER_STRENGTHS`; with
    ``judges=3`` the authors ``m1`` (competence 1) and ``m2`` (competence 5), without a
    self term and with the same position preference, judge the same pairs too.
    ``one_step``: how the calibrated estimate's resamples refit
    (:func:`~recuse.metrics.competence.calibrated_self_preference`).
    """
    from recuse.errors import EstimationError
    from recuse.metrics.competence import calibrated_self_preference
    from recuse.metrics.self_preference import self_preference

    if judges not in (1, 3):
        raise ConfigError(f"judges must be 1 or 3, got {judges!r}")
    strengths = {"m0": theta_for_own_rate(own_rate, OTHER_STRENGTHS), **OTHER_STRENGTHS}
    cast = {"m0": AuthorJudge(competence, position, tau)}
    if judges == 3:
        cast["m1"] = AuthorJudge(1.0, position)
        cast["m2"] = AuthorJudge(5.0, position)
    est, hit, flag, eo = [], [], [], []
    truth = float("nan")
    for r in range(reps):
        sim = simulate_self_preference(cast, strengths, n_prompts=n_prompts, seed=boot.seed + r)
        if r == 0:  # the same in every table of the cell (a quadrature: ~0.1 s)
            truth = sim.true_value("m0")
        eo.append(
            self_preference(sim.pairs, judge="m0", boot=Resampling(n_boot=10, seed=r)).estimate
        )
        try:
            res = calibrated_self_preference(
                sim.pairs, judge="m0", boot=replace(boot, seed=r), one_step=one_step
            )
        except EstimationError:
            continue
        est.append(res.estimate)
        hit.append(res.ci_low <= truth <= res.ci_high)
        flag.append(res.ci_low > 0 or res.ci_high < 0)
    mean = float(np.mean(est)) if est else float("nan")
    return CellResult(
        own_rate=own_rate,
        competence=competence,
        judges=judges,
        position=position,
        tau=tau,
        reps=reps,
        reported=len(est),
        mean=mean,
        truth=truth,
        bias=mean - truth,
        coverage=float(np.mean(hit)) if hit else float("nan"),
        flagged=float(np.mean(flag)) if flag else float("nan"),
        eo_mean=float(np.mean(eo)),
    )


@dataclass(frozen=True)
class StratifiedSelfPreference:
    """A validated ``pairs`` table with a ``category`` column, judged by the author ``m0``,
    and its planted calibrated self-preference ``truth``."""

    pairs: pd.DataFrame
    truth: float
    own_shares: Mapping[str, float]


@functools.lru_cache(maxsize=256)
def _category_truth(
    competence: float, position: float, tau: float, own_rate: float, quality_sd: float
) -> float:
    """One category's planted value (a quadrature, cached: the same in every table)."""
    if not tau:
        return 0.0
    strengths = {"m0": theta_for_own_rate(own_rate, OTHER_STRENGTHS, quality_sd=quality_sd),
                 **OTHER_STRENGTHS}  # fmt: skip
    sim = SimulatedSelfPreference(
        pd.DataFrame(), strengths, {"m0": AuthorJudge(competence, position, tau)},
        {"quality_sd": float(quality_sd)},
    )  # fmt: skip
    return sim.true_value("m0")


def simulate_category_confound(
    categories: Mapping[str, tuple[float, float]],
    *,
    own_rate: float = 0.84,
    tau: float = 0.0,
    position: float = 0.0,
    prompts_per_category: int = 30,
    quality_sd: float = 1.0,
    seed: int | None = 0,
) -> StratifiedSelfPreference:
    """A judge whose competence differs by category, with its own answers mostly where it
    judges worst: the confound a competence model with one ``κ`` reads as self-preference.

    ``categories`` maps a name to ``(competence, own_keep)``: in that category judge
    ``m0`` picks as :func:`simulate_self_preference`'s judge of that competence (one
    self term ``tau`` and slot preference ``position`` throughout), and each of its own
    pairs (``m0`` against one of :data:`OTHER_STRENGTHS`) is kept with probability
    ``own_keep``; the pairs without ``m0`` are all kept. The reference prefers ``m0``'s
    answer ``own_rate`` of the time. Every category has ``prompts_per_category``
    prompts. The planted truth is each category's population value
    (:meth:`SimulatedSelfPreference.true_value`) weighted by its expected own pairs,
    ``own_keep × prompts``; 0 when ``tau = 0`` whatever the competences.

    >>> sim = simulate_category_confound({"hard": (0.5, 1.0), "easy": (4.0, 0.1)}, seed=1)
    >>> sorted(sim.pairs["category"].unique()), sim.truth
    (['easy', 'hard'], 0.0)
    """
    if len(categories) < 2:
        raise ConfigError("simulate_category_confound needs at least two categories")
    rng = np.random.default_rng(seed)
    strengths = {"m0": theta_for_own_rate(own_rate, OTHER_STRENGTHS, quality_sd=quality_sd),
                 **OTHER_STRENGTHS}  # fmt: skip
    frames, truths, weights = [], [], []
    for name, (competence, keep) in categories.items():
        if not 0.0 <= keep <= 1.0:
            raise ConfigError(f"category {name!r}: own_keep must be in [0, 1], got {keep!r}")
        sim = simulate_self_preference(
            {"m0": AuthorJudge(competence, position, tau)}, strengths,
            n_prompts=prompts_per_category, quality_sd=quality_sd,
            seed=int(rng.integers(2**32)), validated=False,  # the table made is validated
        )  # fmt: skip
        t = sim.pairs
        own = (t["model_a"] == "m0") | (t["model_b"] == "m0")
        t = t[~own | (rng.random(len(t)) < keep)].copy()
        t["prompt_id"] = name + "-" + t["prompt_id"].astype(str)
        t["item_id"] = name + "-" + t["item_id"].astype(str)
        t["category"] = name
        frames.append(t)
        truths.append(_category_truth(competence, position, tau, own_rate, quality_sd))
        weights.append(keep)
    table = pd.concat(frames, ignore_index=True)
    w = np.asarray(weights, float)
    truth = float(np.dot(w, truths) / w.sum()) if w.sum() else 0.0
    shares = {name: float(x) for name, x in zip(categories, w / w.sum(), strict=True)}
    return StratifiedSelfPreference(validate_pairs(table), truth, shares)


def simulate_lapse_judge(
    *,
    accuracy: float = 0.97,
    own_rate: float = 0.9,
    shift: float = 1.0,
    n_prompts: int = 80,
    seed: int | None = 0,
) -> StratifiedSelfPreference:
    """A near-perfect judge whose misses do not shrink with the quality gap (a lapse rate),
    with a self term planted as a log-odds shift.

    Pairs and reference labels as :func:`simulate_self_preference` (judge ``m0``, an
    author the reference prefers ``own_rate`` of the time against
    :data:`OTHER_STRENGTHS`). In each order ``m0`` picks the reference's answer with
    probability ``accuracy`` whatever the gap, ``p0 = accuracy`` or ``1 − accuracy``,
    and its own answer with ``logit p1 = logit p0 + shift`` (toward its own answer).
    ``truth``: the mean of ``p1 − p0`` toward its own answer over its own pairs and both
    orders (the calibrated estimate's target on this table). No ``category`` column.
    """
    if not 0.5 < accuracy < 1.0:
        raise ConfigError(f"accuracy must be between 0.5 and 1, got {accuracy!r}")
    rng = np.random.default_rng(seed)
    strengths = {"m0": theta_for_own_rate(own_rate, OTHER_STRENGTHS), **OTHER_STRENGTHS}
    base = simulate_self_preference(
        {"m0": AuthorJudge(1.0)}, strengths, n_prompts=n_prompts,
        seed=int(rng.integers(2**32)), validated=False,  # the table made is validated
    ).pairs.copy()  # fmt: skip
    human = base["human"].to_numpy(float)
    own = np.where(base["model_a"] == "m0", 1.0, np.where(base["model_b"] == "m0", -1.0, 0.0))
    p0 = np.where(human > 0.5, accuracy, 1.0 - accuracy)
    p1 = special.expit(special.logit(p0) + shift * own)
    for column in ("p_a_first", "p_a_second"):
        base[column] = (rng.random(len(base)) < p1).astype(float)
    base["p_a"] = np.nan
    mine = own != 0
    truth = float(np.mean((p1 - p0)[mine] * own[mine]))
    return StratifiedSelfPreference(validate_pairs(base), truth, {})


def simulate_slot_lapse_judge(
    *,
    lapse: float = 0.5,
    own_rate: float = 0.95,
    competence: float = 2.0,
    tau: float = 0.0,
    slot: int = 1,
    n_prompts: int = 200,
    probabilities: bool = False,
    seed: int | None = 0,
) -> StratifiedSelfPreference:
    """A judge that, on a share ``lapse`` of its judged orders, takes the answer shown in
    one slot whatever the pair (``slot`` +1: the first shown, −1: the second), and
    otherwise judges as :func:`simulate_self_preference`'s judge ``m0`` (``competence``,
    no position term, self term ``tau``), an author the reference prefers ``own_rate``
    of the time against :data:`OTHER_STRENGTHS`. Each order lapses independently; a
    lapsed verdict is a pick of the slot's answer (with ``probabilities``: probability 1
    on it). A position term in log-odds cannot mimic it: its slot preference does not
    shrink as the quality gap grows.

    ``truth``: the lapse leaves the pick of the other orders as they were, so the
    calibrated estimate's target is ``(1 − lapse) · τ (1 − E[P0_own])``
    (:meth:`SimulatedSelfPreference.true_value`); 0 without a self term. No
    ``category`` column."""
    if not 0.0 <= lapse < 1.0:
        raise ConfigError(f"lapse must be in [0, 1), got {lapse!r}")
    if slot not in (1, -1):
        raise ConfigError(f"slot must be 1 (first shown) or -1 (second), got {slot!r}")
    rng = np.random.default_rng(seed)
    strengths = {"m0": theta_for_own_rate(own_rate, OTHER_STRENGTHS), **OTHER_STRENGTHS}
    sim = simulate_self_preference(
        {"m0": AuthorJudge(competence, 0.0, tau)}, strengths, n_prompts=n_prompts,
        seed=int(rng.integers(2**32)), validated=False, probabilities=probabilities,
    )  # fmt: skip
    table = sim.pairs.copy()
    # a lapse in the first order picks a when the slot is the first; in the second, b
    for column, a_in_slot in (("p_a_first", slot == 1), ("p_a_second", slot == -1)):
        lapsed = rng.random(len(table)) < lapse
        table[column] = np.where(lapsed, float(a_in_slot), table[column].to_numpy(float))
    truth = (1.0 - lapse) * sim.true_value("m0")
    return StratifiedSelfPreference(validate_pairs(table), truth, {})
