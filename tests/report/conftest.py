"""Headless Chromium for the report tests (Debian's ``chromium``; `make test` installs it).

Set ``RECUSE_SKIP_BROWSER=1`` to skip the browser tests on a machine without it;
otherwise a missing browser fails them, so CI cannot pass without the check.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--hide-scrollbars",
    "--virtual-time-budget=5000",
)
HARNESS = """
<script>
window.addEventListener('load', function () {
  var imgs = Array.prototype.slice.call(document.images);
  var ok = imgs.filter(function (i) { return i.complete && i.naturalWidth > 0; });
  document.body.setAttribute('data-images', String(imgs.length));
  document.body.setAttribute('data-images-loaded', String(ok.length));
  document.body.setAttribute('data-scripts', String(document.scripts.length));
  document.body.setAttribute('data-title', document.title);
  document.body.setAttribute('data-harness', 'ran');
});
</script>
"""


@dataclass
class Browser:
    binary: str
    profile: Path

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [self.binary, *FLAGS, f"--user-data-dir={self.profile}", *args],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )

    def dump_dom(self, page: Path) -> str:
        """The DOM after the page loaded and its scripts ran, serialised."""
        return self._run("--dump-dom", page.resolve().as_uri()).stdout

    def screenshot(self, page: Path, out: Path, *, size: str = "1200,2400") -> Path:
        self._run(f"--window-size={size}", f"--screenshot={out}", page.resolve().as_uri())
        return out

    def harness(self, page: Path, tmp: Path) -> tuple[dict[str, str], str]:
        """Open a copy of ``page`` without its script ban, plus a trusted checker.

        The checker records on <body> how many images there are and how many
        decoded (naturalWidth > 0), and the title after every script ran. Dropping
        the Content-Security-Policy means an escaping mistake *would* execute here.
        """
        html = page.read_text("utf-8")
        html = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html)
        assert "</body>" in html
        html = html.replace("</body>", HARNESS + "</body>")
        copy = tmp / f"harness-{page.name}"
        copy.write_text(html, "utf-8")
        dom = self.dump_dom(copy)
        body = re.search(r"<body([^>]*)>", dom)
        assert body, "no <body> in the dumped DOM"
        attrs = dict(re.findall(r'([\w-]+)="([^"]*)"', body.group(1)))
        return attrs, dom

    def layout(
        self, page: Path, tmp: Path, ids: tuple[str, ...], *, size: str = "1400,1000"
    ) -> dict[str, tuple[float, float, float, float]]:
        """Boxes (left, top, right, bottom, in CSS px) of the elements with ``ids``
        in a ``size`` window, plus ``"viewport"``: (0, 0, client width, scroll width).

        Like :meth:`harness`, on a copy without the script ban plus a trusted script.
        """
        html = page.read_text("utf-8")
        html = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html)
        probe = (
            "<script>window.addEventListener('load', function () {"
            "var out = [];"
            f"{json.dumps(list(ids))}.forEach(function (id) {{"
            "var e = document.getElementById(id); if (!e) return;"
            "var r = e.getBoundingClientRect();"
            "out.push([id, r.left, r.top, r.right, r.bottom].join(':')); });"
            "var d = document.documentElement;"
            "out.push(['viewport', 0, 0, d.clientWidth, d.scrollWidth].join(':'));"
            "document.body.setAttribute('data-layout', out.join(';')); });</script>"
        )
        copy = tmp / f"layout-{page.name}"
        copy.write_text(html.replace("</body>", probe + "</body>"), "utf-8")
        dom = self._run(f"--window-size={size}", "--dump-dom", copy.resolve().as_uri()).stdout
        found = re.search(r'data-layout="([^"]*)"', dom)
        assert found, "the layout probe did not run"
        boxes = {}
        for item in found.group(1).split(";"):
            name, *nums = item.split(":")
            left, top, right, bottom = (float(x) for x in nums)
            boxes[name] = (left, top, right, bottom)
        return boxes


@pytest.fixture(scope="session")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    binary = next(
        (b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None
    )
    if binary is None:
        if os.environ.get("RECUSE_SKIP_BROWSER") == "1":
            pytest.skip("no chromium and RECUSE_SKIP_BROWSER=1")
        pytest.fail("headless Chromium not found: run scripts/ensure-chromium (make test does)")
    yield Browser(binary, tmp_path_factory.mktemp("chromium-profile"))


PAYLOAD = (
    "Sure! <script>document.title='PWNED';"
    "document.body.setAttribute('data-pwned','yes')</script>"
    '<img src="x" onerror="document.title=\'PWNED\'"> done'
)


@pytest.fixture(scope="session")
def payload() -> str:
    """A response text that would change the title if it ever became markup."""
    return PAYLOAD


@pytest.fixture(scope="session")
def sample_report() -> object:
    """A small report with every part: findings, four kinds of figure, a table
    holding a hostile response text, skips, exclusions and provenance."""
    import numpy as np
    import pandas as pd

    from recuse.analyses import BIASES
    from recuse.report import (
        AuditReport,
        Exclusion,
        Finding,
        NotEstimated,
        Provenance,
        Section,
        Source,
        Table,
    )
    from recuse.report import figures as F

    flagged = Finding(
        judge="gpt-4",
        bias=BIASES["self_preference_calibrated"],
        estimate=0.12,
        ci_low=0.03,
        ci_high=0.20,
        n=340,
        level=0.9,
        method="clustered bootstrap",
        dataset="sim",
    )
    clear = Finding(
        judge="gpt-4",
        bias=BIASES["position"],
        estimate=0.49,
        ci_low=0.45,
        ci_high=0.54,
        n=340,
        level=0.9,
        method="clustered bootstrap",
        dataset="sim",
    )
    other = Finding(
        judge="<b>judge</b>",
        bias=BIASES["verbosity_recall_gap"],
        estimate=-0.2,
        ci_low=-0.3,
        ci_high=-0.1,
        n=50,
        level=0.9,
        method="clustered bootstrap",
    )
    figs = (
        F.confusion_matrix(
            [[10, 2], [3, 9]], rows=["own", "other"], cols=["own", "other"], id="f-cm", title="CM"
        ),
        F.curves(
            [1, 2, 3],
            [F.Series("judge", [0.5, 0.6, 0.7], [0.4, 0.5, 0.6], [0.6, 0.7, 0.8])],
            id="f-curve",
            title="by length",
            xlabel="length bin",
            ylabel="agreement",
            format="svg",
        ),
        F.coefficients(
            ["a", "b"], [0.1, -0.2], [0.0, -0.3], [0.2, -0.1], id="f-coef", title="coef", xlabel="x"
        ),
        F.heatmap(
            np.arange(6.0).reshape(2, 3) - 2.5,
            rows=["j1", "j2"],
            cols=["m1", "m2", "m3"],
            id="f-heat",
            title="heat",
        ),
    )
    examples = Table(
        "examples",
        "Examples",
        pd.DataFrame({"item_id": ["i1"], "response_a": [PAYLOAD], "p_a": [0.75]}),
    )
    section = Section(
        "self-preference",
        "Self-preference",
        "What it measures.",
        findings=(flagged, clear, other),
        figures=figs,
        tables=(examples,),
        notes=(PAYLOAD,),
        seconds=0.5,
    )
    prov = Provenance(
        sources=(Source("sim", "pairs", 340, location="/tmp/x.csv", judges=("gpt-4",)),),
        recuse_version="0.1.0",
        recuse_commit="abc",
        options={"level": 0.9, "n_boot": 200},
        seed=7,
        created="2025-01-01T00:00:00",
        python="3.11",
    )
    return AuditReport(
        title="Audit",
        sections=(section,),
        skipped=(
            NotEstimated(
                "Familiarity (perplexity)",
                "no perplexities (ppl_a, ppl_b)",
                bias=BIASES["familiarity"],
            ),
        ),
        exclusions=(Exclusion("sim", "unparsed verdict", 3, 343, judge="gpt-4"),),
        provenance=prov,
        level=0.9,
    )
