"""Token rotation: a name keeps its history of tokens (no longer unique; at most one row
per name without a revocation time), with the reason of a revocation, the last use and
the token a rotation replaced."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('core', '0001_initial'),
    ]

    operations = [
        migrations.AddField(
            model_name='servicetoken',
            name='last_used_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='servicetoken',
            name='revoke_reason',
            field=models.CharField(blank=True, max_length=2000),
        ),
        migrations.AddField(
            model_name='servicetoken',
            name='rotated_from',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='core.servicetoken'),
        ),
        migrations.AlterField(
            model_name='servicetoken',
            name='name',
            field=models.CharField(max_length=150),
        ),
        migrations.AddConstraint(
            model_name='servicetoken',
            constraint=models.UniqueConstraint(condition=models.Q(('revoked_at__isnull', True)), fields=('name',), name='service_token_one_unrevoked_per_name'),
        ),
    ]
