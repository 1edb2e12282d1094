"""Servers and helpers the tests share (no tests here); see llm_mcp_tests/README.md."""
