# Whole replies (text, full_text, attachments, updated_at) and answers (CONTRACT 4.8, 4.8c).

import django.db.models.deletion
import django.utils.timezone
import replies.models
from django.conf import settings
from django.db import migrations, models


def fill_from_stored(apps, schema_editor):
    """Existing replies: their text, whole text and attachments read again from the raw message kept; a
    message that cannot be read keeps its snippet as both texts. updated_at starts at received_at."""
    from replies.content import extract

    Reply = apps.get_model("replies", "Reply")
    InboundMessage = apps.get_model("replies", "InboundMessage")
    for reply in Reply.objects.all().only("pk", "snippet", "received_at", "inbound_id").iterator():
        raw = InboundMessage.objects.filter(pk=reply.inbound_id).values_list("raw", flat=True).first()
        try:
            found = extract(bytes(raw or b""))
        except Exception:  # noqa: BLE001 - a message the reader cannot take keeps what get_replies showed
            found = None
        Reply.objects.filter(pk=reply.pk).update(
            text=(found.text if found else "") or reply.snippet, full_text=(found.full_text if found else "") or reply.snippet,
            attachments=found.attachments if found else [], updated_at=reply.received_at)


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0003_oauth'),
        ('campaigns', '0002_campaign_paused_stats'),
        ('replies', '0005_alter_reply_options'),
        ('sending', '0005_mailbox_vendor_sync'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='AnswerNotice',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
            ],
        ),
        migrations.CreateModel(
            name='ReplyAnswer',
            fields=[
                ('id', models.CharField(default=replies.models._answer_id, editable=False, max_length=40, primary_key=True, serialize=False)),
                ('from_email', models.CharField(max_length=254)),
                ('to_email', models.CharField(max_length=254)),
                ('subject', models.CharField(max_length=998)),
                ('body', models.TextField()),
                ('message_id', models.CharField(help_text='RFC 5322 Message-ID without <>.', max_length=255, unique=True)),
                ('in_reply_to', models.CharField(max_length=998)),
                ('references', models.JSONField(blank=True, default=list, help_text='Message-IDs without <>, oldest first.')),
                ('state', models.CharField(choices=[('pending_approval', 'Pending Approval'), ('queued', 'Queued'), ('sending', 'Sending'), ('sent', 'Sent'), ('send_unknown', 'Send Unknown'), ('failed', 'Failed'), ('denied', 'Denied')], default='pending_approval', max_length=20)),
                ('sent_by', models.CharField(help_text="The key's name or the member's email (kept if deleted).", max_length=254)),
                ('without_approval', models.BooleanField(default=False, help_text="Sent under the owner's answers_per_day policy.")),
                ('attempts', models.IntegerField(default=0)),
                ('next_attempt_at', models.DateTimeField(blank=True, null=True)),
                ('error', models.TextField(blank=True, default='')),
                ('request_id', models.CharField(blank=True, default='', max_length=64)),
                ('idempotency_key', models.CharField(blank=True, default='', help_text='The Idempotency-Key of the call that sent it: a retry of that call finds this row and sends nothing.', max_length=255)),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('sending_at', models.DateTimeField(blank=True, null=True)),
                ('sent_at', models.DateTimeField(blank=True, null=True)),
            ],
        ),
        migrations.AddField(
            model_name='reply',
            name='attachments',
            field=models.JSONField(blank=True, default=list, help_text='[{filename, content_type, size}]; the content stays in the raw message.'),
        ),
        migrations.AddField(
            model_name='reply',
            name='full_text',
            field=models.TextField(blank=True, default='', help_text='The whole body as plain text, HTML converted.'),
        ),
        migrations.AddField(
            model_name='reply',
            name='text',
            field=models.TextField(blank=True, default='', help_text="The person's own words: quoted history and signature removed (the classifier's cut)."),
        ),
        migrations.AddField(
            model_name='reply',
            name='updated_at',
            field=models.DateTimeField(default=django.utils.timezone.now, help_text='Moves when the label is set or corrected and when the reply is answered; get_replies `since` reads it.'),
        ),
        migrations.AlterField(
            model_name='reply',
            name='received_at',
            field=models.DateTimeField(default=django.utils.timezone.now, help_text='When the service accepted it; never changes.'),
        ),
        migrations.AddIndex(
            model_name='reply',
            index=models.Index(fields=['workspace', 'updated_at'], name='replies_ws_updated_idx'),
        ),
        migrations.AddField(
            model_name='answernotice',
            name='user',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
        migrations.AddField(
            model_name='answernotice',
            name='workspace',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='accounts.workspace'),
        ),
        migrations.AddField(
            model_name='replyanswer',
            name='api_key',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='accounts.apikey'),
        ),
        migrations.AddField(
            model_name='replyanswer',
            name='confirmation_token',
            field=models.OneToOneField(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='accounts.confirmationtoken'),
        ),
        migrations.AddField(
            model_name='replyanswer',
            name='mailbox',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='sending.mailbox'),
        ),
        migrations.AddField(
            model_name='replyanswer',
            name='member',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
        migrations.AddField(
            model_name='replyanswer',
            name='reply',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='answers', to='replies.reply'),
        ),
        migrations.AddField(
            model_name='replyanswer',
            name='workspace',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='accounts.workspace'),
        ),
        migrations.AddConstraint(
            model_name='answernotice',
            constraint=models.UniqueConstraint(fields=('workspace', 'user'), name='replies_notice_once'),
        ),
        migrations.AddIndex(
            model_name='replyanswer',
            index=models.Index(fields=['reply', 'created_at'], name='replies_answer_reply_idx'),
        ),
        migrations.AddIndex(
            model_name='replyanswer',
            index=models.Index(fields=['state', 'next_attempt_at'], name='replies_answer_due_idx'),
        ),
        migrations.AddIndex(
            model_name='replyanswer',
            index=models.Index(fields=['api_key', 'created_at'], name='replies_answer_key_day_idx'),
        ),
        migrations.AddConstraint(
            model_name='replyanswer',
            constraint=models.UniqueConstraint(condition=models.Q(('idempotency_key', ''), _negated=True), fields=('workspace', 'idempotency_key'), name='replies_answer_idem_once'),
        ),
        migrations.RunPython(fill_from_stored, migrations.RunPython.noop),
]
