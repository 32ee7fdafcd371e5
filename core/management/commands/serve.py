"""`manage.py serve`: the whole service in the foreground, as supervised child processes.

Children: the ASGI web server (API, MCP, console), a Celery worker, a Celery worker for the `webhooks` queue
(deliveries have their own lane), Celery beat, and in sandbox mode the
inbound SMTP listener. A child that exits on its own is started again after a pause that doubles with each exit
in a row (1 s, 2 s, 4 s ... at most 30 s; a child that ran for a minute starts again at 1 s), each logged; one that
exits within a minute of starting six times in a row is broken (a port in use, a bad setting), and serve then
stops everything and exits 1. SIGINT/SIGTERM stop all of them (SIGTERM, then SIGKILL after 10 s); each child is
also tied to this process with PR_SET_PDEATHSIG, so even a SIGKILL of `serve` leaves no orphans.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time

from django.conf import settings
from django.core.management.base import BaseCommand
from django.utils.module_loading import import_string

PR_SET_PDEATHSIG = 1
# Worker and beat log warnings and errors by default (periodic sweeps every few seconds would bury them);
# SERVE_TASK_LOG_LEVEL=INFO shows every task.
TASK_LOG_LEVEL = os.environ.get("SERVE_TASK_LOG_LEVEL", "WARNING")


RESTART_FIRST_DELAY = 1.0
RESTART_MAX_DELAY = 30.0
RESTART_STABLE_SECONDS = 60.0  # a child that ran this long before exiting starts again at the first delay
RESTART_GIVE_UP = 6  # exits in a row, each within RESTART_STABLE_SECONDS of its start: stop everything


def restart_delay(exits_in_a_row: int) -> float:
    """Pause before starting a child again after its n-th exit in a row (n >= 1)."""
    return min(RESTART_MAX_DELAY, RESTART_FIRST_DELAY * 2 ** (exits_in_a_row - 1))


def _describe_exit(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was killed by signal {-returncode}"
    return f"exited with {returncode}"


def _die_with_parent():  # runs in the child between fork and exec
    os.setpgrp()  # own process group: a terminal's Ctrl-C reaches serve, which stops children in order
    if sys.platform.startswith("linux"):
        try:
            # SIGKILL, not SIGTERM: this only fires when serve died without stopping its children (killed,
            # crashed), and a child in a warm shutdown (a Celery worker still starting, say) could outlive it
            # for long. Tasks are acked late, so a task cut here is delivered again.
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        except OSError:
            pass


# The web server's options (bench/llm_overhead.py starts the service with the same ones). uvicorn picks uvloop and
# httptools itself (both come with uvicorn[standard]).
# Keep-alive: uvicorn closes an idle client connection after 5 s by default, the same idle time after which httpx
# (and the openai client built on it) stops reusing one, so a busy client can send a request on a connection the
# server is closing at that moment and get a reset (httpx ReadError). The server keeps idle connections longer than
# the clients' pools do (75 s, as nginx does and load balancers expect of the server behind them), so the client
# closes first. WEB_KEEPALIVE_SECONDS sets it (the Procfile and Dockerfile pass 75 too).
WEB_KEEPALIVE_SECONDS = int(os.environ.get("WEB_KEEPALIVE_SECONDS", "75"))
WEB_BACKLOG = 4096  # bursts of new connections wait in the kernel's accept queue instead of being refused


def web_options() -> list[str]:
    return ["--lifespan", "on", "--timeout-graceful-shutdown", "5", "--timeout-keep-alive", str(WEB_KEEPALIVE_SECONDS),
            "--backlog", str(WEB_BACKLOG)]


# The project's entry points, named (core imports no app above it; config, which defines them, sits on top): the
# ASGI application uvicorn serves, the Celery app the workers and the scheduler load, and the function that makes
# the filesystem broker's folders before the first message.
ASGI_APP = "config.asgi:application"
CELERY_APP = "config"
BROKER_DIRS = "config.celery.ensure_broker_dirs"


def child_commands() -> dict[str, list[str]]:
    py = sys.executable
    manage = str(settings.BASE_DIR / "manage.py")
    cmds = {
        # X-Forwarded-For/-Proto are believed only from FORWARDED_ALLOW_IPS (default loopback): per-address rate
        # limits see the real client behind a trusted proxy, and a client cannot pick its own address.
        "web": [py, "-m", "uvicorn", ASGI_APP, "--host", settings.HOST, "--port", str(settings.PORT),
                *web_options(), "--proxy-headers", "--forwarded-allow-ips", settings.FORWARDED_ALLOW_IPS],
        "worker": [py, "-m", "celery", "-A", CELERY_APP, "worker", "--loglevel", TASK_LOG_LEVEL, "--pool", "threads",
                   "--concurrency", os.environ.get("WORKER_CONCURRENCY", "4"), "--without-gossip", "--without-mingle",
                   "--hostname", f"worker-{os.getpid()}@%h", "--queues", "celery"],
        "webhooks": [py, "-m", "celery", "-A", CELERY_APP, "worker", "--loglevel", TASK_LOG_LEVEL, "--pool", "threads",
                     "--concurrency", os.environ.get("WEBHOOK_WORKER_CONCURRENCY", "4"), "--without-gossip",
                     "--without-mingle", "--hostname", f"webhooks-{os.getpid()}@%h", "--queues", "webhooks"],
        "beat": [py, "-m", "celery", "-A", CELERY_APP, "beat", "--loglevel", TASK_LOG_LEVEL,
                 "--scheduler", "django_celery_beat.schedulers:DatabaseScheduler"],
    }
    if settings.SANDBOX and settings.SANDBOX_SMTP_PORT and _has_command("smtp_inbound"):
        cmds["smtp"] = [py, manage, "smtp_inbound"]
    return cmds


def _has_command(name: str) -> bool:
    from django.core.management import get_commands

    return name in get_commands()


def accepting(host: str, port: int) -> bool:
    """Whether a TCP connection to the web server's address is accepted now (0.0.0.0 / :: are asked on loopback)."""
    import socket

    target = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)
    try:
        with socket.create_connection((target, int(port)), timeout=0.5):
            return True
    except OSError:
        return False


class Command(BaseCommand):
    help = "Run the web server, worker(s), scheduler and sandbox SMTP listener in the foreground."

    def add_arguments(self, parser):
        parser.add_argument("--only", help="comma-separated subset of: web,worker,webhooks,beat,smtp")

    def handle(self, *args, **opts):
        import_string(BROKER_DIRS)()
        commands = child_commands()
        if opts.get("only"):
            wanted = {n.strip() for n in opts["only"].split(",")}
            commands = {k: v for k, v in commands.items() if k in wanted}
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        children: dict[str, subprocess.Popen] = {}
        started_at: dict[str, float] = {}
        exits_in_a_row: dict[str, int] = dict.fromkeys(commands, 0)
        restart_at: dict[str, float] = {}  # children waiting to be started again, and when
        stopping = False

        def stop(signum=None, frame=None):
            nonlocal stopping
            stopping = True

        def launch(name: str) -> None:
            children[name] = subprocess.Popen(commands[name], env=env, cwd=str(settings.BASE_DIR),
                                              preexec_fn=_die_with_parent)
            started_at[name] = time.monotonic()
            self.stdout.write(f"[serve] started {name} (pid {children[name].pid})")
            self.stdout.flush()

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        for name in commands:
            launch(name)
        # "listening" is printed once the web server accepts connections, not when its process was started
        waiting_for_web = "web" in children
        if not waiting_for_web:
            self.stdout.write("[serve] running (no web server in --only)")
            self.stdout.flush()
        exit_code = 0
        try:
            while not stopping:
                now = time.monotonic()
                for name, proc in children.items():
                    if name in restart_at or proc.poll() is None:
                        continue
                    ran = now - started_at[name]
                    exits_in_a_row[name] = 1 if ran >= RESTART_STABLE_SECONDS else exits_in_a_row[name] + 1
                    if exits_in_a_row[name] >= RESTART_GIVE_UP:
                        self.stderr.write(f"[serve] {name} {_describe_exit(proc.returncode)}, the "
                                          f"{exits_in_a_row[name]}th time in a row within "
                                          f"{RESTART_STABLE_SECONDS:.0f} s of starting; stopping everything")
                        exit_code = 1
                        stopping = True
                        break
                    delay = restart_delay(exits_in_a_row[name])
                    restart_at[name] = now + delay
                    self.stderr.write(f"[serve] {name} (pid {proc.pid}) {_describe_exit(proc.returncode)} after "
                                      f"{ran:.1f} s; starting it again in {delay:.0f} s")
                    self.stderr.flush()
                for name, when in list(restart_at.items()):
                    if not stopping and now >= when:
                        del restart_at[name]
                        launch(name)
                        if name == "web":
                            waiting_for_web = True
                if waiting_for_web and not stopping and "web" not in restart_at and accepting(settings.HOST,
                                                                                                 settings.PORT):
                    waiting_for_web = False
                    self.stdout.write(f"[serve] listening on {settings.BASE_URL}")
                    self.stdout.flush()
                time.sleep(0.05 if waiting_for_web else 0.2)
        finally:
            self._stop_all(children)
        if exit_code:
            sys.exit(exit_code)

    def _stop_all(self, children: dict[str, subprocess.Popen]) -> None:
        for proc in children.values():
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + 10
        for proc in children.values():
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()
        self.stdout.write("[serve] stopped")
