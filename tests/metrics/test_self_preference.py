"""Self and family preference: the paper's worked example and hand-computed tables."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recuse.errors import ConfigError, EstimationError, InputError
from recuse.metrics import confusion_matrix, family_preference, self_preference
from recuse.metrics.bootstrap import Resampling
from recuse.metrics.self_preference import ConfusionMatrix, check_families, favored_side
from recuse.roster import Roster
from recuse.tables import validate_pairs

NAN = math.nan
FAST = {"boot": Resampling(n_boot=200), "min_n": 4}


def own_rows(
    spec: list[tuple[str, float, float, float]], *, judge: str = "gpt-4", opp: str = "claude-v1"
) -> list[dict[str, object]]:
    """Rows given in the judge's frame: (own side, human P(own), P_first(own), P_second(own))."""
    rows = []
    for side, h_own, pf, ps in spec:
        a_own = side == "a"
        rows.append(
            {
                "model_a": judge if a_own else opp,
                "model_b": opp if a_own else judge,
                "human": h_own if a_own else 1 - h_own,
                "judge": judge,
                "p_a_first": pf if a_own else 1 - pf,
                "p_a_second": ps if a_own else 1 - ps,
            }
        )
    return rows


def table(rows: list[dict[str, object]]) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    df.insert(0, "item_id", [f"i{i}" for i in range(len(df))])
    df.insert(1, "prompt_id", [f"p{i}" for i in range(len(df))])
    df["p_a"] = NAN
    return validate_pairs(df)


# human prefers own | human prefers other | human tie; order-averaged P(own) in the comment
HAND = [
    *own_rows(
        [
            ("a", 1, 1, 1),  # 1
            ("b", 1, 1, NAN),  # 1, single order
            ("a", 1, 1, 0),  # 0.5, orders disagree
            ("b", 1, 0.9, 0.7),  # 0.8
            ("a", 1, 0, 0),  # 0
            ("a", 0, 0, 0),  # 0
            ("b", 0, 0, 1),  # 0.5
            ("a", 0, 1, NAN),  # 1, single order
            ("b", 0, 0.6, 0.6),  # 0.6
            ("a", 0, 0, 0),  # 0
            ("a", 0.5, 1, 1),  # tie, 1
            ("b", 0.5, 0, 0),  # tie, 0
            ("a", 1, NAN, NAN),  # unparsed in both orders: left out
        ]
    ),
    # pairs without exactly one own response and a known opponent: left out
    *(
        {"model_a": a, "model_b": b, "human": 1, "judge": "gpt-4", "p_a_first": 1, "p_a_second": 1}
        for a, b in (("claude-v1", "vicuna-13b"), ("gpt-4", "gpt-4"), ("gpt-4", None))
    ),
]


def test_figure_2_worked_example() -> None:
    m = ConfusionMatrix(own_own=1852, own_other=108, other_own=160, other_other=118)
    assert m.recall_own == pytest.approx(0.945, abs=5e-4)
    assert m.recall_other == pytest.approx(0.425, abs=1e-3)  # 118/278 = 0.4245
    assert m.bias == pytest.approx(0.520, abs=5e-4)
    assert m.n == 2238
    assert m.to_frame().loc["own", "own"] == 1852


def test_figure_2_as_a_pairs_table() -> None:
    """A table whose cells are Figure 2's counts gives the same matrix and EO bias."""
    rng = np.random.default_rng(0)
    cells = [((1, 1), 1852), ((1, 0), 108), ((0, 1), 160), ((0, 0), 118)]
    spec = []
    for (human_own, judge_own), count in cells:
        for side in rng.choice(["a", "b"], size=count):
            spec.append((str(side), float(human_own), float(judge_own), float(judge_own)))
    t = table(own_rows(spec, opp="vicuna-13b"))
    m = confusion_matrix(t, judge="gpt-4")
    assert (m.own_own, m.own_other, m.other_own, m.other_other) == (1852, 108, 160, 118)
    r = self_preference(t, verdict="pick", boot=Resampling(n_boot=200))
    assert r.estimate == pytest.approx(1852 / 1960 - 118 / 278, abs=1e-12)
    assert r.estimate == pytest.approx(m.bias, abs=1e-12)
    assert r.n == 2238 and r.n_clusters == 2238
    assert r.counts == {
        "pairs where the human prefers the judge's own response": 1960,
        "pairs where the human prefers the other response": 278,
    }
    assert r.ci_low < r.estimate < r.ci_high
    dp = self_preference(t, kind="dp", boot=Resampling(n_boot=200))
    # DP as a difference: the judge picks its own in (1852 + 160) of 2238 pairs, the
    # humans prefer it in 1960
    assert dp.estimate == pytest.approx((1852 + 160) / 2238 - 1960 / 2238, abs=1e-12)
    assert dp.components["human_prefers_s"] == pytest.approx(1960 / 2238, abs=1e-12)
    assert 2 * dp.components["judge_prefers_s"] - 1 == pytest.approx(
        2 * (1852 + 160) / 2238 - 1, abs=1e-12
    )  # Wataoka's Eq. 4 from the component


@pytest.mark.parametrize(
    ("options", "recall_own", "recall_other"),
    [
        ({}, 3.3 / 5, 2.9 / 5),  # probabilities, human ties dropped
        ({"verdict": "pick"}, 3.5 / 5, 2.5 / 5),  # judge tie (0.5) counts half
        ({"verdict": "pick", "judge_ties": "drop"}, 3 / 4, 2 / 4),
        ({"human_ties": "split"}, (3.3 + 0.5) / 6, (2.9 + 0.5) / 6),  # ties half in each group
    ],
)
def test_equal_opportunity_by_hand(
    options: dict[str, str], recall_own: float, recall_other: float
) -> None:
    t = table(HAND)
    r = self_preference(t, **options, **FAST)
    assert r.components["recall_human_prefers_s"] == pytest.approx(recall_own, abs=1e-12)
    assert r.components["recall_human_prefers_other"] == pytest.approx(recall_other, abs=1e-12)
    assert r.estimate == pytest.approx(recall_own - recall_other, abs=1e-12)
    assert r.metric == "self_preference_eo" and r.judge == "gpt-4" and r.level == 0.9
    cm = confusion_matrix(t, **{"verdict": "pick", **options})
    if options.get("verdict") == "pick":
        assert cm.bias == pytest.approx(r.estimate, abs=1e-12)


def test_counts_and_exclusions() -> None:
    r = self_preference(table(HAND), **FAST)
    assert r.n == 10  # 5 + 5 decided pairs; ties, the unparsed row and 3 non-own rows out
    assert list(r.counts.values()) == [5, 5]
    split = self_preference(table(HAND), human_ties="split", **FAST)
    assert split.n == 12
    cm = confusion_matrix(table(HAND))
    assert cm.n_excluded == 3  # two human ties + the unparsed row
    assert cm.own_own == 3.5 and cm.own_other == 1.5  # picks 1, 1, 0.5, 1, 0


def test_demographic_parity_by_hand() -> None:
    r = self_preference(table(HAND), kind="dp", **FAST)
    p_own = (1 + 1 + 0.5 + 0.8 + 0 + 0 + 0.5 + 1 + 0.6 + 0 + 1 + 0) / 12
    # humans prefer the judge's own answer in 6 of the 12 pairs (ties count half)
    assert r.estimate == pytest.approx(p_own - 6 / 12, abs=1e-12)
    assert r.n == 12
    assert r.components["judge_prefers_s"] == pytest.approx(p_own, abs=1e-12)
    assert r.components["human_prefers_s"] == pytest.approx(6 / 12, abs=1e-12)
    picks = self_preference(table(HAND), kind="dp", verdict="pick", **FAST)
    assert picks.estimate == pytest.approx((1 + 1 + 0.5 + 1 + 0.5 + 1 + 1 + 1) / 12 - 6 / 12)


def test_favored_side_cases() -> None:
    t = table(HAND)
    side = favored_side(t)
    assert side.tolist()[:13] == [1, -1, 1, -1, 1, 1, -1, 1, -1, 1, 1, -1, 1]
    assert side.tolist()[13:] == [0, 0, 0]


# (model_a, model_b, human, p_a_first, p_a_second), judge gpt-4 (family gpt)
FAMILY_SPEC = [
    # a family member (gpt-3.5-turbo) against an outsider: these enter
    ("gpt-3.5-turbo", "claude-v1", 1, 1, 1),
    ("claude-v1", "gpt-3.5-turbo", 0, 0, 1),
    ("gpt-3.5-turbo", "vicuna-13b", 1, 0, 0),
    ("vicuna-13b", "gpt-3.5-turbo", 0, 0, 0),
    ("gpt-3.5-turbo", "claude-v1", 0, 1, 1),
    ("claude-v1", "gpt-3.5-turbo", 1, 0, 0),
    ("gpt-3.5-turbo", "alpaca-13b", 0, 0, 0),
    ("llama-13b", "gpt-3.5-turbo", 1, 1, 0),
    ("gpt-3.5-turbo", "claude-v1", 1, 1, NAN),
    # left out: both from the family; the judge's own response present
    ("gpt-3.5-turbo", "text-davinci-003", 1, 1, 1),
    ("gpt-4", "gpt-3.5-turbo", 1, 1, 1),
    ("gpt-4", "claude-v1", 1, 1, 1),
]
FAMILY_ROWS = [
    dict(zip(("model_a", "model_b", "human", "p_a_first", "p_a_second"), r, strict=True))
    for r in FAMILY_SPEC
]


def test_family_preference_by_hand() -> None:
    t = table([{**r, "judge": "gpt-4"} for r in FAMILY_ROWS])
    # per family-member response: (human P(fam), P(fam)) over the 9 entering rows
    # human prefers fam: rows 1, 2, 3, 4, 9 -> P(fam) = 1, 0.5, 0, 1, 1
    # human prefers other: rows 5, 6, 7, 8 -> P(fam) = 1, 1, 0, 0.5; recall = 0, 0, 1, 0.5
    r = family_preference(t, Roster.builtin(), **FAST)
    assert r.estimate == pytest.approx(3.5 / 5 - 1.5 / 4, abs=1e-12)
    assert r.n == 9
    assert r.metric == "family_preference_eo"
    dp = family_preference(t, Roster.builtin(), kind="dp", **FAST)
    # the judge picks the family member's answer 6 of 9 times, the humans prefer it 5
    assert dp.estimate == pytest.approx((3.5 + 2.5) / 9 - 5 / 9, abs=1e-12)
    # the same with a plain mapping
    fams = {"gpt-4": "gpt", "gpt-3.5-turbo": "gpt", "text-davinci-003": "gpt", "claude-v1": "c",
            "vicuna-13b": "l", "alpaca-13b": "l", "llama-13b": "l"}  # fmt: skip
    same = family_preference(t, fams, **FAST)
    assert same.estimate == r.estimate
    # the self metric sees the two rows with gpt-4's own response only
    side = favored_side(t)
    assert side.tolist() == [0] * 10 + [1, 1]


def test_unknown_family_is_an_input_error() -> None:
    t = table([{**r, "judge": "gpt-4"} for r in FAMILY_ROWS])
    with pytest.raises(InputError, match="vicuna-13b"):
        fams = {"gpt-4": "gpt", "gpt-3.5-turbo": "gpt", "claude-v1": "c"}
        family_preference(t, fams, **FAST)


@pytest.mark.parametrize("kind", ["eo", "dp"])
def test_a_judge_that_never_saw_its_own_answer_is_told_so(kind: str) -> None:
    """LLaMA-2 on LLMBar judges only other models' answers: its EO skip read "no pairs
    where the human prefers the judge's own response", as if its answers had all lost
    (and DP's "no labelled, judged pairs with ..." said it another way). Both now say
    it has no pair with its own response; a judge that has own pairs, all lost, keeps
    EO's reason (the next test's claude-v1)."""
    rows = [
        {**r, "judge": "llama-2-70b-chat"}
        for r in own_rows([("a", 1, 1, 1), ("b", 0, 0, 0), ("a", 0, 1, 0)])
    ]
    t = table(rows)
    # by hand: the pairs are gpt-4's answer against claude-v1's, never llama's
    assert not ({"llama-2-70b-chat"} & (set(t["model_a"]) | set(t["model_b"])))
    with pytest.raises(EstimationError) as err:
        self_preference(t, kind=kind, boot=Resampling(n_boot=200), min_n=1)  # type: ignore[arg-type]
    assert str(err.value).endswith("no pairs holding the judge's own answer — add data")
    with pytest.raises(EstimationError, match="no pairs holding a family member's answer"):
        family_preference(t, Roster.builtin(), kind=kind, boot=Resampling(n_boot=200), min_n=1)  # type: ignore[arg-type]


def test_judge_selection_and_refusals() -> None:
    rows = HAND + [{**r, "judge": "claude-v1"} for r in own_rows([("a", 1, 1, 1)])]
    t = table(rows)
    with pytest.raises(ConfigError, match="2 judges"):
        self_preference(t, **FAST)
    with pytest.raises(ConfigError, match="'palm-2' is not in the table"):
        self_preference(t, judge="palm-2", **FAST)
    r = self_preference(t, judge="gpt-4", **FAST)
    assert r.n == 10
    with pytest.raises(EstimationError, match=r"judge 'gpt-4'.*only 5 .*need at least 6"):
        self_preference(t, judge="gpt-4", boot=Resampling(n_boot=200), min_n=6)
    with pytest.raises(
        EstimationError,
        match=r"no pairs where the human prefers the judge's own response — add data$",
    ):
        self_preference(t, judge="claude-v1", boot=Resampling(n_boot=200), min_n=1)
    with pytest.raises(ConfigError, match="verdict"):
        self_preference(t, judge="gpt-4", verdict="soft", **FAST)
    with pytest.raises(ConfigError, match="level"):
        self_preference(t, judge="gpt-4", boot=Resampling(level=90, n_boot=200))


def test_human_only_table_is_refused() -> None:
    rows = [{**r, "judge": None, "p_a_first": NAN, "p_a_second": NAN} for r in HAND[:5]]
    with pytest.raises(EstimationError, match="no judge verdicts"):
        self_preference(table(rows))


def test_interval_is_seeded() -> None:
    t = table(HAND)
    a = self_preference(t, boot=Resampling(n_boot=200, seed=1), min_n=4)
    b = self_preference(t, boot=Resampling(n_boot=200, seed=1), min_n=4)
    c = self_preference(t, boot=Resampling(n_boot=200, seed=2), min_n=4)
    assert (a.ci_low, a.ci_high) == (b.ci_low, b.ci_high)
    assert (a.ci_low, a.ci_high) != (c.ci_low, c.ci_high)
    assert a.to_dict()["estimate"] == pytest.approx(a.estimate)


# --------------------------------------------------- snapshots of one model line

# (judge, evaluated model) -> favored side with self = the same snapshot (default),
# family, self = the model line, family with self = the line; a = the evaluated model,
# b = the baseline gpt-4-0314 (Arena-Hard's layout)
SNAPSHOT_SIDES = {
    ("gpt-4-0613", "gpt-4-0613"): (1, 0, 0, 0),  # own snapshot vs another of the line
    ("gpt-4-0314", "gpt-4-0613"): (-1, 0, 0, 0),  # the baseline is the judge's snapshot
    ("gpt-4", "gpt-4-0613"): (0, 0, 0, 0),  # the undated line: neither is itself
    ("claude-3-opus-20240229", "gpt-4-0613"): (0, 0, 0, 0),
    ("gpt-4-0613", "claude-3-opus-20240229"): (0, -1, -1, 0),  # b: another snapshot = family
    ("gpt-4", "claude-3-opus-20240229"): (0, -1, -1, 0),
    ("claude-3-opus-20240229", "claude-3-opus-20240229"): (1, 0, 1, 0),
    ("claude-3-opus", "claude-3-opus-20240229"): (0, 1, 1, 0),  # undated line vs snapshot
}


def test_snapshots_are_self_or_family_as_documented_on_an_arena_hard_file(
    tmp_path: Path,
) -> None:
    import json

    from recuse.data.arena_hard import read_arena_hard

    real = Path(__file__).parents[1] / "data" / "importers" / "arena-hard-v0.1_gpt-4-0613.jsonl"
    record = json.loads(real.read_text("utf-8").splitlines()[0])  # a real v0.1 record
    lines = []
    for k, (judge, model) in enumerate(SNAPSHOT_SIDES):
        lines.append(json.dumps({**record, "uid": f"q{k}", "judge": judge, "model": model}))
    path = tmp_path / "judgments.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    t = read_arena_hard(path, roster=Roster.builtin())
    assert (t["model_a"] != t["model_b"]).all()  # gpt-4-0613 vs gpt-4-0314: two models
    assert set(t["model_b"]) == {"gpt-4-0314"}
    roster = Roster.builtin()
    line = roster.self_map("line")
    got = np.column_stack(
        [
            favored_side(t, relation="self"),
            favored_side(t, relation="family", families=roster),
            favored_side(t, relation="self", selves=line),
            favored_side(t, relation="family", families=roster, selves=line),
        ]
    )
    np.testing.assert_array_equal(got, np.array(list(SNAPSHOT_SIDES.values())))


def test_line_scope_self_preference_is_snapshot_scope_family_preference() -> None:
    """Judge gpt-4-0613 on gpt-4-0314 vs claude answers: by default that is family
    preference (EO 0.9 - 0.5 = 0.4 by hand) and no self-preference; with self widened to
    the gpt-4 line the same pairs give self-preference 0.4 and no family pairs."""
    n = 20
    human = np.array([1.0] * 10 + [0.0] * 10)  # a (gpt-4-0314) better in the first 10
    picks_a = np.array([1.0] * 9 + [0.0] + [1.0] * 5 + [0.0] * 5)  # 9/10 and 5/10 right
    t = validate_pairs(
        pd.DataFrame(
            {
                "item_id": [f"i{k}" for k in range(n)],
                "prompt_id": [f"p{k}" for k in range(n)],
                "model_a": "gpt-4-0314",
                "model_b": "claude-3-opus-20240229",
                "human": human,
                "judge": "gpt-4-0613",
                "p_a_first": picks_a,
                "p_a_second": picks_a,
                "p_a": None,
            }
        )
    )
    roster = Roster.builtin()
    line = roster.self_map("line")
    fam = family_preference(t, roster, boot=Resampling(n_boot=200))
    assert fam.estimate == pytest.approx(0.9 - 0.5)
    with pytest.raises(EstimationError):
        self_preference(t, boot=Resampling(n_boot=200))
    widened = self_preference(t, boot=Resampling(n_boot=200), selves=line)
    assert widened.estimate == pytest.approx(0.4) and widened.n == fam.n == n
    with pytest.raises(EstimationError):
        family_preference(t, roster, boot=Resampling(n_boot=200), selves=line)


def test_families_given_a_roster_path_says_to_load_it() -> None:
    # a roster file's path read as a {model: family} mapping: every model "had no entry
    # in the family mapping", and pairwise_bias skipped each family metric with that
    from recuse.metrics import pairwise_bias
    from recuse.simulate import simulate_pairs

    pairs = simulate_pairs(n_prompts=20, seed=1).pairs
    few = Resampling(n_boot=100)
    for call in (
        lambda f: family_preference(pairs, judge="gpt-4", families=f, boot=few),
        lambda f: pairwise_bias(pairs, f, boot=few, curves=False),
    ):
        with pytest.raises(ConfigError, match=r"got the str 'r.toml' — load the roster file"):
            call("r.toml")
        with pytest.raises(ConfigError, match=r"got the PosixPath"):
            call(Path("r.toml"))
        with pytest.raises(ConfigError, match=r"got the int 3 — give Roster.load\(\)"):
            call(3)
    for fine in (None, Roster.builtin(), {"gpt-4": "gpt"}):  # what it takes passes
        check_families(fine)


def test_families_given_a_series_says_one_line_what_to_pass() -> None:
    # a {model: family} Series was named by its repr, lines and all, cut at 120
    # characters mid-row ("...gpt\nllam"), and told to give "Roster.load() or a dict"
    series = pd.Series({f"model-{i}": "fam" for i in range(40)}, name="family")
    with pytest.raises(ConfigError) as err:
        check_families(series)
    said = str(err.value)
    assert "\n" not in said and said.startswith("families takes a Roster or a {model: fami")
    assert said.endswith("— give it as a dict: families=series.to_dict()")
    assert "got the Series model-0" in said


def test_labels_of_split_votes_are_named_so_in_the_eo_and_dp_methods() -> None:
    """HAND's tied label (0.5): "human ties" where each label is one vote; where it is
    the share of two votes (one each way, ``human_votes`` 2), EO says "tied or evenly
    split human votes left out" and DP (which counts a tie ½) "... count ½"."""
    t = table(HAND)
    assert (t["human"] == 0.5).any()
    votes = np.where(t["human"] == 0.5, 2, 1)
    for kind, used in (("eo", "left out"), ("dp", "count ½")):
        single = self_preference(t.assign(human_votes=1), kind=kind, **FAST)
        split = self_preference(t.assign(human_votes=votes), kind=kind, **FAST)
        assert f"human ties {used}" in single.method
        assert f"tied or evenly split human votes {used}" in split.method
        assert "human ties" not in split.method
