"""OLS with heteroskedasticity- or cluster-robust standard errors on a sparse design.

The favoritism designs (Eq. 1) are almost all dummies: a row has a judge intercept,
a judge slope, at most one self, one family and one dimension entry (plus a length
slope) out of ~50 columns. Everything the fit needs is a ``k × k`` cross-product
(``X'X``, ``X' diag(w) X``, cluster sums), which a sparse design gives in time linear
in the rows with a few non-zeros each; statsmodels' ``OLS`` instead takes the SVD of
the dense ``n × k`` design (and holds several ``n × k`` copies), which at a million rows
costs seconds per fit and gigabytes.

The numbers are statsmodels' (``OLS(y, X, hasconst=True).fit(cov_type=...)``):

* ``β = (X'X)⁻¹ X'y`` — by a Cholesky solve of the column-equilibrated normal
  equations plus one step of iterative refinement on the residual, which brings the
  estimate to the accuracy of statsmodels' pseudo-inverse for these well-conditioned
  designs (``tests/regression/test_ols.py`` compares every coefficient and the whole
  covariance matrix with statsmodels, for each ``se``);
* ``HC0``: ``B X' diag(e²) X B`` with ``B = (X'X)⁻¹``; ``HC1``: HC0 · ``n / (n − k)``;
  ``HC3``: ``e_i²`` replaced by ``(e_i / (1 − h_i))²``, ``h_i = x_i' B x_i``;
* ``cluster`` (statsmodels' CRV1 with its default small-sample correction):
  ``B (Σ_g s_g s_g') B · G/(G − 1) · (n − 1)/(n − k)`` with ``s_g`` the sum of
  ``x_i e_i`` over cluster ``g``;
* ``R² = 1 − e'e / Σ(y − ȳ)²`` (the design has a constant).

An exact fit (every residual within ``EXACT`` of the outcome's size, e.g. one rating per
dimension) has zero residuals, so zero standard errors, and coefficients at rounding
level are 0: noise is never reported as a tiny effect with a tinier error.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from recuse.choices import SE
from recuse.errors import ConfigError, EstimationError

SEType = SE  # (recuse.choices)
_CHUNK = 65_536  # rows per block when a dense n × k intermediate is needed (HC3 leverage)
#: residuals within this share of the outcome's size are rounding: an exact fit (a share, not
#: at least 1: scores of 1e-9 had every residual read as rounding, every γ as 0)
EXACT = 1e-9


@dataclass(frozen=True, eq=False)
class OLSFit:
    """Estimates ``params``, robust covariance ``cov`` (and ``bse``), ``rsquared``, ``n``."""

    params: np.ndarray
    cov: np.ndarray
    rsquared: float
    n: int

    @property
    def bse(self) -> np.ndarray:
        """The standard errors; NaN where a degenerate robust variance (two clusters
        for a dozen terms) has a diagonal below 0, without numpy's warning on stderr."""
        var = np.diag(self.cov)
        return np.sqrt(np.where(var >= 0, var, np.nan))


def gram(X: sp.csr_array) -> np.ndarray:
    """``X'X`` as a dense ``k × k`` array."""
    return np.asarray((X.T @ X).toarray())


def _leverage(X: sp.csr_array, inv: np.ndarray) -> np.ndarray:
    """Diagonal of the hat matrix, ``h_i = x_i' (X'X)⁻¹ x_i``, in blocks of rows."""
    out = np.empty(X.shape[0])
    for start in range(0, X.shape[0], _CHUNK):
        block = X[start : start + _CHUNK]
        out[start : start + _CHUNK] = np.asarray((block @ inv) * block.toarray()).sum(axis=1)
    return out


def fit_ols(
    X: sp.csr_array,
    y: np.ndarray,
    *,
    se: SEType,
    groups: np.ndarray | None = None,
    xtx: np.ndarray | None = None,
) -> OLSFit:
    """OLS of ``y`` on the full-rank sparse design ``X`` with sandwich covariance ``se``.

    ``groups``: integer cluster ids (``se="cluster"``); ``xtx``: ``X'X`` if the caller
    has it already (the rank check computes it).
    """
    n, k = X.shape
    if n <= k:
        raise EstimationError(
            f"{n:,} ratings for {k} coefficients: no residual left to estimate the errors"
        )
    y = np.asarray(y, float)
    if not np.isfinite(y).all():
        raise EstimationError(
            f"{int((~np.isfinite(y)).sum()):,} outcome value(s) are not finite (NaN or inf)"
        )
    XtX = gram(X) if xtx is None else xtx
    d = np.sqrt(np.diag(XtX))
    if not (np.isfinite(d).all() and (d > 0).all()):
        raise EstimationError(
            "the design is not of full rank: column(s) "
            f"{', '.join(str(i) for i in np.flatnonzero(~(d > 0)))} have no data"
        )
    scaled = XtX / np.outer(d, d)
    eig = np.linalg.eigvalsh(scaled)  # k × k: cheap; the same test as check_identified
    if not eig[0] > 1e-10 * max(eig[-1], 1.0):
        raise EstimationError(
            "the design is not of full rank: some columns are linear combinations of the "
            "others, so the coefficients are not identified"
        )
    chol = scipy.linalg.cho_factor(scaled)

    def solve(b: np.ndarray) -> np.ndarray:
        dd = d if b.ndim == 1 else d[:, None]
        return np.asarray(scipy.linalg.cho_solve(chol, b / dd) / dd)

    params = solve(X.T @ y)
    resid = y - X @ params
    params = params + solve(X.T @ resid)  # one step of iterative refinement
    resid = y - X @ params
    tol = EXACT * float(np.abs(y).max())
    if np.abs(resid).max() <= tol:
        # an exact fit (e.g. one rating per dimension): what is left is rounding, so the
        # errors are 0 and a coefficient at rounding level is 0, not a tiny "significant"
        # effect whose standard error is smaller still
        resid = np.zeros(n)
        params = np.where(np.abs(params) <= tol, 0.0, params)
    inv = solve(np.eye(k))  # (X'X)⁻¹, from the scaled factor
    inv = (inv + inv.T) / 2
    if se == "cluster":
        if groups is None:
            raise ConfigError("clustered standard errors need the cluster ids (prompt_id)")
        _, g = np.unique(np.asarray(groups), return_inverse=True)
        n_groups = int(g.max()) + 1
        if n_groups < 2:
            raise EstimationError(
                "clustered standard errors need ratings of two clusters (prompts, by default) "
                "or more, and every rating here is of one — add ratings of other prompts, or "
                "choose standard errors without clusters (--se HC1)"
            )
        member = sp.csr_array((np.ones(n), (g, np.arange(n))), shape=(n_groups, n))
        sums = member @ (sp.diags_array(resid) @ X)
        meat = np.asarray((sums.T @ sums).toarray())
        factor = n_groups / (n_groups - 1.0) * ((n - 1.0) / (n - k))
    else:
        if se == "HC3":
            free = 1.0 - _leverage(X, inv)
            if (free < 1e-10).any():
                raise EstimationError(
                    f"HC3 standard errors are undefined: {int((free < 1e-10).sum()):,} "
                    "rating(s) have leverage 1 (a coefficient fitted by one rating alone)"
                )
            w = (resid / free) ** 2
        elif se in ("HC0", "HC1"):
            w = resid**2
        else:
            raise ConfigError(f"unknown standard-error type {se!r}")
        meat = np.asarray((X.T @ (sp.diags_array(w) @ X)).toarray())
        factor = n / (n - k) if se == "HC1" else 1.0
    cov = inv @ meat @ inv * factor
    centered = y - y.mean()
    tss = float(centered @ centered)
    rsquared = 1.0 - float(resid @ resid) / tss if tss > 0 else float("nan")
    return OLSFit(params=params, cov=cov, rsquared=rsquared, n=n)
