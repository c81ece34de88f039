"""Tables shared by the favoritism tests of the fit, the command and the audit."""

from __future__ import annotations

import pandas as pd


def exact_selves() -> pd.DataFrame:
    """Eleven ratings (one dimension): gpt-4o and claude-2.1 each rate their own model
    once, so each γ fits its one own rating exactly (no standard error but for
    rounding), while x-judge, which never rates itself, leaves residuals in the fit."""
    rows = [("p1", "gpt-4o", "gpt-4o", 5, 4), ("p1", "claude-2.1", "gpt-4o", 4, 4),
            ("p2", "claude-2.1", "gpt-4o", 2, 3), ("p1", "claude-2.1", "claude-2.1", 5, 4),
            ("p1", "gpt-4o", "claude-2.1", 3, 4), ("p2", "gpt-4o", "claude-2.1", 4, 3),
            ("p1", "gpt-4o", "x-judge", 3, 4), ("p2", "gpt-4o", "x-judge", 2, 3),
            ("p1", "claude-2.1", "x-judge", 5, 4), ("p2", "claude-2.1", "x-judge", 3, 3),
            ("p3", "claude-2.1", "x-judge", 1, 2)]  # fmt: skip
    frame = pd.DataFrame(rows, columns=["prompt_id", "model", "judge", "rating", "reference"])
    return frame.assign(dimension="quality")


def seven_ratings() -> pd.DataFrame:
    """Seven ratings on two prompts (one dimension): claude-2.1's γ has no finite
    standard error; gpt-4o's mean score, (5 + 3 + 4 + 4) / 4, equals claude-2.1's,
    (4 + 5 + 3) / 3, though summed in floats they may differ in the last digit."""
    rows = [("p1", "gpt-4o", "gpt-4o", 5, 4), ("p1", "claude-2.1", "gpt-4o", 3, 4),
            ("p2", "gpt-4o", "gpt-4o", 4, 3), ("p2", "claude-2.1", "gpt-4o", 4, 4),
            ("p1", "gpt-4o", "claude-2.1", 4, 4), ("p1", "claude-2.1", "claude-2.1", 5, 4),
            ("p2", "gpt-4o", "claude-2.1", 3, 3)]  # fmt: skip
    frame = pd.DataFrame(rows, columns=["prompt_id", "model", "judge", "rating", "reference"])
    return frame.assign(dimension="quality")
