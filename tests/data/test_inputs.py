"""The one resolver of "dataset name, file or folder": guessing a file's table kind at
bounded cost; the same finding and errors for the responses a Likert judge rates and for
evidence tables, whatever the command."""

from __future__ import annotations

import gzip
import os
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recuse.cli import main
from recuse.data import registry
from recuse.data.inputs import (
    RESPONSE_COLUMNS,
    _guess_table,
    _peek_columns,
    load_input,
    load_responses,
    locate,
)
from recuse.errors import DatasetNotFoundError, InputError, ReaderNote


def test_guess_reads_the_header_only(tmp_path: Path) -> None:
    ratings = tmp_path / "r.csv"
    ratings.write_text("\ufeffrating,prompt_id,model,dimension,judge,reference\n1,q,m,d,j,2\n")
    assert _guess_table(ratings) == "ratings"
    pairs = tmp_path / "p.jsonl.gz"
    with gzip.open(pairs, "wt") as fh:
        fh.write('\n{"item_id": "a", "rating": 1, "p_a": 0.5}\n')
    assert _peek_columns(pairs) == {"item_id", "rating", "p_a"}
    assert _guess_table(pairs) == "pairs"


def test_hostile_first_lines_cost_little(tmp_path: Path) -> None:
    wide = tmp_path / "wide.csv"
    wide.write_text(",".join(f"c{i}" for i in range(200_000)) + "\n")
    huge = tmp_path / "huge.jsonl"
    huge.write_text('{"x": "' + "y" * 20_000_000 + '"}\n')
    deep = tmp_path / "deep.jsonl"
    deep.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    tracemalloc.start()
    start = time.perf_counter()
    for f in (wide, huge, deep):
        assert _guess_table(f) == "pairs"  # unknown: the reader will say what is wrong
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert time.perf_counter() - start < 20 and peak < 20_000_000


def test_locate_finds_datasets_files_and_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert locate(tmp_path) == tmp_path
    monkeypatch.chdir(tmp_path)
    Path("hh-rlhf").write_text("x")  # a file named as a dataset: the dataset, unless a Path
    assert locate("hh-rlhf") == registry.get("hh-rlhf")
    assert locate(Path("hh-rlhf")) == Path("hh-rlhf")
    assert locate("./hh-rlhf") == Path("hh-rlhf")
    with pytest.raises(DatasetNotFoundError, match=r"unknown dataset 'hh-rlfh'.*hh-rlhf"):
        locate("hh-rlfh")
    # a near spelling is named first, a folder's spelling (llmbar_mtbench) included
    for typo, meant in (("llmbar_mtbench", "llmbar-mtbench"), ("llmbar-mtbnech", "llmbar-mtbench"),
                        ("MT-Bench-Human", "mt-bench-human")):  # fmt: skip
        with pytest.raises(DatasetNotFoundError, match=f"'{typo}' — did you mean '{meant}'?"):
            locate(typo)
    with pytest.raises(DatasetNotFoundError) as far:
        locate("my-own-data")
    assert "did you mean" not in str(far.value)
    with pytest.raises(InputError, match="file not found") as err:
        locate(str(tmp_path / "gone.csv"))
    assert str(tmp_path / "gone.csv") in str(err.value)


def _responses(tmp_path: Path, **cols: list[object]) -> Path:
    path = tmp_path / "responses.csv"
    base: dict[str, list[object]] = {
        "prompt_id": ["p1", "p2"],
        "model": ["gpt-4", "claude-v1"],
        "prompt": ["q1", "q2"],
        "response": ["a1", "a2"],
    }
    pd.DataFrame({**base, **cols}).to_csv(path, index=False)
    return path


def test_load_responses_reads_a_file_of_any_format(tmp_path: Path) -> None:
    path = _responses(tmp_path, reference_faithfulness=[4, 5])
    got = load_responses(str(path))
    assert list(got.columns) == [*RESPONSE_COLUMNS, "reference_faithfulness"]
    assert got["response"].tolist() == ["a1", "a2"]
    jsonl = tmp_path / "r.jsonl"
    got.to_json(jsonl, orient="records", lines=True)
    pd.testing.assert_frame_equal(load_responses(jsonl), got)


def test_load_responses_errors_name_file_row_and_column(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"missing column.*response for Likert") as err:
        (tmp_path / "x.csv").write_text("prompt_id\n1\n")
        load_responses(tmp_path / "x.csv")
    assert "x.csv" in str(err.value) and "model, prompt, response" in str(err.value)
    with pytest.raises(InputError) as err:
        load_responses(_responses(tmp_path, model=["gpt-4", None]))
    assert "row 2" in str(err.value) and "'model'" in str(err.value)
    with pytest.raises(InputError, match="must be text") as err:
        load_responses(_responses(tmp_path, response=["a1", None]))
    assert "row 2" in str(err.value)
    # two answers of one model to one prompt: both were judged, and the export kept one
    # with a note blaming an older recuse or a changed item
    with pytest.raises(InputError, match=r"duplicate responses row \(prompt_id='p1'") as err:
        load_responses(_responses(tmp_path, prompt_id=["p1", "p1"], model=["m", "m"]))
    assert err.value.row == 2
    # found as every command finds its input: a dataset name is refused with the fix
    with pytest.raises(InputError, match="'hh-rlhf' is a pairs table, and Likert") as err:
        load_responses("hh-rlhf")
    assert "prompt_id, model, prompt, response" in str(err.value)
    with pytest.raises(DatasetNotFoundError):
        load_responses("no-such-set")
    with pytest.raises(InputError, match="is a folder"):
        load_responses(tmp_path)


def test_validate_reads_a_ratings_file_as_the_audit_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # no --table: a rating column (and no p_a) is read as ratings, as by recuse audit
    path = tmp_path / "r.csv"
    pd.DataFrame(
        {"prompt_id": ["q1", "q1"], "model": ["gpt-4", "claude-v1"], "dimension": ["d", "d"],
         "judge": ["gpt-4", "gpt-4"], "rating": [4, 3], "reference": [5, 3]}
    ).to_csv(path, index=False)  # fmt: skip
    assert load_input(path).table == "ratings"
    assert main(["validate", str(path)]) == 0
    assert "a valid ratings table" in capsys.readouterr().out
    assert main(["validate", str(path), "--table", "pairs"]) == 2  # as asked: not pairs
    assert "a ratings table, not the pairs table" in capsys.readouterr().err


def _pairs_file(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("item_id,prompt_id,model_a,model_b,judge,p_a\n1,p1,x,y,j,0.7\n")
    return path


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_or_a_symlink_loop_is_a_clear_error_not_a_hang(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A named pipe given as the data file was opened to peek at its header and waited
    for a writer for ever (recuse validate hung); a loop of symbolic links or a link to
    nothing said 'file not found' of a path that is there. Each is now one line, exit 2."""
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match=r"pipe\.csv: not a regular file \(a pipe"):
        locate(str(fifo))
    assert main(["validate", str(fifo)]) == 2
    err = capsys.readouterr().err
    assert "not a regular file" in err and "Traceback" not in err
    (tmp_path / "one.csv").symlink_to("two.csv")
    (tmp_path / "two.csv").symlink_to("one.csv")
    with pytest.raises(InputError, match=r"one\.csv: a symbolic link to a loop of links"):
        locate(str(tmp_path / "one.csv"))
    (tmp_path / "dangling.csv").symlink_to("gone.csv")
    with pytest.raises(InputError, match=r"dangling\.csv: a symbolic link to a missing file"):
        locate(str(tmp_path / "dangling.csv"))
    good = _pairs_file(tmp_path / "deep" / "a b" / "ünï cödé" / "ok file.csv")
    (tmp_path / "link.csv").symlink_to(good)
    assert locate(str(tmp_path / "link.csv")) == tmp_path / "link.csv"
    assert load_input(str(tmp_path / "link.csv")).frame["p_a"].tolist() == [0.7]


def test_an_unreadable_file_is_one_line_with_a_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Tests run as root, so a chmod 000 file is readable: the PermissionError is faked
    where the file's bytes are read. Exit 2, the file named, what to do."""
    path = _pairs_file(tmp_path / "locked.csv")
    real = Path.read_bytes

    def refuse(self: Path) -> bytes:
        if self.name == "locked.csv":
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", refuse)
    out = tmp_path / "audit"
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert "locked.csv: cannot read the file (Permission denied)" in err
    assert "check that you may read it" in err and "Traceback" not in err
    assert main(["audit", str(path), "-o", str(out)]) == 2
    assert "Permission denied" in capsys.readouterr().err
    assert not (out / "report.json").exists()


def test_load_responses_keeps_an_answer_none_and_reads_a_model_na_as_missing(
    tmp_path: Path,
) -> None:
    """A response or prompt "None" is what was written (it was read as missing, and
    refused as no text); a model "NA" is a missing name, refused with a note saying why."""
    path = _responses(tmp_path, prompt=["NA", "q2"], response=["None", "null"])
    got = load_responses(path)
    assert got["prompt"].tolist() == ["NA", "q2"] and got["response"].tolist() == ["None", "null"]
    with pytest.warns(ReaderNote, match=r"read as missing: 'NA' in model \(data row 2\)"):
        with pytest.raises(InputError) as err:
            load_responses(_responses(tmp_path, model=["gpt-4", "NA"]))
    assert (err.value.row, err.value.column, err.value.reason) == (2, "model", "the cell is empty")


def test_an_input_path_longer_than_the_system_allows_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every command's data, a thresholds file and a store: each was an OSError
    traceback (ENAMETOOLONG) with exit 1."""
    deep = tmp_path.joinpath(*["d" * 200] * 25)
    with pytest.raises(InputError, match="path is longer than the system allows"):
        load_input(deep / "pairs.csv")
    out = str(tmp_path / "o.csv")
    for args in (["validate", str(deep / "pairs.csv")],
                 ["audit", str(deep / "pairs.csv")],  # was recuse.audit's own OSError
                 ["metrics", "pairs", str(deep / "pairs.csv")],
                 ["plan", "--bias", "position", "--like", str(deep / "pairs.csv")],
                 ["certify", "apply", str(deep / "t.json"), str(deep / "p.csv"), "--out", out],
                 ["judge", "export", str(deep / "s.db"), "--out", out]):  # fmt: skip
        assert main(args) == 2, args
        err = capsys.readouterr().err
        assert "longer than the system allows" in err and "Traceback" not in err


def test_texts_and_lengths_naming_opposite_answers_as_the_longer_are_said(
    tmp_path: Path,
) -> None:
    """A file whose len_a / len_b are of other texts (swapped in half its rows, as a join
    on the wrong key leaves them): verbosity counted the texts' words and the
    leaderboard's length term read the columns, two lengths, with nothing said. A note
    counts the comparisons whose two lengths name opposite answers as the longer;
    character counts beside texts counted in words, which part on a few close pairs,
    are no such file."""
    import numpy as np

    rng = np.random.default_rng(3)
    n = 40
    words = [rng.integers(10, 80, n), rng.integers(10, 80, n)]

    def text(k: int) -> str:  # k words of 1 to 9 letters
        return " ".join("x" * int(w) for w in rng.integers(1, 10, k))

    texts = [[text(k) for k in side] for side in words]
    swap = np.arange(n) % 2 == 0
    frame = pd.DataFrame(
        {
            "item_id": [f"i{i}" for i in range(n)],
            "prompt_id": [f"p{i}" for i in range(n)],
            "human": "A",
            "judge": "gpt-4",
            "p_a_first": "A",
            "response_a": texts[0],
            "response_b": texts[1],
            "len_a": np.where(swap, words[1], words[0]),
            "len_b": np.where(swap, words[0], words[1]),
        }
    )
    # by hand: opposite where the swapped rows' two answers differ in length
    odd = int((swap & (words[0] != words[1])).sum())
    path = tmp_path / "lengths.csv"
    frame.to_csv(path, index=False)
    (note,) = [x for x in load_input(path).source.notes if "len_a / len_b" in x]
    assert note.startswith(
        f"the texts and len_a / len_b disagree on which answer is longer in {odd} of {n} "
        "comparisons (first: item 'i0')"
    )
    # character counts beside texts counted in words: opposite on close pairs only
    chars = frame.assign(len_a=frame["response_a"].str.len(), len_b=frame["response_b"].str.len())
    by_chars = np.sign(chars["len_a"] - chars["len_b"]).to_numpy()
    assert 0 < int((by_chars * np.sign(words[0] - words[1]) < 0).sum()) < 0.2 * n
    chars.to_csv(path, index=False)
    assert not [x for x in load_input(path).source.notes if "len_a / len_b" in x]


def test_one_comparisons_two_orders_written_as_two_items_are_said(tmp_path: Path) -> None:
    """Another tool's layout: each order of a comparison a row of its own, a and b (texts,
    models, label, verdict) swapped, under two item ids. Each row was read as its own
    comparison, so the judge's self-preference n read 2 × its own pairs (12 for 6) and
    no position bias was measured, with nothing said. A note counts the rows."""
    import json

    rows = []
    for i in range(6):  # gpt-4's answer against claude-v1's, human and judge for gpt-4
        a, b = f"answer {i} of gpt-4", f"answer {i} of claude, longer"
        base = {"prompt_id": f"p{i}", "judge": "gpt-4"}
        rows.append(
            {
                **base,
                "item_id": f"{i}",
                "model_a": "gpt-4",
                "model_b": "claude-v1",
                "response_a": a,
                "response_b": b,
                "human": "A",
                "p_a_first": "A",
            }
        )
        rows.append({**base, "item_id": f"{i}-swapped", "model_a": "claude-v1",
                     "model_b": "gpt-4", "response_a": b, "response_b": a, "human": "B",
                     "p_a_first": "B"})  # fmt: skip
    path = tmp_path / "orders.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    (note,) = [x for x in load_input(path).source.notes if "two orders" in x]
    assert note.startswith("judge 'gpt-4': 12 rows are one comparison's two orders written as")
    assert "first: item '0'" in note
    out = tmp_path / "m.json"
    args = [str(path), "-m", "self_preference_dp", "--n-boot", "50", "--min-n", "1"]
    assert main(["metrics", "pairs", *args, "-o", str(out)]) == 0
    (row,) = json.loads(out.read_text("utf-8"))["results"]
    assert row["n"] == 12  # what the note warns of: 6 comparisons, each counted twice
    # one row per comparison: no note
    pd.DataFrame(rows[::2]).to_csv(path, index=False)
    assert not [x for x in load_input(path).source.notes if "two orders" in x]


def test_pairs_judged_in_one_order_beside_pairs_judged_in_both_are_said(
    tmp_path: Path,
) -> None:
    """A judge that picks the first answer shown 80% of the time, half its pairs judged
    in both orders and half in the first only: the one-order verdicts keep the position
    preference that the two-order mean cancels, and agreement pooled all 300 with
    nothing said. A note says so per judge; a judge with every pair in both orders, or
    every pair in one, gets none."""
    rng = np.random.default_rng(0)
    n = 300
    second = np.where(rng.random(n) < 0.3, 1.0, 0.0)
    frame = pd.DataFrame({"item_id": [f"i{k}" for k in range(n)],
                          "prompt_id": [f"p{k // 3}" for k in range(n)],
                          "model_a": "m1", "model_b": "m2", "judge": "j",
                          "human": rng.integers(0, 2, n).astype(float),
                          "p_a_first": np.where(rng.random(n) < 0.8, 1.0, 0.0),
                          "p_a_second": np.where(np.arange(n) < 150, second, np.nan)})  # fmt: skip
    path = tmp_path / "partial.csv"
    frame.to_csv(path, index=False)
    (note,) = [x for x in load_input(path).source.notes if "one order only" in x]
    assert note.startswith("judge 'j': 150 of 300 pairs have a verdict in one order only, 150")
    assert "--orders first" in note
    # the pooled verdicts: the one-order half reads the judge's first-position picks
    one_order = frame["p_a_second"].isna()
    assert frame.loc[one_order, "p_a_first"].mean() > 0.75
    for whole in (frame.assign(p_a_second=second), frame.assign(p_a_second=np.nan)):
        whole.to_csv(path, index=False)
        assert not [x for x in load_input(path).source.notes if "one order only" in x]


def test_real_files_judged_in_both_orders_get_no_orders_note(
    tmp_path: Path, shared_data: Path
) -> None:
    """LLMBar's MT-Bench set written as a plain file: 10 of its items are another's a and
    b swapped (two annotators' votes on one pair of answers), each judged in both orders,
    so each is a comparison of its own, not one comparison's two orders (mirrored_rows
    named all four judges). Its palm-2 has 1 unparsed verdict in 200 pairs, JudgeBench's
    claude-3-haiku 13 in 270: a one-order verdict moves a mean of theirs by under 0.01, and
    orders_partly_judged spoke of each. A file whose two orders are two rows, and a judge
    whose one-order pairs carry its position preference, are still said (the tests above)."""
    mtbench = registry.load("llmbar-mtbench", data_dir=shared_data)
    path = tmp_path / "llmbar_mtbench.csv"
    mtbench.to_csv(path, index=False)
    assert not [x for x in load_input(path).source.notes if "two orders" in x or "one order" in x]
    judgebench = registry.load("judgebench", data_dir=shared_data)
    text = ["prompt", "response_a", "response_b"]
    judgebench.drop(columns=[c for c in text if c in judgebench]).to_csv(path, index=False)
    assert not [x for x in load_input(path).source.notes if "one order only" in x]
    # the same judge with half its pairs one-order: its position preference shows
    half = judgebench[judgebench["judge"] == "claude-3-haiku-20240307"].copy()
    half.loc[half.index[::2], "p_a_second"] = np.nan
    half.loc[half.index[::2], "status_second"] = "failed"
    half.drop(columns=[c for c in [*text, "p_a"] if c in half]).to_csv(path, index=False)
    (note,) = [x for x in load_input(path).source.notes if "one order only" in x]
    assert note.startswith("judge 'claude-3-haiku-20240307': 141 of 267 pairs have a verdict")


def test_log_perplexities_given_as_perplexities_are_said(tmp_path: Path) -> None:
    """Perplexities (log-perplexity 1.5 ± 0.5 nats) written as their logs, the mean
    negative log-likelihood many tools print: the familiarity analysis took the log again
    and its headline moved from +1.7 (the planted human − judge slope difference +1.5) to
    +2.2, with nothing said. About a sixth of those logs are below 1, which no
    perplexity is: a note says so. The perplexities themselves, whose simulated values dip
    below 1 now and then (0.1%), get none."""
    from recuse.metrics.bootstrap import Resampling
    from recuse.metrics.familiarity import familiarity_bias
    from recuse.simulate.familiarity import PlantedFamiliarity, simulate_familiarity

    sim = simulate_familiarity({"m1": PlantedFamiliarity(judge_slope=-2.0)}, human_slope=-0.5,
                               n_prompts=300, seed=1)  # fmt: skip
    assert sim.true_value("m1") == 1.5
    path, logs = tmp_path / "ppl.csv", tmp_path / "log_ppl.csv"
    sim.pairs.to_csv(path, index=False)
    sim.pairs.assign(ppl_a=np.log(sim.pairs["ppl_a"]), ppl_b=np.log(sim.pairs["ppl_b"])).pipe(
        lambda t: t[(t["ppl_a"] > 0) & (t["ppl_b"] > 0)]  # logs of perplexities above 1
    ).to_csv(logs, index=False)
    boot = Resampling(n_boot=200, seed=0)
    right, wrong = (familiarity_bias(load_input(p).frame, boot=boot).estimate for p in (path, logs))
    assert abs(right - 1.5) < 0.3 and wrong > right + 0.4  # 1.72 and 2.19: silent before
    assert not [x for x in load_input(path).source.notes if "below 1" in x]
    (note,) = [x for x in load_input(logs).source.notes if "below 1" in x]
    assert "perplexities (ppl_a, ppl_b) are below 1" in note
    assert "give exp of them" in note


def test_texts_missing_beside_lengths_are_said(tmp_path: Path, shared_data: Path) -> None:
    """llmbar-mtbench with len_a / len_b (word counts) for every pair and the texts of its
    longest 30% of pairs left out: verbosity counts the texts' words and read gpt-4's
    prefer-longer gap over the 136 pairs left (+0.033), not all 195 (+0.015), with nothing
    said. A note says so; the whole file gets none."""
    from recuse.files import words_in
    from recuse.metrics.bootstrap import Resampling
    from recuse.metrics.verbosity import prefer_longer_gap

    table = registry.load("llmbar-mtbench", data_dir=shared_data)
    table = table.assign(len_a=table["response_a"].map(words_in).astype(float),
                         len_b=table["response_b"].map(words_in).astype(float))  # fmt: skip
    total = table["len_a"] + table["len_b"]
    cut = table.assign(response_a=table["response_a"].where(total <= total.quantile(0.7)))
    whole, part = tmp_path / "whole.csv", tmp_path / "part.csv"
    table.to_csv(whole, index=False)
    cut.to_csv(part, index=False)
    boot = Resampling(n_boot=200, seed=0)
    gaps = [prefer_longer_gap(load_input(p).frame, judge="gpt-4", boot=boot) for p in (whole, part)]
    assert [g.n for g in gaps] == [195, 136]  # the textless pairs left out
    assert not [x for x in load_input(whole).source.notes if "no response_a" in x]
    (note,) = [x for x in load_input(part).source.notes if "no response_a" in x]
    n_textless = int(cut.drop_duplicates("item_id")["response_a"].isna().sum())
    assert note.startswith(f"{n_textless} of 200 comparisons with len_a / len_b have no")
    assert "drop the response_a / response_b columns" in note


def test_labels_every_judge_disagrees_with_are_said(tmp_path: Path, shared_data: Path) -> None:
    """llmbar-mtbench with its labels turned (human = P(b better), as some files write
    it): the four judges agree with the labels 19–29% of the time, and each read a
    material preference for longer answers (gpt-4 +0.39, from +0.015 with the labels as
    written), with nothing said. A note says so; the labels as written get none, nor do
    LLMBar's judges on its Neighbor pairs, where weak judges fall far below chance (built
    to fool them: gpt-3.5-turbo 18%) and gpt-4 stays above it."""
    from recuse.metrics.bootstrap import Resampling
    from recuse.metrics.verbosity import prefer_longer_gap

    table = registry.load("llmbar-mtbench", data_dir=shared_data)
    right, turned = tmp_path / "right.csv", tmp_path / "turned.csv"
    table.to_csv(right, index=False)
    table.assign(human=1 - table["human"]).to_csv(turned, index=False)
    boot = Resampling(n_boot=200, seed=0)
    gaps = [prefer_longer_gap(load_input(p).frame, judge="gpt-4", boot=boot).estimate
            for p in (right, turned)]  # fmt: skip
    assert gaps[0] == pytest.approx(0.015, abs=0.001) and gaps[1] == pytest.approx(0.39, abs=0.01)
    said = "every judge disagrees with the human labels"
    assert not [x for x in load_input(right).source.notes if said in x]
    (note,) = [x for x in load_input(turned).source.notes if said in x]
    assert "'gpt-4' 19% over 200" in note and "'palm-2' 27% over 193 pairs" in note
    neighbor = registry.load("llmbar", data_dir=shared_data)
    neighbor = neighbor[neighbor["task"] == "LLMBar/Adversarial/Neighbor"]
    neighbor.to_csv(right, index=False)
    assert not [x for x in load_input(right).source.notes if said in x]
    # its three judges far below chance alone (18-27%): said, with the caveat
    weak = neighbor[neighbor["judge"].isin(["gpt-3.5-turbo", "gpt-3.5-turbo-0301",
                                            "llama-2-70b-chat"])]  # fmt: skip
    weak.to_csv(right, index=False)
    (note,) = [x for x in load_input(right).source.notes if said in x]
    assert "a set built to fool judges can read so" in note


def test_prompt_ids_holding_different_prompts_are_said(tmp_path: Path, shared_data: Path) -> None:
    """llmbar-mtbench's 75 prompts under 10 ids (two sets' numbered questions in one file
    collide so): the bootstrap resampled 10 clusters, and gpt-3.5-turbo's position bias
    read 0.70 [0.69, 0.72] for [0.67, 0.74], with nothing said. A note says so; the file
    with its own ids, and every other prompt text a line end or a space apart, gets none."""
    from recuse.metrics import first_position_rate
    from recuse.metrics.bootstrap import Resampling

    table = registry.load("llmbar-mtbench", data_dir=shared_data)
    right, collided = tmp_path / "right.csv", tmp_path / "collided.csv"
    spaced = table.assign(
        prompt=table["prompt"].where(table.index % 2 == 0, table["prompt"] + "\r\n")
    )
    spaced.to_csv(right, index=False)
    codes = pd.factorize(table["prompt_id"])[0]
    table.assign(prompt_id=(codes % 10).astype(str)).to_csv(collided, index=False)
    boot = Resampling(n_boot=500, seed=0)
    widths = []
    for path in (right, collided):
        r = first_position_rate(load_input(path).frame, judge="gpt-3.5-turbo", boot=boot)
        widths.append(r.ci_high - r.ci_low)
    assert widths[1] < 0.7 * widths[0]  # 10 clusters: a narrower interval, silently before
    said = "prompt ids hold different prompt texts"
    assert not [x for x in load_input(right).source.notes if "different prompt texts" in x]
    (note,) = [x for x in load_input(collided).source.notes if said in x]
    assert note.startswith("10 prompt ids hold different prompt texts (first: '0', ")


def test_a_probe_tables_bandwagon_question_is_not_a_prompt_id_shared(tmp_path: Path) -> None:
    """The bandwagon probe writes its note into the question, so each base pair's prompt
    id held two texts: every bandwagon probe table read "N prompt ids hold different
    prompt texts ... give each prompt its own id", advice that would unpair the versions
    the probes' bootstrap keeps together. Its rows are left out of that note; ids that
    do collide across base pairs are still said."""
    from recuse.probes import build_probe_table

    base = pd.DataFrame(
        {
            "item_id": [f"b{k}" for k in range(8)],
            "prompt_id": [f"q{k}" for k in range(8)],
            "prompt": [f"Question {k}?" for k in range(8)],
            "response_a": [f"First answer to question {k}." for k in range(8)],
            "response_b": [f"Second answer, to question {k}." for k in range(8)],
        }
    )
    probes = build_probe_table(base, probes=["bandwagon", "padding"], seed=0)
    assert probes.groupby("prompt_id")["prompt"].nunique().max() == 2  # the edited question
    said = "different prompt texts"
    own, collided = tmp_path / "own.csv", tmp_path / "collided.csv"
    probes.assign(judge="j", p_a=0.5).to_csv(own, index=False)
    assert not [x for x in load_input(own).source.notes if said in x]
    two_per_id = probes["base_item"].str[1:].astype(int) // 2  # b0 and b1 under one id
    probes.assign(judge="j", p_a=0.5, prompt_id=two_per_id.map("q{}".format)).to_csv(
        collided, index=False
    )
    (note,) = [x for x in load_input(collided).source.notes if said in x]
    assert note.startswith("4 prompt ids hold different prompt texts (first: 'q0', 2 texts)")


def _preferred_in_a(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with each labelled pair's preferred answer moved to a (its a and b, their
    models, texts, lengths, orders and verdicts swapped where b was preferred)."""
    out, swap = table.copy(), table["human"] < 0.5
    for x, y in (("model_a", "model_b"), ("response_a", "response_b"), ("len_a", "len_b"),
                 ("status_first", "status_second")):  # fmt: skip
        out.loc[swap, x], out.loc[swap, y] = table.loc[swap, y], table.loc[swap, x]
    out.loc[swap, "p_a_first"] = 1 - table.loc[swap, "p_a_second"]  # a shown first, now
    out.loc[swap, "p_a_second"] = 1 - table.loc[swap, "p_a_first"]
    out.loc[swap, "human"] = 1 - table.loc[swap, "human"]
    return out.drop(columns="p_a")


def test_labels_all_on_one_side_beside_one_order_verdicts_are_said(
    tmp_path: Path, shared_data: Path
) -> None:
    """llmbar-mtbench with each preferred answer put in a (as a file of chosen / rejected
    answers invites) and only the order with a shown first: gpt-3.5-turbo, which prefers
    the answer shown first (position 0.70), agreed with the labels 92% of the time, for
    70% with the labels on both sides, with nothing said. A note says so; the same file
    with both orders (averaged, they keep position apart), and the one-order file with
    its labels on both sides, get none."""
    from recuse.metrics.agreement import accuracy
    from recuse.metrics.bootstrap import Resampling

    table = registry.load("llmbar-mtbench", data_dir=shared_data)
    mixed, in_a, both = tmp_path / "mixed.csv", tmp_path / "in_a.csv", tmp_path / "both.csv"
    one_order = {"p_a_second": np.nan, "status_second": None}
    table.drop(columns="p_a").assign(**one_order).to_csv(mixed, index=False)
    _preferred_in_a(table).assign(**one_order).to_csv(in_a, index=False)
    _preferred_in_a(table).to_csv(both, index=False)
    boot = Resampling(n_boot=200, seed=0)
    read = [accuracy(load_input(p).frame, judge="gpt-3.5-turbo", boot=boot).estimate
            for p in (mixed, in_a)]  # fmt: skip
    assert read == [pytest.approx(0.70, abs=0.01), pytest.approx(0.92, abs=0.01)]
    said = "every labelled pair but"
    assert not [x for p in (mixed, both) for x in load_input(p).source.notes if said in x]
    (note,) = [x for x in load_input(in_a).source.notes if said in x]
    assert note.startswith("every labelled pair but 0 of 200 prefers a, the answer p_a_first")


def test_one_judge_below_chance_on_a_set_built_to_fool_it_is_not_read_as_turned_labels(
    tmp_path: Path, shared_data: Path
) -> None:
    """LLMBar's adversarial GPTInst pairs judged by gpt-3.5-turbo alone, labels as
    written: the judge gives the preferred answer 29% of the win (the set is built to
    fool it), and the note said every judge disagrees with the labels, so they likely
    say P(b better) — of a right file. One judge alone is not read so; two judges below
    chance (gpt-3.5-turbo and llama-2-70b-chat) still are, with the caveat."""
    table = registry.load("llmbar", data_dir=shared_data)
    gptinst = table[table["task"] == "LLMBar/Adversarial/GPTInst"]
    said = "every judge disagrees with the human labels"
    path = tmp_path / "one.csv"
    gptinst[gptinst["judge"] == "gpt-3.5-turbo"].to_csv(path, index=False)
    assert not [x for x in load_input(path).source.notes if said in x]
    gptinst[gptinst["judge"].isin(["gpt-3.5-turbo", "llama-2-70b-chat"])].to_csv(path, index=False)
    (note,) = [x for x in load_input(path).source.notes if said in x]
    assert "'gpt-3.5-turbo' 29% over 92" in note and "'llama-2-70b-chat' 25% over 92" in note


def test_prompt_texts_apart_only_in_white_space_are_one_prompt(
    tmp_path: Path, shared_data: Path
) -> None:
    """llmbar-mtbench with every other row's prompt written by a tool that doubles a space,
    ends each line with a space or writes it in Unicode's NFD form: one prompt per id, and
    the note said 46 (doubled space) or 11 (spaces at line ends) ids hold different
    prompt texts. None now; ids that do collide are still said."""
    import unicodedata

    table = registry.load("llmbar-mtbench", data_dir=shared_data)
    odd = table.index % 2 == 1
    said = "different prompt texts"
    path = tmp_path / "spaced.csv"
    for write in (lambda s: s.replace(" ", "  ", 1),
                  lambda s: "\n".join(line + " " for line in s.split("\n")),
                  lambda s: unicodedata.normalize("NFD", s)):  # fmt: skip
        table.assign(prompt=table["prompt"].where(~odd, table["prompt"].map(write))).to_csv(
            path, index=False
        )
        assert not [x for x in load_input(path).source.notes if said in x]
    codes = pd.factorize(table["prompt_id"])[0]
    table.assign(prompt_id=(codes % 10).astype(str)).to_csv(path, index=False)
    assert [x for x in load_input(path).source.notes if said in x]


def test_perplexities_given_as_per_token_probabilities_are_said_so(tmp_path: Path) -> None:
    """Perplexities written as per-token probabilities (1 / perplexity, every value at
    most 1): read as perplexities their log is minus the log-perplexity, and the planted
    familiarity bias of +1.5 reads with its sign turned; the note told to give exp of
    them, which is no perplexity either. It names 1 / them too where no value is above 1,
    and not where some are (log-perplexities)."""
    from recuse.metrics.bootstrap import Resampling
    from recuse.metrics.familiarity import familiarity_bias
    from recuse.simulate.familiarity import PlantedFamiliarity, simulate_familiarity

    sim = simulate_familiarity({"m1": PlantedFamiliarity(judge_slope=-2.0)}, human_slope=-0.5,
                               n_prompts=300, seed=1)  # fmt: skip
    probs, logs = tmp_path / "probs.csv", tmp_path / "logs.csv"
    sim.pairs.assign(ppl_a=1 / sim.pairs["ppl_a"], ppl_b=1 / sim.pairs["ppl_b"]).to_csv(
        probs, index=False
    )
    sim.pairs.assign(ppl_a=np.log(sim.pairs["ppl_a"]), ppl_b=np.log(sim.pairs["ppl_b"])).pipe(
        lambda t: t[(t["ppl_a"] > 0) & (t["ppl_b"] > 0)]
    ).to_csv(logs, index=False)
    read = familiarity_bias(load_input(probs).frame, boot=Resampling(n_boot=200, seed=0))
    assert read.estimate < -1.0  # the planted +1.5, turned
    (note,) = [x for x in load_input(probs).source.notes if "below 1" in x]
    assert "per-token probabilities" in note and "give 1 / them" in note
    (note,) = [x for x in load_input(logs).source.notes if "below 1" in x]
    assert "give exp of them" in note and "give 1 / them" not in note


def test_empty_answers_written_to_a_csv_are_not_texts_left_out(
    tmp_path: Path, shared_data: Path
) -> None:
    """HH-RLHF's 4 comparisons with an empty answer (len 0) and 150 others, written as a
    CSV: the empty answers are empty cells, read back as missing, and the note said 4 of
    154 comparisons have no text — give every text, which they are. Not said now; a text
    of length 5 left out still is."""
    table = registry.load("hh-rlhf", data_dir=shared_data)
    empty = (table["response_a"].str.strip() == "") | (table["response_b"].str.strip() == "")
    assert int(empty.sum()) == 4
    part = pd.concat([table[empty], table[~empty].head(150)])
    path = tmp_path / "hh.csv"
    part.to_csv(path, index=False)
    said = "have no response_a or response_b text"
    assert not [x for x in load_input(path).source.notes if said in x]
    cut = part.assign(response_a=part["response_a"].where(part["len_a"] != 5))
    cut.to_csv(path, index=False)
    n_cut = int(((part["len_a"] == 5) & (part["response_a"].str.strip() != "")).sum())
    (note,) = [x for x in load_input(path).source.notes if said in x]
    assert note.startswith(f"{n_cut} of 154 comparisons")


def test_two_orders_written_as_rows_of_their_own_are_not_one_order(
    tmp_path: Path, shared_data: Path
) -> None:
    """llmbar-mtbench with each preferred answer in a and each judge's two orders written
    as two items (one row with p_a_first only, 'q/first', one with p_a_second only,
    'q/second'), as a harness logging each call as a comparison writes them: position
    cancels as in the two-order file (gpt-3.5-turbo agrees 71% either way), and the note
    said every judge judged most of its pairs in the first order only. Not said now; the
    first-order rows alone still are."""
    from recuse.metrics.agreement import accuracy
    from recuse.metrics.bootstrap import Resampling

    table = _preferred_in_a(registry.load("llmbar-mtbench", data_dir=shared_data))
    first = table.assign(item_id=table["item_id"] + "/first", p_a_second=np.nan,
                         status_second=None)  # fmt: skip
    second = table.assign(item_id=table["item_id"] + "/second", p_a_first=np.nan,
                          status_first=None)  # fmt: skip
    rows, both = tmp_path / "rows.csv", tmp_path / "both.csv"
    pd.concat([first, second]).to_csv(rows, index=False)
    table.to_csv(both, index=False)
    boot = Resampling(n_boot=50, seed=0)
    read = [accuracy(load_input(p).frame, judge="gpt-3.5-turbo", boot=boot).estimate
            for p in (rows, both)]  # fmt: skip
    assert read[0] == pytest.approx(read[1], abs=1e-12) and read[0] == pytest.approx(0.71, abs=0.01)
    said = "every labelled pair but"
    assert not [x for x in load_input(rows).source.notes if said in x]
    first.to_csv(rows, index=False)
    assert [x for x in load_input(rows).source.notes if said in x]
