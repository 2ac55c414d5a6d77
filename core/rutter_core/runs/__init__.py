"""Runs and their pinned instruction snapshots: create, inspect drift, confirm a refresh."""
