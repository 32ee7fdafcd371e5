"""Indexes for contains-matching titles: pg_trgm GIN on PostgreSQL, an FTS5 trigram table on SQLite."""

from django.db import migrations


def forwards(apps, schema_editor):
    from leads.search_index import install

    install(schema_editor)


def backwards(apps, schema_editor):
    from leads.search_index import install

    install(schema_editor, reverse=True)


class Migration(migrations.Migration):
    dependencies = [("leads", "0001_initial")]
    operations = [migrations.RunPython(forwards, backwards, elidable=False)]
