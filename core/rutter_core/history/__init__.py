"""History search and read (docs/reference/history.md): an index of memories and thread content kept
in step with their writes, searched and read through signed, versioned handles."""
