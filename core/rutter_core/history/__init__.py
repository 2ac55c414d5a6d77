"""History search and read (contract section 12): an index of memories and thread content kept
in step with their writes, searched and read through signed, versioned handles."""
