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
    (:data:`EXPANDED_WORDS`), a probe effect's padded ends (:func:`padded_method`), a
    percentile or BCa interval of a bootstrap, else none."""
    words = f.method
    if EXACT_BOUND in words:
        return "exact_bound"
    if "widened by Student's t" in words:
        return "widened"
    if "each end widened for the" in words and "move it" in words:  # padded (padded_method)
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
    # the leaderboard's percentile ends are expanded for the prompts (Hesterberg): its
    # findings said "percentile", the resamples' own interval, after they were
    assert {f.interval_rule for f in leaderboard} == {"expanded"}
    assert {f.interval_rule for f in familiarity} == {"percentile"}


def test_expanded_is_said_for_what_it_is_at_any_number_of_prompts(planted: Planted) -> None:
    """report.json's schema said "expanded" is the BCa interval "from fewer than 30
    prompts", but the expansion applies at every number of prompts G (its factor
    √(G/(G−1))·t_{G−1}(0.95)/z(0.95) fades, 1.015 at 100): the planted audit's expanded
    findings rest on 30 and more. The schema's words now say so."""
    import json
    import math

    from scipy.stats import norm, t

    from recuse.report.export import SCHEMA_FILE

    expanded = [f for f in planted.report.findings if f.interval_rule == "expanded"]
    assert expanded and max(f.clusters or 0 for f in expanded) >= 30

    def factor(g: int) -> float:
        return math.sqrt(g / (g - 1)) * float(t.ppf(0.95, g - 1)) / float(norm.ppf(0.95))

    assert (round(factor(15), 3), round(factor(100), 3)) == (1.108, 1.015)
    schema = json.loads(SCHEMA_FILE.read_text())
    (words,) = [
        v["description"]
        for v in _walk(schema)
        if isinstance(v, dict) and "exact_bound" in v.get("enum", ())
    ]
    assert "fewer than 30" not in words and "at every G" in words
    assert "1.108 times at 15 prompts, 1.015 at 100" in words


def _walk(node: object) -> list[object]:
    """Every dict and list inside ``node`` (a parsed JSON document), ``node`` first."""
    out = [node]
    children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
    for child in children:
        out.extend(_walk(child))
    return out
