"""`Analysis.supported`: what `recuse validate` calls supported is what the audit
estimates — the analysis's ``needs`` and the inputs its estimates need."""

from __future__ import annotations

import pandas as pd

from analyses.conftest import Planted
from recuse.analyses import REGISTRY
from recuse.analyses.base import Analysis
from recuse.cli.validate import supported_analyses
from recuse.roster import Roster

BY_ID: dict[str, Analysis] = {a.id: a for a in REGISTRY}


def _reasons(frame: pd.DataFrame, kind: str = "pairs") -> dict[str, str | None]:
    return dict(supported_analyses(frame, kind, Roster.builtin()))  # type: ignore[arg-type]


def test_the_planted_pairs_support_the_pairwise_biases(planted: Planted) -> None:
    reasons = _reasons(planted.pairs)
    for analysis in ("self-preference", "family-preference", "verbosity", "position"):
        assert reasons[analysis] is None, (analysis, reasons[analysis])


def test_no_labels_no_self_preference_verbosity(planted: Planted) -> None:
    """Without human labels the audit runs these analyses but estimates nothing, so
    validate says no (was: "yes" from needs_verdicts alone)."""
    reasons = _reasons(planted.pairs.assign(human=float("nan")))
    for analysis in ("self-preference", "family-preference", "verbosity"):
        assert "no row has both a judge verdict and a human label" in str(reasons[analysis])
    assert reasons["position"] is None  # position compares the judge's two orders only


def test_no_own_answers_no_self_preference(planted: Planted) -> None:
    pairs = planted.pairs
    judges = set(pairs["judge"].dropna())
    others = pairs[~pairs["model_a"].isin(judges) & ~pairs["model_b"].isin(judges)]
    assert len(others) > 0
    reasons = _reasons(others.reset_index(drop=True))
    assert "no labelled pair holds a judge's own answer" in str(reasons["self-preference"])


def test_no_texts_or_lengths_no_verbosity(planted: Planted) -> None:
    drop = [c for c in ("response_a", "response_b", "len_a", "len_b") if c in planted.pairs]
    assert drop
    reasons = _reasons(planted.pairs.drop(columns=drop))
    assert reasons["verbosity"] == (
        "no response texts or lengths (response_a/response_b or len_a/len_b)"
    )
    same = planted.pairs.drop(columns=[c for c in drop if c.startswith("response")])
    same = same.assign(len_a=10, len_b=10)
    assert "lengths known and different" in str(_reasons(same)["verbosity"])


def test_one_order_no_position(planted: Planted) -> None:
    one = planted.pairs.assign(p_a_second=float("nan"))
    assert "no pair judged in both orders" in str(_reasons(one)["position"])
    assert (
        BY_ID["position"].needs(one, Roster.builtin()) is None
    )  # the audit still runs it (not estimated)


def test_favoritism_needs_an_identified_term(planted: Planted) -> None:
    assert _reasons(planted.ratings, "ratings")["favoritism"] is None
    one_model = planted.ratings[planted.ratings["model"] == "j0"]
    reason = _reasons(one_model, "ratings")["favoritism"]
    assert "neither self- nor family bias is identified" in str(reason)


def test_no_judge_and_no_labels_is_not_called_human_labels_only(planted: Planted) -> None:
    """A label-free pairs file without a judge was described as "(human labels only)"."""
    bare = planted.pairs.drop(columns=["judge"]).assign(human=float("nan"))
    reason = str(_reasons(bare)["position"])
    assert "no judge verdicts" in reason and "no human labels either" in reason
    assert "human labels only" in str(_reasons(planted.pairs.drop(columns=["judge"]))["position"])


def test_validate_and_the_audit_agree_with_a_roster_object() -> None:
    """Family preference known only through a roster object: ``recuse.audit(df,
    roster=r)`` estimates it, and ``supported`` with the same roster says it can (before,
    ``supported`` loaded the built-in roster itself and said it could not)."""
    import recuse
    from recuse.roster import Entry
    from recuse.simulate import PlantedBias, simulate_pairs

    models = ("acme-judge", "acme-small", "zeta-1", "omega-2")
    sim = simulate_pairs(
        judges={"acme-judge": PlantedBias(family_preference=0.2)}, models=models,
        families={"acme-judge": "acme", "acme-small": "acme", "zeta-1": "zeta",
                  "omega-2": "omega"}, n_prompts=120, seed=6,
    )  # fmt: skip
    r = Roster.builtin()
    for m, fam in (
        ("acme-judge", "acme"),
        ("acme-small", "acme"),
        ("zeta-1", "z"),
        ("omega-2", "o"),
    ):
        r.add(Entry(m, fam))
    with_r = dict(supported_analyses(sim.pairs, "pairs", r))["family-preference"]
    without = dict(supported_analyses(sim.pairs, "pairs", Roster.builtin()))["family-preference"]
    assert with_r is None and "family" in str(without)
    found = recuse.audit(sim.pairs, roster=r, only=["family-preference"], n_boot=200).findings
    eo = found[found["bias"] == "family_preference_eo"]
    assert len(eo) == 1 and eo["estimate"].notna().all()
