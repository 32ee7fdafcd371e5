"""The API layer above the domain apps: the one verb pipeline (`api.pipeline`), the REST door (`api.views`,
Django REST framework) and the fast ASGI door (`api.door`)."""
