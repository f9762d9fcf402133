#!/usr/bin/env python3
"""A mutual-TLS HTTP/1.1 server for Courier's interop tests (stdlib only).

Unlike nginx (which completes the handshake and answers 400), it refuses a missing or untrusted
client certificate *in the TLS handshake* (verify_mode = CERT_REQUIRED). With TLS 1.2 the client sees
the alert while connecting; with TLS 1.3 the client's side of the handshake is already complete when
the server checks its certificate, so the client sees the alert on its first read. With a good
client certificate every request gets 200 "mtls ok" (and the certificate's subject in X-Client-Subject).

usage: mtls-server.py --port 18453 --cert server.crt --key server.key --client-ca client-ca.crt
                      [--host 127.0.0.1] [--daemon --pid-file FILE --log-file FILE]
With --daemon it binds and listens first (so the port is ready when the command returns), then
detaches and writes the server's pid to --pid-file before the command returns; SIGTERM stops it.
"""
import argparse
import http.server
import os
import signal
import socket
import ssl
import sys
import time

from daemon import start


def log(message):
    sys.stderr.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {message}\n")
    sys.stderr.flush()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 30
    server_version = "courier-mtls"
    sys_version = ""

    def answer(self, with_body):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        body = b"mtls ok"
        subject = ""
        certificate = self.connection.getpeercert()
        if certificate:
            subject = ",".join(f"{k}={v}" for rdn in certificate.get("subject", ()) for k, v in rdn)
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Client-Subject", subject)
        self.end_headers()
        if with_body:
            self.wfile.write(body)

    def do_GET(self):
        self.answer(True)

    def do_POST(self):
        self.answer(True)

    def do_PUT(self):
        self.answer(True)

    def do_HEAD(self):
        self.answer(False)

    def log_message(self, format, *args):
        pass


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address, context):
        self.context = context
        super().__init__(address, Handler)

    def finish_request(self, request, client_address):
        # The handshake runs on the connection's own thread, so a slow client blocks no other.
        request.settimeout(30)
        connection = self.context.wrap_socket(request, server_side=True, do_handshake_on_connect=False)
        try:
            connection.do_handshake()
        except (ssl.SSLError, OSError) as error:
            log(f"handshake with {client_address[0]}:{client_address[1]} refused: {error}")
            self.linger(connection)
            return
        try:
            self.RequestHandlerClass(connection, client_address, self)
        except (ssl.SSLError, OSError) as error:
            log(f"connection from {client_address[0]}:{client_address[1]} failed: {error}")
        finally:
            try:
                connection.close()
            except OSError:
                pass


    @staticmethod
    def linger(connection):
        """After a refused handshake: the alert is sent; now let the client read it.

        Closing at once would make the kernel answer the client's next bytes (with TLS 1.3, its
        request: its side of the handshake is over) with a reset, which can reach the client before
        it reads the alert (curl then fails with "getpeername() failed" or a reset, not the alert).
        So: end our side, and read and drop whatever the client sends until it closes (at most 5 s).
        """
        try:
            connection.shutdown(socket.SHUT_WR)  # also drops the TLS layer: the reads below are raw
            connection.settimeout(5)
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and connection.recv(65536):
                pass
        except OSError:
            pass
        finally:
            connection.close()


def main():
    parser = argparse.ArgumentParser(description="mutual-TLS HTTP/1.1 test server")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--client-ca", required=True)
    parser.add_argument("--daemon", action="store_true")
    parser.add_argument("--pid-file")
    parser.add_argument("--log-file")
    args = parser.parse_args()
    if args.daemon and not args.pid_file:
        parser.error("--daemon needs --pid-file")

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(args.cert, args.key)
    context.load_verify_locations(cafile=args.client_ca)
    context.verify_mode = ssl.CERT_REQUIRED
    context.set_alpn_protocols(["http/1.1"])

    server = Server((args.host, args.port), context)  # bound and listening from here on
    pid_file = start(args.daemon, args.pid_file, args.log_file)

    def stop(signum, frame):
        if pid_file:
            try:
                with open(pid_file) as f:
                    if f.read().strip() == str(os.getpid()):
                        os.unlink(pid_file)
            except OSError:
                pass
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    log(f"mtls-server {os.getpid()} listening on https://{args.host}:{args.port}")
    server.serve_forever()


if __name__ == "__main__":
    main()
