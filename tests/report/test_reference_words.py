"""The report names the labels the judge is compared with as the dataset declares them:
JudgeBench's are correctness labels, not human preferences (recuse.reference)."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from recuse.analyses import REGISTRY
from recuse.driver import AuditOptions, load_input, run_audit
from recuse.reference import ReferenceKind, reword
from recuse.report import to_dict

HUMAN = re.compile(r"\bhumans?\b", re.IGNORECASE)


def _bias(key: str) -> Any:
    (bias,) = [b for a in REGISTRY for b in a.biases if b.key == key]
    return bias


def test_bias_words_for_correctness_labels_by_hand() -> None:
    dp = _bias("self_preference_dp").for_reference("correctness")
    assert dp.positive == "picks its own answer more often than it is the correct answer"
    assert dp.none == (
        "no detectable difference between how often it picks its own answer and how often "
        "it is the correct answer"
    )
    assert dp.unit.startswith("P(judge picks its own answer) − P(it is the correct answer)")
    assert "0 = as often as it is correct;" in dp.unit
    acc = _bias("agreement_accuracy").for_reference("correctness")
    assert acc.title == "Agreement with the correctness label"
    assert acc.unit.startswith(
        "share of pairs with a correctness label on which the judge's verdict (the orders "
        "it judged combined) picks the correct side"
    )
    gap = _bias("verbosity_recall_gap").for_reference("correctness")
    assert gap.positive == (
        "agrees with the correctness labels more often when the longer answer is correct "
        "than when the shorter one is"
    )
    # the key, numbers and flags are the bias's own; human labels keep the words
    assert (dp.key, dp.null, dp.kind, dp.reference) == (
        "self_preference_dp",
        0.0,
        "bias",
        "correctness",
    )
    assert _bias("self_preference_dp").for_reference("human") is _bias("self_preference_dp")
    assert reword("agrees with humans", "human") == "agrees with humans"


@pytest.mark.parametrize("kind", ["correctness", "mixed"])
def test_no_bias_text_says_human_once_reworded(kind: ReferenceKind) -> None:
    """For correctness labels, and for the neutral "reference label" of a file that
    mixes kinds (recuse.data.inputs.file_reference)."""
    for analysis in REGISTRY:
        assert not HUMAN.search(reword(analysis.intro, kind)), analysis.id
        for b in analysis.biases:
            c = b.for_reference(kind)
            for name in ("title", "unit", "positive", "negative", "none", "short", "scale"):
                assert not HUMAN.search(getattr(c, name)), (b.key, name, getattr(c, name))


@pytest.fixture(scope="module")
def mixed(shared_data: Path) -> Any:
    """A slice of JudgeBench (correctness labels) audited beside one of LLMBar (human)."""
    jb = load_input("judgebench", data_dir=shared_data)
    ll = load_input("llmbar-mtbench", data_dir=shared_data)
    judges = ["claude-3-haiku-20240307", "internlm2-7b-reward"]
    jb = replace(jb, frame=jb.frame[jb.frame["judge"].isin(judges)])
    ll = replace(ll, frame=ll.frame[ll.frame["judge"] == "gpt-4"])
    return jb, ll, run_audit([jb, ll], options=AuditOptions(n_boot=100))


def test_findings_name_each_datasets_labels(mixed: Any) -> None:
    jb, ll, report = mixed
    assert jb.source.reference == "correctness" and ll.source.reference == "human"
    mine = [f for s in report.sections for f in s.findings if f.dataset == "judgebench"]
    theirs = [f for s in report.sections for f in s.findings if f.dataset == "llmbar-mtbench"]
    assert {f.bias.key for f in mine} >= {"agreement_accuracy", "verbosity_recall_gap"}
    for f in mine:
        assert f.bias.reference == "correctness"
        assert not HUMAN.search(f.verdict) and not HUMAN.search(f.bias.unit), f.bias.key
    words = {f.bias.key: f.verdict for f in mine}
    assert words["agreement_accuracy"].startswith("agreement with the correctness label")
    # LLMBar's labels are human: its words are the analyses' own, unchanged
    for f in theirs:
        assert f.bias is _bias(f.bias.key)
    said = {f.bias.key: f.verdict for f in theirs}
    assert said["agreement_accuracy"].startswith("agreement with the human label")
    assert "how often the humans prefer it" in said["self_preference_dp"]
    # a skip for JudgeBench says why in its labels' words; its judges never judged their
    # own answers, which EO's skip says as such (it read "no pairs where the correctness
    # label favours the judge's own response"), so the rewording is checked on that text
    skips = [k.said for k in report.skipped if k.dataset == "judgebench"]
    assert "self_preference_eo: no pairs holding the judge's own answer" in skips
    assert not any(HUMAN.search(s) for s in skips)
    assert (
        reword("no pairs where the human prefers the judge's own response", "correctness")
        == "no pairs where the correctness label favours the judge's own response"
    )
    # the method beside each number too: JudgeBench's in its labels' words, LLMBar's as
    # the analyses wrote them
    for f in mine:
        assert not HUMAN.search(f.method), (f.bias.key, f.method)
    methods = {f.bias.key: f.method for f in theirs}
    assert methods["agreement_accuracy"].startswith("accuracy against the human label:")


def test_the_json_names_the_labels(mixed: Any) -> None:
    _, _, report = mixed
    d = to_dict(report)
    refs = {s["name"]: s["reference"] for s in d["provenance"]["sources"]}
    assert refs == {"judgebench": "correctness labels", "llmbar-mtbench": "human labels"}
    for s in d["sections"]:
        for f in s["findings"]:
            if f["dataset"] == "judgebench":
                assert not HUMAN.search(f["unit"] + f["verdict"]), f["bias"]
    # a column shared by both datasets keeps the words written for human labels, and
    # the report's note says how to read them for JudgeBench
    (note,) = [n for n in report.notes if n.startswith("In judgebench")]
    assert "worded for correctness labels" in note and "read that label" in note


def test_an_audit_of_judgebench_alone_says_correctness_throughout(shared_data: Path) -> None:
    jb = load_input("judgebench", data_dir=shared_data)
    jb = replace(jb, frame=jb.frame[jb.frame["judge"] == "claude-3-haiku-20240307"])
    report = run_audit([jb], options=AuditOptions(n_boot=100))
    for s in report.sections:
        assert not HUMAN.search(s.intro), s.id
        assert not any(HUMAN.search(b.unit) for b in s.biases), s.id
    for col in report.matrix().columns:
        assert col.bias.reference == "correctness"
    # what the HTML and JSON print beside each number: the method, the detail and the
    # warnings of each finding, the figures' words and the tables' titles
    for s in report.sections:
        for f in s.findings:
            for said in (f.method, f.detail, *f.warnings):
                assert not HUMAN.search(said), (f.bias.key, said)
        for fig in s.figures:
            for said in (fig.title, fig.caption, fig.alt):
                assert not HUMAN.search(said), (s.id, said)
        for t in s.tables:
            assert not HUMAN.search(t.title), (s.id, t.title)
            # and the words of its columns (the certification curve's n_labelled read
            # "pairs with a human preference")
            for c, said in t.columns.items():
                assert not HUMAN.search(said), (t.name, c, said)
            # and the page's own texts of its cells (an estimates table's warnings, its
            # extrapolated ends in a line), as its CSV's cells
            for c, texts in t.texts.items():
                assert not any(HUMAN.search(said) for said in texts), (t.name, c, texts)
        assert not any(HUMAN.search(n) for n in (*s.notes, *s.headlines)), s.id
    methods = {f.bias.key: f.method for s in report.sections for f in s.findings}
    assert methods["agreement_accuracy"].startswith("accuracy against the correctness label:")
    gap = methods["verbosity_recall_gap"]
    assert "recall when the correctness label favours the longer response minus" in gap
    (cert,) = [s for s in report.sections if s.id == "certification"]
    assert any("agree with the correctness labels at" in g.caption for g in cert.figures)


def test_two_datasets_of_correctness_labels_share_their_words(shared_data: Path) -> None:
    """Two inputs with correctness labels (JudgeBench twice): every text is worded for
    them, so the note tells no one to read a shared text's 'human' as the label."""
    jb = load_input("judgebench", data_dir=shared_data)
    few = jb.frame[jb.frame["judge"] == "o1-mini-2024-09-12"].head(80)
    report = run_audit(
        [replace(jb, frame=few), replace(jb, frame=few)],
        options=AuditOptions(n_boot=100, only=("agreement",)),
    )
    notes = [n for n in report.notes if "reference label is objective correctness" in n]
    assert len(notes) == 2
    for n in notes:
        assert n.endswith("its findings and reasons are worded for correctness labels."), n
    for s in report.sections:
        assert not HUMAN.search(s.intro)
        for f in s.findings:
            assert not HUMAN.search(f.verdict + f.method), f.method


def test_reword_changes_whole_words_and_hyphenated_labels() -> None:
    """'human-labelled' read 'correctness-label-labelled' (the competence model's reason
    'no human-labelled pairs of two different known models ...'), and a word that only
    begins with 'human' was cut: 'humane' read 'correctness-labele'."""
    said = reword("no human-labelled pairs of two different known models", "correctness")
    assert said == "no correctness-labelled pairs of two different known models"
    assert reword("Human-labeled data", "correctness") == "Correctness-labelled data"
    for text in ("a humane judge", "humanity's last exam", "Humanities"):
        assert reword(text, "correctness") == text
    # the phrases themselves still change, at the end of a sentence too
    assert reword("agrees with humans.", "correctness") == "agrees with the correctness labels."
    assert reword("(the human label)", "correctness") == "(the correctness label)"


def test_mixed_labels_by_hand() -> None:
    """A file of both kinds: the neutral words, which claim neither kind."""
    dp = _bias("self_preference_dp").for_reference("mixed")
    assert dp.positive == "picks its own answer more often than the reference label favours it"
    gap = _bias("verbosity_recall_gap").for_reference("mixed")
    assert gap.positive == (
        "agrees with the reference labels more often when they favour the longer answer "
        "than when they favour the shorter one"
    )
    assert _bias("agreement_accuracy").for_reference("mixed").title == (
        "Agreement with the reference label"
    )


def test_file_reference_looks_each_distinct_source_up_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kind of each labelled row is looked up once per distinct source, not per row
    (a million-row file names a handful of datasets); the kinds and the mixed note are
    those worked out by hand: 3 judgebench rows (correctness), 4 of the rest (human)."""
    import pandas as pd

    from recuse.data import inputs, registry

    asked: list[object] = []

    class Counted(dict):  # type: ignore[type-arg]
        def __contains__(self, name: object) -> bool:
            asked.append(name)
            return super().__contains__(name)

    every = registry.datasets()
    monkeypatch.setattr(inputs.registry, "datasets", lambda: Counted(every))
    sources = ["judgebench", "JudgeBench ", "mine", None, "mine", "llmbar", "judgebench"]
    frame = pd.DataFrame({"source": sources * 1_000, "human": [1.0] * 7_000})
    kind, label, notes = inputs.file_reference(frame, "pairs")
    assert (kind, label) == ("mixed", "")
    assert "3,000 of correctness" in notes[0] and "4,000 of human" in notes[0]
    # the kinds: one look-up per distinct lowered source (4); the near-miss note: one per
    # distinct written source that is not empty (4: "JudgeBench" is written apart)
    assert len(asked) == 8, asked


def test_a_tables_page_texts_are_worded_for_its_labels_as_its_cells() -> None:
    """An estimates table's warnings reach the page as its own texts (their extrapolated
    ends in a line, :func:`recuse.analyses.base.warnings_texts`); worded for the
    dataset's labels as the CSV's cells are, not left saying "human"."""
    from types import SimpleNamespace

    import pandas as pd

    from recuse.driver import _in_reference_words
    from recuse.report.model import Section, Table

    said = "agrees with the human label on 3 pairs only"
    frame = pd.DataFrame({"dataset": ["jb"], "warnings": [said]})
    table = Table("t", "Estimates — jb", frame, texts={"warnings": [said]})
    section = Section("s", "S", "intro", tables=(table,))
    jb = SimpleNamespace(name="jb", source=SimpleNamespace(reference="correctness"))
    (out,) = _in_reference_words(section, [jb]).tables
    worded = "agrees with the correctness label on 3 pairs only"
    assert out.frame["warnings"].tolist() == [worded]
    assert out.texts == {"warnings": [worded]}
