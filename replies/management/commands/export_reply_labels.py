"""Export human-corrected reply labels (or every classified reply) as JSON Lines with the raw message: the
labelled data a classifier training run reads. The same rows as the console's export (replies.corrections)."""

from django.core.management.base import BaseCommand, CommandError

from accounts.models import Workspace
from replies.corrections import labelled_export


class Command(BaseCommand):
    help = "Write labelled replies as JSON Lines to stdout (or --output FILE): corrected ones, or --all."

    def add_arguments(self, parser):
        parser.add_argument("--workspace", action="append", default=[],
                            help="Workspace id (repeatable); default: every workspace.")
        parser.add_argument("--all", action="store_true", help="Every classified reply, not only corrected ones.")
        parser.add_argument("--output", help="Write to this file instead of stdout.")

    def handle(self, *args, **opts):
        workspaces = Workspace.objects.all().order_by("pk")
        if opts["workspace"]:
            workspaces = workspaces.filter(pk__in=opts["workspace"])
            if workspaces.count() != len(set(opts["workspace"])):
                raise CommandError("unknown workspace id")
        out = open(opts["output"], "w", encoding="utf-8") if opts["output"] else self.stdout  # noqa: SIM115
        n = 0
        try:
            for workspace in workspaces:
                for line in labelled_export(workspace=workspace, everything=opts["all"]):
                    out.write(line, ending="") if out is self.stdout else out.write(line)
                    n += 1
        finally:
            if out is not self.stdout:
                out.close()
        self.stderr.write(f"{n} labelled replies exported")
