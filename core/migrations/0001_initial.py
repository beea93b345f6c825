"""ServiceToken moves here from ``canary`` with its table ``canary_servicetoken``: the
state is created, the database is left alone (``canary.0002_move_servicetoken_to_core``
removes it from canary's state). The content type is re-labelled so existing
permissions and group grants follow the model."""

from django.db import migrations, models


def relabel_content_type(apps, schema_editor):  # type: ignore[no-untyped-def]
    content_type = apps.get_model("contenttypes", "ContentType")
    if not content_type.objects.filter(app_label="core", model="servicetoken").exists():
        content_type.objects.filter(app_label="canary", model="servicetoken").update(app_label="core")


def unlabel_content_type(apps, schema_editor):  # type: ignore[no-untyped-def]
    content_type = apps.get_model("contenttypes", "ContentType")
    if not content_type.objects.filter(app_label="canary", model="servicetoken").exists():
        content_type.objects.filter(app_label="core", model="servicetoken").update(app_label="canary")


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("canary", "0002_move_servicetoken_to_core"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="ServiceToken",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("name", models.CharField(max_length=150, unique=True)),
                        ("token_hash", models.CharField(max_length=64, unique=True)),
                        ("prefix", models.CharField(max_length=12)),
                        ("created_at", models.DateTimeField()),
                        ("revoked_at", models.DateTimeField(blank=True, null=True)),
                    ],
                    options={"db_table": "canary_servicetoken"},
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(relabel_content_type, unlabel_content_type),
    ]
