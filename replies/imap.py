"""Live reply ingestion: poll a mailbox's INBOX over IMAP with a UIDVALIDITY + UID cursor.

Nothing is read twice or skipped: messages are fetched in ascending UID order above `ImapCursor.last_uid`, each
stored (raw first) in the same database transaction that advances the cursor; only then is it flagged on the
server (keyword `$OutboundProcessed`, or `\\Flagged` where the server allows no keywords). Mail is never
deleted or moved, and `BODY.PEEK[]` leaves `\\Seen` alone, so the mailbox's human owner sees it unread. A new
UIDVALIDITY restarts the cursor at 0; Message-ID uniqueness keeps re-read messages from being stored twice.
Two pollers never work the same mailbox at once (a lease on the cursor row).
"""

from __future__ import annotations

import imaplib
import logging
import re
import time
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from replies import services
from replies.models import ImapCursor
from sending.imap import ImapError, connect
from sending.models import Mailbox, Provider

logger = logging.getLogger("replies.imap")

PROCESSED_KEYWORD = "$OutboundProcessed"
LEASE = timedelta(minutes=10)


def _claim(mailbox) -> ImapCursor | None:
    now = timezone.now()
    cursor, _ = ImapCursor.objects.get_or_create(mailbox=mailbox)
    free = Q(lease_until__isnull=True) | Q(lease_until__lt=now)
    moved = ImapCursor.objects.filter(free, pk=cursor.pk).update(lease_until=now + LEASE)
    if not moved:
        return None
    cursor.refresh_from_db()
    return cursor


UID_RE = re.compile(rb"\bUID (\d+)")


def _internaldate(meta: bytes):
    """The server's INTERNALDATE in a FETCH response (when the message reached the mailbox), or None."""
    try:
        parsed = imaplib.Internaldate2tuple(meta)
    except (ValueError, OverflowError):
        return None
    if parsed is None:
        return None
    return datetime.fromtimestamp(time.mktime(parsed), tz=UTC)


def _fetch(conn: imaplib.IMAP4, uid: int) -> tuple[bytes | None, datetime | None]:
    """(the raw message, its INTERNALDATE) of `uid`; (None, None) when it was expunged meanwhile."""
    typ, data = conn.uid("FETCH", str(uid), "(UID INTERNALDATE BODY.PEEK[])")
    if typ != "OK":
        raise ImapError(f"FETCH {uid}: {typ} {data!r}")
    for item in data or []:
        if isinstance(item, tuple) and len(item) == 2:
            m = UID_RE.search(item[0])
            if m and int(m.group(1)) == uid:
                return item[1], _internaldate(item[0])
    return None, None


def _fetch_raw(conn: imaplib.IMAP4, uid: int) -> bytes | None:
    return _fetch(conn, uid)[0]


def mailbox_poll(*, mailbox, batch: int | None = None, conn: imaplib.IMAP4 | None = None) -> int:
    """Read what arrived in the mailbox's INBOX since the cursor; returns how many messages were stored."""
    batch = batch or settings.REPLIES_IMAP_BATCH
    cursor = _claim(mailbox)
    if cursor is None:
        return 0  # another poller holds this mailbox
    stored = 0
    own_conn = conn is None
    try:
        conn = conn or connect(mailbox)
        typ, _ = conn.select(cursor.folder)
        if typ != "OK":
            raise ImapError(f"SELECT {cursor.folder}: {typ}")
        uidvalidity = int(conn.untagged_responses.get("UIDVALIDITY", [b"0"])[-1])
        permanent = b" ".join(conn.untagged_responses.get("PERMANENTFLAGS", [b""]))
        flag = PROCESSED_KEYWORD if b"\\*" in permanent else "\\Flagged"
        if cursor.uidvalidity != uidvalidity:
            logger.info("mailbox %s: UIDVALIDITY %s -> %s, restarting the cursor", mailbox.pk,
                        cursor.uidvalidity, uidvalidity)
            cursor.uidvalidity, cursor.last_uid = uidvalidity, 0
            cursor.save(update_fields=["uidvalidity", "last_uid"])
        typ, data = conn.uid("SEARCH", None, f"UID {cursor.last_uid + 1}:*")
        if typ != "OK":
            raise ImapError(f"SEARCH: {typ}")
        # "n:*" always matches the highest UID, even one below n: filter
        uids = sorted(u for u in (int(x) for x in (data[0] or b"").split()) if u > cursor.last_uid)[:batch]
        for uid in uids:
            raw, arrived = _fetch(conn, uid)
            try:
                with transaction.atomic():
                    if raw is not None:
                        services.inbound_store(mailbox=mailbox, raw=raw, source="imap", envelope_to=mailbox.email,
                                               imap_uidvalidity=uidvalidity, imap_uid=uid, received_at=arrived)
                    ImapCursor.objects.filter(pk=cursor.pk).update(last_uid=uid, stuck_uid=None, stuck_attempts=0)
            except Exception as exc:  # noqa: BLE001 - a message this code cannot store
                if not _stuck(cursor, uid, exc):
                    break  # retried at the next poll; later messages wait behind it (nothing is skipped)
                continue  # given up on after MAX_STORE_ATTEMPTS polls: recorded in skipped_uids
            if raw is not None:
                stored += 1
                conn.uid("STORE", str(uid), "+FLAGS.SILENT", f"({flag})")
        done = {"last_polled_at": timezone.now(), "failures": 0}
        if not ImapCursor.objects.filter(pk=cursor.pk, stuck_uid__isnull=False).exists():
            done["last_error"] = ""
        ImapCursor.objects.filter(pk=cursor.pk).update(**done)
    except (ImapError, imaplib.IMAP4.error, OSError) as exc:
        logger.warning("IMAP poll of mailbox %s failed: %s", mailbox.pk, exc)
        ImapCursor.objects.filter(pk=cursor.pk).update(last_error=str(exc)[:2000], failures=cursor.failures + 1,
                                                       last_polled_at=timezone.now())
    finally:
        ImapCursor.objects.filter(pk=cursor.pk).update(lease_until=None)
        if own_conn and conn is not None:
            try:
                conn.logout()
            except Exception:  # noqa: BLE001
                pass
    return stored


MAX_STORE_ATTEMPTS = 3


def _stuck(cursor: ImapCursor, uid: int, exc: Exception) -> bool:
    """A message failed to store. The cursor stays before it, so the next poll tries it again; only after
    MAX_STORE_ATTEMPTS polls failing on the same UID is it passed over (a poison message must not hold back
    every later reply, which would stop no sequence and suppress nobody), and recorded in `skipped_uids` for
    an operator. Returns True when it was passed over."""
    cursor.refresh_from_db()
    attempts = cursor.stuck_attempts + 1 if cursor.stuck_uid == uid else 1
    error = f"storing UID {uid} failed ({attempts}/{MAX_STORE_ATTEMPTS}): {type(exc).__name__}: {exc}"[:2000]
    if attempts < MAX_STORE_ATTEMPTS:
        logger.warning("mailbox %s: %s", cursor.mailbox_id, error)
        ImapCursor.objects.filter(pk=cursor.pk).update(stuck_uid=uid, stuck_attempts=attempts, last_error=error)
        return False
    logger.error("mailbox %s: passing over UID %s after %s failed attempts: %s", cursor.mailbox_id, uid, attempts,
                 exc)
    skipped = [*cursor.skipped_uids, {"uidvalidity": cursor.uidvalidity, "uid": uid, "error": error}][-100:]
    ImapCursor.objects.filter(pk=cursor.pk).update(last_uid=uid, stuck_uid=None, stuck_attempts=0,
                                                   skipped_uids=skipped, last_error=error)
    return True


def mailboxes_to_poll():
    """Active mailboxes with IMAP details (bring-your-own and vendor ones); sandbox mailboxes get their
    replies from the inbound SMTP listener instead."""
    return (Mailbox.objects.filter(status=Mailbox.Status.ACTIVE).exclude(provider=Provider.SANDBOX)
            .exclude(imap_host="").order_by("pk"))
