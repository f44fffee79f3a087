"""Keywords renamed so that each parameter name has one meaning (issue 23).

Before 1.0 an old keyword is not accepted under its old name: passing it is a
``TypeError`` as for any unknown keyword, but one that names the new keyword,
so a caller does not have to guess which of the remaining names it became.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def renamed_keywords(**renames: str) -> Callable[[F], F]:
    """Decorator: calling with an old keyword (``old=new`` in ``renames``) raises a
    TypeError naming the new one. The signature is the wrapped function's."""

    def decorate(func: F) -> F:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            old = [k for k in kwargs if k in renames]
            if old:
                raise TypeError(f"{func.__qualname__}() got the keyword {old[0]!r}, which is "
                                f"now called {renames[old[0]]!r}")
            return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate
