"""A sparse table the attack tests share: 400 records over 200 · 200 · 2 = 80,000
tuples (n/m = 1/200), cells drawn without repeats, a binary sensitive column."""

import numpy as np
import pandas as pd

import privpub

N = 400


def sparse_table() -> tuple[privpub.Schema, pd.DataFrame]:
    schema = privpub.Schema([privpub.IntRange("a", 0, 199), privpub.IntRange("b", 0, 199),
                             privpub.Categorical("s", ["no", "yes"])])
    rng = np.random.default_rng(0)
    cells = rng.choice(200 * 200, N, replace=False)
    df = pd.DataFrame({"a": cells // 200, "b": cells % 200,
                       "s": pd.Categorical(rng.choice(["no", "yes"], N),
                                           categories=["no", "yes"])})
    return schema, df
