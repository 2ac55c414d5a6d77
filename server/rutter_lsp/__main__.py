import sys

from rutter_lsp.cli import main

sys.exit(main())
