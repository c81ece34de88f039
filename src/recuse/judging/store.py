"""SQLite store of judgments (WAL), keyed by a content hash of what changes the output.

The key hashes the judge (model id + revision), the rendered prompt, the protocol
version and the decoding parameters; never timeouts, concurrency or batch sizes.
The runner commits finished judgments at least every 0.1 s, so a killed run keeps
all but the last moment of work; ``failed`` rows carry a reason and are retried by
the next run, ``ok`` and ``unparsed`` rows are final. Nothing secret is ever
written here: rows hold model ids, prompts' item ids, scores, generated text and
failure reasons only.
"""

from __future__ import annotations

import hashlib
import json
import math
import sqlite3
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from recuse.errors import InputError
from recuse.tables import validate_pairs, validate_ratings

Kind = Literal["pairwise", "likert"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS judgments (
    key TEXT NOT NULL,
    kind TEXT NOT NULL,
    judge TEXT NOT NULL,
    item_id TEXT NOT NULL,
    slot TEXT NOT NULL,
    status TEXT NOT NULL,
    value REAL,
    p_slot_a REAL,
    mass REAL,
    p_tie REAL,
    label TEXT,
    text TEXT,
    reason TEXT,
    attempts INTEGER NOT NULL DEFAULT 1,
    created_at REAL NOT NULL,
    PRIMARY KEY (key, item_id, slot)
);
CREATE INDEX IF NOT EXISTS judgments_item ON judgments (kind, judge, item_id, slot);
CREATE TABLE IF NOT EXISTS items (
    kind TEXT NOT NULL,
    item_id TEXT NOT NULL,
    meta TEXT NOT NULL,
    PRIMARY KEY (kind, item_id)
);
"""


def content_key(*, model_id: str, revision: str, prompt: str, params: Mapping[str, object]) -> str:
    """sha256 of a canonical JSON of everything that changes the judge's output."""
    blob = json.dumps(
        {"model": model_id, "revision": revision, "prompt": prompt, "params": dict(params)},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Judgment:
    """One stored judgment. Pairwise: ``slot`` is the order ("first"/"second") and
    ``value`` P(a better) in the a/b frame. Likert: ``slot`` is the dimension and
    ``value`` the rating. ``value`` is NaN unless ``status == "ok"``."""

    key: str
    kind: Kind
    judge: str
    item_id: str
    slot: str
    status: str
    value: float = math.nan
    p_slot_a: float = math.nan
    mass: float = math.nan
    p_tie: float = math.nan
    label: str | None = None
    text: str | None = None
    reason: str | None = None
    attempts: int = 1


_FLOATS = ("value", "p_slot_a", "mass", "p_tie")


def _sql(v: Any) -> Any:
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


class Store:
    """A judgments database at ``path`` (created on first use)."""

    COLUMNS = tuple(Judgment.__dataclass_fields__)

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if self.path.parent and not self.path.parent.exists():
            raise InputError(
                "the folder for the store does not exist",
                file=self.path,
                fix="create the folder or give another --out path",
            )
        try:
            self.conn = sqlite3.connect(self.path, timeout=30.0)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise InputError(
                f"not a recuse judgment store ({exc})",
                file=self.path,
                fix="give a new file name or a store written by `recuse judge`",
            ) from None

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- writing ---------------------------------------------------------------------

    def put(self, judgments: Iterable[Judgment]) -> None:
        """Insert or replace judgments in one transaction (committed on return)."""
        now = time.time()  # fields read directly: dataclasses.asdict deep-copies
        rows = [(*(_sql(getattr(j, c)) for c in self.COLUMNS), now) for j in judgments]
        if not rows:
            return
        cols = ", ".join((*self.COLUMNS, "created_at"))
        marks = ", ".join("?" * (len(self.COLUMNS) + 1))
        with self.conn:
            self.conn.executemany(
                f"INSERT OR REPLACE INTO judgments ({cols}) VALUES ({marks})", rows
            )

    def put_items(self, kind: Kind, items: Mapping[str, Mapping[str, object]]) -> None:
        """Remember what was judged (texts, generator ids, labels) for export."""
        rows = [
            (kind, item_id, json.dumps(dict(meta), ensure_ascii=False, default=_json_default))
            for item_id, meta in items.items()
        ]
        with self.conn:
            self.conn.executemany(
                "INSERT OR REPLACE INTO items (kind, item_id, meta) VALUES (?, ?, ?)", rows
            )

    # --- reading ---------------------------------------------------------------------

    def lookup(self, keys: Iterable[str]) -> list[Judgment]:
        """Stored judgments with any of these content keys (for any item)."""
        keys = sorted(set(keys))
        out: list[Judgment] = []
        cols = ", ".join(self.COLUMNS)
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            for row in self.conn.execute(
                f"SELECT {cols} FROM judgments WHERE key IN ({marks}) ORDER BY created_at, rowid",
                chunk,
            ):
                values: dict[str, Any] = {
                    c: (math.nan if v is None and c in _FLOATS else v)
                    for c, v in zip(self.COLUMNS, row, strict=True)
                }
                out.append(Judgment(**values))
        return out

    def judgments(self) -> pd.DataFrame:
        """Every stored judgment, oldest first (without timestamps)."""
        cols = ", ".join(self.COLUMNS)
        df = pd.read_sql_query(
            f"SELECT {cols} FROM judgments ORDER BY created_at, rowid", self.conn
        )
        return df

    def items(self, kind: Kind) -> dict[str, dict[str, Any]]:
        rows = self.conn.execute("SELECT item_id, meta FROM items WHERE kind = ?", (kind,))
        return {item_id: json.loads(meta) for item_id, meta in rows}

    # --- export ----------------------------------------------------------------------

    def export_pairs(self) -> pd.DataFrame:
        """The ``pairs`` table: one row per (item, judge), both orders side by side.

        Extra columns: ``mass_first``/``mass_second`` (p(A)+p(B) on the verdict token)
        and ``p_tie_first``/``p_tie_second`` (p(C)). A failed or unparsed order has an
        empty ``p_a_*`` and its status says why. Where the store holds perplexities
        for a judge's model (:func:`recuse.perplexity.judge_perplexities`), that
        judge's rows get ``ppl_a``/``ppl_b``.
        """
        df = self.judgments()
        df = df[df["kind"] == "pairwise"]
        if df.empty:
            raise InputError(
                "the store holds no pairwise judgments",
                file=self.path,
                fix="run `recuse judge` first",
            )
        df = df.drop_duplicates(["judge", "item_id", "slot"], keep="last")
        wide = df.pivot(index=["item_id", "judge"], columns="slot")
        out = pd.DataFrame(index=wide.index)
        for order in ("first", "second"):
            for src, dst in (
                ("value", f"p_a_{order}"),
                ("status", f"status_{order}"),
                ("mass", f"mass_{order}"),
                ("p_tie", f"p_tie_{order}"),
            ):
                out[dst] = wide[(src, order)] if (src, order) in wide.columns else np.nan
            status = f"status_{order}"
            out[status] = out[status].where(out[status].notna(), "missing")
        out = out.reset_index()
        meta = pd.DataFrame.from_dict(self.items("pairwise"), orient="index")
        if not meta.empty:
            meta = meta.drop(columns=[c for c in ("judge",) if c in meta.columns])
            out = out.merge(meta, left_on="item_id", right_index=True, how="left")
        if "prompt_id" not in out.columns:
            out["prompt_id"] = out["item_id"]
        for col in ("model_a", "model_b", "human"):
            if col not in out.columns:
                out[col] = np.nan
        out["p_a"] = np.nan
        from recuse.perplexity import attach_stored_perplexities

        out = attach_stored_perplexities(self, out)
        return validate_pairs(out, file=self.path)

    def export_ratings(self) -> pd.DataFrame:
        """The ``ratings`` table: one row per (prompt, model, dimension, judge)."""
        df = self.judgments()
        df = df[df["kind"] == "likert"].drop_duplicates(["judge", "item_id", "slot"], keep="last")
        if df.empty:
            raise InputError(
                "the store holds no Likert judgments",
                file=self.path,
                fix="run `recuse judge --protocol likert` first",
            )
        meta = self.items("likert")
        rows = []
        for r in df.itertuples(index=False):
            m = meta.get(str(r.item_id), {})
            refs = m.get("reference") or {}
            ref = refs.get(r.slot) if isinstance(refs, dict) else None
            rows.append(
                {
                    "prompt_id": m.get("prompt_id", r.item_id),
                    "model": m.get("model", "unknown"),
                    "dimension": r.slot,
                    "judge": r.judge,
                    "rating": r.value,
                    "reference": np.nan if ref is None else float(ref),
                    "status": r.status,
                    "label": r.label,
                }
            )
        return validate_ratings(pd.DataFrame(rows), file=self.path)


def _json_default(v: object) -> object:
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    raise TypeError(f"cannot store {type(v).__name__} in item metadata")
