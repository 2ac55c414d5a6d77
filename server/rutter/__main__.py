import sys

from rutter_cli.main import main

sys.exit(main())
