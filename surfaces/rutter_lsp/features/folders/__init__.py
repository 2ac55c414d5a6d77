"""folders."""
