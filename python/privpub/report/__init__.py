"""Release cards: ``release.report(data=None, audit=False)`` and ``privpub report``.

The card draws on every layer (guarantees, estimates, planning, audits), so
it sits at the top beside the command line; ``privpub.core.release`` reaches
it through :func:`~privpub.core.release.register_card_builder`, which this
package calls on import (``import privpub`` imports it). Importing it loads
no plotting library: matplotlib is imported when a card is drawn.
"""

from privpub.core.release import register_card_builder
from privpub.report.card import Card, build

register_card_builder(build)

__all__ = ["Card", "build"]
