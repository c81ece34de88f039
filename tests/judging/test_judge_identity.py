"""The judge you named is the judge that ran, and every verdict names its judge prompt:
a folder named like the embedded judge is the user's model; one verdict per (judge,
item, order) is exported, with the reason when the store held several; the template's
name, format and content hash go with every exported verdict."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from judging.helpers import FakeBackend, fake_pairs
from recuse.cli import main
from recuse.judging.fingerprint import folder_fingerprint
from recuse.judging.models import DEFAULT_JUDGE, names_embedded
from recuse.judging.protocols import PairwiseProtocol
from recuse.judging.runner import Runner
from recuse.judging.store import PROMPT_COLUMNS, Judgment, Store
from recuse.judging.templates import load_template

TOML = (
    'name = "strict"\nuser = "Q: {question}\\nA: {answer_a}\\nB: {answer_b}"\n'
    '[verdict]\na = "[[A]]"\nb = "[[B]]"\n'
)


def test_a_folder_named_like_the_embedded_judge_is_the_users_model(
    tiny_model_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A fine-tune saved as smollm2-135m-instruct in the working folder was read as the
    embedded judge: the user's model silently replaced."""
    assert names_embedded(DEFAULT_JUDGE)  # no such folder here: the embedded judge
    folder = tmp_path / DEFAULT_JUDGE
    shutil.copytree(tiny_model_dir, folder)
    src = tmp_path / "pairs.csv"
    pd.DataFrame(fake_pairs(1)).to_csv(src, index=False)
    monkeypatch.chdir(tmp_path)
    assert not names_embedded(DEFAULT_JUDGE)
    args = ["judge", "--model", DEFAULT_JUDGE, "--data", "pairs.csv", "--out", "s.db"]
    assert main([*args, "--no-progress"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith(f"judge {DEFAULT_JUDGE}: local model on cpu float32")
    assert first.endswith(f"read from model folder {folder}")
    with Store(tmp_path / "s.db", read_only=True) as store:
        _, revision = store.judge_models()[DEFAULT_JUDGE]
    assert revision == folder_fingerprint(folder)  # the folder's weights, not the GGUF's


def _row(key: str, item: str, slot: str, value: float) -> Judgment:
    return Judgment(
        key=key, kind="pairwise", judge="j", item_id=item, slot=slot, status="ok",
        value=value, p_slot_a=value if slot == "first" else 1 - value,
    )  # fmt: skip


def test_one_verdict_per_order_is_exported_with_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Rows of one (judge, item, order) under two keys (an older client's and a newer
    one's) were exported without a word: the newest is kept, and the reason said."""
    path = tmp_path / "s.db"
    with Store(path) as store:
        meta = {r["item_id"]: r for r in fake_pairs(2)}
        store.put_items("pairwise", meta)
        store.put([_row("old", "i0", "first", 0.2), _row("k1", "i0", "second", 0.6)])
        store.put([_row("k1", "i1", "first", 0.7), _row("k2", "i1", "second", 0.5)])
        store.put([_row("new", "i0", "first", 0.9)])  # a later client's key
        notes: list[str] = []
        df = store.export_pairs(notes=notes).set_index("item_id")
    assert df.loc["i0", "p_a_first"] == pytest.approx(0.9)
    assert df.loc["i0", "p_a"] == pytest.approx((0.9 + 0.6) / 2)
    assert df.loc["i1", "p_a_first"] == pytest.approx(0.7)
    (note,) = notes
    assert note.startswith("1 (judge, item, order) held verdicts under more than one content key")
    assert "first: judge 'j', item 'i0', first" in note and "the newest verdict" in note
    out = tmp_path / "pairs.csv"
    assert main(["judge", "export", str(path), "--out", str(out)]) == 0
    assert f"note: {note}" in capsys.readouterr().out


def test_every_exported_verdict_names_its_judge_prompt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template = load_template(_write(tmp_path / "strict.toml", TOML))
    path = tmp_path / "s.db"
    pairs = pd.DataFrame(fake_pairs(3))
    with Store(path) as store:
        Runner(FakeBackend(), store, judge="templated", progress=False).pairwise(
            pairs, PairwiseProtocol(template=template)
        )
        Runner(FakeBackend(), store, judge="ours", progress=False).pairwise(pairs)
        df = store.export_pairs()
    got = df.groupby("judge")[list(PROMPT_COLUMNS)].agg(set)
    assert got.loc["templated"].tolist() == [{"strict"}, {"toml"}, {template.sha256}]
    name, kind, sha = PairwiseProtocol().prompt_record()
    assert kind == "recuse"
    assert got.loc["ours"].tolist() == [{name}, {"recuse"}, {sha}]
    assert len(sha) == 64 and sha != template.sha256
    assert PairwiseProtocol(mode="explain").prompt_record()[2] != sha  # no answer prefix
    out = tmp_path / "pairs.csv"
    assert main(["judge", "export", str(path), "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert f"judge templated: judge prompt 'strict' (toml, sha256 {template.sha256})" in said
    back = pd.read_csv(out)
    assert set(back["judge_prompt_sha256"]) == {template.sha256, sha}


def test_a_store_from_before_prompt_hashes_gets_them(tmp_path: Path) -> None:
    """An older store's judge_prompts has no format or sha256 column: opened, it gets
    them; a template's hash is read from its prompt id meanwhile, and the next run of
    the same prompt fills both in."""
    template = load_template(_write(tmp_path / "strict.toml", TOML))
    path = tmp_path / "old.db"
    with Store(path) as store:
        Runner(FakeBackend(), store, judge="j", progress=False).pairwise(
            pd.DataFrame(fake_pairs(2)), PairwiseProtocol(template=template)
        )
    conn = sqlite3.connect(path)  # as an older recuse wrote it
    conn.executescript(
        "CREATE TABLE p2 AS SELECT judge, prompt, name, created_at FROM judge_prompts;"
        "DROP TABLE judge_prompts; ALTER TABLE p2 RENAME TO judge_prompts;"
    )
    conn.close()
    with Store(path, read_only=True) as store:
        assert store.judge_prompts() == {"j": ("strict", "", template.sha256)}
    with Store(path) as store:
        Runner(FakeBackend(), store, judge="j", progress=False).pairwise(
            pd.DataFrame(fake_pairs(2)), PairwiseProtocol(template=template)
        )
        assert store.judge_prompts() == {"j": ("strict", "toml", template.sha256)}


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_the_report_header_json_and_card_name_the_audited_template(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Neither report.json, the HTML, the evaluator card nor the export named the
    template: a report could not be tied to the prompt it audited."""
    import json

    template = load_template(_write(tmp_path / "strict.toml", TOML))
    store = tmp_path / "s.db"
    with Store(store) as s:
        Runner(FakeBackend(), s, judge="gpt-4", progress=False).pairwise(
            pd.DataFrame(fake_pairs(24)), PairwiseProtocol(template=template)
        )
    pairs = tmp_path / "pairs.csv"
    assert main(["judge", "export", str(store), "--out", str(pairs)]) == 0
    assert main(["judge", "card", str(store)]) == 0
    card_line = capsys.readouterr().out.splitlines()[-1]
    assert card_line.endswith(f"judge prompt 'strict' (toml, sha256 {template.sha256[:12]})")
    out = tmp_path / "report"
    args = ["audit", str(pairs), "--store", str(store), "--out", str(out), "--n-boot", "200"]
    assert main(args) == 0
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    (source,) = report["provenance"]["sources"]
    assert source["judge_prompts"] == [
        {"judge": "gpt-4", "name": "strict", "format": "toml", "sha256": template.sha256}
    ]
    html = (out / "report.html").read_text(encoding="utf-8")
    header = html[html.index("<header>") : html.index("</header>")]
    assert f"Judge prompt of gpt-4: strict (toml), sha256 <code>{template.sha256}</code>" in header
    (row,) = report["tables"]["evaluator-card"]["rows"]
    assert (row["judge prompt"], row["judge prompt sha256"]) == ("strict", template.sha256)
