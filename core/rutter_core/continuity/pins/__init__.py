"""Thread pins and pin proposals (docs/reference/pins.md): `model` (the documents), `repo` (the
only module touching their tables), `service` (pins) and `proposals` (proposing and answering)."""
