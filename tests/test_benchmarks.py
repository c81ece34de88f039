"""The benchmarks' targets: each printed with its value, a missed one exits 1."""

from __future__ import annotations

import ast
import math
import re
import shlex
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))

from _targets import SCALE_ENV, Targets  # noqa: E402


def test_a_missed_target_exits_1_and_names_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(SCALE_ENV, raising=False)
    t = Targets()
    assert t.at_least("speed-up", 25.0, 20.0, "x", scaled=True)
    assert not t.at_most("wall time", 5.5, 5.0, " s", scaled=True)
    assert t.within("coverage", 0.88, 0.85, 0.95, scaled=True)
    assert not t.at_least("ratio", float("nan"), 0.9, scaled=True)  # a NaN never passes
    printed = capsys.readouterr().out
    assert "target: wall time 5.5 s <= 5 s — MISSED" in printed
    assert "target: speed-up 25x >= 20x — met" in printed
    with pytest.raises(SystemExit) as exc:
        t.finish()
    assert str(exc.value).startswith("FAILED: 2 of 4 targets missed: wall time 5.5 s")


def test_all_met_exits_normally(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(SCALE_ENV, raising=False)
    t = Targets()
    t.at_least("ratio", 0.95, 0.9, scaled=True)
    t.finish()
    assert "all 1 targets met" in capsys.readouterr().out


def test_the_scale_makes_every_target_harder(monkeypatch: pytest.MonkeyPatch) -> None:
    """RECUSE_BENCH_TARGET_SCALE=10: at least x10, at most /10, a range 10x narrower —
    the same measurements that pass at scale 1 fail."""
    monkeypatch.setenv(SCALE_ENV, "10")
    t = Targets()
    assert not t.at_least("speed-up", 25.0, 20.0, scaled=True)  # needs 200
    assert not t.at_most("wall time", 4.0, 5.0, scaled=True)  # needs 0.5
    assert not t.within("coverage", 0.88, 0.85, 0.95, scaled=True)  # needs 0.895-0.905
    assert t.within("coverage", 0.9, 0.85, 0.95, scaled=True)
    with pytest.raises(SystemExit, match=r"3 of 4 targets missed \(targets scaled by 10\)"):
        t.finish()
    monkeypatch.setenv(SCALE_ENV, "fast")
    with pytest.raises(SystemExit, match="must be a positive number, got 'fast'"):
        Targets()


def test_the_scale_leaves_correctness_checks_as_they_are(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """scaled=False (a correctness check): the scale moves neither end, so at scale 10
    the same answer still passes and a wrong one still fails at the unscaled bound."""
    monkeypatch.setenv(SCALE_ENV, "10")
    t = Targets()
    assert t.at_least("same answers (1 = yes)", 1.0, 1.0, scaled=False)  # would need 10
    assert t.at_most("max |difference|", 5e-9, 1e-8, scaled=False)  # would need 1e-9
    assert not t.at_most("max |difference|", 2e-8, 1e-8, scaled=False)
    assert t.within("coverage", 0.88, 0.85, 0.95, scaled=False)  # would need 0.895-0.905
    assert not t.at_least("speed-up", 25.0, 20.0, scaled=True)  # a timing target is still scaled
    assert "1 >= 1 [correctness, not scaled] — met" in capsys.readouterr().out
    with pytest.raises(SystemExit, match=r"2 of 5 targets missed \(targets scaled by 10\)"):
        t.finish()


def test_a_raised_scale_fails_the_timing_targets_while_the_counts_still_agree() -> None:
    """certify_apply at a small size under RECUSE_BENCH_TARGET_SCALE=1000 exits 1 on its
    speed and growth targets while its identity check (the same counts as the old
    lookup and pandas) is still met: the scale no longer touches correctness."""
    import os
    import subprocess

    env = {**os.environ, SCALE_ENV: "1000"}
    src = str(BENCH.parent / "src")
    env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "certify_apply.py", "--items", "20000", "--repeat", "1"],
        cwd=BENCH,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    lines = [x for x in done.stdout.splitlines() if x.startswith("target: ")]
    same = [x for x in lines if "the same counts" in x]
    assert len(same) == 1 and same[0].endswith("[correctness, not scaled] — met"), lines
    timing = [x for x in lines if x not in same]
    assert timing and all(x.endswith("— MISSED") for x in timing), lines
    assert "targets scaled by 1000" in done.stderr


def test_a_check_must_say_whether_it_is_scaled(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new check left unmarked is refused (TypeError), not taken as a timing target:
    a correctness check scaled by default would fail at RECUSE_BENCH_TARGET_SCALE=1000
    whatever the code does, so that run would exit 1 without showing the timing target
    fail."""
    monkeypatch.setenv(SCALE_ENV, "1000")
    t = Targets()
    for check in (
        lambda: t.at_least("same answers (1 = yes)", 1.0, 1.0),
        lambda: t.at_most("max |difference|", 0.0, 1e-8),
        lambda: t.within("coverage", 0.9, 0.85, 0.95),
    ):
        with pytest.raises(TypeError, match="scaled"):
            check()
    assert t.checked == 0 and not t.missed


def test_every_check_in_the_benchmarks_says_whether_it_is_scaled() -> None:
    """Every at_least / at_most / within call in benchmarks/ passes scaled=True or
    scaled=False as a literal, so which kind each check is can be read in the source
    (and a call the runs do not reach still cannot default to either)."""
    found = 0
    for path in sorted(BENCH.glob("*.py")):
        if path.name == "_targets.py":
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("at_least", "at_most", "within")
            ):
                continue
            found += 1
            kinds = [k.value for k in node.keywords if k.arg == "scaled"]
            assert len(kinds) == 1, f"{path.name}:{node.lineno} does not say scaled="
            assert isinstance(kinds[0], ast.Constant) and isinstance(kinds[0].value, bool), (
                f"{path.name}:{node.lineno}"
            )
    assert found >= 40


def test_every_benchmark_checks_its_targets() -> None:
    """Each script in benchmarks/ builds Targets and ends with finish(): none can print a
    missed target and exit 0."""
    scripts = sorted(p for p in BENCH.glob("*.py") if not p.name.startswith("_"))
    assert len(scripts) >= 11
    for path in scripts:
        tree = ast.parse(path.read_text("utf-8"))
        calls = {
            node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
        }
        assert {"Targets", "finish"} <= calls, path.name
        assert "(target >=" not in path.read_text("utf-8"), path.name  # printed, unchecked


def test_the_coverage_floor_is_the_binomial_quantile_over_the_checks() -> None:
    """A coverage of exactly the target reads under the floor in one check with
    probability at most false_miss / checks, and at the floor itself with more (the
    binomial sums worked out here by hand)."""
    from _targets import coverage_floor

    def below(k: int, n: int, p: float) -> float:  # P(X < k), X ~ Binomial(n, p)
        log = math.log
        return sum(
            math.exp(
                math.lgamma(n + 1) - math.lgamma(x + 1) - math.lgamma(n - x + 1)
                + x * log(p) + (n - x) * log(1 - p)
            )
            for x in range(k)
        )  # fmt: skip

    for target, reps, checks in ((0.85, 400, 8), (0.80, 10, 8), (0.85, 2000, 8), (0.9, 50, 1)):
        floor = coverage_floor(target, reps, checks=checks)
        k = round(floor * reps)
        assert below(k, reps, target) <= 0.01 / checks < below(k + 1, reps, target)
    assert coverage_floor(0.85, 400, checks=8) == 0.795
    # more tables, a floor nearer the target; more checks, a lower one
    assert coverage_floor(0.85, 100, checks=8) < coverage_floor(0.85, 400, checks=8) < 0.85
    assert coverage_floor(0.85, 400, checks=20) < coverage_floor(0.85, 400, checks=8)


def test_the_steady_rate_leaves_out_the_first_wave() -> None:
    """judge_http's steady state: a first wave of 32 at once, then one arrival every
    1/640 s, reads 640 per second whatever the first wave's delay."""
    from judge_http import steady_rate

    later = [1.0 + k / 640 for k in range(1, 400)]
    assert steady_rate([0.0] * 32 + later, 32) == pytest.approx(640.0)
    assert steady_rate([0.9] * 32 + later, 32) == pytest.approx(640.0)
    assert math.isnan(steady_rate([0.0] * 33, 32))


def test_the_slowed_client_spends_the_cpu_it_is_told() -> None:
    """judge_http --slow-ms: ours spends that much more CPU per request on its event
    loop (a spin, not a sleep, which would leave the CPU to others): the regression a
    failing run stands for."""
    import asyncio
    import time

    from judge_http import SlowedBackend

    from recuse.judging.protocols import Message, Prompt
    from recuse.testing.standin import StandIn

    prompts = [Prompt((Message("user", f"Which is better, {k}?"),), prefix="[[") for k in range(4)]
    with StandIn() as server:
        backend = SlowedBackend(server.base_url, model="m", slow=0.05, verdict_token_ids=False)
        c0, t0 = time.process_time(), time.perf_counter()
        out = asyncio.run(backend.next_token_logprobs(prompts))
        cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    assert len(out) == 4 and all(isinstance(d, dict) and d for d in out)
    assert cpu >= 4 * 0.05  # CPU spent, not slept
    assert wall >= 4 * 0.05


def test_every_quick_benchmark_exists_and_knows_its_options() -> None:
    """Each entry of the Makefile's BENCH_QUICK names a script in benchmarks/ and only
    options that script defines (a renamed option would break make bench-quick)."""
    makefile = (BENCH.parent / "Makefile").read_text("utf-8")
    block = makefile.split("BENCH_QUICK = \\\n", 1)[1].split("\n\n", 1)[0]
    entries = re.findall(r'"([^"]+)"', block)
    assert len(entries) >= 11
    for entry in entries:
        script, *args = shlex.split(entry)
        source = (BENCH / script).read_text("utf-8")
        for flag in (a for a in args if a.startswith("--")):
            assert f'"{flag}"' in source, (script, flag)


def test_a_benchmark_that_names_its_quick_size_is_in_bench_quick_at_it() -> None:
    """A script whose docstring says ``make bench-quick`` runs it (at some options) is in
    the Makefile's BENCH_QUICK with those options, and one that says it is not in
    ``make bench-quick`` is absent: the docstring is what a reader of the script sees."""
    makefile = (BENCH.parent / "Makefile").read_text("utf-8")
    block = makefile.split("BENCH_QUICK = \\\n", 1)[1].split("\n\n", 1)[0]
    entries = {shlex.split(e)[0]: shlex.split(e)[1:] for e in re.findall(r'"([^"]+)"', block)}
    claims = 0
    for path in sorted(p for p in BENCH.glob("*.py") if not p.name.startswith("_")):
        doc = " ".join((ast.get_docstring(ast.parse(path.read_text("utf-8"))) or "").split())
        for said in re.findall(r"``make bench-quick`` runs (?:it at )?``([^`]+)``", doc):
            claims += 1
            assert entries.get(path.name) == shlex.split(said), (path.name, said)
        if "Not in ``make bench-quick``" in doc:
            claims += 1
            assert path.name not in entries, path.name
    assert claims >= 2


def test_the_docs_tables_list_the_quick_runs_and_every_benchmark_s_targets() -> None:
    """docs/benchmarks.md: the "What make bench-quick runs" table has a row (its six
    cells) for each script in the Makefile's BENCH_QUICK and no other, and the targets
    table (benchmark | targets) one row for every script in benchmarks/."""
    docs = (BENCH.parent / "docs" / "benchmarks.md").read_text("utf-8")
    makefile = (BENCH.parent / "Makefile").read_text("utf-8")
    block = makefile.split("BENCH_QUICK = \\\n", 1)[1].split("\n\n", 1)[0]
    quick = {shlex.split(e)[0] for e in re.findall(r'"([^"]+)"', block)}
    scripts = {p.name for p in BENCH.glob("*.py") if not p.name.startswith("_")}

    def rows(header: str) -> list[list[str]]:
        table = docs.split(header + "\n", 1)[1].split("\n\n", 1)[0]
        return [
            [c.strip() for c in line.strip()[1:-1].split("|")]
            for line in table.splitlines()[1:]  # after the | --- | line
            if not line.startswith("| total |")
        ]

    quick_rows = rows("| benchmark | before: options | wall / CPU s [load] | after: options "
                      "| wall / CPU s [load] | exit |")  # fmt: skip
    assert all(len(r) == 6 for r in quick_rows), [r[0] for r in quick_rows if len(r) != 6]
    assert {r[0].strip("`") for r in quick_rows} == quick
    named = [r[0].strip("`") for r in rows("| benchmark | targets |")]
    assert sorted(named) == sorted(scripts)


def test_in_turns_alternates_the_candidates_and_keeps_the_best_of_each(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A B A B after one untimed warm-up round (not A A B B), each candidate's least time
    kept: a fake clock that a 'burst' slows on one round only leaves the best untouched,
    and the warm-up's slow first calls are not counted. The thread pools are pinned
    before the warm-up and again before the timed rounds (recorded here, not done: the
    test process's pools are left as they are)."""
    import _timing
    from _timing import in_turns

    calls: list[str] = []
    monkeypatch.setattr(_timing, "one_thread", lambda: calls.append("pin"))
    now = [0.0]
    # seconds each call takes on the fake clock, in call order: the warm-up round
    # A=100 B=100, then round 1 A=3 (a burst) B=2, round 2 A=1 B=5 (a burst), round 3 A=2 B=2
    spans = iter([100.0, 100.0, 3.0, 2.0, 1.0, 5.0, 2.0, 2.0])

    def candidate(name: str) -> Callable[[], str]:
        def run() -> str:
            calls.append(name)
            now[0] += next(spans)
            return name + str(len(calls))

        return run

    best, results = in_turns([candidate("A"), candidate("B")], repeat=3, clock=lambda: now[0])
    assert calls == ["pin", "A", "B", "pin", "A", "B", "A", "B", "A", "B"]
    assert best == [1.0, 2.0]
    assert results == ["A9", "B10"]  # each one's last call
    calls.clear()
    spans = iter([100.0, 6.0])
    best, _ = in_turns(
        [candidate("A"), candidate("B")], repeat=1, clock=lambda: now[0], warm_up=False
    )
    # no warm-up: the first call is timed, the pools pinned once
    assert (calls, best) == (["pin", "A", "B"], [100.0, 6.0])
    with pytest.raises(ValueError, match="repeat must be at least 1, got 0"):
        in_turns([candidate("A")], repeat=0)


def test_one_thread_pins_blas_and_arrow_loaded_before_it() -> None:
    """NumPy's BLAS reads its thread count when NumPy loads, so a variable set afterwards
    does nothing: one_thread() must pin the pools already loaded (threadpoolctl) and
    Arrow's CPU pool. Run in a fresh process with the pools' variables unset, NumPy and
    pyarrow imported first, as a benchmark imports them."""
    import json
    import os
    import subprocess

    script = (
        "import json, numpy, pyarrow\n"
        "from threadpoolctl import threadpool_info\n"
        "from _timing import one_thread\n"
        "one_thread()\n"
        "print(json.dumps([[p['internal_api'], p['num_threads']] for p in threadpool_info()]"
        " + [['arrow', pyarrow.cpu_count()]]))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    env["PYTHONPATH"] = os.pathsep.join([str(BENCH), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    pools = json.loads(done.stdout)
    assert any(api in ("openblas", "mkl", "blis") for api, _ in pools), pools
    assert all(n == 1 for _, n in pools), pools


def test_every_benchmark_timed_in_cpu_seconds_pins_its_threads() -> None:
    """CPU seconds add every thread's time: a benchmark that reads them must run its work
    on one thread (benchmarks/_timing.one_thread) or a threaded candidate reads slower
    and a serial one faster. judge_http's CPU seconds are printed, not a target;
    judge_local reads CPU seconds only where torch runs on one thread (else the wall)."""
    helpers = {"_timing.py", "_threads.py", "judge_http.py", "judge_local.py"}
    timed = [
        p
        for p in sorted(BENCH.glob("*.py"))
        if p.name not in helpers
        and ("process_time" in (s := p.read_text("utf-8")) or "in_turns(" in s)
    ]
    assert len(timed) >= 7, [p.name for p in timed]
    for path in timed:
        assert "one_thread()" in path.read_text("utf-8"), path.name
