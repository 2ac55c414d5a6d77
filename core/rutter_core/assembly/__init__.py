"""Context assembly and its audit (contract section 13): what an agent is given for a run, in
authority order and within a token budget, and the append-only record of every assembly."""
