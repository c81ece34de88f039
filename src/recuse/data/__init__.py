"""Readers: one per source format, each returning a validated evidence table."""

from recuse.data.registry import Dataset, datasets, default_data_dir, folder, get, load, register

__all__ = ["Dataset", "datasets", "default_data_dir", "folder", "get", "load", "register"]
