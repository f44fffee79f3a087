"""``python -m privpub``: the ``privpub`` command."""

import sys

from privpub.cli import main

sys.exit(main())
