"""``python -m privpub``: the ``privpub`` command."""

import sys

from privpub.cli import console

sys.exit(console())
