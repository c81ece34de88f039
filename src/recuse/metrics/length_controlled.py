"""AlpacaEval 2's length-controlled win rate, for judges that compare with a fixed baseline.

The **estimand**, per system m: the win rate against the baseline that the judge's
model gives at no length difference, averaged over instructions,

    LC_m = E_i σ(θ_m + d_i)

with θ_m the system's log-odds of beating the baseline on an instruction of average
difficulty and d_i the instruction's easiness (shared by the systems). Two estimates:

**AlpacaEval's per-system GLM** (``lc_win_rate_glm``). Per system m (its annotations
against the baseline, one per instruction i), a logistic GLM (statsmodels, binomial
family, fractional outcomes) of the judge's probability that m beats the baseline:

    logit P(m beats baseline) = θ_m + φ_m · tanh(δ_i / sd(δ)) + ψ_m · γ_i

δ_i = characters of the baseline's output − characters of m's output (sd over m's
annotations, not centred), γ_i the instruction's difficulty; LC_m = mean_i σ(θ_m +
ψ_m γ_i). Where this differs from upstream (so a comparison with its leaderboard is
honest):

- γ_i is estimated from the annotations at hand — for system m, the instruction's
  mean clipped log-odds ``logit(clip(P, 0.01, 0.99))`` over the judge's *other*
  systems, centred (0, and the term left out, when m is the only system) — whereas
  upstream reads difficulties precomputed on its whole leaderboard;
- no regularisation toward upstream's "gamed" (length-prompted) baselines and no
  cross-validated L1 penalty: a plain maximum-likelihood fit.

Intervals: the one-step cluster bootstrap over instructions of
:mod:`recuse.metrics.bradley_terry` (θ* = θ̂ + H⁻¹ Σ_i (n*_i − 1) u_i), percentile.

**The joint fit** (``lc_win_rate`` where two or more systems answered at least 20 of
the same instructions, :data:`MIN_SHARED`; ``lc_method`` says which estimate the row
shows). One model of every
system's annotations, the instruction's difficulty a random effect shared by the
systems, with the instruction's mean length term beside it (Mundlak's device):

    logit P(m beats baseline on i) = θ_m + φ_m · t_mi + π · (t̄_i − mean t̄) + τ · u_i

with t_mi = tanh(δ_mi / sd_m(δ)), t̄_i its mean over the systems that answered i, and
u_i ~ N(0, 1) integrated out (adaptive Gauss–Hermite: each instruction's nodes
centred and scaled on its posterior at the maximum, centred again until they stay;
nodes doubled from 24 until the rates and interval ends move by under 0.01 points;
none where 96 and 192 nodes still disagree, or where a step runs a coefficient past
:data:`MAX_COEFFICIENT` or τ past :data:`MAX_TAU`, no finite maximum): maximum
(quasi-)likelihood of
``Σ_i log ∫ Π_m P_mi^y (1 − P_mi)^(1−y) φ(u) du`` (Newton steps within a trust
region, scipy's ``trust-exact``, with the analytic gradient and Hessian; each finer
quadrature starts from the coarser one's maximum). φ_m is identified by the
differences between systems on the same instruction, so difficulty that moves with
length goes to π and τ u_i, not to φ_m. Then

    LC_m = mean_i ∫ σ(θ_m + π (t̄_i − mean t̄) + τ u) φ(u) du

over m's instructions. Its interval: the cluster-robust (sandwich, instructions as
clusters) variance ``H⁻¹ (Σ_i u_i u_iᵀ) H⁻¹ · n/(n−1)`` of the parameters, carried to
logit(LC_m) by the delta method, ends back through σ. H is the Hessian of the
log-likelihood in closed form, not by finite differences: with ω_iq instruction i's
posterior weight on node q and g_iq, h_iq the gradient and Hessian of its node
log-integrand, u_i = Σ_q ω_iq g_iq (instruction i's score) and
H = Σ_i [Σ_q ω_iq (h_iq + g_iq g_iqᵀ) − u_i u_iᵀ] (:class:`_Likelihood`). On AlpacaEval
2 (16 systems, 805 instructions, 96 nodes) the fit takes 0.36 s where BFGS with H by
forward differences of the gradient (34 more gradient evaluations per fit) took 1.71 s
(best of 3 in one run; inside ``recuse audit alpaca-eval`` 0.38 s against 4.3 s), to the
same rates and interval ends within 0.00001 points. The plain rule (nodes spread over
the prior) missed the narrow posteriors of instructions that many systems answered: for
50 systems on 200 instructions at τ = 2 its rates moved 0.05 to 2.1 points from 96 to
192 nodes; centred, 24 and 192 nodes agree within 0.001 points (AlpacaEval's rates moved
by under 0.001 points, and its fit settles at 48 nodes in 0.3 s, 5 centring rounds; it
took 0.53 s while plain Newton steps left 18 instructions' nodes off their posterior
modes, :func:`_posterior_modes`). Early rounds at a looser gradient tolerance than the
last cost more than they save: a round's Newton steps end in one or two steps from the
last maximum, and a loose round needs one more at full tolerance (69 Hessians at 1e-6
throughout on AlpacaEval 1 and 2, four of the planted benchmark's tables and a small one,
80 to 85 with 1e-2 or 1e-3 tied to the nodes' move).

Where length tracks difficulty (a system writes longer answers on harder
instructions), the GLM's length and difficulty terms carry the same signal, and with
γ_i estimated from a few other systems' verdicts (noisy, so ψ_m is attenuated) part of
the difficulty effect is credited to length and removed with it. In the planted
simulation of ``benchmarks/length_controlled.py``
(:func:`recuse.simulate.length_controlled.simulate_length_controlled`: 6 systems, 400
instructions, planted r = 0.46, 300 replications) the GLM's rate is off by 3.7 to 6.0
points and its 90% interval holds the truth 0.65 of the time; the joint fit's by at most
1.0 point, with coverage 0.89 (both within 0.35 points, coverage 0.90 and 0.91, when
length and difficulty are unrelated). Each row gives ``length_difficulty_r``, Pearson's r between
``tanh(δ_i / sd(δ))`` and ``γ_i`` over the system's instructions, and a ``caveat`` when
``|r| ≥`` :data:`CONFOUNDED_R` (0.3) saying how far the GLM's rate is from the joint
fit's. On the AlpacaEval 2 annotations (16 systems, judge gpt-4-1106-preview) the joint
fit is nearer upstream's leaderboard in size (largest difference 5.9 points against the
GLM's 8.1, mean 2.1 against 4.5) and ranks alike (Spearman 0.94; the GLM 0.96).

Both estimates assume the length effect has the tanh form above. Where it does not and
the answers' lengths are skewed right, the rate at no length difference is extrapolated
wrongly: with a judge's log-odds linear in the length difference (0.8 per standard
deviation) and each system's answers a standardised log-normal (σ 0.8) in length, 6
systems on 300 instructions read about 2 points high (100 tables: the joint fit +2.16,
SE 0.18 over tables, its 90% interval holding the truth in 0.80 of rates; the GLM's in
0.75). The tanh effect on the same skewed lengths is removed (+0.37, SE 0.19; coverage
0.89 and 0.86), and so is the linear one on normally distributed lengths (−0.05 over 50
tables; 0.90 and 0.85);
``tests/metrics/test_length_controlled.py`` plants both skewed cases. No row says so:
the data do not tell the two forms apart at these sizes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
import statsmodels.api as sm
from scipy import optimize, sparse, special, stats
from threadpoolctl import threadpool_limits

from recuse.errors import EstimationError, fit_warnings_hidden
from recuse.metrics.bootstrap import Resampling, resample_counts
from recuse.metrics.bradley_terry import system_names
from recuse.metrics.estimate import clusters_of
from recuse.numbers import signed

__all__ = [
    "CONFOUNDED_R",
    "GLM",
    "JOINT",
    "NONE",
    "SEPARATED_LENGTH",
    "columns",
    "compare_with_upstream",
    "fixed_baseline",
    "length_controlled_win_rates",
]

Side = Literal["a", "b"]

UPSTREAM_DIFFERENCES = (
    "instruction difficulty estimated from these annotations, not upstream's precomputed "
    "values; no regularisation toward upstream's gamed baselines; no L1 penalty"
)


#: |Pearson r| between the length term and instruction difficulty from which the
#: length-controlled rate carries a caveat (the two cannot be told apart well)
CONFOUNDED_R = 0.3

#: the per-system GLM in the planted simulation with length tracking difficulty
#: (``benchmarks/length_controlled.py``, planted r = 0.46, 300 replications): its largest
#: mean error (points) and the share of its 90% intervals that held the truth
PLANTED_GLM_ERROR = 6
PLANTED_GLM_COVERAGE = 0.65

#: instructions answered by two or more systems that the joint fit needs (the length
#: effect comes from differences between systems on the same instruction)
MIN_SHARED = 20

#: the ``lc_method`` of each row: which estimate ``lc_win_rate`` is
JOINT = "joint fit"
GLM = "AlpacaEval GLM"
#: no estimate: both fits separate (:data:`SEPARATED_LENGTH`)
NONE = "not estimated"

#: |length coefficient| (log-odds per unit of ``tanh(δ/sd(δ))``, whose range is
#: [−1, 1]) past which a fit is taken as separated, with no rate: length alone then
#: decides every annotation (a coefficient of 10 moves a win from 0.7% to 99.3% over
#: the range), where the maximum of the likelihood runs off to infinity and the rate at
#: zero length difference is whatever the optimiser stopped at. The AlpacaEval 1 and 2
#: annotations in the shared data reach |5.4| (joint fit) and |4.0| (GLM); 10 rows of
#: two systems of which one never wins gave −18 and a rate of 89.6% for a system whose
#: raw win rate is 0%.
SEPARATED_LENGTH = 10.0


#: why a length-controlled rate whose length difference moves with instruction
#: difficulty (:func:`tracks_difficulty`) is read with care: the part of its caveat that
#: is the same for every system (the audit's lines say it once per annotator)
GLM_CONFOUNDED = (
    "AlpacaEval's per-system GLM cannot fully separate the two (in a planted "
    f"simulation with length tracking difficulty it was off by up to {PLANTED_GLM_ERROR} "
    f"points, and its 90% interval held the truth {PLANTED_GLM_COVERAGE:.0%} of the time)"
)


def tracks_difficulty(r: float) -> str:
    """The first part of a system's caveat where ``|r| >= CONFOUNDED_R`` (r: Pearson's r
    between its length term and the per-system GLM's difficulty term): which way its
    length difference moves with instruction difficulty."""
    # delta = baseline − system and gamma high = easy for the systems: r > 0 means the
    # system's answers are longer (delta low) on hard instructions (gamma low)
    side = "harder" if r > 0 else "easier"
    return (
        f"the length difference moves with instruction difficulty (r = {signed(r, 2)}: this "
        f"system's answers are longer on {side} instructions)"
    )


def columns(level: float) -> dict[str, str]:
    """What each column of :func:`length_controlled_win_rates`' table holds, for a table
    of intervals at ``level`` (the page's words under it, report.json's ``columns``).
    The AlpacaEval tables carried 19 columns with no word: a win rate in % beside
    coefficients in log-odds, a ``length_coefficient`` whose sign says which way length
    moves the verdict, intervals of three kinds at a level not given.

    >>> c = columns(0.9)
    >>> c["win_rate_low"]
    'the low end of its 90% percentile interval (cluster bootstrap over instructions)'
    >>> c["length_coefficient"].split(";")[1]
    ' negative: the judge favours the longer answer'
    """
    at = f"{level:.0%}"
    return {
        "system": "the model whose answers the judge compared with the baseline's",
        "baseline": "the system on the other side of every comparison",
        "win_rate": "P(the system's answer beats the baseline's) averaged over its "
        "annotations, in % (AlpacaEval's win rate); 50 = as good as the baseline",
        "win_rate_low": f"the low end of its {at} percentile interval (cluster bootstrap "
        "over instructions)",
        "win_rate_high": "the high end",
        "lc_win_rate": "length-controlled win rate, in %: the win rate the judge gives at "
        "no length difference, averaged over the instructions; the estimate lc_method "
        "names; 50 = as good as the baseline",
        "lc_win_rate_low": f"the low end of its {at} interval (joint fit: cluster-robust, "
        "instructions as clusters, by the delta method on the logit; AlpacaEval GLM: "
        "percentile, one-step cluster bootstrap over instructions)",
        "lc_win_rate_high": "the high end",
        "lc_method": f"which estimate lc_win_rate is: {JOINT} (every system's annotations "
        f"in one model, an instruction effect shared by them), {GLM} (AlpacaEval's "
        f"per-system GLM, where no joint fit could be made — one system, fewer than "
        f"{MIN_SHARED} instructions shared, no finite maximum — or its length term for the "
        f"system separates) or {NONE} (that, and the GLM separates too: no rate)",
        "lc_win_rate_glm": "AlpacaEval's per-system GLM's length-controlled win rate, in "
        "%; empty where its fit separates",
        "lc_win_rate_glm_low": f"the low end of its {at} percentile interval (one-step "
        "cluster bootstrap over instructions)",
        "lc_win_rate_glm_high": "the high end",
        "length_coefficient": "the GLM's length term φ, log-odds per unit of "
        "tanh(δ / sd(δ)), δ = the baseline's answer length − the system's (characters, "
        "or the word counts where the table has no texts); negative: the judge favours "
        "the longer answer",
        "difficulty_coefficient": "the GLM's ψ on the instruction's difficulty (the other "
        "systems' mean clipped log-odds on it, centred); 0 where glm_difficulty is false",
        "glm_difficulty": "whether the GLM has its difficulty term (false: no other system "
        "answered the system's instructions)",
        "length_coefficient_joint": "the joint fit's length term for the system, in the "
        "unit of length_coefficient; empty without a joint fit",
        "length_difficulty_r": "Pearson's r between the GLM's length and difficulty terms "
        f"over the system's instructions; from ±{CONFOUNDED_R} the caveat says the GLM "
        "cannot tell the two apart; empty where either is constant",
        "n": "the system's annotations against the baseline (one per instruction)",
        "caveat": "what to know before reading the rate shown or the GLM's beside it",
    }


def _confounding(
    tl: np.ndarray, gamma: np.ndarray, glm: float, joint: float | None
) -> tuple[float, str]:
    """Pearson's r between the length term and the per-system GLM's difficulty term,
    and the caveat to show beside the length-controlled rate when ``|r| >=
    CONFOUNDED_R`` ("" otherwise; r is NaN when either term is constant): how far the
    GLM's rate ``glm`` is from the joint fit's ``joint`` (in %) when the joint fit is
    the rate shown, else that the joint fit could not be made."""
    if len(tl) < 3 or np.ptp(tl) == 0 or np.ptp(gamma) == 0:
        return float("nan"), ""
    r = float(np.corrcoef(tl, gamma)[0, 1])
    if abs(r) < CONFOUNDED_R:
        return r, ""
    said = tracks_difficulty(r)
    if joint is None:
        return r, (
            f"{said}; {GLM_CONFOUNDED}, and the joint fit that separates them was not possible "
            f"(it needs {joint_needs()}): read the rate with the raw win rate"
        )
    here = (
        "here it separates (no rate)"
        if np.isnan(glm)
        else f"here it gives {glm:.1f}% (lc_win_rate_glm, {signed(glm - joint, 1)} points from "
        "the joint fit)"
    )
    return r, (
        f"{said}; the rate shown is the joint fit, which separates them with every "
        f"system's answers to the same instructions; {GLM_CONFOUNDED}: {here}"
    )


def _sigmoid(x: np.ndarray) -> np.ndarray:
    """σ(x) = 1 / (1 + e^(−x)), without overflow (scipy's ``expit``): on the GLM's
    2,000 resamples × 805 instructions it takes 7 ms where ``exp(−logaddexp(0, −x))``
    took 49 ms, to within 1.1e-15 relative."""
    return np.asarray(special.expit(x), float)


#: Gauss–Hermite nodes the joint fit starts with; it doubles them (:func:`_converged_fit`)
#: until the rates and interval ends move by under :data:`QUADRATURE_TOL` points, at most
#: to :data:`MAX_NODES`. The nodes sit where the N(0, 1) prior of u_i has its mass, while
#: with many systems per instruction u_i's posterior is narrow: 24 nodes put the 90%
#: interval ends of 16 systems' binary verdicts on 300 instructions (τ = 1.9) 0.9 points
#: wide of the converged ones, and AlpacaEval 2's rates 0.08 points off.
_NODES = 24
#: 24 doubled three times (numpy's Gauss–Hermite rule overflows near 380 nodes)
MAX_NODES = 192
#: points (of a rate in %) within which two quadratures count as agreeing
QUADRATURE_TOL = 0.01


def joint_needs() -> str:
    """What the joint fit needs, in the words of the rows that fall back to the GLM."""
    return (
        f"{MIN_SHARED} instructions answered by two or more systems, a finite maximum, and "
        f"a quadrature that settles (rates within {QUADRATURE_TOL} points at {MAX_NODES} "
        f"nodes and {MAX_NODES // 2})"
    )


@dataclass(frozen=True)
class _Joint:
    """The joint fit's per-system rates (in %, with their interval) and length
    coefficients, its difficulty spread τ and the coefficient π of the instruction's
    mean length term."""

    lc: np.ndarray
    low: np.ndarray
    high: np.ndarray
    length: np.ndarray
    tau: float
    pi: float
    params: np.ndarray
    nodes: int

    def moved(self, other: _Joint) -> float:
        """The largest change (points) of a rate or interval end from ``other``."""
        return float(
            max(np.abs(a - b).max() for a, b in zip(
                (self.lc, self.low, self.high), (other.lc, other.low, other.high), strict=True
            ))
        )  # fmt: skip


def _converged_fit(
    system: np.ndarray, cluster: np.ndarray, y: np.ndarray, tl: np.ndarray, *, level: float
) -> _Joint | None:
    """:func:`_joint_fit` with :data:`_NODES` nodes, doubled (each fit started from
    the last one's maximum) until two fits' rates and interval ends agree within
    :data:`QUADRATURE_TOL` points: the finer fit. None where a fit is None (no finite
    maximum, or a finer rule's nodes whose centring does not settle:
    :data:`STALLED_ROUNDS`, refused at that rule), or where
    the fits at :data:`MAX_NODES` and half as many still disagree: the instruction
    effect is then too wide for the nodes (τ of 30 logits and more, where every system
    wins or loses an instruction together), and the last fit's intervals were far too
    narrow, down to a width of 0 (58.98% [58.98%, 58.98%] at τ = 4,456).

    On one BLAS thread: its products are small (size × size systems, one instructions ×
    nodes by size cross-product per Hessian), and in ``recuse audit alpaca-eval`` on a
    shared 2-core machine, with numpy's and scipy's BLAS each holding two threads, the
    AlpacaEval fits took 1 to 14 s where one thread takes 0.1 to 0.6 s."""
    with threadpool_limits(limits=1, user_api="blas"):
        fit = _joint_fit(system, cluster, y, tl, level=level, nodes=_NODES)
        doubled = False
        while fit is not None and fit.nodes < MAX_NODES:
            finer = _joint_fit(
                system, cluster, y, tl, level=level, nodes=2 * fit.nodes, start=fit.params
            )
            if finer is None or finer.moved(fit) < QUADRATURE_TOL:
                return finer
            fit, doubled = finer, True
        return None if doubled else fit


#: (instruction, node, parameter) entries of the joint fit's per-node gradients held at
#: once while its Hessian is summed (32 MB; AlpacaEval 2 at 96 nodes: 2.6 million)
_SPREAD_ENTRIES = 4_000_000


#: Hessians kept per quadrature rule (the last points asked for): ``trust-exact`` takes
#: the Hessian of each trial point, so a rejected one can come between its maximum and
#: the Hessian asked for there
_KEPT_HESSIANS = 4


class _Likelihood:
    """The joint fit's log-likelihood by Gauss–Hermite quadrature, its per-instruction
    scores and its Hessian, at parameters p = (θ_1..θ_K, φ_1..φ_K, π, log τ).

    Row r (system m, instruction i) at node q: η_rq = θ_m + φ_m t_r + π t̃_i + τ x_q
    (t̃_i = t̄_i − mean t̄; x_q is instruction i's own node u_iq, and log w_q its own
    log weight, once the nodes are centred: :meth:`centre`); instruction i's node
    log-integrand ℓ_iq = log w_q + Σ_{r∈i} [y_r η_rq + log σ(−η_rq)], its log-likelihood
    log Σ_q exp ℓ_iq, and its posterior node weights ω_iq = exp ℓ_iq / Σ_q' exp ℓ_iq'.
    With e_rq = y_r − σ(η_rq), v_rq = σ(η_rq)(1 − σ(η_rq)) and ∂η_rq = a_r + τ x_q e_τ
    (a_r the row's design: 1 at θ_m, t_r at φ_m, t̃_i at π; e_τ the log τ coordinate,
    whose second derivative of η_rq is τ x_q):

        g_iq = Σ_{r∈i} e_rq ∂η_rq,
        h_iq = −Σ_{r∈i} v_rq ∂η_rq ∂η_rqᵀ + (Σ_{r∈i} e_rq τ x_q) e_τ e_τᵀ,
        u_i = Σ_q ω_iq g_iq  (instruction i's score),
        H = Σ_i [Σ_q ω_iq (h_iq + g_iq g_iqᵀ) − u_i u_iᵀ]
          = −Σ_r Σ_q ω_iq v_rq ∂η_rq ∂η_rqᵀ + Σ_i Σ_q ω_iq (g_iq − u_i)(g_iq − u_i)ᵀ
            + (Σ_i u_i,τ) e_τ e_τᵀ.

    The first sum is a weighted cross-product of the sparse design (three entries a
    row) plus its log τ row and column; the second is over instructions × nodes
    (g_iq from bincount-like sparse products of the rows), never rows × nodes × size².
    The quantities at the last p are kept, so that the Hessian at the point whose value
    and scores were just taken costs no second pass over the rows × nodes arrays, and
    the Hessians of the last few points are kept (until the nodes move): scipy's
    ``trust-exact`` has taken the one at the maximum that :func:`_maximum_at` asks for
    again (one a centring round: 5 of the 19 AlpacaEval 2's fit asks for).
    """

    def __init__(
        self,
        system: np.ndarray,
        cluster: np.ndarray,
        y: np.ndarray,
        tl: np.ndarray,
        *,
        nodes: int,
    ) -> None:
        k, n, rows = int(system.max()) + 1, int(cluster.max()) + 1, len(y)
        self.k, self.n, self.size = k, n, 2 * k + 2
        self.y, self.tl, self.cluster = y, tl, cluster
        self.cell = cluster * k + system  # (instruction, system) of each row
        x, w = np.polynomial.hermite_e.hermegauss(nodes)
        self.x, self.w = x, w / np.sqrt(2 * np.pi)
        # each instruction's nodes u_iq and log weights: the plain rule until centred
        self.u = np.broadcast_to(x, (n, nodes))
        self.log_w = np.broadcast_to(np.log(self.w), (n, nodes))
        self.mode: np.ndarray | None = None  # where centre() put them
        self.log_scale = np.zeros(n)
        everyone = np.arange(rows)
        # rows onto their instruction and onto their (instruction, system) cell
        self.onto = sparse.csr_matrix((np.ones(rows), (cluster, everyone)), shape=(n, rows))
        tbar = (self.onto @ tl) / np.asarray(self.onto.sum(axis=1)).ravel()
        self.tbar = tbar = tbar - tbar.mean()  # t̃_i, per instruction
        self.onto_cell = sparse.csr_matrix(
            (np.ones(rows), (self.cell, everyone)), shape=(n * k, rows)
        )
        tt = self.tt = tbar[cluster]
        self.design = sparse.csr_matrix(
            (
                np.concatenate([np.ones(rows), tl, tt]),
                (np.tile(everyone, 3), np.concatenate([system, k + system, np.full(rows, 2 * k)])),
            ),
            shape=(rows, self.size),
        )  # the log τ column is empty: its term is τ u_iq
        self._p: np.ndarray | None = None
        self._hessians: dict[bytes, np.ndarray] = {}  # at the last few p, these nodes

    def centre(self, p: np.ndarray) -> float:
        """Put each instruction's nodes where its u_i's posterior at ``p`` has its mass
        (adaptive Gauss–Hermite): u_iq = μ_i + s_i x_q, with μ_i the posterior mode and
        s_i = (−∂² log posterior)^(−1/2) there, and log weights
        log w_q + log s_i − u_iq²/2 + x_q²/2, so that Σ_q exp(ℓ_iq) still integrates
        over the N(0, 1) prior. With many systems on an instruction its posterior is
        narrow, and the plain rule's nodes, spread over the prior, missed it: 96 and
        192 nodes gave rates up to 2 points apart for 50 systems at τ = 2. The nodes
        stay fixed while the parameters move (the value, scores and Hessian are those
        of one rule); :func:`_maximum` centres again until they settle. Returns the
        largest move of a μ_i or log s_i."""
        mode, bend = _posterior_modes(
            self.design @ p, float(np.exp(p[-1])), self.y, self.cluster, self.n
        )
        log_scale = -0.5 * np.log(bend)
        moved = float(
            np.inf
            if self.mode is None
            else max(np.abs(mode - self.mode).max(), np.abs(log_scale - self.log_scale).max())
        )
        self.mode, self.log_scale = mode, log_scale
        self.u = mode[:, None] + np.exp(log_scale)[:, None] * self.x[None, :]
        self.log_w = np.log(self.w)[None, :] + log_scale[:, None] - (self.u**2 - self.x**2) / 2
        self._p = None
        self._hessians.clear()
        return moved

    def _at(self, p: np.ndarray) -> None:
        """η, σ(η), the posterior node weights and the log-likelihood at ``p``."""
        if self._p is not None and np.array_equal(self._p, p):
            return
        tau = float(np.exp(p[-1]))
        eta = (self.design @ p)[:, None] + tau * self.u[self.cluster]
        node = self.onto @ (self.y[:, None] * eta + special.log_expit(-eta)) + self.log_w
        top = node.max(axis=1, keepdims=True)
        post = np.exp(node - top)
        total = post.sum(axis=1, keepdims=True)
        post /= total  # each instruction's posterior weights on the nodes
        self.tau, self.post, self.fitted = tau, post, special.expit(eta)
        self.value = float((top.ravel() + np.log(total.ravel())).sum())
        self._p = p.copy()

    def scores(self, p: np.ndarray) -> tuple[float, np.ndarray]:
        """The log-likelihood and the per-instruction scores u_i (n × size)."""
        self._at(p)
        k, n, cell, cluster = self.k, self.n, self.cell, self.cluster
        resid = (self.y[:, None] - self.fitted) * self.post[cluster]
        e = resid.sum(axis=1)
        u = np.zeros((n, self.size))  # instruction i's score: its rows' e_r times their design
        u[:, :k] = np.bincount(cell, e, minlength=n * k).reshape(n, k)
        u[:, k : 2 * k] = np.bincount(cell, e * self.tl, minlength=n * k).reshape(n, k)
        u[:, 2 * k] = np.bincount(cluster, e * self.tt, minlength=n)
        spread = (resid * self.u[cluster]).sum(axis=1)
        u[:, -1] = np.bincount(cluster, self.tau * spread, minlength=n)
        return self.value, u

    def hessian(self, p: np.ndarray) -> np.ndarray:
        """The Hessian of the log-likelihood (size × size; see the class docstring): a
        copy of the one kept for ``p`` where there is one (:data:`_KEPT_HESSIANS`)."""
        key = np.asarray(p, float).tobytes()
        if key not in self._hessians:
            if len(self._hessians) >= _KEPT_HESSIANS:
                del self._hessians[next(iter(self._hessians))]  # the oldest
            self._hessians[key] = self._hessian(p)
        return self._hessians[key].copy()

    def _hessian(self, p: np.ndarray) -> np.ndarray:
        """:meth:`hessian`, computed."""
        self._at(p)
        k, n, size, tau, post = self.k, self.n, self.size, self.tau, self.post
        e = self.y[:, None] - self.fitted
        tu = tau * self.u  # ∂η/∂log τ at each instruction's nodes
        row_tu = tu[self.cluster]
        # −Σ_r Σ_q ω_iq v_rq ∂η_rq ∂η_rqᵀ
        c = self.fitted * (1 - self.fitted) * post[self.cluster]
        c0, c1 = c.sum(axis=1), (c * row_tu).sum(axis=1)
        hess = -(self.design.T @ self.design.multiply(c0[:, None])).toarray()
        cross = self.design.T @ c1
        hess[:, -1] -= cross
        hess[-1, :] -= cross
        hess[-1, -1] -= float((c * row_tu**2).sum())
        # Σ_i Σ_q ω_iq (g_iq − u_i)(g_iq − u_i)ᵀ, over instructions a chunk at a time
        # (g_iq per instruction, node and parameter: at most _SPREAD_ENTRIES of them)
        etl = e * self.tl[:, None]
        nodes = tu.shape[1]
        chunk = max(1, _SPREAD_ENTRIES // (size * nodes))
        for a in range(0, n, chunk):
            b = min(n, a + chunk)
            total = self.onto[a:b] @ e  # Σ_{r∈i} e_rq
            g = np.empty((b - a, size, nodes))
            g[:, :k] = (self.onto_cell[a * k : b * k] @ e).reshape(b - a, k, -1)
            g[:, k : 2 * k] = (self.onto_cell[a * k : b * k] @ etl).reshape(b - a, k, -1)
            g[:, 2 * k] = total * self.tbar[a:b, None]
            g[:, -1] = total * tu[a:b]
            u = np.einsum("iaq,iq->ia", g, post[a:b])
            g -= u[:, :, None]
            g *= np.sqrt(post[a:b])[:, None, :]
            flat = g.transpose(0, 2, 1).reshape(-1, size)
            hess += flat.T @ flat
            hess[-1, -1] += float(u[:, -1].sum())  # Σ_i Σ_q ω_iq Σ_{r∈i} e_rq τ u_iq
        return (hess + hess.T) / 2


def _posterior_modes(
    base: np.ndarray, tau: float, y: np.ndarray, cluster: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """Each instruction's posterior mode μ_i of u_i and the curvature there: the root of
    the strictly decreasing slope of its log posterior (``base``: each row's η without
    the instruction effect),

        f_i'(u) = τ Σ_{r∈i} (y_r − σ(base_r + τ u)) − u,
        −f_i''(u) = τ² Σ_{r∈i} σ(1 − σ) + 1,

    by Newton steps (at most 4 long) kept inside a bracket [lo_i, hi_i] with f_i'(lo_i)
    ≥ 0 ≥ f_i'(hi_i), which each point narrows: a step that would leave it, or that is
    over half the step before last (Newton is not closing in), goes to its midpoint
    instead (Numerical Recipes' rtsafe). It starts from u = 0 and [−τ c_i − 1, τ c_i +
    1] (c_i the instruction's rows, so |Σ (y − σ)| ≤ c_i), and stops where every Newton
    step is under 1e-10, with the curvature of that last point. Unguarded, Newton's
    steps on a log σ term far in its tail overshoot: at τ of 8 to 20 (systems that win
    or lose instructions together, 2 to 3% of verdicts the other way) they bounced
    between two points for all their 100 steps, ending up to 80 in slope from the mode
    (8 systems' wins at τ = 10.4: u = 0.0067 and 1.44 in turn, the mode 0.7), and the
    nodes centred there moved by 3 prior sds on every centring (30 rounds at each of
    the four rules, up to 53 s, and a quadrature that never settled)."""
    reach = tau * np.bincount(cluster, minlength=n) + 1.0
    lo, hi, mode = -reach, reach, np.zeros(n)
    last = before = 2 * reach  # the last two steps' lengths
    for _ in range(200):
        fitted = special.expit(base + tau * mode[cluster])
        slope = tau * np.bincount(cluster, y - fitted, minlength=n) - mode
        bend = tau**2 * np.bincount(cluster, fitted * (1 - fitted), minlength=n) + 1.0
        newton = slope / bend
        if np.abs(newton).max() < 1e-10:
            break
        lo, hi = np.where(slope > 0, mode, lo), np.where(slope < 0, mode, hi)
        step = np.clip(newton, -4.0, 4.0)
        bisect = (mode + step <= lo) | (mode + step >= hi) | (2 * np.abs(step) > before)
        mode = np.where(bisect, (lo + hi) / 2, mode + step)
        before, last = last, np.where(bisect, (hi - lo) / 2, np.abs(step))
    return mode, bend


class _RanOff(Exception):
    """The joint fit's parameters ran off to where its Hessian is not finite: no finite
    maximum."""


#: the largest spread τ (logits) of the instruction effect a step may reach: one of 50
#: decides every instruction before its answers are read, and where the systems win or
#: lose instructions together the likelihood climbs on as τ grows (no finite maximum;
#: left alone, the steps ran τ to thousands for a minute)
MAX_TAU = 50.0
#: the largest |θ_m|, |φ_m| or |π| (log-odds) a step may reach: a system that wins
#: exactly when its answer is the longer has φ_m run off without end (the likelihood
#: climbs on), and a coefficient of 30 already puts a win at odds of e^30
MAX_COEFFICIENT = 30.0
#: how far (in prior sds of u_i, or in log s_i) the nodes may move when centred again
#: at a maximum for it to stand, and how many times they are centred at most
CENTRED_TOL, RECENTRES = 1e-6, 30
#: centrings in a row that do not bring the nodes' move under STALLED_SHRINK times its
#: least so far, after which a rule's centring is taken as not settling (its rounds
#: cycle: at τ of 8 to 15, 24 nodes moved by 0.1 to 0.2 on every round of 30). A rule
#: finer than the first whose centring does not settle, so or in RECENTRES rounds,
#: gives no joint fit: the doublings went on to 192 nodes, 3 to 10 s in all where
#: systems win or lose instructions together (16 systems on 300 or 805 instructions,
#: 1.5-2% of the verdicts the other way, τ 10 to 15), to a fit that did not settle
#: either. Of 180 tables of that kind (3 to 24 systems, 60 to 500 instructions, 0 to
#: 20% the other way) every one with such a rule was None; the first rule's centring
#: may cycle where finer ones settle (1 of the 180: 24 nodes cycled, 48 to 192 agreed),
#: so its last maximum goes on to the doubling. No fit that settles had a rule that did
#: not (AlpacaEval 1 and 2: at most 4 centrings a rule; the planted benchmark's: 3)
STALLED_ROUNDS, STALLED_SHRINK = 4, 0.9
#: the rules (nodes) whose centring may end unsettled and still go on to the doubling: the
#: first (its last maximum); a finer rule's that does not settle ends the fit (None)
MAY_CYCLE = _NODES


def _ran_off(p: np.ndarray) -> bool:
    """Whether a step took the parameters past half of :data:`MAX_COEFFICIENT` or
    :data:`MAX_TAU`: where there is no finite maximum the likelihood flattens as they
    run off, its gradient falls under any tolerance, and they stop anywhere out there
    (a length coefficient of 30.0, at the edge, read as a maximum with its rates).
    :func:`_maximum_at` refuses such a step where it is taken: left to end, the steps
    crept along the edge for 60 to 90 Newton steps (16 systems on 805 instructions that
    win or lose them together: 3.2 s, now 0.3 s)."""
    return bool(np.abs(p[:-1]).max() > MAX_COEFFICIENT / 2 or np.exp(p[-1]) > MAX_TAU / 2)


def _maximum(
    like: _Likelihood, start: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """:func:`_maximum_at` with the nodes centred on each instruction's posterior
    (:meth:`_Likelihood.centre`) at ``start``, then at each maximum found, until
    centring again moves no node by :data:`CENTRED_TOL` (at most :data:`RECENTRES`
    times, and no more once :data:`STALLED_ROUNDS` centrings in a row have not cut the
    least move so far by a tenth): the maximum, scores and Hessian of one quadrature
    rule. None where there is no maximum, or where the centring of a rule finer than
    the first does not settle (:data:`STALLED_ROUNDS`); the first rule's last maximum
    goes on to the doubling."""
    like.centre(start)
    found, least, since = None, np.inf, 0
    for _ in range(RECENTRES):
        found = _maximum_at(like, start)
        if found is None:
            return None
        moved = like.centre(found[0])
        if moved < CENTRED_TOL:
            return found
        least, since = (moved, 0) if moved < STALLED_SHRINK * least else (least, since + 1)
        if since == STALLED_ROUNDS:
            break  # not settling
        start = found[0]
    return found if len(like.x) <= MAY_CYCLE else None


def _maximum_at(
    like: _Likelihood, start: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The parameters p̂ that maximise ``like`` from ``start`` (Newton steps within a
    trust region, scipy's ``trust-exact``, with the exact Hessian H), the instructions'
    scores u_i there, and (−H)⁻¹ (pseudo-inverse). None where there is no finite
    maximum: the steps end where the summed score is over 0.001 per row, take the
    parameters past half the edge (:func:`_ran_off`), or run off to where a value or
    the Hessian is not finite (a trial step far out, log τ of hundreds,
    overflows: such a step is refused, and a maximum where the Hessian overflows is
    none — said by these checks, not by floating-point warnings)."""
    size, rows = like.size, len(like.y)

    def objective(p: np.ndarray) -> tuple[float, np.ndarray]:
        if p[-1] > np.log(MAX_TAU) or np.abs(p[:-1]).max() > MAX_COEFFICIENT:
            return np.inf, np.zeros(size)  # refused: the steps stop at the edge, no maximum
        with np.errstate(over="ignore", invalid="ignore"):
            value, u = like.scores(p)
            gradient = u.sum(axis=0)
        if not (np.isfinite(value) and np.all(np.isfinite(gradient))):
            return np.inf, np.zeros(size)
        return -value, -gradient

    def curvature(p: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore"):
            hess = like.hessian(p)
        if not np.all(np.isfinite(hess)):
            raise _RanOff
        return -hess

    def running_off(intermediate_result: optimize.OptimizeResult) -> None:
        if _ran_off(np.asarray(intermediate_result.x, float)):
            raise _RanOff  # the steps would end out there: no finite maximum

    try:
        res = optimize.minimize(
            objective,
            start,
            jac=True,
            hess=curvature,
            method="trust-exact",
            callback=running_off,
            options={"gtol": 1e-6, "maxiter": 5000},
        )
        p = np.asarray(res.x, float)
        if not np.all(np.isfinite(p)) or _ran_off(p):
            return None
        u = like.scores(p)[1]
        if not np.abs(u.sum(axis=0)).max() <= 1e-3 * rows:  # NaN too
            return None
        return p, u, np.linalg.pinv(curvature(p))
    except _RanOff:
        return None


def _joint_fit(
    system: np.ndarray,
    cluster: np.ndarray,
    y: np.ndarray,
    tl: np.ndarray,
    *,
    level: float,
    nodes: int = _NODES,
    start: np.ndarray | None = None,
) -> _Joint | None:
    """Maximum (quasi-)likelihood fit of the joint model over every system (see the
    module docstring), integrating the instruction effect u_i ~ N(0, 1) out by
    Gauss–Hermite quadrature, and a cluster-robust (sandwich) interval per rate on the
    logit scale. ``system``/``cluster``: codes 0..K−1 / 0..n−1 per row. None where the
    fit cannot separate length from difficulty: fewer than :data:`MIN_SHARED`
    instructions answered by two or more systems, or no finite maximum (a system that
    won or lost every comparison)."""
    k, n = int(system.max()) + 1, int(cluster.max()) + 1
    # distinct systems per instruction (a duplicated annotation is not a second system)
    cells = np.unique(cluster * k + system)
    if np.sum(np.bincount(cells // k, minlength=n) > 1) < MIN_SHARED:
        return None
    mean_y = np.bincount(system, y, minlength=k) / np.bincount(system, minlength=k)
    if np.any((mean_y <= 0) | (mean_y >= 1)):
        return None  # a system that won (or lost) every comparison: no finite maximum
    like = _Likelihood(system, cluster, y, tl, nodes=nodes)
    x, w, size, tbar = like.x, like.w, like.size, like.tbar
    if start is None:
        clipped = np.clip(mean_y, 0.02, 0.98)
        start = np.concatenate([np.log(clipped / (1 - clipped)), np.zeros(k + 2)])
    found = _maximum(like, start)
    if found is None:
        return None
    p, u, bread = found
    bread = (bread + bread.T) / 2
    cov = bread @ (u.T @ u) @ bread * n / max(n - 1, 1)
    tau = float(np.exp(p[-1]))
    z = float(stats.norm.ppf(0.5 + level / 2))
    lc, low, high = np.zeros(k), np.zeros(k), np.zeros(k)
    for m in range(k):
        mine = tbar[np.unique(cluster[system == m])]
        s = _sigmoid(p[m] + p[2 * k] * mine[:, None] + tau * x[None, :])
        rate = float((s @ w).mean())
        if not 0 < rate < 1:  # a system that won (or lost) every comparison: no maximum
            return None
        ds = s * (1 - s) * w
        grad = np.zeros(size)
        grad[m] = ds.sum(axis=1).mean()
        grad[2 * k] = (ds.sum(axis=1) * mine).mean()
        grad[-1] = (ds @ (tau * x)).mean()
        grad /= rate * (1 - rate)  # of logit(rate)
        se = float(np.sqrt(max(grad @ cov @ grad, 0.0)))
        if not np.isfinite(se):
            return None
        centre = np.log(rate / (1 - rate))
        lc[m], low[m], high[m] = rate, _sigmoid(centre - z * se), _sigmoid(centre + z * se)
    return _Joint(100 * lc, 100 * low, 100 * high, p[k : 2 * k], tau, float(p[2 * k]), p, nodes)


def _length(frame: pd.DataFrame, text: str, words: str) -> np.ndarray | None:
    """Each row's answer length on one side: characters of the text where the table has
    texts, else the word count column, else None (the table says nothing of length)."""
    if text in frame.columns:
        return frame[text].fillna("").astype(str).str.len().to_numpy(float)
    if words in frame.columns:
        return frame[words].to_numpy(float)
    return None


def fixed_baseline(rows: pd.DataFrame) -> tuple[str, Side] | None:
    """The one system every row of ``rows`` compares with, and its side: ``"a"`` when
    ``model_a`` is the same in every row and ``model_b`` is not (AlpacaEval's layout),
    ``"b"`` the other way round (Arena-Hard-Auto's: a = the evaluated model). None when
    neither side is fixed, or when both are (one pair of systems: which one is the
    baseline is not in the data — name it with ``baseline=``). A table whose reader
    knows the baseline (Arena-Hard-Auto's records name it) has a ``baseline`` column:
    then that column decides — one baseline on one side of every row, or None (v2.0
    files compare each category with its own baseline).

    >>> t = pd.DataFrame({"model_a": ["m1", "m2"], "model_b": ["base", "base"]})
    >>> fixed_baseline(t), fixed_baseline(t.rename(columns={"model_a": "model_b",
    ...                                                     "model_b": "model_a"}))
    (('base', 'b'), ('base', 'a'))
    """
    a, b = rows["model_a"].dropna().unique(), rows["model_b"].dropna().unique()
    if "baseline" in rows.columns:
        named = rows["baseline"].dropna().unique()
        if len(named) != 1 or rows["baseline"].isna().any():
            return None
        side = [s for s, names in (("a", a), ("b", b)) if list(names) == [named[0]]]
        return (str(named[0]), "a" if side == ["a"] else "b") if len(side) == 1 else None
    if len(a) == 1 and len(b) > 1:
        return str(a[0]), "a"
    if len(b) == 1 and len(a) > 1:
        return str(b[0]), "b"
    return None


def length_controlled_win_rates(
    pairs: pd.DataFrame,
    *,
    judge: str,
    baseline: str | None = None,
    boot: Resampling = Resampling(),
) -> pd.DataFrame:
    """One row per system judged by ``judge`` against its one baseline: raw and
    length-controlled win rates (in %) with intervals — ``lc_win_rate`` the joint fit
    where two or more systems answered at least :data:`MIN_SHARED` of the same
    instructions, else the per-system GLM (``lc_method`` says
    which), ``lc_win_rate_glm`` AlpacaEval's per-system GLM always — the GLM's length and
    difficulty coefficients (``glm_difficulty`` false where no other system answered any
    of the system's instructions: the GLM then has no difficulty term, its coefficient
    0, and reads higher or lower than beside other systems), the joint fit's length
    coefficient, ``length_difficulty_r``
    (Pearson's r of the GLM's length and difficulty terms), n, and a ``caveat`` when
    that r says the GLM cannot tell the two apart (see the module docstring).

    The baseline is the system on one side of every row of the judge (``model_a`` in
    AlpacaEval's tables, ``model_b`` in Arena-Hard-Auto's; :func:`fixed_baseline`), or
    ``baseline`` where given; with one system against one other and no ``baseline``,
    ``model_a`` is taken as the baseline. Raises :class:`EstimationError` when the
    judge's rows do not share one baseline, or when the table has neither texts
    (``response_a``/``response_b``) nor lengths (``len_a``/``len_b``). A row whose
    ``model_a`` or ``model_b`` is missing (an unknown generator) is left out."""
    rows = pairs[(pairs["judge"] == judge) & pairs["p_a"].notna()]
    if rows.empty:
        raise EstimationError(f"no verdicts of judge {judge!r}")
    # a pair whose generator is unknown (a model 'NA', read as missing) names no system
    # and no baseline: left out, as Bradley-Terry leaves it out
    rows = rows[rows["model_a"].notna() & rows["model_b"].notna()]
    if rows.empty:
        raise EstimationError(f"judge {judge!r}: no verdict names both generators")
    found = fixed_baseline(rows)
    a_names, b_names = rows["model_a"].dropna().unique(), rows["model_b"].dropna().unique()
    if baseline is not None:
        sides = [s for s, names in (("a", a_names), ("b", b_names)) if list(names) == [baseline]]
        if not sides:
            raise EstimationError(
                f"judge {judge!r} does not compare every system with {baseline!r} on one side"
            )
        found = (baseline, "a" if "a" in sides else "b")
    elif found is None and len(a_names) == 1 and len(b_names) == 1:
        found = (str(a_names[0]), "a")
    if found is None:
        raise EstimationError(
            f"judge {judge!r} compares {len(a_names)} first and {len(b_names)} second "
            "systems; the length-controlled win rate needs one fixed baseline"
        )
    base, side = found
    len_a = _length(rows, "response_a", "len_a")
    len_b = _length(rows, "response_b", "len_b")
    if len_a is None or len_b is None:
        raise EstimationError(
            "no answer lengths: the table has neither texts (response_a, response_b) nor "
            "word counts (len_a, len_b)"
        )
    a_sys, b_sys = system_names(rows)
    if side == "a":  # y = P(the system beats the baseline); delta = baseline − system
        system, y, delta = b_sys, 1.0 - rows["p_a"].to_numpy(float), len_a - len_b
    else:
        system, y, delta = a_sys, rows["p_a"].to_numpy(float), len_b - len_a
    rows = rows.assign(_system=system.to_numpy(), _y=y, _delta=delta)
    rows = rows[(rows["_system"] != base) & np.isfinite(rows["_delta"].to_numpy(float))]
    if rows.empty:
        raise EstimationError(
            f"judge {judge!r}: no pair of another system with the baseline has both lengths"
        )
    missing = clusters_of(rows, missing_ok=True).isna().to_numpy()
    if missing.any():  # a row without a prompt id is an instruction of its own (sorted
        pid = rows["prompt_id"].astype(object).to_numpy(copy=True)  # first, in row order)
        pid[missing] = [f"\x00no prompt id, row {i:012d}" for i in np.flatnonzero(missing)]
        rows = rows.assign(prompt_id=pid)
    clipped = np.clip(rows["_y"].to_numpy(float), 0.01, 0.99)
    logit = pd.Series(np.log(clipped / (1 - clipped)), index=rows.index)
    by_prompt = logit.groupby(rows["prompt_id"])
    total = rows["prompt_id"].map(by_prompt.sum()).to_numpy(float)
    count = rows["prompt_id"].map(by_prompt.count()).to_numpy(float)
    others = np.where(count > 1, (total - logit.to_numpy()) / np.maximum(count - 1, 1), 0.0)
    sd = (
        rows.groupby("_system")["_delta"]
        .transform(lambda d: float(np.std(d.to_numpy(float), ddof=1)) if len(d) > 1 else 0.0)
        .to_numpy(float)
    )
    ok = np.isfinite(sd) & (sd > 0)
    tl = np.where(ok, np.tanh(rows["_delta"].to_numpy(float) / np.where(ok, sd, 1.0)), 0.0)
    # leave-this-system-out difficulty (centred below) and the length term
    rows = rows.assign(_gamma=others, _tl=tl)
    systems, names = pd.factorize(rows["_system"], sort=True)
    joint = None  # one system: nothing to share an instruction effect with
    if len(names) > 1:  # None too where the systems share too few instructions
        cluster = pd.factorize(rows["prompt_id"])[0]
        joint = _converged_fit(systems, cluster, rows["_y"].to_numpy(float), tl, level=boot.level)
    rng = np.random.default_rng(boot.seed)
    alpha = (1 - boot.level) / 2
    out = []
    for name, g in rows.groupby("_system", sort=True):
        y = g["_y"].to_numpy(float)
        tl = g["_tl"].to_numpy(float)
        gamma = g["_gamma"].to_numpy(float)
        gamma = gamma - gamma.mean()
        x = np.column_stack([np.ones(len(g)), tl, gamma])
        if not np.any(gamma != 0):
            x = x[:, :2]  # no other system: no difficulty term
        with fit_warnings_hidden():  # "perfect separation" is spurious for fractional y
            fit = sm.GLM(y, x, family=sm.families.Binomial()).fit()
        theta = np.asarray(fit.params, float)
        p = np.asarray(fit.fittedvalues, float)
        codes, uniques = pd.factorize(g["prompt_id"], sort=True)  # the draw: row order aside
        u = np.zeros((len(uniques), x.shape[1]))
        np.add.at(u, codes, x * (y - p)[:, None])
        info = (x * (p * (1 - p))[:, None]).T @ x
        reps = (
            theta
            + (resample_counts(len(uniques), boot.n_boot, rng) - 1.0) @ u @ np.linalg.pinv(info).T
        )
        psi, psi_reps = (
            (theta[2], reps[:, [2]]) if x.shape[1] == 3 else (0.0, np.zeros((boot.n_boot, 1)))
        )
        lc = float(_sigmoid(theta[0] + psi * gamma).mean())
        lc_reps = _sigmoid(reps[:, [0]] + psi_reps * gamma[None, :]).mean(axis=1)
        counts = resample_counts(len(uniques), boot.n_boot, rng)
        sums, ns = np.bincount(codes, y), np.bincount(codes).astype(float)
        raw_reps = (counts @ sums) / (counts @ ns)
        lo, hi = np.quantile(lc_reps, [alpha, 1 - alpha])
        rlo, rhi = np.quantile(raw_reps, [alpha, 1 - alpha])
        glm = (100 * lc, 100 * float(lo), 100 * float(hi))
        nothing = (float("nan"),) * 3
        glm_separated = not fit.converged or abs(theta[1]) > SEPARATED_LENGTH
        if glm_separated:
            glm = nothing
        joint_length = float("nan")
        if joint is not None:
            m = int(np.flatnonzero(names == name)[0])
            joint_length = float(joint.length[m])
        if joint is not None and abs(joint_length) <= SEPARATED_LENGTH:
            shown = (float(joint.lc[m]), float(joint.low[m]), float(joint.high[m]))
            method = JOINT
        else:
            shown, method = glm, (NONE if glm_separated else GLM)
        r, caveat = _confounding(tl, gamma, glm[0], shown[0] if method == JOINT else None)
        if method == NONE:
            caveat = (
                f"no length-controlled rate: the fit separates (length coefficient "
                f"{signed(theta[1], 1)} log-odds; past ±{SEPARATED_LENGTH:.0f} length alone "
                "decides every annotation and the rate at zero length difference is arbitrary): "
                "read the raw win rate, or add annotations"
            )
        out.append(
            {
                "system": str(name),
                "baseline": base,
                "win_rate": 100 * float(y.mean()),
                "win_rate_low": 100 * float(rlo),
                "win_rate_high": 100 * float(rhi),
                "lc_win_rate": shown[0],
                "lc_win_rate_low": shown[1],
                "lc_win_rate_high": shown[2],
                "lc_method": method,
                "lc_win_rate_glm": glm[0],
                "lc_win_rate_glm_low": glm[1],
                "lc_win_rate_glm_high": glm[2],
                "length_coefficient": float(theta[1]),
                "difficulty_coefficient": float(psi),
                "glm_difficulty": x.shape[1] == 3,
                "length_coefficient_joint": joint_length,
                "length_difficulty_r": r,
                "n": len(g),
                "caveat": caveat,
            }
        )
    return pd.DataFrame(out)


def compare_with_upstream(ours: pd.DataFrame, upstream: pd.DataFrame) -> dict[str, object]:
    """Spearman's ρ and the largest absolute difference between our and upstream's
    win rates (raw and length-controlled, in points) over the systems in both.

    ``upstream``: columns ``system``, ``win_rate``, ``length_controlled_winrate``.
    """
    both = ours.merge(upstream, on="system", suffixes=("", "_upstream"))
    if len(both) < 3:
        raise EstimationError("fewer than 3 systems in common with the upstream leaderboard")
    lc_diff = (both["lc_win_rate"] - both["length_controlled_winrate"]).abs()
    raw_diff = (both["win_rate"] - both["win_rate_upstream"]).abs()
    worst = int(lc_diff.to_numpy().argmax())
    return {
        "systems": len(both),
        "lc_spearman": float(
            stats.spearmanr(both["lc_win_rate"], both["length_controlled_winrate"]).statistic
        ),
        "lc_max_abs_diff": float(lc_diff.max()),
        "lc_max_abs_diff_system": str(both["system"].iloc[worst]),
        "raw_spearman": float(
            stats.spearmanr(both["win_rate"], both["win_rate_upstream"]).statistic
        ),
        "raw_max_abs_diff": float(raw_diff.max()),
        "not_in_our_data": UPSTREAM_DIFFERENCES,
        "table": both,
    }
