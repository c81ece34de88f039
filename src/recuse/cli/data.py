"""`recuse data ...`: list, show and fetch the datasets recuse knows."""

from __future__ import annotations

import typer

from recuse.cli import app

data_app = typer.Typer(help="List, describe and download the public datasets.", no_args_is_help=True)
app.add_typer(data_app, name="data")
