"""A slow-loris HTTP peer on a real socket (127.0.0.1): it reads the request, then answers one byte at a time
with a pause between bytes, each pause far shorter than any per-read timeout, the whole answer far longer than
any total deadline. `finished` is set once an answer was trickled to its end, so a test asserts that its caller
gave up well before that (no wall-clock threshold)."""

from __future__ import annotations

import socket
import threading


class Trickler:
    def __init__(self, *, body: bytes = b'{"ok": true}' + b" " * 200, pause: float = 0.1, trickle_headers: bool = False,
                 content_type: str = "application/json"):
        self.body, self.pause, self.trickle_headers = body, pause, trickle_headers
        self.content_type = content_type
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.stopped = threading.Event()
        self.finished = threading.Event()  # an answer was trickled to its last byte
        self.connections = 0
        self.requests = 0
        self._requested = threading.Condition()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket):
        try:
            conn.settimeout(30)
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            # read the request's body too, as a real server does: closing with unread bytes in the socket would
            # reset the connection under the client (a failed delivery that a loaded machine makes likely)
            head_end = data.index(b"\r\n\r\n") + 4
            length = 0
            for line in data[:head_end].split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip() or 0)
            while len(data) - head_end < length:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            with self._requested:
                self.requests += 1
                self._requested.notify_all()
            head = (f"HTTP/1.1 200 OK\r\nContent-Type: {self.content_type}\r\n"
                    f"Content-Length: {len(self.body)}\r\nConnection: close\r\n\r\n").encode()
            if self.trickle_headers:
                payload = head + self.body
            else:
                conn.sendall(head)
                payload = self.body
            for i in range(len(payload)):
                if self.stopped.wait(self.pause):
                    return
                conn.sendall(payload[i:i + 1])
            self.finished.set()
        except OSError:
            return
        finally:
            conn.close()

    def wait_requests(self, n: int, timeout: float = 30) -> bool:
        with self._requested:
            return self._requested.wait_for(lambda: self.requests >= n, timeout)

    def close(self):
        self.stopped.set()
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
