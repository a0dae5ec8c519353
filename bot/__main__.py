"""`python -m bot` is the same as the `digest-bot` console script."""

from bot.cli.main import run

run()
