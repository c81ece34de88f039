"""Applying certified thresholds to new items (``recuse certify apply``): the thresholds
file's checks (hand edits, kinds, scopes, the strata's models), the roster at apply,
and the agreement observed beside the guarantee."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from mitigation.conftest import ROSTER, calibrated, mixed_orders, table
from recuse.errors import ConfigError, InputError
from recuse.mitigation.selective import PERSON, Options, certify_judges, items_of
from recuse.mitigation.thresholds import DECISION_FIELDS, apply_thresholds, decide
from recuse.roster import Roster
from recuse.simulate.selective import simulate_selective


def test_a_threshold_certified_on_probabilities_is_not_applied_to_picks() -> None:
    """Certified on calibrated probabilities at 0.9 (the threshold keeps c ≥ ~0.8), the
    same judge's picks (one order: p_a 0 or 1) read confidence 1, and ``certify apply``
    kept every one of them: on 2,000 planted new items 75% agree (the mean of c), under
    the certified 0.9. A picks-only certificate applied to probabilities is the same
    error the other way. Both are refused, naming the file, the judge and both kinds."""
    rng = np.random.default_rng(11)
    cal = calibrated(1000, rng)
    result = certify_judges(cal, None, Options(target=0.9, delta=0.1, strata=False))
    (lam,) = result.judges[0].thresholds.values()
    assert lam is not None and 0.8 < lam < 0.95
    new = calibrated(2000, rng, start=10_000)
    picks = new.assign(p_a=(new["p_a"] > 0.5) * 1.0, p_a_second=np.nan)
    picks["p_a_first"] = picks["p_a"]
    # read on the certified scale, every pick passes the threshold, and agrees 75%
    read = items_of(picks, None, Options(strata=False), kind="probability")
    assert (read.conf >= lam).all() and 0.72 < read.agree.mean() < 0.78
    with pytest.raises(InputError) as err:
        apply_thresholds(picks.drop(columns="human"), result.thresholds(), None, file="t.json")
    said = str(err.value)
    assert "t.json certifies 'j' on probabilities (confidence: probability)" in said
    assert "this table's verdicts of 'j' are picks (0, 0.5 or 1)" in said
    # the probabilities themselves are decided (the kept agree ≥ 0.9 here)
    decided = apply_thresholds(new.drop(columns="human"), result.thresholds(), None)
    kept = decided["decision"] != PERSON
    right = decided["decision"].map({"a": 1.0, "b": 0.0}).to_numpy() == new["human"].to_numpy()
    assert kept.mean() > 0.2 and right[kept.to_numpy()].mean() >= 0.9
    # a certificate of picks (order consistency) refuses probabilities
    order = certify_judges(mixed_orders(1000, 0.0, rng), None,
                           Options(target=0.9, delta=0.1, strata=False))  # fmt: skip
    assert order.judges[0].confidence == "order consistency"
    with pytest.raises(InputError, match=r"certifies 'j' on picks .* verdicts of 'j' are probab"):
        apply_thresholds(new, order.thresholds(), None, file="t.json")


@pytest.mark.parametrize("kind", [None, "probabilities", 1, ["probability"]])
def test_a_thresholds_files_unknown_confidence_kind_is_refused(kind: object) -> None:
    """A hand-edited confidence (absent, misspelt) was read as a probability's."""
    spec = {"recuse_thresholds": 1, "target": 0.85, "delta": 0.1, "strata": False,
            "judges": [{"judge": "j", "confidence": kind, "thresholds": {"all": 0.6}}]}  # fmt: skip
    with pytest.raises(InputError, match=r"t\.json.*judges\[0\]\.confidence must be one of"):
        apply_thresholds(table(30), spec, None, file="t.json")


@pytest.mark.parametrize("scope", ["lines", None, 1])
def test_a_thresholds_files_unknown_self_scope_is_an_input_error(scope: object) -> None:
    """An edited thresholds file's self_scope other than snapshot or line: an error naming
    the file and the fix, not a roster's ConfigError without the file (nor, with no
    roster, read as a scope); a file without the key (written before it) is snapshot."""
    from recuse.mitigation.thresholds import read_thresholds

    spec: dict[str, Any] = {
        "recuse_thresholds": 1,
        "target": 0.85,
        "delta": 0.1,
        "strata": False,
        "judges": [{"judge": "gpt-4", "confidence": "probability", "thresholds": {"all": 0.6}}],
    }
    assert read_thresholds(spec, file="t.json")[0]["judge"] == "gpt-4"
    pairs = pd.DataFrame({"item_id": ["i"], "prompt_id": ["p"], "judge": ["gpt-4"], "p_a": [0.9],
                          "model_a": ["gpt-4"], "model_b": ["claude-v1"]})  # fmt: skip
    assert list(apply_thresholds(pairs, spec, Roster.load(), file="t.json")["decision"]) == ["a"]
    with pytest.raises(InputError, match=r"t\.json.*'self_scope' must be"):
        read_thresholds({**spec, "self_scope": scope}, file="t.json")
    with pytest.raises(InputError, match=r"t\.json.*'self_scope' must be"):
        apply_thresholds(pairs, {**spec, "self_scope": scope}, None, file="t.json")


def test_thresholds_certified_with_a_roster_are_not_applied_without_one() -> None:
    """Certified per own/family/other stratum (with a roster), applied without a roster
    (every item pooled as 'all'), every item found no threshold and went to a person,
    exit 0; certified without a roster ('all'), applied with one, the same. Both are
    refused; a stratum the calibration lacked still sends its items to a person."""
    rng = np.random.default_rng(5)
    cal = calibrated(600, rng).assign(model_a="gpt-4", model_b="claude-v1")
    cal.loc[::2, "model_a"] = "alpaca-13b"  # half own (gpt-4 judges gpt-4), half other
    cal = cal.assign(judge="gpt-4")
    with_roster = certify_judges(cal, ROSTER, Options(target=0.8, delta=0.1)).thresholds()
    assert set(with_roster["judges"][0]["thresholds"]) == {"own", "other"}
    new = cal.drop(columns="human")
    with pytest.raises(ConfigError, match="per own/family/other stratum, but these items are "
                       r"read without a roster \(all pooled\)"):  # fmt: skip
        apply_thresholds(new, with_roster, None, file="t.json")
    pooled = certify_judges(cal, None, Options(target=0.8, delta=0.1)).thresholds()
    assert set(pooled["judges"][0]["thresholds"]) == {"all"}
    with pytest.raises(ConfigError, match=r"pooled \(no roster's own/family/other strata\)"):
        apply_thresholds(new, pooled, ROSTER, file="t.json")
    # an item of a family stratum the calibration never saw goes to a person (a note
    # says the file does not know gpt-3.5-turbo: the roster put it in the family)
    fam = new.head(4).assign(model_a="gpt-3.5-turbo", model_b="alpaca-13b")
    with pytest.warns(UserWarning, match=r"saw no answers of gpt-3\.5-turbo \(family\)"):
        decided = apply_thresholds(fam, with_roster, ROSTER, file="t.json")
    assert (decided["decision"] == PERSON).all() and len(decided) == 4


def test_observed_agreement_of_applied_decisions_by_hand() -> None:
    """Five items: i0-i2 labelled a, i3 a tie, i4 unlabelled; the judge keeps i0 (a, right)
    and i1 (b, wrong), sends i2 and i3 to a person. Not-tied labelled: 3; kept 2; agree
    1; one tie left out."""
    from recuse.mitigation.thresholds import observed

    pairs = pd.DataFrame({"item_id": [f"i{k}" for k in range(5)],
                          "human": [1.0, 1.0, 1.0, 0.5, np.nan]})  # fmt: skip
    decided = pd.DataFrame({"item_id": [f"i{k}" for k in range(5)],
                            "decision": ["a", "b", PERSON, PERSON, "a"]})  # fmt: skip
    seen = observed(decided, pairs)
    assert seen is not None and (seen.n, seen.kept, seen.agree, seen.ties) == (3, 2, 1, 1)
    assert seen.agreement == 0.5
    assert observed(decided, pairs.assign(human=np.nan)) is None
    assert observed(decided, pairs.drop(columns="human")) is None


def test_observed_counts_tied_labels_as_certified_with_ties_counted() -> None:
    """Certified with ``human_ties="count"``, a tie label agrees only with a tie verdict:
    i0-i3 labelled (a, a, a, tie), i0 kept right, i1 kept wrong, i3 kept as a tie (right),
    i2 to a person. Labelled 4, kept 3, agree 2, none left out. (Before: the tie was left
    out, agreement 1/2, beside a guarantee that counts ties.)"""
    from recuse.mitigation.thresholds import observed

    pairs = pd.DataFrame({"item_id": [f"i{k}" for k in range(5)],
                          "human": [1.0, 1.0, 1.0, 0.5, np.nan]})  # fmt: skip
    decided = pd.DataFrame({"item_id": [f"i{k}" for k in range(5)],
                            "decision": ["a", "b", PERSON, "tie", "a"]})  # fmt: skip
    seen = observed(decided, pairs, "count")
    assert seen is not None and (seen.n, seen.kept, seen.agree, seen.ties) == (4, 3, 2, 0)
    left_out = observed(decided, pairs)
    assert left_out is not None and (left_out.n, left_out.kept, left_out.agree) == (3, 2, 1)


def _family_apart() -> Roster:
    """The built-in roster but gpt-3.5-turbo a family of its own (an outsider to gpt-4),
    as a recuse.toml or --roster file with another [[model]] entry makes it."""
    from recuse.roster import Entry

    roster = Roster.load()
    roster.add(Entry("gpt-3.5-turbo", "gpt-3.5", ROSTER.entries["gpt-3.5-turbo"].aliases))
    return roster


def test_a_roster_that_draws_the_strata_otherwise_is_refused_at_apply() -> None:
    """Planted: gpt-4 is as confident on gpt-3.5-turbo's answers (its family) as on an
    outsider's but right there only c - 0.3 of the time, so the family stratum cannot
    be certified at 0.8 and its items go to a person. Applied with a roster where
    gpt-3.5-turbo is an outsider, those items were read as 'other' and kept under the
    other stratum's threshold, without a word. The file now keeps whose answers each
    generator gave the judge, and apply refuses a roster that reads one otherwise."""
    sim = simulate_selective(1500, own_share=0.2, family_share=0.3, family_drop=0.3, seed=3)
    o = Options(target=0.8, delta=0.1)
    spec = certify_judges(sim.pairs, ROSTER, o).thresholds()
    (judge,) = spec["judges"]
    # each id, and each other spelling the built-in roster has for it (roster.toml)
    assert judge["models"] == {"alpaca-13b": "other", "claude-v1": "other",
                               "gpt-3.5-turbo": "family", "gpt-4": "own",
                               "llama-13b": "other", "vicuna-13b": "other",
                               "GPT-4": "own", "gpt4": "own", "alpaca_eval_gpt4": "own",
                               "ChatGPT": "family", "gpt35_turbo": "family",
                               "gpt-35-turbo": "family", "gpt3.5-turbo": "family",
                               "claude": "other", "claude-1": "other",
                               "anthropic.claude-v1": "other", "bedrock_claude": "other",
                               "vicuna-13b-v1.2": "other"}  # fmt: skip
    other = judge["thresholds"]["other"]
    assert judge["thresholds"]["family"] is None and other is not None
    new = sim.pairs.drop(columns="human")
    family = sim.stratum == "family"
    # as certified: the family items go to a person
    right = apply_thresholds(new, spec, ROSTER, file="t.json")
    assert (right["decision"][family] == PERSON).all()
    # the file without 'models' (an earlier recuse's), another roster: the planted
    # family items are 'other' and kept at the other stratum's threshold
    old = {**spec, "judges": [{k: v for k, v in judge.items() if k != "models"}]}
    old.pop("sha256")  # (nor the sha256 of its values: format 2)
    old["recuse_thresholds"] = 2
    wrong = apply_thresholds(new, old, _family_apart(), file="t.json")
    moved = wrong[family & (wrong["decision"] != PERSON)]
    assert len(moved) > 100 and set(moved["stratum"]) == {"other"}
    assert (moved["threshold"] == other).all() and (moved["confidence"] >= other).all()
    assert sim.q[moved.index].mean() < 0.65  # planted: 0.59, under a guaranteed 0.8
    with pytest.raises(ConfigError) as err:
        apply_thresholds(new, spec, _family_apart(), file="t.json")
    assert str(err.value) == (
        "t.json was certified with another roster than this one: the strata "
        "(own/family/other) of judge 'gpt-4' are drawn otherwise — gpt-3.5-turbo: its "
        "family's there, an outsider's here; their items would be kept under a threshold "
        "certified for another stratum — give the roster it was certified with (the same "
        "recuse.toml [[model]] entries and --roster file), or certify again with this one"
    )


def test_a_generator_the_certification_never_saw_is_read_by_the_roster_with_a_note() -> None:
    """gpt-4o's answers were not among the calibration items: the file cannot say whose
    they are, so the roster given decides (gpt-4o is gpt-4's family in the built-in one)
    and a note says so; the decisions are those of the roster's strata."""
    from recuse.mitigation.thresholds import StrataUnchecked

    sim = simulate_selective(1500, own_share=0.2, family_share=0.3, seed=3)
    spec = certify_judges(sim.pairs, ROSTER, Options(target=0.8, delta=0.1)).thresholds()
    new = sim.pairs.drop(columns="human")
    new["model_a"] = new["model_a"].replace({"gpt-3.5-turbo": "gpt-4o"})
    new["model_b"] = new["model_b"].replace({"gpt-3.5-turbo": "gpt-4o"})
    with pytest.warns(StrataUnchecked) as notes:
        decided = apply_thresholds(new, spec, ROSTER, file="t.json")
    (note,) = notes
    assert str(note.message) == (
        "t.json: the certification of 'gpt-4' saw no answers of gpt-4o (family): their "
        "items' strata are drawn by the roster given here, unchecked, and its guarantee "
        "assumes such items are exchangeable with the calibration items"
    )
    family = sim.stratum == "family"
    assert set(decided["stratum"][family & (decided["decision"] != PERSON)]) <= {"family"}
    lam = spec["judges"][0]["thresholds"]["family"]
    kept = decided[family & (decided["decision"] != PERSON)]
    assert lam is not None and (kept["threshold"] == lam).all() and len(kept) > 0


def test_a_roster_that_makes_a_certified_id_another_models_alias_is_refused() -> None:
    """Certified with a roster where acme-7b is its own model of gpt-4's family (the
    planted family stratum: right c - 0.3 of the time, not certified), applied with one
    where acme-7b is an alias of "acme", an outsider: the new items (read by that
    roster) name acme, which the file did not list, so the check passed them with a note
    that the certification "saw no answers of acme" and kept them under the other
    threshold (planted agreement about 0.59 under a certified 0.8). The file's ids are
    now read with the roster given: acme-7b is acme here, an outsider's, refused. An id
    hand-edited into another case reads as the same model."""
    from recuse.roster import Entry

    sim = simulate_selective(1500, own_share=0.2, family_share=0.3, family_drop=0.3, seed=3)
    acme = {"gpt-3.5-turbo": "acme-7b"}
    pairs = sim.pairs.assign(model_a=sim.pairs["model_a"].replace(acme),
                             model_b=sim.pairs["model_b"].replace(acme))  # fmt: skip
    there = Roster.load()
    there.add(Entry("acme-7b", "gpt"))
    spec = certify_judges(pairs, there, Options(target=0.8, delta=0.1)).thresholds()
    (judge,) = spec["judges"]
    assert judge["models"]["acme-7b"] == "family" and judge["thresholds"]["family"] is None
    here = Roster.load()
    here.add(Entry("acme", "acme", ("acme-7b",)))
    new = pairs.drop(columns="human")  # read by that roster, as load_input reads it
    for side in ("model_a", "model_b"):
        new[side] = new[side].replace({"acme-7b": "acme"})
    family = sim.stratum == "family"
    old = {**spec, "judges": [{k: v for k, v in judge.items() if k != "models"}]}
    old.pop("sha256")  # an earlier recuse's file: no sha256 of its values either
    old["recuse_thresholds"] = 2
    wrong = apply_thresholds(new, old, here, file="t.json")  # unchecked: what was kept
    moved = wrong[family & (wrong["decision"] != PERSON)]
    assert len(moved) > 100 and set(moved["stratum"]) == {"other"}
    assert sim.q[moved.index].mean() < 0.65
    with pytest.raises(ConfigError) as err:
        apply_thresholds(new, spec, here, file="t.json")
    assert ("of judge 'gpt-4' are drawn otherwise — acme-7b (read as acme here): its "
            "family's there, an outsider's here;") in str(err.value)  # fmt: skip
    # hand-edited into another case, the id is the same model to the roster: refused too
    models = {("ACME-7B " if m == "acme-7b" else m): v for m, v in judge["models"].items()}
    edited = {**spec, "judges": [{**judge, "models": models}]}
    edited.pop("sha256")  # (its checksum refuses any edit: the roster check is tested here)
    edited["recuse_thresholds"] = 2
    with pytest.raises(ConfigError, match=r"ACME-7B  \(read as acme here\): its family's"):
        apply_thresholds(new, edited, here, file="t.json")
    # with the roster it was certified with, the family items go to a person
    right = apply_thresholds(pairs.drop(columns="human"), spec, there, file="t.json")
    assert (right["decision"][family] == PERSON).all()


def test_a_roster_that_makes_a_certified_alias_a_model_of_its_own_is_refused() -> None:
    """Certified with a roster where acme-7b is an alias of gpt-4-0613 (gpt-4's family:
    the planted family stratum, not certified), applied with one where acme-7b is a
    model of its own, an outsider: the new items name acme-7b, which the file did not
    list (it kept ids only), so the check noted a generator the certification "saw no
    answers of" and kept its family items under the other threshold. The file now keeps
    each id's other spellings too: acme-7b, gpt-4-0613's family answers there, an
    outsider's here, is refused."""
    from recuse.roster import Entry

    sim = simulate_selective(1500, own_share=0.2, family_share=0.3, family_drop=0.3, seed=3)
    there = Roster.load()
    there.add(Entry("gpt-4-0613", "gpt", ("acme-7b",), line="gpt-4"))
    as_read = {"gpt-3.5-turbo": "gpt-4-0613"}  # acme-7b in the file, read by that roster
    pairs = sim.pairs.assign(model_a=sim.pairs["model_a"].replace(as_read),
                             model_b=sim.pairs["model_b"].replace(as_read))  # fmt: skip
    spec = certify_judges(pairs, there, Options(target=0.8, delta=0.1)).thresholds()
    (judge,) = spec["judges"]
    assert judge["models"]["gpt-4-0613"] == judge["models"]["acme-7b"] == "family"
    assert judge["thresholds"]["family"] is None
    here = Roster.load()
    here.add(Entry("acme-7b", "acme"))
    new = pairs.drop(columns="human").replace({"model_a": {"gpt-4-0613": "acme-7b"},
                                               "model_b": {"gpt-4-0613": "acme-7b"}})  # fmt: skip
    family = sim.stratum == "family"
    ids_only = {m: v for m, v in judge["models"].items() if m != "acme-7b"}
    old = {**spec, "judges": [{**judge, "models": ids_only}]}
    old.pop("sha256")  # an earlier recuse's file: no sha256 of its values either
    old["recuse_thresholds"] = 2
    with pytest.warns(UserWarning, match=r"saw no answers of acme-7b \(other\)"):
        wrong = apply_thresholds(new, old, here, file="t.json")
    moved = wrong[family & (wrong["decision"] != PERSON)]
    assert len(moved) > 100 and set(moved["stratum"]) == {"other"}
    assert sim.q[moved.index].mean() < 0.65  # planted: about 0.59, under a certified 0.8
    with pytest.raises(ConfigError, match=r"acme-7b: its family's there, an outsider's here"):
        apply_thresholds(new, spec, here, file="t.json")
    right = apply_thresholds(pairs.drop(columns="human"), spec, there, file="t.json")
    assert (right["decision"][family] == PERSON).all()


@pytest.mark.parametrize("models", [["gpt-4"], {"gpt-4": "self"}, {"gpt-4": 1}, {"": "own"}])
def test_a_thresholds_files_malformed_models_are_refused(models: object) -> None:
    from recuse.mitigation.thresholds import read_thresholds

    spec = certify_judges(simulate_selective(300, seed=1).pairs, ROSTER,
                          Options(target=0.8)).thresholds()  # fmt: skip
    spec["judges"][0]["models"] = models
    with pytest.raises(InputError, match=r"t\.json.*judges\[0\]\.models must map each "
                       "generator id to own, family or other"):  # fmt: skip
        read_thresholds(spec, file="t.json")


def test_a_key_the_thresholds_file_does_not_have_is_refused_naming_the_closest() -> None:
    """A hand edit's misspelt key was left unread, its default in its place: a file with
    ``"readng": {"swapped_frame": "presented"}`` decided verdicts read in the original
    frame, without a word."""
    from recuse.mitigation.thresholds import read_thresholds

    spec = certify_judges(simulate_selective(300, seed=1).pairs, ROSTER,
                          Options(target=0.8)).thresholds()  # fmt: skip
    assert read_thresholds(spec, file="t.json")[0]["judge"] == "gpt-4"
    typo = {**spec, "readng": {"swapped_frame": "presented"}}
    with pytest.raises(InputError, match=r"t\.json.*the file has the key 'readng' \(did you "
                       r"mean 'reading'\?\), which recuse does not read"):  # fmt: skip
        read_thresholds(typo, file="t.json")
    judge = {**spec["judges"][0], "threshold": {"other": 0.5}}
    with pytest.raises(InputError, match=r"judges\[0\] has the key 'threshold' \(did you mean "
                       r"'thresholds'\?\)"):  # fmt: skip
        read_thresholds({**spec, "judges": [judge]}, file="t.json")


def _position_noisy(n: int, seed: int) -> pd.DataFrame:
    """Planted: item ease s ~ U(0, 1); the judge is right with probability 0.55 + 0.4 s
    and states c = 0.5 + 0.45 s for its pick, moved by a position noise e ~ N(0, 0.25) in
    the first order and -e in the second (clipped to [0, 1]): the mean of the two orders
    is the pick's c, one order alone is c ± e."""
    rng = np.random.default_rng(seed)
    human = (rng.random(n) < 0.5).astype(float)
    s = rng.random(n)
    pick_a = np.where(rng.random(n) < 0.55 + 0.4 * s, human == 1, human == 0)
    p = np.where(pick_a, 0.5 + 0.45 * s, 0.5 - 0.45 * s)
    e = rng.normal(0, 0.25, n)
    return pd.DataFrame({
        "item_id": [f"i{seed}-{k}" for k in range(n)],
        "prompt_id": [f"p{seed}-{k // 2}" for k in range(n)],
        "model_a": "vicuna-13b", "model_b": "alpaca-13b", "human": human, "judge": "gpt-4",
        "p_a_first": np.clip(p + e, 0, 1), "p_a_second": np.clip(p - e, 0, 1),
        "p_a": (np.clip(p + e, 0, 1) + np.clip(p - e, 0, 1)) / 2,
    })  # fmt: skip


def test_probabilities_of_one_order_are_not_held_to_a_threshold_certified_on_two() -> None:
    """Certified at 0.80 on probabilities each the mean of two orders, then applied to new
    items judged in one order: one order's probability keeps the position noise the mean
    cancels, so 2,767 of 4,000 passed the threshold and agreed 73% of the time, under the
    certified 80% (83% for the same items judged in both orders), with nothing said. They
    go to a person now, with a note; items judged in both orders are decided as before."""
    from recuse.mitigation.thresholds import OneOrderNotCertified
    from recuse.tables import validate_pairs

    cert = certify_judges(
        validate_pairs(_position_noisy(1500, 1)), ROSTER, Options(target=0.8, delta=0.1)
    )
    spec = cert.thresholds()
    assert spec["judges"][0]["orders"] == "both"
    new = validate_pairs(_position_noisy(4000, 2))
    both = apply_thresholds(new, spec, ROSTER)
    kept = both["decision"] != PERSON
    truth = np.where(new["human"] == 1, "a", "b")
    assert kept.sum() == 2494 and (both["decision"][kept] == truth[kept]).mean() > 0.8
    one = new.assign(p_a_second=np.nan, p_a=new["p_a_first"])
    with pytest.warns(OneOrderNotCertified, match=r"4,000 of its items here .* \(2,767 of them"):
        out = apply_thresholds(validate_pairs(one), spec, ROSTER)
    assert (out["decision"] == PERSON).all()
    # before: the same thresholds read one order's probability as the mean's
    items = items_of(validate_pairs(one), ROSTER, Options())
    lam = spec["judges"][0]["thresholds"]["other"]
    passed = items.conf >= lam
    assert passed.sum() == 2767 and (items.verdict[passed] == items.human[passed]).mean() < 0.75


def test_one_order_items_an_earlier_judge_decided_are_not_counted_as_sent_to_a_person() -> None:
    """A cascade certified on two-order means (gpt-4, then claude-2), applied to items
    gpt-4 judged in both orders and claude-2 in one: gpt-4 decides 2,278 of the 4,000, and
    the note said all 4,000 of claude-2's one-order items go to a person, where 1,722 do.
    It counts the 1,722 now; the decisions are as before."""
    from recuse.mitigation.thresholds import OneOrderNotCertified
    from recuse.tables import validate_pairs

    cal = _position_noisy(1500, 1)
    cert = certify_judges(
        validate_pairs(pd.concat([cal, cal.assign(judge="claude-2")])), ROSTER,
        Options(target=0.8, delta=0.1), cascade=["gpt-4", "claude-2"],
    )  # fmt: skip
    spec = cert.thresholds()
    assert [j["orders"] for j in spec["judges"]] == ["both", "both"]
    new = _position_noisy(4000, 2)
    other = new.assign(judge="claude-2", p_a_second=np.nan, p_a=new["p_a_first"])
    with pytest.warns(OneOrderNotCertified, match=r"'claude-2' .* 1,722 of its items here"):
        out = apply_thresholds(validate_pairs(pd.concat([new, other])), spec, ROSTER)
    assert (out["judge"] == "gpt-4").sum() == 2278 and (out["decision"] == PERSON).sum() == 1722


def test_a_judge_named_in_another_case_applies_its_thresholds() -> None:
    """``recuse audit --judge GPT-4`` and ``recuse certify --judge GPT-4`` read the judge
    ``gpt-4`` of the data (Roster.judge_in), but ``certify apply --judge GPT-4`` refused
    it: "--judge 'GPT-4' is not in thresholds: claude-2, gpt-4". It decides with gpt-4's
    thresholds now, the decisions those of ``--judge gpt-4``; a name in no case of the
    file is still refused."""
    from recuse.tables import validate_pairs

    cal = _position_noisy(600, 1)
    cert = certify_judges(
        validate_pairs(pd.concat([cal, cal.assign(judge="claude-2")])), ROSTER,
        Options(target=0.8, delta=0.1),
    )  # fmt: skip
    spec = cert.thresholds()
    new = validate_pairs(_position_noisy(500, 2))
    exact = apply_thresholds(new, spec, ROSTER, judge="gpt-4")
    assert (exact["judge"] == "gpt-4").sum() > 0
    pd.testing.assert_frame_equal(apply_thresholds(new, spec, ROSTER, judge="GPT-4"), exact)
    with pytest.raises(ConfigError, match="--judge 'gpt-5' is not in thresholds"):
        apply_thresholds(new, spec, ROSTER, judge="gpt-5")


def test_a_large_table_is_decided_in_time_linear_in_its_items(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each stage found its undecided items by np.isin over object arrays, which compares
    every item with every other: 4.5 s a stage at 20,000 items, minutes at 100,000. Two
    stages over 20,000 items take well under a second by hash; the decisions are the
    certified ones (j1 agrees half the time and certifies nothing: j2 keeps every item
    at its confidence 0.9). Deterministic, not timed: an element-wise comparison of
    object arrays (np.isin's quadratic path) is refused while the table is decided."""
    real_isin = np.isin

    def no_object_isin(a: Any, b: Any, *args: Any, **kwargs: Any) -> Any:
        assert np.asarray(a).dtype != object, "np.isin over object arrays is quadratic"
        return real_isin(a, b, *args, **kwargs)

    monkeypatch.setattr(np, "isin", no_object_isin)
    spec = certify_judges(
        pd.concat([table(200, judge="j1", p=0.6, agree=100), table(200, judge="j2")]),
        None, Options(target=0.8),
        cascade=["j1", "j2"],
    ).thresholds()  # fmt: skip
    big = pd.concat([table(20_000, judge="j1", p=0.6), table(20_000, judge="j2")])
    decided = apply_thresholds(big, spec, None)
    assert (decided["judge"] == "j2").all() and (decided["decision"] == "a").all()


def _hand_file(**judges: tuple[float, float | None, float | None]) -> dict[str, Any]:
    """A thresholds file written by hand: a cascade of ``judges`` in order, each pooled
    (stratum all) with its threshold, certified coverage and share (None: left out, as a
    file of an earlier recuse)."""
    return {
        "recuse_thresholds": 1, "target": 0.8, "delta": 0.1, "cascade": len(judges) > 1,
        "strata": False, "judges": [
            {"judge": name, "confidence": "probability", "thresholds": {"all": lam},
             "recalibration": None, "orders": "both",
             **({} if cover is None else {"coverage": {"all": cover}}),
             **({} if share is None else {"share": share})}
            for name, (lam, cover, share) in judges.items()
        ],
    }  # fmt: skip


def _verdicts(judge: str, ids: list[int], conf: list[float]) -> pd.DataFrame:
    p = np.asarray(conf, dtype=float)
    return pd.DataFrame({
        "item_id": [f"i{k}" for k in ids], "prompt_id": [f"q{k}" for k in ids],
        "model_a": "m1", "model_b": "m2", "judge": judge,
        "p_a_first": p, "p_a_second": p, "p_a": p,
    })  # fmt: skip


def test_decide_counts_what_each_judge_kept_beside_its_certified_coverage() -> None:
    """By hand: judge A (threshold 0.8) sees items 0-9 at confidences 0.9, 0.85, 0.8 and
    seven under 0.8: it keeps 3 of 10. Judge B (0.7) has verdicts on items 3-7 only: the
    five A passed on reach it, at 0.75, 0.7, 0.65, 0.6, 0.55 (two b verdicts, 1 - p): it
    keeps 2 of 5; items 8 and 9 it never judged pass to a person. In all 5 of 10 decided,
    beside the file's 0.3 + 0.15 = 0.45."""
    pairs = pd.concat([
        _verdicts("A", list(range(10)), [0.9, 0.85, 0.8, 0.79, 0.7, 0.6, 0.6, 0.55, 0.5, 0.6]),
        _verdicts("B", [3, 4, 5, 6, 7], [0.75, 0.3, 0.65, 0.4, 0.55]),
    ])  # fmt: skip
    spec = _hand_file(A=(0.8, 0.25, 0.3), B=(0.7, 0.2, 0.15))
    got = decide(pairs, spec, None, file="t.json")
    assert [(k.judge, k.stratum, k.reached, k.kept, k.certified) for k in got.kept] == [
        ("A", "all", 10, 3, 0.25), ("B", "all", 5, 2, 0.2)]  # fmt: skip
    assert [k.share for k in got.kept] == [0.3, 0.4]
    assert got.share == 0.5 and got.certified_share == pytest.approx(0.45)
    assert got.decisions["judge"].tolist() == ["A"] * 3 + ["B", "B"] + [""] * 5
    # apply_thresholds is its decisions
    pd.testing.assert_frame_equal(apply_thresholds(pairs, spec, None), got.decisions)
    # a file of an earlier recuse (no coverage, no share) decides alike, saying neither
    old = decide(pairs, _hand_file(A=(0.8, None, None), B=(0.7, None, None)), None)
    pd.testing.assert_frame_equal(old.decisions, got.decisions)
    assert old.certified_share is None and {k.certified for k in old.kept} == {None}


def test_a_certified_file_keeps_each_judges_coverage_and_share() -> None:
    """The thresholds file carries what certify measured: per stratum the share of its
    labelled items the judge kept (n_kept / n_labelled), and the judge's share of all
    (a cascade stage's: of all the cascade's labelled items)."""
    pairs = simulate_selective(300, seed=2).pairs
    c = certify_judges(pairs, ROSTER, Options(target=0.8))
    (j,) = c.thresholds()["judges"]
    (cert,) = c.judges
    assert j["coverage"] == {s.stratum: s.n_kept / s.n_labelled for s in cert.strata}
    assert j["share"] == sum(s.n_kept for s in cert.strata) / sum(s.n_labelled for s in cert.strata)
    cas = certify_judges(pairs, ROSTER, Options(target=0.8), cascade=["gpt-4"])
    assert cas.cascade is not None
    (stage,) = cas.thresholds()["judges"]
    assert stage["share"] == pytest.approx(1 - cas.cascade.person_share)
    assert stage["share"] * 300 == pytest.approx(cas.cascade.stages[0].certificate.n_kept)


def test_items_no_judge_of_the_file_judged_are_counted_apart() -> None:
    """By hand: judge A (threshold 0.8) has verdicts on items 0-5 (confidences 0.9, 0.85,
    0.6, 0.55, 0.95, 0.7: it keeps 3), another judge C, not in the file, on items 6-9.
    Items 6-9 go to a person unread: 4 of the 10, counted apart (on judgebench, o1-mini
    certified alone, 270 of 620 items had no verdict of it and the share decided, 43.4%,
    read beside its certified 76.9% with nothing said of them: of the 350 it judged it
    decided 76.9%)."""
    pairs = pd.concat([
        _verdicts("A", list(range(6)), [0.9, 0.85, 0.6, 0.55, 0.95, 0.7]),
        _verdicts("C", [6, 7, 8, 9], [0.99, 0.99, 0.99, 0.99]),
    ])  # fmt: skip
    got = decide(pairs, _hand_file(A=(0.8, 0.5, 0.5)), None, file="t.json")
    assert got.unjudged == 4 and got.to_dict()["n_unjudged"] == 4
    assert got.decisions["judge"].tolist() == ["A", "A", "", "", "A", "", "", "", "", ""]
    assert got.share == 0.3
    assert "no judge of the file gave the item a verdict" in DECISION_FIELDS["decision"]
    # every item judged: none apart
    assert decide(pairs[pairs["judge"] == "A"], _hand_file(A=(0.8, 0.5, 0.5)), None).unjudged == 0


@pytest.mark.parametrize("human_ties", ["exclude", "count"])
def test_observed_matches_a_plain_count_on_a_seeded_table(human_ties: Any) -> None:
    """``observed`` finds the labelled decided items by a hash lookup (the str-dtype
    ``isin`` took 2.6 s at 480,000 items). Seeded table: 3,000 label rows over 2,000
    ids (repeated ids, the first labelled row counts; missing labels), decisions for
    1,500 of those ids and 300 ids without labels, shuffled. Checked against a plain
    Python count: first non-missing label per id (a > 0.5, b < 0.5, else tie), then
    n, kept, agree and ties over the decided items holding a label."""
    from recuse.mitigation.thresholds import observed

    rng = np.random.default_rng(7)
    ids = rng.integers(0, 2000, 3000)
    human = rng.choice([1.0, 0.0, 0.5, 0.8, np.nan], size=3000)
    pairs = pd.DataFrame({"item_id": [f"i{k}" for k in ids], "human": human})
    mine = [f"i{k}" for k in rng.permutation(2000)[:1500]] + [f"x{k}" for k in range(300)]
    rng.shuffle(mine)
    decision = rng.choice(["a", "b", "tie", PERSON], size=len(mine))
    decided = pd.DataFrame({"item_id": mine, "decision": decision})
    first: dict[str, str] = {}
    for k, h in zip(pairs["item_id"], human, strict=True):
        if not np.isnan(h) and k not in first:
            first[k] = "a" if h > 0.5 else "b" if h < 0.5 else "tie"
    n = kept = agree = ties = 0
    for k, d in zip(mine, decision, strict=True):
        if k not in first:
            continue
        if first[k] == "tie" and human_ties == "exclude":
            ties += 1
            continue
        n += 1
        kept += d != PERSON
        agree += d != PERSON and d == first[k]
    seen = observed(decided, pairs, human_ties)
    assert seen is not None and (seen.n, seen.kept, seen.agree, seen.ties) == (n, kept, agree, ties)
    assert n > 700 and 0 < agree < kept < n  # the table exercises every branch


def test_observed_a_missing_id_among_the_labels_shifts_no_label() -> None:
    """A labelled row without an item id (``None`` or NaN, possible through the Python
    API: the loaders refuse it) before i0 (a) and i1 (b): the judge says a for i0 and
    b for i1, both right, so labelled 2, kept 2, agree 2. (The hash lookup gave the
    missing id code -1 and took its label for i0's, i0's for i1's: agree 1.)"""
    from recuse.mitigation.thresholds import observed

    decided = pd.DataFrame({"item_id": ["i0", "i1"], "decision": ["a", "b"]})
    for missing in (None, np.nan):
        pairs = pd.DataFrame({"item_id": [missing, "i0", "i1"], "human": [0.5, 1.0, 0.0]})
        seen = observed(decided, pairs)
        assert seen is not None and (seen.n, seen.kept, seen.agree, seen.ties) == (2, 2, 2, 0)
