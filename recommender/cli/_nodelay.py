"""uvicorn's HTTP protocols with TCP_NODELAY on every accepted connection.

A module of its own so that only ``recommender serve`` pays for importing uvicorn.
"""

from __future__ import annotations

import asyncio
import socket

from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["HTTP_PROTOCOL", "NoDelayH11Protocol"]


def _nodelay(transport: asyncio.BaseTransport) -> None:
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class NoDelayH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with TCP_NODELAY on every connection.

    With ``--workers`` > 1 uvicorn binds the listening socket itself with ``proto`` 0, and
    asyncio only disables Nagle's algorithm on accepted sockets whose ``proto`` is TCP; each
    keep-alive response then waits ~40 ms for the client's delayed ACK
    (https://github.com/Kludex/uvicorn/issues/3149). Setting the option here fixes both paths.
    """

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        _nodelay(transport)
        super().connection_made(transport)


try:  # the C parser, when installed (`pip install 'uvicorn[standard]'`)
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # pragma: no cover - depends on the environment
    HTTP_PROTOCOL: type[asyncio.Protocol] = NoDelayH11Protocol
else:

    class NoDelayHttpToolsProtocol(HttpToolsProtocol):
        """:class:`NoDelayH11Protocol`'s fix on uvicorn's httptools-based protocol."""

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            _nodelay(transport)
            super().connection_made(transport)

    HTTP_PROTOCOL = NoDelayHttpToolsProtocol
