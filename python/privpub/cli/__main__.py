"""``python -m privpub.cli``."""

import sys

from privpub.cli import console

sys.exit(console())
