"""The API layer above the domain apps: the one money path every door shares (`api.pipeline`: admit, settle; with
`api.early` and `api.dbwork`), the REST adapter (`api.rest`) under Django REST framework (`api.views`) or the fast
ASGI door (`api.door`)."""
