"""Server-Sent Events endpoints for Courier's interop tests, served by sse-starlette under uvicorn
(an SSE implementation no one on the project wrote).

  GET  /events?n=N[&retry=MS]  events id 1..N ("tick i"), resuming after Last-Event-ID; 204 once all were sent
  GET  /drop?n=N&after=K       like /events, but the connection is dropped after K events of one connection
  POST /chat                   a JSON body {"prompt": ...}: one JSON event per word of the prompt, then [DONE]

Usage: sse-server.py --port P [--daemon --pid-file F --log-file L]
"""
import argparse
import asyncio
import json
import os
import sys

from daemon import start

from sse_starlette.sse import EventSourceResponse
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route


def first_after(request, n):
    last = request.headers.get("last-event-id")
    try:
        return int(last) + 1 if last is not None else 1
    except ValueError:
        return 1


async def events(request):
    n = int(request.query_params.get("n", "5"))
    retry = request.query_params.get("retry")
    start = first_after(request, n)
    if start > n:
        return Response(status_code=204)

    async def generate():
        for i in range(start, n + 1):
            event = {"id": str(i), "data": f"tick {i}"}
            if retry is not None and i == start:
                event["retry"] = int(retry)
            yield event
            await asyncio.sleep(0)

    return EventSourceResponse(generate())


class Dropped(Exception):
    pass


async def drop(request):
    n = int(request.query_params.get("n", "6"))
    after = int(request.query_params.get("after", "3"))
    start = first_after(request, n)
    if start > n:
        return Response(status_code=204)

    async def generate():
        for sent, i in enumerate(range(start, n + 1)):
            if sent == after:
                # Abort the response mid-body: uvicorn closes the connection without ending the chunked body.
                raise Dropped()
            yield {"id": str(i), "data": f"tick {i}"}
            await asyncio.sleep(0)

    return EventSourceResponse(generate())


async def chat(request):
    body = await request.json()
    words = str(body.get("prompt", "")).split()

    async def generate():
        for word in words:
            yield {"data": json.dumps({"token": word})}
        yield {"data": "[DONE]"}

    return EventSourceResponse(generate())


app = Starlette(routes=[
    Route("/events", events),
    Route("/drop", drop),
    Route("/chat", chat, methods=["POST"]),
])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--daemon", action="store_true")
    parser.add_argument("--pid-file")
    parser.add_argument("--log-file", default=os.devnull)
    arguments = parser.parse_args()
    import socket
    import uvicorn
    # Listen before detaching, so that the caller can connect as soon as this returns.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", arguments.port))
    sock.listen(128)
    pid_file = start(arguments.daemon, arguments.pid_file, arguments.log_file)
    config = uvicorn.Config(app, log_level="warning")
    server = uvicorn.Server(config)
    server.run(sockets=[sock])


if __name__ == "__main__":
    main()
