"""`manage.py serve` as a user runs it: a fresh DATA_DIR, children up, health answers, and no orphans."""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def children_of(pid):
    kids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid == pid:
                kids.append(int(entry.name))
    return kids


def alive(pid):
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def get(url):
    with urllib.request.urlopen(url, timeout=5) as r:
        return r.status, json.loads(r.read())


def _backends():
    """Embedded default always; PostgreSQL + Redis too when the run has them (the CI's second pass)."""
    url = os.environ.get("DATABASE_URL", "")
    return ["embedded", "postgres+redis"] if url.startswith("postgres") and os.environ.get("REDIS_URL") else ["embedded"]


@pytest.fixture(params=_backends())
def instance(request, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    port = free_port()
    env.update(DATA_DIR=str(tmp_path / "data"), PORT=str(port), SANDBOX_SMTP_PORT="0", SANDBOX="1")
    dbname = None
    if request.param == "postgres+redis":
        import psycopg

        base = os.environ["DATABASE_URL"]
        dbname = f"serve_test_{os.getpid()}_{port}"
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{dbname}"')
        env["DATABASE_URL"] = base.rsplit("/", 1)[0] + "/" + dbname
        env["REDIS_URL"] = os.environ["REDIS_URL"].rsplit("/", 1)[0] + "/14"
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT, env=env, check=True, timeout=300)
    yield env, port
    if dbname:
        import psycopg

        with psycopg.connect(os.environ["DATABASE_URL"], autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')


def start(env):
    """`manage.py serve` with its output (and its children's) appended to a file, never a pipe: a pipe that the
    test does not drain fills up (64 KiB of access and task logs) and then blocks every child that logs, which
    looked like a web process hanging mid-test. `output(proc)` reads what it printed so far."""
    path = Path(env["DATA_DIR"]).parent / f"serve-{time.monotonic_ns()}.log"  # beside DATA_DIR, in tmp_path
    with open(path, "ab") as log:
        proc = subprocess.Popen([sys.executable, "manage.py", "serve"], cwd=ROOT, env=env, stdout=log,
                                stderr=subprocess.STDOUT)
    proc.log_path = path
    return proc


def output(proc) -> str:
    with open(proc.log_path, "rb") as fh:
        return fh.read().decode(errors="replace")


def wait_healthy(port, proc, deadline_s=90):
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        assert proc.poll() is None, output(proc)
        try:
            return get(f"http://127.0.0.1:{port}/healthz")
        except OSError:
            time.sleep(0.2)
    raise AssertionError("serve did not become healthy")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inspects /proc")
def test_serve_runs_every_child_and_sigterm_leaves_no_orphans(instance):
    env, port = instance
    proc = start(env)
    try:
        assert wait_healthy(port, proc) == (200, {"status": "ok"})
        status, ready = get(f"http://127.0.0.1:{port}/readyz")
        assert status == 200 and ready["checks"] == {"database": "ok", "broker": "ok", "configuration": "ok"}
        kids = children_of(proc.pid)
        assert len(kids) == 4  # web, worker, the webhooks worker, beat
        # The worker consumes from the broker (filesystem:// or Redis): enqueue from another process.
        token = f"t{port}"
        subprocess.run([sys.executable, "manage.py", "shell", "-c", f"from core.tasks import ping; ping.delay({token!r})"],
                       cwd=ROOT, env=env, check=True, timeout=120)
        marker = Path(env["DATA_DIR"]) / f"ping-{token}"
        for _ in range(600):
            if marker.exists():
                break
            time.sleep(0.1)
        assert marker.read_text() == "pong"
        descendants = kids + [g for k in kids for g in children_of(k)]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
        for pid in descendants:
            for _ in range(100):
                if not alive(pid):
                    break
                time.sleep(0.1)
            assert not alive(pid), f"orphan {pid}"
    finally:
        if proc.poll() is None:
            proc.kill()


def test_listening_is_printed_only_once_the_port_accepts(instance):
    """Issue 14.7: the line a user (or a script) waits for means the server can be called at once."""
    env, port = instance
    proc = start(env)
    try:
        deadline = time.monotonic() + 120
        while "listening on" not in (printed := output(proc)):
            assert proc.poll() is None, f"serve ended without printing listening: {printed}"
            assert time.monotonic() < deadline, f"no listening line: {printed}"
            time.sleep(0.05)
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            pass  # accepted: no ConnectionRefusedError
        assert get(f"http://127.0.0.1:{port}/healthz")[0] == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux-only")
def test_children_die_even_if_serve_is_killed(instance):
    env, port = instance
    proc = start(env)
    try:
        wait_healthy(port, proc)
        kids = children_of(proc.pid)
        proc.kill()
        proc.wait(timeout=10)
        for pid in kids:
            for _ in range(200):
                if not alive(pid):
                    break
                time.sleep(0.1)
            assert not alive(pid), f"orphan {pid}"
    finally:
        if proc.poll() is None:
            proc.kill()


def _child_named(serve_pid, name):
    """The pid of serve's child running `name` (web: uvicorn, worker / beat: celery)."""
    marker = {"web": "uvicorn", "worker": " --hostname worker-", "beat": " beat "}[name]
    for pid in children_of(serve_pid):
        try:
            cmdline = " " + Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode() + " "
        except OSError:
            continue
        if marker in cmdline and alive(pid):
            return pid
    return None


def _wait_for(predicate, what, proc, deadline_s=120):
    deadline = time.monotonic() + deadline_s  # a failsafe for a stuck process, not a timing assumption
    while not (value := predicate()):
        assert proc.poll() is None, f"serve ended while waiting for {what}: {output(proc)}"
        assert time.monotonic() < deadline, f"{what}: {output(proc)}"
        time.sleep(0.1)
    return value


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inspects /proc")
def test_a_child_that_dies_is_started_again_and_sigterm_still_stops_all(instance):
    """A worker that crashes (here: SIGKILL) no longer takes the web server, beat and the listener down with it:
    serve logs the exit, starts the child again after a pause, and the new worker runs tasks. The web server too.
    SIGTERM afterwards still stops every child, the restarted ones included."""
    env, port = instance
    proc = start(env)
    try:
        wait_healthy(port, proc)
        first_worker = _wait_for(lambda: _child_named(proc.pid, "worker"), "a worker", proc)
        os.kill(first_worker, signal.SIGKILL)
        second_worker = _wait_for(lambda: (pid := _child_named(proc.pid, "worker")) != first_worker and pid,
                                  "a new worker", proc)
        # serve prints the line after the child exists, so /proc can show the pid first: wait for the line
        _wait_for(lambda: f"[serve] started worker (pid {second_worker})" in output(proc), "the restart logged", proc)
        printed = output(proc)
        assert f"[serve] worker (pid {first_worker}) was killed by SIGKILL" in printed
        assert "starting it again in 1 s" in printed
        assert "stopping everything" not in printed

        token = f"r{port}"  # the new worker consumes
        subprocess.run([sys.executable, "manage.py", "shell", "-c", f"from core.tasks import ping; ping.delay({token!r})"],
                       cwd=ROOT, env=env, check=True, timeout=120)
        marker = Path(env["DATA_DIR"]) / f"ping-{token}"
        _wait_for(marker.exists, "the restarted worker to run a task", proc, deadline_s=300)

        first_web = _child_named(proc.pid, "web")
        os.kill(first_web, signal.SIGKILL)
        _wait_for(lambda: (pid := _child_named(proc.pid, "web")) != first_web and pid, "a new web server", proc)
        _wait_for(lambda: output(proc).count("listening on") == 2, "listening again", proc)
        assert get(f"http://127.0.0.1:{port}/healthz") == (200, {"status": "ok"})

        kids = children_of(proc.pid)
        descendants = kids + [g for k in kids for g in children_of(k)]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
        for pid in descendants:
            for _ in range(100):
                if not alive(pid):
                    break
                time.sleep(0.1)
            assert not alive(pid), f"orphan {pid}"
    finally:
        if proc.poll() is None:
            proc.kill()


def test_restart_pause_doubles_and_is_capped():
    from core.management.commands.serve import restart_delay

    assert [restart_delay(n) for n in range(1, 8)] == [1, 2, 4, 8, 16, 30, 30]


def test_a_child_that_cannot_start_stops_serve_after_six_tries(instance):
    """A web server that cannot listen (the port is taken) is not retried forever: after six exits in a row, each
    soon after its start, serve says so and exits 1."""
    env, port = instance
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen()
        proc = subprocess.Popen([sys.executable, "manage.py", "serve", "--only", "web"], cwd=ROOT, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        printed, _ = proc.communicate(timeout=300)
    printed = printed.decode(errors="replace")
    assert proc.returncode == 1, printed
    assert [f"starting it again in {s} s" in printed for s in (1, 2, 4, 8, 16)] == [True] * 5, printed
    assert re.search(r"web exited with \d+, the 6th time in a row within 60 s of starting; stopping everything",
                     printed), printed
