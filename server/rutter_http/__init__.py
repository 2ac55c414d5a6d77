"""The HTTP API (docs/reference/surfaces.md): `rutter http --bind HOST:PORT` serves `/api/v1` with
its OpenAPI document. FastAPI and uvicorn; imported only by `rutter http` itself."""
