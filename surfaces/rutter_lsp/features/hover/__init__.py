"""hover."""
