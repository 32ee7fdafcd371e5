"""The LLM hold is an upper bound (issue 15.5): a prompt written to be dense in tokens (CJK, emoji, random
characters: up to a token per byte) cannot use more than was held, so usage beyond the hold never goes
unbilled. Against the real fake upstream in `bytetok` mode, which reports a tokenizer's worst case."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from billing.models import CreditAccount, Hold
from billing.services import credits_debit
from core.money import format_credits
from llmproxy import metering
from tests.llmproxy.fake_upstream import worst_case_prompt_tokens

pytestmark = pytest.mark.usefixtures("models_file")
START = 300_000_000
DENSE = "漢字🙂" * 2_500  # 25,000 bytes: ~6,250 tokens by the old 4-bytes estimate, up to 25,000 in fact


def _chat(api, content, **extra):
    return api.post("/v1/llm/chat", {"model": "fake/bytetok", "messages": [{"role": "user", "content": content}],
                                     "max_tokens": 8, **extra})


def test_a_prompt_dense_in_tokens_is_charged_within_its_hold(api, workspace):
    r = _chat(api, DENSE)
    assert r.status_code == 200, r.content
    usage = r.json()["usage"]
    assert usage["prompt_tokens"] >= 25_000
    charged = usage["total_tokens"] * 1000  # 1 credit per 1k tokens
    hold = Hold.objects.get(request_id=r["X-Request-Id"])
    assert hold.captured_micros == charged and charged <= hold.amount_micros
    assert r.json()["service"]["credits_charged"] == format_credits(charged)


def test_usage_beyond_what_the_balance_covers_is_refused_up_front_not_unbilled(api, workspace, fake):
    """Before: the hold (~6.3 credits) fit a 10-credit balance, the provider counted ~25 credits of tokens, and
    10 were paid. Now the hold covers the worst case, so the call is 402 before the provider is called."""
    credits_debit(workspace=workspace, amount=START - 10_000_000, kind="adjustment")
    r = _chat(api, DENSE)
    assert r.status_code == 402 and r.json()["error"]["code"] == "insufficient_credits"
    assert fake.requests == []
    assert CreditAccount.objects.get(pk=workspace.pk).balance_micros == 10_000_000


_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=60)
_part = st.one_of(st.builds(lambda t: {"type": "text", "text": t}, _text),
                  st.just({"type": "image_url", "image_url": {"url": "https://img.example/a.png"}}))
_message = st.builds(lambda role, content: {"role": role, "content": content},
                     st.sampled_from(["system", "user", "assistant"]),
                     st.one_of(_text, st.lists(_part, min_size=1, max_size=4)))


@given(messages=st.lists(_message, min_size=1, max_size=6))
def test_the_prompt_bound_covers_the_worst_case_tokenizer(messages):
    body = {"model": "m", "messages": messages}
    images = sum(1 for m in messages if isinstance(m["content"], list)
                 for p in m["content"] if p["type"] != "text")
    worst = worst_case_prompt_tokens(body) + images * metering.REMOTE_PART_TOKENS
    assert metering.prompt_bound(body) >= worst
    assert metering.hold_tokens({**body, "max_tokens": 5, "n": 2}) == metering.prompt_bound(
        {**body, "max_tokens": 5, "n": 2}) + 10
