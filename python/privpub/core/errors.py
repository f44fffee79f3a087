"""The one exception hierarchy of privpub.

Every error privpub raises on bad input is a :class:`PrivpubError`; the
subclasses also derive from the matching built-in (``ValueError`` or
``TypeError``) so generic handlers keep working. Messages name the column,
value or parameter at fault and what was expected.
"""

from __future__ import annotations

import unicodedata
from typing import cast


class PrivpubError(Exception):
    """Base class of every privpub error.

    Errors raised by the Rust core carry ``attribute_index`` and ``row`` (or
    ``None``) so the Python layer can name the column and value.
    """

    attribute_index: int | None = None
    row: int | None = None


class SchemaError(PrivpubError, ValueError):
    """A schema or attribute definition is invalid (duplicate names, empty domain, …)."""


class DomainError(PrivpubError, ValueError):
    """A data value lies outside its attribute's domain."""


class MissingValueError(DomainError):
    """A column holds NaN or None; privpub never drops or imputes silently."""


class DataTypeError(PrivpubError, TypeError):
    """A column's values have the wrong type for its attribute."""


class CodeError(PrivpubError, ValueError):
    """A tuple code is malformed or not below the domain size m."""


class ParameterError(PrivpubError, ValueError):
    """A parameter (seed, split, privacy level, …) is invalid."""


class OutputExistsError(ParameterError, FileExistsError):
    """An output file exists and was not to be replaced (``overwrite=True``, or
    ``--force`` on the command line, replaces it; an input is never replaced).
    Also a ``FileExistsError``, so generic handlers of either kind catch it."""


class ArtifactError(PrivpubError, ValueError):
    """A published artifact is missing privpub metadata or has it malformed."""


class StatisticsError(ArtifactError):
    """A row group's stored statistics disagree with its rows: ``attribute``'s
    least and greatest domain index (``stated``, as the file's metadata gives
    them; ``observed``, as the rows read hold them), or, when ``attribute`` is
    None, its row count. ``where`` names the file (and part), ``group`` the row
    group (None when the groups' counts disagree with the part's as a whole).
    Statistics rewritten and resealed are found this way by any read that
    reads the group; what a count trusts unread, only a signature covers."""

    def __init__(self, where: str, group: int | None, attribute: str | None,
                 stated: object, observed: object):
        self.where, self.group, self.attribute = where, group, attribute
        self.stated, self.observed = stated, observed
        at = where if group is None else f"{where}, row group {group}"
        if attribute is None:  # (which was edited, the rows or their count, is not known)
            said = (f"{at} holds {observed:,} rows but its statistics say {stated:,}; its "
                    "rows or its statistics were edited or damaged")
        else:  # (the rows read have their digest: the statistics are what lies)
            said = (f"{at}: column {attribute!r} holds indices {_span(observed)} but its "
                    f"statistics say {_span(stated)}; the statistics were edited or damaged")
        super().__init__(said)

    def __reduce__(self) -> tuple[type[StatisticsError], tuple[object, ...]]:
        # (a Dask task's error crosses processes)
        return type(self), (self.where, self.group, self.attribute, self.stated, self.observed)


def _span(bounds: object) -> str:
    # (an attribute's statistics are a (least, greatest) pair, or None for no rows)
    return "none (no rows)" if bounds is None else "{}..{}".format(*cast("tuple[int, int]", bounds))


class ShapeError(PrivpubError, ValueError):
    """Arguments of a Rust kernel disagree in shape, length or layout (columns of
    different lengths, codes of the wrong number of limbs): a bug in the caller,
    not in the data. Raised by ``privpub._core`` alone."""


class CapacityError(PrivpubError, ValueError):
    """A request past what the Rust kernels can hold or count: memory for the
    output, 2^64 stream positions or words, 128-bit counts, 32-bit ids. The
    message names the size that is too large."""


class SignatureError(ArtifactError):
    """A release's signature does not hold under the key the reader trusts: the
    file is unsigned, signed by another key, or edited in a byte it covers."""


class QueryError(PrivpubError, ValueError):
    """A query is malformed: unknown column, type mismatch, unsupported SQL (the
    message names the token), or too large to count within the memory budget."""


class PrivacyWarning(UserWarning):
    """Something weakens what a release protects without making it wrong (a
    domain derived from the data, a seeded run): said once, and in the guarantee."""


class UsefulnessWarning(UserWarning):
    """A release's stated error bound cannot tell its typical counts from zero
    (:class:`privpub.core.guarantee.Resolution`): the bound holds and the
    release is valid, but usefulness holds only weakly. The message gives the
    figures and what would help; the guarantee says the same."""


#: Bidirectional-text controls: shown raw, they reorder what a terminal displays.
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def printable(text: str) -> str:
    """``text`` with control characters escaped (``\\x1b``, ``\\u202e``), for a
    message that quotes bytes read from a file: a terminal escape sequence in
    an input cell must reach the terminal as text, not act on it. Line breaks
    and tabs stay."""
    return "".join(_escaped(c) if c in _BIDI or (unicodedata.category(c) == "Cc"
                                                  and c not in "\n\t") else c for c in text)


def _escaped(c: str) -> str:
    code = ord(c)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
