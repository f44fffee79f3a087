"""Relationship privacy for join queries on graphs (Rastogi, Hay, Miklau,
Suciu, PODS 2009): graphs as a relation R, CQ(≠) queries and their exact
counts, the stability analysis of Sec. 3.1, local and global sensitivity, and
the mechanisms (Algorithm 2.1, its min(λ, GS), multiple-query and
negative-leakage forms, the Laplace baseline, and the smooth-sensitivity
triangle mechanism)."""

from privpub.graphs.analysis import dense, density, is_stable, stability
from privpub.graphs.answer import GraphAnswer
from privpub.graphs.exact import count
from privpub.graphs.graph import Graph
from privpub.graphs.mechanism import LaplaceMechanism, RelationshipMechanism
from privpub.graphs.multiple import GraphAnswers, MultipleQueryMechanism
from privpub.graphs.negative import NegativeLeakageMechanism
from privpub.graphs.query import (
    CQ,
    Atom,
    Const,
    Var,
    clique,
    cycle,
    path_from,
    pattern,
    triangle,
    two_path,
)
from privpub.graphs.sensitivity import LocalSensitivity, global_sensitivity, local_sensitivity
from privpub.graphs.smooth import SmoothSensitivity, SmoothTriangleMechanism, smooth_sensitivity

__all__ = ["CQ", "Atom", "Const", "Graph", "GraphAnswer", "GraphAnswers", "LaplaceMechanism",
           "LocalSensitivity", "MultipleQueryMechanism", "NegativeLeakageMechanism",
           "RelationshipMechanism", "SmoothSensitivity", "SmoothTriangleMechanism", "Var",
           "clique", "count", "cycle", "dense", "density", "global_sensitivity", "is_stable",
           "local_sensitivity", "path_from", "pattern", "smooth_sensitivity", "stability",
           "triangle", "two_path"]
