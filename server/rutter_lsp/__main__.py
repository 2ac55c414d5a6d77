"""`python -m rutter_lsp [serve] [options]`: the language server (the CLI is `python -m rutter`)."""

import sys

from rutter_lsp.serve import main

sys.exit(main())
