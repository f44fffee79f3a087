"""privpub.open: any release by what its file holds, never by its name (issue 34)."""

from __future__ import annotations

import json
import os

import dask
import dask.dataframe as dd
import pandas as pd
import pytest

import privpub
from privpub import AlphaBeta, Categorical, IntRange, PublishedView, Schema
from privpub.core.errors import ArtifactError
from privpub.graphs import CQ, Graph, GraphAnswer, LaplaceMechanism

pytestmark = pytest.mark.filterwarnings("ignore::privpub.PrivacyWarning",
                                        "ignore::privpub.UsefulnessWarning")

SCHEMA = Schema([Categorical("sex", ["F", "M"]), IntRange("age", 0, 99)])
FRAME = pd.DataFrame({"sex": ["F", "M", "F", "F"], "age": [30, 41, 52, 30]})


def test_a_view_file_opens_whatever_its_name(tmp_path):
    release = AlphaBeta(SCHEMA, 1.0, 0.0).publish(FRAME, duplicates="records", seed=1)
    release.to_parquet(tmp_path / "v.parquet")
    os.rename(tmp_path / "v.parquet", tmp_path / "v.json")  # the name says nothing
    opened = privpub.open(tmp_path / "v.json")
    assert isinstance(opened, PublishedView)
    assert opened.estimate("sex = 'F'").value == 3


def test_a_dask_directory_opens(tmp_path):
    with dask.config.set(scheduler="synchronous"):
        AlphaBeta(SCHEMA, 1.0, 0.0).publish(dd.from_pandas(FRAME, npartitions=2), seed=1,
                                            duplicates="records").to_parquet(tmp_path / "d")
    assert privpub.open(tmp_path / "d").estimate("age >= 41").value == 2


def test_a_graph_answer_opens_by_its_stored_kind(tmp_path):
    graph = Graph.from_edges([[0, 1], [1, 2], [2, 0]], m=30)
    query = CQ.parse("Q(x, y, z) :- R(x, y), R(y, z), R(z, x), x != y, y != z, z != x")
    answer = LaplaceMechanism.for_graph(1.0, query, graph).answer(graph, seed=1)
    path = tmp_path / "answer.release"
    path.write_text(json.dumps(answer.to_dict()))
    opened = privpub.open(path)
    assert isinstance(opened, GraphAnswer) and opened.value == answer.value


@pytest.mark.parametrize("content, message", [
    (b"hello", "not a release: neither Parquet"),
    (b'{"kind": "nope"}', "its field 'kind' is 'nope'"),
    (b"[1, 2]", "not a release: neither Parquet"),
    (b"", "not a release"),
])
def test_other_files_are_refused_by_name(tmp_path, content, message):
    path = tmp_path / "x"
    path.write_bytes(content)
    with pytest.raises(ArtifactError, match=message):
        privpub.open(path)
    with pytest.raises(ArtifactError, match="cannot open"):
        privpub.open(tmp_path / "absent.parquet")
