"""Each example script's ``--help``, as a user reads it before an hour-long run: the
description is its docstring's first paragraph whole, and every option says what it is
and its default.

The scripts took their description from the docstring's first line, which stopped
mid-sentence ("Familiarity on real data: perplexity of MT-Bench answers under two small
judges, whether"), and ``--seed``, ``--data``, ``--work``, ``--n-boot``, ``--taus`` and
``--own-tokens`` had no help at all.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = ["familiarity_judgebench.py", "familiarity_mtbench.py", "probes_small_models.py"]


@pytest.mark.parametrize("script", SCRIPTS)
def test_help_gives_the_whole_first_paragraph_and_a_help_for_every_option(
    script: str, tmp_path: Path
) -> None:
    path = REPO / "examples" / script
    doc = ast.get_docstring(ast.parse(path.read_text("utf-8"))) or ""
    first = " ".join(doc.split("\n\n", 1)[0].split())
    data = tmp_path / "my data"
    env = {**os.environ, "COLUMNS": "1000", "PYTHONPATH": str(REPO / "src"),
           "RECUSE_DATA_DIR": str(data)}  # fmt: skip
    shown = subprocess.run(
        [sys.executable, str(path), "--help"], capture_output=True, text=True, cwd=tmp_path,
        env=env, check=True, timeout=120,
    ).stdout  # fmt: skip
    assert first.endswith(".") and first in " ".join(shown.split())
    # one block per option: its line and the help lines under it
    blocks = re.split(r"\n(?=  -)", shown.split("options:", 1)[1])
    options = {re.findall(r"--[a-z-]+", b)[0]: " ".join(b.split()) for b in blocks if "--" in b}
    assert len(options) >= 9
    assert [o for o, text in options.items() if o != "--help" and "(default: " not in text] == []
    assert [o for o, text in options.items() if text.count("(default") > 1] == []
    # the data folder is RECUSE_DATA_DIR's, as for the recuse command (it was always
    # ../shared/data beside the repository, which a worktree elsewhere does not have)
    assert f"(default: {data})" in options["--data"]
