"""`python -m workbench.registry`: one Schema Registry process (see `server.main`)."""

import sys

from workbench.registry.server import main

sys.exit(main())
