"""The report opened in headless Chromium: it renders, figures decode, text stays text."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from recuse.report import AuditReport, write_report


def _write(report: AuditReport, tmp_path: Path) -> Path:
    return write_report(report, tmp_path / "out")["html"]


def test_page_renders_with_summary_and_sections(
    browser: Any, sample_report: AuditReport, tmp_path: Path
) -> None:
    page = _write(sample_report, tmp_path)
    dom = browser.dump_dom(page)
    assert "<title>Audit</title>" in dom
    assert 'id="summary"' in dom and 'id="provenance"' in dom
    assert (
        "picks its own answers more often than its competence predicts: +0.12 [0.03, 0.20], n=340"
        in dom
    )
    shot = browser.screenshot(page, tmp_path / "shot.png")
    import matplotlib.image as mpimg

    pixels = mpimg.imread(shot)[..., :3]
    ink = (pixels < 0.9).any(axis=2).mean()
    coloured = (pixels.max(axis=2) - pixels.min(axis=2) > 0.3).mean()
    assert ink > 0.02, "the page looks blank"
    assert coloured > 0.005, "no coloured pixels: figures or flags did not paint"


def test_figures_load(browser: Any, sample_report: AuditReport, tmp_path: Path) -> None:
    page = _write(sample_report, tmp_path)
    attrs, _ = browser.harness(page, tmp_path)
    assert attrs.get("data-harness") == "ran"
    assert attrs["data-images"] == "4"
    assert attrs["data-images-loaded"] == "4"


def test_script_in_response_is_text_and_never_runs(
    browser: Any, sample_report: AuditReport, tmp_path: Path
) -> None:
    page = _write(sample_report, tmp_path)
    # As shipped (with its script ban) and without the ban (harness): neither runs it.
    dom = browser.dump_dom(page)
    assert "PWNED" not in re.search(r"<title>(.*?)</title>", dom).group(1)  # type: ignore[union-attr]
    attrs, dom = browser.harness(page, tmp_path)
    assert attrs["data-harness"] == "ran"  # scripts do run in the harness page ...
    assert attrs["data-title"] == "Audit"  # ... but the payload did not
    assert "data-pwned" not in attrs
    assert attrs["data-scripts"] == "1"  # only the harness's own script element
    # The payload is shown as text: escaped markup in the serialised DOM.
    assert "&lt;script&gt;document.title='PWNED'" in dom
    assert dom.count("&lt;script&gt;document.title='PWNED'") == 2  # table cell + note


def test_harness_detects_a_running_script_and_a_broken_image(
    browser: Any, payload: str, tmp_path: Path
) -> None:
    """Negative control: the checks above can fail."""
    bad = tmp_path / "bad.html"
    bad.write_text(
        "<!DOCTYPE html><html><head><title>Audit</title></head><body>"
        f"<p>{payload}</p><img src='data:image/png;base64,AAAA'>"
        "</body></html>",
        "utf-8",
    )
    attrs, _ = browser.harness(bad, tmp_path)
    assert attrs["data-title"] == "PWNED"
    assert attrs.get("data-pwned") == "yes"
    assert int(attrs["data-images"]) == 2 and attrs["data-images-loaded"] == "0"


def test_blank_page_screenshot_is_detected(browser: Any, tmp_path: Path) -> None:
    blank = tmp_path / "blank.html"
    blank.write_text("<!DOCTYPE html><html><body></body></html>", "utf-8")
    import matplotlib.image as mpimg

    pixels = mpimg.imread(browser.screenshot(blank, tmp_path / "b.png"))[..., :3]
    assert float(np.mean((pixels < 0.9).any(axis=2))) < 0.001


def test_full_audit_report_in_the_browser(browser: Any, payload: str, tmp_path: Path) -> None:
    """An audit of simulated pairs whose responses carry a script: rendered, figures
    decoded, the script shown as text in the examples table and never run."""
    from recuse.data.inputs import Input
    from recuse.driver import AuditOptions, run_audit
    from recuse.report import Source
    from recuse.simulate.pairs import PlantedBias, simulate_pairs

    sim = simulate_pairs(
        judges={"gpt-4": PlantedBias(self_preference=0.3, accuracy=0.65)},
        models=("gpt-4", "claude-v1", "vicuna-13b"),
        n_prompts=120,
        pairs_per_prompt=2,
        texts=True,
        seed=4,
    )
    pairs = sim.pairs.copy()
    for col in ("response_a", "response_b"):
        pairs[col] = payload + " " + pairs[col].astype(str)
    inp = Input("sim", "pairs", pairs, Source("sim", "pairs", len(pairs), judges=("gpt-4",)))
    report = run_audit([inp], options=AuditOptions(n_boot=200))
    page = write_report(report, tmp_path / "audit")["html"]
    n_figures = sum(len(s.figures) for s in report.sections)
    assert n_figures >= 4
    attrs, dom = browser.harness(page, tmp_path)
    assert attrs["data-harness"] == "ran"
    assert attrs["data-images"] == attrs["data-images-loaded"] == str(n_figures)
    assert attrs["data-title"] == "recuse audit" and "data-pwned" not in attrs
    assert attrs["data-scripts"] == "1"
    assert "&lt;script&gt;document.title='PWNED'" in dom  # shown as text in the examples
