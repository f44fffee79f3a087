"""Numbers written for people, one way everywhere a sentence shows one (the
card, plan's explanation, the mechanism's title on the card): whole numbers
and anything from 1,000 up with separators, others to a few significant digits
in plain decimals, a power of ten only for the very small."""

from __future__ import annotations

import math
import numbers
import re

import numpy as np

#: Significant digits of every figure that is not a whole number below
#: 1,000 (probabilities, ε, stderrs, averages, estimates); from 1,000 up a figure is
#: shown whole, with separators, as a count is.
SIGNIFICANT = 4
#: Below this a figure is written with a power of ten (more leading zeros are not read).
SMALLEST_PLAIN = 1e-6
SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def written(value: object) -> str:
    """The one way of writing a number in plain text (the card writes every
    figure through it, as ``report.html.number``): whole numbers and anything
    from 1,000 up rounded whole with thousands separators; others to
    :data:`SIGNIFICANT` significant digits in plain decimals (0.00004412, not
    4.4121e-05), or with a power of ten below :data:`SMALLEST_PLAIN`; None and
    NaN as an em dash, infinity as ∞."""
    if value is None:
        return "—"
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, numbers.Integral):
        return f"{int(value):,}"
    if not isinstance(value, numbers.Real):
        return str(value)
    x = float(value)
    if math.isnan(x):
        return "—"
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    if x.is_integer() or abs(x) >= 10 ** (SIGNIFICANT - 1):
        return f"{round(x):,}"
    if abs(x) < SMALLEST_PLAIN:
        mantissa, exponent = f"{x:.{SIGNIFICANT - 1}e}".split("e")
        return f"{trimmed(mantissa)} × 10{str(int(exponent)).translate(SUPERSCRIPT)}"
    decimals = SIGNIFICANT - 1 - math.floor(math.log10(abs(x)))
    return trimmed(f"{x:,.{decimals}f}")


def trimmed(decimal: str) -> str:
    """Trailing zeros of a decimal fraction dropped (0.5000 → 0.5, 2.000 → 2)."""
    return decimal.rstrip("0").rstrip(".") if "." in decimal else decimal


#: A decimal figure as Python prints a float (``0.49722``, ``3.85791e-07``, ``1e-05``).
#: Not part of a name, of a dotted version (3.1.2) or of a figure already written
#: with separators (15,081.00); a sentence's full stop may follow.
_FIGURE = re.compile(r"(?<![\w.,])\d+(?:\.\d+(?:e[-+]?\d+)?|e[-+]?\d+)(?!\w|\.\d)")


def figures(sentence: str) -> str:
    """``sentence`` with each decimal figure in it written by :func:`written`
    (whole numbers, already written as a count is, are left as they are)."""
    return _FIGURE.sub(lambda m: written(float(m.group())), sentence)
