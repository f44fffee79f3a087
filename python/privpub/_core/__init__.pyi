"""Type stubs for the Rust extension ``privpub._core`` (thin bindings over rust/src).

The extension holds nothing at its top: each binding file ``rust/src/bindings/X.rs``
registers the submodule ``privpub._core.X``, stubbed in ``X.pyi`` beside this file
(tests/test_layout.py holds the three to one another, tests/core/test_core_stub.py
each stub to the functions' signatures). Every function takes numpy arrays and plain
numbers, releases the GIL for its loop, and raises ``privpub.core.errors`` exceptions
carrying ``attribute_index`` and ``row`` where they apply. None decides a privacy
parameter.
"""

from . import attacks as attacks
from . import codes as codes
from . import counting as counting
from . import graph as graph
from . import parquet as parquet
from . import query as query
from . import sampling as sampling
from . import splu as splu
from . import tails as tails
