"""``privpub keygen``: an Ed25519 key pair for signing releases."""

from __future__ import annotations

import argparse
from typing import Any

from privpub.cli.common import ExampleFormatter

EXAMPLES = """examples:
  privpub keygen --output steward.key
  privpub keygen --output steward.key --comment "census 2026 releases"
"""


def add_parser(sub: Any) -> None:
    gen = sub.add_parser(
        "keygen", help="make an Ed25519 key pair for signing releases",
        description="Write a new Ed25519 key pair: the private key to --output (OpenSSH's "
                    "format, readable by its owner only) and the public key beside it as NAME.pub "
                    "(an OpenSSH line, as ssh-keygen writes; a key from `ssh-keygen -t "
                    "ed25519` works as well). An existing key is never replaced. Keep the "
                    "private key to yourself; give the public key to those who check your "
                    "releases.\n\n" + EXAMPLES,
        formatter_class=ExampleFormatter)
    gen.add_argument("--output", required=True, metavar="NAME.key",
                     help="the private key's file (must end in .key; NAME.pub is written "
                          "beside it)")
    gen.add_argument("--comment", default="privpub",
                     help="the public key line's comment (default: privpub)")
    gen.set_defaults(run=_keygen)


def _keygen(args: argparse.Namespace) -> int:
    from privpub.core.signing import fingerprint, generate_key_pair, public_key_path

    public = generate_key_pair(args.output, comment=args.comment)
    print(f"wrote {args.output} (private: keep it) and {public_key_path(args.output)} (public)")
    print(f"fingerprint {fingerprint(public)}")
    return 0
