"""Robustness checks of the favoritism regression (Play Favorites, Sections 6.1–6.2).

Every check returns :class:`~recuse.regression.favoritism.FavoritismResult` objects
(one, or one per slice), so they line up in one table (:func:`comparison_table`).
Each function takes a ``ratings`` table with the roster/family map, or a table
already made by :func:`~recuse.regression.favoritism.prepare` (then the
normalisation of the full data is kept in every slice, which keeps the variants on
one scale).

* :func:`length_controlled` — Eq. 1 plus ``κ_j tanh(ℓ~_im)``, the length of the
  completion standardised within its prompt (Section 6.2).
* :func:`ordinal_logit` — per dimension, an ordered logit (statsmodels
  ``OrderedModel``) of the raw rating categories on judge effects (one judge is the
  baseline; the thresholds take the intercept), judge slopes on the reference, self
  and family terms. Coefficients are log-odds; SEs from the inverse Hessian.
* :func:`gam` — Eq. 1 with the linear judge slopes replaced by judge-specific
  penalised cubic splines in the reference (pygam); self, family and dimension terms
  stay linear and unpenalised. SEs are pygam's (Bayesian posterior) SEs.
* :func:`leave_family_out` — the reference replaced by the mean rating of the judges
  of one held-out family (:func:`held_out_family_reference`).
* :func:`drop_weakest` / :func:`drop_models` / :func:`drop_one_model` — refits
  without some models (as judges and as generators).
* :func:`by_dimension` / :func:`by_group` — separate fits per dimension and per
  task or dataset.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy.special import expit
from statsmodels.miscmodels.ordinal_model import OrderedModel

from recuse.errors import ConfigError, EstimationError, MissingDependencyError, RecuseError
from recuse.regression.favoritism import (
    Families,
    FavoritismResult,
    Normalize,
    Prepared,
    SEType,
    design,
    fit_prepared,
    make_result,
    prepare,
)

Data = pd.DataFrame | Prepared
CHECKS: tuple[str, ...] = (
    "length",
    "ordinal",
    "gam",
    "leave-family-out",
    "drop-weakest",
    "drop-one-model",
    "by-dimension",
    "by-task",
    "by-dataset",
)


def _prep(data: Data, families: Families | None, normalize: Normalize) -> Prepared:
    if isinstance(data, Prepared):
        return data
    if families is None:
        raise ConfigError("pass the roster or a {id: family} map as `families`")
    return prepare(data, families, normalize=normalize)


def _subset(p: Prepared, keep: np.ndarray | pd.Series) -> Prepared:
    return p.subset(keep)


# ------------------------------------------------------------------ length control


def length_controlled(
    data: Data,
    families: Families | None = None,
    *,
    se: SEType = "HC0",
    level: float = 0.9,
    normalize: Normalize = "max",
) -> FavoritismResult:
    """Eq. 1 with a judge-specific term in ``tanh`` of the prompt-standardised length."""
    p = _prep(data, families, normalize)
    return fit_prepared(p, se=se, level=level, length_control=True, variant="length control")


# -------------------------------------------------------------------- ordinal logit


class FrequencyWeightedOrderedModel(OrderedModel):
    """statsmodels ``OrderedModel`` on distinct rows with frequency weights.

    The log-likelihood of the full data is ``Σ_r w_r log L_r`` over distinct
    (outcome, regressors) rows ``r`` seen ``w_r`` times, so the MLE and its inverse
    Hessian equal those of the uncompressed fit while the numerical derivatives
    statsmodels takes cost a fraction of the time.
    """

    def __init__(self, endog: Any, exog: Any, *, freq_weights: np.ndarray, **kwargs: Any):
        super().__init__(endog, exog, **kwargs)
        self.freq_weights = np.asarray(freq_weights, float)

    def loglike(self, params: np.ndarray) -> float:
        return float(np.sum(self.freq_weights * self.loglikeobs(params)))

    # the logistic cdf/pdf in closed form: the same numbers as ``scipy.stats.logistic``
    # without its per-call overhead (the numerical derivatives call them thousands of
    # times)
    def cdf(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(expit(x))

    def pdf(self, x: np.ndarray) -> np.ndarray:
        p = expit(x)
        return np.asarray(p * (1.0 - p))


def _ordinal_one(p: Prepared, *, level: float, variant: str) -> FavoritismResult:
    frame = p.frame
    X, terms, notes = design(frame, judge_intercepts=False, dimension_effects=False)
    cats = np.sort(frame["rating"].unique())
    if cats.size < 2:
        raise EstimationError(f"{variant}: the ratings take a single value; no ordinal model")
    y = np.searchsorted(cats, frame["rating"].to_numpy(float))
    both = pd.DataFrame(np.column_stack([y, X]))
    grouped = both.groupby(list(both.columns), sort=True).size()
    rows = np.array(grouped.index.to_list(), dtype=float)
    weights = grouped.to_numpy(float)
    endog = pd.Series(
        pd.Categorical(rows[:, 0].astype(int), categories=range(cats.size), ordered=True)
    )
    exog = rows[:, 1:]
    model = FrequencyWeightedOrderedModel(endog, exog, freq_weights=weights, distr="logit")
    res = model.fit(method="bfgs", disp=False, maxiter=2000, gtol=1e-7)
    if not res.mle_retvals.get("converged", True):
        notes = [*notes, "ordered logit: the optimiser did not report convergence"]
    k = X.shape[1]
    params = np.asarray(res.params)[:k]
    bse = np.asarray(res.bse)[:k]
    return make_result(
        terms,
        params,
        bse,
        level=level,
        method=f"ordered logit (statsmodels OrderedModel) on {cats.size} rating categories",
        variant=variant,
        se_type="MLE (inverse Hessian)",
        prepared=p,
        notes=notes,
        scale_note="log-odds",
    )


def ordinal_logit(
    data: Data,
    families: Families | None = None,
    *,
    level: float = 0.9,
    normalize: Normalize = "max",
) -> dict[str, FavoritismResult]:
    """Ordered logit of the rating categories, one fit per dimension (Figure 8)."""
    p = _prep(data, families, normalize)
    out = {}
    for dim in sorted(p.frame["dimension"].unique()):
        sub = _subset(p, p.frame["dimension"] == dim)
        out[dim] = _ordinal_one(sub, level=level, variant=f"ordinal logit: {dim}")
    return out


# ----------------------------------------------------------------------------- GAM


def gam(
    data: Data,
    families: Families | None = None,
    *,
    level: float = 0.9,
    normalize: Normalize = "max",
    n_splines: int = 6,
    by_judge: bool = True,
) -> FavoritismResult:
    """Eq. 1 with a penalised cubic spline in the reference per judge (pygam).

    ``rating ~ s_j(reference) + judge + self + family + dimension``; with
    ``by_judge=False`` one spline for all judges. Smoothing by pygam's default
    penalty; the linear terms are unpenalised.
    """
    try:
        from pygam import LinearGAM, l, s
    except ImportError:
        raise MissingDependencyError("pygam", "stats") from None
    p = _prep(data, families, normalize)
    frame = p.frame
    X, terms, notes = design(frame, judge_intercepts=False)
    linear = [i for i, t in enumerate(terms) if t.kind != "slope"]
    judges = sorted(frame["judge"].unique())
    jcode = pd.Categorical(frame["judge"], categories=judges).codes
    lin = X[:, linear]
    ref = frame["ref"].to_numpy(float)[:, None]
    if by_judge:
        J = np.zeros((len(frame), len(judges)))
        J[np.arange(len(frame)), jcode] = 1.0
        feats = np.hstack([lin, ref, J])
        base = lin.shape[1]
        spl = s(base, n_splines=n_splines, spline_order=3, by=base + 1)
        for k in range(1, len(judges)):
            spl = spl + s(base, n_splines=n_splines, spline_order=3, by=base + 1 + k)
    else:
        feats = np.hstack([lin, ref])
        spl = s(lin.shape[1], n_splines=n_splines, spline_order=3)
    term = spl
    for i in range(lin.shape[1]):
        term = term + l(i, lam=0.0)
    model = LinearGAM(term).fit(feats, frame["y"].to_numpy(float))
    se_all = np.asarray(model.statistics_["se"])
    n_spl = len(judges) if by_judge else 1
    params, bse = [], []
    for i in range(lin.shape[1]):
        idx = model.terms.get_coef_indices(n_spl + i)
        params.append(float(model.coef_[idx][0]))
        bse.append(float(se_all[idx][0]))
    return make_result(
        [terms[i] for i in linear],
        np.array(params),
        np.array(bse),
        level=level,
        method=f"GAM (pygam): {'judge-specific ' if by_judge else ''}cubic spline in the "
        f"reference ({n_splines} basis functions), linear self/family/dimension terms",
        variant="GAM",
        se_type="pygam (Bayesian)",
        prepared=p,
        notes=notes,
    )


# -------------------------------------------------------------- leave-family-out


def held_out_family_reference(
    data: Data,
    families: Families | None = None,
    *,
    family: str,
    drop_family_models: bool = True,
    normalize: Normalize = "max",
) -> Prepared:
    """The table with its reference replaced by the mean rating of ``family``'s judges.

    Exactly (Section 6.2, "LLM-as-a-judge ratings as reference scores"):

    1. ratings are normalised per dimension as in the main fit (scales from the
       rating and the human reference of the full table);
    2. for every completion (prompt, dimension, model) the new reference is the
       unweighted mean of the normalised ratings given to it by the judges of
       ``family`` (unparsed/failed ratings are not there to average);
    3. every rating *by* a judge of ``family`` is removed and, with
       ``drop_family_models`` (default, as the paper's text says), every rating *of* a
       completion by a model of ``family`` too — otherwise the held-out judges' own
       self- and family-bias would leak into the reference. (The authors' released
       R code removes only the judges.)
    4. completions that no judge of ``family`` rated are dropped (counted in
       ``n_excluded`` as "no held-out reference").
    """
    p = _prep(data, families, normalize)
    f = p.frame
    if family not in set(f["judge_family"]):
        raise ConfigError(
            f"no judge of family {family!r} — families with judges: "
            f"{', '.join(sorted(set(f['judge_family'])))}"
        )
    keys = ["prompt_id", "dimension", "model"]
    held = f[f["judge_family"] == family]
    alt = held.groupby(keys)["y"].mean()
    keep = f["judge_family"] != family
    if drop_family_models:
        keep &= f["model_family"] != family
    rest = f[keep].reset_index(drop=True)
    new_ref = alt.reindex(pd.MultiIndex.from_frame(rest[keys])).to_numpy()
    has = ~np.isnan(new_ref)
    rest = rest.assign(ref=new_ref)[has].reset_index(drop=True)
    excluded = dict(p.n_excluded)
    if (~has).any():
        excluded["no held-out reference"] = int((~has).sum())
    return replace(p, frame=rest, n_excluded=excluded)


def leave_family_out(
    data: Data,
    families: Families | None = None,
    *,
    se: SEType = "HC0",
    level: float = 0.9,
    normalize: Normalize = "max",
    drop_family_models: bool = True,
) -> dict[str, FavoritismResult]:
    """Eq. 1 with the reference from each held-out family in turn (Figure 9)."""
    p = _prep(data, families, normalize)
    out = {}
    for fam in sorted(set(p.frame["judge_family"])):
        alt = held_out_family_reference(p, family=fam, drop_family_models=drop_family_models)
        out[fam] = fit_prepared(
            alt,
            se=se,
            level=level,
            variant=f"reference: {fam} judges",
            method=f"OLS of Eq. 1, reference = mean rating of the {fam} judges",
        )
    return out


# -------------------------------------------------------------------- drop models


def weakest_models(
    data: Data, families: Families | None = None, *, k: int = 2, normalize: Normalize = "max"
) -> list[str]:
    """The ``k`` models with the lowest mean normalised reference over their completions."""
    p = _prep(data, families, normalize)
    comp = p.frame.drop_duplicates(["prompt_id", "dimension", "model"])
    means = comp.groupby("model")["ref"].mean().sort_values(kind="stable")
    return [str(m) for m in means.index[:k]]


def drop_models(
    data: Data,
    families: Families | None = None,
    *,
    models: Sequence[str],
    se: SEType = "HC0",
    level: float = 0.9,
    normalize: Normalize = "max",
    variant: str | None = None,
) -> FavoritismResult:
    """Eq. 1 without ``models``, both as judges and as generators."""
    p = _prep(data, families, normalize)
    f = p.frame
    unknown = set(models) - set(f["model"]) - set(f["judge"])
    if unknown:
        raise ConfigError(f"model(s) not in the data: {', '.join(sorted(unknown))}")
    keep = ~(f["model"].isin(models) | f["judge"].isin(models))
    return fit_prepared(
        _subset(p, keep),
        se=se,
        level=level,
        variant=variant or f"without {', '.join(models)}",
    )


def drop_weakest(
    data: Data,
    families: Families | None = None,
    *,
    k: int = 2,
    se: SEType = "HC0",
    level: float = 0.9,
    normalize: Normalize = "max",
) -> FavoritismResult:
    """Eq. 1 without the ``k`` weakest models (:func:`weakest_models`; Figure 10)."""
    p = _prep(data, families, normalize)
    weak = weakest_models(p, k=k)
    return drop_models(
        p, models=weak, se=se, level=level, variant=f"without weakest {k}: {', '.join(weak)}"
    )


def drop_one_model(
    data: Data,
    families: Families | None = None,
    *,
    se: SEType = "HC0",
    level: float = 0.9,
    normalize: Normalize = "max",
) -> dict[str, FavoritismResult]:
    """Eq. 1 refitted without each model in turn (as judge and as generator)."""
    p = _prep(data, families, normalize)
    models = sorted(set(p.frame["model"]) | set(p.frame["judge"]))
    return {
        m: drop_models(p, models=[m], se=se, level=level, variant=f"without {m}") for m in models
    }


# ------------------------------------------------------------------------- slices


def by_dimension(
    data: Data,
    families: Families | None = None,
    *,
    se: SEType = "HC0",
    level: float = 0.9,
    normalize: Normalize = "max",
) -> dict[str, FavoritismResult]:
    """Eq. 1 fitted separately per dimension (Figure 4, left)."""
    return by_group(data, families, column="dimension", se=se, level=level, normalize=normalize)


def by_group(
    data: Data,
    families: Families | None = None,
    *,
    column: Literal["task", "dataset", "dimension"] = "task",
    se: SEType = "HC0",
    level: float = 0.9,
    normalize: Normalize = "max",
) -> dict[str, FavoritismResult]:
    """Eq. 1 fitted separately per value of ``column`` (task type, dataset; Figure 4)."""
    p = _prep(data, families, normalize)
    if column not in p.frame.columns or p.frame[column].isna().all():
        raise ConfigError(f"the ratings have no {column!r} column to slice by")
    out = {}
    for value in sorted(p.frame[column].dropna().unique()):
        sub = _subset(p, p.frame[column] == value)
        out[str(value)] = fit_prepared(sub, se=se, level=level, variant=f"{column}: {value}")
    return out


# -------------------------------------------------------------------------- battery


@dataclass(frozen=True, eq=False)
class Battery:
    """The main fit and every robustness variant, with what could not be fitted."""

    main: FavoritismResult
    results: Mapping[str, FavoritismResult]
    skipped: Mapping[str, str] = field(default_factory=dict)
    seconds: Mapping[str, float] = field(default_factory=dict)

    def table(self) -> pd.DataFrame:
        """Self- and family-bias of every variant in one long table."""
        return comparison_table({"main": self.main, **self.results})


_COMPARISON_COLUMNS = [
    "variant", "method", "kind", "label", "estimate", "se", "lower", "upper", "significant", "n",
]  # fmt: skip


def comparison_table(results: Mapping[str, FavoritismResult]) -> pd.DataFrame:
    """Long table: variant, method, kind (self/family), label, estimate, se, lower, upper,
    significant, n — one row per self/family coefficient per result."""
    rows = []
    for name, res in results.items():
        c = res.coefficients
        c = c[c["kind"].isin(["self", "family"])]
        rows.append(c.assign(variant=name, method=res.method, n=res.n)[_COMPARISON_COLUMNS])
    if not rows:
        return pd.DataFrame(columns=_COMPARISON_COLUMNS)
    return pd.concat(rows, ignore_index=True)


def battery(
    data: Data,
    families: Families | None = None,
    *,
    checks: Sequence[str] | Literal["all"] = "all",
    se: SEType = "HC0",
    level: float = 0.9,
    normalize: Normalize = "max",
    weakest: int = 2,
) -> Battery:
    """Main fit plus the chosen robustness checks (names in :data:`CHECKS`).

    A check that cannot be estimated on these data (e.g. no ``length`` column, or a
    slice where the model is not identified) is recorded in ``skipped`` with the
    reason instead of failing the whole battery.
    """
    chosen = list(CHECKS) if checks == "all" else list(checks)
    bad = [c for c in chosen if c not in CHECKS]
    if bad:
        raise ConfigError(f"unknown robustness check(s) {', '.join(bad)} — use {', '.join(CHECKS)}")
    p = _prep(data, families, normalize)
    seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    main = fit_prepared(p, se=se, level=level)
    seconds["main"] = time.perf_counter() - t0
    results: dict[str, FavoritismResult] = {}
    skipped: dict[str, str] = {}

    def many(prefix: str, fn: Callable[[], Mapping[str, FavoritismResult]]) -> None:
        for k, v in fn().items():
            results[f"{prefix}: {k}"] = v

    runners: dict[str, Callable[[], None]] = {
        "length": lambda: results.__setitem__(
            "length control", length_controlled(p, se=se, level=level)
        ),
        "ordinal": lambda: many("ordinal logit", lambda: ordinal_logit(p, level=level)),
        "gam": lambda: results.__setitem__("GAM", gam(p, level=level)),
        "leave-family-out": lambda: many(
            "reference", lambda: leave_family_out(p, se=se, level=level)
        ),
        "drop-weakest": lambda: results.__setitem__(
            "drop weakest", drop_weakest(p, k=weakest, se=se, level=level)
        ),
        "drop-one-model": lambda: many("without", lambda: drop_one_model(p, se=se, level=level)),
        "by-dimension": lambda: many("dimension", lambda: by_dimension(p, se=se, level=level)),
        "by-task": lambda: many("task", lambda: by_group(p, column="task", se=se, level=level)),
        "by-dataset": lambda: many(
            "dataset", lambda: by_group(p, column="dataset", se=se, level=level)
        ),
    }
    for name in chosen:
        t = time.perf_counter()
        try:
            runners[name]()
        except RecuseError as exc:
            skipped[name] = str(exc)
        seconds[name] = time.perf_counter() - t
    return Battery(main=main, results=results, skipped=skipped, seconds=seconds)
