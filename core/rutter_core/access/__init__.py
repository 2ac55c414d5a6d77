"""Bearer tokens of the HTTP API (docs/reference/surfaces.md): `model` (the documents), `repo` (the
only module touching `http_tokens`), `service` (create, list, revoke, authenticate)."""
