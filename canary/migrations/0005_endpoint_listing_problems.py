"""Endpoint.listing_problems: listing fields that were sent but did not parse."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('canary', '0004_decision_listing_empty'),
    ]

    operations = [
        migrations.AddField(
            model_name='endpoint',
            name='listing_problems',
            field=models.JSONField(blank=True, default=list),
        ),
    ]
