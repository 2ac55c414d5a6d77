"""Project-instruction discovery: the walk, the one no-follow file reader, ignore rules,
redaction, the fingerprint, snapshots and their layout (slots, levels, precedence)."""
