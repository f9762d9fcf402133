"""HTTP/3 for Courier's interop tests: hypercorn with aioquic (an HTTP/3 and QUIC stack no one on the
project wrote) serving httpbin over HTTP/3 on a UDP port and over HTTP/1.1 and HTTP/2 (TLS, ALPN) on a
TCP port, with an Alt-Svc header on every response.
  /files/NAME   the file NAME of --www, whole (Content-Length), for byte-exact transfers
  /echo         full duplex (ASGI): the response head at once, then each request body chunk echoed as
                it arrives (over HTTP/1.1 and HTTP/2), then the trailer `x-echo-end: 1` to a client that
                sent `TE: trailers` (HTTP/2 only: hypercorn sends response trailers over HTTP/2 and 3
                alone, and hands an ASGI app no request trailers; .ci/echo-server.js covers those)
  anything else httpbin (/get, /post, /bytes/N, /gzip, /status/N, /response-headers...)
Usage: h3-server.py --serve SPEC [--serve SPEC...] --cert C --key K --www DIR [--daemon --pid-file F --log-file L]
                    [--keep-alive-max-requests N]
Each SPEC is one server of the process: tcp=P[,quic=Q][,alt=A][,mtls=1]. quic=Q serves HTTP/3 on UDP
port Q and advertises it (Alt-Svc: h3=":Q"; ma=3600); alt=A advertises UDP port A instead, where nothing
of this process listens; mtls=1 requires a client certificate from --client-ca in every handshake, TCP
and QUIC (aioquic asks for one only when told to: its server-side switch is set for that server).
--keep-alive-max-requests N: requests per HTTP/1.1 or HTTP/2 connection before hypercorn closes it (its
default, 1,000, cuts the benchmark's HTTP/2 connection with streams in flight: Benchmarks/run.py sets more).
"""
import argparse
import asyncio
import os
import signal
import socket

from daemon import start

# How long an idle connection stays open, TCP and QUIC alike (hypercorn's default is 5 s over TCP,
# aioquic's 60 s over QUIC). Tests that assert a connection is reused must not see it closed because
# a loaded machine kept them waiting between two requests; nginx here keeps 600 s as well.
IDLE_TIMEOUT = 600


def files_app(www, fallback):
    """A WSGI app: /files/NAME from `www` (no subdirectories), everything else from `fallback`."""
    def app(environ, start_response):
        path = environ.get("PATH_INFO", "")
        if not path.startswith("/files/"):
            return fallback(environ, start_response)
        name = path[len("/files/"):]
        full = os.path.join(www, name)
        if "/" in name or name.startswith(".") or not os.path.isfile(full):
            start_response("404 Not Found", [("Content-Type", "text/plain"), ("Content-Length", "10")])
            return [b"not found\n"]
        size = os.path.getsize(full)
        start_response("200 OK", [("Content-Type", "application/octet-stream"), ("Content-Length", str(size))])

        def chunks():
            with open(full, "rb") as f:
                while True:
                    chunk = f.read(65536)
                    if not chunk:
                        return
                    yield chunk
        return chunks()
    return app


async def echo_app(scope, receive, send):
    """ASGI: answers at once and echoes each request body chunk as it arrives (full duplex); then
    `x-echo-end: 1` as a trailer when hypercorn offers response trailers (HTTP/2 and 3, `TE: trailers`)."""
    trailers = "http.response.trailers" in scope.get("extensions", {})
    await send({"type": "http.response.start", "status": 200, "trailers": trailers,
                "headers": [(b"content-type", b"application/octet-stream")]})
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        body = message.get("body", b"")
        more = message.get("more_body", False)
        if body:
            await send({"type": "http.response.body", "body": body, "more_body": True})
        if not more:
            break
    await send({"type": "http.response.body", "body": b"", "more_body": False})
    if trailers:
        await send({"type": "http.response.trailers", "headers": [(b"x-echo-end", b"1")], "more_trailers": False})


class Routed:
    """Hypercorn's app wrapper for /echo (ASGI) in front of the WSGI app for everything else."""

    def __init__(self, wsgi, echo):
        self.wsgi = wsgi
        self.echo = echo

    async def __call__(self, scope, receive, send, sync_spawn, call_soon):
        target = self.echo if scope["type"] == "http" and scope.get("path") == "/echo" else self.wsgi
        return await target(scope, receive, send, sync_spawn, call_soon)


def parse_spec(spec):
    fields = dict(part.split("=", 1) for part in spec.split(","))
    unknown = set(fields) - {"tcp", "quic", "alt", "mtls"}
    if unknown or "tcp" not in fields:
        raise SystemExit(f"h3-server.py: bad --serve {spec!r} (tcp=P[,quic=Q][,alt=A][,mtls=1])")
    return {key: int(value) for key, value in fields.items()}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve", action="append", required=True, type=parse_spec)
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--www", required=True)
    parser.add_argument("--client-ca")
    parser.add_argument("--daemon", action="store_true")
    parser.add_argument("--pid-file")
    parser.add_argument("--log-file", default=os.devnull)
    parser.add_argument("--keep-alive-max-requests", type=int)
    arguments = parser.parse_args()

    # Listen before detaching, so that the caller can connect as soon as this returns.
    endpoints = []
    for spec in arguments.serve:
        tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        tcp.bind(("127.0.0.1", spec["tcp"]))
        tcp.listen(128)
        udp = None
        if "quic" in spec:
            udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            udp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            udp.bind(("127.0.0.1", spec["quic"]))
        endpoints.append((spec, tcp, udp))
    pid_file = start(arguments.daemon, arguments.pid_file, arguments.log_file)

    import httpbin
    import ssl
    from aioquic import tls
    from cryptography import x509
    from hypercorn.app_wrappers import ASGIWrapper, WSGIWrapper
    from hypercorn.asyncio.run import worker_serve
    from hypercorn.config import Config
    from hypercorn.protocol import quic

    # Mutual TLS over QUIC: hypercorn's QUIC configuration takes the TCP side's client CA, and
    # aioquic's server sends a CertificateRequest when its configuration requires a certificate.
    quic_init = quic.QuicProtocol.__init__

    def quic_protocol_init(self, app, config, *rest, **named):
        quic_init(self, app, config, *rest, **named)
        self.quic_config.idle_timeout = IDLE_TIMEOUT
        if config.verify_mode == ssl.CERT_REQUIRED:
            self.quic_config.verify_mode = ssl.CERT_REQUIRED
            self.quic_config.cafile = config.ca_certs
    quic.QuicProtocol.__init__ = quic_protocol_init
    context_init = tls.Context.__init__

    def context_init_requesting(self, *rest, **named):
        context_init(self, *rest, **named)
        if not named.get("is_client", True) and named.get("verify_mode") == ssl.CERT_REQUIRED:
            self._request_client_certificate = True
    tls.Context.__init__ = context_init_requesting
    # aioquic's server goes on without a certificate (RFC 8446 allows that) and keeps one it does
    # not check: this server refuses both, as nginx does with ssl_verify_client on.
    handle_certificate = tls.Context._server_handle_certificate

    def handle_certificate_strictly(self, input_buf):
        start = input_buf.tell()
        message = tls.pull_certificate(input_buf)
        input_buf.seek(start)
        if self._verify_mode == ssl.CERT_REQUIRED:
            if not message.certificates:
                raise tls.AlertBadCertificate("a client certificate is required")
            leaf, *chain = [x509.load_der_x509_certificate(data) for data, _ in message.certificates]
            tls.verify_certificate(certificate=leaf, chain=chain, cafile=self._cafile)
        handle_certificate(self, input_buf)
    tls.Context._server_handle_certificate = handle_certificate_strictly

    app = files_app(arguments.www, httpbin.app)

    async def run():
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for name in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(name, stop.set)
        servers = []
        for spec, tcp, udp in endpoints:
            config = Config()
            config.bind = [f"fd://{tcp.fileno()}"]
            config.certfile = arguments.cert
            config.keyfile = arguments.key
            config.alpn_protocols = ["h2", "http/1.1"]
            config.accesslog = "-"
            config.errorlog = "-"
            config.wsgi_max_body_size = 64 * 1024 * 1024
            config.keep_alive_timeout = IDLE_TIMEOUT
            if arguments.keep_alive_max_requests:
                config.keep_alive_max_requests = arguments.keep_alive_max_requests
            if udp is not None:
                config.quic_bind = [f"fd://{udp.fileno()}"]
                config.alt_svc_headers = [f'h3=":{spec["quic"]}"; ma=3600']
            if "alt" in spec:
                config.alt_svc_headers = [f'h3=":{spec["alt"]}"; ma=3600']
            if spec.get("mtls"):
                config.ca_certs = arguments.client_ca
                config.verify_mode = ssl.CERT_REQUIRED
            routed = Routed(WSGIWrapper(app, config.wsgi_max_body_size), ASGIWrapper(echo_app))
            servers.append(worker_serve(routed, config, shutdown_trigger=stop.wait))
        await asyncio.gather(*servers)

    asyncio.run(run())


if __name__ == "__main__":
    main()
