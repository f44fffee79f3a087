"""Values in range: the one clamp of a released figure into the range its true
value lies in (table estimates, graph answers and their intervals), the
interval law of a clamped estimate, and whether a law rejects every count.
Clamping reads only the released figure and public facts, so it is
post-processing: no privacy cost, and never farther from a true value inside
the range.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["ClampedLaw", "clamp", "inconsistent"]


def inconsistent(law: Any, level: float) -> bool:
    """Whether ``law`` says every count is rejected at ``level`` (False for a law
    that rejects none, as a point or a graph answer's)."""
    check = getattr(law, "inconsistent", None)
    return bool(check is not None and np.asarray(check(level)).reshape(-1)[0])


def clamp(value: Any, low: Any, high: Any) -> Any:
    """``value`` clamped to [low, high]: the one clamp of a released figure into
    the range its true value lies in (estimates, graph answers and their
    intervals). Post-processing: no privacy cost, and never farther from a true
    value inside the range."""
    return min(max(value, low), high)


@dataclass(frozen=True)
class ClampedLaw:
    """An interval law with both ends clamped into [low, high]: the clamped
    interval holds every point of the original that the true count (in the
    range) can take, so it covers at least as often."""

    law: Any
    low: float
    high: float

    def interval(self, level: float) -> tuple[Any, Any]:
        lo, hi = (np.asarray(end).reshape(-1)[0].item() for end in self.law.interval(level))
        return clamp(lo, self.low, self.high), clamp(hi, self.low, self.high)

    def inconsistent(self, level: float) -> bool:
        return inconsistent(self.law, level)
