"""Q(D) is exact: QonD/ConD and the direct path against brute force and a DP."""

import operator

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import privpub
from privpub import IntRange, col, count_domain
from privpub.counting.domaincount import MAX_CLAUSES, TABLE_LIMIT, count
from privpub.domain.schema import PROJECTION_BUDGET

OPS = {">": operator.gt, "<": operator.lt, ">=": operator.ge, "<=": operator.le,
       "==": operator.eq, "!=": operator.ne}
REGIONS = pd.DataFrame({"country": ["c0", "c1", "c2", "c3"], "poor": [1, 0, 1, 0]})


def test_the_schema_projects_every_truth_table_the_count_asks_for():
    # Two constants, as the schema may not import the engine: a truth table the
    # count accepts must never fail in Schema.projection.
    assert TABLE_LIMIT <= PROJECTION_BUDGET


def test_count_domain_is_the_exact_int():
    schema = privpub.Schema([privpub.IntRange("a", 0, 9), privpub.Categorical("b", ["x", "y"])])
    assert count_domain(schema) == 20 and isinstance(count_domain(schema), int)
    assert count_domain(schema, "a < 3 and b = 'y'") == 3
    assert count_domain(schema, {"b": "x"}) == count(schema, {"b": "x"}).value == 10
    assert not hasattr(schema, "count")  # Q(D) is counting's, not the schema's


@st.composite
def schemas(draw):
    k = draw(st.integers(2, 4))
    attrs = []
    for j in range(k):
        size = draw(st.integers(2, 5))
        if draw(st.booleans()):
            lo = draw(st.integers(-3, 3))
            attrs.append(privpub.IntRange(f"x{j}", lo, lo + size - 1))
        else:
            attrs.append(privpub.Categorical(f"x{j}", [f"c{i}" for i in range(size)]))
    return privpub.Schema(attrs)


def _numeric(schema):
    return [a.name for a in schema if isinstance(a, privpub.IntRange)]


@st.composite
def atoms(draw, schema):
    """(Expr, python predicate on a row dict)."""
    numeric, names = _numeric(schema), list(schema.names)
    kinds = ["isin", "subquery", "longin"] + (["cmp", "arith", "wide"] if numeric else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "wide":  # a literal past int64: decided exactly (issue 22)
        a, op = draw(st.sampled_from(numeric)), draw(st.sampled_from(["<", "<=", ">", ">="]))
        c = draw(st.sampled_from([-1, 1])) * (10 ** draw(st.integers(19, 400))
                                              + draw(st.integers(-3, 3)))
        if draw(st.booleans()):
            return OPS[op](col(a), c), lambda r: OPS[op](r[a], c)
        low = draw(st.integers(-4, 6))
        low, high = (low, c) if c > 0 else (c, low)
        return col(a).between(low, high), lambda r: low <= r[a] <= high
    if kind == "cmp":
        a, op = draw(st.sampled_from(numeric)), draw(st.sampled_from(list(OPS)))
        lo, hi = schema[a].lo, schema[a].hi
        # Order comparisons may cross the domain's ends; (in)equality with a value
        # outside the domain is refused as a typo (tested in test_query.py).
        c = draw(st.integers(-4, 6) if op not in ("==", "!=") else st.integers(lo, hi))
        return OPS[op](col(a), c), lambda r: OPS[op](r[a], c)
    if kind == "arith":
        a, b = draw(st.sampled_from(numeric)), draw(st.sampled_from(numeric))
        k, c = draw(st.integers(1, 3)), draw(st.integers(-3, 3))
        return col(a) < k * col(b) + c, lambda r: r[a] < k * r[b] + c
    name = draw(st.sampled_from(names))
    attr = schema[name]
    values = list(attr.values)
    if kind == "subquery" and isinstance(attr, IntRange):  # (the subquery returns text)
        kind = "isin"
    if kind == "isin":
        chosen = draw(st.lists(st.sampled_from(values), min_size=1, max_size=3))
        return col(name).isin(chosen), lambda r: r[name] in chosen
    if kind == "longin":  # repeats, any order; integers also as an array
        chosen = draw(st.lists(st.sampled_from(values), min_size=1, max_size=60))
        given = np.array(chosen) if isinstance(chosen[0], int) and draw(st.booleans()) \
            else chosen
        return col(name).isin(given), lambda r: r[name] in chosen
    poor = set(REGIONS.loc[REGIONS.poor == 1, "country"])
    return (col(name).isin("select country from Regions where poor = 1"),
            lambda r: r[name] in poor)


@st.composite
def conditions(draw, schema, depth=2):
    if depth == 0 or draw(st.integers(0, 2)) == 0:
        return draw(atoms(schema))
    kind = draw(st.sampled_from(["and", "or", "not"]))
    if kind == "not":
        e, f = draw(conditions(schema, depth - 1))
        return ~e, lambda r: not f(r)
    (e1, f1), (e2, f2) = draw(conditions(schema, depth - 1)), draw(conditions(schema, depth - 1))
    if kind == "and":
        return e1 & e2, lambda r: f1(r) and f2(r)
    return e1 | e2, lambda r: f1(r) or f2(r)


def brute(schema, predicate):
    frame = schema.decode(np.arange(schema.size, dtype=np.uint64))
    return sum(bool(predicate(row)) for row in frame.to_dict("records"))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_cond_and_direct_match_brute_force(data):
    schema = data.draw(schemas())
    expr, predicate = data.draw(conditions(schema))
    truth = brute(schema, predicate)
    tables = {"Regions": REGIONS}
    assert count(schema, expr, tables, method="direct").value == truth
    # The same condition as SQL text (literal lists read off the tokens as
    # one list each), and Q(V) over every tuple of D.
    assert count(schema, expr.sql(), tables, method="direct").value == truth, expr.sql()
    codes = np.arange(schema.size, dtype=np.uint64)
    assert privpub.Condition(schema, expr, tables).count_codes(codes) == truth
    try:
        result = count(schema, expr, tables, method="cond")
    except privpub.QueryError as err:  # only for conditions past the clause limit
        assert "DNF clauses" in str(err)
        return
    assert result.value == truth, (expr.sql(), result)


def test_twelve_attribute_chain_beyond_2_64_matches_an_independent_dp():
    k, r = 12, 100
    schema = privpub.Schema([privpub.IntRange(f"x{i}", 0, r - 1) for i in range(k)])
    assert schema.size == 100**12 > 2**64
    chain = col("x0") < col("x1") + 3
    for i in range(1, k - 1):
        chain = chain & (col(f"x{i}") < col(f"x{i + 1}") + 3)
    # DP over the chain with exact ints: f(v) = #prefixes ending in v.
    f = [1] * r
    for _ in range(k - 1):
        f = [sum(f[u] for u in range(r) if u < v + 3) for v in range(r)]
    result = count(schema, chain)
    assert result.value == sum(f)
    assert result.method == "inclusion-exclusion" and result.width == 1
    # A disjunction on top: inclusion–exclusion over two clauses.
    g = [1 if u < 5 else 0 for u in range(r)]  # x0 < 5
    for _ in range(k - 1):
        g = [sum(g[u] for u in range(r) if u < v + 3) for v in range(r)]
    both = [sum(f2 for v, f2 in enumerate(g) if v > 90)]
    only_end = sum(f[v] for v in range(r) if v > 90)
    expected = sum(g) + only_end - both[0]
    cond = chain & ((col("x0") < 5) | (col(f"x{k - 1}") > 90))
    assert count(schema, cond).value == expected


def _width_two_dp(k: int, r: int, c: int) -> int:
    """#{x : x_i < x_(i+1) + c and x_i != x_(i+2)} by a DP over pairs (x_i, x_(i+1)),
    exact Python ints, independent of privpub's elimination."""
    f = {(a, b): 1 for a in range(r) for b in range(r) if a < b + c}
    for _ in range(k - 2):
        g: dict = {}
        for (a, b), v in f.items():
            for x in range(r):
                if b < x + c and a != x:
                    g[(b, x)] = g.get((b, x), 0) + v
        f = g
    return sum(f.values())


@pytest.mark.parametrize(("k", "path", "bits"), [(31, "u128", 113), (40, "python ints", 145)])
def test_width_two_counts_past_2_64_and_2_128_match_an_independent_dp(k, path, bits):
    """16 values per attribute, x_i < x_(i+1) + 8 and x_i != x_(i+2): at 31
    attributes (2^124 tuples) a count of 2^113 is summed in the Rust kernel's
    u128; at 40 (2^160 tuples) one of 2^145 in Python ints."""
    r, c = 16, 8
    schema = privpub.Schema([privpub.IntRange(f"x{i}", 0, r - 1) for i in range(k)])
    cond = None
    for i in range(k - 1):
        term = col(f"x{i}") < col(f"x{i + 1}") + c
        if i + 2 < k:
            term = term & (col(f"x{i}") != col(f"x{i + 2}"))
        cond = term if cond is None else cond & term
    expected = _width_two_dp(k, r, c)
    assert expected.bit_length() == bits + 1
    assert (schema.size >= 2**128) == (path == "python ints")
    result = count(schema, cond, method="cond")
    assert result.value == expected and result.width == 2


def test_counts_past_2_128_are_exact():
    k, r = 60, 10  # a_i <> a_(i+1): r·(r−1)^(k−1) ≈ 2^189
    schema = privpub.Schema([privpub.IntRange(f"a{i}", 0, r - 1) for i in range(k)])
    sql = " and ".join(f"a{i} <> a{i + 1}" for i in range(k - 1))
    value = count(schema, sql, method="cond").value
    assert value == r * (r - 1) ** (k - 1) and value > 2**128


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_elimination_matches_brute_force_counts_and_weights(data):
    """Both sums over random factor sets (0/1 tables for counts, random weights)
    and random orders, against the product summed over the whole grid."""
    from privpub.counting.elimination import count_by_elimination, weighted_sum_by_elimination

    n = data.draw(st.integers(2, 4))
    radices = data.draw(st.lists(st.integers(1, 4), min_size=n, max_size=n))
    scopes, tables = [], []
    for _ in range(data.draw(st.integers(1, 4))):
        scope = sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=3)))
        cells = int(np.prod([radices[v] for v in scope]))
        bits = data.draw(st.lists(st.booleans(), min_size=cells, max_size=cells))
        scopes.append(scope)
        tables.append(np.array(bits, dtype=np.uint8))
    used = sorted({v for s in scopes for v in s})
    order = data.draw(st.permutations(used))
    grid = np.indices([radices[v] for v in used]).reshape(len(used), -1)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32)))
    weights = [rng.random(len(t)) for t in tables]
    brute, weighted = np.ones(grid.shape[1], dtype=bool), np.ones(grid.shape[1])
    for scope, table, w in zip(scopes, tables, weights, strict=True):
        index = np.ravel_multi_index([grid[used.index(v)] for v in scope],
                                     [radices[v] for v in scope])
        brute &= table[index].astype(bool)
        weighted *= w[index]
    assert count_by_elimination(scopes, tables, radices, order) == int(brute.sum())
    assert weighted_sum_by_elimination(scopes, weights, radices, order) == \
        pytest.approx(weighted.sum(), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("min_piece_bits", [4, 30])
def test_limbs_carry_exactly_when_huge_factors_meet(monkeypatch, min_piece_bits):
    """A path over 26 variables of 12 values, eliminated from both ends: two
    factors of about 2^43 and 2^46 (two limbs each) meet at the middle variable,
    so limbs are cut into 24-bit pieces, multiplied pairwise and carried; with
    pieces of at least 30 bits demanded, that step runs in Python ints. Both
    against the same path as a transfer-matrix product in Python ints."""
    from privpub.counting import elimination

    monkeypatch.setattr(elimination, "MIN_PIECE_BITS", min_piece_bits)
    rng = np.random.default_rng(3)
    k, r = 26, 12
    scopes = [[i, i + 1] for i in range(k - 1)]
    tables = [(rng.random(r * r) < 0.9).astype(np.uint8) for _ in scopes]
    order = [*range(0, 12), *range(k - 1, 12, -1), 12]
    vec = np.ones(r, dtype=object)
    for t in tables:
        vec = t.reshape(r, r).astype(object).T.dot(vec)
    expected = int(vec.sum())
    assert expected > 2 ** (2 * elimination.LIMB_BITS)
    assert elimination.count_by_elimination(scopes, tables, [r] * k, order) == expected


def test_many_small_factors_meeting_stay_exact():
    """x0 < x_i for 60 attributes of 3 values: eliminating the x_i leaves 60
    factors over x0 whose product reaches 2^60 (past float64's 2^53); the
    count is 2^60 (x0 = 0) + 1 (x0 = 1), exactly."""
    schema = privpub.Schema([privpub.IntRange(f"x{i}", 0, 2) for i in range(61)])
    sql = " and ".join(f"x0 < x{i}" for i in range(1, 61))
    assert count(schema, sql, method="cond").value == 2**60 + 1


def test_limb_sums_are_exact_and_carried_below_2_40():
    """Terms 2^shift · t (t < 2^53, any shift) added into aligned limbs and
    carried: the limbs hold exactly the sum of the terms as Python ints, and
    each limb is below 2^40 (what the next step's pieces assume)."""
    from privpub.counting import elimination

    rng = np.random.default_rng(5)
    sums: dict = {}
    truth = np.zeros(64, dtype=object)
    for _ in range(200):
        shift = int(rng.integers(0, 150))
        term = np.floor(rng.random(64) * 2.0**53)
        elimination._add_aligned(sums, shift, term, [64])
        truth += term.astype(np.int64).astype(object) * (1 << shift)
    limbs = elimination._carry(sums, [64])
    assert all(limb.max() < 2.0**40 for limb in limbs)
    assert list(elimination._as_objects(limbs)) == list(truth)


def test_complement_is_used_when_the_negation_is_smaller():
    schema = privpub.Schema([privpub.IntRange(f"x{i}", 0, 199) for i in range(6)])
    # ¬(a ∧ b ∧ c) has three clauses; the condition itself is one clause of negated atoms.
    cond = ~((col("x0") > 3) & (col("x1") > 5) & (col("x2") < col("x3")))
    result = count(schema, cond)
    assert result.method == "complement"
    inner = (196 * 194) * sum(v for v in range(200)) * 200**2
    assert result.value == schema.size - inner


def test_too_many_clauses_and_budget_are_refused_with_clear_errors():
    schema = privpub.Schema([privpub.IntRange(f"x{i}", 0, 999) for i in range(8)])
    terms = [(col(f"x{i % 8}") > i) & (col(f"x{(i + 3) % 8}") < 900 - i)
             for i in range(MAX_CLAUSES + 1)]
    many = terms[0]
    for term in terms[1:]:
        many = many | term
    with pytest.raises(privpub.QueryError, match=f"supports up to {MAX_CLAUSES}"):
        count(schema, many)
    clique = ((col("x0") < col("x1")) & (col("x1") < col("x2")) & (col("x0") < col("x2"))
              & (col("x2") < col("x3")) & (col("x1") < col("x3")) & (col("x0") < col("x3")))
    with pytest.raises(privpub.QueryError, match="budget of 1,000,000"):
        count(schema, clique, budget=10**6)


# ---- an integer attribute too large for a truth table: counted by intervals -------------------

HUGE = privpub.Schema([privpub.IntRange("t", 0, 2**30), privpub.Categorical("c", ["x", "y"]),
                       privpub.IntRange("b", 0, 9)])
T = 2**30 + 1


@pytest.mark.parametrize("sql, expected", [
    ("t < 5", 5 * 20),
    ("t < 5 and c = 'x'", 5 * 10),
    ("t >= 2.5 and t <= 7", 5 * 20),
    ("not (t between 10 and 20) and b > 3", (T - 11) * 2 * 6),
    ("t in (1, 5, 8) or b = 1", 3 * 20 + T * 2 - 3 * 2),
    ("t <> 7", (T - 1) * 20),
    ("t = 1073741824", 20),
    ("5 > t", 5 * 20),
])
def test_huge_integer_attribute_counts(sql, expected):
    assert count_domain(HUGE, sql) == expected


def test_huge_attribute_in_a_cross_attribute_atom_is_refused_by_name():
    with pytest.raises(privpub.PrivpubError, match="budget"):
        count_domain(HUGE, "t < b")


@given(st.sampled_from(["<", "<=", ">", ">=", "=", "<>"]), st.integers(-3, 12),
       st.booleans(), st.integers(-3, 12), st.integers(-3, 12))
def test_intervals_match_brute_force(op, c, swap, low, high):
    from privpub.counting import intervals
    lo, hi = 0, 9
    sql = f"{c} {op} x" if swap else f"x {op} {c}"
    flipped = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "<>": "!="}
    py = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
          "=": operator.eq, "<>": operator.ne, "!=": operator.ne}
    test = (lambda v: py[flipped[op]](v, c)) if swap else (lambda v: py[op](v, c))
    got = intervals.of_atom(sql, "x", lo, hi)
    assert [v for v in range(lo, hi + 1) if any(a <= v <= b for a, b in got)] == \
        [v for v in range(lo, hi + 1) if test(v)]
    between = intervals.of_atom(f"x between {low} and {high}", "x", lo, hi)
    assert intervals.size(between) == sum(1 for v in range(lo, hi + 1) if low <= v <= high)
    assert intervals.size(intervals.complement(between, lo, hi)) == 10 - intervals.size(between)
