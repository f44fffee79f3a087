"""Triangle counts under (ε, δ)-differential privacy with smooth sensitivity.

What a user wanting private triangle counts would pick today instead of
Algorithm 2.1 or the global-sensitivity Laplace mechanism: Nissim,
Raskhodnikova & Smith, "Smooth sensitivity and sampling in private data
analysis" (STOC 2007; NRS), in the computable form for triangles that Karwa,
Raskhodnikova, Smith & Yaroslavtsev, "Private analysis of graph structure"
(PVLDB 2011; KRSY) use as their triangle baseline.

The graph is undirected and simple (self-loops play no part in a triangle);
neighbouring graphs have the same m nodes and differ in one edge. f = the
number of triangles T (sets). For nodes i ≠ j, a_ij = |N(i) ∩ N(j)| and b_ij =
the nodes other than i, j adjacent to exactly one of them. What this module
relies on:

1. Local sensitivity at distance s (NRS Sec. 3.2, KRSY Sec. 3):
   LS^(s)(G) = max over G' within s edge changes of LS(G')
             = max_{i≠j} min(a_ij + ⌊(s + min(s, b_ij))/2⌋, m − 2),
   LS^(0) = max a_ij. Checked here, not taken on trust: tests recompute
   LS^(s) by its definition on every graph with 5 nodes (and sampled graphs
   with 6) and compare.
2. The β-smooth sensitivity S*_β(G) = max_{s ≥ 0} e^{−βs} LS^(s)(G) is a
   β-smooth upper bound on LS (NRS Def. 2.1, Lemma 2.3 / Prop. 3.1's
   construction). LS^(s) stops growing once it reaches m − 2, so s runs
   only until then (or until e^{−βs}(m − 2) cannot beat the maximum so far).
3. Admissible noise (NRS Sec. 2, Laplace example): for 0 < δ < 1, the
   Laplace density e^{−|z|}/2 is (α, β)-admissible with α = ε/2 and
   β = ε/(2 ln(2/δ)), so A(G) = f(G) + (S*_β(G)/α)·L = f(G) + 2S*/ε·L,
   L ~ Laplace(1), is (ε, δ)-differentially private. This is the (ε, δ)
   variant; we do not implement the pure-ε Cauchy-type one.

Neighbours. NRS's neighbours differ in one entry of the database; a graph
is its adjacency vector over the m(m − 1)/2 node pairs, so neighbours differ
by adding or removing one edge (one friendship: both tuples of the symmetric
R). That is (ε, δ)-differential privacy per edge. The relationship-privacy
paper's ε-indistinguishability (Def. 2.7) compares graphs of the same size
differing by *replacing* one edge e by another e'. G and G' = G − e + e'
share the add/remove neighbour G'' = G − e, so for every set S of outputs
  Pr[A(G) ∈ S] ≤ e^ε Pr[A(G'') ∈ S] + δ ≤ e^ε (e^ε Pr[A(G') ∈ S] + δ) + δ
              = e^{2ε} Pr[A(G') ∈ S] + (1 + e^ε) δ,
and the same with G, G' swapped: (2ε, (1 + e^ε)δ) under replacement (group
privacy for a group of two, the chain written out; Vadhan, "The Complexity
of Differential Privacy" 2017, Lemma 2.2, states the looser (kε, k·e^{kε}·δ)
for k steps). Both are stated by :meth:`SmoothTriangleMechanism.guarantee`.

The noise scale 12 S*/ε depends on the graph, and the (ε, δ) guarantee
covers the answer only, not the scale: an answer carries the largest scale
the mechanism can use, 12(m − 2)/ε (S* ≤ m − 2), and its interval is
computed at that scale, so it is conservative (:mod:`privpub.graphs.intervals`).

What is released is q = Δ as the rest of :mod:`privpub.graphs` counts it:
ordered assignments, Δ = 6T, with the noise scaled by 6 as well, and then
rounded to an integer: round(Δ + 12 S*/ε · L) = Δ + round(12 S*/ε · L),
post-processing of the mechanism above. The rounded noise is sampled exactly
from the ChaCha bits (:meth:`Bits.rounded_laplace`), so no floating-point
rendering is published. S* itself is computed in float64 (the largest of
e^{−βs}·LS^(s), each to within a few ulps) and its scale rounded up to the
next double, so the β-smoothness of the S* used holds up to a relative
1e−15, a change of ε below 1e−14; we state it rather than hide it.

The a_ij / b_ij maxima over all m(m − 1)/2 pairs are computed in Rust
(rust/src/graph/smooth.rs): only the largest b_ij per value of a_ij matters.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

import privpub._core as _core
from privpub.core import validate
from privpub.core.errors import ArtifactError, ParameterError
from privpub.core.guarantee import Claim, Guarantee
from privpub.core.release import register_mechanism
from privpub.core.seeding import SeedLike, resolve_seed
from privpub.graphs.answer import GraphAnswer
from privpub.graphs.claims import (
    GRAPH_PARAMETERS,
    check_clamp,
    check_epsilon,
    facts_of,
    graph_claims,
)
from privpub.graphs.exact import count
from privpub.graphs.graph import Graph, check_graph
from privpub.graphs.intervals import ROUNDED_LAPLACE, NoiseLaw, QueryRange
from privpub.graphs.noise import Bits, scale_up
from privpub.graphs.query import triangle
from privpub.graphs.sensitivity import query_range

ASSIGNMENTS_PER_TRIANGLE = 6  # Δ counts ordered assignments (docs/design.md, "A query's value")

DP_ADD_REMOVE = "(ε, δ)-differential privacy (add or remove one edge)"
DP_REPLACE = "(2ε, (1 + e^ε)δ)-indistinguishability (replace one edge, Def. 2.7)"


def _undirected(graph: Graph) -> Graph:
    check_graph(graph)
    if graph.directed or not graph.symmetric:
        raise ParameterError("smooth sensitivity of the triangle count is defined here for "
                             "undirected graphs (Graph.from_edges(..., directed=False)); "
                             "this graph is directed")
    return graph


def pair_frontier(graph: Graph) -> np.ndarray:
    """best[a] = the largest b_ij over node pairs i ≠ j with a_ij = a common
    neighbours (−1 where no pair has a_ij = a), up to the largest a_ij."""
    g = _undirected(graph)
    return np.asarray(_core.graph.triangle_pairs(g.relation))


def local_sensitivity_at(frontier: np.ndarray, m: int, s: np.ndarray | int) -> np.ndarray:
    """LS^(s) of the triangle count T (sets) for each distance s, from the frontier:
    max_a min(a + ⌊(s + min(s, best[a]))/2⌋, m − 2) over the a that occur."""
    s = np.atleast_1d(np.asarray(s, dtype=np.int64))
    a = np.flatnonzero(frontier >= 0)
    if a.size == 0:
        return np.zeros(s.shape, dtype=np.int64)
    b = frontier[a]
    c = a[None, :] + (s[:, None] + np.minimum(s[:, None], b[None, :])) // 2
    ls: np.ndarray = np.minimum(c.max(axis=1), m - 2)
    return ls


@dataclass(frozen=True)
class SmoothSensitivity:
    """S*_β(G) of the triangle count T (sets), the distance s attaining it, and
    LS^(0) = the local sensitivity of T."""

    value: float
    at_distance: int
    local: int


def smooth_sensitivity(graph: Graph, smoothing: float) -> SmoothSensitivity:
    """S*_β(G) = max_s e^{−βs} LS^(s)(G) for the triangle count T (sets); ``smoothing``
    is β.

    Examples
    --------
    >>> import numpy as np
    >>> g = Graph.from_edges(np.array([[0, 1], [1, 2], [2, 0], [2, 3]]), directed=False)
    >>> s = smooth_sensitivity(g, 0.5)    # LS = 1; one edge away (add {0, 3}) LS = 2 = m − 2
    >>> s.local, s.at_distance, f"{s.value:.4f}"    # S* = e^{-0.5}·2
    (1, 1, '1.2131')
    """
    smoothing = validate.real("smoothing", smoothing)
    if smoothing <= 0:
        raise ParameterError(f"smoothing must be positive, got {smoothing}")
    frontier = pair_frontier(graph)
    m = graph.m
    if m < 3:
        return SmoothSensitivity(0.0, 0, 0)
    best, at, start, chunk = 0.0, 0, 0, 256
    local = int(local_sensitivity_at(frontier, m, 0)[0])
    while True:
        s = np.arange(start, start + chunk)
        ls = local_sensitivity_at(frontier, m, s)
        values = np.exp(-smoothing * s) * ls
        k = int(np.argmax(values))
        if values[k] > best:
            best, at = float(values[k]), int(s[k])
        start += chunk
        # LS^(s) ≤ m − 2 for every s: stop once the cap is reached (values then
        # only fall) or e^{−βs}(m − 2) cannot beat the maximum so far.
        if ls[-1] >= m - 2 or math.exp(-smoothing * start) * (m - 2) <= best:
            return SmoothSensitivity(best, at, local)


@register_mechanism
class SmoothTriangleMechanism:
    """Δ + round(12 S*_β/ε · Laplace(1)): (ε, δ)-differential privacy per edge
    (add or remove one), (2ε, (1 + e^ε)δ) when one edge replaces another, with
    β = ε/(2 ln(2/δ)). See the module docstring for what is relied on.

    Parameters
    ----------
    epsilon : float > 0
    delta : float in (0, 1)
        Stated, not tuned: the experiment uses δ = 1/m².
    m : int ≥ 3
        The number of nodes (public; :attr:`Graph.m`).

    Examples
    --------
    >>> mech = SmoothTriangleMechanism(1.0, 1 / 4039**2, m=4039)
    >>> f"{mech.beta:.4f}"
    '0.0289'
    """

    name: ClassVar[str] = "smooth-sensitivity-triangles"
    #: What each parameter means (:class:`~privpub.core.capabilities.DescribesParameters`).
    parameter_meanings = GRAPH_PARAMETERS

    def __init__(self, epsilon: float, delta: float, m: int, *,
                 graph_facts: Mapping[str, Any] | None = None):
        self.epsilon = check_epsilon(epsilon)
        self.delta = validate.real("delta", delta)
        if not 0 < self.delta < 1:
            raise ParameterError(f"delta must be in (0, 1), got {self.delta}")
        self.m = validate.integer("m", m, minimum=3)
        self.graph_facts = dict(graph_facts or {})
        self.query = triangle()

    @property
    def beta(self) -> float:
        """β = ε/(2 ln(2/δ)) (Laplace noise is (ε/2, β)-admissible)."""
        return self.epsilon / (2 * math.log(2 / self.delta))

    def noise_scale(self, graph: Graph) -> float:
        """12 S*_β(G)/ε: the Laplace scale for Δ = 6T on this graph (data-dependent,
        never published)."""
        self._check(graph)
        s = smooth_sensitivity(graph, self.beta).value
        return 2 * ASSIGNMENTS_PER_TRIANGLE * s / self.epsilon

    def draw(self, value: int, scale: float, bits: Bits) -> int:
        """Δ + round(scale·L) for the true Δ and the scale of :meth:`noise_scale`
        (positive: for m ≥ 3, LS^(s) ≥ 1 from s = 2 on, so S* > 0)."""
        return value + bits.rounded_laplace(scale_up(scale))

    def parameters(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "delta": self.delta, "m": self.m, "beta": self.beta,
                "query": str(self.query), "graph": self.graph_facts}

    @classmethod
    def from_parameters(cls, schema: object, parameters: Mapping[str, Any]
                        ) -> SmoothTriangleMechanism:
        p = parameters
        graph = validate.field(p, "graph")
        if not isinstance(graph, dict):
            raise ArtifactError("field 'graph' must be a JSON object")
        mech = cls(validate.field(p, "epsilon"), validate.field(p, "delta"),
                   validate.field(p, "m"), graph_facts=graph)
        validate.same("beta", validate.field(p, "beta"), mech.beta)
        if validate.field(p, "query") != str(mech.query):
            raise ArtifactError(f"field 'query' = {p['query']!r}: this mechanism answers only "
                                f"{mech.query}")
        return mech

    def error_bound(self) -> tuple[int, float]:
        """(Σ, 1): Pr[|A(G) − Δ(G)| ≥ Σ] ≤ 1/m for every graph, from S* ≤ m − 2
        (Pr[|round(bL)| ≥ k] = e^{−(k − 1/2)/b}); most graphs do far better."""
        b = scale_up(2 * ASSIGNMENTS_PER_TRIANGLE * (self.m - 2) / self.epsilon)
        return math.ceil(float(b) * math.log(self.m) + 0.5), 1.0

    def guarantee(self) -> Guarantee:
        eps, delta = self.epsilon, self.delta
        claims = graph_claims(self.graph_facts)
        claims.append(Claim(
            DP_ADD_REMOVE, True,
            f"ε = {eps}, δ = {delta:.3g} for each undirected edge (the two tuples R(u, v), "
            "R(v, u) together), against any adversary: for graphs G, G' on the same "
            f"m = {self.m:,} nodes where G' is G with one edge added or removed, "
            "Pr[A(G) ∈ S] ≤ e^ε·Pr[A(G') ∈ S] + δ for every set S of outputs. "
            f"The answer is Δ + round(12 S*/ε · L), L ~ Laplace(1), with S* the β-smooth "
            f"sensitivity of the triangle count (β = ε/(2 ln(2/δ)) = {self.beta:.4g}); Laplace "
            "noise is (ε/2, β)-admissible. S* is computed in float64 (relative error ≤ 1e−15, "
            "a change of ε below 1e−14).",
            "Nissim, Raskhodnikova, Smith 2007 (Sec. 2, Sec. 3.2); Karwa et al. 2011 (Sec. 3)"))
        eps2, delta2 = 2 * eps, (1 + math.exp(eps)) * delta
        claims.append(Claim(
            DP_REPLACE, True,
            f"ε' = 2ε = {eps2:.4g}, δ' = (1 + e^ε)δ = {delta2:.3g} for each undirected edge "
            "under the relationship-privacy paper's neighbours (Def. 2.7: graphs with the "
            "same number of edges, one edge replaced by another): G and G' = G − e + e' share "
            "the add/remove neighbour G − e, so Pr[A(G) ∈ S] ≤ e^ε(e^ε·Pr[A(G') ∈ S] + δ) + δ "
            "= e^{2ε}·Pr[A(G') ∈ S] + (1 + e^ε)δ. Nothing tighter is claimed.",
            "group privacy of two add/remove steps (chain written out in the module notes; "
            "Vadhan 2017 Lemma 2.2); paper Def. 2.7"))
        claims.append(Claim(
            "pure ε-indistinguishability", False,
            f"δ = {delta:.3g} > 0: with probability up to δ the e^ε bound may fail; use "
            "LaplaceMechanism for a pure-ε answer (noise from the global sensitivity).",
            "Nissim, Raskhodnikova, Smith 2007"))
        claims.append(Claim(
            "(ε, γ)-adversarial privacy (Algorithm 2.1's notion)", False,
            "this is a different privacy notion: (ε, δ)-differential privacy per edge, not the "
            "paper's adversarial privacy against (δ, k)-bounded PTLM adversaries; Theorem 2.12 "
            "turns ε-indistinguishability (δ = 0) into adversarial privacy, and no such claim is "
            "made here for δ > 0.", "paper Sec. 2.4, Theorem 2.12"))
        sigma, _ = self.error_bound()
        claims.append(Claim(
            "(Σ, Γ)-usefulness", True,
            f"Pr[|A(G) − Δ(G)| ≥ {sigma:,}] ≤ 1/m (Γ = 1) for every graph (from S* ≤ m − 2); "
            "the noise scale is data-dependent and, on sparse graphs, far smaller.", "Def. 2.1"))
        return Guarantee(f"Smooth sensitivity (Δ, ε = {eps}, δ = {delta:.3g}, m = {self.m:,}, "
                         f"β = {self.beta:.4g})", tuple(claims))

    def noise_law(self) -> NoiseLaw:
        """round(b·L) with b ≤ 12(m − 2)/ε, the largest scale this mechanism can use
        (S* ≤ m − 2 on every graph): the scale it used depends on the graph and is
        not published."""
        bound = scale_up(2 * ASSIGNMENTS_PER_TRIANGLE * (self.m - 2) / self.epsilon)
        return NoiseLaw(ROUNDED_LAPLACE, float(bound), scale_is_bound=True)

    def value_range(self) -> QueryRange:
        """[0, m(m − 1)(m − 2)]: Δ counts ordered assignments."""
        return query_range(self.query, self.m)

    @classmethod
    def for_graph(cls, epsilon: float, delta: float, graph: Graph) -> SmoothTriangleMechanism:
        return cls(epsilon, delta, graph.m, graph_facts=facts_of(_undirected(graph)))

    def answer(self, graph: Graph, seed: SeedLike = None, *,
               clamp: bool = False) -> GraphAnswer:
        """A(G) for this undirected graph (its m must be the mechanism's);
        ``clamp=True`` returns it clamped to [0, m(m − 1)(m − 2)]
        (:meth:`GraphAnswer.clamped`: post-processing, no privacy cost)."""
        check_clamp(clamp)
        scale = self.noise_scale(graph)
        source = resolve_seed(seed)
        # Δ over the graph's own relation name (self.query is Δ over R, as published).
        truth = count(graph, triangle(graph.relation_names[0]))
        value = self.draw(truth, scale, Bits(source.derive(self.name)))
        me = SmoothTriangleMechanism(self.epsilon, self.delta, self.m, graph_facts=facts_of(graph))
        out = GraphAnswer(value, self.name, me.parameters(), source.policy)
        return out.clamped() if clamp else out

    def _check(self, graph: Graph) -> None:
        if _undirected(graph).m != self.m:
            raise ParameterError(f"the mechanism was built for m = {self.m:,} but the graph "
                                 f"has m = {graph.m:,}")
