"""Long integer IN lists written as text (issue 33): the answers equal DuckDB's."""


import duckdb
import numpy as np
import pandas as pd

import privpub


def test_long_lists_count_what_duckdb_counts():
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"a": rng.integers(-500, 500, 3_000), "b": rng.integers(0, 50, 3_000)})
    schema = privpub.Schema([privpub.IntRange("a", -500, 499), privpub.IntRange("b", 0, 49)])
    listed = rng.choice(np.arange(-500, 500), 300, replace=False)
    body = ", ".join(f"- {-v}" if v < 0 and v % 3 == 0 else str(v) for v in listed)
    for text in [f"a IN ({body})", f"a NOT IN (\n{body}\n) OR b < 3",
                 f"b > 40 AND a IN ({body}) -- a comment (1, 2)"]:
        expected = duckdb.sql(f"SELECT count(*) FROM df WHERE {text}\n").fetchall()[0][0]
        assert privpub.Condition(schema, text).count(df) == expected, text
