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
    scale of Figure 2). ``n`` counts the ratings behind each cell.
    """

    means: pd.DataFrame
    reference: pd.Series
    self_cells: pd.DataFrame
    n: pd.DataFrame
    normalize: str

    @property
    def row_normalized(self) -> pd.DataFrame:
        m = self.means
        spread = (m.max(axis=1) - m.min(axis=1)).replace(0, np.nan)
        return m.sub(m.mean(axis=1), axis=0).div(spread, axis=0)

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
    alpha = float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))
    same = [np.unique(col[~np.isnan(col)]).size == 1 for col in data.T]
    return Agreement(alpha, float(np.mean(same)), usable.shape[1], wide.shape[0], level)


def judge_agreement(ratings: pd.DataFrame, *, level: Level = "ordinal") -> Mapping[str, Agreement]:
    """Agreement of the judges (as raters) per dimension; items = (prompt, model)."""
    out = {}
    for dim, g in ratings.groupby("dimension", sort=True):
        out[str(dim)] = agreement(
            g, item=["prompt_id", "model"], rater="judge", value="rating", level=level
        )
    return out
