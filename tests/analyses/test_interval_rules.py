"""Each finding's ``interval_rule`` (report.json) names the rule its method's words say
made its interval, over every analysis of the planted audit (pairs with perplexities,
ratings, probes): the leaderboard's coefficients and the familiarity slopes are
percentile intervals of a cluster bootstrap, yet read null, the rule of an estimate
not from the bootstrap (a regression's Wald interval, a Clopper–Pearson share)."""

from __future__ import annotations

from analyses.conftest import Planted
from recuse.interval_rules import EXACT_BOUND
from recuse.report.model import Finding


def rule_in_words(f: Finding) -> str | None:
    """The rule :func:`recuse.metrics.estimate.to_results` and the analyses' own interval
    code write in a finding's method (its words, written before the field was): the
    exact bound's, the position rates' widening (:func:`moved_method`), the expanded BCa
    (:data:`EXPANDED_WORDS`), a percentile or BCa interval of a bootstrap, else none."""
    words = f.method
    if EXACT_BOUND in words:
        return "exact_bound"
    if "widened by Student's t" in words:
        return "widened"
    if "expanded for the prompts' number" in words:
        return "expanded"
    if "bootstrap" not in words:
        return None
    if "percentile interval" in words:
        return "percentile"
    return "bca" if "BCa interval" in words else "unknown"


def test_every_finding_carries_the_rule_its_method_names(planted: Planted) -> None:
    findings = planted.report.findings
    said = {(f.bias.key, f.interval_rule, rule_in_words(f)) for f in findings}
    wrong = sorted((k, r, w) for k, r, w in said if r != w)
    assert not wrong, "\n".join(map(str, wrong))
    rules = {r for _, r, _ in said}
    # the audit wrote each kind here: one test covers them all
    assert {"bca", "percentile", "expanded", None} <= rules, rules
    leaderboard = [f for f in findings if f.bias.key.startswith("bt_")]
    familiarity = [f for f in findings if f.bias.key == "familiarity"]
    assert leaderboard and familiarity
    assert {f.interval_rule for f in [*leaderboard, *familiarity]} == {"percentile"}
