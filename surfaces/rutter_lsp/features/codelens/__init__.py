"""codelens."""
