from django.dispatch import Signal

# Sent after commit when a confirmation token is issued; the console emails owners and admins.
approval_requested = Signal()
