"""rutter_cli."""
