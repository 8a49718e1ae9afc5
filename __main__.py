"""``python -m ldpsim`` is the ``ldpsim`` command."""

import sys

from ldpsim.scenarios.cli import main

sys.exit(main())
