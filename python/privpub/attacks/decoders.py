"""Decoders: reconstruct a statistical database's bits from perturbed subset sums.

- :func:`exhaustive_reconstruct` — Theorem 2 (exponential adversary): ask
  all 2^n subsets, output the first candidate whose sums are all within E
  of the answers; it is within Hamming distance 4E of d. Bit-parallel in
  Rust (``_core.attacks.weed``), n ≤ :data:`EXHAUSTIVE_MAX_BITS`.
- :func:`lp_reconstruct` — Theorem 3 (polynomial adversary): t = n (ln n)²
  random subsets, the linear program |Σ_{i∈q_j} c_i − ã_j| ≤ E, 0 ≤ c ≤ 1
  solved by a first-order method (:func:`band_fit`) with HiGHS behind it,
  c rounded at 1/2. Fewer than |c − d| > 1/3 on εn bits survive when
  E = o(√n).
- :func:`lstsq_reconstruct` — least squares over the same random queries,
  rounded at 1/2: no bound needed, one n × n solve.
- :func:`band_fit` — the first-order method for Theorem 3's LP:
  accelerated projected gradient on ½ Σ_j (|q_j·c − ã_j| − E)₊² over the
  box, whose zeros are exactly the LP's feasible points; two matrix–vector
  products per step (BLAS), in a metric that tames the all-ones direction.

Each returns a :class:`DecodedBits` with the candidate bits and the
number of queries it asked. Every public function checks what it takes, with
the checks of :mod:`privpub.attacks.database` (one place): a database of
n ≥ 2 bits, queries a (t, n) matrix of 0/1 with t ≥ 1, one finite real
answer per query, a finite bound ≥ 0; an error names the argument and the
query, bit or entry at fault.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

import privpub._core as _core
from privpub.attacks.database import ROWS, SubsetSumDatabase, as_answers, as_bound, as_queries
from privpub.core import validate
from privpub.core.errors import ParameterError
from privpub.core.seeding import SeedLike, resolve_seed

#: Largest n for the exhaustive attack: it asks all 2^n subsets (2^20 × 20 bytes of queries).
EXHAUSTIVE_MAX_BITS = 20


@dataclass(frozen=True)
class DecodedBits:
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


#: The fewest bits a decoder attacks (at n = 1 Theorem 3's t = ⌈n (ln n)²⌉ is 0 queries).
MIN_BITS = 2


def _check_db(db) -> SubsetSumDatabase:
    if not isinstance(db, SubsetSumDatabase):
        raise ParameterError(f"db must be a SubsetSumDatabase, got {type(db).__name__}")
    if db.n < MIN_BITS:
        raise ParameterError(f"the decoders attack databases of n ≥ {MIN_BITS} bits, got "
                             f"n = {db.n} (Theorem 3's t = ⌈n (ln n)²⌉ is 0 queries at "
                             f"n = 1; one bit is read by one query, db.query([1]))")
    return db


def default_queries(n: int) -> int:
    """Theorem 3's t = ⌈n (ln n)²⌉ random queries, for n ≥ 2 bits (t = 0 at n = 1)."""
    n = validate.integer("n", n, minimum=MIN_BITS)
    return math.ceil(n * math.log(n) ** 2)


def random_queries(n: int, t: int, seed: SeedLike = None) -> np.ndarray:
    """t ≥ 1 uniformly random subsets of [n], n ≥ 1, as a (t, n) bool matrix (each bit
    in w.p. 1/2)."""
    n = validate.integer("n", n, minimum=1)
    t = validate.integer("t", t, minimum=1)
    source = resolve_seed(seed).derive("random subset queries")
    return (source.uniform(t * n) < 0.5).reshape(t, n)


def exhaustive_reconstruct(db: SubsetSumDatabase, bound: float) -> DecodedBits:
    """Theorem 2: query all 2^n subsets and weed out every candidate some answer
    contradicts by more than ``bound``; the first survivor (by bit mask, bit i
    of the mask being d_i) is within Hamming distance 4·bound of d.

    Raises ParameterError if n < 2, n > EXHAUSTIVE_MAX_BITS or if no candidate
    survives (the answers were not within ``bound``).
    """
    db, E = _check_db(db), as_bound(bound)
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
    found = _core.attacks.weed(n, masks, np.ascontiguousarray(answers, dtype=np.float64),
                               E + 1e-9 * (1 + E))
    if found is None:
        raise ParameterError(f"no candidate survives the weeding: some answer is more than "
                             f"bound = {E} from every candidate's subset sum, so the "
                             f"database is not within that perturbation")
    bits = ((found >> np.arange(n, dtype=np.uint64)) & np.uint64(1)).astype(bool)
    return DecodedBits(bits, len(masks), "exhaustive")


def _ask(db: SubsetSumDatabase, n_queries, seed) -> tuple[np.ndarray, np.ndarray]:
    t = default_queries(db.n) if n_queries is None else validate.integer("n_queries", n_queries,
                                                                       minimum=1)
    queries = random_queries(db.n, t, seed)
    return queries, db.query(queries)


def _highs_fit(queries: np.ndarray, answers: np.ndarray, bound: float) -> tuple[np.ndarray, str]:
    """A c ∈ [0, 1]^n with |queries · c − answers| ≤ bound (Theorem 3's LP), by HiGHS
    (dual simplex on one ranged row per query).

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


#: Steps of band_fit at most, and how often it checks for a feasible point.
BAND_MAX_STEPS = 2000
BAND_CHECK_EVERY = 10
#: How far past the bound band_fit lets an answer be when it calls a point feasible.
BAND_TOLERANCE = 1e-3
#: Steps over which band_fit must halve its largest excess, or stop as stalled.
BAND_STALL = 300


def _metric(Q: np.ndarray) -> tuple[float, float]:
    """(a, b) with QᵀQ ⪯ a·I + b·11ᵀ, the metric band_fit steps in.

    A random 0/1 query matrix is ½·11ᵀ plus a centred ±½ part Q̃, and
    ‖Qx‖² ≤ (1 + η)‖Q̃x‖² + (1 + 1/η)(t/4)(1ᵀx)² for any η > 0. The plain
    Lipschitz constant ‖Q‖₂² ≈ t·n/4 is set by the all-ones direction alone;
    every other direction has curvature near ‖Q̃‖₂² ≈ (√t + √n)²/4, about n
    times less, so steps scaled by ‖Q‖₂² crawl (2,000 steps did not reach
    the band at n = 512; in this metric 150–200 do, E from √n/10 to 2√n).
    """
    t, n = Q.shape
    v = resolve_seed(0).derive("power iteration").uniform(n).astype(np.float32) - 0.5
    sigma2 = 0.0
    for _ in range(30):  # ‖Q̃‖₂² by power iteration on Q̃ᵀQ̃, Q̃ = Q − ½ never formed:
        u = Q @ v - np.float32(0.5 * v.sum())  # Q̃v = Qv − ½(1ᵀv)·1
        w = Q.T @ u - np.float32(0.5 * u.sum())  # Q̃ᵀu = Qᵀu − ½(1ᵀu)·1
        sigma2 = float(np.linalg.norm(w))
        v = w / sigma2
    eta, safety = 0.25, 1.02  # η balances the two terms; power iteration undershoots
    return safety * (1 + eta) * sigma2, safety * (1 + 1 / eta) * t / 4


def _project(z: np.ndarray, a: float, b: float) -> np.ndarray:
    """argmin over c ∈ [0, 1]^n of a‖c − z‖² + b(1ᵀ(c − z))²: the box projection in
    band_fit's metric.

    Its optimality conditions give c = clip(z − λ) with λ = (b/a)·1ᵀ(clip(z − λ) − z);
    the right side falls as λ grows, so λ is the one root of an increasing
    function, found by bisection in [−(b/a)Σz, (b/a)Σ(1 − z)].
    """
    r = b / a
    lo, hi = -r * float(z.sum()), r * float((1 - z).sum())
    for _ in range(64):
        mid = 0.5 * (lo + hi)
        if mid - r * float((np.clip(z - mid, 0.0, 1.0) - z).sum()) > 0:
            hi = mid
        else:
            lo = mid
    return np.clip(z - 0.5 * (lo + hi), 0.0, 1.0)


def _largest_excess(queries: np.ndarray, answers: np.ndarray, c: np.ndarray,
                    bound: float) -> float:
    """max_j |q_j·c − ã_j| − bound in float64, rows converted in blocks."""
    worst = -math.inf
    for i in range(0, len(answers), ROWS):
        r = queries[i:i + ROWS].astype(np.float64) @ c - answers[i:i + ROWS]
        worst = max(worst, float(np.max(np.abs(r))))
    return worst - bound


def band_fit(queries: np.ndarray, answers: np.ndarray, bound: float,
             max_steps: int = BAND_MAX_STEPS) -> tuple[np.ndarray, str]:
    """A c ∈ [0, 1]^n with |queries · c − answers| ≤ bound, by preconditioned FISTA.

    Minimises f(c) = ½ Σ_j (|q_j·c − ã_j| − bound)₊² over the box: f is convex
    and smooth with gradient Qᵀ(violations), and f(c) = 0 exactly on the LP's
    feasible set, so the method converges to a point of the set Theorem 3's
    LP would return from (any feasible point carries the theorem's
    guarantee). Steps are taken in the metric a·I + b·11ᵀ of :func:`_metric`,
    which bounds QᵀQ, with the box projection in that metric
    (:func:`_project`), and the momentum restarts whenever it points uphill
    (O'Donoghue–Candès), which keeps the method fast once the active set
    settles. It starts from the least-squares fit clipped to the box: from
    c = 1/2, which is often feasible already past the threshold, it returned
    the useless centre (a seeded sweep at n = 256 recovered 0.48 of the bits
    under adversarial noise at E = √n/2, where least squares recovers all).
    It stops at the first check where every answer is within ``bound`` +
    :data:`BAND_TOLERANCE` (checked in float64); otherwise, with a note
    giving the largest excess, when that excess has not halved in
    :data:`BAND_STALL` steps (the answers are then most likely not all within
    the bound) or after ``max_steps``. The 0/1 queries are
    held as float32 (exact), so a step reads t·n·4 bytes twice.
    """
    queries = as_queries(queries)
    answers, bound = as_answers(answers, len(queries)), as_bound(bound)
    max_steps = validate.integer("max_steps", max_steps, minimum=1)
    t, n = queries.shape
    Q = queries.astype(np.float32)
    a, b = _metric(Q)
    shrink = b / (a + b * n)  # (a·I + b·11ᵀ)⁻¹ g = (g − shrink·(1ᵀg)·1) / a, Sherman–Morrison
    c = np.clip(lstsq_fit(queries, answers), 0.0, 1.0)
    y, momentum = c.copy(), 1.0
    excess, history = math.inf, []
    for k in range(1, max_steps + 1):
        r = Q @ y.astype(np.float32) - answers
        violation = np.sign(r) * np.maximum(np.abs(r) - bound, 0.0)
        g = (Q.T @ violation.astype(np.float32)).astype(np.float64)
        c_next = _project(y - (g - shrink * g.sum()) / a, a, b)
        if np.dot(y - c_next, c_next - c) > 0:  # momentum points uphill: restart it
            y, momentum = c_next, 1.0
        else:
            m_next = (1 + math.sqrt(1 + 4 * momentum * momentum)) / 2
            y = c_next + (momentum - 1) / m_next * (c_next - c)
            momentum = m_next
        c = c_next
        if k % BAND_CHECK_EVERY == 0 or k == max_steps:
            r = Q @ c.astype(np.float32) - answers
            excess = float(np.max(np.abs(r))) - bound
            if excess <= BAND_TOLERANCE:
                excess = _largest_excess(queries, answers, c, bound)
                if excess <= BAND_TOLERANCE:
                    return c, ""
            history.append(excess)
            # Feasible problems shrink the excess tenfold in about 100 steps; one that
            # has not halved it in BAND_STALL steps has converged outside the band.
            back = BAND_STALL // BAND_CHECK_EVERY
            if len(history) > back and excess > 0.5 * history[-1 - back]:
                return c, (f"no point within bound = {bound}: the largest excess stalled at "
                           f"{excess:.3g} after {k} steps (the answers are likely not all "
                           f"within the bound; rounding at 1/2 may still recover the bits)")
    return c, (f"no point within bound = {bound} found in {max_steps} steps: the largest "
               f"excess is {excess:.3g} (rounding at 1/2 may still recover the bits)")


#: How lp_fit solves Theorem 3's LP.
SOLVERS = ("auto", "first-order", "highs")


def lp_fit(queries: np.ndarray, answers: np.ndarray, bound: float,
           solver: str = "auto") -> tuple[np.ndarray, str]:
    """A c ∈ [0, 1]^n with |queries · c − answers| ≤ bound: Theorem 3's LP.

    ``queries``: a (t, n) 0/1 matrix (t ≥ 1 queries, one column per bit);
    ``answers``: t finite reals; ``bound``: finite, ≥ 0. The LP has no
    objective, so any feasible point solves it. ``solver``:

    - ``"first-order"``: :func:`band_fit`, which returns a point within
      ``bound`` + :data:`BAND_TOLERANCE` of every answer (checked in float64),
      like a first-order LP solver's feasibility tolerance, or its closest
      point with a note;
    - ``"highs"``: HiGHS dual simplex; if no feasible point exists (the answers
      were not within ``bound``) the LP minimising Σ_j max(0, |q_j·c − ã_j| − bound)
      is solved instead and the note says so;
    - ``"auto"`` (default): the first-order method, and HiGHS when that finds no
      feasible point. Measured at E = √n/10 and t = n (ln n)²: n = 512 in 0.46 s
      where scipy's ``linprog`` takes 62 s, n = 1024 in 2.8 s, every bit recovered
      (benches/bench_attacks.py, the README's run).
    """
    if solver not in SOLVERS:
        raise ParameterError(f"solver must be one of {SOLVERS}, got {solver!r}")
    queries = as_queries(queries)
    answers, bound = as_answers(answers, len(queries)), as_bound(bound)
    if solver != "highs":
        c, note = band_fit(queries, answers, bound)
        if not note or solver == "first-order":
            return c, note
    return _highs_fit(queries, answers, bound)


def lp_reconstruct(db: SubsetSumDatabase, bound: float, n_queries: int | None = None,
                   seed: SeedLike = None, solver: str = "auto") -> DecodedBits:
    """Theorem 3: ask ``n_queries`` random subsets (default t = ⌈n (ln n)²⌉), find a c with
    |Σ_{i∈q_j} c_i − ã_j| ≤ bound, 0 ≤ c_i ≤ 1 (:func:`lp_fit`, by ``solver``), and round
    c at 1/2.

    ``seed`` draws the attacker's queries; the note says when no feasible point was found.
    """
    db, E = _check_db(db), as_bound(bound)
    queries, answers = _ask(db, n_queries, seed)
    c, note = lp_fit(queries, answers, E, solver)
    return DecodedBits(c > 0.5, len(answers), "lp", fractional=c, note=note)


def lstsq_fit(queries: np.ndarray, answers: np.ndarray) -> np.ndarray:
    """argmin_c ‖queries · c − answers‖₂ by the normal equations (Cholesky of QᵀQ);
    a 2-d ``answers`` (t × R) gives R fits (n × R) from one factorisation.
    ``queries`` is a (t, n) 0/1 matrix with t ≥ 1, ``answers`` finite reals.

    For random subset queries QᵀQ ≈ (t/4)(I + 11ᵀ) is well conditioned, so the
    normal equations lose nothing against an SVD-based lstsq and cost t·n²/2
    flops for QᵀQ instead of an SVD of the t × n matrix. Rows are converted in
    blocks, so memory stays at n² + ROWS·n doubles however many queries there are.
    """
    queries = as_queries(queries)
    answers = as_answers(answers, len(queries), columns=True)
    t, n = queries.shape
    gram, rhs = np.zeros((n, n)), np.zeros((n, *np.shape(answers)[1:]))
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
                      seed: SeedLike = None) -> DecodedBits:
    """Least squares over ``n_queries`` random subsets (default ⌈n (ln n)²⌉), rounded at 1/2.

    Needs no bound. Under noise of standard deviation σ each coordinate of the
    fit has standard error ≈ 2σ/√t, so bits are recovered once σ ≪ √t.
    """
    db = _check_db(db)
    queries, answers = _ask(db, n_queries, seed)
    c = lstsq_fit(queries, answers)
    return DecodedBits(c > 0.5, len(answers), "lstsq", fractional=c)
