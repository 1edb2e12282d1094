"""A TCP relay on 127.0.0.1 that can be taken down and brought back on the same port: a server
that is "down" for a while (connections refused) and then "back", without losing its state.

    with Relay(target_port) as relay:
        url = f"http://127.0.0.1:{relay.port}/mcp"
        relay.down()      # connections refused, open ones cut
        relay.up()        # the same port accepts again
"""

from __future__ import annotations

import contextlib
import socket
import threading
from typing import Any

__all__ = ["Relay"]


class Relay:
    """Forwards each connection to ``target_port`` on 127.0.0.1 (bytes as they are)."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = 0
        self._listener: socket.socket | None = None
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()

    def __enter__(self) -> Relay:
        self.up()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.down()

    def up(self) -> None:
        """Listen (on the same port as before, once it had one)."""
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True, name="relay-accept").start()

    def down(self) -> None:
        """Stop listening and cut every open connection."""
        with self._lock:
            listener, self._listener = self._listener, None
            open_sockets, self._open = self._open, []
        for sock in [listener, *open_sockets]:
            if sock is None:
                continue
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port))
            except OSError:
                client.close()
                continue
            with self._lock:
                if self._listener is not listener:
                    client.close()
                    upstream.close()
                    return
                self._open += [client, upstream]
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(source, sink), daemon=True, name="relay-pipe").start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                sink.sendall(data)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                sink.shutdown(socket.SHUT_WR)
