"""``privpub._core.parquet``: the Parquet page reader (rust/src/bindings/parquet.rs
over pages.rs and hybrid.rs: a footer's chunk layout, a chunk's dictionary page,
its data pages) and the scan of a view file's row groups (groupscan.rs: decoded,
digested and counted in one call)."""

import numpy as np
import numpy.typing as npt

def footer(
    tail: bytes, file_size: int,
) -> tuple[int | None, list[tuple[int, list[tuple[int, int, bool, str, bool] | None]]]]:
    """A Parquet file's footer from its last bytes ``tail`` (the file holds
    ``file_size``): (None, per row group (rows, per column (start, length,
    Snappy, physical type, nullable) or None when the page reader does not
    decode that chunk)), or (bytes needed from the end, []) when ``tail`` is
    shorter than the footer. PrivpubError when the footer cannot be read."""

def dictionary_page(data: bytes, snappy: bool,
                    physical: str) -> tuple[int, list[str] | npt.NDArray[np.integer]]:
    """A column chunk's dictionary page (``data``: its bytes from that page on;
    ``physical``: BYTE_ARRAY, INT32 or INT64): (where it ends in ``data``, its
    PLAIN values). PrivpubError on anything else or on malformed bytes."""

def decode_data_pages(data: npt.NDArray[np.uint8], snappy: bool, nullable: bool,
                      remap: npt.NDArray[np.int64], width: int,
                      rows: int) -> tuple[npt.NDArray[np.integer], tuple[int, int] | None]:
    """Domain indices of a Parquet column chunk's data pages (the bytes after its
    dictionary page; Snappy-compressed when ``snappy``; definition levels, all
    "defined", when ``nullable``): each dictionary index through ``remap``,
    ``rows`` values as signed integers of ``width`` bits; with their least and
    greatest (None when empty), found in the same call. PrivpubError on
    anything else (another page type or encoding, a missing value, bad bytes)."""

def scan_groups(
    groups: list[tuple[int, list[tuple[npt.NDArray[np.uint8], bool, bool,
                                       npt.NDArray[np.int64], int]],
                       list[tuple[int, list[int]]]]],
    tables: list[tuple[list[int], npt.NDArray[np.bool_]]],
) -> list[tuple[list[int], list[tuple[str, tuple[int, int] | None]]] | None]:
    """Row groups decoded, digested and counted in one call, on rayon's pool
    with the GIL released. Each group is (rows, its column chunks as
    ``decode_data_pages`` takes them less the rows, its counts as (index into
    ``tables``, positions of the table's attributes among its chunks)); each
    table (radices, truth table). Per group: (its counts, per chunk the
    SHA-256 hex of its indices as little-endian integers of its width and its
    least and greatest index), or None when a chunk cannot be decoded or a
    count cannot be made (the caller reads that group another way)."""
