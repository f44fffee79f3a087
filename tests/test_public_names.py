"""One meaning per public parameter name (issue 23).

Every public function, class and method reachable from ``privpub`` and its
public subpackages (following each package's ``__all__``, into the modules it
exports) is listed with ``inspect``; each parameter name must be in NAMES, the
table of names and their one meaning. A name whose meaning depends on a paper's
letter (ε, γ, δ, β, …) is further tied to the places where that meaning holds
(SCOPES): ``gamma`` on ``SPLUGen`` is refused even though ``gamma`` is a name.
"""

from __future__ import annotations

import importlib
import inspect
import types
from collections.abc import Iterator

import pytest

import privpub

#: Where the walk starts: the package and its public subpackages.
ROOTS = ("privpub", "privpub.alphabeta", "privpub.frapp", "privpub.graphs", "privpub.splu",
         "privpub.attacks", "privpub.datasets")

#: Every public parameter name and its one meaning.
NAMES = {
    # privacy and utility parameters (the papers' letters in brackets)
    "epsilon": "privacy loss ε (graph mechanisms, Laplace baselines; αβ and FRAPP "
               "calibrated to a pure-DP ε)",
    "delta": "δ of (ε, δ)-differential privacy (graph mechanisms)",
    "gamma": "posterior bound γ in (0, 1] of (d, γ)-privacy",
    "gammas": "a grid of posterior bounds γ",
    "d": "prior bound d of (d, γ)-privacy",
    "k": "prior bound as a multiple of the base rate, d = k·n/m",
    "ks": "a grid of k",
    "failure_probability": "probability that an error bound fails (ε of (ρ, ε)-usefulness)",
    "remedy": "the requests that make a weak release useful, with their cost in privacy "
              "(a usefulness warning's lead)",
    "relative_delta": "δ of (d, δ)-relative privacy (αβ, Appendix A)",
    "alpha": "αβ's retention probability α",
    "beta": "αβ's insertion probability β",
    "beta_max": "αβ's largest insertion probability β(t)",
    "beta_min": "αβ's least insertion probability β(t)",
    "low_share": "αβ's least insertion probability β(t) over its largest",
    "value_range": "the values an estimate's true count can take, (low, high)",
    "value_ranges": "each query's value_range",
    "cells": "a sum's cells Q ∧ col = v, as counts (one entry per value v)",
    "cell_weights": "one number per cell of a sum (the summed column's values)",
    "aggregates": "whether query text may ask for sum(col) or avg(col)",
    "is_clamped": "whether an estimate was clamped into its value_range",
    "gamma_frapp": "FRAPP's retention probability γ_frapp",
    "r": "Theorem 4.3's r = βm/(α²n)",
    "calibration": "which (α, β) calibration of αβ",
    "calibrations": "a list of αβ calibrations",
    "allow_prior_below_base_rate": "accept a prior bound d below the base rate n/m",
    "source": "a source distribution for αβ's β-step",
    "probabilities": "per-value probabilities of a source distribution",
    "group_size": "SPLU-Gen's decoy group size γ (records per group)",
    "group_sizes": "a grid of SPLU-Gen group sizes",
    "relative_error": "SPLU's relative error ε of a published count",
    "small_sum_bound": "SPLU's α: the largest count small-sum privacy protects",
    "error_probability": "SPLU's T_E: the allowed probability of a larger relative error",
    "f": "a sensitive value's record count",
    "sensitive": "the sensitive attribute(s)",
    "smoothing": "β of β-smooth sensitivity",
    "sensitivity": "a query's global sensitivity (Laplace scale × ε)",
    "scale": "a Laplace noise scale",
    "term_bound": "a bound on each summand (Bernstein's b)",
    "variance": "a variance",
    "advantage": "Dinur–Nissim's δ: an adversary's advantage over 1/2 on a bit",
    "log_excess": "Dinur–Nissim's ε in E = √n (ln n)^{1+ε}",
    "prior": "an adversary's prior probability",
    "priors": "an adversary's prior probabilities",
    "ratio": "a likelihood ratio",
    "copies": "how many copies of a tuple a view shows",
    "view_counts": "how many times a view shows a tuple",
    "breach_budget": "the total breach probability a self-auditor may spend",
    "breach_probability": "a query's breach probability",
    "level": "a confidence level (of an interval or a test)",
    "bound": "a bound on an answer's absolute error or noise",
    "conf": "an adversary's log-odds confidence per walk and step",
    # sizes and counts
    "n": "number of records (or bits, for a statistical database)",
    "m": "domain size (of a table, or of a graph's nodes)",
    "m_derived": "whether m was derived from the data",
    "n_candidates": "how many candidates an audit considers",
    "n_distinct": "number of distinct tuples",
    "n_domain": "domain size as stored with an estimate",
    "n_queries": "number of queries",
    "n_targets": "number of targets an audit attacks",
    "n_view": "number of rows of a view",
    "max_iter": "an iteration cap",
    "max_noise_rows": "a cap on the β-step's noise rows",
    "max_views": "the most views a multi-view publisher releases",
    "view_index": "which view of a multi-view release",
    "previous_rows": "rows of the previous views",
    "histories": "(mask, count) pairs: tuples of the data by membership history over versions",
    "history": "one tuple's membership in each version I_1..I_j (True: in I_i)",
    "published": "how many views of a multi-view sequence are published so far",
    "exclusive": "whether d-exclusive adversaries are protected too (not only d-independent)",
    "independent_posterior": "worst posterior of a d-independent adversary",
    "independent_ratio": "least posterior/prior of a d-independent adversary",
    "exclusive_posterior": "worst posterior of a d-exclusive adversary",
    "likelihood_max": "largest likelihood ratio over inclusion patterns",
    "likelihood_min": "least likelihood ratio over inclusion patterns",
    "p_bg": "probability of a background row of a multi-view step",
    "x": "an estimate to correct",
    "total": "a total count",
    "rounds": "rounds (of an audit, or of a refinement)",
    "walks": "number of random walks",
    "steps": "number of steps",
    "t": "number of queries (Dinur–Nissim's t)",
    "i": "an index (a view, or a pattern size)",
    "v": "number of vertices of a pattern",
    "E": "a perturbation's noise bound E (Dinur–Nissim)",
    "R": "a coin-noise perturbation's number of coins R",
    "T": "a binomial noise's trials T",
    "mu": "a mean μ",
    "u": "uniform draws in [0, 1)",
    "uniforms": "uniform draws in [0, 1)",
    "sizes": "subset sizes |q|",
    "size": "a size",
    "exact": "exact answers before perturbation",
    "tol": "a convergence tolerance",
    "stopping": "an iteration's stopping rule",
    "method": "which method computes a result",
    "solver": "which LP solver",
    "decoder": "which reconstruction decoder",
    "use_proposition": "use a proposition's shortcut instead of a search",
    "budget": "a search budget",
    # data, schemas, releases
    "data": "a table (pandas, Arrow, polars, Dask, or a file path)",
    "df": "a pandas DataFrame",
    "frame": "a data frame",
    "table_or_schema": "a table, or a schema with n",
    "schema": "a Schema (the domain)",
    "document": "a JSON-ready document",
    "name": "a name",
    "names": "names",
    "attribute": "an attribute name",
    "attributes": "attribute names",
    "columns": "column names",
    "dtype": "a column's data type",
    "missing": "the label of a missing value",
    "ordered": "whether categories are ordered",
    "lo": "a range's lower end",
    "hi": "a range's upper end",
    "values": "values",
    "value": "a value",
    "labels": "labels",
    "label": "a label",
    "ints": "integers to encode",
    "codes": "mixed-radix codes of tuples",
    "digits": "per-attribute codes of tuples",
    "raw": "an attribute's raw integers (domain index + its offset)",
    "rows": "rows",
    "records": "records (or how repeated tuples were treated)",
    "records_given": "records given to a mechanism",
    "residue": "records left in no decoy group",
    "duplicates": "how repeated tuples are published ('set' or 'records')",
    "distinct": "whether the tuples are distinct",
    "counts": "what a count counts ('records' or 'tuples')",
    "true_counts": "exact counts before noise",
    "view": "a published view",
    "release": "a release",
    "mechanism": "a mechanism (or its name)",
    "mechanisms": "mechanism names",
    "mech": "a mechanism",
    "parameters": "a mechanism's parameters",
    "meta": "stored metadata",
    "kind": "a release kind",
    "seed": "a seed (int, Generator or RandomSource); None draws from the OS",
    "seed_policy": "how a release was seeded",
    "seeded": "whether a random source was seeded",
    "key": "a 32-byte key",
    "rand": "a random source",
    "start": "a first position",
    "segments": "segments of a draw",
    "library_version": "the library version",
    "path": "a file path",
    "overwrite": "replace an existing file",
    "sign": "an Ed25519 private key (or its file) that signs the written release",
    "skip": "positions of conditions in a batch already counted (left out)",
    "trust": "the publisher's Ed25519 public key (or its file); refuse what it did not sign",
    "audit": "whether a release's card runs the attribute and presence audits",
    "html": "an HTML page",
    "progress": "show progress (bool or callable)",
    "npartitions": "Dask partitions",
    "chunk_rows": "rows per chunk",
    "batch_rows": "rows per batch",
    "expected": "what a file is expected to hold",
    "extra": "extra metadata",
    "digest": "a content digest",
    "context": "context sets of a view",
    "domain_sum": "the sum over the domain",
    "index": "an index",
    "limit": "a limit on rows shown",
    "split": "which part of a dataset",
    "derived": "attributes whose domains were derived from the data",
    "regions": "feasible regions of a plan",
    "y": "published state counts",
    "states": "published state counts",
    "observed": "observed counts",
    "groups": "decoy groups",
    "qit": "Anatomy's quasi-identifier table",
    "st": "Anatomy's sensitive table",
    # queries and estimates
    "c": "a counting query's condition",
    "where": "a query's condition (SQL text or Condition)",
    "condition": "a query's condition",
    "sql": "SQL text",
    "text": "query text",
    "tables": "named tables a condition refers to",
    "atom": "a query atom",
    "formula": "a condition's tree of atoms, AND, OR and NOT",
    "exact_domain": "columns whose observed values are kept as an exact domain",
    "atoms": "a conjunctive query's atoms",
    "subsets": "attribute subsets of marginals",
    "q": "a graph query",
    "query": "a query",
    "queries": "queries",
    "head": "a conjunctive query's head variables",
    "neq": "a conjunctive query's inequalities",
    "terms": "an atom's terms",
    "stderr": "a standard error",
    "assumption": "what an estimate's model interval assumes",
    "bound_confidence": "the probability an estimate's error bound holds with",
    "details": "a family's own facts about an estimate",
    "estimates": "estimates to batch",
    "conditions": "queries' parsed conditions",
    "indices": "query positions",
    "wheres": "queries' conditions (one per estimate)",
    "interval": "an interval",
    "interval_method": "how an interval was computed",
    "law": "an estimate's sampling law",
    "converged": "whether an iteration converged",
    "iterations": "iterations run",
    "misfit": "a fit's misfit",
    "notes": "notes on a result",
    "note": "a note on a result",
    "fractional": "a decoder's fractional solution",
    "bits": "bits (a database's, or random bits)",
    "db": "a statistical database",
    "candidate": "candidate bits",
    "candidates": "candidate bit vectors",
    "recovered": "the fraction of bits recovered",
    "answer": "an answer",
    "answered": "answers given",
    "refused": "queries refused",
    "peak_confidence": "the largest confidence reached",
    "attack": "an attack",
    "auditor": "an auditor",
    "adversarial": "whether noise is chosen adversarially",
    "baseline": "a baseline's result",
    "eligible": "eligible targets",
    "secret_column": "the column an audit attacks",
    "secret_value": "the value an audit attacks",
    "secret": "the index of the column an audit attacks (a mechanism's audit_subset_sums)",
    "one": "the domain index of the value an audit attacks (bit 1)",
    "qi_columns": "the indices of the columns that identify a record (the quasi-identifier)",
    "tuple_digits": "the audit's targets as digit columns, the secret set to bit 1",
    "confidence": "an attack's confidence",
    "correct": "correct guesses",
    "domain": "a domain",
    "domains": "domains",
    "named": "candidates named present",
    "present": "candidates truly present",
    "tuples": "number of tuples",
    "in_view": "whether a tuple is in the view",
    "claims": "a guarantee's claims",
    "statement": "a claim's statement",
    "holds": "whether a claim holds",
    "weak": "whether usefulness holds only weakly",
    # graphs
    "graph": "a Graph",
    "g": "a networkx graph",
    "edges": "edges",
    "directed": "whether edges are directed",
    "relation": "a relation name",
    "relation_names": "relation names",
    "target": "the target column of an edge",
    "csr": "a graph's compressed sparse rows",
    "merged": "whether parallel edges were merged",
    "graph_facts": "facts about a graph a mechanism was built for",
    "min_with_gs": "cap λ at the global sensitivity",
    "clamp": "clamp an answer to its possible range",
    "clamped": "whether an answer was clamped",
    "local": "local sensitivity",
    "at_distance": "local sensitivity at each distance",
    "add_tuple": "the tuple whose addition changes the answer most",
    "remove_tuple": "the tuple whose removal changes the answer most",
    "added": "the change from adding a tuple",
    "removed": "the change from removing a tuple",
    # call plumbing
    "args": "positional arguments",
    "kwargs": "keyword arguments",
    "open_low": "whether an interval is open below",
    "open_high": "whether an interval is open above",
}

#: Names whose meaning is a paper's letter: the modules where that meaning holds.
SCOPES = {
    "epsilon": ("privpub.graphs", "privpub.splu.baselines", "privpub.alphabeta",
                "privpub.frapp", "privpub.core.guarantee"),
    "delta": ("privpub.graphs",),
    "gamma": ("privpub.alphabeta", "privpub.frapp", "privpub.graphs", "privpub.planning",
              "privpub.attacks.presence"),
    "gammas": ("privpub.planning",),
    "alpha": ("privpub.alphabeta",),
    "beta": ("privpub.alphabeta",),
    "d": ("privpub.alphabeta", "privpub.frapp", "privpub.attacks.presence"),
    "group_size": ("privpub.splu",),
    "relative_error": ("privpub.splu",),
    "advantage": ("privpub.attacks",),
}


def _public(namespace: types.ModuleType) -> list[str]:
    names = getattr(namespace, "__all__", None)
    return list(names) if names is not None else \
        [n for n in vars(namespace) if not n.startswith("_")]


def _functions(cls: type) -> Iterator[tuple[str, object]]:
    for name, attr in vars(cls).items():
        if name.startswith("_") and name != "__init__":
            continue
        func = attr.__func__ if isinstance(attr, (classmethod, staticmethod)) else attr
        if inspect.isfunction(func):
            yield f"{cls.__module__}.{cls.__qualname__}.{name}", func


def public_signatures() -> Iterator[tuple[str, str, str]]:
    """(where, module, parameter name) for every public signature."""
    seen: set[int] = set()
    todo = [importlib.import_module(r) for r in ROOTS]
    found: list[tuple[str, object]] = []
    while todo:
        namespace = todo.pop()
        if id(namespace) in seen:
            continue
        seen.add(id(namespace))
        for name in _public(namespace):
            obj = getattr(namespace, name)
            if id(obj) in seen or not getattr(obj, "__module__", "privpub").startswith("privpub"):
                continue
            if isinstance(obj, types.ModuleType):
                if obj.__name__.startswith("privpub."):
                    todo.append(obj)
                continue
            seen.add(id(obj))
            if inspect.isclass(obj):
                found.extend(_functions(obj))
            elif inspect.isfunction(obj):
                found.append((f"{obj.__module__}.{obj.__qualname__}", obj))
    for where, func in found:
        for parameter in inspect.signature(func).parameters:
            if parameter not in ("self", "cls"):
                yield where, func.__module__, parameter


def test_every_public_parameter_name_has_one_listed_meaning():
    unknown = sorted({(p, w) for w, _, p in public_signatures() if p not in NAMES})
    assert not unknown, "parameter names missing from NAMES (give each one meaning): " + \
        "; ".join(f"{p} ({w})" for p, w in unknown)


def test_paper_letters_are_used_only_where_their_meaning_holds():
    misplaced = sorted({(p, w) for w, module, p in public_signatures()
                        if p in SCOPES and not module.startswith(SCOPES[p])})
    assert not misplaced, "names used outside the places their meaning holds: " + \
        "; ".join(f"{p} in {w} (allowed in {', '.join(SCOPES[p])})" for p, w in misplaced)


def test_the_walk_reaches_every_family():
    where = {w for w, _, _ in public_signatures()}
    for expected in ("privpub.splu.mechanism.SPLUGen.__init__",
                     "privpub.alphabeta.mechanism.AlphaBeta.for_privacy",
                     "privpub.frapp.mechanism.FRAPP.__init__",
                     "privpub.graphs.mechanism.RelationshipMechanism.__init__",
                     "privpub.splu.calculators.privacy_guarantee",
                     "privpub.attacks.selfauditor.SelfAuditor.__init__",
                     "privpub.planning.plan"):
        assert expected in where


@pytest.mark.parametrize("name", ["AlphaBeta", "FRAPP", "SPLUGen", "RelationshipMechanism",
                                  "MultipleQueryMechanism", "NegativeLeakageMechanism",
                                  "LaplaceMechanism", "SmoothTriangleMechanism"])
def test_each_family_mechanism_is_a_top_level_name(name):
    assert name in privpub.__all__ and inspect.isclass(getattr(privpub, name))
