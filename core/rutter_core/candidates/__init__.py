"""Experience candidates: what a finished task's notes offer for project memory, reviewed by a
person (docs/reference/memory.md)."""
