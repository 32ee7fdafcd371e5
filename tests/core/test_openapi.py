import json
import re

from core.verbs import product_verbs


def test_openapi_is_json_and_documents_every_verb(client, settings):
    settings.ROOT_URLCONF = "config.urls"  # the product's routes, without the test-only verbs
    r = client.get("/openapi.json")
    assert r.status_code == 200 and r["Content-Type"].split(";")[0].endswith("json")
    spec = json.loads(r.content)
    assert spec["openapi"].startswith("3.")
    ops = {op["operationId"]: (path, method, op) for path, item in spec["paths"].items() for method, op in item.items()}
    for verb in product_verbs():
        if not verb.rest_route:
            continue
        assert verb.name in ops, f"{verb.name} missing from /openapi.json"
        path, method, op = ops[verb.name]
        assert method == verb.method.lower()
        assert "200" in op["responses"] and "401" in op["responses"] and "500" in op["responses"]
        if verb.method == "POST":
            path_params = set(re.findall(r"<(?:\w+:)?(\w+)>", verb.path))
            takes_body = not (path_params and set(verb.input().fields) <= path_params)
            assert ("requestBody" in op) == takes_body, verb.name  # the id in the path is no body
        if verb.scope:
            assert "403" in op["responses"]
    assert not any("test_" in p for p in spec["paths"])  # test-only verbs are never published


def test_error_envelope_schema(client):
    spec = json.loads(client.get("/openapi.json").content)
    usage = spec["paths"]["/v1/usage"]["get"]
    ref = usage["responses"]["401"]["content"]["application/json"]["schema"]["$ref"]
    assert ref.endswith("/Error")
    assert "error" in spec["components"]["schemas"]["Error"]["properties"]


def test_docs_page(client):
    r = client.get("/docs")
    assert r.status_code == 200 and b"openapi.json" in r.content


def test_health(client, db):
    assert client.get("/healthz").json() == {"status": "ok"}
    r = client.get("/readyz")
    assert r.status_code == 200 and r.json()["checks"]["database"] == "ok"


def test_docs_pages_load_swagger_ui_and_redoc_from_this_server(client, settings):
    """/docs works offline: every script and stylesheet the pages load is served by this service (no CDN), and
    each of them answers 200 (issue 14.3)."""
    import re

    settings.ROOT_URLCONF = "config.urls"
    for page in ("/docs", "/docs/redoc"):
        html = client.get(page).content.decode()
        assets = re.findall(r'(?:src|href)="([^"]+\.(?:js|css|png))"', html)
        assert assets, page
        for url in assets:
            assert url.startswith("/static/"), f"{page} loads {url} from outside this server"
            assert client.get(url).status_code == 200, url
        assert "cdn.jsdelivr" not in html and "unpkg" not in html
