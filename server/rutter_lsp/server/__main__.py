"""`python -m rutter_lsp.server [serve] [options]`: the command editors were told to configure;
the same as `rutter-lsp`."""

import sys

from rutter_lsp.serve import main

sys.exit(main())
