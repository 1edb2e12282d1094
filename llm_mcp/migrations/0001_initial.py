"""Chats, messages, tool calls (with ``mcp_result``) and encrypted MCP credentials.

Chats and messages are swappable (``LLM_MCP_CHAT_MODEL``, ``LLM_MCP_MESSAGE_MODEL``): when
a project names its own models, their tables are not created here, and this migration runs
after the migration that creates the project's models.
"""

import django.db.models.deletion
import encrypted_fields.fields
import llm_mcp.records
from django.conf import settings
from django.db import migrations, models



def _project_models() -> list[tuple[str, str]]:
    """Dependencies on the project's own chat/message models, when it swapped ours out."""
    names = [getattr(settings, "LLM_MCP_CHAT_MODEL", "llm_mcp.Chat"),
             getattr(settings, "LLM_MCP_MESSAGE_MODEL", "llm_mcp.Message")]
    return [migrations.swappable_dependency(name) for name in names if not name.lower().startswith("llm_mcp.")]


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        *_project_models(),
    ]

    operations = [
        migrations.CreateModel(
            name='Chat',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('model', models.CharField(max_length=200)),
                ('provider', models.CharField(default='openai', max_length=100)),
                ('params', models.JSONField(blank=True, default=dict)),
                ('agent_class', models.CharField(blank=True, default='', max_length=300)),
                ('agent_inputs', models.JSONField(blank=True, default=dict)),
                ('cancelled', models.BooleanField(default=False)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('updated_at', models.DateTimeField(auto_now=True)),
            ],
            options={
                'db_table': 'llm_mcp_chats',
                'ordering': ['-id'],
                'abstract': False,
                'swappable': 'LLM_MCP_CHAT_MODEL',
            },
            bases=(llm_mcp.records.ChatRecord, models.Model),
        ),
        migrations.CreateModel(
            name='Message',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('role', models.CharField(choices=[('system', 'system'), ('user', 'user'), ('assistant', 'assistant'), ('tool', 'tool')], max_length=16)),
                ('content', models.TextField(blank=True, default='')),
                ('attachments', models.JSONField(blank=True, default=list)),
                ('is_error', models.BooleanField(default=False)),
                ('model', models.CharField(blank=True, default='', max_length=200)),
                ('input_tokens', models.PositiveIntegerField(blank=True, null=True)),
                ('output_tokens', models.PositiveIntegerField(blank=True, null=True)),
                ('raw', models.JSONField(blank=True, null=True)),
                ('key', models.CharField(blank=True, max_length=255, null=True)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('chat', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='message_records', to=getattr(settings, 'LLM_MCP_CHAT_MODEL', 'llm_mcp.Chat'))),
            ],
            options={
                'db_table': 'llm_mcp_messages',
                'ordering': ['id'],
                'abstract': False,
                'swappable': 'LLM_MCP_MESSAGE_MODEL',
            },
        ),
        migrations.CreateModel(
            name='Credential',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('key', models.CharField(max_length=255, unique=True)),
                ('owner_id', models.CharField(blank=True, default='', max_length=255)),
                ('secret', encrypted_fields.fields.EncryptedTextField(blank=True, null=True)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('owner_type', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, to='contenttypes.contenttype')),
            ],
            options={
                'db_table': 'llm_mcp_credentials',
            },
        ),
        migrations.CreateModel(
            name='ToolCall',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('tool_call_id', models.CharField(max_length=255)),
                ('name', models.TextField()),
                ('arguments', models.JSONField(blank=True, default=dict)),
                ('approval', models.CharField(blank=True, choices=[('', 'not needed'), ('pending', 'pending'), ('approved', 'approved'), ('declined', 'declined')], default='', max_length=16)),
                ('pending_questions', models.JSONField(blank=True, default=list)),
                ('request_state', models.TextField(blank=True, null=True)),
                ('task', models.JSONField(blank=True, null=True)),
                ('mcp_result', models.JSONField(blank=True, null=True)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('message', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='tool_calls', to=getattr(settings, 'LLM_MCP_MESSAGE_MODEL', 'llm_mcp.Message'))),
                ('result', models.OneToOneField(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='tool_result', to=getattr(settings, 'LLM_MCP_MESSAGE_MODEL', 'llm_mcp.Message'))),
            ],
            options={
                'db_table': 'llm_mcp_tool_calls',
                'ordering': ['id'],
            },
        ),
        migrations.AddConstraint(
            model_name='message',
            constraint=models.UniqueConstraint(fields=('chat', 'key'), name='llm_mcp_message_key_unique'),
        ),
        migrations.AddIndex(
            model_name='toolcall',
            index=models.Index(fields=['tool_call_id'], name='llm_mcp_tool_call_id_idx'),
        ),
        migrations.AddConstraint(
            model_name='toolcall',
            constraint=models.UniqueConstraint(fields=('message', 'tool_call_id'), name='llm_mcp_tool_call_id_unique'),
        ),
    ]
