"""The LLM stage (on whenever a live model is configured) against a local OpenAI-compatible upstream that
answers with recorded chat-completion bodies (the response shape of the public chat completions API): label
mapping, the JSON answer, fallbacks to the local model (errors, unusable answers, timeouts), cost."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from replies import services
from tests.replies.conftest import corpus, reply_bytes

pytestmark = pytest.mark.django_db


def completion(content: str) -> dict:
    return {"id": "chatcmpl-rec1", "object": "chat.completion", "created": 1763719200, "model": "cls-mini",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "logprobs": None,
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 142, "completion_tokens": 2, "total_tokens": 144}}


def verdict(label, language="en", confidence=0.9) -> str:
    return json.dumps({"label": label, "language": language, "confidence": confidence})


class Upstream:
    def __init__(self):
        self.requests: list[dict] = []
        self.answer: tuple[int, bytes] = (200, json.dumps(completion(verdict("interested"))).encode())
        self.hold = threading.Event()  # when `stall` is set, the upstream answers only once this is set
        self.stall = False
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                upstream.requests.append({"path": self.path, "auth": self.headers.get("Authorization"),
                                          "body": json.loads(self.rfile.read(length))})
                if upstream.stall:
                    upstream.hold.wait(30)
                status, body = upstream.answer
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self):
        self.hold.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def upstream(settings, tmp_path, monkeypatch):
    up = Upstream()
    models = tmp_path / "models.json"
    models.write_text(json.dumps([
        {"id": "ops/classifier", "upstream_base_url": up.base_url, "upstream_model": "cls-mini",
         "api_key_env": "REPLIES_TEST_LLM_KEY", "credits_per_1k_tokens": "0.1"},
        {"id": "vendor_b/model_mini", "upstream_base_url": "sandbox://echo", "upstream_model": "model_mini",
         "api_key_env": "", "credits_per_1k_tokens": "0.1"},
    ]))
    monkeypatch.setenv("REPLIES_TEST_LLM_KEY", "sk-operator")
    settings.LLM_MODELS_FILE = str(models)
    settings.REPLIES_LLM_MODEL = "auto"
    yield up
    up.close()


def classify(world, raw):
    stored = services.inbound_store(mailbox=world.mailbox, raw=raw, source="smtp")
    inbound = services.inbound_classify(inbound_id=stored.inbound.pk)
    return inbound, inbound.reply


def test_sandbox_install_never_calls_a_model(world, settings):
    """The default is `auto`; the shipped allowlist holds only sandbox echo models, so the local model decides."""
    assert settings.REPLIES_LLM_MODEL == "auto"
    inbound, reply = classify(world, reply_bytes(in_reply_to="<msg-0@outreach-sbx.test>", body="Who are you?"))
    assert reply.classification == "other" and inbound.rule == "model"
    assert "llm" not in inbound.detail


def test_off_turns_the_stage_off(world, upstream, settings):
    settings.REPLIES_LLM_MODEL = "off"
    inbound, _ = classify(world, reply_bytes(in_reply_to="<msg-0@outreach-sbx.test>", body="Who are you?"))
    assert inbound.rule == "model" and upstream.requests == []


def test_model_label_wins_for_a_persons_words(world, upstream):
    inbound, reply = classify(world, reply_bytes(in_reply_to="<msg-0@outreach-sbx.test>",
                                                 body="Ok. What would the onboarding look like for 40 reps?"))
    assert (reply.classification, inbound.rule) == ("interested", "llm")
    assert inbound.detail["llm"] == {"model": "ops/classifier", "label": "interested", "local_label": "interested",
                                     "confidence": 0.9, "tokens": 144}
    (req,) = upstream.requests
    assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer sk-operator"
    body = req["body"]
    assert body["model"] == "cls-mini" and body["temperature"] == 0
    system = body["messages"][0]["content"]
    assert body["messages"][0]["role"] == "system" and "not_interested" in system
    assert '"label"' in system and '"language"' in system and '"confidence"' in system  # JSON answer
    assert "GDPR" in system and "colleague" in system  # the labelling rules of docs/replies.md
    user = body["messages"][1]["content"]
    assert "onboarding look like for 40 reps" in user and "Would you be interested" not in user  # quote stripped


def test_operator_pays_not_the_customer(world, upstream, workspace):
    from billing.services import account_get

    before = account_get(workspace=workspace).available_micros
    classify(world, reply_bytes(in_reply_to="<msg-0@outreach-sbx.test>", body="Hmm, tell me more."))
    assert len(upstream.requests) == 1
    assert account_get(workspace=workspace).available_micros == before


@pytest.mark.parametrize("answer,label,language", [
    (verdict("not_interested", "de", 0.8), "not_interested", "de"),
    (verdict("Unsubscribe", "fr"), "unsubscribe", "fr"),
    (verdict("other", None, None), "other", None),
    ('```json\n{"label": "not-interested", "language": "EN", "confidence": 1}\n```', "not_interested", "en"),
    (verdict("interested", "english", 7), "interested", None),  # unusable language / confidence dropped
])
def test_label_mapping(world, upstream, answer, label, language):
    upstream.answer = (200, json.dumps(completion(answer)).encode())
    inbound, reply = classify(world, reply_bytes(in_reply_to="<msg-0@outreach-sbx.test>", body="Hmm, tell me more."))
    assert (reply.classification, inbound.rule, inbound.detail["language"]) == (label, "llm", language or "en")


def test_unsubscribe_from_the_model_sets_the_suppression_reason(world, upstream):
    """The suppression reason follows the final label: an unsubscribe the LLM found is `unsubscribed`."""
    from campaigns.models import Suppression

    upstream.answer = (200, json.dumps(completion(verdict("unsubscribe"))).encode())
    inbound, reply = classify(world, reply_bytes(in_reply_to="<msg-0@outreach-sbx.test>",
                                                 body="I would rather you did not write again, thank you."))
    assert reply.classification == "unsubscribe"
    assert inbound.detail["reason"] == "unsubscribed"
    assert set(Suppression.objects.filter(email__in=inbound.detail["suppressed"]).values_list("reason", flat=True)) \
        == {"unsubscribed"}


@pytest.mark.parametrize("status,body", [
    (200, json.dumps(completion("Sure! I think this reply is interested.")).encode()),
    (200, json.dumps(completion("")).encode()),
    (200, json.dumps(completion(verdict("maybe"))).encode()),
    (200, json.dumps(completion('{"label": ["interested"]}')).encode()),
    (500, b'{"error": {"message": "overloaded"}}'),
    (200, b"not json"),
])
def test_unusable_answers_keep_the_local_models_label(world, upstream, status, body):
    upstream.answer = (status, body)
    inbound, reply = classify(world, reply_bytes(in_reply_to="<msg-0@outreach-sbx.test>", body="No thanks."))
    assert (reply.classification, inbound.rule) == ("not_interested", "model")
    assert len(upstream.requests) == 1 and "llm" not in inbound.detail


def test_timeout_falls_back_to_the_local_model(world, upstream, settings):
    """The upstream never answers within the timeout (it waits for an event released at teardown)."""
    settings.REPLIES_LLM_TIMEOUT_SECONDS = 0.2
    upstream.stall = True
    inbound, reply = classify(world, reply_bytes(in_reply_to="<msg-0@outreach-sbx.test>", body="No thanks."))
    assert (reply.classification, inbound.rule) == ("not_interested", "model")
    assert len(upstream.requests) == 1


def test_structural_classes_and_unsubscribes_never_reach_the_model(world, upstream):
    classify(world, reply_bytes(in_reply_to="<msg-0@outreach-sbx.test>", body="Please remove me from your list."))
    classify(world, corpus("postfix-user-unknown"))
    classify(world, corpus("exchange-en"))
    classify(world, corpus("gmail-delay"))
    assert upstream.requests == []


def test_sandbox_echo_model_falls_back_to_rules(world, upstream, settings):
    settings.REPLIES_LLM_MODEL = "vendor_b/model_mini"
    inbound, reply = classify(world, reply_bytes(in_reply_to="<msg-0@outreach-sbx.test>", body="Not interested."))
    assert (reply.classification, inbound.rule) == ("not_interested", "model")


def test_unknown_model_id_is_ignored(world, upstream, settings):
    settings.REPLIES_LLM_MODEL = "nobody/nothing"
    inbound, reply = classify(world, reply_bytes(in_reply_to="<msg-0@outreach-sbx.test>", body="Interested!"))
    assert reply.classification == "interested" and upstream.requests == []
