"""Example Django project that shows llm_mcp in use; also the settings for the test suite."""
