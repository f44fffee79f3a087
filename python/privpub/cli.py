"""The ``privpub`` command.

Subcommands arrive with the features they run; each one is a small function
taking parsed arguments and returning an exit code.
"""

from __future__ import annotations

import argparse
import sys

from privpub import __version__
from privpub.alphabeta.accounting import CALIBRATIONS

CALIBRATION_HELP = ("how α, β are chosen for (d, γ): 'exclusive' (default) also stops "
                    "positive leakage to d-exclusive (link-attack) adversaries; 'independent' "
                    "gives smaller errors against d-independent adversaries only; 'sec4.2' "
                    "and 'half' reproduce the paper's choices")

DEMO_QUERIES = (
    {"sex": "Female"},
    {"salary": ">50K"},
    {"education": "Bachelors", "sex": "Male"},
    {"marital-status": "Never-married", "salary": "<=50K"},
    {"race": "White", "sex": "Female", "salary": ">50K"},
    {"occupation": "Exec-managerial", "education": "Masters", "salary": ">50K"},
)


def _demo(args: argparse.Namespace) -> int:
    import pandas as pd
    from tqdm import tqdm

    from privpub import AlphaBeta
    from privpub.datasets import load_adult

    with tqdm(total=3, desc="demo", unit="step", disable=None) as bar:
        df, schema = load_adult(args.split)
        bar.update()
        mech = AlphaBeta.for_privacy(schema, n=len(df), gamma=args.gamma, k=args.k,
                                     epsilon=args.epsilon, calibration=args.calibration)
        view = mech.publish(df, seed=args.seed, duplicates=args.duplicates)
        bar.update()
        # Under set semantics the release counts distinct tuples; so does the truth.
        data = df.drop_duplicates() if args.duplicates == "set" else df
        rows = []
        for where in DEMO_QUERIES:
            est = view.estimate(where)
            truth = int((data[list(where)] == pd.Series(where)).all(axis=1).sum())
            rows.append({"query": " and ".join(f"{k} = {v!r}" for k, v in where.items()),
                         "true Q(I)": truth, "estimate": round(est.value, 1),
                         "stderr": round(est.stderr, 1), "n_V": est.n_view})
        bar.update()
    print(f"Adult ({args.split}): n = {len(df):,} records without missing values "
          f"({df.attrs['dropped_missing']:,} left out), m = {schema.size:,}")
    print(schema)
    print()
    records = view.parameters["records"]
    distinct = len(df.drop_duplicates())
    print(f"Adult repeats {len(df) - distinct:,} records beyond {distinct:,} distinct tuples; "
          f"--duplicates {args.duplicates}: " + (
              "published as a set, estimates count distinct tuples (--duplicates records "
              "counts records, and the guarantee then leaves the repeated tuples out)"
              if args.duplicates == "set" else
              f"every record kept, estimates count records; the {records['repeated_tuples']:,} "
              "repeated tuples are not protected (--duplicates set protects every tuple)"))
    print()
    print(view.guarantee())
    print()
    print(f"published view: {len(view):,} rows; randomness: {view.seed_policy}")
    print()
    print("estimated counts (Algorithm 3: (n_V − β n_D)/α) next to the truth:")
    print(pd.DataFrame(rows).to_string(index=False))
    if args.out:
        view.to_parquet(args.out)
        print(f"\nview written to {args.out}")
    return 0


def _publish(args: argparse.Namespace) -> int:
    import json
    import sys
    import warnings

    from privpub import AlphaBeta, Schema
    from privpub.core.errors import ParameterError, PrivacyWarning, SchemaError
    from privpub.tables.inputs import read_table_file

    table = read_table_file(args.input)
    if args.columns:
        wanted = args.columns.split(",")
        missing = [c for c in wanted if c not in table.column_names]
        if missing:
            raise SchemaError(f"--columns names {missing}, not in {args.input!r} (columns: "
                              f"{', '.join(table.column_names)})")
        table = table.select(wanted)
    if args.schema:
        with open(args.schema) as fh:
            try:
                schema = Schema.from_dict(json.load(fh))
            except json.JSONDecodeError as exc:
                raise SchemaError(f"--schema {args.schema!r} is not JSON: {exc}") from None
        extra = [c for c in table.column_names if c not in schema.names]
        if extra:
            raise SchemaError(f"{args.input!r} has columns the schema does not list: {extra}; "
                              "publishing would drop them: choose columns with --columns")
    else:
        with warnings.catch_warnings():  # said here, on one line, and in the guarantee
            warnings.simplefilter("ignore", PrivacyWarning)
            schema = Schema.from_frame(table)
        print("note: the domains were inferred from the data (active domains), which "
              "reveals which values occur; pass --schema for public domains", file=sys.stderr)
    mech = AlphaBeta.for_privacy(schema, n=table.num_rows, gamma=args.gamma, k=args.k,
                                 epsilon=args.epsilon, calibration=args.calibration)
    try:
        view = mech.publish(table.select(list(schema.names)), seed=args.seed,
                            duplicates=args.duplicates)
    except ParameterError as exc:
        raise ParameterError(str(exc).replace("duplicates='", "--duplicates '")) from None
    view.to_parquet(args.out)
    print(view.guarantee())
    print(f"published {len(view):,} rows to {args.out}")
    return 0


def _estimate(args: argparse.Namespace) -> int:
    import pandas as pd

    from privpub import PublishedView
    from privpub.core.errors import ParameterError
    from privpub.tables.inputs import read_table_file

    view = PublishedView.open(args.view)  # streams the file: views larger than memory
    tables = {}
    for spec in args.table or []:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise ParameterError(f"--table takes NAME=PATH (the name the subquery uses), "
                                 f"got {spec!r}")
        tables[name] = read_table_file(path)
    rows = []
    for query in args.query:
        est = view.estimate(query, tables=tables)
        rows.append({"query": query, "estimate": round(est.value, 2),
                     "stderr": round(est.stderr, 2), "n_view": est.n_view,
                     "n_domain": est.n_domain,
                     "bound": None if est.bound is None else round(est.bound, 1)})
    print(pd.DataFrame(rows).to_string(index=False))
    return 0


def _attack(args: argparse.Namespace) -> int:
    import json
    from dataclasses import asdict

    from privpub import PublishedView
    from privpub.attacks import audit
    from privpub.attacks.audit import binary_values
    from privpub.core.errors import ParameterError
    from privpub.tables.inputs import read_table_file

    view = PublishedView.open(args.view)
    secret_value = None
    if args.secret_value is not None:  # the command line gives text: match it to a value
        values = binary_values(view.schema, args.secret)
        named = [v for v in values if str(v) == args.secret_value]
        if not named:
            raise ParameterError(f"--secret-value {args.secret_value!r} is not a value of "
                                 f"{args.secret!r} (its values: {values})")
        secret_value = named[0]
    result = audit(view, args.secret, read_table_file(args.data),
                   secret_value=secret_value, n_targets=args.targets,
                   n_queries=args.queries, decoder=args.decoder, seed=args.seed)
    print(result)
    print(json.dumps({**asdict(result), "advantage": result.advantage}, indent=2, default=str))
    return 0


EXPERIMENTS = {
    "adult-alphabeta": "αβ vs FRAPP on Adult at (10n/m, 0.2)-privacy: Fig. 2, Fig. 3 "
                       "and summary.json (αβ paper, Sec. 5)",
    "relationship": "Algorithm 2.1 vs Laplace (global sensitivity) on the facebook and "
                    "ca-GrQc graphs for Figure 1(c)'s queries: table1.md, relationship.json, "
                    "relationship.png (relationship-privacy paper, Table 1)",
    "reconstruction": "Dinur–Nissim: fraction of bits recovered against E/√n for "
                      "n ∈ {128, 256, 512, 1024}, per perturbation and decoder: "
                      "reconstruction.png and summary.json (--quick: a small version)",
    "splu": "SPLU on Adult and synthetic CENSUS-like data (occupation sensitive): small-count "
            "error against γ for SPLU-Gen, Anatomy, DBR, Laplace (Fig. 7/10), large counts by "
            "selectivity per estimator (Fig. 8/9), two sensitive attributes (Fig. 12), "
            "publish time against N: PNGs, summary.json, summary.md (--quick: small)",
}


def _splu_publish(args: argparse.Namespace) -> int:
    import json
    import warnings

    from privpub.core.errors import PrivacyWarning, SchemaError
    from privpub.splu import SPLUGen
    from privpub.tables.inputs import read_table_file
    from privpub.tables.schema import Schema

    table = read_table_file(args.input)
    if args.schema:
        with open(args.schema) as fh:
            try:
                schema = Schema.from_dict(json.load(fh))
            except json.JSONDecodeError as exc:
                raise SchemaError(f"--schema {args.schema!r} is not JSON: {exc}") from None
    else:
        with warnings.catch_warnings():  # said here, on one line, and in the guarantee
            warnings.simplefilter("ignore", PrivacyWarning)
            schema = Schema.from_frame(table)
        print("note: the domains were inferred from the data (active domains), which "
              "reveals which values occur; pass --schema for public domains", file=sys.stderr)
    mech = SPLUGen(args.gamma, args.sensitive.split(","), schema=schema)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        view = mech.publish(table, seed=args.seed)
    for w in caught:
        if issubclass(w.category, UserWarning) and not issubclass(w.category, PrivacyWarning):
            print(f"note: {w.message}", file=sys.stderr)
    view.to_parquet(args.out)
    print(view.guarantee())
    print(f"published {len(view):,} rows to {args.out}")
    return 0


def _splu_estimate(args: argparse.Namespace) -> int:
    from privpub import PublishedView
    from privpub.core.errors import ParameterError
    from privpub.splu import reconstruct_many, sensitive_counts

    view = PublishedView.open(args.view)
    values = {}
    for spec in args.value or []:
        name, sep, value = spec.partition("=")
        if not sep or not name:
            raise ParameterError(f"--value takes ATTRIBUTE=VALUE, got {spec!r}")
        # The domain value written as this text (so "2" finds an integer 2).
        attr = view.schema[name] if name in view.schema.names else None
        domain = [] if attr is None else getattr(attr, "values", None) or range(
            attr.offset, attr.offset + attr.size)
        values[name] = next((v for v in domain if str(v) == value), value)
    if not values:
        raise ParameterError("give at least one --value ATTRIBUTE=VALUE (a sensitive value)")
    if args.where is None and len(values) == 1:
        (name, value), = values.items()
        frame = sensitive_counts(view, name)
        row = frame[frame[name] == value]
        if row.empty:
            raise ParameterError(f"value {value!r} is not in the domain of {name!r}")
        print(f"count({name} = {value!r}) ≈ {row['estimate'].iloc[0]:,.0f} ± "
              f"{row['stderr'].iloc[0]:,.1f} (stderr; f' is the MLE)")
        return 0
    r = reconstruct_many(view, [(args.where, values)], method=args.method)
    note = "" if r.converged[0] else f" (stopped at {r.iterations[0]} iterations)"
    print(f"count({args.where or 'TRUE'} and {values}) ≈ {r.estimate[0]:,.1f} "
          f"[{args.method}; published {r.observed[0]:,.0f}]{note}")
    return 0


def _experiments(args: argparse.Namespace) -> int:
    import json

    if args.name == "relationship":
        from privpub.experiments import relationship

        summary = relationship.run(args.out, seed=args.seed, epsilon=args.privacy_epsilon,
                                   gamma=args.gamma, runs=args.runs,
                                   graphs=tuple(args.graphs.split(",")))
        print(relationship.markdown(summary))
        print(f"wrote {args.out}/table1.md, {args.out}/relationship.json, "
              f"{args.out}/relationship.png")
        return 0
    if args.name == "reconstruction":
        from privpub.experiments import reconstruction

        summary = reconstruction.run(args.out, seed=args.seed, quick=args.quick)
        print(json.dumps({"threshold (largest E/sqrt(n) with >= 90% recovered, lstsq)":
                          summary["threshold"]}, indent=2))
        print(f"wrote {args.out}/reconstruction.png, {args.out}/summary.json")
        return 0
    if args.name == "splu":
        from privpub.experiments import splu

        summary = splu.run(args.out, seed=args.seed, quick=args.quick)
        print(splu.markdown(summary))
        print(f"wrote {args.out}/fig7_small_counts.png, {args.out}/fig8_large_counts.png, "
              f"{args.out}/fig12_two_sensitive.png, {args.out}/publish_time.png, "
              f"{args.out}/summary.json, {args.out}/summary.md")
        return 0
    from privpub.experiments import adult_alphabeta

    summary = adult_alphabeta.run(args.out, seed=args.seed, k=args.k, gamma=args.gamma,
                                  epsilon=args.epsilon)
    print(json.dumps(summary, indent=2))
    print(f"wrote {args.out}/fig2.png, {args.out}/fig3.png, {args.out}/summary.json")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="privpub",
        description="Privacy-preserving data publishing and query answering "
                    "(alpha-beta, relationship privacy, SPLU, reconstruction attacks).",
    )
    parser.add_argument("--version", action="version", version=f"privpub {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = sub.add_parser(
        "demo", help="publish the embedded Adult census data with the αβ algorithm",
        description="Publish the embedded UCI Adult data (30,162 records, 9 attributes, "
                    "m = 648,023,040) with the αβ algorithm at (k·n/m, γ)-privacy, print the "
                    "guarantee, the view's size and a few estimated counts next to the truth.")
    demo.add_argument("--split", choices=["train", "test"], default="train",
                      help="which Adult file to use (default: train = adult.data)")
    demo.add_argument("--k", type=float, default=10.0,
                      help="adversary prior bound d = k·n/m (default 10, as in the paper)")
    demo.add_argument("--gamma", type=float, default=0.2,
                      help="posterior bound γ (default 0.2, as in the paper)")
    demo.add_argument("--epsilon", type=float, default=0.05,
                      help="failure probability of the error bound (default 0.05)")
    demo.add_argument("--seed", type=int, default=None,
                      help="seed for a reproducible run (default: OS randomness)")
    demo.add_argument("--calibration", choices=CALIBRATIONS, default="exclusive",
                      help=CALIBRATION_HELP)
    demo.add_argument("--duplicates", choices=["set", "records"], default="set",
                      help="Adult repeats tuples: 'set' publishes distinct tuples with the "
                           "full guarantee (default), 'records' keeps every record (the "
                           "guarantee then leaves the repeated tuples out)")
    demo.add_argument("--out", metavar="PATH", default=None,
                      help="also write the view to this Parquet file")
    demo.set_defaults(run=_demo)

    pub = sub.add_parser(
        "publish", help="publish a table with the αβ algorithm",
        description="Publish a CSV or Parquet table with the αβ algorithm at (k·n/m, γ)-privacy "
                    "and write the view (rows plus everything needed to estimate) to Parquet.")
    pub.add_argument("input", help="the table: .csv, .csv.gz or .parquet")
    pub.add_argument("--out", required=True, metavar="PATH", help="the view's Parquet file")
    pub.add_argument("--columns", help="comma-separated columns to publish (default: all)")
    pub.add_argument("--schema", metavar="JSON",
                     help="schema as written by Schema.to_dict (default: inferred from the data)")
    pub.add_argument("--k", type=float, default=10.0, help="d = k·n/m (default 10)")
    pub.add_argument("--gamma", type=float, default=0.2, help="posterior bound γ (default 0.2)")
    pub.add_argument("--epsilon", type=float, default=0.05, help="ε of (ρ, ε) (default 0.05)")
    pub.add_argument("--seed", type=int, default=None,
                     help="seed for a reproducible run (default: OS randomness; use the "
                          "default for real releases)")
    pub.add_argument("--calibration", choices=CALIBRATIONS, default="exclusive",
                     help=CALIBRATION_HELP)
    pub.add_argument("--duplicates", choices=["set", "records"], default=None,
                     help="required when the table repeats a tuple: 'set' publishes distinct "
                          "tuples with the full guarantee, 'records' keeps every record (the "
                          "guarantee then leaves the repeated tuples out)")
    pub.set_defaults(run=_publish)

    est = sub.add_parser(
        "estimate", help="estimate counting queries from a published view",
        description="Estimate select count(*) from I where C from a view written by "
                    "`privpub publish` (or PublishedView.to_parquet). The file is re-validated "
                    "and streamed row group by row group, so views larger than memory work. "
                    "Quote attribute names with hyphens: \"marital-status\" = 'Divorced'.")
    est.add_argument("view", help="the view's Parquet file")
    est.add_argument("query", nargs="+", help="SQL WHERE conditions, e.g. \"age > 50\"")
    est.add_argument("--table", action="append", metavar="NAME=PATH",
                     help="register an auxiliary table for IN-subqueries (repeatable)")
    est.set_defaults(run=_estimate)

    att = sub.add_parser(
        "attack", help="audit a published view by reconstructing a binary secret column",
        description="Dinur–Nissim reconstruction against a published view: targets are "
                    "records of the original data whose other attributes (the "
                    "quasi-identifier) no other record shares; random subsets of them are "
                    "counted through the view's own estimator and decoded. Prints the "
                    "fraction of secret bits recovered with a 95%% interval and the "
                    "majority-guess baseline.",
        epilog="examples:\n"
               "  privpub publish adult.csv --out view.parquet --duplicates records\n"
               "  privpub attack view.parquet --data adult.csv --secret salary "
               "--secret-value '>50K' --seed 1\n"
               "  privpub attack view.parquet --data adult.csv --secret sex --decoder lp "
               "--targets 128",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    att.add_argument("view", help="the view's Parquet file")
    att.add_argument("--data", required=True, metavar="PATH",
                     help="the original table (.csv, .csv.gz or .parquet), to pick targets "
                          "and score the attack")
    att.add_argument("--secret", required=True, help="a binary column of the view")
    att.add_argument("--secret-value", default=None,
                     help="the value counted as bit 1 (default: the column's second value)")
    att.add_argument("--targets", type=int, default=256,
                     help="how many records to attack (default 256)")
    att.add_argument("--queries", type=int, default=None,
                     help="random subset queries (default n (ln n)^2 for n targets)")
    att.add_argument("--decoder", choices=["lstsq", "lp"], default="lstsq",
                     help="least squares (default) or Theorem 3's LP")
    att.add_argument("--seed", type=int, default=None,
                     help="seed for the targets and queries (default: OS randomness)")
    att.set_defaults(run=_attack)

    splu = sub.add_parser(
        "splu", help="SPLU-Gen: publish with randomised sensitive values, estimate counts",
        description="SPLU-Gen (small-sum privacy, large-sum utility).\n\nexamples:\n"
                    "  privpub splu publish adult.csv --gamma 5 --sensitive occupation "
                    "--out adult-splu.parquet\n"
                    "  privpub splu estimate adult-splu.parquet --value occupation=Sales\n"
                    "  privpub splu estimate adult-splu.parquet --where \"sex = 'Male'\" "
                    "--value occupation=Adm-clerical",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    splu_sub = splu.add_subparsers(dest="splu_command", metavar="ACTION", required=True)
    sp = splu_sub.add_parser("publish", help="publish a table with SPLU-Gen")
    sp.add_argument("input", help="the table: .csv, .csv.gz or .parquet")
    sp.add_argument("--out", required=True, metavar="PATH", help="the release's Parquet file")
    sp.add_argument("--gamma", type=int, required=True, help="decoy group size γ ≥ 2")
    sp.add_argument("--sensitive", required=True,
                    help="the sensitive attribute(s), comma-separated")
    sp.add_argument("--schema", metavar="JSON",
                    help="schema as written by Schema.to_dict (default: inferred from the data)")
    sp.add_argument("--seed", type=int, default=None,
                    help="seed for a reproducible run (default: OS randomness; use the "
                         "default for real releases)")
    sp.set_defaults(run=_splu_publish)
    se = splu_sub.add_parser("estimate", help="estimate a count from a SPLU-Gen release")
    se.add_argument("view", help="the release's Parquet file")
    se.add_argument("--where", default=None,
                    help="SQL WHERE text on non-sensitive attributes (default: all records)")
    se.add_argument("--value", action="append", metavar="ATTRIBUTE=VALUE",
                    help="a sensitive attribute's value (repeatable)")
    se.add_argument("--method", choices=["paper", "exact-rate", "partition"], default="paper",
                    help="reconstruction (see privpub.splu.reconstruction; default: paper)")
    se.set_defaults(run=_splu_estimate)

    exp = sub.add_parser(
        "experiments", help="reproduce a paper's figures and tables",
        description="Reproduce a paper's experiment and write its figures and a summary.\n\n"
                    + "\n".join(f"  {k}: {v}" for k, v in EXPERIMENTS.items())
                    + "\n\nexamples:\n  privpub experiments relationship --out rel --seed 1\n"
                      "  privpub experiments relationship --out rel --graphs ca-grqc --runs 200 "
                      "--privacy-epsilon 0.5 --gamma 0.1\n"
                      "  privpub experiments splu --out splu --seed 1 [--quick]",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    exp.add_argument("name", choices=sorted(EXPERIMENTS), help="which experiment")
    exp.add_argument("--out", metavar="DIR", required=True, help="directory for the outputs")
    exp.add_argument("--seed", type=int, default=None,
                     help="seed for a reproducible run (default: OS randomness)")
    exp.add_argument("--k", type=float, default=10.0, help="d = k·n/m (default 10)")
    exp.add_argument("--gamma", type=float, default=0.2, help="posterior bound γ (default 0.2)")
    exp.add_argument("--epsilon", type=float, default=0.05, help="ε of (ρ, ε) (default 0.05)")
    exp.add_argument("--privacy-epsilon", type=float, default=1.0,
                     help="relationship: ε of Algorithm 2.1 and of Laplace (default 1); γ is "
                          "--gamma")
    exp.add_argument("--runs", type=int, default=1000,
                     help="relationship: answers drawn per mechanism and query (default 1000)")
    exp.add_argument("--graphs", default="facebook,ca-grqc",
                     help="relationship: comma-separated embedded graphs (default both)")
    exp.add_argument("--quick", action="store_true",
                     help="reconstruction: n ∈ {32, 64}, 4 ratios, 8n queries; splu: 3,000 "
                          "Adult and 5,000 synthetic rows, γ ∈ {2, 5, 9}, one run (seconds)")
    exp.set_defaults(run=_experiments)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    from privpub.core.errors import PrivpubError

    try:
        return args.run(args)
    except PrivpubError as exc:
        print(f"privpub: error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"privpub: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
