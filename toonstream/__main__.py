"""``python -m toonstream`` runs the command-line interface."""

from .cli import run

run()
