"""Session continuity: threads, sessions, messages, notes, continuity nodes and pins."""
