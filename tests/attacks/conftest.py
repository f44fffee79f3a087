import pytest
from sparse_table import sparse_table


@pytest.fixture(scope="module")
def table():
    return sparse_table()
