"""privpub: privacy-preserving data publishing and query answering.

Import the pieces you need from here::

    import privpub
    df, schema = privpub.datasets.load_adult()
    codes = schema.encode(df)
"""

from importlib.metadata import PackageNotFoundError, version

from privpub import accounting, datasets
from privpub.alphabeta import AlphaBeta
from privpub.artifacts import Artifact
from privpub.errors import (
    ArtifactError,
    CodeError,
    DataTypeError,
    DomainError,
    MissingValueError,
    ParameterError,
    PrivpubError,
    QueryError,
    SchemaError,
)
from privpub.frapp import FRAPP
from privpub.multiview import MultiViewPublisher
from privpub.query import Condition, col
from privpub.schema import Categorical, IntRange, Schema
from privpub.seeding import RandomSource, resolve_seed
from privpub.views import Estimate, PublishedView

try:
    __version__ = version("privpub")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0+unknown"

__all__ = [
    "AlphaBeta",
    "Condition",
    "Estimate",
    "FRAPP",
    "MultiViewPublisher",
    "PublishedView",
    "accounting",
    "col",
    "Artifact",
    "ArtifactError",
    "Categorical",
    "CodeError",
    "DataTypeError",
    "DomainError",
    "IntRange",
    "MissingValueError",
    "ParameterError",
    "PrivpubError",
    "QueryError",
    "RandomSource",
    "Schema",
    "SchemaError",
    "__version__",
    "datasets",
    "resolve_seed",
]
