"""ServiceToken moves to the ``core`` app (shared by canary and routing): removed from
canary's state only; its table ``canary_servicetoken`` stays (``core.0001_initial``)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("canary", "0001_initial")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="ServiceToken")],
            database_operations=[],
        ),
    ]
