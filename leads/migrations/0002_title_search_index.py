"""Superseded by 0003 (title dictionary); a no-op now, kept for the migration graph."""

from django.db import migrations


def forwards(apps, schema_editor):
    from leads.search_index import install

    install(schema_editor, version=2)


def backwards(apps, schema_editor):
    from leads.search_index import install

    install(schema_editor, reverse=True, version=2)


class Migration(migrations.Migration):
    dependencies = [("leads", "0001_initial")]
    operations = [migrations.RunPython(forwards, backwards, elidable=False)]
