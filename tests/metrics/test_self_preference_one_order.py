"""Self- and family preference where the judge's answer always sits in one slot and only
one order was judged: the judge's preference for the answer shown first is then its
preference for its own answer, in the equal-opportunity and demographic-parity numbers
alike, and the result says so (a warning) where it stayed silent before."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from recuse.metrics import family_preference, self_preference, verbosity_bias
from recuse.metrics.bootstrap import Resampling
from recuse.metrics.self_preference import Criterion
from recuse.metrics.verbosity import prefer_longer_gap
from recuse.metrics.verdicts import use_orders
from recuse.roster import Roster
from recuse.tables import validate_pairs

BOOT = Resampling(n_boot=200)
N = 20


def first_picker(
    *, own_in_a: list[bool], second: bool, own: str = "gpt-4", other: str = "claude-v1"
) -> pd.DataFrame:
    """A judge (gpt-4) that picks the answer shown first, whatever it is: ``p_a_first`` =
    1 and, with ``second``, ``p_a_second`` = 0 (b shown first, picked). The humans
    prefer ``own``'s answer on the first half of the pairs and the other on the rest."""
    rows = []
    for i, in_a in enumerate(own_in_a):
        own_better = i < len(own_in_a) // 2
        rows.append(
            {
                "item_id": f"i{i}",
                "prompt_id": f"p{i}",
                "model_a": own if in_a else other,
                "model_b": other if in_a else own,
                "human": float(own_better == in_a),
                "judge": "gpt-4",
                "p_a_first": 1.0,
                "p_a_second": 0.0 if second else math.nan,
                "p_a": math.nan,
            }
        )
    return validate_pairs(pd.DataFrame(rows))


def one_order_words(warnings: tuple[str, ...]) -> list[str]:
    return [w for w in warnings if "judged in that order alone" in w]


@pytest.mark.parametrize("kind", ["eo", "dp"])
def test_own_answer_always_first_in_one_order_is_said(kind: Criterion) -> None:
    t = first_picker(own_in_a=[True] * N, second=False)
    r = self_preference(t, kind=kind, boot=BOOT, min_n=4)
    # by hand: the judge picks its own (first-shown) answer on every pair. EO: recall 1
    # where the humans prefer it (10 pairs), 0 where they prefer the other (10) -> +1;
    # DP: picks own 20 of 20, humans prefer it 10 of 20 -> +0.5. No self-preference in
    # the judge at all: position alone.
    assert r.estimate == pytest.approx(1.0 if kind == "eo" else 0.5, abs=1e-12)
    (said,) = one_order_words(r.warnings)
    assert "shown first on 20 of its 20 pairs" in said
    assert "the judge's own answer" in said and "p_a_second" in said


@pytest.mark.parametrize("kind", ["eo", "dp"])
def test_both_orders_or_both_slots_keep_position_apart_and_say_nothing(kind: Criterion) -> None:
    # both orders: the first-picker's verdicts average to 0.5 on every pair -> EO 0.5 -
    # 0.5 = 0, DP 0.5 - 0.5 = 0
    both = self_preference(
        first_picker(own_in_a=[True] * N, second=True), kind=kind, boot=BOOT, min_n=4
    )
    assert both.estimate == pytest.approx(0.0, abs=1e-12)
    assert not one_order_words(both.warnings)
    # one order, own answer in a on even pairs: it is picked on the 5 of 10 pairs the
    # humans prefer it where it is in a, and the other on the 5 of 10 where it is in b
    # -> EO 0.5 - 0.5 = 0; DP: picked on 10 of 20, preferred on 10 of 20 -> 0
    mixed = first_picker(own_in_a=[i % 2 == 0 for i in range(N)], second=False)
    r = self_preference(mixed, kind=kind, boot=BOOT, min_n=4)
    assert r.estimate == pytest.approx(0.0, abs=1e-12)
    assert not one_order_words(r.warnings)


def test_family_member_always_second_in_one_order_is_said() -> None:
    # gpt-3.5-turbo, of gpt-4's family, always in b against claude-v1, one order: the
    # first-picker never picks it. By hand: recall 0 where the humans prefer it (10),
    # 1 where they prefer claude-v1 (10) -> EO -1
    t = first_picker(own_in_a=[False] * N, second=False, own="gpt-3.5-turbo")
    r = family_preference(t, Roster.builtin(), boot=BOOT, min_n=4)
    assert r.estimate == pytest.approx(-1.0, abs=1e-12)
    (said,) = one_order_words(r.warnings)
    assert "shown second on 20 of its 20 pairs" in said and "a family member's answer" in said


def test_longer_answer_always_first_in_one_order_is_said() -> None:
    """The same confound in verbosity: the longer answer always in a, one order only.
    By hand (the humans prefer a on the first 10 pairs): the first-picker picks the
    longer on 20 of 20, the humans on 10 of 20 -> prefer-longer gap +0.5; Eq. 6: recall
    1 where the humans prefer the longer, 0 where the shorter -> +1."""
    t = first_picker(own_in_a=[True] * N, second=False).assign(len_a=30.0, len_b=10.0)
    gap = prefer_longer_gap(t, boot=BOOT, min_n=4)
    eq6 = verbosity_bias(t, boot=BOOT, min_n=4)
    assert (gap.estimate, eq6.estimate) == pytest.approx((0.5, 1.0), abs=1e-12)
    for r in (gap, eq6):
        (said,) = one_order_words(r.warnings)
        assert said.startswith("the longer answer was shown first on 20 of its 20 pairs")
    # both orders: the verdicts average to 0.5 -> gap 0.5 - 0.5 = 0, Eq. 6 0.5 - 0.5 = 0
    both = first_picker(own_in_a=[True] * N, second=True).assign(len_a=30.0, len_b=10.0)
    for r in (
        prefer_longer_gap(both, boot=BOOT, min_n=4),
        verbosity_bias(both, boot=BOOT, min_n=4),
    ):
        assert r.estimate == pytest.approx(0.0, abs=1e-12)
        assert not one_order_words(r.warnings)


def test_the_rule_it_is_said_by_is_in_its_words_and_half_is_enough() -> None:
    """The warning gave its counts but not when it is said, and the docs said "most of
    its pairs" where half exactly warns. A mixed table: 30 pairs, the judge's answer in
    a with p_a_first alone on 19, in b with p_a_first alone (shown second) on 4, both
    orders on 7. Net 19 - 4 = 15 = half of 30 (and >= 10): said, naming the 4. With one
    more pair of both orders in place of a first-only one: net 14 < 15, silent."""
    said_rows = [True] * 19 + [False] * 4 + [True] * 7
    t = first_picker(own_in_a=said_rows, second=False)
    t.loc[23:, "p_a_second"] = 0.0  # the last 7 judged in both orders
    r = self_preference(t, kind="dp", boot=BOOT, min_n=4)
    (said,) = one_order_words(r.warnings)
    assert said.startswith("the judge's own answer was shown first on 19 of its 30 pairs")
    assert said.endswith(
        "(said where such pairs outnumber those showing it second in the one order "
        "judged, 4 here, by 50% of its pairs and 10 pairs or more, all its pairs where it "
        "has fewer than 10)"
    )
    t.loc[0, "p_a_second"] = 0.0  # 18 first alone, 4 second alone: 14 < 15
    quiet = self_preference(t, kind="dp", boot=BOOT, min_n=4)
    assert not one_order_words(quiet.warnings)


def test_one_order_chosen_of_a_table_with_both_names_the_option_that_reads_both() -> None:
    """Both orders judged, the first alone chosen (--orders first): the warning is said
    (the number is the first-picker's +0.5, by hand as above), and its fix was only
    'judge the other order too', which this table has. It now names the option that
    reads it (orders="both" in Python; `recuse metrics pairs` says --orders both)."""
    t = use_orders(first_picker(own_in_a=[True] * N, second=True), "first")
    r = self_preference(t, kind="dp", boot=BOOT, min_n=4)
    assert r.estimate == pytest.approx(0.5, abs=1e-12)
    (said,) = one_order_words(r.warnings)
    assert 'where the table has it, orders="both" reads it' in said


def test_a_judge_of_fewer_than_10_pairs_all_in_one_slot_is_warned_too() -> None:
    """8 pairs, the judge's own answer in a on each, the first order alone: DP is
    position alone, +0.5 by hand (picks own 8 of 8, the humans prefer it on 4 of 8),
    estimated (min_n 4) and was silent (the warning's floor of 10 pairs). A judge of
    fewer than 10 pairs is warned where all of them are so shown; 7 of 8 stays silent."""
    t = first_picker(own_in_a=[True] * 8, second=False)
    r = self_preference(t, kind="dp", boot=BOOT, min_n=4)
    assert r.estimate == pytest.approx(0.5, abs=1e-12)
    (said,) = one_order_words(r.warnings)
    assert said.startswith("the judge's own answer was shown first on 8 of its 8 pairs")
    t.loc[0, "p_a_second"] = 0.0  # 7 first alone of 8: under all of them
    assert not one_order_words(self_preference(t, kind="dp", boot=BOOT, min_n=4).warnings)


def test_a_table_with_p_a_only_cannot_raise_the_warning_and_the_docs_say_so() -> None:
    """The same first-picker with its verdict as ``p_a`` (order unknown): DP is still
    +0.5 by hand (picks own 20 of 20, the humans prefer it 10 of 20), and no one-order
    warning can come (its pairs count in neither slot). The page says so, so that a
    silent report of such a table is not read as a balanced slot (it did not say so)."""
    from pathlib import Path

    t = first_picker(own_in_a=[True] * N, second=False)
    t["p_a"], t["p_a_first"] = t["p_a_first"], math.nan
    r = self_preference(validate_pairs(t), kind="dp", boot=BOOT, min_n=4)
    assert r.estimate == pytest.approx(0.5, abs=1e-12)
    assert not one_order_words(r.warnings)
    page = Path(__file__).resolve().parents[2] / "docs" / "self-preference.md"
    words = " ".join(page.read_text(encoding="utf-8").split())
    assert (
        "A table with `p_a` only (the order each verdict was given in unknown) cannot raise it"
        in words
    )


def one_order_notes(notes: tuple[str, ...]) -> list[str]:
    return [w for w in notes if "judged in one order only" in w]


def test_one_order_pairs_below_the_rule_are_a_note_and_above_it_a_warning() -> None:
    """The mixed table of the rule's test: 30 pairs, 19 with the judge's answer shown
    first (p_a_first alone, in a), 4 shown second (p_a_first alone, in b), 7 in both
    orders. Net 15 = half of 30: the warning, and no note. One more of both orders: 18
    and 4, net 14 < 15: no warning (it was silent, as now), and the note counts the 22
    one-order pairs by slot; the number is unchanged by it. DP by hand: the humans
    prefer the judge's answer on rows 0-14 (15 of 30); the first-picker picks it on
    each first-shown pair, never on a second-shown one, and half on a two-order pair
    (its verdicts 1 and 0 average 0.5, p_a read again from both):
    (19 + 3.5)/30 - 15/30 = 0.25 warned, (18 + 4)/30 - 15/30 = 7/30 noted."""
    said_rows = [True] * 19 + [False] * 4 + [True] * 7
    t = first_picker(own_in_a=said_rows, second=False)
    t.loc[23:, "p_a_second"] = 0.0  # the last 7 judged in both orders
    warned = self_preference(validate_pairs(t.assign(p_a=math.nan)), kind="dp", boot=BOOT, min_n=4)
    assert warned.estimate == pytest.approx(0.25, abs=1e-12)
    assert len(one_order_words(warned.warnings)) == 1
    assert not one_order_notes(warned.notes)
    t.loc[0, "p_a_second"] = 0.0  # 18 first alone, 4 second alone: 14 < 15
    noted = self_preference(validate_pairs(t.assign(p_a=math.nan)), kind="dp", boot=BOOT, min_n=4)
    assert noted.estimate == pytest.approx(7 / 30, abs=1e-12)
    assert not one_order_words(noted.warnings)
    (note,) = one_order_notes(noted.notes)
    assert note.startswith(
        "22 of the judge's 30 pairs were judged in one order only, the judge's own answer "
        "shown first in 18 and second in 4 (14 more in one slot than in the other): below "
        "the one-slot warning's rule"
    )
    assert f"note: {note}" in str(noted)  # printed after the number
    assert noted.to_dict()["notes"] == [note]


@pytest.mark.parametrize("kind", ["eo", "dp"])
def test_a_note_on_one_order_pairs_balanced_between_the_slots_says_so(kind: Criterion) -> None:
    """The first-picker judged in one order only, its answer in a on even pairs: 20 of
    20 pairs one-order, 10 shown first and 10 second. The number is exactly 0 (by hand
    in the test above: the slots cancel), so the note must not say these 20 are "fewer"
    than the rule asks nor that they move the number unqualified: the rule reads the
    difference of the slots, 0 here. It read "20 of the judge's 20 pairs … fewer than
    the one-slot warning needs …, yet their verdicts still carry any preference … into
    the number"."""
    mixed = first_picker(own_in_a=[i % 2 == 0 for i in range(N)], second=False)
    r = self_preference(mixed, kind=kind, boot=BOOT, min_n=4)
    assert r.estimate == pytest.approx(0.0, abs=1e-12)
    (note,) = one_order_notes(r.notes)
    assert note.startswith(
        "20 of the judge's 20 pairs were judged in one order only, the judge's own answer "
        "shown first in 10 and second in 10 (as many in each slot): below the one-slot "
        "warning's rule"
    ), note
    assert "fewer than the one-slot" not in note
    assert note.endswith(
        "into the number, as far as the two slots do not balance it, which judging the "
        "other order too would cancel"
    )


@pytest.mark.parametrize(("alone", "said"), [(1, "was"), (5, "were")])
def test_a_note_on_one_order_pairs_all_in_one_slot_names_the_slot(alone: int, said: str) -> None:
    """The first-picker judged in both orders on all but ``alone`` pairs, its answer in
    a on those: every one-order pair shows it first. The note names the slot (first;
    "all 5" of several) instead of "first in 5 and second in 0", "first in 1 and
    second in 0" of the single pair, as it read."""
    t = first_picker(own_in_a=[True] * N, second=True)
    t.loc[: alone - 1, "p_a_second"] = math.nan  # the first ``alone`` pairs: a first only
    r = self_preference(validate_pairs(t), kind="dp", boot=BOOT, min_n=4)
    assert not one_order_words(r.warnings)  # net 1 or 5 < 10 of 20
    (note,) = one_order_notes(r.notes)
    where = "shown first" if alone == 1 else f"shown first in all {alone}"
    assert note.startswith(
        f"{alone} of the judge's {N} pairs {said} judged in one order only, the judge's own "
        f"answer {where}: below the one-slot warning's rule"
    ), note
    assert "second in 0" not in note
    assert ("its verdict carries" in note) == (alone == 1)
