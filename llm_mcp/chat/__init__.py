"""Chats and agents that offer MCP tools (and plain Python tools) to a model. No Django import."""
