"""Datasets embedded in the package (no download at run time).

See ``data/README.md`` beside this file for sources and licences.
"""

from __future__ import annotations

import warnings
from importlib import resources
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from privpub.core.errors import ParameterError, PrivacyWarning
from privpub.datasets.census import CENSUS_CARDINALITIES, synthetic_census
from privpub.datasets.statsmodels_tables import load_anes96, load_fair
from privpub.domain.schema import Schema

if TYPE_CHECKING:
    from importlib.abc import Traversable  # (importlib.resources.abc from Python 3.11)

__all__ = ["ADULT_ATTRIBUTES", "CENSUS_CARDINALITIES", "load_adult", "load_anes96",
           "load_fair", "load_graph", "synthetic_census"]

ADULT_ATTRIBUTES = ("age", "workclass", "education", "marital-status", "occupation",
                    "race", "sex", "native-country", "salary")
"""The nine Adult attributes of the αβ paper's experiment, in its order."""

_ADULT_FILES = {"train": "adult.data.csv.gz", "test": "adult.test.csv.gz"}
_GRAPH_FILES = {"facebook": "facebook_combined.txt.gz", "ca-grqc": "ca-GrQc.txt.gz"}


def _data(name: str) -> Traversable:
    return resources.files(__name__) / "data" / name


def load_adult(split: str = "train") -> tuple[pd.DataFrame, Schema]:
    """The UCI Adult records without missing values, over the paper's 9 attributes.

    Parameters
    ----------
    split : {"train", "test"}
        ``"train"`` is adult.data: 32,561 records, of which the 2,399 with a
        missing value (``?``) are left out, giving 30,162. ``"test"`` is
        adult.test: 15,060 of 16,281 records.

    Returns
    -------
    (df, schema)
        ``df`` has columns ``ADULT_ATTRIBUTES`` (the file's ``income`` is
        named ``salary``), values stripped of the leading space, age as int64
        and the rest as strings; adult.test's trailing ``.`` on salary
        (``>50K.``) is removed so both splits share salary values.
        ``schema`` holds each split's active domains (train: m = 648,023,040).
        ``df.attrs["dropped_missing"]`` records how many records were left out.
    """
    if split not in _ADULT_FILES:
        raise ParameterError(f"split must be one of {sorted(_ADULT_FILES)}, got {split!r}")
    with _data(_ADULT_FILES[split]).open("rb") as fh:
        raw = pd.read_csv(fh, compression="gzip", skipinitialspace=True, na_values=["?"])
    raw = raw.rename(columns={"income": "salary"})
    complete = raw.dropna()
    df = complete[list(ADULT_ATTRIBUTES)].reset_index(drop=True)
    df["salary"] = df["salary"].str.rstrip(".")
    df.attrs["dropped_missing"] = len(raw) - len(complete)
    # Active domains, as the paper uses (m = 648,023,040): derived from the data,
    # said here and in every guarantee (schema.derived) rather than warned about.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        return df, Schema.from_frame(df)


def load_graph(name: str) -> np.ndarray:
    """An embedded SNAP graph as a (k, 2) int64 edge array, one undirected edge per row.

    ``name`` is ``"facebook"`` (ego-Facebook: 4,039 nodes, 88,234 edges) or
    ``"ca-grqc"`` (5,241 nodes, 14,484 edges). ``Graph.from_edges`` reads it
    as the undirected graph it is (its default; ``directed=False`` says so
    explicitly in the experiments).
    """
    key = name.lower() if isinstance(name, str) else name
    if key not in _GRAPH_FILES:
        raise ParameterError(f"graph must be one of {sorted(_GRAPH_FILES)}, got {name!r}")
    with _data(_GRAPH_FILES[key]).open("rb") as fh:
        edges = pd.read_csv(fh, compression="gzip", sep=" ", comment="#", header=None,
                            names=["u", "v"], dtype=np.int64)
    pairs: np.ndarray = edges.to_numpy()
    return pairs
