"""Reproductions of the papers' figures and tables, as functions and commands.

They draw figures (matplotlib) and show progress (tqdm), which the core install
leaves out: ``pip install 'privpub[experiments]'``. Checked here, before any
experiment starts, so that a missing one is named at once rather than after
minutes of work."""

from privpub.core.optional import require

require("matplotlib", "privpub's experiments", extra="experiments")
require("tqdm", "privpub's experiments", extra="experiments")
