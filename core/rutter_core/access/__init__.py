"""Bearer tokens of the HTTP API (contract section 15): `model` (the documents), `repo` (the
only module touching `http_tokens`), `service` (create, list, revoke, authenticate)."""
