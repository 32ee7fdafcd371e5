from django.dispatch import Signal

# Sent after commit when a confirmation token is issued; the console emails owners and admins.
approval_requested = Signal()

# Sent inside the transaction that creates a workspace (accounts.services.workspace_create), after its owner's
# membership; billing opens the workspace's credit account with the signup grant. Arguments: workspace.
workspace_created = Signal()
