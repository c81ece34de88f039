"""The judgment store: what its export says about the rows it writes, and which thread
uses it."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from judging.helpers import FakeBackend, fake_pairs
from recuse.errors import ConfigError
from recuse.judging import Runner, Store
from recuse.judging.store import Judgment


@pytest.mark.parametrize("mixed", [True, False])
def test_an_export_of_two_datasets_says_so(tmp_path: Path, mixed: bool) -> None:
    """A store reused for a second --data (the docs' runs/smol.sqlite for llmbar-mtbench,
    then mt-bench-human) exported both datasets' pairs as one file without a word, and
    an audit read them as one table. One dataset: nothing said."""
    pairs = pd.DataFrame(fake_pairs(5))
    pairs["source"] = ["llmbar"] * 3 + ["mt-bench-human" if mixed else "llmbar"] * 2
    notes: list[str] = []
    with Store(tmp_path / "s.db") as store:
        Runner(FakeBackend(), store, progress=False).pairwise(pairs)
        df = store.export_pairs(notes=notes)
    assert sorted(df["source"]) == sorted(pairs["source"])
    said = [
        "the store holds pairs of 2 datasets (rows: llmbar 3, mt-bench-human 2), exported "
        "together: an audit of this file reads them as one table; to export one dataset "
        "alone, give --dataset NAME (e.g. --dataset llmbar)"
    ]
    assert notes == (said if mixed else [])


def _in_thread(thread_use: Callable[[], object]) -> tuple[threading.Thread, list[object]]:
    """A thread (not started) that calls ``thread_use`` once: what it returned or raised."""
    got: list[object] = []

    def call() -> None:
        try:
            got.append(thread_use())
        except Exception as exc:
            got.append(exc)

    return threading.Thread(target=call, name="other"), got


def test_a_store_is_used_by_one_thread_at_a_time_a_worker_it_is_lent_to_included(
    tmp_path: Path,
) -> None:
    """A store is used by the thread that opened it: another thread's use is refused
    with recuse's words (SQLite's own check raised "SQLite objects created in a thread
    can only be used in that same thread" as a store error), and writes nothing. Lent
    to a worker (a notebook cell's run, recuse.interrupt.run), the worker reads and
    writes it and the lender is refused meanwhile; after the block the lender uses it
    again and the worker is refused."""
    path = tmp_path / "s.db"
    item = {"i1": {"prompt": "p", "model_a": "a", "model_b": "b"}}
    with Store(path) as store:
        other, got = _in_thread(lambda: store.put_items("pairwise", item))
        other.start()
        other.join()
        assert isinstance(got[0], ConfigError)
        assert str(path) in str(got[0]) and "one thread at a time" in str(got[0])
        assert store.items("pairwise") == {}

        go, done = threading.Event(), threading.Event()

        def worker_use() -> object:
            go.wait(10)
            try:
                store.put_items("pairwise", item)
                return store.items("pairwise")
            finally:
                done.set()

        worker, by_worker = _in_thread(worker_use)
        with store.lent(worker):
            worker.start()
            with pytest.raises(ConfigError, match="one thread at a time"):
                store.items("pairwise")
            go.set()
            done.wait(10)
            worker.join()
        assert by_worker == [item]
        assert store.items("pairwise") == item
        late, got = _in_thread(lambda: store.items("pairwise"))
        late.start()
        late.join()
        assert isinstance(got[0], ConfigError)


def _two_judges_two_datasets(path: Path) -> pd.DataFrame:
    """A store at ``path`` of 5 pairs (3 llmbar, 2 mt-bench-human), each judged by the
    judge ids 'x' and 'y'; the pairs judged."""
    pairs = pd.DataFrame(fake_pairs(5))
    pairs["source"] = ["llmbar"] * 3 + ["mt-bench-human"] * 2
    with Store(path) as store:
        for judge in ("x", "y"):
            Runner(FakeBackend(), store, judge=judge, progress=False).pairwise(pairs)
    return pairs


def test_an_export_keeps_the_judges_and_datasets_asked_for(tmp_path: Path) -> None:
    """A store of two judges over two datasets exported everything together; --judge
    and --dataset (the library's ``judges``/``sources``) keep the rows asked for."""
    pairs = _two_judges_two_datasets(tmp_path / "s.db")
    with Store(tmp_path / "s.db", read_only=True) as store:
        every = store.export_pairs()
        notes: list[str] = []
        one = store.export_pairs(notes=notes, judges=["y"], sources=["mt-bench-human"])
        both = store.export_pairs(judges=["x", "y"], sources=["llmbar"])
    assert len(every) == 10
    assert sorted(one["item_id"]) == ["i3", "i4"] and set(one["judge"]) == {"y"}
    assert notes == []  # one dataset asked for: no note that several were exported
    assert len(both) == 6 and set(both["item_id"]) == {"i0", "i1", "i2"}
    # the rows kept are the rows of the whole export, unchanged
    mine = every[(every["judge"] == "y") & every["item_id"].isin(["i3", "i4"])]
    pd.testing.assert_series_equal(
        one.sort_values("item_id")["p_a_first"].reset_index(drop=True),
        mine.sort_values("item_id")["p_a_first"].reset_index(drop=True),
    )
    assert set(pairs["item_id"]) == set(every["item_id"])


@pytest.mark.parametrize(
    ("kwargs", "said"),
    [
        (
            {"judges": ["x", "z"]},
            "--judge 'z' matches no row of the store; its judge ids (rows): 'x' 5, 'y' 5 "
            "— give --judge one of those, as written",
        ),
        (
            {"sources": ["LLMBar"]},
            "--dataset 'LLMBar' matches no row of the store; its datasets (rows): 'llmbar' 6, "
            "'mt-bench-human' 4 — give --dataset one of those, as written",
        ),
    ],
)
def test_an_export_filter_matching_nothing_names_what_the_store_holds(
    tmp_path: Path, kwargs: dict[str, list[str]], said: str
) -> None:
    from recuse.errors import InputError

    _two_judges_two_datasets(tmp_path / "s.db")
    with Store(tmp_path / "s.db", read_only=True) as store, pytest.raises(InputError) as err:
        store.export_pairs(**kwargs)
    assert str(err.value) == f"{tmp_path / 's.db'}: {said}"


def test_an_export_filter_counts_the_rows_the_export_writes(tmp_path: Path) -> None:
    """The rows named by a --judge or --dataset that matched nothing are the rows an
    export of that name writes: a judge's pairs, not its judgments (it said 'x' 10 of
    a judge whose export is 5 rows, a pair's two orders counted twice)."""
    from recuse.errors import InputError

    _two_judges_two_datasets(tmp_path / "s.db")
    with Store(tmp_path / "s.db", read_only=True) as store:
        every = store.export_pairs()
        for option, column in (("judges", "judge"), ("sources", "source")):
            with pytest.raises(InputError) as err:
                store.export_pairs(**{option: ["nowhere"]})
            counts = every[column].value_counts()
            held = ", ".join(f"{name!r} {n}" for name, n in sorted(counts.items()))
            assert f"(rows): {held} —" in str(err.value)
            for name in counts.index:
                assert len(store.export_pairs(**{option: [str(name)]})) == counts[name]


def test_a_source_filter_on_a_store_without_sources_says_none_was_recorded(
    tmp_path: Path,
) -> None:
    from recuse.errors import InputError

    with Store(tmp_path / "s.db") as store:
        Runner(FakeBackend(), store, progress=False).pairwise(pd.DataFrame(fake_pairs(2)))
        with pytest.raises(InputError) as err:
            store.export_pairs(sources=["llmbar"])
    # it said "(the store's rows were judged without one)": one what? (its data's
    # `source` column)
    assert "source" not in pd.DataFrame(fake_pairs(2)).columns
    assert str(err.value).endswith(
        "its datasets (rows): none recorded — leave out --dataset: the store's rows were "
        "judged from data without a source column"
    )


def test_a_ratings_export_filter_counts_the_ratings_the_export_writes(tmp_path: Path) -> None:
    """The same for ratings: a judge id's count is its export's rows, one per
    (prompt, model, dimension)."""
    from recuse.errors import InputError
    from recuse.judging.protocols import DIMENSIONS

    rows = pd.DataFrame(
        {"prompt_id": ["q1", "q2"], "model": ["gpt-4", "claude-v1"], "prompt": ["P1", "P2"]}
        | {"response": ["R1", "R2"]}
    )
    with Store(tmp_path / "s.db") as store:
        dims = [DIMENSIONS["conciseness"], DIMENSIONS["logical_correctness"]]
        Runner(FakeBackend(), store, judge="x", progress=False).likert(rows, dims)
        every = store.export_ratings()
        with pytest.raises(InputError) as err:
            store.export_ratings(judges=["nowhere"])
    assert len(every) == 4
    assert "its judge ids (rows): 'x' 4 —" in str(err.value)


#: texts that JSON writes escaped or as themselves (quotes, backslashes, every control
#: character, U+2028, a lone high code point, accents, emoji): a content key and an
#: item's meta must keep every byte they had
_TRICKY = [
    'He said "hi" \\ then\tleft\r\n',
    "".join(map(chr, range(32))) + "\x7f\u2028\u2029",
    "café, naïve, 日本語, \U0001f600 and \U0010ffff",
    "",
    "/ </script> \\u00e9 {} [] : ,",
]

#: sha256 of :func:`_rows_text` for :func:`_judged_store`, as the code wrote the rows
#: before the event loop's work was cut (2026-11-30): a change of any byte the store
#: writes (a key, an item's JSON, a number, a type) changes it. Since runs are recorded
#: as they go, the runs table's rows hold ``ended`` (1: each recorded its end), and
#: their ``run`` id (random, left out here); every other byte is as it was (eae2373a...).
#: Since runs record the model names their server's answers gave, the runs table has a
#: ``served`` column, empty (NULL) in each of these runs (no server); every other byte
#: is as it was (a7bff956...: the text diffed against main's, only the runs rows differ).
#: Since perplexities and rewrites record their served model names, the store has a
#: ``served_models`` table, empty here; the text differs from d0bd2695... by its header
#: line alone (diffed). Since runs record who wrote the prompt text a server's model read,
#: the runs table has a ``rendering`` column, empty (NULL) in each of these runs (no
#: server); the text differs from b2257a7b... in the runs rows' last field alone (diffed).
#: Since a served judge id records the model name it asks (``judge_asked``), the text
#: has that table's header line, empty here; it differs from 5a408720... by it alone (diffed)
ROWS_SHA256 = "c66459d57c7016cdf0b0edb48324f3e30fa18f432d04e82ef7fb18861bbed0e6"

#: what changes run to run (a run's clocks; its random id)
_CLOCKS = {"created_at", "seconds", "started", "heartbeat", "run"}


def _tricky_pairs() -> list[dict[str, str]]:
    """Six pairs of tricky texts; item 5 is item 4 in the other order (copies)."""
    pairs = fake_pairs(6)
    for k, text in enumerate(_TRICKY):
        pairs[k].update(prompt=f"{text} #{k}", response_b=text[::-1])
    four = pairs[4]
    pairs[5].update(prompt=four["prompt"], response_a=four["response_b"])
    pairs[5].update(response_b=four["response_a"])
    return pairs


def _judged_store(path: Path) -> None:
    """A store as runs write it: pairwise (direct and explain, a failed prompt, copies
    of the same content for mirrored items) and Likert judgments of tricky texts, with
    metadata of every kind export reads back."""
    import numpy as np

    from recuse.judging.protocols import DIMENSIONS, PairwiseProtocol

    pairs = pd.DataFrame(_tricky_pairs())
    pairs["category"] = ["writing", None, "math\n", "日本", "x", "y"]
    pairs["base_item"] = np.array([1, 2, 3, 4, 5, 6], dtype=np.int64)
    pairs["task"] = [0.5, float("nan"), 1e300, -0.0, 3.0, 1 / 3]
    pairs["treated"] = [True, False, True, False, True, False]
    with Store(path) as store:
        fake = FakeBackend(fail_marker=_TRICKY[0])
        Runner(fake, store, progress=False).pairwise(pairs)
        # items of texts alone (their JSON written text by text), sharing texts
        texts_only = pairs.iloc[:4][["item_id", "prompt", "response_a", "response_b"]]
        texts_only = texts_only.assign(item_id=["t0", "t1", "t2", "t3"], response_a=_TRICKY[1])
        Runner(FakeBackend(), store, judge="e", progress=False).pairwise(
            texts_only, PairwiseProtocol(mode="explain")
        )
        rows = pd.DataFrame(
            {"prompt_id": ["q1", "q\t2"], "model": ["gpt-4", "m\u2028"]}
            | {"prompt": _TRICKY[:2], "response": _TRICKY[2:4], "reference_conciseness": [3.0, 1.0]}
        )
        dims = [DIMENSIONS["conciseness"], DIMENSIONS["logical_correctness"]]
        Runner(FakeBackend(), store, judge="x", progress=False).likert(rows, dims)


def _rows_text(path: Path) -> str:
    """Every table's rows but their clocks, each value with its SQLite type and its
    exact Python form (a float's hex: every bit), sorted."""
    import sqlite3

    conn = sqlite3.connect(path)
    try:
        out = []
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in sorted(tables):
            cols = [
                r[1] for r in conn.execute(f"PRAGMA table_info({table})") if r[1] not in _CLOCKS
            ]
            sql = ", ".join(f"typeof({c}), {c}" for c in cols)
            rows = []
            for r in conn.execute(f"SELECT {sql} FROM {table}"):
                values = [
                    f"{t}:{v.hex() if isinstance(v, float) else repr(v)}"
                    for t, v in zip(r[::2], r[1::2], strict=True)
                ]
                rows.append("|".join(values))
            out.append(f"{table}({', '.join(cols)})\n" + "\n".join(sorted(rows)))
        return "\n".join(out)
    finally:
        conn.close()


def test_a_runs_rows_are_the_bytes_stored_before(tmp_path: Path) -> None:
    """Every row a run writes, byte for byte, as before the event loop's work per
    judgment was cut; its keys are the sha256 of the key's JSON and its items' meta the
    JSON text, both worked out here with the standard library alone."""
    import hashlib
    import json
    import sqlite3

    from recuse.judging.handlers.pairwise import pairs_to_judge
    from recuse.judging.protocols import ORDERS, PairwiseProtocol

    path = tmp_path / "s.db"
    _judged_store(path)
    text = _rows_text(path)
    assert hashlib.sha256(text.encode()).hexdigest() == ROWS_SHA256, text
    conn = sqlite3.connect(path)
    keys = dict(
        conn.execute("SELECT item_id || slot, key FROM judgments WHERE judge = 'fake-judge'")
    )
    metas = dict(conn.execute("SELECT item_id, meta FROM items WHERE kind = 'pairwise'"))
    conn.close()
    pairs = _tricky_pairs()
    proto = PairwiseProtocol()
    params = {"protocol": "pairwise-v1", "mode": "direct", "top_k": 20}
    items, _ = pairs_to_judge(pd.DataFrame(pairs[:5]))
    assert len(items) == 5 and len(keys) == 12
    for p in items:
        for order in ORDERS:
            prompt = proto.prompt(p, order)
            canonical = "".join(f"<{m.role}>{len(m.content)}:{m.content}" for m in prompt.messages)
            canonical += f"<prefix>{len(prompt.prefix)}:{prompt.prefix}"
            blob = {"model": "fake-judge", "revision": "r1", "prompt": canonical, "params": params}
            dumped = json.dumps(blob, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
            assert keys[p.item_id + order] == hashlib.sha256(dumped.encode()).hexdigest()
    assert metas["i1"] == json.dumps(
        {"prompt_id": "q0", "model_a": "gpt-4", "model_b": "claude-v1", "human": "a",
         "base_item": 2, "treated": False, "prompt": pairs[1]["prompt"],
         "response_a": "answer a1", "response_b": _TRICKY[1][::-1]},
        ensure_ascii=False,
    )  # fmt: skip


def test_items_meta_is_the_json_dumps_text(tmp_path: Path) -> None:
    """An item's meta is ``json.dumps(meta, ensure_ascii=False)`` whatever it holds:
    texts alone (written text by text, shared between items), or numbers, NumPy
    scalars, nested tables and text subclasses (written by json)."""
    import json
    import sqlite3

    import numpy as np

    class Name(str):
        pass

    items: dict[str, dict[str, object]] = {
        f"i{k}": {"prompt": _TRICKY[k % 5], "response_a": t, "response_b": t[::-1], "é\n": ""}
        for k, t in enumerate(_TRICKY * 2)
    }
    items["empty"] = {}
    items["numbers"] = {"prompt": "p", "n": np.int64(3), "x": 0.25, "ok": True, "none": None}
    items["nested"] = {"reference": {"conciseness": 3.0}, "prompt": "p"}
    items["subclass"] = {Name("prompt"): Name('p\t"q"')}
    with Store(tmp_path / "s.db") as store:
        store.put_items("pairwise", items)
    conn = sqlite3.connect(tmp_path / "s.db")
    got = dict(conn.execute("SELECT item_id, meta FROM items"))
    conn.close()
    for item_id, meta in items.items():
        want = json.dumps(meta, ensure_ascii=False, default=lambda v: v.item())
        assert got[item_id] == want, item_id


def test_verdict_masses_are_those_of_the_verdicts_export_keeps(tmp_path: Path) -> None:
    """A judge asked again under other content keys (a server's endpoint entered its
    keys, so an old chat store is judged anew) holds two verdicts of one (item, order);
    export keeps the newest, and so does the mass `recuse judge` says. Before, both
    were counted: item 1's first order gave masses 0.05 (old) and 0.9 (new), and a
    newer failed row of item 2 still counted its older 0.3."""

    def row(key: str, item: str, slot: str, status: str, mass: float) -> Judgment:
        value = 0.5 if status == "ok" else math.nan
        return Judgment(key, "pairwise", "j", item, slot, status, value, value, mass)

    with Store(tmp_path / "s.db") as store:
        store.put([row("old", "1", "first", "ok", 0.05), row("old", "2", "first", "ok", 0.3)])
        store.put([row("new", "1", "first", "ok", 0.9), row("new", "1", "second", "ok", 0.7)])
        store.put([row("new", "2", "first", "failed", math.nan)])
        assert sorted(store.verdict_masses("j")) == [0.7, 0.9]
        kept = store.export_pairs()
        assert sorted(kept[["mass_first", "mass_second"]].stack().dropna()) == [0.7, 0.9]


class _Read(list[tuple[object, ...]]):
    """Rows read before another process changed the table (a cursor's fetchall)."""

    def fetchall(self) -> list[tuple[object, ...]]:
        return list(self)


class _Raced:
    """A connection to a store whose columns another process adds right after this one
    first reads them (PRAGMA table_info): both opened the old store at once."""

    def __init__(self, path: Path) -> None:
        import sqlite3

        self.conn, self.path, self.raced = sqlite3.connect(path, timeout=5.0), path, False

    def execute(self, sql: str, *args: object) -> object:
        import sqlite3

        out = self.conn.execute(sql, *args)
        if sql.startswith("PRAGMA table_info") and not self.raced:
            self.raced = True
            rows = out.fetchall()
            other = sqlite3.connect(self.path, timeout=5.0)
            for name in ("served", "rendering"):  # what the fixture lacks
                other.execute(f"ALTER TABLE runs ADD COLUMN {name} TEXT")
            other.commit()
            other.close()
            return _Read(rows)  # what this process read before the other's commit
        return out

    def __getattr__(self, name: str) -> object:
        return getattr(self.conn, name)


def test_an_old_store_opened_by_two_processes_at_once_migrates_once(tmp_path: Path) -> None:
    """Two processes opening a store written before runs recorded their columns (the
    fixture: before 'served'; every store before 'rendering' was added) both read the
    runs table's columns; the one second to add them failed, 'cannot use the store
    (duplicate column name: ...)' (2 of 30 trials of six processes at once, on the
    merged code). The columns are read again under the write lock that adds them."""
    import shutil
    import sqlite3

    from recuse.judging.store import _add_run_hardware

    path = tmp_path / "old.sqlite"
    shutil.copy(Path(__file__).parent / "fixtures" / "store_before_served.sqlite", path)
    before = {r[1] for r in sqlite3.connect(path).execute("PRAGMA table_info(runs)")}
    assert "served" not in before and "rendering" not in before and "ended" in before
    raced = _Raced(path)
    _add_run_hardware(raced)  # type: ignore[arg-type]
    raced.conn.close()
    assert raced.raced
    with Store(path) as store:  # and it opens, with every column
        assert store.runs()["rendering"].tolist() == [None] * len(store.runs())
