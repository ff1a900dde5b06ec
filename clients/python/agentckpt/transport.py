"""The client's HTTP transport: http.client with one kept-alive connection per thread.

Why not urllib: urllib opens a new TCP connection for every request, and it sends requests
through the proxy named by http_proxy/HTTP_PROXY (unless no_proxy lists the address). Agent pods
often set a proxy for their model provider; the sidecar is on the pod's own loopback, where an
egress proxy cannot reach it, so every call failed. This transport connects to the sidecar
directly and never uses a proxy.

Connections: each thread keeps one connection to the sidecar and reuses it. Before a request
reuses an idle connection, the connection is checked without blocking: if the sidecar has closed
it (a restart, a stop), it is dropped and a new one is opened, so no request is sent on a
connection known to be closed. A request that fails on its connection (refused, reset, timed out,
a malformed reply) drops that connection and is not retried: a checkpoint or a tool call may have
been taken, and only the caller can tell whether to send it again.
"""

import http.client
import select
import ssl
import threading
import urllib.parse
import weakref


class TransportError(Exception):
    """The request got no complete HTTP reply (connection refused or reset, timeout)."""


class ConnectionPerThread:
    """Sends requests to one base URL (http:// or https://, optionally with a path prefix).

    Thread-safe: each thread uses a connection of its own. close() closes every connection; later
    requests open new ones."""

    def __init__(self, base_url):
        parts = urllib.parse.urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"sidecar address {base_url!r}: expected http://host:port")
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        try:
            self._port = parts.port
        except ValueError as e:
            raise ValueError(f"sidecar address {base_url!r}: {e}") from None
        self._prefix = parts.path.rstrip("/")
        self._local = threading.local()
        self._open = weakref.WeakSet()  # every thread's connection, for close()
        self._lock = threading.Lock()

    def request(self, method, path, body, headers, timeout):
        """Sends one request and returns (status, body bytes). Raises TransportError when no
        complete reply arrived; the connection is then closed."""
        conn = self._connection(timeout)
        try:
            if conn.sock is not None:
                conn.sock.settimeout(timeout)
            conn.request(method, self._prefix + path, body=body, headers=headers)
            res = conn.getresponse()
            return res.status, res.read()
        except (OSError, http.client.HTTPException) as e:
            self._drop(conn)
            raise TransportError(str(e) or type(e).__name__) from e
        except BaseException:
            self._drop(conn)  # interrupted mid-request: the connection's state is unknown
            raise

    def close(self):
        """Closes every thread's connection. Call it when no request is in flight."""
        with self._lock:
            conns = list(self._open)
        for conn in conns:
            conn.close()

    def _connection(self, timeout):
        held = getattr(self._local, "held", None)
        conn = held.conn if held is not None else None
        if conn is not None and not _idle_and_open(conn):
            self._drop(conn)
            conn = None
        if conn is None:
            if self._https:
                conn = http.client.HTTPSConnection(self._host, self._port, timeout=timeout,
                                                   context=ssl.create_default_context())
            else:
                conn = http.client.HTTPConnection(self._host, self._port, timeout=timeout)
            self._local.held = _Held(conn)
            with self._lock:
                self._open.add(conn)
        conn.timeout = timeout  # used when the connection (re)connects
        return conn

    def _drop(self, conn):
        conn.close()
        held = getattr(self._local, "held", None)
        if held is not None and held.conn is conn:
            self._local.held = None


class _Held:
    """A thread's connection. When the thread ends (or the client is collected), its
    thread-local slot is released and the connection closed with it."""

    __slots__ = ("conn",)

    def __init__(self, conn):
        self.conn = conn

    def __del__(self):
        self.conn.close()


def _idle_and_open(conn):
    """True when an idle connection can carry a request: not yet connected (http.client connects
    on send), or connected with nothing to read. Readable while idle means the peer closed it
    (or sent bytes nobody asked for): either way it must not be used."""
    sock = conn.sock
    if sock is None:
        return True
    try:
        if hasattr(select, "poll"):  # select.select() refuses descriptors above 1023
            poller = select.poll()
            poller.register(sock, select.POLLIN)
            return not poller.poll(0)
        readable, _, _ = select.select([sock], [], [], 0)
        return not readable
    except (OSError, ValueError):
        return False
