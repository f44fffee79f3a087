"""``privpub experiments NAME --output DIR``: the papers' figures and tables."""

from __future__ import annotations

import argparse
from typing import Any

from privpub.cli.common import (
    ExampleFormatter,
    add_force_argument,
    add_privacy_arguments,
    add_seed_argument,
)

EXPERIMENTS = {
    "audit": "both sides of the αβ paper's Theorem 2.6 on Adult: Dinur–Nissim audits "
             "(presence at prior d, salary inference) of releases as β shrinks to 0: "
             "audit.png, summary.json (--quick: fewer audit rounds)",
    "adult-alphabeta": "αβ vs FRAPP on Adult at (10n/m, 0.2)-privacy: Fig. 2, Fig. 3 "
                       "and summary.json (αβ paper, Sec. 5)",
    "relationship": "Algorithm 2.1 vs Laplace (global sensitivity) on the facebook and "
                    "ca-GrQc graphs for Figure 1(c)'s queries: table1.md, relationship.json, "
                    "relationship.png (relationship-privacy paper, Table 1)",
    "reconstruction": "Dinur–Nissim: fraction of bits recovered against E/√n for "
                      "n ∈ {128, 256, 512, 1024}, per perturbation and decoder: "
                      "reconstruction.png and summary.json (--quick: a small version)",
    "multiview": "several αβ views of Adult (Algorithm 7, Sec. 4.4.1): exact worst-case "
                 "posteriors against v = 1..20 views for each calibration, measured on published "
                 "views, the error cost of calibrating for v views, and a presence audit of 5 "
                 "independent vs 5 calibrated views: posterior.png, cost.png, cost.md, "
                 "summary.json (--quick: sequences for v = 2, 5 only, 400 audit rounds)",
    "dp-yardstick": "αβ and FRAPP views calibrated from ε against OpenDP's discrete Laplace "
                    "marginals at the same ε (replace one tuple) on Adult, Fair and ANES 1996: "
                    "RMSE and median |error| of 90 1-, 2-, 3-attribute counts against ε: "
                    "yardstick.png, summary.json (needs privpub[yardstick]; --quick: 2 runs)",
    "splu": "SPLU on Adult and synthetic CENSUS-like data (occupation sensitive): small-count "
            "error against γ for SPLU-Gen, Anatomy, DBR, Laplace (Fig. 7/10), large counts by "
            "selectivity per estimator (Fig. 8/9), two sensitive attributes (Fig. 12), "
            "publish time against N: PNGs, summary.json, summary.md (--quick: small)",
}


def _experiments(args: argparse.Namespace) -> int:
    import json

    force = args.force
    if args.name == "relationship":
        from privpub.experiments import relationship as module

        summary = module.run(args.output, seed=args.seed, epsilon=args.privacy_epsilon,
                             gamma=args.gamma, runs=args.runs,
                             graphs=tuple(args.graphs.split(",")), overwrite=force)
        print(module.markdown(summary))
    elif args.name == "audit":
        from privpub.experiments import audit as module

        summary = module.run(args.output, seed=args.seed, quick=args.quick, overwrite=force)
        print(module.markdown(summary))
    elif args.name == "reconstruction":
        from privpub.experiments import reconstruction as module

        summary = module.run(args.output, seed=args.seed, quick=args.quick, overwrite=force)
        print(json.dumps({"threshold (largest E/sqrt(n) with >= 90% recovered, lstsq)":
                          summary["threshold"]}, indent=2))
    elif args.name == "multiview":
        from privpub.experiments import multiview as module

        summary = module.run(args.output, seed=args.seed, quick=args.quick, overwrite=force)
        print(module.markdown(summary))
    elif args.name == "dp-yardstick":
        from privpub.experiments import dp_yardstick as module

        summary = module.run(args.output, seed=args.seed, quick=args.quick, overwrite=force)
        print(module.markdown(summary))
    elif args.name == "splu":
        from privpub.experiments import splu as module

        summary = module.run(args.output, seed=args.seed, quick=args.quick, overwrite=force)
        print(module.markdown(summary))
    else:
        from privpub.experiments import adult_alphabeta as module

        summary = module.run(args.output, seed=args.seed, k=args.k, gamma=args.gamma,
                             failure_probability=args.failure_probability, overwrite=force)
        print(json.dumps(summary, indent=2))
    print("wrote " + ", ".join(f"{args.output}/{name}" for name in module.OUTPUTS))
    return 0


def add_parser(sub: Any) -> None:
    exp = sub.add_parser(
        "experiments", help="reproduce a paper's figures and tables",
        description="Reproduce a paper's experiment and write its figures and a summary.\n\n"
                    + "\n".join(f"  {k}: {v}" for k, v in EXPERIMENTS.items())
                    + "\n\nexamples:\n  privpub experiments relationship --output rel --seed 1\n"
                      "  privpub experiments relationship --output rel --graphs ca-grqc --runs 200 "
                      "--privacy-epsilon 0.5 --gamma 0.1\n"
                      "  privpub experiments splu --output splu --seed 1 --quick\n"
                      "  privpub experiments splu --output splu --seed 2 --quick --force\n"
                      "  privpub experiments audit --output audit --seed 1\n"
                      "  privpub experiments multiview --output multiview --seed 1\n"
                      "  privpub experiments dp-yardstick --output yardstick --seed 1 --quick",
        formatter_class=ExampleFormatter)
    exp.add_argument("name", choices=sorted(EXPERIMENTS), help="which experiment")
    exp.add_argument("--output", "--out", dest="output", metavar="DIR", required=True,
                     help="directory for the outputs (created if needed; files already there "
                          "are refused before the run unless --force)")
    add_force_argument(exp, "the output files")
    add_seed_argument(exp)
    add_privacy_arguments(exp)
    exp.add_argument("--privacy-epsilon", type=float, default=1.0,
                     help="relationship: ε of Algorithm 2.1 and of Laplace (default 1); γ is "
                          "--gamma")
    exp.add_argument("--runs", type=int, default=1000,
                     help="relationship: answers drawn per mechanism and query (default 1000)")
    exp.add_argument("--graphs", default="facebook,ca-grqc",
                     help="relationship: comma-separated embedded graphs (default both)")
    exp.add_argument("--quick", action="store_true",
                     help="reconstruction: n ∈ {32, 64}, 4 ratios, 8n queries; splu: 3,000 "
                          "Adult and 5,000 synthetic rows, γ ∈ {2, 5, 9}, one run (seconds); "
                          "audit: 400 presence rounds per release; multiview: sequences "
                          "for v = 2, 5 only, 400 audit rounds; dp-yardstick: 2 runs per cell, αβ "
                          "views above 2M rows drawn from their exact distribution")
    exp.set_defaults(run=_experiments)
