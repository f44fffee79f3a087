"""FRAPP, the randomised-response baseline of the αβ paper (Sec. 4.3)."""

from privpub.frapp import accounting, planning  # noqa: F401  (planning registers its planner)
from privpub.frapp.mechanism import FRAPP

__all__ = ["FRAPP", "accounting"]
