"""``ToolCall.ui_uri``: the MCP App resource of the tool that answered a call."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('llm_mcp', '0003_credential_secret_sealed'),
    ]

    operations = [
        migrations.AddField(
            model_name='toolcall',
            name='ui_uri',
            field=models.TextField(blank=True, null=True),
        ),
    ]
