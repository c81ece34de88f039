"""The one-step bootstrap's Jacobian by index sums (``_contrast_sums``,
``_pair_laplacian``) against the dense products it replaced, which built a
``(patterns, models)`` and a ``(labelled pairs, models)`` contrast matrix for every judge
(at 200 models and 20,000 prompts: 16 s of a 61 s audit, and most of its memory).

The dense way is written out here as it was before (``E[p, ia] = +1``, ``E[p, ib] = −1``;
``J_ts = Aᵀ E``, ``J_ss = −E_lᵀ diag(w) E_l``, the strengths' gradient ``Eᵀ v``): each
judge's ``(J⁺)ᵀ`` and the statistics' per-row columns must equal it to 1e-12 on a
seeded table with a family term.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special

from recuse.metrics.competence import (
    CompetenceModel,
    _contrast_sums,
    _pair_laplacian,
    calibrated_parts,
)
from recuse.metrics.self_preference import favored_side
from recuse.metrics.verdicts import judge_codes
from recuse.simulate import PlantedBias, simulate_pairs


def _dense_contrasts(ia: np.ndarray, ib: np.ndarray, n_models: int) -> np.ndarray:
    e = np.zeros((len(ia), n_models))
    e[np.arange(len(ia)), ia] += 1.0
    e[np.arange(len(ia)), ib] -= 1.0
    return e


def test_index_sums_equal_the_dense_products() -> None:
    rng = np.random.default_rng(3)
    n_models, p, d = 7, 60, 4
    ia = rng.integers(0, n_models, p)
    ib = (ia + rng.integers(1, n_models, p)) % n_models  # never ia
    a = rng.normal(size=(p, d))
    w = rng.uniform(0.1, 2.0, p)
    e = _dense_contrasts(ia, ib, n_models)
    np.testing.assert_allclose(_contrast_sums(a, ia, ib, n_models), a.T @ e, rtol=0, atol=1e-12)
    dense = (e * w[:, None]).T @ e
    np.testing.assert_allclose(_pair_laplacian(w, ia, ib, n_models), dense, rtol=0, atol=1e-12)
    # a model in no pair: zero row and column, as the dense product gives
    assert not _contrast_sums(a, ia % 3, ib % 3 + 3, 8)[:, 7].any()


def _model() -> CompetenceModel:
    names = [f"m{i}" for i in range(8)]
    families = {m: f"f{i % 3}" for i, m in enumerate(names)}
    planted = {m: PlantedBias(self_preference=0.1) for m in names[:3]}
    pairs = simulate_pairs(
        judges=planted, models=names, families=families, n_prompts=300, seed=11
    ).pairs
    codes, labels = judge_codes(pairs, None)
    side = favored_side(pairs, relation="self")
    fam = favored_side(pairs, relation="family", families=families)
    model = calibrated_parts(
        pairs, codes, labels, side=side, family_side=fam, stratum=None, one_step=True
    )[4]
    assert model.one_step is not None and model.fam is not None and model.fixed is None
    return model


def _dense_pinv_t(m: CompetenceModel, t: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """``(J⁺)ᵀ`` as ``_OneStep._fitted`` computed it before, with the dense designs."""
    p_n, n_l, d = len(m.ia), len(m.la), len(theta)
    n_p, y_p, _ = m.placed(t)
    st = m.strengths(t)
    gap = st[m.ia] - st[m.ib]
    x = np.column_stack([gap, m.first, m.own, m.fam])
    mu = special.expit(x @ theta)
    kap = theta[0]
    j_tt = -(x * (n_p * mu * (1.0 - mu))[:, None]).T @ x
    e_p = _dense_contrasts(m.ia, m.ib, m.n_models)
    e_l = _dense_contrasts(m.la, m.lb, m.n_models)
    c_l = t[2 * p_n : 2 * p_n + n_l]
    q = special.expit(st[m.la] - st[m.lb])
    onehot = np.zeros((p_n, d))
    onehot[:, 0] = 1.0
    j_ts = (-(x * (n_p * mu * (1.0 - mu) * kap)[:, None]).T @ e_p
            + (onehot * (y_p - n_p * mu)[:, None]).T @ e_p)  # fmt: skip
    j_ss = -(e_l * (c_l * q * (1.0 - q))[:, None]).T @ e_l
    jac = np.block([[j_ss, np.zeros((m.n_models, d))], [j_ts, j_tt]])
    return np.linalg.pinv(jac).T


def test_one_step_jacobians_equal_the_dense_way() -> None:
    model = _model()
    one = model.one_step
    assert one is not None
    fitted = one._fitted()
    assert len(fitted) == 3  # the three judges that are models
    for code, (t, theta) in one.fits.items():
        old = _dense_pinv_t(model, t, theta)
        assert np.abs(old).max() > 1e-3  # a real comparison
        np.testing.assert_allclose(fitted[code].pinv_t, old, rtol=0, atol=1e-12)


@pytest.mark.parametrize("relation", ["self", "family"])
def test_one_step_columns_equal_the_dense_way(relation: str) -> None:
    """Every row's linearised numerator from the dense strengths' gradient ``Eᵀ v``."""
    model = _model()
    one = model.one_step
    assert one is not None
    got = one.columns(relation)  # type: ignore[arg-type]
    m = model
    sel = m.own if relation == "self" else m.fam
    e_p = _dense_contrasts(m.ia, m.ib, m.n_models)
    r = one.rows
    ri, pat, w, y, at, resid, p0_o, rows_l, lab, human, gl = one._orders()
    num = np.zeros(r.n)
    for code, f in one._fitted().items():
        dens = f.n_p * f.p0 * (1.0 - f.p0) * np.sign(sel)
        g_theta = np.array([np.sum(dens * f.gap), np.sum(dens * m.first), 0.0, 0.0])
        v = f.pinv_t @ np.concatenate([e_p.T @ (dens * f.kap), g_theta])
        direction = f.x @ v[-4:]
        mine = at // len(m.ia) == code
        s_p = sel[pat[mine]]
        picks = np.where(s_p > 0, y[mine], np.where(s_p < 0, 1.0 - y[mine], 0.0))
        pred = np.where(s_p > 0, p0_o[mine], np.where(s_p < 0, 1.0 - p0_o[mine], 0.0))
        term = w[mine] * (picks - pred + resid[mine] * direction[pat[mine]])
        num += np.bincount(ri[mine], weights=term, minlength=r.n)
        lm = gl == code
        la, lb = m.la[lab[lm]], m.lb[lab[lm]]
        q_l = special.expit(f.st[la] - f.st[lb])
        b_l = v[: m.n_models][la] - v[: m.n_models][lb]
        num += np.bincount(rows_l[lm], weights=(human[lm] - q_l) * b_l, minlength=r.n)
    assert np.abs(num).max() > 1e-3
    np.testing.assert_allclose(got[:, 0], num, rtol=0, atol=1e-12)


def test_full_sample_strengths_are_fitted_once_per_sums(monkeypatch: pytest.MonkeyPatch) -> None:
    """A judge's strengths were refitted five times over (its fit, the one-step Jacobian,
    the components, the warnings); now once per label sums, shared by the models
    ``replace`` derives, and the same numbers as a fresh fit."""
    from dataclasses import replace

    from recuse.metrics import competence

    model = _model()
    one = model.one_step
    assert one is not None
    t = next(iter(one.fits.values()))[0]
    fresh = replace(model, one_step=None)
    fresh._strengths_of.clear()  # shared with ``model``: start empty
    calls = [0]
    real = competence._pair_newton

    def counted(*a: object) -> np.ndarray:
        calls[0] += 1
        return real(*a)  # type: ignore[arg-type]

    monkeypatch.setattr(competence, "_pair_newton", counted)
    first = fresh.strengths(t)
    first[0] = 99.0  # the caller's copy: the kept fit is untouched
    again = replace(fresh, table_size=1).strengths(t)
    assert calls[0] == 1
    p, n_l = len(model.ia), len(model.la)
    direct = real(model.la, model.lb, model.n_models, t[2 * p : 2 * p + n_l],
                  t[2 * p + n_l : 2 * p + 2 * n_l])  # fmt: skip
    np.testing.assert_array_equal(again, direct)
    other = t.copy()
    other[2 * p + n_l] += 1.0  # other label sums: fitted anew
    fresh.strengths(other)
    assert calls[0] == 2


def test_kept_strengths_are_keyed_by_values_not_bytes() -> None:
    """Integer label sums and float sums whose bytes are the same (subnormal floats) are
    different inputs: the kept fit of one must not be returned for the other. Before,
    the key hashed the arrays' raw bytes without their dtype, so the second call got the
    first's strengths."""
    from recuse.metrics import competence

    la, lb = np.array([0, 1], dtype=np.intp), np.array([1, 2], dtype=np.intp)
    one = np.zeros(1)
    model = CompetenceModel(ia=np.array([0]), ib=np.array([1]), first=one, own=one,
                            la=la, lb=lb, n_models=3)  # fmt: skip
    s_int = np.array([0, 0, 4, 4, 3, 3, 0, 0, 0], dtype=np.int64)  # k = 2 + 4 + 3
    s_sub = s_int.view(np.float64)  # same bytes: counts 2e-323, sums 1.5e-323
    # a chain of two 3-of-4 wins: strengths log 3, 0, −log 3 (centred)
    fit = model.strengths(s_int)
    np.testing.assert_allclose(fit, [np.log(3), 0.0, -np.log(3)], rtol=0, atol=1e-9)
    with np.errstate(all="ignore"):  # subnormal counts: the fit overflows to NaN
        got = model.strengths(s_sub)
        want = competence._pair_newton(la, lb, 3, s_sub[2:4], s_sub[4:6])
    assert np.isnan(want).all()  # not the integer sums' fit
    np.testing.assert_array_equal(got, want)
    # the same values in another dtype are the same fit, and share it
    np.testing.assert_array_equal(model.strengths(s_int.astype(float)), model.strengths(s_int))


def test_kept_refits_are_keyed_by_values_not_bytes() -> None:
    """The same for the resampled refits (``_refits``, by ``fit`` on a stack of sums):
    integer sums and float sums with the same bytes got one refit."""
    la, lb = np.array([0, 1], dtype=np.intp), np.array([1, 2], dtype=np.intp)
    ia, ib = np.array([0, 1]), np.array([2, 2])
    kw = dict(ia=ia, ib=ib, first=np.array([1.0, -1.0]), own=np.array([1.0, 0.0]),
              la=la, lb=lb, n_models=3)  # fmt: skip
    model = CompetenceModel(**kw)  # type: ignore[arg-type]
    # weights 6, 6; picks of a 4, 3; labels 4, 4 counts, 3, 3 sums; own/other/family
    row = np.array([6, 6, 4, 3, 4, 4, 3, 3, 6, 6, 0], dtype=np.int64)
    s_int = np.stack([row, row])
    s_sub = s_int.view(np.float64)
    theta_int, _ = model.fit(s_int)
    assert np.isfinite(theta_int).all()
    with np.errstate(all="ignore"):
        got, _ = model.fit(s_sub)
        want, _ = CompetenceModel(**kw).fit(s_sub)  # type: ignore[arg-type]
    assert not np.array_equal(want, theta_int, equal_nan=True)
    np.testing.assert_array_equal(got, want)
