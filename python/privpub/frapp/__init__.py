"""FRAPP, the randomised-response baseline of the αβ paper (Sec. 4.3)."""

from privpub.frapp import accounting
from privpub.frapp.mechanism import FRAPP

__all__ = ["FRAPP", "accounting"]
