#!/usr/bin/env python3
"""A small HTTP/1.1 reverse proxy on 127.0.0.1 for tests (fault injection) and benchmarks
(per-request latency, request counting), in pure Python 3 standard library (asyncio).

    python3 scripts/http_proxy.py --upstream http://127.0.0.1:PORT [--listen-port N]
        [--delay-ms D] [--fail-every K] [--fail-status 503] [--port-file FILE]

Each client connection gets its own upstream connection (opened on its first request,
reopened when the upstream closed it); requests and responses are parsed as HTTP/1.1 (bodies
by Content-Length or chunked; none for HEAD, 1xx, 204 and 304; else until close) and forwarded
byte for byte, the Host header included: an S3 client signs the Host it connects to, here the
proxy's, and the upstream checks the signature against the Host it receives, so signed
requests pass unchanged.

- `--delay-ms D`: each request waits D ms before it is forwarded (or failed); requests on
  different connections wait at the same time, as on a link with that latency.
- `--fail-every K`: every K-th request (from 1, over all connections) is answered by the proxy
  with `--fail-status` and an S3-style `SlowDown` error, its body read and dropped.
- `GET /__proxy__/stats`: `{"requests", "by_method", "lists", "injected_failures",
  "bytes_to_client", "bytes_to_upstream", "max_in_flight", "connections"}` for the client
  requests since the start or the last `POST /__proxy__/reset` (lists: listing requests, a GET
  whose query has S3's `list-type`, `prefix` or `delimiter` or Azure's `comp=list`;
  max_in_flight: the most requests at once between their head's arrival and the end of their
  answer; connections: client connections accepted; with `?targets=1` also "targets": the
  first 100 requests as "METHOD target"); `POST /__proxy__/config?delay_ms=D&fail_every=K`
  changes the settings (K=0: no failures) and answers them. These are never forwarded nor
  counted.
- `--port-file FILE`: the listening port is written there once listening (`--listen-port 0`
  picks a free one). Nothing else is printed but errors.
"""

import argparse
import asyncio
import http
import json
import os
import signal
import sys
from urllib.parse import parse_qs, urlsplit

HEAD_LIMIT = 1 << 20  # the longest request or response head accepted
PIECE = 1 << 18  # bytes relayed per read of a response body
CONTROL = "/__proxy__/"
TARGETS = 100  # requests recorded in the stats' "targets"
FAIL_BODY = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
             b"<Message>injected by http_proxy.py</Message></Error>")


class Settings:
    """What the proxy does to requests, changeable at run time, and what it counted."""

    def __init__(self, delay_ms, fail_every, fail_status):
        self.delay_ms, self.fail_every, self.fail_status = delay_ms, fail_every, fail_status
        self.reset()

    def reset(self):
        self.requests, self.by_method, self.injected_failures = 0, {}, 0
        self.lists, self.targets = 0, []  # listing requests; the first TARGETS requests
        self.bytes_to_client = self.bytes_to_upstream = 0
        self.in_flight = getattr(self, "in_flight", 0)  # requests between head and answer now
        self.max_in_flight = self.in_flight
        self.connections = 0  # client connections accepted

    def stats(self, targets=False):
        return {"requests": self.requests, "by_method": self.by_method, "lists": self.lists,
                **({"targets": self.targets} if targets else {}),
                "injected_failures": self.injected_failures,
                "bytes_to_client": self.bytes_to_client,
                "bytes_to_upstream": self.bytes_to_upstream, "max_in_flight": self.max_in_flight,
                "connections": self.connections}

    def config(self):
        return {"delay_ms": self.delay_ms, "fail_every": self.fail_every,
                "fail_status": self.fail_status}


def is_listing(query):
    """Whether a GET with this query string lists keys: S3's ListObjectsV2 (`list-type=2`) and
    ListObjects (`prefix`, `delimiter`), Azure's List Blobs (`comp=list`)."""
    params = parse_qs(query, keep_blank_values=True)
    return bool({"list-type", "prefix", "delimiter"} & params.keys()) or "list" in params.get("comp", [])


class BadMessage(Exception):
    """A request or response that is not HTTP/1.x as this proxy understands it."""


class Head:
    """A parsed request or response head, with its bytes kept verbatim in `raw`."""

    def __init__(self, raw):
        self.raw = raw
        lines = raw[:-4].decode("latin-1").split("\r\n")
        self.start = lines[0].split(" ", 2)
        if len(self.start) < 2:
            raise BadMessage(f"bad start line {lines[0]!r}")
        self.headers = {}  # lower-case name -> value (repeated names: the values joined by ",")
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if not sep or not name or name != name.strip():
                raise BadMessage(f"bad header line {line!r}")
            name, value = name.lower(), value.strip()
            self.headers[name] = f"{self.headers[name]},{value}" if name in self.headers else value

    def has_token(self, name, token):
        """Whether the comma-separated header `name` lists `token` (case-insensitive)."""
        return token in (t.strip().lower() for t in self.headers.get(name, "").split(","))

    def content_length(self):
        """The Content-Length (None when absent); conflicting or negative ones are refused."""
        value = self.headers.get("content-length")
        if value is None:
            return None
        lengths = {v.strip() for v in value.split(",")}
        if len(lengths) != 1 or not lengths.pop().isdigit():
            raise BadMessage(f"bad Content-Length {value!r}")
        return int(value.split(",")[0])


async def read_head(reader):
    """The next head on `reader`, or None at a clean end of the stream before any byte."""
    try:
        raw = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as e:
        if e.partial.strip(b"\r\n"):
            raise BadMessage("stream ended inside a head") from None
        return None
    except asyncio.LimitOverrunError:
        raise BadMessage("head too long") from None
    return Head(raw)


async def chunked_pieces(reader):
    """The raw bytes of a chunked body, chunk by chunk (sizes, data, trailers), verbatim."""
    while True:
        line = await reader.readuntil(b"\r\n")
        try:
            size = int(line.split(b";", 1)[0].strip(), 16)
        except ValueError:
            raise BadMessage(f"bad chunk size line {line!r}") from None
        if size == 0:
            yield line
            while True:  # trailers, then the empty line that ends the body
                trailer = await reader.readuntil(b"\r\n")
                yield trailer
                if trailer == b"\r\n":
                    return
        yield line
        left = size + 2  # the data and its CRLF
        while left:
            piece = await reader.read(min(left, PIECE))
            if not piece:
                raise asyncio.IncompleteReadError(b"", left)
            left -= len(piece)
            yield piece


async def sized_pieces(reader, length):
    """`length` bytes from `reader`, in pieces."""
    while length:
        piece = await reader.read(min(length, PIECE))
        if not piece:
            raise asyncio.IncompleteReadError(b"", length)
        length -= len(piece)
        yield piece


async def until_close(reader):
    while piece := await reader.read(PIECE):
        yield piece


async def read_request_body(reader, head):
    """A request's body bytes, framing included, verbatim (empty when it has none)."""
    if head.has_token("transfer-encoding", "chunked"):
        return b"".join([piece async for piece in chunked_pieces(reader)])
    length = head.content_length()
    return await reader.readexactly(length) if length else b""


def response_pieces(reader, head, method):
    """The pieces of a response's body, and whether the connection ends after it."""
    status = int(head.start[1])
    closes = head.has_token("connection", "close") or head.start[0] == "HTTP/1.0"
    if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
        return sized_pieces(reader, 0), closes
    if head.has_token("transfer-encoding", "chunked"):
        return chunked_pieces(reader), closes
    length = head.content_length()
    if length is not None:
        return sized_pieces(reader, length), closes
    return until_close(reader), True


def simple_response(status, body, content_type="application/json", close=False):
    """A complete response made by the proxy itself."""
    reason = http.HTTPStatus(status).phrase if status in http.HTTPStatus._value2member_map_ else ""
    head = (f"HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\n" + ("Connection: close\r\n" if close else "") + "\r\n")
    return head.encode("latin-1") + body


class Connection:
    """One client connection and its upstream connection."""

    def __init__(self, settings, upstream, reader, writer):
        self.settings, self.upstream = settings, upstream
        self.reader, self.writer = reader, writer
        self.up_reader = self.up_writer = None

    async def to_client(self, data, counted=True):
        self.writer.write(data)
        if counted:
            self.settings.bytes_to_client += len(data)
        await self.writer.drain()

    def close_upstream(self):
        if self.up_writer is not None:
            self.up_writer.close()
        self.up_reader = self.up_writer = None

    async def send_upstream(self, data):
        """Sends `data` on the upstream connection, opened (or reopened, when the upstream
        closed it) first; True when it was reused, so a failure may be retried once."""
        reused = self.up_writer is not None and not self.up_reader.at_eof() \
            and not self.up_writer.is_closing()
        if not reused:
            self.close_upstream()
            self.up_reader, self.up_writer = await asyncio.open_connection(
                *self.upstream, limit=HEAD_LIMIT)
        self.up_writer.write(data)
        await self.up_writer.drain()
        self.settings.bytes_to_upstream += len(data)
        return reused

    async def serve(self):
        """Answers the client's requests in turn until either side closes."""
        try:
            while await self.one_request():
                pass
        except (BadMessage, ValueError) as e:
            try:
                await self.to_client(simple_response(400, str(e).encode(), "text/plain", True), False)
            except OSError:
                pass
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass  # a side closed mid-message: both are closed below
        finally:
            self.close_upstream()
            self.writer.close()

    async def one_request(self):
        """Reads, then forwards or answers, one request; False when the connection ends."""
        head = await read_head(self.reader)
        if head is None:
            return False
        method, target = head.start[0], head.start[1]
        path = urlsplit(target).path
        if head.has_token("expect", "100-continue"):
            await self.to_client(b"HTTP/1.1 100 Continue\r\n\r\n", False)
        body = await read_request_body(self.reader, head)
        closes = head.has_token("connection", "close") or head.start[-1] == "HTTP/1.0"
        if path.startswith(CONTROL):
            await self.to_client(self.control(method, target), False)
            return not closes
        settings = self.settings
        settings.requests += 1
        settings.by_method[method] = settings.by_method.get(method, 0) + 1
        if method == "GET" and is_listing(urlsplit(target).query):
            settings.lists += 1
        if len(settings.targets) < TARGETS:
            settings.targets.append(f"{method} {target}")
        settings.in_flight += 1
        settings.max_in_flight = max(settings.max_in_flight, settings.in_flight)
        try:
            fail = settings.fail_every > 0 and settings.requests % settings.fail_every == 0
            if settings.delay_ms > 0:
                await asyncio.sleep(settings.delay_ms / 1000)
            if fail:
                settings.injected_failures += 1
                await self.to_client(simple_response(settings.fail_status, FAIL_BODY,
                                                     "application/xml"))
                return not closes
            return await self.forward(head, body, method) and not closes
        finally:
            settings.in_flight -= 1

    async def forward(self, head, body, method):
        """Sends the request upstream and relays the response; False when the connection ends.
        A reused upstream connection that fails before any response byte is reopened once."""
        request = head.raw + body
        for attempt in range(2):
            reused = False
            try:
                reused = await self.send_upstream(request)
                response = await read_head(self.up_reader)
                while response is not None and response.start[1] in ("100", "102", "103"):
                    response = await read_head(self.up_reader)  # interim: the proxy sent its own
                if response is None:
                    raise ConnectionResetError("upstream closed before answering")
                break
            except OSError:
                self.close_upstream()
                if attempt or not reused:
                    await self.to_client(simple_response(
                        502, b"upstream unreachable or closed", "text/plain", True), False)
                    return False
        pieces, closes = response_pieces(self.up_reader, response, method)
        await self.to_client(response.raw)
        async for piece in pieces:
            await self.to_client(piece)
        if closes:
            self.close_upstream()
        return not closes

    def control(self, method, target):
        """The answer to a /__proxy__/ request."""
        settings, url = self.settings, urlsplit(target)
        if method == "GET" and url.path == CONTROL + "stats":
            targets = parse_qs(url.query).get("targets", ["0"])[-1] not in ("", "0")
            return simple_response(200, json.dumps(settings.stats(targets)).encode())
        if method == "POST" and url.path == CONTROL + "reset":
            settings.reset()
            return simple_response(200, json.dumps(settings.stats()).encode())
        if method in ("GET", "POST") and url.path == CONTROL + "config":
            query = {k: v[-1] for k, v in parse_qs(url.query).items()}
            try:
                if method == "POST" and "delay_ms" in query:
                    settings.delay_ms = max(0.0, float(query["delay_ms"]))
                if method == "POST" and "fail_every" in query:
                    settings.fail_every = max(0, int(query["fail_every"]))
            except ValueError as e:
                return simple_response(400, str(e).encode(), "text/plain")
            return simple_response(200, json.dumps(settings.config()).encode())
        return simple_response(404, b"unknown proxy control request", "text/plain")


def loopback_upstream(url):
    """(host, port) of an http://127.0.0.1:PORT URL; anything else is refused."""
    parts = urlsplit(url)
    if parts.scheme != "http" or parts.hostname != "127.0.0.1" or parts.path not in ("", "/"):
        sys.exit(f"http_proxy.py: --upstream must be http://127.0.0.1:PORT, got {url!r}")
    return "127.0.0.1", parts.port or 80


async def main(args):
    settings = Settings(args.delay_ms, args.fail_every, args.fail_status)
    upstream = loopback_upstream(args.upstream)
    tasks = set()

    async def handle(reader, writer):
        task = asyncio.current_task()
        tasks.add(task)
        settings.connections += 1
        try:
            await Connection(settings, upstream, reader, writer).serve()
        except asyncio.CancelledError:
            writer.close()
        finally:
            tasks.discard(task)

    server = await asyncio.start_server(handle, "127.0.0.1", args.listen_port, limit=HEAD_LIMIT,
                                        backlog=1024)
    if args.port_file:
        temporary = f"{args.port_file}.tmp{os.getpid()}"
        with open(temporary, "w") as f:
            f.write(f"{server.sockets[0].getsockname()[1]}\n")
        os.replace(temporary, args.port_file)  # readers never see a partial file
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(signum, stop.set)
    await stop.wait()
    server.close()
    for task in list(tasks):
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--upstream", required=True, help="http://127.0.0.1:PORT")
    parser.add_argument("--listen-port", type=int, default=0, help="0 (default): a free port")
    parser.add_argument("--delay-ms", type=float, default=0.0, help="wait before forwarding")
    parser.add_argument("--fail-every", type=int, default=0, help="fail every K-th request")
    parser.add_argument("--fail-status", type=int, default=503, help="status of those failures")
    parser.add_argument("--port-file", help="where to write the listening port")
    return parser.parse_args()


if __name__ == "__main__":
    asyncio.run(main(parse_args()))
