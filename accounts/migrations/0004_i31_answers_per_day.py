# The answers_per_day policy (CONTRACT 4.8c) and the replies:send scope: keys that could launch campaigns may answer.

from django.db import migrations, models


def grant_replies_send(apps, schema_editor):
    ApiKey = apps.get_model("accounts", "ApiKey")
    OAuthToken = apps.get_model("accounts", "OAuthToken")
    for model in (ApiKey, OAuthToken):
        for row in model.objects.all().only("pk", "scopes").iterator():
            scopes = list(row.scopes or [])
            if "campaign:launch" in scopes and "replies:send" not in scopes:
                model.objects.filter(pk=row.pk).update(scopes=[*scopes, "replies:send"])


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0003_oauth'),
    ]

    operations = [
        migrations.AddField(
            model_name='apikey',
            name='answers_per_day',
            field=models.PositiveIntegerField(blank=True, help_text="How many replies a UTC day this key (or OAuth connection) may send without a human's approval; null: every answer needs an approval.", null=True),
        ),
        migrations.RunPython(grant_replies_send, migrations.RunPython.noop),
    ]
