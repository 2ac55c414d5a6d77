"""Context assembly and its audit (docs/reference/assembly.md): what an agent is given for a run, in
authority order and within a token budget, and the append-only record of every assembly."""
