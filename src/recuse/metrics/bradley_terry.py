"""Bradley–Terry leaderboards from pairwise verdicts, raw and adjusted for the judge's biases.

The model is a logistic GLM fitted by Newton–Raphson on a sparse design (outcomes may be
probabilities; the fit statsmodels' ``GLM(Binomial)`` gives, :func:`_logistic_fit`):

    logit P(a beats b) = s_a − s_b + Σ_k β_k · x_k

``s_m`` is the strength of system ``m`` in log-odds units (shown centred: the mean
over systems is 0); ``x_k`` are the covariates below, each a difference "a minus b"
so that a positive ``β_k`` means the judge rewards more of it:

=========  ===========================================================================
length     tanh((len_a − len_b) / sd), sd over the rows fitted (words)
headers    log(1 + markdown headers in a) − log(1 + headers in b)
lists      the same for list items (``-``, ``*``, ``+`` or ``1.`` at a line start)
bold       the same for bold spans (``**…**`` or ``__…__``)
first      +1 when a was shown first, −1 when shown second, 0 when the order is unknown
own        +1 when a is the judge's own answer, −1 when b is
family     +1 when a comes from the judge's family (not its own), −1 when b does
=========  ===========================================================================

Markdown is counted outside code: fenced blocks (```` ``` ```` or ``~~~``) and inline
code spans are removed first, so Python's ``__name__ == "__main__"`` is not bold.
A covariate that is non-zero in fewer than :data:`MIN_PRESENT` rows is not estimated
(listed in ``dropped`` with the count): a coefficient learnt from a handful of pairs
(one answer with a bold span among 1,610) says what those pairs did, not what the
judge rewards, and its interval from so few rows is not to be trusted.

*Raw* is the same model without covariates: the leaderboard a plain pooling of the
verdicts gives. *Adjusted* strengths are the systems' strengths with every covariate
held equal. Pairs judged in both orders enter as two rows of weight ½ each.

Intervals: a one-step (linearised) cluster bootstrap over prompts — prompts are
resampled with replacement and each replicate is θ* = θ̂ + H⁻¹ Σ_c (n*_c − 1) u_c,
with u_c the score of prompt c at the fit and H the Fisher information; percentile
intervals of strengths, ranks and coefficients come from the same replicates. This is
asymptotically the cluster-robust sandwich (CR0) and costs one fit. Each end is the
replicates' quantile at Hesterberg's expanded level for the ``G`` prompts
(:func:`~recuse.metrics.bootstrap.expanded_level`: ``Φ(√(G/(G−1)) · t_{G−1}(q))`` in
place of ``q``), so that the interval is about ``θ̂ ± √(G/(G−1)) t_{G−1} se_CR0``: the
plain percentile ends held :func:`~recuse.simulate.bradley_terry.simulate_bt`'s planted
strengths in 0.857 of 400 tables at 20 prompts and 0.868 at 40 (90% intervals), the
expanded ones 0.884 and 0.881 (``benchmarks/metric_coverage.py``, ``leaderboard``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy import stats
from scipy.sparse import coo_matrix, csr_matrix, hstack
from scipy.sparse.csgraph import connected_components
from scipy.special import expit, ndtr

from recuse.choices import COVARIATES as COVARIATES
from recuse.errors import EstimationError
from recuse.metrics.bootstrap import (
    Extrapolation,
    Resampling,
    beyond_fix,
    expanded_level,
    expanded_quantile,
    resample_counts,
    tail_end,
)
from recuse.metrics.estimate import clusters_of, items_of
from recuse.metrics.verdicts import require_pairs
from recuse.numbers import percent
from recuse.roster import self_keys

__all__ = [
    "COVARIATES",
    "BTFit",
    "Leaderboard",
    "bradley_terry",
    "leaderboard",
    "markdown_counts",
    "system_names",
]

FloatArray = NDArray[np.float64]

_HEADER = re.compile(r"^\s{0,3}#{1,6}\s", re.MULTILINE)
_LIST = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s", re.MULTILINE)
_BOLD = re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__")
_FENCE = re.compile(
    r"^ {0,3}(`{3,}|~{3,}).*?(?:^ {0,3}\1[`~]*[ \t]*$|\Z)", re.MULTILINE | re.DOTALL
)
_INLINE_CODE = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)", re.DOTALL)
MIN_PRESENT = 20  # rows a covariate must be non-zero in to be estimated
VARIANTS = ("concise", "verbose")  # length-prompted variants (AlpacaEval's category)
#: why a judged pair is left out of the leaderboard's fit (:attr:`BTFit.left_out`)
NO_VERDICT = "with no verdict"
SAME_SYSTEM = "comparing a system with itself"
UNKNOWN_MODEL = "with the model behind an answer unknown"


def markdown_counts(text: object) -> tuple[int, int, int]:
    """Headers, list items and bold spans in one answer (0, 0, 0 for a missing text).

    Code is left out: fenced blocks and inline code spans are removed first.

    >>> markdown_counts("# Title\\n- one\\n- two **bold**")
    (1, 2, 1)
    >>> markdown_counts("```python\\n# comment\\nif __name__ == '__main__':\\n```\\nsee `__init__`")
    (0, 0, 0)
    """
    if not isinstance(text, str):
        return 0, 0, 0
    text = _INLINE_CODE.sub("", _FENCE.sub("", text))
    return len(_HEADER.findall(text)), len(_LIST.findall(text)), len(_BOLD.findall(text))


def _markdown_of(a: pd.Series, b: pd.Series) -> tuple[FloatArray, FloatArray]:
    """:func:`markdown_counts` of each text of ``a`` and of ``b`` (rows × 3 each), each
    distinct text counted once (a missing one is 0, 0, 0): a pair judged in both orders
    is two rows, and AlpacaEval's baseline answers an instruction once for every system
    and judge (alpaca-eval's 23,338 pairs hold 16,568 distinct texts among their 46,676)."""
    codes, texts = pd.factorize(pd.concat([a, b], ignore_index=True))  # missing: -1
    counted = np.zeros((len(texts) + 1, 3))  # the last row, taken by -1: a missing text
    counted[:-1] = np.array([markdown_counts(t) for t in texts], float).reshape(-1, 3)
    each = counted[codes]
    return each[: len(a)], each[len(a) :]


def system_names(pairs: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """The system of each side: the model id, with `` (concise)`` / `` (verbose)`` added
    to the evaluated side when ``category`` marks a length-prompted variant (AlpacaEval
    writes such variants as ``category``; each is ranked as its own system)."""
    a = pairs["model_a"].astype(str)
    b = pairs["model_b"].astype(str)
    if "category" in pairs.columns:
        cat = pairs["category"].astype("string")
        variant = cat.isin(VARIANTS).fillna(False).to_numpy(bool)
        b = b.where(~variant, b + " (" + cat.fillna("") + ")")
    return a, b


@dataclass(frozen=True)
class BTFit:
    """One fitted Bradley–Terry model and its bootstrap replicates.

    ``strengths`` are centred (mean 0) log-odds; ``ranks`` 1 = strongest; the
    ``*_low``/``*_high`` arrays are expanded percentile bounds at ``level`` (module
    docstring). ``n_rows``: the rows
    fitted (a pair judged in both orders is two); ``n_pairs``: the pairs they come from,
    the sample the estimate is made from; ``left_out``: the pairs given that did not
    enter the fit, counted by why (:meth:`left_out_words`).
    """

    systems: tuple[str, ...]
    strengths: FloatArray
    strengths_low: FloatArray
    strengths_high: FloatArray
    ranks: NDArray[np.int64]
    ranks_low: NDArray[np.int64]
    ranks_high: NDArray[np.int64]
    covariates: tuple[str, ...]
    coefficients: FloatArray
    coefficients_low: FloatArray
    coefficients_high: FloatArray
    n_rows: int
    n_pairs: int
    n_clusters: int
    level: float
    n_boot: int
    dropped: Mapping[str, str] = field(default_factory=dict)  # covariate -> why left out
    left_out: Mapping[str, int] = field(default_factory=dict)  # why -> pairs not fitted
    #: some end of a strength or coefficient lies past the resamples' reach (99% from 10
    #: prompts or fewer at 2,000 resamples) and is extrapolated along a normal tail
    #: (:func:`~recuse.metrics.bootstrap.tail_end`); the column words say so
    extrapolated: bool = False
    #: the tail probability the expanded ends ask of the resamples, ``Φ(−|z'|)`` with
    #: ``z'`` Student's for the prompts (:func:`_beyond_words` names what reads it)
    tail: float = math.nan
    #: some end of a strength was extrapolated (the strength columns' words; a
    #: coefficient's end alone said the strengths' were)
    strengths_extrapolated: bool = False
    #: each coefficient's extrapolated ends (``covariates`` order; None: neither end),
    #: as a bias finding of the covariate records them (``Finding.extrapolated``)
    coefficients_extrapolated: tuple[Extrapolation | None, ...] = ()

    def left_out_words(self) -> str:
        """The pairs given that were left out of the fit, with why, in words ('' when none
        were).

        >>> import dataclasses
        >>> none = np.zeros(0)
        >>> fit = BTFit((), none, none, none, none, none, none, (), none, none, none,
        ...             n_rows=6, n_pairs=4, n_clusters=2, level=0.9, n_boot=10)
        >>> dataclasses.replace(fit, left_out={NO_VERDICT: 3}).left_out_words()
        '3 pairs left out (with no verdict)'
        >>> two = {NO_VERDICT: 3, UNKNOWN_MODEL: 0, SAME_SYSTEM: 1}
        >>> dataclasses.replace(fit, left_out=two).left_out_words()
        '4 pairs left out (3 with no verdict; 1 comparing a system with itself)'
        """
        counted = {why: k for why, k in self.left_out.items() if k}
        total = sum(counted.values())
        if not total:
            return ""
        noun = "pair" if total == 1 else "pairs"
        if len(counted) == 1:
            return f"{total:,} {noun} left out ({next(iter(counted))})"
        each = "; ".join(f"{k:,} {why}" for why, k in counted.items())
        return f"{total:,} {noun} left out ({each})"

    def strength_table(self) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "system": self.systems,
                "strength": self.strengths,
                "strength_low": self.strengths_low,
                "strength_high": self.strengths_high,
                "rank": self.ranks,
                "rank_low": self.ranks_low,
                "rank_high": self.ranks_high,
            }
        )

    def coefficient_table(self) -> pd.DataFrame:
        """One row per covariate: its definition, coefficient and (expanded) percentile interval at
        ``level`` (a column of its own: the CSV's ci_low and ci_high said no level)."""
        return pd.DataFrame(
            {
                "covariate": self.covariates,
                "definition": [COVARIATES[c] for c in self.covariates],
                "coefficient (log-odds)": self.coefficients,
                "ci_low": self.coefficients_low,
                "ci_high": self.coefficients_high,
                "level": self.level,
            }
        )

    def coefficient_columns(self) -> dict[str, str]:
        """What each column of :meth:`coefficient_table` holds, in words (its
        ``Table.columns``): the table gave a ``level`` of 0.9 and log-odds with none."""
        far = any(x is not None for x in self.coefficients_extrapolated)
        return {
            "covariate": "the bias the coefficient measures",
            "definition": "how the covariate is coded for a pair",
            "coefficient (log-odds)": "the change in the log-odds that a wins for one unit more of "
            "the covariate as its definition codes it, the systems' strengths held equal; 0 = "
            "no bias",
            "ci_low": f"the low end of its {percent(self.level)} percentile interval (cluster "
            "bootstrap over prompts, its ends expanded for the prompts: Student's t"
            f"{_beyond_words(self.level, self.n_boot, self.tail) if far else ''})",
            "ci_high": "the high end",
            "level": "the interval's confidence level as a share (0.9: a 90% interval)",
        }


def _beyond_words(level: float, n_boot: int, tail: float) -> str:
    """What an interval's words add where some end was extrapolated past the resamples,
    the ends asking them for tail probability ``tail``, with what brings it within reach
    (:func:`~recuse.metrics.bootstrap.beyond_fix`: more prompts, or past the normal
    tail's reach more resamples).

    >>> _beyond_words(0.99, 2000, 1.3e-7)[-13:]  # 5 prompts
    '— add prompts'
    """
    fix = beyond_fix(level, resamples=n_boot, tail=tail, both=True)  # "ends": them
    return (
        "; ends past the resamples' reach extrapolated along a normal tail from the "
        f"estimate through their deepest quantile — {fix}"
    )


def _ranks(strengths: FloatArray) -> NDArray[np.int64]:
    """Rank 1 = strongest, along the last axis (ties broken by order)."""
    order = np.argsort(-strengths, axis=-1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(1, strengths.shape[-1] + 1), axis=-1)
    return ranks.astype(np.int64)


def _system_design(a: pd.Series, b: pd.Series) -> tuple[tuple[str, ...], csr_matrix]:
    """Systems (sorted) and the sparse strength columns: row i holds +1 in a's column and
    −1 in b's, the first system's column (the reference) left out; raises when the
    comparison graph is not connected."""
    systems = tuple(sorted(set(a) | set(b)))
    if len(systems) < 2:
        raise EstimationError("a leaderboard needs at least two systems compared")
    index = {s: i for i, s in enumerate(systems)}
    ia = a.map(index).to_numpy(np.int64)
    ib = b.map(index).to_numpy(np.int64)
    n = len(ia)
    graph = coo_matrix((np.ones(n), (ia, ib)), shape=(len(systems),) * 2)
    k, labels = connected_components(graph, directed=False)
    if k > 1:
        groups = [
            sorted(s for s, lab in zip(systems, labels, strict=True) if lab == g) for g in range(k)
        ]
        raise EstimationError(
            "the systems are not all compared with each other (directly or through others): "
            + "; ".join(", ".join(g[:5]) for g in groups)
            + " — strengths across these groups are not comparable"
        )
    rows = np.repeat(np.arange(n), 2)
    cols = np.column_stack([ia, ib]).ravel()
    vals = np.tile([1.0, -1.0], n)
    x = csr_matrix((vals, (rows, cols)), shape=(n, len(systems)))  # a == b: +1 − 1 = 0
    return systems, x[:, 1:].tocsr()


def _residuals(s: csr_matrix, cols: FloatArray) -> FloatArray:
    """``cols`` less their least-squares projection on the strength columns ``s``:
    ``r = c − S (SᵀS)⁻¹ Sᵀ c`` (``SᵀS`` is the comparison graph's Laplacian less the
    reference's row and column, invertible when the graph is connected)."""
    gram = (s.T @ s).toarray()
    return cols - s @ np.linalg.solve(gram, np.asarray(s.T @ cols))


def _design(
    a: pd.Series, b: pd.Series, covariates: pd.DataFrame
) -> tuple[tuple[str, ...], csr_matrix, list[str], dict[str, str]]:
    """System columns (first system is the reference, left out) and the covariates that
    are identifiable; raises when the comparison graph is not connected.

    A covariate ``c`` is identifiable when ``[S, C_kept, c]`` has full column rank. ``S``
    (a connected graph's incidence columns less one) has full rank, so that is when
    ``c``'s residual ``r`` off ``S`` (:func:`_residuals`), less its projection on the
    kept covariates' residuals, is not ~0: ``‖r‖`` must exceed
    ``max(10⁻⁹ · ‖c‖, σ_max([S, C]) · max(n, p) · ε)`` — 10⁻⁹ of the column's own size
    (the residuals carry the solve's rounding: an exactly collinear column's is about
    ``ε · cond · ‖c‖``, never zero), and never below NumPy's ``matrix_rank`` tolerance.
    The first term is the column's own scale, not the design's: a covariate of scale 10⁴
    is not dropped because a kept one is of scale 10⁻⁵ (b1e448ef's smallest singular
    value of all the residuals against ``10⁻⁹ σ_max`` dropped it). ``n × p`` dense SVDs
    are never made: ``σ_max`` comes from the ``p × p`` Gram matrix, the projection from
    a QR of the kept residuals (``n × covariates``), each scaled to norm 1."""
    systems, s = _system_design(a, b)
    n = s.shape[0]
    kept: list[str] = []
    dropped: dict[str, str] = {}
    cols = {name: covariates[name].to_numpy(float) for name in covariates.columns}
    if cols:
        res = _residuals(s, np.column_stack(list(cols.values())))
        gram_s = (s.T @ s).toarray()
    for name, col in cols.items():
        present = int(np.count_nonzero(col))
        if present == 0:
            dropped[name] = "no variation in this data"
            continue
        if present < MIN_PRESENT:
            dropped[name] = (
                f"present in only {present} of {n:,} judged rows (fewer than {MIN_PRESENT}): "
                "too rare to estimate — a coefficient from so few pairs describes them, "
                "not what the judge rewards"
            )
            continue
        names = [*kept, name]
        c = np.column_stack([cols[k] for k in names])
        sc = np.asarray(s.T @ c)
        gram = np.block([[gram_s, sc], [sc.T, c.T @ c]])
        sigma_max = float(np.sqrt(max(np.linalg.eigvalsh(gram)[-1], 0.0)))
        p = gram.shape[0]
        tol = sigma_max * max(n, p) * np.finfo(float).eps
        r = res[:, list(cols).index(name)]
        if kept:
            k_res = res[:, [list(cols).index(k) for k in kept]]
            q = np.linalg.qr(k_res / np.linalg.norm(k_res, axis=0))[0]
            for _ in range(2):  # twice: the projection's rounding off as well
                r = r - q @ (q.T @ r)
        if np.linalg.norm(r) <= max(1e-9 * np.linalg.norm(col), tol):
            dropped[name] = (
                "not identifiable here (collinear with the strengths or another covariate)"
            )
            continue
        kept.append(name)
    if not kept:
        return systems, s, kept, dropped
    design = hstack([s, csr_matrix(np.column_stack([cols[c] for c in kept]))])
    return systems, design.tocsr(), kept, dropped


def _neg_loglik(eta: FloatArray, y: FloatArray, w: FloatArray) -> float:
    """``−Σ w [y log p + (1 − y) log(1 − p)]`` at ``p = expit(η)``, without overflow."""
    return float(np.sum(w * (y * np.logaddexp(0.0, -eta) + (1 - y) * np.logaddexp(0.0, eta))))


def _logistic_fit(
    x: csr_matrix, y: FloatArray, w: FloatArray, *, max_iter: int = 100, tol: float = 1e-10
) -> tuple[FloatArray, FloatArray]:
    """Maximum-likelihood ``θ`` of the binomial GLM ``logit p = xθ`` with frequency
    weights ``w`` and fractional ``y`` allowed (statsmodels' ``GLM(y, x, Binomial(),
    freq_weights=w)``), and the fitted ``p``. Newton–Raphson from ``θ = 0`` on the sparse
    design: ``θ ← θ + t (Xᵀ W X)⁻¹ Xᵀ w (y − p)``, ``W = diag(w p (1 − p))``, the step
    halved (``t``) until the likelihood does not fall; stops when no coordinate moves by
    more than ``tol``. Each step costs ``O(nnz(x) · p)`` and a ``p × p`` solve, where
    statsmodels' IRLS works on the dense ``n × p`` design.

    Raises :class:`EstimationError` rather than return a number that is no estimate:
    when ``max_iter`` steps end unconverged, when no step of ``t ≥ 10⁻⁶`` keeps the
    likelihood (a worse one is never taken) away from the optimum
    (``max |Xᵀ w (y − p)| > 10⁻⁸ · max(1, Σ w)``), or when some column's information at
    the end, ``Σ_i x_ij² w_i p_i (1 − p_i)``, is ``≤ 10⁻¹²`` of its value at ``p = ½``
    (scale-free): every fitted ``p`` that column touches reached 0 or 1 — a covariate
    separates the verdicts, and the likelihood keeps rising as its coefficient grows
    (statsmodels stopped there too, at coefficients of 800 and more, saying nothing)."""
    theta = np.zeros(x.shape[1])
    eta = np.zeros(x.shape[0])
    loss = _neg_loglik(eta, y, w)
    converged = False
    for _ in range(max_iter):
        p = expit(eta)
        grad = x.T @ (w * (y - p))
        info = (x.T @ x.multiply((w * p * (1 - p))[:, None])).toarray()
        try:
            step = np.linalg.solve(info, grad)
        except np.linalg.LinAlgError:  # a singular information: the least-squares step
            step = np.linalg.lstsq(info, grad, rcond=None)[0]
        t = 1.0
        while (loss_t := _neg_loglik(x @ (theta + t * step), y, w)) > loss + 1e-12 * abs(loss):
            t /= 2
            if t < 1e-6:  # no step keeps the likelihood: stay, optimal or not (below)
                converged = bool(np.max(np.abs(grad), initial=0.0) <= 1e-8 * max(1.0, w.sum()))
                break
        else:
            theta = theta + t * step
            eta, loss = x @ theta, loss_t
            converged = bool(np.max(np.abs(t * step), initial=0.0) <= tol)
        if converged or t < 1e-6:
            break
    if not converged:
        raise EstimationError(
            f"the logistic fit did not converge ({max_iter} Newton steps, or no step that "
            "keeps the likelihood): a covariate may separate the verdicts (the likelihood "
            "rising without end as its coefficient grows), so its numbers are no estimate"
        )
    p = expit(eta)
    # each column's information at the fit against at θ = 0 (p = ½): scale-free, and
    # ~0 only where every row the column touches has its p at 0 or 1
    at_fit = np.asarray(x.multiply(x).T @ (w * p * (1 - p))).ravel()
    at_zero = np.asarray(x.multiply(x).T @ (w / 4)).ravel()
    if np.any(at_fit <= 1e-12 * at_zero):
        raise EstimationError(
            "the verdicts are separated: the fitted probabilities reach 0 or 1 and the "
            "likelihood keeps rising as a coefficient grows, so it has no finite estimate"
        )
    return theta, p


def bradley_terry(
    y: FloatArray,
    a: pd.Series,
    b: pd.Series,
    clusters: pd.Series,
    *,
    covariates: pd.DataFrame | None = None,
    weights: FloatArray | None = None,
    boot: Resampling = Resampling(),
) -> BTFit:
    """Fit ``logit P(a beats b) = s_a − s_b + Σ β_k x_k`` (binomial GLM by Newton–Raphson
    on a sparse design, :func:`_logistic_fit`; fractional ``y`` allowed) and bootstrap it
    over ``clusters`` (see the module docstring for the one-step cluster bootstrap).

    Raises :class:`EstimationError` when the strengths have no finite estimate: the
    systems are not all compared (directly or through others), or some group of them
    never lost to the rest (:func:`no_finite_strengths`; covariates cannot rescue it:
    the likelihood still rises as that group's strengths move up). Rows of weight 0 do
    not count; a weight that is not a number at least 0 is an :class:`EstimationError`
    naming its row (statsmodels ended in "The first guess on the deviance function
    returned a nan" for one NaN weight)."""
    y = np.asarray(y, float)
    n = len(y)
    cov = covariates if covariates is not None else pd.DataFrame(index=range(n))
    cov = cov.reset_index(drop=True)
    w = np.ones(n) if weights is None else np.asarray(weights, float)
    if len(bad := np.flatnonzero(~(w >= 0))):  # NaN, negative (±inf: not finite below)
        raise EstimationError(
            f"weights: row {bad[0]} is {w[bad[0]]}, not a number at least 0 "
            f"({len(bad):,} such rows)"
        )
    if not np.isfinite(w).all():
        raise EstimationError(f"weights: row {np.flatnonzero(~np.isfinite(w))[0]} is infinite")
    a, b = a.reset_index(drop=True), b.reset_index(drop=True)
    systems, x, kept, dropped = _design(a, b, cov)
    counted = w > 0
    why = no_finite_strengths(y[counted], a[counted], b[counted])
    if why is not None:
        raise EstimationError(why)
    try:
        theta, p = _logistic_fit(x, y, w)
    except EstimationError as exc:
        raise EstimationError(f"{exc} (covariates fitted: {', '.join(kept) or 'none'})") from None
    # clusters sorted, as cluster_bootstrap sorts them: the draw depends on the set of
    # clusters and the seed, not on the order of the rows
    codes, uniques = pd.factorize(clusters.reset_index(drop=True), sort=True)
    by_cluster = csr_matrix((np.ones(n), (codes, np.arange(n))), shape=(len(uniques), n))
    u = np.asarray((by_cluster @ x.multiply((w * (y - p))[:, None])).toarray())
    info = (x.T @ x.multiply((w * p * (1 - p))[:, None])).toarray()
    h_inv = np.linalg.pinv(info)
    rng = np.random.default_rng(boot.seed)
    counts = resample_counts(len(uniques), boot.n_boot, rng)
    reps = theta + (counts - 1.0) @ u @ h_inv.T  # (n_boot, k)
    k_sys = len(systems) - 1

    def strengths_of(t: FloatArray) -> FloatArray:
        s = np.concatenate([np.zeros((*t.shape[:-1], 1)), t[..., :k_sys]], axis=-1)
        return s - s.mean(axis=-1, keepdims=True)

    alpha = (1 - boot.level) / 2
    # Hesterberg's expanded percentile ends for the prompts resampled (see the module
    # docstring): the plain percentile is the CR0 sandwich's normal interval, narrow
    # with few prompts
    # (ends past the resamples' reach extrapolated along a normal tail, tail_end: at 99%
    # from 5 prompts they were the extreme resamples, 0.92 coverage; ranks, bounded,
    # keep the resamples' quantile)
    tails = [expanded_level(q, len(uniques)) for q in (alpha, 1 - alpha)]
    zs = [expanded_quantile(q, len(uniques)) for q in (alpha, 1 - alpha)]
    s_hat = strengths_of(theta)
    s_rep = strengths_of(reps)
    r_rep = _ranks(s_rep)
    c_rep = reps[:, k_sys:]
    tail = float(ndtr(-abs(zs[0])))

    def q(v: NDArray[Any], centre: FloatArray) -> tuple[FloatArray, FloatArray, NDArray[Any]]:
        """Each column's low and high ends, and which of them were extrapolated (2 × k)."""
        ends = np.zeros((2, v.shape[1]))
        far = np.zeros((2, v.shape[1]), dtype=bool)
        for j, col in enumerate(np.sort(v, axis=0).T):
            for i, z in enumerate(zs):
                ends[i, j], far[i, j] = tail_end(col, z, center=float(centre[j]))
        return ends[0], ends[1], far

    s_lo, s_hi, s_far = q(s_rep, s_hat)
    r_lo, r_hi = (np.asarray(e, float) for e in np.quantile(r_rep, tails, axis=0))
    c_lo, c_hi, c_far = q(c_rep, theta[k_sys:])
    records = tuple(
        Extrapolation(low=bool(lo), high=bool(hi), tail=tail, resamples=boot.n_boot,
                      clusters=len(uniques), level=boot.level, bias_corrected=False)
        if lo or hi else None
        for lo, hi in c_far.T
    )  # fmt: skip
    return BTFit(
        systems=systems,
        strengths=s_hat,
        strengths_low=s_lo,
        strengths_high=s_hi,
        ranks=_ranks(s_hat),
        ranks_low=np.floor(r_lo).astype(np.int64),
        ranks_high=np.ceil(r_hi).astype(np.int64),
        covariates=tuple(kept),
        coefficients=theta[k_sys:],
        coefficients_low=c_lo,
        coefficients_high=c_hi,
        n_rows=n,
        n_pairs=n,
        n_clusters=len(uniques),
        level=boot.level,
        n_boot=boot.n_boot,
        dropped=dropped,
        extrapolated=bool(s_far.any() or c_far.any()),
        tail=tail,
        strengths_extrapolated=bool(s_far.any()),
        coefficients_extrapolated=records,
    )


@dataclass(frozen=True)
class Leaderboard:
    """Raw and adjusted judge leaderboards (and the humans', where labels exist)."""

    raw: BTFit
    adjusted: BTFit
    human: BTFit | None
    judges: tuple[str, ...]
    tau_raw_adjusted: float
    tau_raw_human: float | None
    tau_adjusted_human: float | None
    #: why the pairs' human labels give no leaderboard of their own ("" where they give
    #: one, or there are none): the human strengths and the τ against them are absent
    human_missing: str = ""

    def columns(self) -> dict[str, str]:
        """What each column of :meth:`table` holds, in words (its ``Table.columns``):
        the CSV's ``raw strength_low`` or ``human rank_high`` said neither their level nor
        whose verdicts a strength is fitted to, and a human strength (1.63 for gpt-4 on
        llmbar-mtbench) reads as the same scale as the judges' (1.18) without it."""
        pct = percent(self.raw.level)
        fits = {
            "raw": "the judges' verdicts as they are",
            "adjusted": "the judges' verdicts, the covariates (length, markdown, position, "
            "own answer, family) held equal",
            "human": "the human labels",
        }
        out: dict[str, str] = {"system": "the model whose answers were judged"}
        for fit, whose in fits.items():
            if fit == "human" and self.human is None:
                continue
            bt = getattr(self, fit)
            far = _beyond_words(bt.level, bt.n_boot, bt.tail) if bt.strengths_extrapolated else ""
            out |= {
                f"{fit} strength": f"Bradley–Terry strength fitted to {whose}: log-odds, "
                "centred (mean 0 over the systems); the difference of two systems' is the "
                "log-odds that the first wins",
                f"{fit} strength_low": f"the low end of its {pct} percentile interval "
                "(cluster bootstrap over prompts, its ends expanded for the prompts: "
                f"Student's t{far})",
                f"{fit} strength_high": "the high end",
                f"{fit} rank": "its rank by that strength, 1 = strongest",
                f"{fit} rank_low": "the best rank it takes between the interval's ends",
                f"{fit} rank_high": "the worst",
            }
        return out

    def table(self) -> pd.DataFrame:
        """One row per system: raw and adjusted strength with interval and rank."""
        out = self.raw.strength_table().add_prefix("raw ").rename(columns={"raw system": "system"})
        adj = self.adjusted.strength_table().add_prefix("adjusted ")
        out = out.merge(adj, left_on="system", right_on="adjusted system").drop(
            columns=["adjusted system"]
        )
        if self.human is not None:
            hum = self.human.strength_table().add_prefix("human ")
            out = out.merge(hum, left_on="system", right_on="human system", how="left").drop(
                columns=["human system"]
            )
        return out.sort_values("adjusted rank").reset_index(drop=True)


def _verdict_rows(pairs: pd.DataFrame) -> pd.DataFrame:
    """One row per judged order (two of weight ½ for a pair judged in both orders)."""
    first = (
        pairs["p_a_first"].to_numpy(float) if "p_a_first" in pairs else np.full(len(pairs), np.nan)
    )
    second = (
        pairs["p_a_second"].to_numpy(float)
        if "p_a_second" in pairs
        else np.full(len(pairs), np.nan)
    )
    mean = pairs["p_a"].to_numpy(float)
    both = np.isfinite(first) & np.isfinite(second)
    only_first = np.isfinite(first) & ~np.isfinite(second)
    only_second = ~np.isfinite(first) & np.isfinite(second)
    unknown = ~np.isfinite(first) & ~np.isfinite(second) & np.isfinite(mean)
    parts = []
    for mask, y, pos, w in (
        (both, first, 1.0, 0.5),
        (both, second, -1.0, 0.5),
        (only_first, first, 1.0, 1.0),
        (only_second, second, -1.0, 1.0),
        (unknown, mean, 0.0, 1.0),
    ):
        part = pairs[mask].copy()
        part["_y"] = y[mask]
        part["_first"] = pos
        part["_w"] = w
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def _covariates(
    rows: pd.DataFrame,
    a: pd.Series,
    b: pd.Series,
    families: Mapping[str, str],
    selves: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    out = pd.DataFrame(index=rows.index)
    if {"len_a", "len_b"} <= set(rows.columns):
        d = (rows["len_a"] - rows["len_b"]).to_numpy(float)
        sd = float(np.nanstd(d))
        out["length"] = np.tanh(np.nan_to_num(d) / sd) if sd > 0 else 0.0
    if {"response_a", "response_b"} <= set(rows.columns):
        ma, mb = _markdown_of(rows["response_a"], rows["response_b"])
        diff = np.log1p(ma) - np.log1p(mb)
        out["headers"], out["lists"], out["bold"] = diff[:, 0], diff[:, 1], diff[:, 2]
    out["first"] = rows["_first"].to_numpy(float)
    judge = rows["judge"].astype(str).to_numpy()
    ma_, mb_ = rows["model_a"].astype(str).to_numpy(), rows["model_b"].astype(str).to_numpy()
    key_j, key_a, key_b = (
        self_keys(pd.Series(x, dtype=object), selves).to_numpy() for x in (judge, ma_, mb_)
    )
    own_a, own_b = key_a == key_j, key_b == key_j
    fam = np.array([families.get(j, "") for j in judge], dtype=object)
    fam_a = np.array([families.get(m, "") for m in ma_], dtype=object)
    fam_b = np.array([families.get(m, "") for m in mb_], dtype=object)
    famish_a = (fam_a == fam) & (fam != "") & ~own_a
    famish_b = (fam_b == fam) & (fam != "") & ~own_b
    out["own"] = own_a.astype(float) - own_b.astype(float)
    out["family"] = famish_a.astype(float) - famish_b.astype(float)
    del a, b
    return out


def _tau(x: BTFit, y: BTFit) -> float:
    common = [s for s in x.systems if s in y.systems]
    if len(common) < 2:
        return float("nan")
    sx = dict(zip(x.systems, x.strengths, strict=True))
    sy = dict(zip(y.systems, y.strengths, strict=True))
    return float(stats.kendalltau([sx[s] for s in common], [sy[s] for s in common]).statistic)


def leaderboard(
    pairs: pd.DataFrame,
    *,
    families: Mapping[str, str],
    judges: Sequence[str] = (),
    boot: Resampling = Resampling(),
    selves: Mapping[str, str] | None = None,
) -> Leaderboard:
    """Raw and bias-adjusted Bradley–Terry leaderboards from the judges' verdicts
    (all judges pooled, or ``judges``), and the humans' where ``human`` labels exist.

    Kendall's τ compares the orderings (raw vs adjusted; each vs the humans').
    ``families``: canonical model id → family (the roster's), for ``own``/``family``;
    ``selves`` (:meth:`~recuse.roster.Roster.self_map`): what counts as the judge's own
    answer (default: its id).

    Each fit's ``n_pairs`` counts the judged pairs it is made from (a pair judged in
    both orders once); ``left_out`` counts, by why, the judged pairs that did not enter
    it: no verdict in either order (nor ``p_a``), the same system on both sides, or
    the model behind an answer unknown.
    """
    pairs = require_pairs(pairs, judged=False)
    given = pairs[pairs["judge"].notna()] if "judge" in pairs.columns else pairs.iloc[:0]
    if judges:
        given = given[given["judge"].isin(list(judges))]
    known = (given["model_a"].notna() & given["model_b"].notna()).to_numpy()
    pairs = pairs[pairs["model_a"].notna() & pairs["model_b"].notna()]  # generator unknown
    judged = given[known]
    judged = judged.assign(_pair=np.arange(len(judged)))
    rows = _verdict_rows(judged)
    if rows.empty:
        raise EstimationError("no judge verdicts to rank systems with")
    a, b = system_names(rows)
    keep = (a != b).to_numpy()
    fitted = int(rows.loc[keep, "_pair"].nunique())
    with_verdict = int(rows["_pair"].nunique())
    left_out = {
        NO_VERDICT: len(judged) - with_verdict,
        SAME_SYSTEM: with_verdict - fitted,
        UNKNOWN_MODEL: int((~known).sum()),
    }
    rows, a, b = (
        rows[keep].reset_index(drop=True),
        a[keep].reset_index(drop=True),
        b[keep].reset_index(drop=True),
    )
    y, w, clusters = rows["_y"].to_numpy(float), rows["_w"].to_numpy(float), clusters_of(rows)
    try:
        raw = bradley_terry(y, a, b, clusters, weights=w, boot=boot)
    except EstimationError as exc:
        raise EstimationError(f"the judges' verdicts: {exc}") from None
    adjusted = bradley_terry(
        y,
        a,
        b,
        clusters,
        covariates=_covariates(rows, a, b, families, selves),
        weights=w,
        boot=boot,
    )
    raw = replace(raw, n_pairs=fitted, left_out=left_out)
    adjusted = replace(adjusted, n_pairs=fitted, left_out=left_out)
    human, human_missing = _human_fit(pairs, boot)
    return Leaderboard(
        raw=raw,
        adjusted=adjusted,
        human=human,
        judges=tuple(sorted(judged["judge"].astype(str).unique())),
        tau_raw_adjusted=_tau(raw, adjusted),
        tau_raw_human=_tau(raw, human) if human else None,
        tau_adjusted_human=_tau(adjusted, human) if human else None,
        human_missing=human_missing,
    )


def no_finite_strengths(y: FloatArray, a: pd.Series, b: pd.Series) -> str | None:
    """Why the Bradley–Terry strengths of systems ``a`` vs ``b`` (``y``: P(a beats b),
    fractional for a tie) have no finite maximum-likelihood estimate, or None when
    they have one.

    The estimate exists exactly when the systems cannot be split into two groups one
    of which never lost to the other (Zermelo 1929; Ford 1957): the directed graph with
    an edge i → j when i beat j at least in part (``y > 0`` with i as a, ``y < 1`` with
    i as b) is strongly connected. Otherwise the likelihood keeps rising as the groups'
    strengths move apart, and a fit stops wherever its iterations end: strengths of ±30
    log-odds with narrow bootstrap intervals, from 8 pairs among 8 systems.

    >>> import numpy as np, pandas as pd
    >>> y = np.array([1.0, 1.0, 1.0])  # a beat b, b beat c, c beat a: a cycle
    >>> no_finite_strengths(y, pd.Series(list("abc")), pd.Series(list("bca")))
    >>> y = np.array([1.0, 1.0, 0.5])  # a beat b and c, b tied c
    >>> why = no_finite_strengths(y, pd.Series(list("aab")), pd.Series(list("bcc")))
    >>> for part in why.split("), so")[0].split(" (and "):
    ...     print(part)
    the 3 systems fall into 2 groups, and a group of a never lost to the others
    a group of b, c never beat the others
    """
    names, codes = np.unique(np.concatenate([a.astype(str), b.astype(str)]), return_inverse=True)
    ia, ib = codes[: len(a)], codes[len(a) :]
    y = np.asarray(y, float)
    won, lost = y > 0, y < 1
    src = np.concatenate([ia[won], ib[lost]])
    dst = np.concatenate([ib[won], ia[lost]])
    n = len(names)
    graph = coo_matrix((np.ones(len(src)), (src, dst)), shape=(n, n))
    k, label = connected_components(graph, directed=True, connection="strong")
    if k == 1:
        return None
    across = label[src] != label[dst]
    beaten = set(label[dst[across]].tolist())  # groups that lost to another group
    beat = set(label[src[across]].tolist())  # groups that beat another group

    def outside(groups: set[int]) -> str:
        found = [str(names[i]) for i in range(n) if label[i] not in groups]
        return ", ".join(found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")

    return (
        f"the {n} systems fall into {k} groups, and a group of {outside(beaten)} never lost "
        f"to the others (and a group of {outside(beat)} never beat the others), so "
        "Bradley–Terry strengths have no finite estimate (it needs comparisons where every "
        "system loses to, or ties with, some other at least once)"
    )


def _human_fit(pairs: pd.DataFrame, boot: Resampling) -> tuple[BTFit | None, str]:
    """The humans' leaderboard, or None and why where labels exist but give none ("" where
    there are no labels to fit)."""
    if "human" not in pairs.columns:
        return None, ""
    labelled = pairs[pairs["human"].notna()]
    labelled = labelled[~items_of(labelled).duplicated()]
    if labelled.empty:
        return None, ""
    a, b = system_names(labelled)
    keep = (a != b).to_numpy()
    labelled = labelled[keep].reset_index(drop=True)
    a, b = a[keep].reset_index(drop=True), b[keep].reset_index(drop=True)
    try:  # None where the labels give no finite strengths (bradley_terry says why)
        fit = bradley_terry(
            labelled["human"].to_numpy(float), a, b, clusters_of(labelled), boot=boot
        )
    except EstimationError as exc:
        return None, str(exc)
    return replace(fit, n_pairs=len(labelled)), ""
