"""Bias: what a column header says about the number under it."""

from __future__ import annotations

from recuse.analyses.agreement import ACCURACY
from recuse.analyses.calibration import BRIER, BRIER_ISOTONIC, ECE, ECE_ISOTONIC, ECE_PLATT
from recuse.analyses.position import POSITION


def test_the_header_names_what_the_reference_value_is() -> None:
    """A bias's null is 'none' (no bias), a tested quality score's is chance, and an
    untested one's (ECE, Brier: 0 is their floor) is the perfect score. Before, the
    calibration columns read 'chance = 0', but a judge at chance has a Brier score of
    0.25 and 0 is perfect calibration."""
    assert POSITION.header.endswith("· no bias = 0.5")
    assert ACCURACY.header.endswith("· chance = 0.5")
    for b in (ECE, BRIER, ECE_ISOTONIC, BRIER_ISOTONIC, ECE_PLATT):
        assert not b.tested and b.header.endswith("· perfect = 0"), b.header
        assert b.null_name == "perfect" and b.null_text == "perfect = 0"
    assert POSITION.null_text == "no bias = 0.5" and ACCURACY.null_text == "chance = 0.5"


def test_the_header_and_the_terminal_table_say_the_no_bias_value_in_the_same_words() -> None:
    """The terminal's summary table wrote 'no bias = 0.5' (null_text) while the HTML
    matrix's headers, report.json's 'header' and the terminal's --verbose lines wrote
    'none = 0.5' for the same column."""
    for b in (POSITION, ACCURACY, ECE, BRIER):
        assert b.header.endswith(f" · {b.null_text}"), b.header
    assert "none" not in POSITION.header


def test_the_unit_in_a_header_does_not_repeat_the_name_beside_it() -> None:
    """The terminal's summary cell is "NAME (UNIT · null)": the ECE's read "ECE (ECE
    (probability) · perfect = 0)" and the Brier score's "Brier score (Brier score
    (squared probability) · ...)", the name where its unit should be."""
    from recuse.analyses import BIASES

    repeated = [
        f"{b.label} ({b.header})"
        for b in BIASES.values()
        if b.short_unit.lower().startswith(b.label.lower().split(" (")[0])
    ]
    assert repeated == []
    assert ECE.header == "probability gap, root mean square · perfect = 0"
