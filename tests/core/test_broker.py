"""The embedded default's `filesystem://` broker: a message file in the queue is always whole, and a message that
cannot be decoded is skipped and logged instead of ending the worker."""

import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from queue import Empty

import pytest
from kombu import Connection
from kombu.utils.json import register_type

ROOT = Path(__file__).resolve().parents[2]


def _options(base: Path) -> dict:
    return {"data_folder_in": str(base / "queue"), "data_folder_out": str(base / "queue"),
            "processed_folder": str(base / "processed"), "control_folder": str(base / "control"),
            "tmp_folder": str(base / "tmp"), "store_processed": False}


@pytest.fixture
def channel(tmp_path):
    import config.celery  # noqa: F401 - registers the transport for filesystem://

    options = _options(tmp_path / "broker")
    for key in ("data_folder_in", "processed_folder", "control_folder", "tmp_folder"):
        os.makedirs(options[key], exist_ok=True)
    with Connection("filesystem://localhost/", transport_options=options) as conn:
        yield conn.default_channel


class _Slow:
    """A value whose serialization waits until the test lets it go: the moment a writer is mid-message."""

    entered = threading.Event()
    release = threading.Event()


def _encode_slow(_value):
    _Slow.entered.set()
    assert _Slow.release.wait(30)
    return "slow"


register_type(_Slow, "test-slow", _encode_slow, lambda _v: "slow")


def test_filesystem_url_uses_the_whole_file_transport(channel):
    from config.broker import Channel

    assert isinstance(channel, Channel)


def test_a_message_being_written_is_not_in_the_queue_until_whole(channel):
    """kombu's own transport creates the queue file and then serializes into it: a consumer between the two read
    an empty file and died on the JSON error (kombu issue 1551). Here nothing is in the queue until it is whole."""
    _Slow.entered.clear()
    _Slow.release.clear()
    writer = threading.Thread(target=channel._put, args=("q1", {"body": _Slow(), "n": 1}))
    writer.start()
    try:
        assert _Slow.entered.wait(30)
        assert [n for n in os.listdir(channel.data_folder_in) if n.endswith(".msg")] == []
        with pytest.raises(Empty):
            channel._get_decoded("q1")
    finally:
        _Slow.release.set()
        writer.join(30)
    assert channel._get_decoded("q1") == {"body": "slow", "n": 1}
    assert os.listdir(channel.tmp_folder) == []  # the temporary file became the message


def test_undecodable_messages_are_skipped_and_logged(channel, caplog):
    queue_dir = Path(channel.data_folder_in)
    # names that sort before any real message (kombu orders by the millisecond prefix)
    (queue_dir / "0_a.q2.msg").write_bytes(b"")  # the empty file the old writer could expose
    (queue_dir / "0_b.q2.msg").write_bytes(b'{"body": "trunc')  # half a message
    (queue_dir / "0_c.q2.msg").write_bytes(b"\xff\xfe not utf-8")
    (queue_dir / "0_d.q2.msg").write_bytes(b"[1, 2]")  # JSON, but not a kombu message
    channel._put("q2", {"body": "good", "n": 2})
    delivered = []
    with caplog.at_level(logging.ERROR, logger="config.broker"):
        channel._get_and_deliver("q2", lambda message, queue: delivered.append((message, queue)))
    assert delivered == [({"body": "good", "n": 2}, "q2")]
    assert len([r for r in caplog.records if "skipped a message of queue 'q2'" in r.getMessage()]) == 4
    assert [n for n in os.listdir(queue_dir) if n.endswith(".msg")] == []
    (queue_dir / "0_e.q2.msg").write_bytes(b"")
    assert channel.basic_get("q2") is None  # nothing decodable left: empty, not an exception


def _count_markers(data_dir: Path) -> int:
    return sum(1 for n in os.listdir(data_dir) if n.startswith("ping-w"))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inspects /proc")
def test_worker_survives_writers_under_load_and_loses_nothing(tmp_path):
    """Two processes enqueue tasks while a real Celery worker consumes them, and damaged files land in the queue
    meanwhile: the worker stays up, skips (and logs) the damaged files and runs every task exactly as sent."""
    data = tmp_path / "data"
    for folder in ("queue", "processed", "control", "tmp"):
        (data / "broker" / folder).mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(DATA_DIR=str(data), SANDBOX="1", PYTHONUNBUFFERED="1")
    log_path = tmp_path / "worker.log"
    with open(log_path, "ab") as log:
        worker = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config", "worker", "--loglevel", "WARNING", "--pool", "threads",
             "--concurrency", "4", "--without-gossip", "--without-mingle", "--hostname", f"load-{os.getpid()}@%h"],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    per_writer = 150
    script = ("from core.tasks import ping\n"
              "import sys\n"
              "prefix = sys.argv[1]\n"
              f"for i in range({per_writer}): ping.delay(f'w{{prefix}}{{i}}')\n")
    writers = []
    try:
        for prefix in ("a", "b"):
            writers.append(subprocess.Popen([sys.executable, "-c", "import django; django.setup()\n" + script, prefix],
                                            cwd=ROOT, env={**env, "DJANGO_SETTINGS_MODULE": "config.settings"}))
        queue_dir = data / "broker" / "queue"
        damaged = 0
        while any(w.poll() is None for w in writers) or damaged < 5:
            if damaged < 5:
                (queue_dir / f"{int(time.monotonic() * 1000)}_damaged{damaged}.celery.msg").write_bytes(b"")
                damaged += 1
            time.sleep(0.2)
        assert [w.wait(120) for w in writers] == [0, 0]
        deadline = time.monotonic() + 600  # a failsafe for a stalled worker, not a timing assumption
        while _count_markers(data) < 2 * per_writer:
            assert worker.poll() is None, log_path.read_text(errors="replace")
            assert time.monotonic() < deadline, f"{_count_markers(data)} of {2 * per_writer} tasks ran"
            time.sleep(0.2)
        assert worker.poll() is None, log_path.read_text(errors="replace")
        assert {n for n in os.listdir(data) if n.startswith("ping-w")} == \
            {f"ping-w{p}{i}" for p in "ab" for i in range(per_writer)}
        printed = log_path.read_text(errors="replace")
        assert printed.count("cannot be decoded") == 5, printed
        assert "JSONDecodeError" not in printed
    finally:
        for w in writers:
            if w.poll() is None:
                w.kill()
        worker.terminate()
        try:
            worker.wait(60)
        except subprocess.TimeoutExpired:
            worker.kill()
