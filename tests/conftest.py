"""Shared fixtures: the real datasets live in ../shared/data next to the repository."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("RECUSE_TEST_DATA", REPO.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Folder with the real public datasets (see ../shared/data/README.md)."""
    assert SHARED_DATA.is_dir(), f"real test data not found at {SHARED_DATA}"
    return SHARED_DATA


@pytest.fixture(autouse=True)
def _reports_match_the_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every report.json a test writes (library, CLI, examples) is validated against the
    JSON Schema shipped in the package before it is written."""
    import json

    import jsonschema

    from recuse.report import export

    validator = jsonschema.Draft202012Validator(export.schema())
    plain = export.to_json

    def checked(report: object) -> str:
        text = plain(report)  # type: ignore[arg-type]
        errors = sorted(validator.iter_errors(json.loads(text)), key=lambda e: list(e.path))
        assert not errors, "report.json breaks its schema: " + "; ".join(
            f"{'/'.join(map(str, e.path))}: {e.message}" for e in errors[:5]
        )
        return text

    monkeypatch.setattr(export, "to_json", checked)


@pytest.fixture(autouse=True)
def _hash_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Model-file hashes are remembered in a test folder, never in the user's cache."""
    folder = tmp_path_factory.getbasetemp() / "hash-cache"
    monkeypatch.setenv("RECUSE_HASH_CACHE", str(folder / "file-hashes.json"))
