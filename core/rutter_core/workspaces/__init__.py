"""The workspace registry: IDs bound to resolved directories."""
