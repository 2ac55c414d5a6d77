"""Explicit user and project memory: versioned, secret-refusing, physically deleted."""
