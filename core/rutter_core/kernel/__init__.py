"""What every area shares: the error hierarchy (codes and surface-neutral hints), IDs,
the clock, actors."""
