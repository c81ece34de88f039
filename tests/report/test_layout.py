"""The real demo report at a laptop's 1280 x 800 in headless Chromium: the page does not
scroll sideways, every bias column of the summary matrix is on screen with its unit and
no-bias value in the header, and a control (the same page with cells kept on one line,
as before) does scroll, so the check can fail."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from recuse.driver import AuditOptions, audit
from recuse.report import write_report

DEMO = ("llmbar-mtbench", "play-favorites", "hh-rlhf", "alpaca-eval")  # as `make demo`
# one worker runs the module: the demo audit is a module fixture, which pytest -n 2
# --dist loadgroup made on each worker that got one of the tests
pytestmark = pytest.mark.xdist_group("demo-report")


@pytest.fixture(scope="module")
def demo_page(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    report = audit(DEMO, data_dir=shared_data, options=AuditOptions(n_boot=100, robustness=()))
    assert len(report.summary()) >= 10 and len(report.matrix().columns) >= 6
    return write_report(report, tmp_path_factory.mktemp("demo"))["html"]


@pytest.mark.slow
def test_the_demo_report_fits_a_laptop_screen(
    browser: Any, demo_page: Path, tmp_path: Path
) -> None:
    html = demo_page.read_text("utf-8")
    biases = re.findall(r'<th data-bias="([^"]+)"', html)
    assert "position" in biases
    ids = ("summary-matrix", "flagged-verdicts")
    boxes = browser.layout(demo_page, tmp_path, ids, size="1280,800")
    _, _, width, scroll_width = boxes["viewport"]
    assert scroll_width <= width, f"the page scrolls sideways at 1280 px ({scroll_width} px)"
    assert boxes["summary-matrix"][2] <= width
    assert boxes["summary-matrix"][1] < 400  # the matrix starts on the first screen
    # every header carries the unit and the no-bias value, from the Bias objects
    heads = re.findall(r'<th data-bias="[^"]+"[^>]*>(.*?)</th>', html, flags=re.S)
    unit = r'class="unit">[^<]+ · (no bias|chance|perfect) = [0-9.]+<'
    assert all(re.search(unit, h) for h in heads)
    assert "share of win to first · no bias = 0.5" in html
    # control: cells and headers kept on one line (the old layout) scroll sideways
    old = html.replace("white-space: normal;", "white-space: nowrap;").replace(
        'class="unit">', 'class="unit" style="display:inline">'
    )
    control = tmp_path / "control.html"
    control.write_text(old, "utf-8")
    wide = browser.layout(control, tmp_path, ("summary-matrix",), size="1280,800")
    assert wide["viewport"][3] > wide["viewport"][2], "the control fits: the check cannot fail"


@pytest.mark.slow
def test_a_deep_data_directory_does_not_widen_the_page(
    browser: Any, demo_page: Path, tmp_path: Path, shared_data: Path
) -> None:
    """Run from a deep directory, the provenance table's data paths are one unbroken
    word each; before, at 1280 px the page scrolled sideways (found running CI from a
    long path). The control strips the wrapping rule and does scroll."""
    deep = "/" + "/".join(["a_rather_long_directory_name"] * 8)
    html = demo_page.read_text("utf-8").replace(str(shared_data), deep + "/shared/data")
    assert deep in html
    page = tmp_path / "deep.html"
    page.write_text(html, "utf-8")
    _, _, width, scroll_width = browser.layout(page, tmp_path, (), size="1280,800")["viewport"]
    assert scroll_width <= width, f"the page scrolls sideways at 1280 px ({scroll_width} px)"
    control = tmp_path / "control.html"
    control.write_text(html.replace("code { overflow-wrap: anywhere; }", ""), "utf-8")
    wide = browser.layout(control, tmp_path, (), size="1280,800")["viewport"]
    assert wide[3] > wide[2], "the control fits: the check cannot fail"
