"""A statsmodels fit hides its own warnings (a spurious "perfect separation" for
fractional outcomes) and nothing else: a recuse note another thread issues while the
fit runs is told. The fits wrapped ``warnings.simplefilter("ignore")`` in a
``catch_warnings`` block, and the warnings filters are one per process (Python < 3.14):
every note of every thread was dropped while a fit ran.

Each test holds one fit inside its block (statsmodels' ``fit`` patched to wait there)
while another thread issues notes in a loop, then lets the real fit run while the loop
goes on; every note must be seen, and none of the fit's own warnings."""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest
from statsmodels.discrete.discrete_model import Logit
from statsmodels.genmod.generalized_linear_model import GLM
from statsmodels.tools.sm_exceptions import ModelWarning

from recuse.errors import ReaderNote
from recuse.metrics.bootstrap import Resampling
from recuse.metrics.bradley_terry import bradley_terry
from recuse.metrics.calibration import _fit_predict
from recuse.metrics.length_controlled import length_controlled_win_rates

WAIT = 30.0  # seconds: a bound on each wait, never reached when the code is right


def _platt() -> None:
    # perfectly separated labels: statsmodels warns (PerfectSeparationWarning)
    rng = np.random.default_rng(0)
    p = np.sort(rng.uniform(0.05, 0.95, 40))
    y = (p > 0.5).astype(float)
    _fit_predict("platt", p, y, p, "judge j")


def _bradley_terry() -> None:
    rng = np.random.default_rng(1)
    y = rng.uniform(0, 1, 60)  # fractional outcomes
    a = pd.Series(rng.choice(["x", "y", "z"], 60))
    b = a.map({"x": "y", "y": "z", "z": "x"})
    bradley_terry(y, a, b, pd.Series(range(60)), boot=Resampling(n_boot=50))


def _length_controlled() -> None:
    rng = np.random.default_rng(2)
    n = 60
    delta = rng.normal(0, 400, n)
    frame = pd.DataFrame(
        {
            "prompt_id": [f"i{k}" for k in range(n)],
            "model_a": "base",
            "model_b": "m",
            "judge": "j",
            "p_a": rng.uniform(0, 1, n),
            "len_a": 1000 + delta,
            "len_b": np.full(n, 1000.0),
        }
    )
    length_controlled_win_rates(frame, judge="j", boot=Resampling(n_boot=50))


@pytest.mark.parametrize(
    ("fit", "model"),
    [(_platt, Logit), (_bradley_terry, GLM), (_length_controlled, GLM)],
    ids=["platt", "bradley-terry", "length-controlled"],
)
def test_a_note_from_another_thread_is_not_lost_during_a_fit(
    fit: Callable[[], None], model: type, monkeypatch: pytest.MonkeyPatch
) -> None:
    inside, fitted = threading.Event(), threading.Event()
    let_go = threading.Event()
    real = model.fit

    def held(self: object, *args: object, **kwargs: object) -> object:
        inside.set()  # in the fit's warnings block
        let_go.wait(WAIT)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(model, "fit", held)
    sent: list[str] = []
    errors: list[BaseException] = []

    def notes() -> None:
        inside.wait(WAIT)
        k = 0
        while k < 200 or not fitted.is_set():  # 200 while held, then on through the fit
            if k == 200:
                let_go.set()
            sent.append(f"note {k}")
            warnings.warn(sent[-1], ReaderNote, stacklevel=1)
            k += 1
            if k > 200_000:
                break

    def fitting() -> None:
        try:
            fit()
        except BaseException as exc:  # told in the test's thread
            errors.append(exc)
        finally:
            fitted.set()
            inside.set()  # a fit that never got there does not hang the test

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        threads = [threading.Thread(target=notes), threading.Thread(target=fitting)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(4 * WAIT)
    assert not errors, errors
    assert inside.is_set() and fitted.is_set() and not any(t.is_alive() for t in threads)
    told = [str(w.message) for w in seen if issubclass(w.category, ReaderNote)]
    assert len(sent) >= 200 and told == sent  # every note, in order
    # and none of the fit's own (perfect separation, NumPy's overflow in its code)
    from_fit = [
        w for w in seen if issubclass(w.category, ModelWarning) or "statsmodels" in w.filename
    ]
    assert from_fit == []


def test_the_fits_warn_what_they_hide() -> None:
    """The check above is not empty: unhidden, the Platt fit does warn (perfect
    separation), the warning the block is there for."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        rng = np.random.default_rng(0)
        p = np.sort(rng.uniform(0.05, 0.95, 40))
        y = (p > 0.5).astype(float)
        x = np.column_stack([np.ones_like(p), np.log(p / (1 - p))])
        Logit(y, x).fit(disp=0, maxiter=200)
    assert any(issubclass(w.category, ModelWarning) for w in seen)
    assert any("separation" in str(w.message).lower() for w in seen)
