"""The optional ``mcp`` dependency, imported only when a server is built or served.

    from llm_mcp.testing._require import require_mcp
    require_mcp()          # returns None, or raises ImportError naming the extra
    # afterwards ``import mcp`` is safe

Spec: none (packaging). ``llm_mcp.testing`` itself imports without ``mcp``.
"""

from __future__ import annotations

INSTALL_HINT = "pip install 'django-llm-mcp[testing]'"


def require_mcp() -> None:
    """Make sure the official ``mcp`` server package (and uvicorn) can be imported.

        require_mcp()
        from mcp.server.lowlevel.server import Server
        # ImportError("... pip install 'django-llm-mcp[testing]'") when missing

    Raises:
        ImportError: ``mcp`` is not installed; the message names the extra to install.
    """
    try:
        import mcp.server.lowlevel.server  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            f"llm_mcp.testing needs the official 'mcp' package to build or serve a server: {INSTALL_HINT}"
        ) from exc
