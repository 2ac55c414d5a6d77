"""`python -m rutter`: the command-line interface (package `rutter_cli`)."""
