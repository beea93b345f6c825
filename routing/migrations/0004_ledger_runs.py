"""The execution ledger counts the runs of a key: a released key is reclaimed, not deleted."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('routing', '0003_route_listing'),
    ]

    operations = [
        migrations.AddField(
            model_name='executionledger',
            name='runs',
            field=models.PositiveIntegerField(default=1),
        ),
    ]
