"""The release contract every mechanism family implements.

A *mechanism* (:class:`Mechanism`) has a ``name``, its ``parameters()``
(JSON-ready), a ``guarantee()``, and ``publish(data, seed=None)``
(:class:`Publisher`) or ``answer(data, seed=None)`` (:class:`Answerer`). It
is rebuilt from a release's parameters by ``from_parameters(schema,
parameters)``, which runs the same checks as its constructor: a release file
is untrusted input.

A *release* carries the mechanism's name and parameters, the seed policy and
the library version beside its payload, and reopens from its file alone.
Mechanisms register themselves (:func:`register_mechanism`) so a reopened
release finds the class that validates its parameters and estimates from it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar, runtime_checkable

from privpub.core.artifacts import shown
from privpub.core.errors import ArtifactError
from privpub.core.files import write_text
from privpub.core.guarantee import Guarantee
from privpub.core.seeding import SEED_POLICIES
from privpub.core.signing import Signed, signed_document
from privpub.core.validate import field
from privpub.core.version import LIBRARY_VERSION

if TYPE_CHECKING:  # (a type-only name: core does not run domain; tests/test_layout.py)
    from privpub.domain.schema import Schema


@runtime_checkable
class Mechanism(Protocol):
    """What every mechanism offers. A mechanism also either publishes data
    (:class:`Publisher`: the table families) or answers queries on it
    (:class:`Answerer`: the graph families); each returns a :class:`Release`."""

    #: The name releases store; :func:`register_mechanism` maps it back to the class.
    name: ClassVar[str]

    def parameters(self) -> dict[str, Any]:
        """Everything that rebuilds this mechanism, JSON-ready (stored in every release)."""
        ...

    def guarantee(self) -> Guarantee:
        """Each claim with the theorem it comes from, whether it holds for these
        parameters (and, on a release, for the data published) and for whom not."""
        ...

    @classmethod
    def from_parameters(cls, schema: Any, parameters: Mapping[str, Any]) -> Mechanism:
        """The mechanism of a release's stored parameters, through the same checks
        as the constructor (a release file is untrusted input)."""
        ...


@runtime_checkable
class Publisher(Mechanism, Protocol):
    """A mechanism that publishes a table (αβ, FRAPP, SPLU-Gen)."""

    def publish(self, data: Any, seed: Any = None) -> Release:
        """The release of ``data`` (a frame, Arrow table, path, code array or a
        dask DataFrame): a release with ``estimate(where)`` and
        ``estimate_many(wheres)`` (:mod:`privpub.core.estimate`). ``seed`` None
        draws from the OS CSPRNG (real releases); an int or Generator reproduces."""
        ...


@runtime_checkable
class Answerer(Mechanism, Protocol):
    """A mechanism that answers a query on private data (the graph mechanisms)."""

    def answer(self, data: Any, seed: Any = None) -> Release:
        """The noisy answer (a release) to the mechanism's query on ``data``: a
        release with ``estimate()``, the estimate of the query's true answer
        (:mod:`privpub.core.estimate`). ``seed`` as for :meth:`Publisher.publish`."""
        ...


_MECHANISMS: dict[str, type[Mechanism]] = {}
_DOCUMENTS: dict[str, type[DocumentRelease]] = {}
_M = TypeVar("_M", bound="type[Mechanism]")
_D = TypeVar("_D", bound="type[DocumentRelease]")
#: What builds a release's card. privpub.report registers it on import: the card
#: reads planning and audits, layers above core, so core cannot import it.
_CARD_BUILDER: list[Callable[..., Any]] = []
#: Defaults of Release.report: sampled queries, audit targets, presence-audit rounds.
CARD_QUERIES = 12
CARD_TARGETS = 64
CARD_ROUNDS = 20


def register_card_builder(build: Callable[..., Any]) -> Callable[..., Any]:
    """Make ``build(release, data, audit, **sizes)`` what :meth:`Release.report` calls."""
    _CARD_BUILDER[:] = [build]
    return build


def register_mechanism(cls: _M) -> _M:
    """Class decorator: releases named ``cls.name`` are rebuilt by ``cls``."""
    if _MECHANISMS.get(cls.name, cls) is not cls:
        raise ValueError(f"mechanism name {cls.name!r} is registered twice")
    _MECHANISMS[cls.name] = cls
    return cls


def register_release_document(cls: _D) -> _D:
    """Class decorator: a release stored as one JSON document (``to_dict`` /
    ``from_dict``), reopened by its stored ``kind`` (:func:`release_documents`)."""
    if _DOCUMENTS.get(cls.kind, cls) is not cls:
        raise ValueError(f"release kind {cls.kind!r} is registered twice")
    _DOCUMENTS[cls.kind] = cls
    return cls


def release_documents() -> dict[str, type[DocumentRelease]]:
    """The release kinds stored as JSON documents, by kind."""
    return dict(_DOCUMENTS)


def current_parameters(mechanism: str, parameters: Mapping[str, Any]) -> dict[str, Any]:
    """``parameters`` with the names earlier versions stored read as today's.

    A mechanism lists its renamed parameters as ``renamed_parameters`` (old name →
    new name); files written before a rename still reopen. A file holding both
    names is refused rather than one of them silently dropped.
    """
    renamed = getattr(mechanism_class(mechanism), "renamed_parameters", {})
    out = dict(parameters)
    for old, new in renamed.items():
        if old in out:
            if new in out:
                raise ArtifactError(f"parameters hold both {old!r} (the name earlier versions "
                                    f"stored) and {new!r}: which one holds is ambiguous")
            out[new] = out.pop(old)
    return out


def mechanism_class(name: Any) -> type[Mechanism]:
    """The registered class of mechanism ``name``."""
    if not isinstance(name, str) or name not in _MECHANISMS:
        raise ArtifactError(f"field 'mechanism' = {shown(name)} is not a mechanism this library "
                            f"knows ({', '.join(sorted(_MECHANISMS))})")
    return _MECHANISMS[name]


class Release:
    """What every release carries besides its payload.

    Subclasses hold the payload (a table view, a query answer, …) and set
    ``kind``; ``mechanism_object()`` is the mechanism rebuilt (and so
    re-validated) from the stored parameters. Every release also estimates,
    with one contract (:mod:`privpub.core.estimate`): ``estimate(...)`` returns
    an :class:`~privpub.core.estimate.Estimate`, ``estimate_many(...)`` an
    :class:`~privpub.core.estimate.Estimates` batch (a table release takes
    WHERE conditions; a graph answer estimates its own query's true answer).
    """

    kind: ClassVar[str]
    #: False for a table release (it estimates WHERE conditions); True for a query
    #: answer that answers its own query (a graph answer: ``estimate_many()`` takes
    #: no condition; see :class:`~privpub.core.capabilities.AnswersOwnQuery`).
    answers_own_query: ClassVar[bool] = False
    #: Who signed the file this release was opened from, checked as it was opened
    #: (:mod:`privpub.core.signing`); None for an unsigned file or a release made here.
    signed: Signed | None = None

    def __init__(self, mechanism: str, parameters: Mapping[str, Any], seed_policy: str,
                 library_version: str = LIBRARY_VERSION, schema: Schema | None = None):
        if seed_policy not in SEED_POLICIES:
            raise ArtifactError(f"field 'seed_policy' = {shown(seed_policy)} is not one of "
                                f"{list(SEED_POLICIES)}")
        if not isinstance(library_version, str):
            raise ArtifactError(f"field 'library_version' must be a string, got "
                                f"{shown(library_version)}")
        self.mechanism = mechanism
        self.parameters = current_parameters(mechanism, parameters)
        self.seed_policy = seed_policy
        self.library_version = library_version
        self._mechanism = mechanism_class(mechanism).from_parameters(schema, self.parameters)

    def mechanism_object(self) -> Any:
        """The mechanism, rebuilt from the parameters (checked as by its constructor)."""
        return self._mechanism

    def guarantee(self) -> Guarantee:
        """The guarantee of the mechanism that made this release."""
        return self._mechanism.guarantee()

    def report(self, data: Any = None, audit: bool = False, *, n_queries: int = CARD_QUERIES,
               n_targets: int = CARD_TARGETS, rounds: int = CARD_ROUNDS,
               seed: Any = 0) -> Any:
        """This release's card (:class:`privpub.report.Card`): one self-contained
        HTML page (``card.html``, ``card.write(path)``) with what was released,
        who is protected (the guarantee's claims, and for αβ and FRAPP each
        adversary's posterior over priors), how accurate its estimates are,
        what an attacker gets, and what ``plan`` offers instead.

        Parameters
        ----------
        data : table, optional
            The table the release was made from (a graph answer: its Graph): the
            sampled queries then show the true counts and measured coverage.
        audit : bool
            Run the attribute and presence audits (needs ``data``); their size is
            ``n_targets`` (targets, and candidates per round) and ``rounds``.
        n_queries : int
            Queries sampled for the accuracy section (1–3 attributes each).
        seed : optional
            Draws the sampled queries and the audits (default 0: a card is reproducible).

        Examples
        --------
        >>> import privpub
        >>> df, schema = privpub.datasets.load_adult()
        >>> mech = privpub.AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10)
        >>> card = mech.publish(df, seed=1, duplicates="set").report(df)
        >>> card.html.startswith("<!DOCTYPE html>")
        True
        """
        if not _CARD_BUILDER:
            raise RuntimeError("privpub.report is not imported (import privpub imports it)")
        return _CARD_BUILDER[0](self, data, audit, n_queries=n_queries, n_targets=n_targets,
                                rounds=rounds, seed=seed)

    def envelope(self) -> dict[str, Any]:
        """The metadata fields every release stores."""
        return {"kind": self.kind, "library_version": self.library_version,
                "mechanism": self.mechanism, "parameters": self.parameters,
                "seed_policy": self.seed_policy}

    @staticmethod
    def read_envelope(meta: Mapping[str, Any], kind: str) -> dict[str, Any]:
        """The envelope fields of stored metadata, each present and of the right type."""
        found = field(meta, "kind", "metadata")
        if found != kind:
            raise ArtifactError(f"field 'kind' = {shown(found)}: this file holds a "
                                f"{shown(found)}, not a {kind!r}")
        parameters = field(meta, "parameters", "metadata")
        if not isinstance(parameters, dict):
            raise ArtifactError(f"field 'parameters' must be a JSON object, got "
                                f"{type(parameters).__name__}")
        return {"mechanism": field(meta, "mechanism", "metadata"), "parameters": parameters,
                "seed_policy": field(meta, "seed_policy", "metadata"),
                "library_version": field(meta, "library_version", "metadata")}


class DocumentRelease(Release):
    """A release stored as one JSON document (``to_dict`` / ``from_dict``; a graph
    answer), reopened by :func:`privpub.open` by its stored ``kind``
    (:func:`register_release_document`)."""

    def to_dict(self) -> dict[str, Any]:
        """The release as a JSON-ready document."""
        raise NotImplementedError

    @classmethod
    def from_dict(cls, meta: Mapping[str, object]) -> DocumentRelease:
        """The release of a document :meth:`to_dict` wrote (checked: the file is untrusted)."""
        raise NotImplementedError

    def to_json(self, path: str | os.PathLike[str], *, sign: Any = None,
                overwrite: bool = False) -> None:
        """Write :meth:`to_dict` as JSON to ``path``, whole or not at all (an
        existing ``path`` is refused unless ``overwrite=True``); ``sign`` (an
        Ed25519 private key or its file) signs it (:mod:`privpub.core.signing`),
        checked by ``privpub.open(path, trust=public_key)``."""
        document = self.to_dict() if sign is None else signed_document(self.to_dict(), sign)
        write_text(path, json.dumps(document, indent=2) + "\n", overwrite=overwrite)
