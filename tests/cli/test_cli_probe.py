"""`recuse probe` through the CLI: probe table judged, exported, audited."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from recuse.cli import main
from recuse.testing.standin import StandIn


def test_probe_then_export_then_audit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "pairs.csv"
    pd.DataFrame(
        {
            "item_id": [f"i{k}" for k in range(24)],
            "prompt_id": [f"q{k}" for k in range(24)],
            "prompt": [f"Question {k}?" for k in range(24)],
            "response_a": [f"Answer one to {k}." for k in range(24)],
            "response_b": [f"Answer two to {k}, longer." for k in range(24)],
            "human": "a",
        }
    ).to_csv(src, index=False)
    store, table, report = tmp_path / "s.db", tmp_path / "probes.csv", tmp_path / "r"
    with StandIn() as server:
        code = main(["probe", "--data", str(src), "--out", str(store), "--base-url",
                     server.base_url, "--model", "gpt-4o", "--probe", "padding,authority",
                     "--limit", "20", "--no-progress"])  # fmt: skip
    assert code == 0
    assert (
        "20 base pairs; versions judged: authority 20, original 20, padding 20, placebo 20"
        in capsys.readouterr().out
    )
    assert main(["judge", "export", str(store), "--out", str(table)]) == 0
    exported = pd.read_csv(table)
    assert set(exported["probe"]) == {"original", "placebo", "padding", "authority"}
    assert main(["audit", str(table), "--only", "probes", "--out", str(report)]) == 0
    d = json.loads((report / "report.json").read_text())
    keys = {f["bias"] for r in d["summary"] for f in r["findings"]}
    assert keys == {"probe_padding", "probe_authority"}
    assert main(["probe", "--data", str(src), "--out", str(store), "--probe", "flattery"]) == 2


def test_self_recognition_through_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "pairs.csv"
    n = 24
    pd.DataFrame(
        {
            "item_id": [f"i{k}" for k in range(n)],
            "prompt": [f"Question {k}?" for k in range(n)],
            "response_a": [f"Answer one to {k}." for k in range(n)],
            "response_b": [f"Answer two to {k}, longer." for k in range(n)],
            "model_a": ["gpt-4o" if k % 3 else "m2" for k in range(n)],
            "model_b": ["m1" if k % 3 else "m3" for k in range(n)],  # 8 pairs hold no own answer
        }
    ).to_csv(src, index=False)
    store, table, report = tmp_path / "s.db", tmp_path / "probes.csv", tmp_path / "r"
    args = ["probe", "--data", str(src), "--out", str(store), "--model", "gpt-4o", "--no-progress"]
    with StandIn() as server:
        code = main(
            [*args, "--base-url", server.base_url, "--probe", "self-recognition,attribution"]
        )
        out, err = capsys.readouterr()
        assert code == 0, err
        assert (
            "attribution-other 24, attribution-self 24, original 24, placebo 24, "
            "self-recognition 16" in out
        )
        # a judge whose answers are not in the data: one clear line, exit 2
        fresh = tmp_path / "fresh.db"
        assert main([*args[:4], str(fresh), *args[5:], "--base-url", server.base_url,
                     "--judge-id", "claude", "--probe", "self-recognition"]) == 2  # fmt: skip
        assert "no pair holds an answer by 'claude'" in capsys.readouterr().err
        assert not fresh.exists()  # nothing written
    assert main(["judge", "export", str(store), "--out", str(table)]) == 0
    assert main(["audit", str(table), "--only", "self-recognition", "--out", str(report),
                 "--allow-unknown-models"]) == 0  # fmt: skip
    d = json.loads((report / "report.json").read_text())
    (finding,) = [f for r in d["summary"] for f in r["findings"] if f["bias"] == "self_recognition"]
    assert finding["judge"] == "gpt-4o" and finding["n"] == 16
    # the probes and self-recognition as two runs into one store: the original rows the
    # two share are stored last by the recognition run, with the judge's own side as
    # treated; the export still orients them as the edits (flip rates stay right)
    two, table2 = tmp_path / "two.db", tmp_path / "two.csv"
    with StandIn() as server:
        base = [*args[:4], str(two), *args[5:], "--base-url", server.base_url]
        assert main([*base, "--probe", "authority"]) == 0
        assert main([*base, "--probe", "self-recognition"]) == 0
    capsys.readouterr()
    assert main(["judge", "export", str(two), "--out", str(table2)]) == 0, capsys.readouterr().err
    both = pd.read_csv(table2)
    one = pd.read_csv(table)
    cols = ["item_id", "treated", "p_a_first", "p_a_second"]
    same = both[both["probe"] != "self-recognition"].merge(one, on="item_id", suffixes=("", "_1"))
    assert len(same) == 48  # the 24 originals and 24 placebos both stores hold
    edited = one[one["probe"] == "attribution-self"].set_index("base_item")["treated"]
    originals = both[both["probe"] == "original"].set_index("base_item")["treated"]
    assert originals.equals(edited.reindex(originals.index))
    assert set(cols) <= set(both.columns)


def test_verbosity_probes_with_a_rewriter_through_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "pairs.csv"
    n = 12
    pd.DataFrame(
        {
            "item_id": [f"i{k}" for k in range(n)],
            "prompt": [f"Question {k}?" for k in range(n)],
            "response_a": [f"Answer one to {k}." for k in range(n)],
            "response_b": [f"Answer two to {k}, longer." for k in range(n)],
        }
    ).to_csv(src, index=False)
    store, table, report = tmp_path / "s.db", tmp_path / "probes.csv", tmp_path / "r"
    with StandIn() as server:
        args = ["probe", "--data", str(src), "--out", str(store), "--model", "gpt-4o",
                "--base-url", server.base_url, "--probe", "verbosity", "--rewriter", "gpt-4o",
                "--rewriter-base-url", server.base_url, "--no-progress"]  # fmt: skip
        assert main(args) == 0
        out = capsys.readouterr().out
        assert "concise rewrites by gpt-4o: 12 rewrites: 0 already stored, 12 ok" in out
        assert "verbose rewrites by gpt-4o: 12 rewrites: 0 already stored, 12 ok" in out
        assert "concise 12, original 12, padding 12, placebo 12, verbose 12" in out
        assert main(args) == 0  # resumed: nothing is rewritten or judged again
        again = capsys.readouterr().out
        assert "12 rewrites: 12 already stored" in again
        assert "120 judgments: 120 already stored" in again
    assert main(["judge", "export", str(store), "--out", str(table)]) == 0
    assert main(["audit", str(table), "--only", "probes", "--out", str(report)]) == 0
    d = json.loads((report / "report.json").read_text())
    keys = {f["bias"] for r in d["summary"] for f in r["findings"]}
    assert keys == {"probe_concise", "probe_verbose", "probe_verbosity", "probe_padding"}


def test_validate_reads_a_probe_table_as_the_audit_does(tmp_path: Path) -> None:
    from recuse.cli.validate import supported_analyses
    from recuse.data.columns import IGNORED
    from recuse.data.plain_tables import read_table
    from recuse.roster import Roster

    src = tmp_path / "probes.csv"
    pd.DataFrame(
        {
            "item_id": ["i#original", "i#self-recognition", "j#original", "j#authority"],
            "prompt_id": ["q1", "q1", "q2", "q2"],
            "base_item": ["i", "i", "j", "j"],
            "probe": ["original", "self-recognition", "original", "authority"],
            "treated": ["a", "a", "b", "b"],
            "model_a": ["gpt-4o", "gpt-4o", "m1", "m1"],
            "model_b": ["m1", "m1", "m2", "m2"],
            "human": [None, None, None, None],
            "judge": "gpt-4o",
            "p_a_first": [0.6, 0.7, 0.4, 0.5],
            "p_a_second": [0.5, 0.6, 0.3, 0.4],
        }
    ).to_csv(src, index=False)
    table = read_table(src, table="pairs", unknown_models="keep")
    assert table.attrs[IGNORED] == {}  # the probe columns are not "verdict-like"
    reasons = dict(supported_analyses(table, "pairs", Roster.builtin()))
    assert reasons["probes"] is None and reasons["self-recognition"] is None


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [("--limit", "-5", "--limit must be 0 (all) or more"),
     ("--rewrite-tokens", "0", "--rewrite-tokens must be 1 or more"),
     # the placebo alone or nothing: refused before the store (it was created empty)
     ("--probe", "placebo", "--probe: name at least one probe (the placebo comes with"),
     ("--probe", ",", "--probe: name at least one probe"),
     ("--probe", "flattery", "--probe: unknown probe 'flattery'"),
     # judge's counts, which probe did not check: --timeout nan was anyio's traceback
     # (exit 1), --timeout 0 and --concurrency 0 failed every request, all after the
     # store was made; a negative seed was refused after the judge was asked its model
     ("--timeout", "nan", "--timeout must be a number of seconds above 0; got nan"),
     ("--timeout", "0", "--timeout must be a number of seconds above 0; got 0"),
     ("--timeout", "1e400", "--timeout must be a number of seconds above 0; got inf"),
     ("--concurrency", "0", "--concurrency must be 1 or more; got 0"),
     ("--batch-size", "-1", "--batch-size must be 0 (the default for the device) or more"),
     ("--seed", "-1", "--seed must be 0 or more; got -1")],
)  # fmt: skip
def test_bad_options_are_one_line_and_write_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, value: str, message: str
) -> None:
    src = tmp_path / "pairs.csv"
    pd.DataFrame(
        {"item_id": ["i"], "prompt": ["Q?"], "response_a": ["a"], "response_b": ["b"]}
    ).to_csv(src, index=False)
    store = tmp_path / "s.db"
    args = ["probe", "--data", str(src), "--out", str(store)]
    probes = [] if option == "--probe" else ["--probe", "verbosity"]  # given once
    assert main([*args, *probes, option, value]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not store.exists()


def test_judged_pairs_and_probes_in_one_store_export_and_audit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`recuse judge` and `recuse probe` into one store: the plain judgments have no probe
    columns and stay plain pairs (the export was refused as 'empty probe')."""
    src = tmp_path / "pairs.csv"
    n = 12
    pd.DataFrame(
        {
            "item_id": [f"i{k}" for k in range(n)],
            "prompt_id": [f"q{k}" for k in range(n)],
            "prompt": [f"Question {k}?" for k in range(n)],
            "response_a": [f"Answer one to {k}." for k in range(n)],
            "response_b": [f"Answer two to {k}, longer." for k in range(n)],
            "model_a": "gpt-4o",
            "model_b": "m1",
        }
    ).to_csv(src, index=False)
    store, table = tmp_path / "s.db", tmp_path / "all.csv"
    common = ["--data", str(src), "--out", str(store), "--model", "gpt-4o", "--no-progress"]
    with StandIn() as server:
        assert main(["judge", *common, "--base-url", server.base_url,
                     "--allow-unknown-models"]) == 0  # fmt: skip
        assert main(["probe", *common, "--base-url", server.base_url, "--probe",
                     "padding,self-recognition"]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["judge", "export", str(store), "--out", str(table)]) == 0, capsys.readouterr()
    exported = pd.read_csv(table)
    assert exported["probe"].isna().sum() == n  # the plain judgments
    assert set(exported["probe"].dropna()) == {"original", "placebo", "padding", "self-recognition"}
    report = tmp_path / "r"
    assert main(["audit", str(table), "--only", "probes,position", "--out", str(report),
                 "--allow-unknown-models"]) == 0  # fmt: skip
    d = json.loads((report / "report.json").read_text())
    found = {(f["bias"], f["n"]) for r in d["summary"] for f in r["findings"]}
    assert ("probe_padding", n) in found
    # position reads the plain pairs and the probe table's originals: 2 n comparisons
    assert ("position", 2 * n) in found


def test_failed_judgments_exit_1_with_the_rerun_hint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "pairs.csv"
    n = 6
    pd.DataFrame(
        {
            "item_id": [f"i{k}" for k in range(n)],
            "prompt": [f"Question {k}?" for k in range(n)],
            "response_a": [f"Answer one to {k}." for k in range(n)],
            "response_b": [f"Answer two to {k}, longer." for k in range(n)],
        }
    ).to_csv(src, index=False)
    store = tmp_path / "s.db"
    args = ["probe", "--data", str(src), "--out", str(store), "--model", "gpt-4o", "--probe",
            "padding", "--max-attempts", "1", "--no-progress"]  # fmt: skip
    # 6 pairs x (original, placebo, padding) x 2 orders = 36 judgments, one request each
    with StandIn(faults={"500": 0.3}, seed=1) as server:
        code = main([*args, "--base-url", server.base_url])
        failed = server.served["500"]
    cap = capsys.readouterr()
    assert code == 1 and 0 < failed < 36
    assert f"36 judgments: 0 already stored, {36 - failed} ok, 0 unparsed, {failed} failed" in (
        cap.out
    )
    assert "failed x" in cap.out and "HTTP 500" in cap.out  # the reasons
    # the versions are not judged yet: it read "versions judged: …; next: … export"
    assert (
        "6 base pairs; versions to judge: original 6, padding 6, placebo 6; "
        f"{failed} of their 36 judgments not stored yet (above); next, once they are: "
        "recuse judge export"
    ) in cap.out
    assert "versions judged" not in cap.out
    assert f"recuse: {failed} judgments failed after retries" in cap.err
    assert "run the same command again" in cap.err
    with StandIn() as server:
        code = main([*args, "--base-url", server.base_url])
        resent = server.requests
    cap = capsys.readouterr()
    assert code == 0 and resent == failed and cap.err == ""
    assert "6 base pairs; versions judged: original 6, padding 6, placebo 6; next: " in cap.out


def test_probe_reads_a_peer_file_with_map_and_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`recuse probe --data` takes --map and --values as `recuse judge` does: a file with
    another tool's column names and a label 'neither' is probed as the same pairs in
    recuse's columns. The command had neither option, and the error for such a file
    advised `--map`, which it refused."""
    n = 12
    ours = pd.DataFrame(
        {
            "item_id": [f"i{k}" for k in range(n)],
            "prompt": [f"Question {k}?" for k in range(n)],
            "response_a": [f"Answer one to {k}." for k in range(n)],
            "response_b": [f"Answer two to {k}, longer." for k in range(n)],
            "human": [("a", "b", "tie")[k % 3] for k in range(n)],
        }
    )
    peer = ours.rename(columns={"item_id": "id", "human": "winner"})
    peer["winner"] = peer["winner"].replace({"tie": "neither"})
    src, peer_src = tmp_path / "ours.csv", tmp_path / "peer.csv"
    ours.to_csv(src, index=False)
    peer.to_csv(peer_src, index=False)
    lines = []
    with StandIn() as server:
        for path, extra in ((src, []), (peer_src, ["--map", "id=item_id,winner=human",
                                                   "--values", "winner:neither=0.5"])):  # fmt: skip
            store = tmp_path / f"{path.stem}.db"
            code = main(["probe", "--data", str(path), "--out", str(store), "--base-url",
                         server.base_url, "--model", "gpt-4o", "--probe", "padding",
                         "--no-progress", *extra])  # fmt: skip
            out, err = capsys.readouterr()
            assert code == 0, err
            lines.append(next(ln for ln in out.splitlines() if "base pairs" in ln))
            table = tmp_path / f"{path.stem}.csv"
            assert main(["judge", "export", str(store), "--out", str(table)]) == 0
    assert (
        lines[0].split("; next")[0]
        == "12 base pairs; versions judged: original 12, padding 12, placebo 12"
    )
    assert lines[1].split("; next")[0] == lines[0].split("; next")[0]
    exported = [
        pd.read_csv(tmp_path / f"{p}.csv").sort_values(["item_id", "judge"])
        for p in ("ours", "peer")
    ]
    cols = ["item_id", "base_item", "probe", "p_a_first", "p_a_second"]
    pd.testing.assert_frame_equal(
        exported[0][cols].reset_index(drop=True), exported[1][cols].reset_index(drop=True)
    )


def test_probe_counts_verdicts_whose_p_a_is_bounded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the server's top 20 lists A, " A" and B, not " B" (as `recuse judge`'s test): the
    # probe's verdicts are bounded as the judge's are, and it says so (before: nothing)
    probs = {"A": 0.30, " A": 0.02, "B": 0.01, " B": 0.004, "C": 0.006}
    planted = {t: math.log(p) for t, p in (probs | {f"f{i}": 0.03 for i in range(17)}).items()}
    src = tmp_path / "pairs.csv"
    pd.DataFrame(
        {
            "item_id": [f"i{k}" for k in range(6)],
            "prompt": [f"Question {k}?" for k in range(6)],
            "response_a": [f"Answer one to {k}." for k in range(6)],
            "response_b": [f"Answer two to {k}, longer." for k in range(6)],
            "model_a": "m",
            "model_b": "other",
        }
    ).to_csv(src, index=False)
    with StandIn(token_ids="ignored", planted=planted) as server:
        code = main(["probe", "--data", str(src), "--out", str(tmp_path / "s.db"),
                     "--base-url", server.base_url, "--model", "m", "--probe", "padding",
                     "--no-progress"])  # fmt: skip
    said = capsys.readouterr().out
    assert code == 0
    # 6 pairs x 3 versions (original, placebo, padding) x 2 orders, each bounded
    assert "36 ok" in said
    assert (
        "verdicts read from a server's top-k that lists a spelling of A or B without its "
        "twin (' A' without ' B'): 36 of 36 verdicts;"
    ) in said
