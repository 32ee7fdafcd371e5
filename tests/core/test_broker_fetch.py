"""The embedded broker's fetch reads the queue folder once per batch, not once per message: draining a long
queue is not quadratic, other queues' messages and files taken by another consumer are skipped."""

import os
from queue import Empty

import pytest
from kombu import Connection


@pytest.fixture
def conn(tmp_path):
    import config  # noqa: F401 - registers the filesystem transport

    folders = {k: str(tmp_path / k) for k in ("queue", "processed", "control", "tmp")}
    for folder in folders.values():
        os.makedirs(folder, exist_ok=True)
    options = {"data_folder_in": folders["queue"], "data_folder_out": folders["queue"],
               "processed_folder": folders["processed"], "control_folder": folders["control"],
               "tmp_folder": folders["tmp"], "store_processed": False}
    with Connection("filesystem://localhost/", transport_options=options) as c:
        yield c


def test_draining_lists_the_folder_once_per_batch_in_order(conn, monkeypatch):
    channel = conn.default_channel
    for i in range(300):
        channel._put("celery", {"body": str(i)})
        channel._put("webhooks", {"body": f"w{i}"})
    listings = []
    real = os.listdir
    monkeypatch.setattr(os, "listdir", lambda path: listings.append(path) or real(path))
    got = [channel._get("celery")["body"] for _ in range(300)]
    assert sorted(got, key=int) == [str(i) for i in range(300)]  # each once, none of the other queue's
    assert len(listings) <= 2  # kombu's own fetch lists (and sorts) the whole folder for each message: 300
    with pytest.raises(Empty):
        channel._get("celery")
    assert channel._get("webhooks")["body"].startswith("w")


def test_a_message_taken_by_another_consumer_is_skipped(conn):
    channel = conn.default_channel
    for i in range(3):
        channel._put("celery", {"body": str(i)})
    import json

    first = channel._get("celery")["body"]  # the other two were listed with it
    folder = channel.data_folder_in
    taken = os.path.join(folder, sorted(os.listdir(folder))[0])
    with open(taken) as f:
        taken_body = json.load(f)["body"]
    os.remove(taken)  # another consumer took it
    last = channel._get("celery")["body"]
    assert {first, taken_body, last} == {"0", "1", "2"}
    with pytest.raises(Empty):
        channel._get("celery")
