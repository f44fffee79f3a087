"""Type stubs for the Rust extension ``privpub._core`` (thin bindings over rust/src).

Every function takes numpy arrays and plain numbers, releases the GIL for its
loop, and raises ``privpub.core.errors`` exceptions carrying ``attribute_index`` and
``row`` where they apply. None decides a privacy parameter.
"""

import numpy as np
import numpy.typing as npt

#: Items per logical random block: block b draws from ChaCha20 stream b.
BLOCK: int

def encode_u64(cols: list[npt.NDArray[np.integer]], offsets: list[int],
               remaps: list[npt.NDArray[np.int64] | None],
               radices: list[int]) -> npt.NDArray[np.uint64]:
    """Mixed-radix codes (first column most significant). Column j's domain index is
    remaps[j][value] when a remap table is given, else value − offsets[j]; columns keep
    their integer width (int8 … uint64). DomainError(attribute_index, row) if outside."""

def encode_wide(cols: list[npt.NDArray[np.integer]], offsets: list[int],
                remaps: list[npt.NDArray[np.int64] | None], radices: list[int],
                limbs: int) -> npt.NDArray[np.uint64]:
    """As encode_u64, as an (n, limbs) array, most significant word first."""

def decode_u64(codes: npt.NDArray[np.uint64], offsets: list[int],
               radices: list[int]) -> list[npt.NDArray[np.signedinteger]]:
    """One array of n values (digit + offset) per attribute, each in the narrowest
    signed integer type that holds them; CodeError for a code ≥ m."""

def decode_wide(codes: npt.NDArray[np.uint64], offsets: list[int],
                radices: list[int]) -> list[npt.NDArray[np.signedinteger]]:
    """As decode_u64, from (n, limbs) codes."""

def to_digits(cols: list[npt.NDArray[np.integer]], offsets: list[int],
              remaps: list[npt.NDArray[np.int64] | None],
              radices: list[int]) -> list[npt.NDArray[np.signedinteger]]:
    """Each column's domain indices (remaps[j][value], or value − offsets[j]), checked
    against radices[j], in the narrowest signed type; DomainError(attribute_index, row)."""

def count_in_table(cols: list[npt.NDArray[np.integer]], radices: list[int],
                   table: npt.NDArray[np.bool_]) -> int:
    """Rows whose digits (first column slowest) index a true cell of ``table``
    (Π radices cells); DomainError(attribute_index, row) for a digit ≥ its radix."""

def parquet_footer(
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
                      rows: int) -> npt.NDArray[np.integer]:
    """Domain indices of a Parquet column chunk's data pages (the bytes after its
    dictionary page; Snappy-compressed when ``snappy``; definition levels, all
    "defined", when ``nullable``): each dictionary index through ``remap``,
    ``rows`` values as signed integers of ``width`` bits. PrivpubError on
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

def limbs_for(radices: list[int]) -> int:
    """64-bit words needed for codes below the product of the radices."""

def uniform(key: bytes, n: int, start: int) -> npt.NDArray[np.float64]:
    """Elements [start, start + n) of the uniform [0, 1) stream of a 32-byte key."""

def keep_records(key: bytes, codes: npt.NDArray[np.uint64], p_first: npt.NDArray[np.float64],
                 p_rest: float, start: int = 0) -> npt.NDArray[np.bool_]:
    """α-step mask over sorted (n, limbs) codes: first copy of a code kept with
    probability p_first (one value, or one per record), further copies with p_rest;
    record i uses stream element start + i."""

def thin_product(key: bytes, codes: npt.NDArray[np.uint64], radices: list[int],
                 ratios: npt.NDArray[np.float64], start: int = 0) -> npt.NDArray[np.bool_]:
    """Algorithm 8's thinning: keep each (n, limbs) code with probability
    Π_j ratios[block j][digit j] (each attribute's ratios back to back); candidate i
    uses stream element start + i."""

def frapp_perturb(key: bytes, codes: npt.NDArray[np.uint64], m: int,
                  keep: float, start: int = 0) -> npt.NDArray[np.uint64]:
    """FRAPP: each (n, limbs) code kept with probability ``keep``, else replaced by a
    uniform other tuple of [0, m); record i is position start + i of the whole list and
    draws from stream (start + i) // BLOCK (a slice draws what the whole list would)."""

def beta_step_layout(m: int, beta: float) -> tuple[int, int]:
    """(L, segments): the β-step draws code range [s·L, (s+1)·L) ∩ [0, m) from stream s."""

def beta_step(key: bytes, m: int, beta: float, excluded: npt.NDArray[np.uint64],
              segments: tuple[int, int] | None = None,
              kept: npt.NDArray[np.uint64] | None = None) -> npt.NDArray[np.uint64]:
    """Sorted codes in [0, m) outside the sorted distinct (n, limbs) ``excluded``, each
    selected independently with probability beta (exact geometric skipping; m ≤ 2^128);
    with ``segments=(a, b)`` only those of segments a..b, i.e. in [a·L, b·L): the
    pieces of any split concatenate to the whole draw. ``kept``: sorted (k, limbs)
    codes, each excluded and inside the segments' range, repeats allowed, written
    in order among the selected codes (the merge, without a second pass)."""

def merge_sorted(a: npt.NDArray[np.uint64],
                 b: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """Merge two sorted (n, limbs) code arrays, keeping duplicates."""

def count_subsets(digits: npt.NDArray[np.uint16], radices: list[int],
                  subsets: list[list[int]], totals: list[npt.NDArray[np.int64]]) -> None:
    """Histogram of the rows of (k, n) digits over each subset's value combinations
    (first attribute slowest), added into that subset's ``totals``; parallel over subsets."""

def sum_down(hist: npt.NDArray[np.int64], radices: list[int],
             keeps: list[list[int]]) -> list[npt.NDArray[np.int64]]:
    """A histogram over ``radices`` (first slowest) summed down to each target's
    kept axes (in the target's order, first slowest); parallel over targets."""

class QueryTextError(ValueError):
    """Query text refused: ``args`` are (kind, details…), worded by
    privpub.counting.querytext (kinds: character, syntax, unclosed, reserved,
    bitwise, depth, terms, values, clause, select, file, integer)."""

def parse_query(text: str, max_depth: int, max_terms: int, max_values: int
                ) -> tuple[tuple | None, str | None, str | None]:
    """Query text (a condition, or SELECT count(*) FROM <name> [WHERE …]) read
    by sqlparser within the limits: (the condition's tree of tagged tuples or
    None, the SELECT form's table name, its alias); QueryTextError if refused."""

def parse_subquery(text: str, max_depth: int, max_terms: int, max_values: int
                   ) -> tuple[str, list[str], list[tuple[str, str]], int, str | None]:
    """An IN subquery's text read: (its SQL, tables read, functions called as
    (lower-case name, call), columns selected, first source not a table name)."""

def int_list_text(values: npt.NDArray[np.int64]) -> str:
    """int64 values as an SQL list body, "1, 2, 3"."""

def graph_build(src: npt.NDArray[np.int64], dst: npt.NDArray[np.int64], m: int,
                symmetric: bool) -> tuple[tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint32],
                                                npt.NDArray[np.uint64], npt.NDArray[np.uint32]],
                                          int]:
    """CSR of the relation {(src[i], dst[i])} (plus reversed pairs when ``symmetric``) over
    nodes [0, m): ((out_offsets, out_targets, in_offsets, in_sources), repeated tuples
    merged). DomainError(attribute_index 0 = src / 1 = dst, row) for an id outside [0, m)."""

#: (m, out_offsets, out_targets, in_offsets, in_sources), as graph_build returns them with m.
Relation = tuple[int, npt.NDArray[np.uint64], npt.NDArray[np.uint32], npt.NDArray[np.uint64],
                 npt.NDArray[np.uint32]]

def graph_count(relation: Relation, n_vars: int, n_head: int, atoms: list[tuple[int, int]],
                neq: list[tuple[int, int]], less: list[tuple[int, int]],
                first: tuple[int, int]) -> int:
    """Distinct assignments of the head variables 0..n_head of a CQ(≠) query over R by a
    generic join (parallel over the first variable), counting only those whose first-bound
    variable is a node in [first[0], first[1]): over a partition of [0, m) the parts sum to
    the count (a query without head variables: the count is the largest part). Terms:
    variable index ≥ 0, or node c as −(c + 1); ``atoms`` are subgoals R(a, b), ``neq`` the
    disequalities a ≠ b, ``less`` order constraints (a, b): variable a's node ranks below
    b's in the (degree, id) order (with any, ``first`` is a range of ranks)."""

def graph_cliques(relation: Relation, k: int) -> int:
    """k! × the number of k-cliques of a symmetric relation (degree-ordered orientation)."""

#: A scipy CSR matrix: (indptr, indices, data) as int64 arrays and the number of columns.
Sparse = tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64], int]

def graph_masked_product(left: Sparse, right: Sparse, mask: Sparse) -> npt.NDArray[np.int64]:
    """(left @ right)[x, z] at each stored entry (x, z) of ``mask``, in its order, without
    forming the product (Gustavson's product masked as it goes, parallel over rows); values
    non-negative, sums exact (an entry past 2^63 − 1 is a PrivpubError)."""

def graph_two_paths(relation: Relation) -> int:
    """Assignments of x → y → z with x, y, z pairwise distinct (from degrees)."""

def graph_four_cycles(relation: Relation) -> int:
    """Assignments of x1 → x2 → x3 → x4 → x1 with pairwise distinct nodes (two-path
    counters per start node)."""

def graph_triangle_pairs(relation: Relation) -> npt.NDArray[np.int64]:
    """For a symmetric relation: best[a] = the largest b_ij (nodes other than i, j adjacent
    to exactly one of them) over pairs i ≠ j with a_ij = a common neighbours, −1 where no
    pair has a_ij = a; length max a_ij + 1 (empty when m < 2). Self-loops ignored."""

def graph_local_sensitivity(relation: Relation, n_vars: int, goals: list[tuple[int, int]]
                            ) -> tuple[int, tuple[int, int], int, tuple[int, int]]:
    """Exact local sensitivity of the pattern query with n_vars pairwise distinct variables
    and subgoals R(x, y) ``goals`` (variable indices): (largest gain from adding an absent
    tuple, that tuple, largest loss from removing a present tuple, that tuple); a tuple is
    (-1, -1) when its change is 0."""

def weed(n: int, queries: npt.NDArray[np.uint64], answers: npt.NDArray[np.float64],
         bound: float) -> int | None:
    """Dinur–Nissim Theorem 2's weeding: the first candidate mask c < 2^n (n ≤ 40) with
    |popcount(c & q_j) − answers_j| ≤ bound for every query mask q_j, or None."""

def decoy_groups(values: npt.NDArray[np.uint32], n_values: int,
                 gamma: int) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint32]]:
    """SPLU-Gen's deterministic decoy groups (Anatomy's group creation: each round one
    record from each of the γ buckets with most records left, ties to the smaller value,
    smallest record id first). Returns (members: γ record ids per group, groups one after
    the other; residue: the record ids left, ascending). DomainError for a value ≥ n_values."""

def decoy_draw(key: bytes, members: npt.NDArray[np.uint32], values: npt.NDArray[np.uint32],
               gamma: int) -> npt.NDArray[np.uint32]:
    """Per position of ``members``: the value of a uniformly drawn member of its group
    (p = q = 1/γ); position j uses ChaCha stream j // BLOCK."""
