"""WebSocket endpoints for Courier's interop tests, served by two implementations no one on the project
wrote: Python `websockets` (a strict RFC 6455 implementation) and aiohttp's WebSocket server. Each runs
twice, with permessage-deflate (RFC 7692) accepted and without it, on four ports. Every port serves
the same paths:

  /echo    sends back every message as it came (text as text, binary as binary)
  /chat    the same, with subprotocol "chat" chosen when the client offers it (no subprotocol otherwise)
  /close   closes at once with code 4001, reason "bye"
  /auth    401 unless the request has "Authorization: Bearer secret"; then echoes
  /hello   sends {"hello":"courier","n":1} as a text message, then closes with 1000

Messages up to 32 MiB are accepted (16 MiB, Courier's default limit, with room to spare).

Usage: ws-server.py --websockets-port P --websockets-plain-port P --aiohttp-port P --aiohttp-plain-port P
                    [--daemon --pid-file F --log-file L]
"""
import argparse
import asyncio
import http
import json
import os
import signal
import socket

from daemon import start

MAX_MESSAGE = 32 * 1024 * 1024
HELLO = json.dumps({"hello": "courier", "n": 1})


def path_of(target):
    return target.split("?", 1)[0]


# Python websockets ---------------------------------------------------------------------------------

def websockets_process_request(connection, request):
    if path_of(request.path) == "/auth" and request.headers.get("Authorization") != "Bearer secret":
        return connection.respond(http.HTTPStatus.UNAUTHORIZED, "unauthorized\n")
    if path_of(request.path) not in ("/echo", "/chat", "/close", "/auth", "/hello"):
        return connection.respond(http.HTTPStatus.NOT_FOUND, "no such endpoint\n")
    return None


def websockets_select_subprotocol(connection, subprotocols):
    # Every path: "chat" when offered, and no subprotocol (rather than websockets' 400) otherwise.
    return "chat" if "chat" in subprotocols else None


async def websockets_handler(connection):
    path = path_of(connection.request.path)
    if path == "/close":
        await connection.close(4001, "bye")
        return
    if path == "/hello":
        await connection.send(HELLO)
        await connection.close()
        return
    async for message in connection:
        await connection.send(message)


async def start_websockets(sock, compression):
    from websockets.asyncio.server import serve
    return await serve(
        websockets_handler,
        sock=sock,
        compression="deflate" if compression else None,
        process_request=websockets_process_request,
        select_subprotocol=websockets_select_subprotocol,
        max_size=MAX_MESSAGE,
        # Pings of its own would only add noise to the tests' frames.
        ping_interval=None,
    )


# aiohttp ---------------------------------------------------------------------------------------------

def aiohttp_app(compress):
    from aiohttp import WSMsgType, web

    async def endpoint(request):
        path = request.path
        if path == "/auth" and request.headers.get("Authorization") != "Bearer secret":
            return web.Response(status=401, text="unauthorized\n")
        socket_response = web.WebSocketResponse(
            protocols=("chat",) if path == "/chat" else (),
            compress=compress,
            max_msg_size=MAX_MESSAGE,
        )
        await socket_response.prepare(request)
        if path == "/close":
            await socket_response.close(code=4001, message=b"bye")
            return socket_response
        if path == "/hello":
            await socket_response.send_str(HELLO)
            await socket_response.close()
            return socket_response
        async for message in socket_response:
            if message.type == WSMsgType.TEXT:
                await socket_response.send_str(message.data)
            elif message.type == WSMsgType.BINARY:
                await socket_response.send_bytes(message.data)
        return socket_response

    app = web.Application()
    for path in ("/echo", "/chat", "/close", "/auth", "/hello"):
        app.router.add_get(path, endpoint)
    return app


async def start_aiohttp(sock, compress):
    from aiohttp import web
    runner = web.AppRunner(aiohttp_app(compress), access_log=None)
    await runner.setup()
    await web.SockSite(runner, sock).start()
    return runner


# Process ----------------------------------------------------------------------------------------------


def listening_socket(port):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    sock.setblocking(False)
    return sock


async def serve_all(sockets):
    servers = [
        await start_websockets(sockets["websockets"], compression=True),
        await start_websockets(sockets["websockets_plain"], compression=False),
    ]
    runners = [
        await start_aiohttp(sockets["aiohttp"], compress=True),
        await start_aiohttp(sockets["aiohttp_plain"], compress=False),
    ]
    try:
        await asyncio.Event().wait()
    finally:
        for server in servers:
            server.close()
        for runner in runners:
            await runner.cleanup()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--websockets-port", type=int, required=True)
    parser.add_argument("--websockets-plain-port", type=int, required=True)
    parser.add_argument("--aiohttp-port", type=int, required=True)
    parser.add_argument("--aiohttp-plain-port", type=int, required=True)
    parser.add_argument("--daemon", action="store_true")
    parser.add_argument("--pid-file")
    parser.add_argument("--log-file")
    arguments = parser.parse_args()
    # Import both before detaching, so that a missing package fails the start where the caller sees it.
    import aiohttp  # noqa: F401
    import websockets  # noqa: F401
    # Listen before detaching, so that the caller can connect as soon as this returns.
    sockets = {
        "websockets": listening_socket(arguments.websockets_port),
        "websockets_plain": listening_socket(arguments.websockets_plain_port),
        "aiohttp": listening_socket(arguments.aiohttp_port),
        "aiohttp_plain": listening_socket(arguments.aiohttp_plain_port),
    }
    pid_file = start(arguments.daemon, arguments.pid_file, arguments.log_file)

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
    asyncio.run(serve_all(sockets))

if __name__ == "__main__":
    main()
