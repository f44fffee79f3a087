"""Decoders: reconstruct a statistical database's bits from perturbed subset sums.

- :func:`exhaustive_reconstruct` — Theorem 2 (exponential adversary): ask
  all 2^n subsets, output the first candidate whose sums are all within E
  of the answers; it is within Hamming distance 4E of d. Bit-parallel in
  Rust (``_core.weed``), n ≤ :data:`EXHAUSTIVE_MAX_BITS`.
- :func:`lp_reconstruct` — Theorem 3 (polynomial adversary): t = n (ln n)²
  random subsets, the linear program |Σ_{i∈q_j} c_i − ã_j| ≤ E, 0 ≤ c ≤ 1
  solved by HiGHS, c rounded at 1/2. Fewer than |c − d| > 1/3 on εn bits
  survive when E = o(√n).
- :func:`lstsq_reconstruct` — least squares over the same random queries,
  rounded at 1/2: no bound needed, one n × n solve.
- :func:`band_reconstruct` — Theorem 3's feasibility problem by a
  first-order method instead of an LP solver: accelerated projected gradient
  on ½ Σ_j (|q_j·c − ã_j| − E)₊² over the box, whose zeros are exactly the
  LP's feasible points; two matrix–vector products per step (BLAS).

Each returns a :class:`Reconstruction` with the candidate bits and the
number of queries it asked.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from privpub import _core
from privpub.attacks.database import ROWS, SubsetSumDatabase
from privpub.core import validate
from privpub.core.errors import ParameterError
from privpub.core.seeding import SeedLike, resolve_seed

#: Largest n for the exhaustive attack: it asks all 2^n subsets (2^20 × 20 bytes of queries).
EXHAUSTIVE_MAX_BITS = 20


@dataclass(frozen=True)
class Reconstruction:
    """A decoder's output: candidate bits, queries asked, and how it got there.

    ``fractional`` holds the LP / least-squares solution before rounding
    (None for the exhaustive attack); ``note`` says anything the caller must
    know (an LP that was infeasible at the stated bound).
    """

    bits: np.ndarray
    n_queries: int
    decoder: str
    fractional: np.ndarray | None = None
    note: str = ""


def _check_db(db) -> SubsetSumDatabase:
    if not isinstance(db, SubsetSumDatabase):
        raise ParameterError(f"db must be a SubsetSumDatabase, got {type(db).__name__}")
    return db


def _check_bound(bound) -> float:
    E = validate.real("bound", bound)
    if E < 0:
        raise ParameterError(f"bound must be non-negative, got {E}")
    return E


def default_queries(n: int) -> int:
    """Theorem 3's t = ⌈n (ln n)²⌉ random queries."""
    return math.ceil(n * math.log(n) ** 2)


def random_queries(n: int, t: int, seed: SeedLike = None) -> np.ndarray:
    """t uniformly random subsets of [n] as a (t, n) bool matrix (each bit in w.p. 1/2)."""
    source = resolve_seed(seed).derive("random subset queries")
    return (source.uniform(t * n) < 0.5).reshape(t, n)


def exhaustive_reconstruct(db: SubsetSumDatabase, bound: float) -> Reconstruction:
    """Theorem 2: query all 2^n subsets and weed out every candidate some answer
    contradicts by more than ``bound``; the first survivor (by bit mask, bit i
    of the mask being d_i) is within Hamming distance 4·bound of d.

    Raises ParameterError if n > EXHAUSTIVE_MAX_BITS or if no candidate
    survives (the answers were not within ``bound``).
    """
    db, E = _check_db(db), _check_bound(bound)
    n = db.n
    if n > EXHAUSTIVE_MAX_BITS:
        raise ParameterError(f"the exhaustive attack asks all 2^n subsets; n = {n} is past "
                             f"its limit of {EXHAUSTIVE_MAX_BITS} bits (use lp_reconstruct)")
    # All 2^n masks, in an order that mixes sizes (an odd multiplier is a bijection
    # mod 2^n) so most candidates are weeded out by the first few queries.
    masks = (np.arange(1 << n, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
             ) & np.uint64((1 << n) - 1)
    queries = ((masks[:, None] >> np.arange(n, dtype=np.uint64)) & np.uint64(1)).astype(bool)
    answers = db.query(queries)
    # The slack absorbs the rounding of answers computed in floating point (a + E − a
    # need not equal E exactly); it is far below the distance 1 between subset sums.
    found = _core.weed(n, masks, np.ascontiguousarray(answers, dtype=np.float64),
                       E + 1e-9 * (1 + E))
    if found is None:
        raise ParameterError(f"no candidate survives the weeding: some answer is more than "
                             f"bound = {E} from every candidate's subset sum, so the "
                             f"database is not within that perturbation")
    bits = ((found >> np.arange(n, dtype=np.uint64)) & np.uint64(1)).astype(bool)
    return Reconstruction(bits, len(masks), "exhaustive")


def _ask(db: SubsetSumDatabase, n_queries, seed) -> tuple[np.ndarray, np.ndarray]:
    t = default_queries(db.n) if n_queries is None else validate.count("n_queries", n_queries,
                                                                       minimum=1)
    queries = random_queries(db.n, t, seed)
    return queries, db.query(queries)


def lp_fit(queries: np.ndarray, answers: np.ndarray, bound: float) -> tuple[np.ndarray, str]:
    """A c ∈ [0, 1]^n with |queries · c − answers| ≤ bound (Theorem 3's LP), by HiGHS.

    If no such c exists (the answers were not within ``bound``), the LP that
    minimises Σ_j max(0, |q_j · c − ã_j| − bound) is solved instead and the
    returned note says so.
    """
    from scipy import optimize, sparse  # imported on use: scipy is slow to import

    t, n = queries.shape
    Q = sparse.csr_array(queries.astype(np.float64))
    box = optimize.Bounds(0.0, 1.0)
    band = optimize.LinearConstraint(Q, answers - bound, answers + bound)
    res = optimize.milp(np.zeros(n), constraints=band, bounds=box)
    if res.status == 0:
        return res.x, ""
    if res.status != 2:  # 2: infeasible; anything else is the solver failing
        raise ParameterError(f"HiGHS could not solve the LP: {res.message}")
    # Slack s_j ≥ 0 per query: answers − bound − s ≤ Qc and Qc − s ≤ answers + bound.
    eye = sparse.identity(t, format="csr")
    A = sparse.vstack([sparse.hstack([Q, eye]), sparse.hstack([Q, -eye])]).tocsr()
    lo = np.concatenate([answers - bound, np.full(t, -np.inf)])
    hi = np.concatenate([np.full(t, np.inf), answers + bound])
    res = optimize.milp(np.concatenate([np.zeros(n), np.ones(t)]),
                        constraints=optimize.LinearConstraint(A, lo, hi),
                        bounds=optimize.Bounds(np.zeros(n + t),
                                               np.concatenate([np.ones(n), np.full(t, np.inf)])))
    if res.status != 0:
        raise ParameterError(f"HiGHS could not solve the slack LP: {res.message}")
    excess = float(res.x[n:].sum())
    return res.x[:n], (f"the LP was infeasible at bound = {bound} (the answers are not "
                       f"within it); solved the least-excess LP instead (total excess "
                       f"{excess:.3g})")


def lp_reconstruct(db: SubsetSumDatabase, bound: float, n_queries: int | None = None,
                   seed: SeedLike = None) -> Reconstruction:
    """Theorem 3: ask ``n_queries`` random subsets (default t = ⌈n (ln n)²⌉), solve the
    LP |Σ_{i∈q_j} c_i − ã_j| ≤ bound, 0 ≤ c_i ≤ 1 (HiGHS), and round c at 1/2.

    ``seed`` draws the attacker's queries. See :func:`lp_fit` for an infeasible LP.
    """
    db, E = _check_db(db), _check_bound(bound)
    queries, answers = _ask(db, n_queries, seed)
    c, note = lp_fit(queries, answers, E)
    return Reconstruction(c > 0.5, len(answers), "lp", fractional=c, note=note)


#: Steps of band_fit at most, and how often it checks for a feasible point.
BAND_MAX_STEPS = 2000
BAND_CHECK_EVERY = 10


def band_fit(queries: np.ndarray, answers: np.ndarray, bound: float,
             max_steps: int = BAND_MAX_STEPS) -> tuple[np.ndarray, str]:
    """A c ∈ [0, 1]^n with |queries · c − answers| ≤ bound, by FISTA.

    Minimises f(c) = ½ Σ_j (|q_j·c − ã_j| − bound)₊² over the box: f is convex
    and smooth with gradient Qᵀ(violations), Lipschitz constant ‖Q‖₂² (found
    by power iteration), and f(c) = 0 exactly on the LP's feasible set, so
    the method converges to a point of the set Theorem 3's LP would return
    from (any feasible point carries the theorem's guarantee). It starts from
    the least-squares fit clipped to the box: from c = 1/2, which is often
    feasible already past the threshold, it returned the useless centre (a
    seeded sweep at n = 256 recovered 0.48 of the bits under adversarial
    noise at E = √n/2, where least squares recovers all). It stops at the
    first check where every answer is within ``bound`` (+10⁻³, float32
    products); otherwise after ``max_steps`` with a note giving the largest
    excess. The 0/1 queries are held as float32 (exact), so a step reads
    t·n·4 bytes twice.
    """
    t, n = queries.shape
    Q = queries.astype(np.float32)
    v = np.full(n, 1 / math.sqrt(n), dtype=np.float32)
    for _ in range(30):  # ‖Q‖₂² by power iteration on QᵀQ
        w = Q.T @ (Q @ v)
        lipschitz = float(np.linalg.norm(w))
        v = w / lipschitz
    step = 1 / (1.01 * lipschitz)
    c = np.clip(lstsq_fit(queries, answers), 0.0, 1.0)
    y, momentum = c.copy(), 1.0
    excess = math.inf
    for k in range(1, max_steps + 1):
        r = Q @ y.astype(np.float32) - answers
        violation = np.sign(r) * np.maximum(np.abs(r) - bound, 0.0)
        c_next = np.clip(y - step * (Q.T @ violation.astype(np.float32)), 0.0, 1.0)
        m_next = (1 + math.sqrt(1 + 4 * momentum * momentum)) / 2
        y = c_next + (momentum - 1) / m_next * (c_next - c)
        c, momentum = c_next, m_next
        if k % BAND_CHECK_EVERY == 0 or k == max_steps:
            excess = float(np.max(np.abs(Q @ c.astype(np.float32) - answers))) - bound
            if excess <= 1e-3:
                return c, ""
    return c, (f"no point within bound = {bound} found in {max_steps} steps: the largest "
               f"excess is {excess:.3g} (rounding at 1/2 may still recover the bits)")


def band_reconstruct(db: SubsetSumDatabase, bound: float, n_queries: int | None = None,
                     seed: SeedLike = None, max_steps: int = BAND_MAX_STEPS) -> Reconstruction:
    """Theorem 3's queries and feasibility problem solved by :func:`band_fit`
    (a first-order method, no LP solver), c rounded at 1/2."""
    db, E = _check_db(db), _check_bound(bound)
    max_steps = validate.count("max_steps", max_steps, minimum=1)
    queries, answers = _ask(db, n_queries, seed)
    c, note = band_fit(queries, answers, E, max_steps)
    return Reconstruction(c > 0.5, len(answers), "band", fractional=c, note=note)


def lstsq_fit(queries: np.ndarray, answers: np.ndarray) -> np.ndarray:
    """argmin_c ‖queries · c − answers‖₂ by the normal equations (Cholesky of QᵀQ).

    For random subset queries QᵀQ ≈ (t/4)(I + 11ᵀ) is well conditioned, so the
    normal equations lose nothing against an SVD-based lstsq and cost t·n²/2
    flops for QᵀQ instead of an SVD of the t × n matrix. Rows are converted in
    blocks, so memory stays at n² + ROWS·n doubles however many queries there are.
    """
    t, n = queries.shape
    gram, rhs = np.zeros((n, n)), np.zeros(n)
    for i in range(0, t, ROWS):
        Q = queries[i:i + ROWS].astype(np.float64)
        gram += Q.T @ Q
        rhs += Q.T @ answers[i:i + ROWS]
    try:
        import scipy.linalg  # imported on use: scipy is slow to import

        return scipy.linalg.cho_solve(scipy.linalg.cho_factor(gram), rhs)
    except np.linalg.LinAlgError:  # fewer independent queries than bits
        return np.linalg.lstsq(queries.astype(np.float64), answers, rcond=None)[0]


def lstsq_reconstruct(db: SubsetSumDatabase, n_queries: int | None = None,
                      seed: SeedLike = None) -> Reconstruction:
    """Least squares over ``n_queries`` random subsets (default ⌈n (ln n)²⌉), rounded at 1/2.

    Needs no bound. Under noise of standard deviation σ each coordinate of the
    fit has standard error ≈ 2σ/√t, so bits are recovered once σ ≪ √t.
    """
    db = _check_db(db)
    queries, answers = _ask(db, n_queries, seed)
    c = lstsq_fit(queries, answers)
    return Reconstruction(c > 0.5, len(answers), "lstsq", fractional=c)
