"""Domain events: the one way an app announces a change that webhook subscribers may hear about.

A service calls `emit(workspace=…, type=…, data=…)` inside the transaction that made the change; the `event`
signal reaches its receivers synchronously, in that transaction, so an event is recorded only if the change
commits. The webhooks app subscribes (webhooks.receivers, connected in its AppConfig.ready) and records the event
and its deliveries; a problem there is logged and never breaks the caller. Apps below webhooks announce events
without importing it.

`data` is the event's payload, or a callable building it: it is only built when some endpoint subscribes.
"""

from __future__ import annotations

from django.dispatch import Signal

# Arguments: workspace (a Workspace or its id), type (an event type, e.g. "campaign.launched"), data.
event = Signal()


def emit(*, workspace, type: str, data) -> None:
    """Announce one event of `workspace` to the subscribers of `event`."""
    event.send(sender=None, workspace=workspace, type=type, data=data)
