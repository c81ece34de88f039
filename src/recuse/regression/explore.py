"""Exploration before the regression (Play Favorites, Section 5.1 and Figure 5).

* :func:`score_matrix` — mean score each judge gives each model (rows judges,
  columns models), the human/reference row, the self cells marked (Figure 2).
* :func:`spearman_by_dimension` — tie-corrected Spearman ρ between each judge's
  ratings and the reference, per dimension (Figure 5). Ties get average ranks and ρ
  is the Pearson correlation of the ranks (``scipy.stats.spearmanr``).
* :func:`agreement` — Krippendorff's α and observed agreement (share of items on
  which every rater gave the same value) for individual annotations, e.g. the human
  annotators of a dataset that releases them, or a panel of judges.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import krippendorff
import numpy as np
import pandas as pd
from scipy import stats

from recuse.errors import EstimationError, InputError
from recuse.regression.favoritism import Families, Normalize, Prepared, prepare
from recuse.tables import check_header

Level = Literal["nominal", "ordinal", "interval", "ratio"]


@dataclass(frozen=True, eq=False)
class ScoreMatrix:
    """Mean scores: ``means`` judges × models, ``reference`` per model, ``self_cells``.

    ``row_normalized``: each judge's row as ``(x − mean) / (max − min)`` (the colour
    scale of Figure 2, :meth:`normalize_rows`; what it is: :attr:`ROW_NORMALIZED`).
    ``n`` counts the ratings behind each cell.
    """

    means: pd.DataFrame
    reference: pd.Series
    self_cells: pd.DataFrame
    n: pd.DataFrame
    normalize: str

    #: the quantity and unit of a row-normalised cell (:meth:`normalize_rows`): a heat
    #: map's colour bar says it
    ROW_NORMALIZED = "score − its row's mean, in row ranges (max − min)"
    #: the label of the reference scores' row in :attr:`with_reference`
    REFERENCE_ROW = "human (reference)"

    @staticmethod
    def normalize_rows(frame: pd.DataFrame) -> pd.DataFrame:
        """Each row of ``frame`` as ``(x − row mean) / (row max − row min)``; a row whose
        values are all equal is NaN (no range)."""
        spread = (frame.max(axis=1) - frame.min(axis=1)).replace(0, np.nan)
        return frame.sub(frame.mean(axis=1), axis=0).div(spread, axis=0)

    @property
    def row_normalized(self) -> pd.DataFrame:
        return self.normalize_rows(self.means)

    @property
    def with_reference(self) -> pd.DataFrame:
        """``means`` with the reference scores as a last row (:attr:`REFERENCE_ROW`), the
        rows of Figure 2; the judges' names as text."""
        ref = self.reference.to_frame().T.set_axis([self.REFERENCE_ROW])
        out = pd.concat([self.means, ref])
        out.index = [*self.means.index.astype(str), self.REFERENCE_ROW]
        return out

    def diagonal(self) -> pd.Series:
        """Each judge's mean score of its own completions (NaN if it has none)."""
        return pd.Series(
            {
                j: self.means.loc[j, j] if j in self.means.columns else np.nan
                for j in self.means.index
            },
            name="self",
        )


def score_matrix(
    data: pd.DataFrame | Prepared,
    families: Families | None = None,
    *,
    normalize: Normalize = "max",
    dimension: str | None = None,
) -> ScoreMatrix:
    """Judge × model mean of the normalised ratings (all dimensions pooled, or one).

    The reference row is each model's mean normalised reference over its distinct
    completions (prompt × dimension).
    """
    if isinstance(data, Prepared):
        p = data
    else:
        if families is None:
            raise InputError("pass the roster or a {id: family} map as `families`")
        p = prepare(data, families, normalize=normalize)
    f = p.frame
    if dimension is not None:
        if dimension not in f["dimension"].unique():
            raise InputError(f"no dimension {dimension!r} in the ratings", column="dimension")
        f = f[f["dimension"] == dimension]
    means = f.pivot_table(index="judge", columns="model", values="y", aggfunc="mean")
    n = f.pivot_table(index="judge", columns="model", values="y", aggfunc="size").fillna(0)
    comp = f.drop_duplicates(["prompt_id", "dimension", "model"])
    reference = comp.groupby("model")["ref"].mean().reindex(means.columns)
    self_cells = pd.DataFrame(
        [[j == m for m in means.columns] for j in means.index],
        index=means.index,
        columns=means.columns,
    )
    return ScoreMatrix(means, reference, self_cells, n.astype(int), p.normalize)


def spearman_by_dimension(ratings: pd.DataFrame, families: Families | None = None) -> pd.DataFrame:
    """Tie-corrected Spearman ρ of rating vs reference per (dimension, judge).

    Columns: dimension, judge, family (when ``families`` is given), rho, p, n.
    Rows without rating or reference are left out.
    """
    check_header(ratings)  # ratings[column] is one column below
    d = ratings.dropna(subset=["rating", "reference"])
    rows = []
    for (dim, judge), g in d.groupby(["dimension", "judge"], sort=True):
        if len(g) < 3 or g["rating"].nunique() < 2 or g["reference"].nunique() < 2:
            rho, p = np.nan, np.nan
        else:
            r = stats.spearmanr(g["rating"], g["reference"])
            rho, p = float(r.statistic), float(r.pvalue)
        rows.append({"dimension": dim, "judge": judge, "rho": rho, "p": p, "n": len(g)})
    out = pd.DataFrame(rows, columns=["dimension", "judge", "rho", "p", "n"])
    if families is not None and len(out):
        from recuse.regression.favoritism import family_of

        out.insert(2, "family", family_of(out["judge"], families).to_numpy())
    return out


@dataclass(frozen=True)
class Agreement:
    """Inter-rater agreement: Krippendorff's α and observed (all-equal) agreement."""

    alpha: float
    observed: float
    n_items: int
    n_raters: int
    level: str


def agreement(
    annotations: pd.DataFrame,
    *,
    item: str | list[str] = "item",
    rater: str = "rater",
    value: str = "value",
    level: Level = "ordinal",
) -> Agreement:
    """Krippendorff's α (``krippendorff`` package) and observed agreement.

    ``annotations`` is long: one row per (item, rater) value; NaN values are missing.
    Observed agreement is the share of items with at least two values on which all
    values are equal (the paper's "how often all three annotators agree").
    """
    check_header(annotations)
    items = [item] if isinstance(item, str) else list(item)
    need = [*items, rater, value]
    missing = [c for c in need if c not in annotations.columns]
    if missing:
        raise InputError(
            f"missing column(s) {', '.join(missing)}",
            fix="pass item=, rater=, value= naming your columns",
        )
    d = annotations.dropna(subset=[value])
    if d.duplicated([*items, rater]).any():
        raise InputError(
            "a rater rates the same item twice",
            column=rater,
            fix="keep one value per (item, rater)",
        )
    wide = d.pivot_table(index=rater, columns=items, values=value, aggfunc="first")
    counts = wide.notna().sum(axis=0)
    usable = wide.loc[:, counts >= 2]
    if usable.shape[1] == 0:
        raise EstimationError("no item has two or more ratings; agreement is undefined")
    data = usable.to_numpy(float)
    if _coincidence_bytes(data) <= _PACKAGE_BYTES:
        alpha = float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))
    else:
        alpha = _alpha_by_sums(data, level)
    same = [np.unique(col[~np.isnan(col)]).size == 1 for col in data.T]
    return Agreement(alpha, float(np.mean(same)), usable.shape[1], wide.shape[0], level)


#: the most memory the ``krippendorff`` package's coincidence arrays may take (one
#: ``values × values`` matrix per unit): continuous ratings with thousands of distinct
#: values asked it for hundreds of GiB, and the process was killed
_PACKAGE_BYTES = 256 * 2**20


def _coincidence_bytes(data: np.ndarray) -> int:
    values = np.unique(data[~np.isnan(data)]).size
    return int(data.shape[1]) * values * values * 8


def _alpha_by_sums(data: np.ndarray, level: Level) -> float:
    """Krippendorff's α from sums over each unit's pairable values, in memory linear in
    the values (for data with too many distinct values for the coincidence matrix):
    ``α = 1 − D_o / D_e`` with ``D_o = (1/n) Σ_u Σ_{i≠j∈u} δ²(v_i, v_j) / (m_u − 1)``
    and ``D_e = Σ_{i≠j} δ²(v_i, v_j) / (n (n − 1))`` over all ``n`` pairable values.
    Interval: ``δ² = (v_i − v_j)²``, and ``Σ_{i≠j} (v_i − v_j)² = 2 m Σv² − 2 (Σv)²``.
    Ordinal: ``δ_ck = Σ_{g=c..k} n_g − (n_c + n_k)/2`` is the difference of the values'
    mid-ranks among all pairable values, so ordinal α is interval α on those ranks.
    Nominal: ``δ² = [v_i ≠ v_j]``, counted from the values' frequencies. Ratio's
    ``((v_i − v_j)/(v_i + v_j))²`` has no such sums: an error."""
    if level == "ratio":
        raise EstimationError(
            "Krippendorff's alpha at the ratio level: the ratings take too many distinct "
            "values for its coincidence matrix: round the ratings, or ask for "
            "level='interval' or 'ordinal'"
        )
    present = ~np.isnan(data)
    m = present.sum(axis=0).astype(float)
    n = float(m.sum())
    unit = np.broadcast_to(np.arange(data.shape[1]), data.shape)[present]
    values = data[present]
    if level == "nominal":
        codes = np.unique(values, return_inverse=True)[1]
        per_unit = (
            pd.Series(1, index=pd.MultiIndex.from_arrays([unit, codes]))
            .groupby(level=[0, 1])
            .size()
        )
        same_u = (per_unit**2).groupby(level=0).sum().reindex(range(data.shape[1]), fill_value=0)
        observed = float(((m**2 - same_u.to_numpy()) / (m - 1)).sum()) / n
        counts = np.bincount(codes).astype(float)
        expected = (n**2 - float((counts**2).sum())) / (n * (n - 1))
    else:
        if level == "ordinal":
            values = stats.rankdata(values)  # average ranks: mid-ranks + 1/2
        s1 = np.bincount(unit, weights=values, minlength=data.shape[1])
        s2 = np.bincount(unit, weights=values**2, minlength=data.shape[1])
        observed = float(((2 * m * s2 - 2 * s1**2) / (m - 1)).sum()) / n
        expected = (2 * n * float((values**2).sum()) - 2 * float(values.sum()) ** 2) / (n * (n - 1))
    if expected == 0:
        raise EstimationError("every rating is the same value; alpha is undefined")
    return 1.0 - observed / expected


def judge_agreement(ratings: pd.DataFrame, *, level: Level = "ordinal") -> Mapping[str, Agreement]:
    """Agreement of the judges (as raters) per dimension; items = (prompt, model)."""
    out = {}
    for dim, g in ratings.groupby("dimension", sort=True):
        out[str(dim)] = agreement(
            g, item=["prompt_id", "model"], rater="judge", value="rating", level=level
        )
    return out
