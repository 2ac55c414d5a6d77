"""Agent profiles: what each coding agent would load for a file, and where it would cut it."""
