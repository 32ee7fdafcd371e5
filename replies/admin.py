"""Operator admin: inbound messages (raw kept, read-only), replies and IMAP cursors."""

from django.contrib import admin

from core.admin import ReadOnlyAdmin
from replies.models import ImapCursor, InboundMessage, Reply, ReplyCorrection


@admin.register(InboundMessage)
class InboundMessageAdmin(ReadOnlyAdmin):
    list_display = ("id", "workspace", "mailbox", "source", "state", "classification", "rule", "received_at")
    list_filter = ("state", "source", "classification")
    search_fields = ("id", "message_id", "envelope_from", "envelope_to")
    exclude = ("raw",)
    readonly_fields = ("raw_text",)

    @admin.display(description="raw message (first 20,000 characters)")
    def raw_text(self, obj):
        return bytes(obj.raw)[:20000].decode("utf-8", "replace")


@admin.register(Reply)
class ReplyAdmin(ReadOnlyAdmin):
    list_display = ("id", "workspace", "campaign", "from_email", "subject", "classification", "matched_by",
                    "received_at")
    list_filter = ("classification", "matched_by")
    search_fields = ("id", "from_email", "subject")


@admin.register(ImapCursor)
class ImapCursorAdmin(ReadOnlyAdmin):
    list_display = ("mailbox", "folder", "uidvalidity", "last_uid", "last_polled_at", "failures", "last_error")


@admin.register(ReplyCorrection)
class ReplyCorrectionAdmin(ReadOnlyAdmin):
    list_display = ("reply", "workspace", "from_label", "to_label", "corrected_by_email", "corrected_at")
    list_filter = ("from_label", "to_label")
