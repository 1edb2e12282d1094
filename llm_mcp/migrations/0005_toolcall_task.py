"""``ToolCall.task_*``: the server task a paused call waits on, in columns of its own (Tasks extension)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('llm_mcp', '0004_tool_call_ui_uri'),
    ]

    operations = [
        migrations.AddField(
            model_name='toolcall',
            name='task_id',
            field=models.CharField(blank=True, db_index=True, default='', max_length=255),
        ),
        migrations.AddField(
            model_name='toolcall',
            name='task_status',
            field=models.CharField(blank=True, default='', max_length=32),
        ),
        migrations.AddField(
            model_name='toolcall',
            name='task_status_message',
            field=models.TextField(blank=True, default=''),
        ),
        migrations.AddField(
            model_name='toolcall',
            name='task_poll_interval',
            field=models.FloatField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='toolcall',
            name='task_expires_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='toolcall',
            name='task_server',
            field=models.CharField(blank=True, default='', max_length=255),
        ),
        migrations.AddField(
            model_name='toolcall',
            name='task_next_check',
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
