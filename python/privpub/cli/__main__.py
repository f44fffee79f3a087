"""``python -m privpub.cli``."""

import sys

from privpub.cli import main

sys.exit(main())
