"""The embedded broker's fetch, not proportional to the queue: kombu's `filesystem://` transport lists and sorts
the whole queue folder for every message it takes (`Channel._get`), so draining n messages reads the folder n
times (36,000 waiting messages drained at about 4 a second). Here one listing is kept, sorted and split by queue,
and messages are taken from it in order until it runs out; only then is the folder listed again. Messages that
arrive meanwhile have later names (kombu names files `<ms>_<uuid>.<queue>.msg`), so kombu's order (by the
millisecond) is kept. A file
another consumer took first is skipped when its move fails, as kombu's own fetch does.

`transport_over` builds the transport over whichever `filesystem` transport is registered (kombu's own, or one
that changes how messages are written), changing only the fetch; `config/__init__.py` registers it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections import deque
from queue import Empty

from kombu.exceptions import ChannelError
from kombu.transport import TRANSPORT_ALIASES
from kombu.utils.encoding import bytes_to_str
from kombu.utils.imports import symbol_by_name
from kombu.utils.json import loads


class ListedFetch:
    """Channel mixin: `_get` serves messages from one sorted listing of the folder per batch."""

    _listed: dict[str, deque] | None = None

    def _relist(self) -> None:
        listed: dict[str, deque] = {}
        for filename in sorted(os.listdir(self.data_folder_in)):
            queue = filename.partition(".")[2]
            if queue.endswith(".msg"):
                listed.setdefault(queue[:-4], deque()).append(filename)
        self._listed = listed

    def _get(self, queue):
        """The next message of `queue` (kombu's `_get`, with the folder listed once per batch)."""
        pending = (self._listed or {}).get(queue)
        if not pending:
            self._relist()
            pending = self._listed.get(queue)
        processed_folder = self.processed_folder if self.store_processed else tempfile.gettempdir()
        while pending:
            filename = pending.popleft()
            try:
                shutil.move(os.path.join(self.data_folder_in, filename), processed_folder)
            except OSError:
                continue  # taken by another consumer (or removed) since the listing
            path = os.path.join(processed_folder, filename)
            try:
                with open(path, "rb") as f:
                    payload = f.read()
                if not self.store_processed:
                    os.remove(path)
            except OSError as exc:
                raise ChannelError(f"Cannot read file {path!r} from queue.") from exc
            return loads(bytes_to_str(payload))
        raise Empty()

    def _purge(self, queue):
        self._listed = None
        return super()._purge(queue)


def transport_over(base):
    """A transport class: `base` (a class, kombu's "module:Class" path, or an alias function returning one) with
    the listed fetch."""
    if callable(base) and not isinstance(base, type):
        base = base()
    base = symbol_by_name(base)
    if issubclass(base.Channel, ListedFetch):
        return base
    channel = type("Channel", (ListedFetch, base.Channel), {"__module__": __name__})
    return type("Transport", (base,), {"Channel": channel, "__module__": __name__})


def register() -> None:
    """Register the listed fetch for `filesystem://` (kombu calls an alias that is a function, and takes a
    class it returns as the transport)."""
    built = transport_over(TRANSPORT_ALIASES["filesystem"])
    TRANSPORT_ALIASES["filesystem"] = lambda: built
