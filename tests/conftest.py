"""Shared fixtures: the real datasets live in ../shared/data next to the repository."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

# One BLAS thread per test process, unless the environment says otherwise: `make test`
# runs two workers on two cores, and OpenBLAS's threads (one per core in each worker)
# then wait on each other; test_bradley_terry's coverage test took 10-12 s so against
# 2.5-3.5 s on one thread. Set before numpy and scipy load their OpenBLAS (which read it
# then; subprocesses inherit it); a library loaded already is limited through threadpoolctl.
if "OPENBLAS_NUM_THREADS" not in os.environ:
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    if "numpy" in sys.modules:
        from threadpoolctl import threadpool_limits

        _ONE_BLAS_THREAD = threadpool_limits(limits=1, user_api="blas")

# Ctrl-C as at a terminal, whatever started the suite: a suite started with SIGINT
# ignored (a background job of a non-interactive shell, `make test &` in a script)
# inherits the ignore — Python installs its KeyboardInterrupt handler only where SIGINT
# is not ignored at start — and so do the programs the tests start, whose Ctrl-C tests
# (about 30) then saw nothing happen. A handler here is reset to the default in every
# child at exec, as an ignore is not.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("RECUSE_TEST_DATA", REPO.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Folder with the real public datasets (see ../shared/data/README.md)."""
    assert SHARED_DATA.is_dir(), f"real test data not found at {SHARED_DATA}"
    return SHARED_DATA


@pytest.fixture(autouse=True)
def _reports_match_the_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every report.json a test writes (library, CLI, examples) is validated against the
    JSON Schema shipped in the package before it is written."""
    import json

    import jsonschema

    from recuse.report import export

    validator = jsonschema.Draft202012Validator(export.schema())
    plain = export.to_json

    def checked(report: object) -> str:
        text = plain(report)  # type: ignore[arg-type]
        errors = sorted(validator.iter_errors(json.loads(text)), key=lambda e: list(e.path))
        assert not errors, "report.json breaks its schema: " + "; ".join(
            f"{'/'.join(map(str, e.path))}: {e.message}" for e in errors[:5]
        )
        return text

    monkeypatch.setattr(export, "to_json", checked)


@pytest.fixture(autouse=True)
def _hash_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Model-file hashes are remembered in a test folder, never in the user's cache."""
    folder = tmp_path_factory.getbasetemp() / "hash-cache"
    monkeypatch.setenv("RECUSE_HASH_CACHE", str(folder / "file-hashes.json"))


@pytest.fixture(scope="module")
def tied_table(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    """llmbar-mtbench's 800 pairs (4 judges, both orders, human labels 0 or 1), every
    fourth prompt's labels set to 0.5 (236 pairs) and the judge gpt-4 named gpt-4-0613:
    with --self-scope snapshot the answers of gpt-4 are its family's, with line its own
    (tests/cli/test_cli_doors.py, tests/analyses/test_skips_name_their_estimate.py)."""
    from recuse.data.inputs import load_input

    frame = load_input("llmbar-mtbench", table="pairs", data_dir=shared_data).frame
    keep = ["item_id", "prompt_id", "model_a", "model_b", "human", "judge"]
    frame = frame[[*keep, "p_a_first", "p_a_second", "len_a", "len_b"]].copy()
    frame["judge"] = frame["judge"].replace({"gpt-4": "gpt-4-0613"})
    tied = sorted(frame["prompt_id"].unique())[::4]
    frame.loc[frame["prompt_id"].isin(tied), "human"] = 0.5
    assert int((frame["human"] == 0.5).sum()) == 236
    path = tmp_path_factory.mktemp("tied") / "tied.csv"
    frame.to_csv(path, index=False)
    return path


#: ``stop_once(module, name, when)``: :func:`stop_once`'s patcher
StopOnce = Callable[[Any, str, Callable[..., bool]], list[str]]


@pytest.fixture
def stop_once(monkeypatch: pytest.MonkeyPatch) -> StopOnce:
    """A Ctrl-C at one chosen point: ``stop_once(module, name, when)`` makes
    ``module.name`` raise KeyboardInterrupt once, at the first call ``when`` accepts
    (its arguments), and returns a list that holds ``name`` once it has."""

    def patch(module: Any, name: str, when: Callable[..., bool]) -> list[str]:
        real = getattr(module, name)
        hit: list[str] = []

        def stopping(*args: Any, **kwargs: Any) -> Any:
            if not hit and when(*args, **kwargs):
                hit.append(name)
                raise KeyboardInterrupt
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, stopping)
        return hit

    return patch
