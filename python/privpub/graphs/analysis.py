"""Query analysis of Sec. 3.1: density, homomorphic images, dense queries,
derivatives and stable queries (Rastogi et al., PODS 2009).

- density(q) = |goals(q)| / |vars(q)|; a query without variables is dense
  (its value is 0 or 1), taken as density ∞.
- A homomorphism maps each variable to a variable or a constant of q while
  keeping every disequality (Def. 3.2); q is dense when every homomorphic
  image has density ≥ 1 (Def. 3.3). Images are enumerated up to renaming of
  variables: each variable joins an earlier class, opens a new one, or
  becomes a constant.
- The derivative of q w.r.t. (g, a) substitutes the constants a for the
  variables of the subgoal g and removes g (Def. 3.4); a ranges over
  D_0 = dummy ∪ const(q), |dummy| = |vars(q)|, enumerated up to renaming of
  the (interchangeable) dummies. A substitution that breaks a disequality
  gives a query that is identically 0 and has no homomorphic image (H is
  empty), so it is vacuously dense and is not listed.
- q is stable when every derivative of every order is dense (Def. 3.6).
  Each derivative removes a subgoal, so orders stop at g.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction

from privpub.graphs.query import CQ, Atom, Const, Term, Var

#: Queries examined before :func:`stability` gives up (the check is coNP).
DEFAULT_BUDGET = 200_000


def density(q: CQ) -> Fraction | float:
    """|goals(q)| / |vars(q)| (``math.inf`` for a query without variables)."""
    return Fraction(q.g, q.v) if q.v else math.inf


def substitute(q: CQ, mapping: dict[Var, Term], name: str | None = None) -> CQ | None:
    """q with each variable replaced by ``mapping`` (others kept); None when a
    disequality becomes t ≠ t (the image is not allowed)."""
    def sub(t: Term) -> Term:
        return mapping.get(t, t) if isinstance(t, Var) else t
    neq = set()
    for pair in q.neq:
        a, b = (sub(t) for t in pair)
        if a == b:
            return None
        if isinstance(a, Var) or isinstance(b, Var):  # two distinct constants: always true
            neq.add(frozenset((a, b)))
    atoms = tuple(dict.fromkeys(Atom(a.relation, tuple(sub(t) for t in a.terms))
                                for a in q.atoms))
    body = {v for a in atoms for v in a.variables()}
    head = tuple(dict.fromkeys(h for h in (sub(x) for x in q.head)
                               if isinstance(h, Var) and h in body))
    # Disequalities on variables that left the body no longer constrain anything.
    neq = {p for p in neq if all(not isinstance(t, Var) or t in body for t in p)}
    return CQ(name or q.name, head, atoms, frozenset(neq))


def _keeps_disequalities(q: CQ, x: Var, target: Term, h: dict[Var, Term]) -> bool:
    """Whether mapping x to target keeps every disequality whose other side is
    a constant or an already mapped variable."""
    for pair in q.neq:
        if x not in pair:
            continue
        (other,) = tuple(pair - {x})
        mapped = h.get(other) if isinstance(other, Var) else other
        if mapped == target:
            return False
    return True


def homomorphic_images(q: CQ) -> Iterator[tuple[dict[Var, Term], CQ]]:
    """Every homomorphic image q_h of q (up to renaming of variables), with h."""
    xs = sorted(q.variables)
    consts = sorted(q.constants, key=str)

    def rec(i: int, classes: list[Var], h: dict[Var, Term]):
        if i == len(xs):
            image = substitute(q, h)
            if image is not None:
                yield dict(h), image
            return
        x = xs[i]
        # The identity first, so a failing query is reported as itself.
        for target in [x, *classes, *consts]:
            if not _keeps_disequalities(q, x, target, h):
                continue
            h[x] = target
            yield from rec(i + 1, classes + [x] if target == x else classes, h)
            del h[x]

    yield from rec(0, [], {})


@dataclass(frozen=True)
class DenseCheck:
    """Whether a query is dense; if not, a homomorphism whose image has density < 1."""

    dense: bool
    density: Fraction | float
    witness: tuple[dict[Var, Term], CQ] | None = None

    def explain(self) -> str:
        if self.dense:
            return f"dense: density {self.density} and every homomorphic image ≥ 1"
        h, image = self.witness
        shown = ", ".join(f"{x}→{t}" for x, t in h.items() if x != t) or "identity"
        return (f"not dense: the homomorphic image under {shown}, {image}, has density "
                f"{density(image)} < 1")


def dense(q: CQ) -> DenseCheck:
    """Def. 3.3: every homomorphic image (q itself included) has density ≥ 1."""
    for h, image in homomorphic_images(q):
        if density(image) < 1:
            return DenseCheck(False, density(q), (h, image))
    return DenseCheck(True, density(q))


def _dummies(q: CQ) -> list[Const]:
    """|vars(q)| fresh constants, named "#k" past those already in q."""
    used = {c.value for c in q.constants if isinstance(c.value, str)}
    out, k = [], 1
    while len(out) < q.v:
        if f"#{k}" not in used:
            out.append(Const(f"#{k}"))
        k += 1
    return out


def derivatives(q: CQ) -> Iterator[tuple[Atom, dict[Var, Const], CQ]]:
    """∂¹(q): (g, a, ∂q/∂(g, a)) for each subgoal g and constants a over
    D_0 = dummy ∪ const(q), up to renaming of the dummies."""
    base = sorted(q.constants, key=str)
    fresh = _dummies(q)
    def assign(xs: list[Var], i: int, used: int, a: dict[Var, Const]):
        """Constants for xs[i:], dummies introduced in order (fresh[used] next)."""
        if i == len(xs):
            yield dict(a)
            return
        for c in [*base, *fresh[:used + 1]]:
            a[xs[i]] = c
            opened = used < len(fresh) and c == fresh[used]
            yield from assign(xs, i + 1, used + opened, a)
        del a[xs[i]]

    for g in sorted(q.goals, key=str):
        xs = sorted(g.variables())
        for a in assign(xs, 0, 0, {}):
            image = substitute(q, a, name=f"d{q.name}")
            if image is None:
                continue
            g_sub = Atom(g.relation, tuple(a.get(t, t) for t in g.terms))
            atoms = tuple(x for x in image.atoms if x != g_sub)
            body = {v for x in atoms for v in x.variables()}
            neq = frozenset(p for p in image.neq
                            if all(not isinstance(t, Var) or t in body for t in p))
            head = tuple(h for h in image.head if h in body)
            yield g, a, CQ(image.name, head, atoms, neq)


@dataclass(frozen=True)
class Stability:
    """The outcome of the stability check, with the reason."""

    stable: bool | None
    reason: str
    examined: int

    def __bool__(self) -> bool:
        return bool(self.stable)


def _connected_pattern(q: CQ) -> bool:
    """Prop. 2.5's class: a subgraph-count query (binary subgoals of one relation,
    pairwise distinct variables, no constants, head = all variables) whose
    pattern is connected."""
    xs = sorted(q.variables)
    if (q.constants or set(q.head) != set(xs) or len({a.relation for a in q.atoms}) != 1
            or any(len(a.terms) != 2 or a.terms[0] == a.terms[1] for a in q.atoms)):
        return False
    if q.neq != frozenset(frozenset((a, b)) for i, a in enumerate(xs) for b in xs[i + 1:]):
        return False
    seen, stack = {xs[0]}, [xs[0]]
    while stack:
        x = stack.pop()
        for a in q.atoms:
            if x in a.terms:
                for y in a.terms:
                    if y not in seen:
                        seen.add(y)
                        stack.append(y)
    return seen == set(xs)


def stability(q: CQ, *, use_proposition: bool = True, budget: int = DEFAULT_BUDGET) -> Stability:
    """Def. 3.6, with the first failing derivative named.

    With ``use_proposition`` a connected subgraph-count query is stable by
    Prop. 2.5 without enumeration. Otherwise derivatives of every order are
    enumerated (deduplicated) until one is not dense or ``budget`` queries
    have been examined, in which case ``stable`` is None (undecided).
    """
    if use_proposition and _connected_pattern(q):
        return Stability(True, "stable by Prop. 2.5: it counts a connected pattern", 0)
    frontier, seen, examined, order = [(q, ())], {q}, 0, 0
    while frontier:
        order += 1
        nxt = []
        for query, path in frontier:
            for g, a, d in derivatives(query):
                if d in seen:
                    continue
                seen.add(d)
                examined += 1
                if examined > budget:
                    return Stability(None, f"undecided: more than {budget:,} derivatives "
                                     "examined (raise budget)", examined)
                step = path + (f"∂/∂({g}, ({', '.join(str(a[x]) for x in sorted(a))}))",)
                check = dense(d)
                if not check.dense:
                    return Stability(False, f"not stable: the order-{order} derivative "
                                     f"{' then '.join(step)} is {d}; {check.explain()}",
                                     examined)
                nxt.append((d, step))
        frontier = nxt
    return Stability(True, f"stable: all {examined:,} derivatives (orders 1..{order - 1}) are "
                     "dense", examined)


def is_stable(q: CQ, **kwargs) -> bool:
    """True when :func:`stability` decides that q is stable."""
    return stability(q, **kwargs).stable is True
