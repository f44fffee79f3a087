"""The dense table of the planning tests (issue 14), shared with the CLI tests:
six small categorical columns, m = 280,000, so 98,000 rows give n/m = 0.35."""

import numpy as np
import pandas as pd

SIZES = (10, 10, 10, 7, 5, 8)


def dense_table(n: int = 98_000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({f"c{i}": pd.Categorical.from_codes(
        rng.integers(0, size, n), categories=[f"v{j}" for j in range(size)])
        for i, size in enumerate(SIZES)})
