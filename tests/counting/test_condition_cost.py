"""What building a Condition from text costs, counted (issue 33: ≤ 50 µs per
typical text; benches/bench_parse.py times it). Counts, not clocks: the machine
is shared. Building walks each atom once with querytree.nodes, never with
sqlglot's generator-based walk, and generates no SQL: an atom's SQL is made
when it is first asked for, the whole condition's tree and SQL only when
asked for (an estimate asks for neither). An atom met before over the schema
is not resolved again (issue 36)."""

import pytest
from sqlglot import exp

import privpub
from privpub.counting import queryresolve, querytree

TEXTS = ["age > 50 AND sex = 'Female'",
         "\"marital-status\" IN ('Divorced', 'Separated') AND age BETWEEN 30 AND 39",
         "age < 30 AND workclass = 'Private' AND NOT sex = 'Male'"]


@pytest.fixture(scope="module")
def schema():
    return privpub.datasets.load_adult()[1]


def _counting(monkeypatch, owner, name):
    calls = []
    original = getattr(owner, name)

    def counted(*args, **kwargs):
        calls.append(name)
        return original(*args, **kwargs)
    monkeypatch.setattr(owner, name, counted)
    return calls


def test_building_generates_no_sql_and_asking_generates_it_once(monkeypatch, schema):
    made = _counting(monkeypatch, querytree, "to_sql")
    conds = [privpub.Condition(schema, t) for t in TEXTS]
    assert made == []
    assert conds[0].sql == "age > 50 AND sex = 'Female'" and len(made) == 1
    assert [a.sql for a in conds[0].atoms] == ["age > 50", "sex = 'Female'"]
    assert [a.sql for a in conds[0].atoms] == ["age > 50", "sex = 'Female'"]  # kept
    assert len(made) == 3


def test_building_walks_no_tree_with_sqlglots_walk(monkeypatch, schema):
    walks = [_counting(monkeypatch, owner, name) for owner in (exp.Expr, exp.Expression)
             for name in ("walk", "find_all", "bfs")]
    for t in TEXTS:
        privpub.Condition(schema, t)
    assert not any(walks)


def test_each_atom_is_walked_once_then_kept(monkeypatch, schema):
    queryresolve.forget()
    walks = _counting(monkeypatch, querytree, "nodes")
    cond = privpub.Condition(schema, TEXTS[2])
    # one walk per atom, none of the whole tree (the sqlglot tree is not built)
    assert len(walks) == len(cond.atoms) == 3
    # an atom met before is not walked again, in any text over the schema
    again = privpub.Condition(schema, "sex = 'Male' OR (age < 30 AND workclass = 'Private')")
    assert len(walks) == 3 and again.formula[0] == "or"
    privpub.Condition(schema, "sex = 'Female'")
    assert len(walks) == 4
