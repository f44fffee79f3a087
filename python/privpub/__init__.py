"""privpub: privacy-preserving data publishing and query answering.

Each family's mechanism is a top-level name: ``AlphaBeta`` (and
``MultiViewPublisher``, ``SourceDistribution``), ``FRAPP``, ``SPLUGen``, and the
graph mechanisms (``RelationshipMechanism``, ``MultipleQueryMechanism``,
``NegativeLeakageMechanism``, ``LaplaceMechanism``, ``SmoothTriangleMechanism``
over a ``Graph``). Import the pieces you need from here::

    import privpub
    df, schema = privpub.datasets.load_adult()
    codes = schema.encode(df)

The package is laid out by concept, each layer importing only those below it
(see docs/design.md): ``core`` (errors, seeding, guarantees, the release
contract, storage, table inputs, code limbs), ``counting`` (the query language
and exact domain counts, ``count_domain``), ``tables`` (schemas, columnar views,
table releases), then one subpackage per mechanism family (``alphabeta``,
``frapp``, ``graphs``, ``attacks``, ``splu``), ``planning`` (which parameters each
mechanism accepts for a table), ``datasets`` and ``experiments``.
"""

# The families register their planners as imported, αβ, FRAPP, SPLU-Gen: a plan's order.
from privpub import alphabeta, attacks, datasets, frapp, graphs, report, splu  # noqa: F401
from privpub.alphabeta import AlphaBeta, MultiViewPublisher, SourceDistribution, accounting
from privpub.core.errors import (
    ArtifactError,
    CapacityError,
    CodeError,
    DataTypeError,
    DomainError,
    MissingValueError,
    OutputExistsError,
    ParameterError,
    PrivacyWarning,
    PrivpubError,
    QueryError,
    SchemaError,
    ShapeError,
    UsefulnessWarning,
)
from privpub.core.estimate import Estimate, Estimates
from privpub.core.guarantee import Claim, Guarantee, Resolution
from privpub.core.release import Mechanism, Release
from privpub.core.seeding import RandomSource, resolve_seed
from privpub.core.version import LIBRARY_VERSION as __version__
from privpub.counting import Condition, col, count_domain
from privpub.domain.attributes import Categorical, IntRange
from privpub.domain.schema import Schema
from privpub.frapp import FRAPP
from privpub.graphs import (
    Graph,
    LaplaceMechanism,
    MultipleQueryMechanism,
    NegativeLeakageMechanism,
    RelationshipMechanism,
    SmoothTriangleMechanism,
)
from privpub.planning import Plan, expected_view_size, plan
from privpub.splu import SPLUGen
from privpub.tables.artifact import Artifact
from privpub.tables.opening import open_release as open  # noqa: A001 (privpub.open)
from privpub.tables.published import PublishedView
from privpub.tables.viewcounts import Counts
from privpub.viewfile.fileview import FileView
from privpub.viewfile.rows import MemoryView, TableView

__all__ = [
    "AlphaBeta",
    "Artifact",
    "ArtifactError",
    "CapacityError",
    "Categorical",
    "Claim",
    "CodeError",
    "Condition",
    "Counts",
    "DataTypeError",
    "DomainError",
    "Estimate",
    "Estimates",
    "FRAPP",
    "FileView",
    "Graph",
    "Guarantee",
    "IntRange",
    "LaplaceMechanism",
    "Mechanism",
    "MemoryView",
    "MissingValueError",
    "MultiViewPublisher",
    "MultipleQueryMechanism",
    "NegativeLeakageMechanism",
    "OutputExistsError",
    "ParameterError",
    "Plan",
    "PrivacyWarning",
    "PrivpubError",
    "PublishedView",
    "QueryError",
    "RandomSource",
    "RelationshipMechanism",
    "Release",
    "Resolution",
    "Schema",
    "SPLUGen",
    "SchemaError",
    "ShapeError",
    "SmoothTriangleMechanism",
    "SourceDistribution",
    "TableView",
    "UsefulnessWarning",
    "__version__",
    "accounting",
    "col",
    "count_domain",
    "attacks",
    "datasets",
    "expected_view_size",
    "graphs",
    "open",
    "plan",
    "report",
    "resolve_seed",
    "splu",
]
