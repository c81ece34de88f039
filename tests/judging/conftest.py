"""Fixtures for judging tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from judging.helpers import build_tiny_model


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("torch")
    return build_tiny_model(tmp_path_factory.mktemp("tiny-llama"))
