"""The favoritism regression of Play Favorites (Spiliopoulou et al. 2025, Eq. 1).

For prompt ``i``, dimension ``d``, generating model ``m`` and judge ``j``::

    S~_idmj = α + δ_j + β_j S_idm + γ_j 1[j = m] + λ_F(j) 1[F(j) = F(m), j ≠ m] + η_d + ε_idmj

``S~`` is the judge's rating, ``S`` the independent reference score (e.g. the mean of
the human ratings). ``δ_j`` and ``β_j`` (judge fixed effect and judge-specific slope)
absorb how the judge's scale lines up with the reference; ``γ_j`` is judge ``j``'s
*self-bias* (extra score for its own completions at equal reference quality) and
``λ_F`` the *family-bias* of the judges of family ``F`` towards the other members of
their family; ``η_d`` shifts each dimension. Fit by OLS with robust
(sandwich) standard errors; 90% Wald intervals ``estimate ± q · SE`` by default, ``q``
the normal quantile ``z_0.95`` for heteroskedasticity-robust errors and Student's
``t_{G−1}(0.95)`` for the cluster-robust default (``G`` clusters, statsmodels'
``use_t``): with the normal quantile the intervals held planted γ and λ 0.82–0.85 of
the time at 5–6 prompts, 0.86–0.88 at 8 (200 tables, ``tests/regression/
test_favoritism.py``), 0.90–0.92 with Student's. A term whose rows lie on fewer
clusters than the fit's (a model whose answers are on 5 of 40 prompts: its judge's γ)
reads t on those clusters less one (1 at least; its ``df`` in the coefficients): on 39 df
such a γ held 0.81 of the time at 5 prompts of 40 and 0.71 at 3, on 4 and 2 df 0.86
(300 and 200 tables, docs/statistics.md). A coefficient is *significant* when its
interval excludes 0, its p-value from the same distribution.

Parametrisation (``intercept``):

* ``"judge"`` (default, as the paper's code): one column per judge for ``α + δ_j``
  (no separate global intercept), dimension effects for every dimension but the first
  (the first dimension is the baseline, ``η = 0``).
* ``"global"``: one global intercept ``α`` and no judge fixed effects (``δ_j = 0``);
  the judge slopes stay. A judge whose scale is offset from the others' then reads the
  offset partly as its ``γ_j`` and its family's ``λ_F``: judges with intercepts −0.3 to
  0.6 and nothing planted read γ up to +0.17 and λ −0.15, their intervals holding 0 in
  0.36 of 120 tables (docs/statistics.md); the default reads none.

What the estimates rest on (planted truths, docs/statistics.md, "The favoritism
regression"): they held their planted values (within 2 simulation standard errors,
90% intervals 0.84–0.94 a term) under heteroskedastic noise, judges on their own
scales, unbalanced and missing cells and integer ratings; they read wrong where the
reference is measured with error (a judge whose model is better reads a positive γ:
+0.03 at a reference reliability near 0.85) and where a scale's ceiling cuts many
ratings (±0.01 of the top score at 22% of 1–10 ratings at 10).

Identifiability. ``γ_j`` is identified when judge ``j`` rates its own completions and
also those of other models (then the self dummy varies inside the judge's own
intercept and slope). ``λ_F`` is identified when some judge of family ``F`` rates a
*different* model of the same family and also models of other families: the family
dummy is switched off on self rows, so it is not collinear with the self dummies,
and it is pooled over the judges of the family, so it is not collinear with the judge
effects. A self or family term with no active row, or one that equals the intercepts
(a judge that rates only its own completions; a family whose judges rate only models of
the family), is left out and listed in ``notes``; any other rank deficiency raises
:class:`~recuse.errors.EstimationError` naming the columns and, where it can, the cause
(e.g. a judge whose references do not vary).

Computation. The design is sparse (a row has ~5 non-zeros of ~50 columns), so the OLS
and its sandwich covariance come from ``k × k`` cross-products in time linear in the
rows (:mod:`recuse.regression.ols`; equal to statsmodels' ``OLS`` to rounding).

With the Play Favorites roster (9 judges = 9 models in families
claude ×3, gpt ×2, llama ×2, mistral ×2) all 9 ``γ_j`` and 4 ``λ_F`` are identified.

Normalisation (``normalize``), per dimension, applied to rating and reference alike so
that their relation is unchanged:

* ``"max"`` (default, the paper's code): ``x / M_d`` with ``M_d`` the largest value of
  rating ∪ reference in dimension ``d`` (a 0–4 and a 0–2 scale both become 0–1);
* ``"range"``: ``(x − m_d) / (M_d − m_d)`` with ``m_d`` the smallest value;
* ``"none"``: raw scores.

Rows whose rating is missing (status ``unparsed``/``failed``/``missing``) or whose
reference is missing are excluded and counted in ``n_excluded``.
"""

from __future__ import annotations

import html
import math
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
import pandas as pd
import scipy.linalg
import scipy.sparse as sp
from scipy import stats

from recuse.cells import shown
from recuse.choices import NORMALIZE as NORMALIZE
from recuse.choices import SE_TYPES as SE_TYPES
from recuse.choices import Normalize as Normalize
from recuse.errors import ConfigError, EstimationError, InputError
from recuse.metrics.bootstrap import counted
from recuse.metrics.estimate import FEW_CLUSTERS
from recuse.numbers import (
    count,
    decimal,
    estimate_text,
    off_null_decimals,
    p_text,
    percent,
    scale_words,
    share_percent,
    signed,
    significant_beside,
    table_power,
    table_precision,
)
from recuse.regression.ols import EXACT, SEType, fit_ols, gram
from recuse.roster import Roster, self_keys
from recuse.tables import check_header

Intercept = Literal["judge", "global"]
TermKind = Literal[
    "intercept", "judge", "slope", "self", "family", "dimension", "length", "threshold"
]
Families = Roster | Mapping[str, str]

#: the unit of the self and family terms under each normalisation (short, for labels)
SCALE_NOTES: dict[str, str] = {
    "max": "normalised score",
    "range": "range-normalised score",
    "none": "rating points",
}
#: what that unit is, in words
SCALE_WORDS: dict[str, str] = {
    "max": "rating ÷ the dimension's top score, so 0.05 is 5% of its scale",
    "range": "(rating − the dimension's lowest score) ÷ (its top − its lowest)",
    "none": "ratings as written, not normalised",
}
#: what ``significant`` is and is not: the audit reads the same coefficients with a
#: multiple-testing adjustment and a materiality threshold, so one interval can be
#: significant here and unflagged there (claude-3-sonnet's γ, +0.014 [0.010, 0.017] on
#: play-favorites: '*' here, 'negligible' in the audit)
SIGNIFICANCE_WORDS = (
    "each coefficient tested alone, with no multiple-testing adjustment and no "
    "materiality threshold: recuse audit flags only what is not negligible and what its "
    "Benjamini–Hochberg adjustment keeps (with --no-fdr, whose own interval excludes 0)"
)
#: a coefficient table's df column, shown where some term's df is not the fit's
#: (:meth:`FavoritismResult.own_df`; the audit and ``recuse favoritism`` cluster by prompt)
DF_WORDS = (
    "df: the degrees of freedom of the Student t that reads the row's interval and p — the "
    "prompts holding its ratings less one (at least 1), the fit's {df:g} for a term with "
    "ratings on every prompt"
)
REQUIRED = ("prompt_id", "model", "dimension", "judge", "rating", "reference")
#: why a judge's self-bias term is left out where none of its rows is its own model's
#: (the audit adds what it can: a model of its line, a spelling of its name)
NEVER_OWN = "it never rates its own completions"


# --------------------------------------------------------------------------- data


def family_of(ids: pd.Series, families: Families) -> pd.Series:
    """Family of each canonical model/judge id, from a roster or an ``{id: family}`` map.

    An id without a family raises :class:`InputError` naming it.
    """
    if isinstance(families, Roster):
        out = families.families(ids)
    else:
        out = ids.map(dict(families))
    unknown = out.isna() & ids.notna()
    if unknown.any():
        name = ids[unknown].iloc[0]
        raise InputError(
            f"model {name!r} has no family",
            column=str(ids.name) if ids.name is not None else None,
            fix="add it to the roster (id, family) or to the family mapping you pass",
        )
    return out.astype(object)


@dataclass(frozen=True, eq=False)
class Prepared:
    """A ratings table made ready for Eq. 1: usable rows, normalised scores, indicators.

    ``frame`` columns: prompt_id, model, dimension, judge, y (normalised rating),
    ref (normalised reference), judge_family, model_family, is_self, is_family, plus
    ``length``, ``task``, ``dataset`` and ``rating``/``reference`` (raw) when present.
    ``scales``: per dimension, ``low`` and ``scale`` with normalised = (raw − low) / scale.
    ``warnings``: scores that set a dimension's scale on their own (:func:`stray_scores`),
    the :class:`FavoritismResult`'s warnings.
    """

    frame: pd.DataFrame
    scales: pd.DataFrame
    normalize: str
    n_excluded: Mapping[str, int]
    families: Mapping[str, str] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    def subset(self, keep: np.ndarray | pd.Series) -> Prepared:
        """The same preparation restricted to the rows where ``keep`` is true."""
        mask = np.asarray(keep, bool)
        return replace(self, frame=self.frame[mask].reset_index(drop=True))


def _check_options(normalize: str, se: str | None = None, level: float | None = None) -> None:
    if normalize not in NORMALIZE:
        raise ConfigError(
            f"unknown normalisation {normalize!r} — use one of {', '.join(NORMALIZE)}"
        )
    if se is not None and se not in SE_TYPES:
        raise ConfigError(f"unknown standard-error type {se!r} — use one of {', '.join(SE_TYPES)}")
    if level is not None and not 0 < level < 1:
        raise ConfigError(f"confidence level {level!r} must be between 0 and 1, e.g. 0.9")


def scales_for(ratings: pd.DataFrame, *, normalize: Normalize = "max") -> pd.DataFrame:
    """Per-dimension ``low`` and ``scale`` of the normalisation (see module docstring)."""
    _check_options(normalize)
    rows = []
    for dim, g in ratings.groupby("dimension", sort=True):
        values = np.concatenate([g["rating"].to_numpy(float), g["reference"].to_numpy(float)])
        values = values[np.isfinite(values)]
        hi = float(values.max()) if values.size else 1.0
        lo = float(values.min()) if values.size else 0.0
        if normalize == "max":
            low, scale = 0.0, hi if hi != 0 else 1.0
        elif normalize == "range":
            low, scale = lo, (hi - lo) if hi > lo else 1.0
        else:
            low, scale = 0.0, 1.0
        rows.append({"dimension": dim, "low": low, "scale": scale})
    return pd.DataFrame(rows, columns=["dimension", "low", "scale"])


def stray_scores(frame: pd.DataFrame, *, normalize: Normalize = "max") -> list[str]:
    """A note per dimension whose normalisation is set by a stray score: its top
    (``"max"``, ``"range"``) or bottom (``"range"``) value, held by at most 1% of the
    dimension's ratings and references, lies farther from the next value than the
    other values span. One rating of 100 on a 1–5 scale divides every score of its
    dimension by 100, not 5: the coefficients are then read in units of 100 (Play
    Favorites' gpt-4o self-bias went from −0.017 to −0.0009) with nothing else to
    show it. A note, not a refusal: the value may be real."""
    return [note for _, note in _stray_notes(frame, normalize=normalize)]


def _stray_notes(frame: pd.DataFrame, *, normalize: Normalize) -> list[tuple[str, str]]:
    """:func:`stray_scores`' notes, each with its dimension."""
    notes: list[tuple[str, str]] = []
    if normalize == "none":
        return notes
    ends = ("top", "bottom") if normalize == "range" else ("top",)
    for dim, g in frame.groupby("dimension", sort=True):
        values = np.concatenate([g["rating"].to_numpy(float), g["reference"].to_numpy(float)])
        for end in ends:
            v = values if end == "top" else -values
            edge = float(v.max())
            rest = v[v < edge]
            held = int((v == edge).sum())
            if not rest.size or held > max(1, 0.01 * v.size):
                continue
            nxt, far = float(rest.max()), float(rest.min())
            if nxt == far or edge - nxt <= nxt - far:  # two values: a binary scale
                continue
            sign = 1.0 if end == "top" else -1.0
            raw = sign * edge
            hit = (g["rating"].to_numpy(float) == raw) | (g["reference"].to_numpy(float) == raw)
            at = g.iloc[int(np.argmax(hit))]
            lo, hi = sorted((sign * nxt, sign * far))
            notes.append(
                (
                    str(dim),
                    f"dimension {dim!r}: its {end} score {raw:g} (held by {held} of {v.size:,} "
                    f"ratings and references, e.g. judge {at['judge']!r} on model "
                    f"{at['model']!r}, prompt {at['prompt_id']!r}) lies apart from the others "
                    f"({lo:g} to {hi:g}) and sets the dimension's scale alone: every "
                    "coefficient is in units of that scale; if it is a typo, correct or drop "
                    "that row",
                )
            )
    return notes


#: a judge whose every rating of a dimension lies within this share of the dimension's
#: normalised scale (its top at most a quarter of the way up) is read as rating on
#: another scale: 0–1 among 1–5 or 1–10 scores, 1–10 among 0–100
NARROW_SHARE = 0.25


def narrow_judges(
    frame: pd.DataFrame, *, normalize: Normalize = "max", skip: Collection[str] = ()
) -> list[str]:
    """A note per judge and dimension whose ratings all lie in the bottom quarter of the
    dimension's normalised scale (:data:`NARROW_SHARE`; above the scale's bottom, so a
    judge rating everything 0 is not one): a judge rating 0–1 among others (or
    references) rating 1–10. The scale is the dimension's, so that judge's ratings are
    divided by 10 where its own top is 1: its γ then reads 0.01, "1% of the scale", for
    an extra tenth of its own scale, with nothing else to show it. A note beside the
    coefficients, not a refusal: a harsh judge may be real. Where every judge is so (a
    dimension's only judge too), the references set the scale, and one note for the
    dimension says so (a 0–100 reference beside 1–10 ratings had a note per judge blame
    each judge, and a lone judge's note called the references its scores); it says too
    that a panel harsher than references on its own scale reads so, and is measured as
    it is.
    Dimensions in ``skip`` (those whose scale a stray score sets, :func:`stray_scores`,
    which says so) are not read.

    >>> t = pd.DataFrame({"dimension": "d", "judge": ["j", "j", "k", "k"],
    ...                   "rating": [0.2, 1.0, 3.0, 10.0], "reference": [2.0, 9.0, 3.0, 8.0]})
    >>> narrow_judges(t)[0].split(":")[0]
    "dimension 'd', judge 'j'"
    >>> narrow_judges(t.assign(rating=[2.0, 3.0, 3.0, 10.0]))
    []
    >>> narrow_judges(t.assign(reference=[20.0, 90.0, 30.0, 80.0]))[0].split(":")[0]
    "dimension 'd'"
    """
    notes: list[str] = []
    if normalize == "none":
        return notes
    scales = scales_for(frame, normalize=normalize)
    by_dim = dict(zip(scales["dimension"], zip(scales["low"], scales["scale"], strict=True),
                      strict=True))  # fmt: skip
    tops = frame.groupby(["dimension", "judge"], sort=True)["rating"].max().reset_index()
    every = tops.groupby("dimension", sort=True)["rating"].max()
    said: set[object] = set(skip)  # a dimension's note, not one per judge, where it spoke
    for dim, top in every.items():  # the judges' top, together
        low, scale = by_dim[dim]
        share = (float(top) - low) / scale
        if dim in skip or not 0 < share <= NARROW_SHARE:
            continue
        reference = float(np.nanmax(frame.loc[frame["dimension"] == dim, "reference"]))
        notes.append(
            f"dimension {dim!r}: no judge rates above {float(top):g}, "
            f"{share_percent(share, 0)} of the way up the dimension's scale, which the "
            f"references set (they reach {reference:g}); if the references are on another "
            "scale (0–100 beside 1–10 ratings), every coefficient is in units of theirs, "
            f"about {1 / share:,.0f} times the ratings' own — put the references on the "
            "ratings' scale; if both are on one scale, the judges rate far below the "
            "references (a harsh panel), and the coefficients read it as it is"
        )
        said.add(dim)
    for dim, judge, top in tops.itertuples(index=False):
        if dim in said:
            continue
        low, scale = by_dim[dim]
        share = (float(top) - low) / scale
        if not 0 < share <= NARROW_SHARE:
            continue
        of_dim = frame[frame["dimension"] == dim]
        others = float(np.nanmax(of_dim[["rating", "reference"]].to_numpy(float)))
        notes.append(
            f"dimension {dim!r}, judge {judge!r}: no rating above {top:g}, "
            f"{share_percent(share, 0)} of the way up the dimension's scale (its scores reach "
            f"{others:g}); "
            "if this judge rates on another scale (0–1 among 1–10 scores), its coefficients "
            f"are in units of the dimension's scale, about {1 / share:,.0f} times its own — "
            "put its ratings on the dimension's scale"
        )
    return notes


def _scores(s: pd.Series, column: str) -> pd.Series:
    """``s`` as numbers (text that is a number too; missing stays missing), an
    :class:`InputError` at its first cell that is none: a word (``"seven"``) or a
    ``True`` in a table that recuse has not read, which ``to_numeric`` made missing and
    the fit then left out as if the judge had given no rating."""
    number = pd.to_numeric(s, errors="coerce")
    if pd.api.types.is_bool_dtype(s.dtype):
        bad = pd.Series(True, index=s.index)
    else:
        bad = number.isna() & s.notna()
        if s.dtype == object:
            bad |= s.map(lambda v: isinstance(v, bool | np.bool_))
    if len(s) and bad.any():
        i = int(np.flatnonzero(bad.to_numpy(bool))[0])
        raise InputError(
            f"{shown(s.iloc[i])} is not a number (a table not read by recuse?)",
            row=i + 1,
            column=column,
            fix="ratings and references are numbers, missing = none (a missing rating "
            "with a status saying why): read the table with recuse.validate_ratings(frame) "
            "or recuse.data.load(NAME_OR_FILE), or map other values to numbers first",
        )
    return number


def prepare(
    ratings: pd.DataFrame,
    families: Families,
    *,
    normalize: Normalize = "max",
    reference: str = "reference",
    selves: Mapping[str, str] | None = None,
) -> Prepared:
    """Usable rows of a ``ratings`` table with normalised scores and self/family flags.

    ``reference`` names the column used as the independent score (``"reference"``,
    or e.g. an alternative reference built by a robustness check). ``selves``
    (:meth:`~recuse.roster.Roster.self_map`): what counts as the judge rating itself
    (default: the same id; with model lines, any snapshot of the judge's line).
    """
    _check_options(normalize)
    if not isinstance(ratings, pd.DataFrame):
        raise InputError("expected a ratings table (pandas DataFrame)")
    check_header(ratings)  # ratings[column] is one column below
    missing = [c for c in (*REQUIRED, reference) if c not in ratings.columns]
    if missing:
        raise InputError(
            f"missing column(s) {', '.join(dict.fromkeys(missing))}",
            fix=f"a ratings table needs {', '.join(REQUIRED)}",
        )
    df = ratings
    if reference != "reference":
        df = df.drop(columns=["reference"]).rename(columns={reference: "reference"})
    rating = _scores(df["rating"], "rating")
    ref = _scores(df["reference"], reference)
    no_rating = rating.isna().to_numpy()
    no_ref = ref.isna().to_numpy() & ~no_rating
    excluded: dict[str, int] = {}
    if no_rating.any():
        status = (
            df["status"].fillna("missing")
            if "status" in df.columns
            else pd.Series("missing", index=df.index)
        )
        for k, v in status[no_rating].value_counts().items():
            excluded[str(k)] = int(v)
    if no_ref.any():
        excluded["no reference"] = int(no_ref.sum())
    keep = ~(no_rating | no_ref)
    cols = [
        c
        for c in ("prompt_id", "model", "dimension", "judge", "length", "task", "dataset")
        if c in df.columns
    ]
    frame = df.loc[keep, cols].reset_index(drop=True)
    frame["rating"] = rating[keep].to_numpy(float)
    frame["reference"] = ref[keep].to_numpy(float)
    if len(frame) == 0:
        raise EstimationError(
            "no usable rows: every rating or reference is missing — check the columns read "
            "as rating and reference (--map FILE_COLUMN=rating)"
        )
    for c in ("prompt_id", "model", "dimension", "judge"):
        frame[c] = frame[c].astype(str)
    scales = scales_for(frame, normalize=normalize)
    # per-row lookups through the codes of the distinct values (a map per row is slow)
    dim = pd.Index(scales["dimension"]).get_indexer(frame["dimension"])
    low = scales["low"].to_numpy(float)[dim]
    scale = scales["scale"].to_numpy(float)[dim]
    frame["y"] = (frame["rating"].to_numpy() - low) / scale
    frame["ref"] = (frame["reference"].to_numpy() - low) / scale
    fams: dict[str, str] = {}
    for role in ("judge", "model"):
        codes, ids = pd.factorize(frame[role])
        fam = family_of(pd.Series(ids, name=role), families).to_numpy()
        frame[f"{role}_family"] = fam[codes]
        fams.update(zip(map(str, ids), map(str, fam), strict=True))
    frame["is_self"] = (
        self_keys(frame["judge"], selves).to_numpy() == self_keys(frame["model"], selves).to_numpy()
    )
    frame["is_family"] = (
        (frame["judge_family"] == frame["model_family"]) & ~frame["is_self"]
    ).to_numpy()
    fams = dict(sorted(fams.items()))
    stray = _stray_notes(frame, normalize=normalize)
    return Prepared(
        frame=frame,
        scales=scales,
        normalize=normalize,
        n_excluded=excluded,
        families=fams,
        warnings=(
            *(note for _, note in stray),
            *narrow_judges(frame, normalize=normalize, skip={dim for dim, _ in stray}),
        ),
    )


# ------------------------------------------------------------------------- design


@dataclass(frozen=True)
class Term:
    """One column of the design: its name, what it is and whom it is about."""

    name: str
    kind: TermKind
    label: str


def length_feature(frame: pd.DataFrame) -> pd.Series:
    """``tanh((l_im − mean_i) / sd_i)``: length standardised within prompt (Section 6.2).

    The mean and standard deviation (``ddof=1``) are taken over the distinct
    completions of prompt ``i`` — one length per model — separately per dimension
    (a dataset may record a prompt's completion with a different length in each
    dimension, as Play Favorites does). A prompt with fewer than two completions or
    with all lengths equal gives NaN.
    """
    if "length" not in frame.columns:
        raise InputError(
            "length control needs a 'length' column",
            column="length",
            fix="give the completion length (tokens or characters) per row",
        )
    keys = ["prompt_id", "dimension"]
    comp = frame.drop_duplicates([*keys, "model"])[[*keys, "model", "length"]]
    comp = comp.dropna(subset=["length"])
    g = comp.groupby(keys)["length"]
    st = pd.DataFrame({"mean": g.mean(), "sd": g.std(ddof=1)})
    st.loc[~(st["sd"] > 0), "sd"] = np.nan
    idx = pd.MultiIndex.from_frame(frame[keys])
    m = st["mean"].reindex(idx).to_numpy()
    s = st["sd"].reindex(idx).to_numpy()
    feat = np.tanh((frame["length"].to_numpy(float) - m) / s)
    return pd.Series(feat, index=frame.index, name="length_feature")


def _codes(values: pd.Series) -> tuple[np.ndarray, list[str]]:
    """Integer codes of ``values`` and the sorted distinct values they index."""
    codes, uniques = pd.factorize(values, sort=True)
    return np.asarray(codes), [str(u) for u in uniques]


def design_matrix(
    frame: pd.DataFrame,
    *,
    intercept: Intercept = "judge",
    judge_intercepts: bool = True,
    dimension_effects: bool = True,
    extra_by_judge: Mapping[str, np.ndarray] | None = None,
) -> tuple[sp.csr_array, list[Term], list[str]]:
    """Design matrix of Eq. 1 for a :func:`prepare`-d frame, sparse: ``(X, terms, notes)``.

    Columns, in order: judge intercepts (or ``const``), judge slopes on the reference,
    the self term of every judge that rates its own completions, the family term of
    every family with a judge that rates another model of the family, dimension
    effects (all but the first dimension), then ``extra_by_judge`` slopes.

    ``judge_intercepts=False`` drops the judge fixed effects (used by the ordinal model,
    whose thresholds take the intercept, with one judge as baseline: see
    :mod:`recuse.regression.robustness`). ``extra_by_judge`` adds judge-specific slopes
    on further features (e.g. the length feature), named ``"<name>:judge[<id>]"``.
    Raises :class:`EstimationError` naming the cause when the model is not identified.
    """
    n = len(frame)
    if n == 0:
        raise EstimationError("no ratings left to fit")
    jcode, judges = _codes(frame["judge"])
    ones = np.ones(n)
    every = np.arange(n)
    rows: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    vals: list[np.ndarray] = []
    terms: list[Term] = []
    notes: list[str] = []

    def block(r: np.ndarray, c: np.ndarray, v: np.ndarray, new: list[Term]) -> None:
        rows.append(r)
        cols.append(c + len(terms))
        vals.append(v)
        terms.extend(new)

    def indicator(
        mask: np.ndarray, code: np.ndarray, names: list[str], kind: TermKind, drop: np.ndarray
    ) -> None:
        """A 0/1 column ``kind[g]`` per group ``g`` with rows in ``mask``, unless ``drop[g]``."""
        has = (np.bincount(code[mask], minlength=len(names)) > 0) & ~drop
        r = every[mask & has[code]]
        block(
            r,
            (np.cumsum(has) - 1)[code[r]],
            ones[r],
            [Term(f"{kind}[{g}]", kind, g) for g, h in zip(names, has, strict=True) if h],
        )

    if intercept == "global":
        block(every, np.zeros(n, np.intp), ones, [Term("const", "intercept", "all")])
    elif judge_intercepts:
        block(every, jcode, ones, [Term(f"judge[{j}]", "judge", j) for j in judges])
    elif len(judges) > 1:  # baseline: the first judge
        m = jcode > 0
        block(
            every[m], jcode[m] - 1, ones[m], [Term(f"judge[{j}]", "judge", j) for j in judges[1:]]
        )
    ref = frame["ref"].to_numpy(float)
    block(every, jcode, ref, [Term(f"reference:judge[{j}]", "slope", j) for j in judges])

    # a self (family) term that equals the judge's (the family's judges') intercept
    # is not identified beside the intercepts: left out, like a term with no rows
    intercepts = intercept != "global"
    is_self = frame["is_self"].to_numpy(bool)
    n_self = np.bincount(jcode[is_self], minlength=len(judges))
    own_only = intercepts & (n_self == np.bincount(jcode, minlength=len(judges)))
    indicator(is_self, jcode, judges, "self", own_only)
    for j, n_own, only in zip(judges, n_self, own_only, strict=True):
        if only:
            notes.append(f"self-bias of {j} not estimable: it rates only its own completions")
        elif n_own == 0:
            notes.append(f"self-bias of {j} not estimable: {NEVER_OWN}")
    fcode, fams = _codes(frame["judge_family"])
    is_family = frame["is_family"].to_numpy(bool)
    n_family = np.bincount(fcode[is_family], minlength=len(fams))
    closed = intercepts & (n_family == np.bincount(fcode[~is_self], minlength=len(fams)))
    indicator(is_family, fcode, fams, "family", closed)
    for f, n_fam, shut in zip(fams, n_family, closed, strict=True):
        if n_fam == 0:
            notes.append(
                f"family-bias of {f} not estimable: no judge of the family rates "
                "another model of the family"
            )
        elif shut:
            notes.append(
                f"family-bias of {f} not estimable: its judges rate only models of their own family"
            )
    if dimension_effects:
        dcode, dims = _codes(frame["dimension"])
        if len(dims) > 1:
            m = dcode > 0
            block(
                every[m],
                dcode[m] - 1,
                ones[m],
                [Term(f"dimension[{d}]", "dimension", d) for d in dims[1:]],
            )
    for name, values in (extra_by_judge or {}).items():
        kind: TermKind = "length" if name == "length" else "slope"
        block(
            every,
            jcode,
            np.asarray(values, float),
            [Term(f"{name}:judge[{j}]", kind, j) for j in judges],
        )
    X = sp.csr_array(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
        shape=(n, len(terms)),
    )
    check_identified(X, terms, frame)
    return X, terms, notes


def design(
    frame: pd.DataFrame,
    *,
    intercept: Intercept = "judge",
    judge_intercepts: bool = True,
    dimension_effects: bool = True,
    extra_by_judge: Mapping[str, np.ndarray] | None = None,
) -> tuple[np.ndarray, list[Term], list[str]]:
    """:func:`design_matrix` as a dense array (for estimators that need one)."""
    X, terms, notes = design_matrix(
        frame,
        intercept=intercept,
        judge_intercepts=judge_intercepts,
        dimension_effects=dimension_effects,
        extra_by_judge=extra_by_judge,
    )
    return X.toarray(), terms, notes


#: the largest rating or reference, once scaled, the fit takes: its standard errors
#: hold fourth powers of the values (residual times column, squared), which pass the
#: largest float near 1e77 (1e150 left every γ without one; 1e160 stopped in X'X)
LARGEST_SCALED = 1e50
#: the least the largest rating or reference, once scaled, may be: below, their fourth
#: powers pass the smallest float (scores of 1e-300 gave every γ 0, with z NaN)
SMALLEST_SCALED = 1e-50


def _check_magnitude(frame: pd.DataFrame) -> None:
    """Refuse scaled ratings or references too large, or ratings all too small, for the
    fit's floating point (references all too small leave their slope's column empty, which
    the design names)."""
    for col, what in (("y", "rating"), ("ref", "reference")):
        values = frame[col].to_numpy(float)
        top = float(np.abs(values).max()) if len(values) else 0.0
        if col == "y" and 0 < top < SMALLEST_SCALED:
            row = int(np.argmax(np.abs(values)))
            raise EstimationError(
                f"the largest {what} is {frame[what].iloc[row]:.6g}, "
                f"{significant_beside(top, SMALLEST_SCALED)} once scaled, "
                f"below the {SMALLEST_SCALED:.0e} whose fourth power the fit's standard "
                "errors hold in floating point — rescale the ratings and references "
                "(--normalize max, the default, divides each dimension by its largest value)"
            )
        if top > LARGEST_SCALED:
            row = int(np.argmax(np.abs(values)))
            raise EstimationError(
                f"a {what} of {frame[what].iloc[row]:.6g} is "
                f"{significant_beside(top, LARGEST_SCALED)} once scaled, above the "
                f"{LARGEST_SCALED:.0e} the fit can square and square again in floating "
                "point — rescale the ratings and references (--normalize max, the default, "
                "divides each dimension by its largest value)"
            )


def check_identified(X: sp.csr_array, terms: Sequence[Term], frame: pd.DataFrame) -> np.ndarray:
    """``X'X`` of a full-rank design; otherwise :class:`EstimationError` naming the cause.

    Full rank when the smallest eigenvalue of the column-equilibrated ``X'X`` is above
    ``1e-10`` of the largest. The columns named as linear combinations of the others are
    those a column-pivoted QR of the equilibrated ``X`` leaves with a negligible
    diagonal; the QR is taken of the ``R`` factors of blocks of rows (the same ``R``
    as of ``X`` itself, without holding ``X`` dense). Where none is (columns nearly but
    not exactly dependent), those weighing at least a tenth of the most in the
    eigenvector of the smallest eigenvalue are named.
    """
    XtX = gram(X)
    norms = np.sqrt(np.diag(XtX))
    empty = [t.name for t, v in zip(terms, norms, strict=True) if v == 0]
    if empty:  # a reference of 0 in every rating of a judge, say: the causes name it
        causes = _causes(frame, len(terms))
        raise EstimationError(
            f"the model is not identified on these data: column(s) {', '.join(empty)} are 0 "
            "in every row — "
            + (
                "; ".join(causes)
                if causes
                else "their values are 0, or too small to count once divided by the scale"
            )
        )
    eig, vec = np.linalg.eigh(XtX / np.outer(norms, norms))
    weak = eig <= 1e-10 * max(eig[-1], 1.0)  # the directions of a (near) dependency
    if not weak[0]:
        return XtX
    Xs = X @ sp.diags_array(1 / norms)
    blocks = [
        scipy.linalg.qr(Xs[i : i + 65_536].toarray(), mode="r")[0]
        for i in range(0, X.shape[0], 65_536)
    ]
    _, r, piv = scipy.linalg.qr(np.vstack(blocks), mode="economic", pivoting=True)
    d = np.abs(np.diag(r))
    bad = [terms[piv[i]] for i in range(len(d)) if d[i] < 1e-8 * d[0]]
    bad += [terms[i] for i in piv[len(d) :]]  # fewer rows than columns
    if not bad:  # nearly dependent, not exactly: the terms of every weak direction
        weight = np.abs(vec[:, weak])
        heavy = (weight >= 0.1 * weight.max(axis=0)).any(axis=1)
        bad = [terms[int(i)] for i in np.flatnonzero(heavy)]
    causes = _causes(frame, len(terms))
    raise EstimationError(
        "the model is not identified on these data: column(s) "
        f"{', '.join(t.name for t in bad)} are (nearly) linear combinations of the others — "
        + (
            "; ".join(causes)
            if causes
            else "each judge needs ratings of its own and of other models' completions, "
            "and references that vary"
        )
    )


#: references whose spread is below this share of their mean make a judge's reference
#: slope and intercept columns nearly equal (check_identified's 1e-10 of X'X)
OFFSET_RATIO = 1e-4


def _causes(frame: pd.DataFrame, k: int) -> list[str]:
    """Plain reasons a design of ``k`` columns on ``frame`` can be rank-deficient."""
    out: list[str] = []
    if len(frame) < k:
        out.append(f"{len(frame):,} ratings for {k} coefficients")
    by_judge = frame.groupby("judge", sort=True).agg(
        only_self=("is_self", "all"), refs=("ref", "nunique"), selfs=("is_self", "any")
    )
    out += [
        f"judge {j} rates only its own completions" for j in by_judge.index[by_judge["only_self"]]
    ]
    flat = by_judge[by_judge["refs"] < 2].index
    out += [f"the reference does not vary among judge {j}'s ratings" for j in flat]
    ref = frame.groupby("judge", sort=True)["reference"].agg(["std", "mean"])
    ratio = ref["std"] / ref["mean"].abs()
    offset = ratio.index[(ratio < OFFSET_RATIO) & ~ratio.index.isin(flat)]
    if len(offset):
        out.append(
            f"the references of judge(s) {', '.join(map(str, offset))} vary by as little as "
            f"{ratio[offset].min():.1g} of their size (around "
            f"{ref.loc[offset[0], 'mean']:.6g}), so a reference slope is nearly its judge's "
            "intercept — subtract the offset from the references, or check the column"
        )
    others = frame[~frame["is_self"]]
    by_family = others.groupby("judge_family", sort=True)["is_family"].agg(["all", "any"])
    closed = by_family.index[by_family["all"] & by_family["any"]]
    out += [f"the {f} judges rate only models of their own family" for f in closed]
    return out


# ------------------------------------------------------------------------ results


@dataclass(frozen=True, eq=False)
class FavoritismResult:
    """Immutable result of a favoritism fit (main model or a robustness variant).

    ``coefficients`` is the tidy table: term, kind, label, estimate, se, z, p, lower,
    upper, significant (interval at ``level`` excludes 0), df (of the interval's and p's
    Student t; NaN: the normal). Accessors return
    copies. ``warnings``: what every coefficient must be read with (a stray score that
    sets a dimension's scale alone, :func:`stray_scores`); ``notes``: the rest.
    ``n`` counts the ratings of the whole fit; ``term_n`` the ratings each self and family
    term rests on, by term name (:func:`term_ratings`).
    """

    method: str
    variant: str
    coefficients: pd.DataFrame
    level: float
    se_type: str
    n: int
    n_excluded: Mapping[str, int]
    normalize: str
    scales: pd.DataFrame
    families: Mapping[str, str]
    notes: tuple[str, ...] = ()
    scale_note: str = SCALE_NOTES["max"]
    cov: np.ndarray | None = field(default=None, repr=False)
    warnings: tuple[str, ...] = ()
    rsquared: float | None = None
    #: per self/family term (``self[j]``, ``family[F]``): the ratings it rests on
    #: (:func:`term_ratings`); ``n`` counts the whole fit's
    term_n: Mapping[str, int] = field(default_factory=dict)
    #: per self/family term: the prompts holding those ratings (:func:`term_prompts`), the
    #: clusters its cluster-robust error rests on
    term_prompts: Mapping[str, int] = field(default_factory=dict)
    #: degrees of freedom of the intervals' and p-values' Student t (the clusters less
    #: one, for cluster-robust errors); None: the normal quantile. Each coefficient's own
    #: is its ``df`` column: the clusters holding its rows less one, where fewer
    df: float | None = None

    # -- accessors
    def tidy(self) -> pd.DataFrame:
        return self.coefficients.copy()

    @property
    def params(self) -> pd.Series:
        c = self.coefficients
        return pd.Series(c["estimate"].to_numpy(), index=c["term"].to_numpy(), name="estimate")

    @property
    def bse(self) -> pd.Series:
        c = self.coefficients
        return pd.Series(c["se"].to_numpy(), index=c["term"].to_numpy(), name="se")

    def conf_int(self, level: float | None = None) -> pd.DataFrame:
        """Wald intervals ``estimate ± q · se`` (default: the fit's level), ``q`` the
        ``(1+level)/2`` quantile of Student's t on :attr:`df` degrees of freedom (the
        normal's where ``df`` is None), as the fit's own ``lower`` and ``upper``."""
        lv = self.level if level is None else level
        _check_options("none", level=lv)
        z = quantile(0.5 + lv / 2, None if self.df is None else self.coefficients["df"].to_numpy())
        c = self.coefficients
        return pd.DataFrame(
            {"lower": c["estimate"] - z * c["se"], "upper": c["estimate"] + z * c["se"]}
        ).set_index(c["term"])

    def _kind(self, kind: str) -> pd.DataFrame:
        c = self.coefficients[self.coefficients["kind"] == kind]
        return c.drop(columns=["kind", "term"]).reset_index(drop=True)

    def few_prompts(self, term: str) -> tuple[str, ...]:
        """The warning of a self or family ``term`` (``self[j]``, ``family[F]``) whose
        ratings lie on fewer than :data:`FEW_CLUSTERS` prompts (:attr:`term_prompts`):
        its error rests on those, however many prompts the fit has (a γ on 3 of 40
        prompts, its t on 2 df); () otherwise."""
        k = self.term_prompts.get(term)
        if k is None or k >= FEW_CLUSTERS:
            return ()
        kind, label = term.split("[", 1)
        symbol = {"self": "γ_j", "family": "λ_F"}[kind]
        n = self.term_n[term]
        return (
            f"{symbol} of {label.removesuffix(']')}: its {counted(n, 'ratings')} "
            f"{'lies' if n == 1 else 'lie'} on only {counted(k, 'prompts')}, which its "
            "standard error rests on: an "
            "interval from so few is unreliable — add prompts holding them, or read it as "
            "rough",
        )

    def own_df(self, tab: pd.DataFrame) -> bool:
        """Whether a row of ``tab`` (rows of :attr:`coefficients`, with their ``df``) reads
        Student's t on other degrees of freedom than the fit's :attr:`df` (a term whose
        ratings lie on fewer prompts): its table then shows each row's df (the title's
        "Student t on 39 df" read as every row's, a γ on 5 prompts read on 4)."""
        return self.df is not None and bool((tab["df"].to_numpy(float) != self.df).any())

    def self_bias(self) -> pd.DataFrame:
        """γ_j per judge: judge, family, estimate, se, z, p, lower, upper, significant, df."""
        out = self._kind("self").rename(columns={"label": "judge"})
        out.insert(1, "family", out["judge"].map(dict(self.families)))
        return out

    def family_bias(self) -> pd.DataFrame:
        """λ_F per family: family, estimate, se, z, p, lower, upper, significant, df."""
        return self._kind("family").rename(columns={"label": "family"})

    def definition(self, kind: Literal["self", "family"]) -> str:
        """What γ_j (``"self"``) or λ_F (``"family"``) is: its unit under this fit's
        normalisation and its no-bias value, 0."""
        unit = self.scale_note
        if unit == SCALE_NOTES.get(self.normalize):
            unit += f" ({SCALE_WORDS[self.normalize]})"
        if kind == "self":
            return (
                f"γ_j: extra {unit} the judge gives its own model's answers beyond what "
                "the reference score predicts; 0 = no self-bias"
            )
        return (
            f"λ_F: extra {unit} the family's judges give the family's other models "
            "beyond what the reference score predicts; 0 = no family bias"
        )

    # -- output
    def summary(self) -> str:
        """The fit as text: each self- and family-bias term's estimate, standard error
        and Wald interval, written as :func:`coefficient_cells` writes them (one
        precision a table, chosen by its numbers; on an extreme scale in units of a
        power of ten, said in the table's title), ``*`` where the interval excludes 0."""
        pct = f"{percent(self.level)}"
        lines = [
            f"Favoritism regression ({self.variant}): {self.method}",
            f"n = {self.n:,} ratings; SE {self.se_type}; {pct} Wald intervals; "
            f"scores: {self.scale_note} ({self.normalize})",
        ]
        if self.n_excluded:
            lines.append("excluded: " + ", ".join(f"{v:,} {k}" for k, v in self.n_excluded.items()))
        for title, tab, key in (
            ("Self-bias γ_j", self.self_bias(), "judge"),
            ("Family-bias λ_F", self.family_bias(), "family"),
        ):
            lines.append("")
            if tab.empty:
                lines += [title, "  (none estimable)"]
                continue
            cells, scale = coefficient_cells(tab)
            lines.append(f"{title} ({scale})" if scale else title)
            width = max(len(str(v)) for v in tab[key])
            texts = [(c[0] or "n/a", c[1] or "n/a", f"[{c[2] or 'n/a'}, {c[3] or 'n/a'}]")
                     for c in cells]  # fmt: skip
            wide = [max(len(row[i]) for row in texts) for i in range(3)]
            for (_, r), (est, se, ci) in zip(tab.iterrows(), texts, strict=True):
                star = " *" if r["significant"] else ""
                lines.append(
                    f"  {r[key]:<{width}}  {est:>{wide[0]}}  se {se:>{wide[1]}}  "
                    f"{ci:>{wide[2]}}{star}"
                )
        lines.append("")
        lines.append(f"* {pct} interval excludes 0")
        lines += [f"warning: {n}" for n in self.warnings]
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)

    def to_html(self) -> str:
        """Summary as an HTML fragment (all text escaped): the self- and family-bias
        tables with estimate, se, lower and upper as :func:`coefficient_cells` writes
        them (a caption says a table's power of ten), z with two decimals, p as
        :func:`recuse.numbers.p_text` writes it (``< 0.001``), counts as counts; a
        number that is not finite is empty. The JSON (:meth:`to_dict`) keeps every digit."""
        esc = html.escape
        parts = [
            f"<h3>{esc(f'Favoritism regression ({self.variant})')}</h3>",
            f"<p>{esc(self.method)}; n = {self.n:,}; SE {esc(self.se_type)}; "
            f"{percent(self.level)} Wald intervals</p>",
        ]
        for title, tab in (("Self-bias", self.self_bias()), ("Family-bias", self.family_bias())):
            cells, scale = coefficient_cells(tab)
            parts.append(f"<h4>{esc(title)}</h4><table>")
            if scale:
                parts.append(f"<caption>estimate, se, lower and upper {esc(scale)}</caption>")
            parts.append("<tr>")
            parts += [f"<th>{esc(str(c))}</th>" for c in tab.columns]
            parts.append("</tr>")
            for (_, r), row in zip(tab.iterrows(), cells, strict=True):
                written = dict(zip(("estimate", "se", "lower", "upper"), row, strict=True))
                texts = [
                    written[str(c)] or ""
                    if str(c) in written
                    else _html_cell(str(c), v, level=self.level)
                    for c, v in r.items()
                ]
                parts.append("<tr>" + "".join(f"<td>{esc(t)}</td>" for t in texts) + "</tr>")
            parts.append("</table>")
        parts += [f"<p>warning: {esc(n)}</p>" for n in self.warnings]
        parts += [f"<p>note: {esc(n)}</p>" for n in self.notes]
        return "\n".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (NaN becomes null)."""

        def records(df: pd.DataFrame) -> list[dict[str, Any]]:
            # every digit, as coefficients.csv has them: pandas' to_json kept 10 decimal
            # places, so a p of 4.5e-10 read 5e-10 and 1.26e-09 read 1.3e-09
            def plain(v: Any) -> Any:
                v = v.item() if isinstance(v, np.generic) else v
                return None if isinstance(v, float) and not math.isfinite(v) else v

            return [{str(k): plain(v) for k, v in r.items()} for r in df.to_dict(orient="records")]

        return {
            "variant": self.variant,
            "method": self.method,
            "level": self.level,
            "se_type": self.se_type,
            # the intervals' and p-values' Student t (null: the normal quantile)
            "df": self.df,
            "n": self.n,
            "n_excluded": dict(self.n_excluded),
            "normalize": self.normalize,
            "scales": records(self.scales),
            "families": dict(self.families),
            "rsquared": self.rsquared,
            "notes": list(self.notes),
            "warnings": list(self.warnings),
            "definitions": {
                "self_bias": self.definition("self"),
                "family_bias": self.definition("family"),
                "null": 0.0,
                # the JSON's `significant` as the table's 'sig. *' says it: not the audit's flag
                "significant": f"the {percent(self.level)} interval [lower, upper] excludes 0 "
                f"({SIGNIFICANCE_WORDS})",
                # the column is named z whatever the reference distribution: on 7 prompts
                # its p is t's on 6 df (z 2.5: p 0.047, the normal's 0.012)
                "z": "the Wald statistic, estimate / se (named z whatever distribution reads "
                f"it): read against {self._reference_words()}"
                + (
                    ", p = 2 · P(Z > |z|)"
                    if self.df is None
                    else ", not the normal, p = 2 · P(T > |z|)"
                ),
                "p": f"two-sided p-value of z against 0 (no bias), read against "
                f"{self._reference_words()}",
                "df": "the degrees of freedom of the Student t that reads the row's z, p and "
                + (
                    "interval: null, the normal distribution reads them"
                    if self.df is None
                    else "interval: the clusters holding the term's ratings less one (at least 1)"
                ),
            },
            "self_bias": records(self.self_bias()),
            "family_bias": records(self.family_bias()),
            "coefficients": records(self.coefficients),
        }

    def _reference_words(self) -> str:
        """The distribution the coefficients' z and p are read against: Student's t on
        ``df`` degrees of freedom (cluster-robust errors), each term's own where they
        differ (its ``df`` column: a term on fewer prompts reads t on those less one),
        else the normal distribution."""
        if self.df is None:
            return "the normal distribution"
        dfs = self.coefficients.get("df", pd.Series(dtype=float)).to_numpy(float)
        if np.all(dfs[np.isfinite(dfs)] == self.df):
            return f"Student's t on {self.df:g} df (the clusters less one)"
        return (
            "Student's t on each term's df (its df column: the clusters holding its "
            f"ratings less one; {self.df:g} where it has ratings in every cluster)"
        )

    def __repr__(self) -> str:
        return f"<FavoritismResult {self.variant}: {self.method}, n={self.n}>"


def coefficient_cells(tab: pd.DataFrame) -> tuple[list[tuple[str | None, ...]], str]:
    """Each row's estimate, standard error, lower and upper end (of a table of
    :meth:`FavoritismResult.self_bias` or ``family_bias``) as every table of them writes
    it, and the words saying the table's unit ("" or ``in units of 10⁴⁷``); None for a
    number that is not finite (no standard error: no interval).

    One precision for the table, chosen by its numbers
    (:func:`recuse.numbers.table_precision`: two decimals, three where every number is
    under 0.1, more below; more still where a standard error would read 0), the estimate
    signed (its no-bias value is 0) and each with :data:`recuse.numbers.MINUS`.
    Unnormalised scores on an extreme scale (from 1e15, or under 1e-5) are written in
    units of a power of ten (:func:`recuse.numbers.table_power`), so that scores of 1e49
    give ``−4.94`` (in units of 10⁴⁷), not fifty digits of which the last thirty-four are
    the float's noise, and scores of 1e-7 give ``−4.94`` (in units of 10⁻⁹), not
    ``+0.0000`` starred significant. A table with an interval that excludes 0 (starred)
    whose end nearest 0 would read 0 takes the decimals that write it off 0
    (:func:`recuse.numbers.off_null_decimals`): ``[0.00, 0.40] *`` read as touching the 0
    the star says it excludes. The JSON and the CSV keep every digit."""
    columns = ("estimate", "se", "lower", "upper")
    values = tab[list(columns)].astype(float).to_numpy() if len(tab) else np.empty((0, 4))
    power = table_power(values.ravel().tolist())
    scaled = values / 10.0**power
    digits = table_precision((float(e), float(s), float(lo), float(hi)) for e, s, lo, hi in scaled)
    for _, _, lo, hi in scaled:  # a starred interval (it excludes 0) never reads [0.00, …]
        digits = off_null_decimals(float(lo), float(hi), 0.0, digits)

    def text(i: int, v: float) -> str | None:
        if not math.isfinite(v):
            return None
        return signed(v, digits) if i == 0 else decimal(v, digits)

    rows = [tuple(text(i, float(v)) for i, v in enumerate(row)) for row in scaled]
    return rows, scale_words(power)


def precision_note(tab: pd.DataFrame, cells: list[tuple[str | None, ...]], *, key: str) -> str:
    """Words under a table whose one precision (every row's numbers with the decimals
    the row needing most takes, so that rows line up and no standard error reads 0)
    writes a row with more decimals than recuse audit's summary writes the same
    finding, each to its own interval's precision (:func:`recuse.numbers.estimate_text`:
    two decimals, three where every number is under 0.1): the first such row both ways.
    "" where the two agree on every row.

    >>> import pandas as pd
    >>> tab = pd.DataFrame({"judge": ["a", "b"], "estimate": [-0.1134, 0.014],
    ...                     "lower": [-0.1342, 0.0102], "upper": [-0.0921, 0.0171]})
    >>> cells = [("−0.113", "0.013", "−0.134", "−0.092"), ("+0.014", "0.002", "0.010", "0.017")]
    >>> print(precision_note(tab, cells, key="judge").split(": ")[-1])
    a −0.113 [−0.134, −0.092] reads −0.11 [−0.13, −0.09] there)
    >>> precision_note(tab.iloc[1:], cells[1:], key="judge")
    ''
    """
    for (_, r), row in zip(tab.iterrows(), cells, strict=True):
        if any(c is None for c in row):
            continue
        here = f"{row[0]} [{row[2]}, {row[3]}]"
        there = estimate_text(float(r["estimate"]), float(r["lower"]), float(r["upper"]), null=0.0)
        if here != there:
            return (
                "; numbers to the table's one precision, the finest any row needs (recuse "
                f"audit's summary writes each finding to its own interval's: {r[key]} {here} "
                f"reads {there} there)"
            )
    return ""


def _html_cell(column: str, value: Any, *, level: float) -> str:
    """A cell of :meth:`FavoritismResult.to_html` other than the estimate, se and
    interval: p as :func:`recuse.numbers.p_text` writes it beside ``1 − level`` (the
    threshold of the ``significant`` flag beside it), z with two decimals, a count with
    separators, a flag and a name as they are; a number that is not finite, empty."""
    value = value.item() if isinstance(value, np.generic) else value
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if not math.isfinite(value):
        return ""
    if column == "p":
        return p_text(value, beside=1 - level)
    if isinstance(value, int) or (float(value).is_integer() and column.startswith(("n", "df"))):
        return count(int(value))
    return decimal(value, 2)


def _term_rows(frame: pd.DataFrame, terms: Sequence[Term]) -> Iterator[tuple[str, np.ndarray]]:
    """Each self and family term of ``terms`` with the rows of ``frame`` on which its
    indicator is 1."""
    for t in terms:
        if t.kind == "self":
            mask = frame["is_self"].to_numpy(bool) & (frame["judge"] == t.label).to_numpy()
        elif t.kind == "family":
            fam = (frame["judge_family"] == t.label).to_numpy()
            mask = frame["is_family"].to_numpy(bool) & fam
        else:
            continue
        yield t.name, mask


def flat_dimensions(frame: pd.DataFrame) -> tuple[str, ...]:
    """A note per dimension of a :func:`prepare`-d ``frame`` whose ratings are all one
    value: nothing in it varies, yet its ratings enter the fit as ratings that show no
    self- or family-bias (a dimension of 3s beside one that varies halved every γ and its
    error, with nothing said; a whole file of one value is refused)."""
    if frame["dimension"].nunique() < 2:
        return ()
    spread = frame.groupby("dimension", observed=True)["rating"].agg(["min", "max", "size"])
    return tuple(
        f"dimension {shown(str(d))}: all {int(r['size']):,} ratings are "
        f"{r['min']:g} — nothing in it varies, yet it enters the fit, each γ and λ an "
        "average over it too (as no bias there); check the column it was read from, or "
        "leave the dimension out"
        for d, r in spread.iterrows()
        if r["min"] == r["max"] and r["size"] > 1
    )


def term_ratings(frame: pd.DataFrame, terms: Sequence[Term]) -> dict[str, int]:
    """The ratings each self and family term of ``terms`` rests on, by term name: the
    rows of ``frame`` (a :func:`prepare`-d fit's) whose value of the term's indicator is
    1 — for γ_j (``self[j]``) judge j's ratings of its own model's answers, for λ_F
    (``family[F]``) the ratings by F's judges of F's other models. The coefficient
    compares these with the same judges' other ratings, which every coefficient of the fit
    shares (the fit's ``n``)."""
    return {name: int(mask.sum()) for name, mask in _term_rows(frame, terms)}


def term_prompts(frame: pd.DataFrame, terms: Sequence[Term]) -> dict[str, int]:
    """The prompts holding the ratings of each self and family term (:func:`term_ratings`),
    by term name: what its cluster-robust error rests on (its t reads them less one)."""
    ids = frame["prompt_id"].to_numpy()
    return {name: int(pd.unique(ids[mask]).size) for name, mask in _term_rows(frame, terms)}


def quantile(q: float, df: float | np.ndarray | None) -> Any:
    """The ``q`` quantile of Student's t on ``df`` degrees of freedom (a number, or one a
    coefficient); the normal's where ``df`` is None."""
    if df is None:
        return float(stats.norm.ppf(q))
    return np.asarray(stats.t.ppf(q, df), float) if np.ndim(df) else float(stats.t.ppf(q, df))


def term_clusters(X: sp.spmatrix, groups: np.ndarray) -> np.ndarray:
    """Per column of the design ``X``, the clusters (``groups``) holding a row on which it
    is not 0: a self term's, the prompts on which the judge rates its own model."""
    csc = sp.csc_matrix(X)
    csc.eliminate_zeros()
    ends = zip(csc.indptr[:-1], csc.indptr[1:], strict=True)
    return np.array([np.unique(groups[csc.indices[a:b]]).size for a, b in ends], float)


def make_result(
    terms: Sequence[Term],
    params: np.ndarray,
    bse: np.ndarray,
    *,
    level: float,
    method: str,
    variant: str,
    se_type: str,
    prepared: Prepared,
    notes: Sequence[str] = (),
    pvalues: np.ndarray | None = None,
    cov: np.ndarray | None = None,
    rsquared: float | None = None,
    scale_note: str | None = None,
    n: int | None = None,
    df: float | None = None,
    term_df: np.ndarray | None = None,
) -> FavoritismResult:
    """Assemble a :class:`FavoritismResult` from coefficient arrays (any estimator);
    ``df``: the degrees of freedom of the intervals' and p-values' Student t (None: the
    normal distribution); ``term_df``: each coefficient's own, where they differ
    (:func:`term_clusters`; ``df`` for every one where None)."""
    params = np.asarray(params, float)
    bse = np.asarray(bse, float)
    dfs = np.full(params.shape, np.nan if df is None else df) if term_df is None else term_df
    z = quantile(0.5 + level / 2, None if df is None else dfs)
    with np.errstate(divide="ignore", invalid="ignore"):
        zstat = params / bse
    tail = stats.norm.sf(np.abs(zstat)) if df is None else stats.t.sf(np.abs(zstat), dfs)
    p = 2 * tail if pvalues is None else np.asarray(pvalues, float)
    lower, upper = params - z * bse, params + z * bse
    coef = pd.DataFrame(
        {
            "term": [t.name for t in terms],
            "kind": [t.kind for t in terms],
            "label": [t.label for t in terms],
            "estimate": params,
            "se": bse,
            "z": zstat,
            "p": p,
            "lower": lower,
            "upper": upper,
            "significant": (lower > 0) | (upper < 0),
            "df": dfs,
        }
    )
    return FavoritismResult(
        method=method,
        variant=variant,
        coefficients=coef,
        level=level,
        se_type=se_type,
        n=len(prepared.frame) if n is None else n,
        n_excluded=dict(prepared.n_excluded),
        normalize=prepared.normalize,
        scales=prepared.scales.copy(),
        families=dict(prepared.families),
        notes=tuple(notes),
        warnings=prepared.warnings,
        scale_note=SCALE_NOTES[prepared.normalize] if scale_note is None else scale_note,
        cov=cov,
        rsquared=rsquared,
        term_n=term_ratings(prepared.frame, terms),
        term_prompts=term_prompts(prepared.frame, terms),
        df=df,
    )


# ---------------------------------------------------------------------------- fit


def fit_prepared(
    prepared: Prepared,
    *,
    se: SEType = "cluster",
    level: float = 0.9,
    intercept: Intercept = "judge",
    length_control: bool = False,
    variant: str = "main",
    method: str | None = None,
    cluster: str = "prompt_id",
) -> FavoritismResult:
    """Fit Eq. 1 on a :func:`prepare`-d table (see :func:`fit_favoritism`)."""
    _check_options(prepared.normalize, se, level)
    if se == "cluster" and cluster not in prepared.frame.columns:
        raise ConfigError(
            f"--cluster {cluster!r} is not a column of the ratings — use prompt_id (default) "
            f"or one of: {', '.join(c for c in ('task', 'dataset') if c in prepared.frame)}"
        )
    if intercept not in ("judge", "global"):
        raise ConfigError(f"unknown intercept {intercept!r} — use 'judge' or 'global'")
    frame = prepared.frame
    extra: dict[str, np.ndarray] = {}
    notes: list[str] = list(flat_dimensions(frame))
    if length_control:
        feat = length_feature(frame)
        ok = feat.notna().to_numpy()
        if not ok.any():
            raise EstimationError(
                "length control: no prompt has two completions of different lengths "
                "(in the same dimension), so the length feature is undefined everywhere"
            )
        if not ok.all():
            notes.append(
                f"length control: {int((~ok).sum()):,} rows without a length feature dropped "
                "(prompt with one completion or equal lengths)"
            )
            frame = frame[ok].reset_index(drop=True)
            prepared = replace(prepared, frame=frame)
        extra["length"] = feat[ok].to_numpy(float)
    try:
        y = frame["y"].to_numpy(float)
        if np.ptp(y) == 0:  # before the design, whose columns may then be empty too
            raise EstimationError(
                f"every rating is the same ({frame['rating'].iloc[0]:g}): the judge scores "
                "carry no information to estimate from — check the column read as the rating "
                "(--map FILE_COLUMN=rating)"
            )
        if np.ptp(y) <= EXACT * float(np.abs(y).max()):
            # fit_ols would read every residual as the rounding of an exact fit: standard
            # errors of 0, z of ±inf (1e15 + a 1–5 score) or every coefficient 0 (scores
            # of 1e-300 beside references of 1–5), each written as a result
            lo, hi = frame["rating"].min(), frame["rating"].max()
            raise EstimationError(
                f"the ratings differ by too little for their size to be told from rounding "
                f"(from {lo:.17g} to {hi:.17g}, {np.ptp(y):.3g} apart once scaled) — "
                "check that the rating column holds the scores, on the scale of the reference"
            )
        _check_magnitude(frame)
        X, terms, dnotes = design_matrix(frame, intercept=intercept, extra_by_judge=extra)
        groups = pd.factorize(frame[cluster].astype(str))[0] if se == "cluster" else None
        res = fit_ols(X, y, se=se, groups=groups)
        # cluster-robust: each term's t on the clusters holding its rows less one (1 at
        # least): a γ whose own ratings lie on 5 of 40 prompts rests on those 5, and t on
        # 39 df held it 0.80 of the time (90%), on 4 df 0.87–0.88
        held = None if groups is None else np.maximum(term_clusters(X, groups) - 1, 1)
    except EstimationError as exc:
        if not prepared.warnings:
            raise
        # a stray score (1e300 on a 1–5 scale) can leave columns with nothing in them
        raise EstimationError(f"{exc}; {'; '.join(prepared.warnings)}") from None
    by = "prompt" if cluster == "prompt_id" else cluster
    # cluster-robust: Student's t on the clusters less one (statsmodels' use_t), whose
    # normal quantile held the planted γ 0.82-0.85 of the time at 5-6 prompts; a term on
    # fewer clusters, on its own less one (``held``)
    df = None if groups is None else float(len(np.unique(groups)) - 1)
    se_label = (
        f"cluster-robust by {by} (CR1), Student t on {df:.0f} df (a term whose ratings lie "
        f"on fewer {by}s: on those less one)"
        if df is not None
        else se
    )
    bse = res.bse
    if res.rsquared < 1:
        # residuals are left, yet a term's error is at rounding level: its ratings are
        # fitted exactly by its own terms (a judge's one own rating beside two others),
        # so nothing measures its noise. Its variance is 0 but for rounding, read as no
        # standard error whichever sign the rounding took (−1e-33 was NaN, +6e-32 an
        # interval of zero width, 'significant')
        # at rounding level of the term's own scale (the scores' over its column's: a
        # slope's is theirs over the references'), not of 1: scores of 1e-8 read no SE
        column = np.asarray(abs(X).max(axis=0).todense(), float).ravel()
        size = float(np.abs(y).max()) / np.where(column > 0, column, 1.0)
        bse = np.where(bse <= EXACT * np.maximum(size, np.abs(res.params)), np.nan, bse)
    else:
        # every rating fitted exactly (12 ratings that follow their references without
        # noise): the standard errors read 0, each γ an interval of zero width,
        # "significant" at z = inf — nothing measured the noise
        bse = np.full(len(bse), np.nan)
        notes.append(
            "every rating is fitted exactly (R² = 1): no residual is left to estimate a "
            "standard error from, so no coefficient has an interval — add ratings (real "
            "ratings vary beyond what the references explain)"
        )
    out = make_result(
        terms,
        res.params,
        bse,
        level=level,
        method=method
        or "OLS of Eq. 1 (judge slopes, self and family terms, dimension effects)"
        + (" + judge-specific tanh length term" if length_control else ""),
        variant=variant,
        se_type=se_label,
        prepared=prepared,
        notes=[*dnotes, *notes],
        cov=res.cov,
        rsquared=res.rsquared,
        df=df,
        term_df=held,
    )
    # Wald interval with the quantile written as statsmodels' conf_int writes it
    q = quantile(1 - (1 - level) / 2, held)
    coef = out.coefficients
    coef["lower"], coef["upper"] = res.params - q * bse, res.params + q * bse
    coef["significant"] = (coef["lower"] > 0) | (coef["upper"] < 0)
    few = (w for t in out.term_prompts for w in out.few_prompts(t))
    return replace(out, warnings=(*out.warnings, *_few_clusters(groups, by)),
                   notes=(*out.notes, *_no_interval(coef, exact=res.rsquared >= 1),
                          *few))  # fmt: skip


def _few_clusters(groups: np.ndarray | None, by: str) -> tuple[str, ...]:
    """The warning of a cluster-robust fit on fewer than :data:`FEW_CLUSTERS` clusters,
    read with every coefficient (the audit's findings carry it, the command prints it);
    () otherwise."""
    if groups is None or (k := len(np.unique(groups))) >= FEW_CLUSTERS:
        return ()
    return (
        f"only {counted(k, by + 's')}: cluster-robust errors with so few clusters are "
        "unreliable — add prompts, or read the interval as rough",
    )


def without_se(coef: pd.DataFrame) -> list[str]:
    """The self and family terms of ``coef`` (a fit's coefficients) without a finite
    standard error, as the notes name them (``γ_j of claude-2.1``): not reported, and
    not subtracted by the correction (:mod:`recuse.mitigation.debias`)."""
    bad = coef[coef["kind"].isin(["self", "family"]) & ~np.isfinite(coef["se"].to_numpy(float))]
    symbol = {"self": "γ_j", "family": "λ_F"}
    return [f"{symbol[str(r['kind'])]} of {r['label']}" for _, r in bad.iterrows()]


def corrects_anything(coef: pd.DataFrame) -> bool:
    """Whether the correction (:mod:`recuse.mitigation.debias`) subtracts anything: a
    self or family term of ``coef`` (a fit's coefficients) with a finite standard error."""
    terms = coef[coef["kind"].isin(["self", "family"])]
    return bool(np.isfinite(terms["se"].to_numpy(float)).any())


def _no_interval(coef: pd.DataFrame, *, exact: bool = False) -> tuple[str, ...]:
    """A note per self or family term without a finite standard error: its estimate
    has no interval, and the audit reports it not estimated ("no finite estimate"); the
    command's table shows it as "—" for the same reason (it read +0.2000 nan +nan +nan).
    ``exact``: every rating was fitted exactly, the reason for all of them."""
    why = (
        "every rating fitted exactly, no residual to estimate it from"
        if exact
        else "the data cannot separate it from the fit's other terms"
    )
    return tuple(
        f"{term}: no finite standard error ({why}), so no interval: not estimated"
        for term in without_se(coef)
    )


def fit_favoritism(
    ratings: pd.DataFrame,
    families: Families,
    *,
    se: SEType = "cluster",
    level: float = 0.9,
    normalize: Normalize = "max",
    intercept: Intercept = "judge",
    length_control: bool = False,
    reference: str = "reference",
    cluster: str = "prompt_id",
    selves: Mapping[str, str] | None = None,
) -> FavoritismResult:
    """Estimate self-bias γ_j and family-bias λ_F with Eq. 1 (see the module docstring).

    ``ratings``: a ``ratings`` table; ``families``: the roster or an ``{id: family}``
    map covering every judge and model. ``se``: ``"cluster"`` (default: by
    ``prompt_id``, CR1 small-sample correction — ratings of one prompt are correlated,
    and heteroskedasticity-robust errors under-cover then), ``"HC0"`` (White, as the
    paper), ``"HC1"`` or ``"HC3"``; ``cluster`` names another column to cluster by
    (e.g. ``task``, where the data has one). ``level``: confidence of
    the Wald intervals. ``length_control`` adds the judge-specific
    ``tanh``-length term of Section 6.2. ``selves``: what counts as self
    (:func:`prepare`).

    >>> from recuse.simulate.ratings import simulate_ratings
    >>> sim = simulate_ratings(seed=1)
    >>> res = fit_favoritism(sim.ratings, sim.families)
    >>> bool(abs(res.params["self[j0]"] - sim.self_bias["j0"]) < 0.05)
    True
    """
    _check_options(normalize, se, level)
    prepared = prepare(ratings, families, normalize=normalize, reference=reference, selves=selves)
    return fit_prepared(
        prepared, se=se, level=level, intercept=intercept, length_control=length_control,
        cluster=cluster,
    )  # fmt: skip
