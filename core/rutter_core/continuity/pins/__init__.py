"""Thread pins and pin proposals (contract section 11): `model` (the documents), `repo` (the
only module touching their tables), `service` (pins) and `proposals` (proposing and answering)."""
