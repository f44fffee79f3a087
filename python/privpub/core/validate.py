"""Parameter checks shared by constructors and by reopening a release.

A release file is untrusted input: reopening it runs the same checks as the
constructor of its mechanism, so every check lives here once. Each check
names the parameter and says what was expected; nothing is coerced (a JSON
string "0.5" is not a probability, a bool is not a count).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from privpub.core.errors import ArtifactError, ParameterError


def real(name: str, value: Any) -> float:
    """A finite real number (int or float, not bool, not NaN or ±inf)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer,
                                                                         np.floating)):
        raise ParameterError(f"{name} must be a number, got {value!r} "
                             f"({type(value).__name__})")
    value = float(value)
    if not math.isfinite(value):
        raise ParameterError(f"{name} must be finite, got {value!r}")
    return value


def probability(name: str, value: Any, *, open_low: bool = False,
                open_high: bool = False) -> float:
    """A probability in [0, 1], (0, 1], [0, 1) or (0, 1)."""
    if isinstance(value, float) and math.isnan(value):
        raise ParameterError(f"{name} must be a probability, got nan")
    value = real(name, value)
    low_ok = value > 0 if open_low else value >= 0
    high_ok = value < 1 if open_high else value <= 1
    if not (low_ok and high_ok):
        lo, hi = "(" if open_low else "[", ")" if open_high else "]"
        raise ParameterError(f"{name} must be in {lo}0, 1{hi}, got {value!r}")
    return value


def integer(name: str, value: Any, *, minimum: int = 0) -> int:
    """An integer ≥ ``minimum`` (Python or numpy int, not bool)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ParameterError(f"{name} must be an integer, got {value!r} "
                             f"({type(value).__name__})")
    if value < minimum:
        raise ParameterError(f"{name} must be at least {minimum}, got {value}")
    return int(value)


def optional(check, name: str, value: Any, **kwargs) -> Any:
    """``check(name, value)`` unless ``value`` is None."""
    return None if value is None else check(name, value, **kwargs)


def field(parameters: Mapping[str, Any], name: str, where: str = "parameters") -> Any:
    """``parameters[name]``, or an ArtifactError naming the missing field."""
    if not isinstance(parameters, Mapping):
        raise ArtifactError(f"{where} must be a JSON object, got {type(parameters).__name__}")
    if name not in parameters:
        raise ArtifactError(f"{where} lack the field {name!r} (present: "
                            f"{', '.join(sorted(parameters)) or 'none'})")
    return parameters[name]


def same(name: str, stored: Any, derived: Any, rel: float = 1e-9) -> None:
    """A stored derived value must equal what the parameters give again."""
    if stored is None and derived is None:
        return
    ok = (stored is not None and derived is not None
          and not isinstance(stored, bool)
          and isinstance(stored, (int, float)) and math.isclose(stored, derived, rel_tol=rel))
    if not ok:
        raise ArtifactError(f"field {name!r} = {stored!r} does not follow from the other "
                            f"parameters, which give {derived!r}; the file was altered or "
                            "assembled from different releases")


def prior_bound(m: int, n: int, k: float | None, d: float | None) -> float:
    """The adversary's prior bound d from exactly one of ``k`` (d = k·n/m) or ``d``,
    checked to lie in (0, 1), for a table of ``n`` records over a domain of ``m``
    tuples (every family's ``for_privacy``)."""
    if (k is None) == (d is None):
        raise ParameterError("give exactly one of k (d = k·n/m) or d")
    if k is not None:
        k = real("k", k)
        if k <= 0:
            raise ParameterError(f"k must be positive, got {k}")
        d = k * n / m
    else:
        d = real("d", d)
    if not 0 < d < 1:
        raise ParameterError(f"d must be in (0, 1), got d = {d:.6g} (n = {n:,}, "
                             f"m = {m:,}; with k, d = k·n/m, so k must be below m/n = "
                             f"{m / n:.6g})")
    return d


def privacy_loss(epsilon: object) -> float:
    """A privacy loss ε asked for: a positive real."""
    epsilon = real("epsilon", epsilon)
    if epsilon <= 0:
        raise ParameterError(f"epsilon (the privacy loss) must be positive, got {epsilon}")
    return epsilon


def prior_agrees(d: float, stated: float, epsilon: float, m: int, n: int, gamma: float,
                 what: str) -> float:
    """``d`` when ``stated``, the ε of ``what`` at d, is the ε asked for (a
    ``for_privacy`` given both epsilon and k or d); else a ParameterError."""
    if not math.isclose(stated, epsilon, rel_tol=1e-6):
        raise ParameterError(
            f"epsilon = {epsilon} disagrees with d = {d:.6g} (k = {d * m / n:.6g}) "
            f"at γ = {gamma}: {what} there has ε = {stated:.6g}. Give epsilon or k/d, not "
            "both (the usefulness failure probability, once called epsilon, is "
            "failure_probability)")
    return d


def prior_at_least_base_rate(d: float | None, n: int | None, m: int, allow: Any) -> bool:
    """``allow``, checked, after refusing d below the base rate n/m unless it is True.

    A (d, γ) guarantee for d < n/m is for an adversary whose prior is below the
    share of the domain the table fills, which the papers do not protect
    against; every table mechanism asks for it the same way.
    """
    if not isinstance(allow, bool):
        raise ParameterError(f"allow_prior_below_base_rate must be True or False, got {allow!r}")
    if n is not None and d is not None and d * m < n and not allow:
        raise ParameterError(
            f"d = {d:.6g} is below the base rate n/m = {n / m:.6g} (k = {d * m / n:.3g} < 1): "
            "an adversary whose prior is below the share of the domain the table fills is not "
            "one the paper protects against. Ask for k ≥ 1, or pass "
            "allow_prior_below_base_rate=True to give that up knowingly")
    return allow
