"""One meaning per name (issue 23): the renamed parameters, their old names refused
with errors naming the new ones, and files written under the old names still read."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

import privpub
from privpub.attacks import Rounding
from privpub.cli import main
from privpub.core.errors import ArtifactError
from privpub.splu import SPLUGen, privacy_guarantee


@pytest.fixture(scope="module")
def adult():
    df, schema = privpub.datasets.load_adult()
    return df.iloc[:3000].reset_index(drop=True), schema


def with_parameters(path, out, edit) -> None:
    """Copy a release file with its stored parameters edited, as an earlier
    version (or a user with pyarrow) would have written them."""
    meta = stored(path)
    edit(meta["parameters"])
    pq.write_table(pq.read_table(path).replace_schema_metadata(
        {b"privpub": json.dumps(meta).encode()}), out)


def stored(path) -> dict:
    return json.loads(pq.ParquetFile(path).metadata.metadata[b"privpub"])


def renamed(new: str, old: str):
    def edit(parameters: dict) -> None:
        parameters[old] = parameters.pop(new)
    return edit


# Adult's records with repeats: the view says its bound is weak (UsefulnessWarning);
# this test checks how an old file's parameter names are read.
@pytest.mark.filterwarnings("ignore::privpub.UsefulnessWarning")
@pytest.mark.parametrize("kind", ["alphabeta", "frapp"])
def test_a_file_storing_epsilon_reads_as_failure_probability(adult, tmp_path, kind):
    df, schema = adult
    cls = privpub.AlphaBeta if kind == "alphabeta" else privpub.FRAPP
    mech = cls.for_privacy(schema, n=len(df), gamma=0.2, k=10, failure_probability=0.1)
    view = mech.publish(df, seed=1, duplicates="records")
    view.to_parquet(tmp_path / "new.parquet")
    with_parameters(tmp_path / "new.parquet", tmp_path / "old.parquet",
                    renamed("failure_probability", "epsilon"))
    assert "epsilon" in stored(tmp_path / "old.parquet")["parameters"]
    old = privpub.PublishedView.open(tmp_path / "old.parquet")
    assert old.parameters["failure_probability"] == 0.1 and "epsilon" not in old.parameters
    assert old.mechanism_object().failure_probability == 0.1
    where = "sex = 'Male' AND age < 40"
    assert old.estimate(where).value == view.estimate(where).value
    assert old.estimate(where).failure_probability == 0.1


def test_a_splu_file_storing_gamma_reads_as_group_size(adult, tmp_path):
    df, schema = adult
    view = SPLUGen(5, "occupation", schema=schema).publish(df, seed=1)
    view.to_parquet(tmp_path / "new.parquet")
    with_parameters(tmp_path / "new.parquet", tmp_path / "old.parquet",
                    renamed("group_size", "gamma"))
    old = privpub.PublishedView.open(tmp_path / "old.parquet")
    assert old.parameters["group_size"] == 5 and "gamma" not in old.parameters
    assert old.mechanism_object().group_size == 5
    assert (privpub.splu.sensitive_counts(old, "occupation").value
            == privpub.splu.sensitive_counts(view, "occupation").value).all()


def test_a_file_storing_both_names_is_refused(adult, tmp_path):
    df, schema = adult
    SPLUGen(5, "occupation", schema=schema).publish(df, seed=1).to_parquet(tmp_path / "a.parquet")

    def both(parameters: dict) -> None:
        parameters["gamma"] = 0.2
    with_parameters(tmp_path / "a.parquet", tmp_path / "both.parquet", both)
    with pytest.raises(ArtifactError, match="both 'gamma'.*and 'group_size'"):
        privpub.PublishedView.open(tmp_path / "both.parquet")


@pytest.mark.parametrize("call, old, new", [
    (lambda s: SPLUGen(gamma=5, sensitive="occupation", schema=s), "gamma", "group_size"),
    (lambda s: privpub.AlphaBeta(s, 0.4, 0.001, epsilon=0.1), "epsilon", "failure_probability"),
    (lambda s: privacy_guarantee(10, 0.3, alpha=3), "alpha", "small_sum_bound"),
    (lambda s: privacy_guarantee(10, eps=0.3, small_sum_bound=3), "eps", "relative_error"),
    (lambda s: privpub.plan(s, n=100, splu_gammas=[2]), "splu_gammas", "group_sizes"),
    (lambda s: privpub.plan(s, n=100, epsilon=0.1), "epsilon", "failure_probability"),
    (lambda s: Rounding.paper(64, epsilon=0.2), "epsilon", "log_excess"),
])
def test_an_old_keyword_is_a_type_error_naming_the_new_one(adult, call, old, new):
    with pytest.raises(TypeError, match=f"'{old}', which is now called '{new}'"):
        call(adult[1])


def test_the_new_keywords_work(adult):
    _, schema = adult
    assert SPLUGen(group_size=5, sensitive="occupation", schema=schema).group_size == 5
    assert privacy_guarantee(group_size=10, relative_error=0.3, small_sum_bound=3) >= 0.6
    assert Rounding.paper(64, log_excess=0.2).E > Rounding.paper(64).E
    mech = privpub.AlphaBeta.for_privacy(schema, n=100, gamma=0.2, k=10, failure_probability=0.1)
    assert "1 − ε = 0.9 (failure probability ε)" in str(mech.guarantee())


def test_cli_splu_gamma_names_group_size(adult, tmp_path, capsys):
    df, _ = adult
    df.to_csv(tmp_path / "a.csv", index=False)
    common = ["publish", "splu", "--input", str(tmp_path / "a.csv"), "--sensitive",
              "occupation", "--output", str(tmp_path / "s.parquet")]
    with pytest.raises(SystemExit) as exc:
        main([*common, "--gamma", "0.2"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--gamma is now --group-size" in err and "invalid int value" not in err
    assert main([*common, "--group-size", "5"]) == 0
    assert privpub.PublishedView.open(tmp_path / "s.parquet").parameters["group_size"] == 5


def test_cli_epsilon_names_failure_probability(capsys):
    """`plan` still reads --epsilon as the renamed flag; `publish` takes it as a
    privacy loss (tests/cli/test_cli_epsilon.py)."""
    with pytest.raises(SystemExit):
        main(["plan", "--input", "x.csv", "--epsilon", "0.1"])
    assert "--epsilon is now --failure-probability" in capsys.readouterr().err
