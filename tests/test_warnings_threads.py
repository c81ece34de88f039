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
from pathlib import Path
from typing import Any

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


def _run_together(*targets: Callable[[], None]) -> list[threading.Thread]:
    """Each of ``targets`` in a thread of its own, all started, then each joined (a
    bounded wait: a test that hangs fails on the threads still alive)."""
    threads = [threading.Thread(target=t) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(4 * WAIT)
    return threads


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
        threads = _run_together(notes, fitting)
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


def _frame() -> pd.DataFrame:
    """A pairs table with a model 'NA' (read as missing: a note naming the table)."""
    return pd.DataFrame(
        {
            "item_id": ["i1", "i2", "i3"],
            "prompt_id": ["p1", "p2", "p3"],
            "model_a": ["NA", "gpt-4", "gpt-4"],
            "model_b": ["claude-v1"] * 3,
            "judge": ["gpt-4"] * 3,
            "p_a_first": ["A", "B", "A"],
            "p_a_second": ["B", "B", "A"],
        }
    )


@pytest.mark.parametrize("other_block", ["spans the read", "ends during the read"])
def test_a_dataframe_read_beside_another_threads_warnings_block(
    other_block: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A DataFrame's notes name it, not the temporary file it is read from, and no note
    is lost, while another thread's code (pandas', statsmodels' or the user's, none of
    which takes recuse's lock) opens and closes a ``catch_warnings`` block. The reader
    recorded its notes in a ``catch_warnings(record=True)`` block and told them again
    renamed: a block of another thread that opened inside it and closed after it put
    its recorder back for good (every later note of the process lost); one that opened
    before it and closed inside it took its recorder away (the note named the file
    /tmp/recuse-frames-.../dataframe.parquet)."""
    from recuse import api

    real = api.load_input
    reading, opened, read_done, closed = (threading.Event() for _ in range(4))
    spans = other_block == "spans the read"

    def held(*args: Any, **kwargs: Any) -> Any:
        reading.set()  # in the reader's block, if it has one
        if spans:
            opened.wait(WAIT)  # the other block opens in it ...
        else:
            closed.wait(WAIT)  # ... or closes in it
        return real(*args, **kwargs)

    monkeypatch.setattr(api, "load_input", held)

    def other() -> None:
        if spans:
            reading.wait(WAIT)
            with warnings.catch_warnings():
                opened.set()
                read_done.wait(WAIT)  # closes after the read
        else:
            with warnings.catch_warnings():
                opened.set()
                reading.wait(WAIT)
            closed.set()

    errors: list[BaseException] = []

    def read() -> None:
        try:
            if not spans:
                opened.wait(WAIT)
            api._frame_input(_frame(), 0, 1, tmp_path)
        except BaseException as exc:  # told in the test's thread
            errors.append(exc)
        finally:
            read_done.set()

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        threads = _run_together(other, read)
        warnings.warn("a note after the read", ReaderNote, stacklevel=1)
    assert not errors, errors
    assert not any(t.is_alive() for t in threads)
    told = [str(w.message) for w in seen if issubclass(w.category, ReaderNote)]
    assert len(told) == 2, told
    assert told[0].startswith("dataframe (the DataFrame given): read as missing: 'NA'")
    assert str(tmp_path) not in told[0]
    assert told[1] == "a note after the read"
