"""A decision for an empty endpoint listing (``listing_empty``)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('canary', '0003_probe_result_round_columns'),
    ]

    operations = [
        migrations.AlterField(
            model_name='decision',
            name='action',
            field=models.CharField(choices=[('suspended', 'suspended'), ('would_suspend', 'would suspend (observe)'), ('floor_blocked', 'floor blocked'), ('restored', 'restored'), ('expired', 'expired'), ('lifted', 'lifted by an admin'), ('false_positive', 'marked false positive'), ('exclusion_added', 'exclusion added'), ('exclusion_removed', 'exclusion removed'), ('mode_changed', 'mode changed'), ('weak_probe', 'probe weak this round'), ('discovery_failed', 'discovery failed'), ('listing_empty', 'listing empty')], max_length=24),
        ),
    ]
