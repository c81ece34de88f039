"""The suite's own scheduling: ``make test`` runs ``pytest -n 2 --dist loadgroup``, and
the tests that must not run beside each other (a Ray cluster each, a two-minute shared
simulation) are marked ``xdist_group``. Where a pytest / pytest-xdist pair ignores the
marks (pytest 9.2 with xdist 3.8), they run on both workers at once with nothing said."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

GROUPED = """
import os
import pytest

pytestmark = pytest.mark.xdist_group("one")


@pytest.mark.parametrize("i", range(8))
def test_worker(i):
    with open(os.environ["WORKERS_FILE"], "a") as f:
        f.write(os.environ.get("PYTEST_XDIST_WORKER", "none") + "\\n")
"""


def test_an_xdist_group_runs_on_one_worker(tmp_path: Path) -> None:
    pytest.importorskip("xdist")
    (tmp_path / "test_grouped.py").write_text(GROUPED)
    workers = tmp_path / "workers.txt"
    env = os.environ | {"WORKERS_FILE": str(workers)}
    env.pop("PYTEST_XDIST_WORKER", None)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2",
         "--dist", "loadgroup", "-o", "addopts=", str(tmp_path / "test_grouped.py")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    ran = workers.read_text().split()
    assert len(ran) == 8
    assert len(set(ran)) == 1, f"one group ran on {sorted(set(ran))}: --dist loadgroup ignored it"
