"""The embedded default's task broker: kombu's `filesystem://` transport with whole-file writes.

kombu's own transport creates a message file in the queue folder and then writes into it, while a consumer lists
the folder, moves the file away and reads it without taking the writer's lock: a consumer that comes between
the two steps reads an empty or half-written file, and the JSON error it raises ends the Celery worker (kombu
issue 1551). Here a message is written whole under a temporary name in a sibling folder of the same file system
and then renamed into the queue folder, so a message file in the queue is always complete. A message that still
cannot be decoded (a file damaged on disk, a stray file in the folder) is logged and skipped: it has already been
moved out of the queue, so the consumer goes on with the next one instead of dying.

`config.celery` registers this transport for `filesystem://` URLs, so every process that imports the Celery app
(web, worker, beat, management commands) writes and reads the same way.
"""

from __future__ import annotations

import logging
import os
import tempfile
import uuid
from functools import cached_property
from queue import Empty
from time import monotonic

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps

log = logging.getLogger("config.broker")


class Channel(filesystem.Channel):
    @cached_property
    def tmp_folder(self) -> str:
        """Where a message is written before it is renamed into the queue: the `tmp_folder` transport option, by
        default `tmp` beside the queue folder (a rename is only atomic within one file system)."""
        folder = self.transport_options.get("tmp_folder") or os.path.join(
            os.path.dirname(os.path.abspath(self.data_folder_out)), "tmp")
        os.makedirs(folder, exist_ok=True)
        return folder

    def _queue_bind(self, exchange, routing_key, pattern, queue):
        """kombu's bind, one process at a time: kombu creates the exchange's table file and then writes it, so a
        second process binding in between (two web processes or writers enqueueing their first task together)
        read the empty file and its enqueue failed with a JSON error. A lock file beside the table serializes
        the binders."""
        self.control_folder.mkdir(exist_ok=True)
        table = self._exchange_file(exchange)  # (kombu's check that the name stays inside the control folder)
        with open(table.with_name(table.name + ".bind.lock"), "ab") as guard:
            filesystem.lock(guard, filesystem.LOCK_EX)
            try:
                return super()._queue_bind(exchange, routing_key, pattern, queue)
            finally:
                filesystem.unlock(guard)

    def _put(self, queue, payload, **kwargs):
        """Put `payload` onto `queue`: serialized first, written whole under a temporary name, then renamed into
        the queue folder under kombu's file name (`<ms>_<uuid>.<queue>.msg`, so the order is kombu's)."""
        data = str_to_bytes(dumps(payload))
        filename = f"{int(round(monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        target = os.path.join(self.data_folder_out, filename)
        tmp = None
        try:
            fd, tmp = tempfile.mkstemp(dir=self.tmp_folder, prefix=".", suffix=".part")
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, target)
            tmp = None
        except OSError as exc:
            raise ChannelError(f"Cannot add file {filename!r} to directory") from exc
        finally:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass

    def _get_decoded(self, queue):
        """The next message of `queue` that decodes to a message, skipping (and logging) any that does not.
        Each skipped file has already left the queue folder, so the loop ends."""
        while True:
            try:
                payload = self._get(queue)
            except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
                log.error("broker: skipped a message of queue %r that cannot be decoded (%s)", queue, exc)
                continue
            if not isinstance(payload, dict) or "body" not in payload:
                log.error("broker: skipped a message of queue %r that is not a kombu message (%s)", queue,
                          type(payload).__name__)
                continue
            return payload

    def _get_and_deliver(self, queue, callback):
        callback(self._get_decoded(queue), queue)

    def basic_get(self, queue, no_ack=False, **kwargs):
        try:
            message = self.Message(self._get_decoded(queue), channel=self)
        except Empty:
            return None
        if not no_ack:
            self.qos.append(message, message.delivery_tag)
        return message


class Transport(filesystem.Transport):
    Channel = Channel
