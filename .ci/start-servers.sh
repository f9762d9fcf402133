#!/usr/bin/env bash
# Starts the real servers Courier's interop tests use and prints the environment to export.
# All on 127.0.0.1, with certificates made afresh on every run (.ci/make-certs.py, in $root/tls):
#   httpbin under gunicorn on 18181
#   nginx (.ci/nginx.conf.in): 18180 HTTP; 18443 HTTPS with HTTP/2; 18444 HTTPS HTTP/1.1 only;
#     18445 h2c (prior knowledge); 18446 mutual TLS (400 without a good client certificate);
#     18447 expired, 18448 wrong host, 18449 self-signed certificate; 18450 TLS 1.2 only;
#     18451 GOAWAY after 10 requests per connection; 18452 at most 8 concurrent HTTP/2 streams
#   .ci/mtls-server.py on 18453: mutual TLS that refuses a bad client certificate in the handshake
#   .ci/sse-server.py on 18454: Server-Sent Events from sse-starlette under uvicorn
#   .ci/ws-server.py: WebSockets from Python websockets on 18455 (permessage-deflate) and 18456 (none),
#     from aiohttp on 18457 (permessage-deflate) and 18458 (none); nginx on 18459 is TLS in front of
#     all four (nginx-websocket.conf: /websockets/, /websockets-plain/, /aiohttp/, /aiohttp-plain/),
#     and 18443 serves the same paths with h2 offered by ALPN
#   tinyproxy on 18460 (when installed): an HTTP proxy that opens CONNECT tunnels to 18458 and 18459 only
#     (WebSockets through a proxy; a tunnel to any other port is refused with 403)
#   .ci/h3-server.py (when hypercorn and aioquic are installed): hypercorn with aioquic serving httpbin and
#     /files/NAME (the fixtures below) over TLS, one process: 18470 HTTP/3 on UDP and HTTP/2 on TCP;
#     18472 TCP advertising HTTP/3 on UDP 18471 (served); 18473 TCP advertising HTTP/3 on UDP 18474
#     (nothing listens there); 18475 HTTP/3 and HTTP/2 requiring a client certificate from the client CA
#   .ci/echo-server.js on 18476 (when node is installed): Node.js's HTTP/1.1 server echoing a request as it
#     arrives, and its trailers as the response's (full duplex and trailers both ways, #39)
# Needs nginx, curl, openssl and python3 with httpbin, gunicorn, cryptography, sse-starlette,
# uvicorn, websockets and aiohttp (.ci/run installs them).
set -euo pipefail
root=${COURIER_CI_ROOT:-/tmp/courier-ci}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$root"/{www,logs,tmp}

# Daemons from a previous run. `running` counts an exited process that its parent (init, for a
# daemon) has not reaped yet as gone: kill -0 still succeeds on such a zombie, and here init reaps
# only every second or so.
running() {
  kill -0 "$1" 2>/dev/null || return 1
  [ -r "/proc/$1/stat" ] || return 0
  [ "$(sed -E 's/^.*\) (.).*$/\1/' "/proc/$1/stat" 2>/dev/null)" != Z ]
}
# Signals the daemon whose pid is in file $1 and prints its pid (nothing when there is none).
stop_pidfile() {
  local old
  if [ -f "$1" ] && old=$(cat "$1") && [ -n "$old" ] && kill "$old" 2>/dev/null; then echo "$old"; fi
}
# Waits until process $1 (if any) is gone, at most $2 tenths of a second, then removes pid file $3
# (a daemon removes its own as it exits; this is for one that died without doing so).
wait_gone() {
  if [ -n "$1" ]; then
    for _ in $(seq 1 "$2"); do running "$1" || break; sleep 0.1; done
  fi
  rm -f "$3"
}
# Stop them all at once; they exit while the certificates are made.
old_gunicorn=$(stop_pidfile "$root/gunicorn.pid")
old_nginx=$(stop_pidfile "$root/nginx.pid")
old_mtls=$(stop_pidfile "$root/mtls-server.pid")
old_sse=$(stop_pidfile "$root/sse-server.pid")
old_ws=$(stop_pidfile "$root/ws-server.pid")
old_proxy=$(stop_pidfile "$root/tinyproxy.pid")
old_h3=$(stop_pidfile "$root/h3-server.pid")
old_echo=$(stop_pidfile "$root/echo-server.pid")

# Fixtures: random bytes (Range, ETag, Last-Modified), compressible text, a 4 MiB file nginx serves slowly.
[ -f "$root/www/random-1m.bin" ] || head -c 1048576 /dev/urandom > "$root/www/random-1m.bin"
[ -f "$root/www/text-1m.txt" ] || python3 -c "import sys; sys.stdout.write(('courier interop line\n' * 52429)[:1048576])" > "$root/www/text-1m.txt"
[ -f "$root/www/slow.bin" ] || head -c 4194304 /dev/urandom > "$root/www/slow.bin"
[ -f "$root/www/random-32m.bin" ] || head -c 33554432 /dev/urandom > "$root/www/random-32m.bin"
echo '{"name":"courier","ok":true}' > "$root/www/small.json"
# HTTP cache fixtures: a 10 KiB text file and 64 KiB of random bytes, last modified 10 days ago.
mkdir -p "$root/www/cache"
[ -f "$root/www/cache/page.txt" ] || python3 -c "import sys; sys.stdout.write(('cacheable line of text\n' * 500)[:10240])" > "$root/www/cache/page.txt"
[ -f "$root/www/cache/blob.bin" ] || head -c 65536 /dev/urandom > "$root/www/cache/blob.bin"
touch -d '10 days ago' "$root/www/cache/page.txt" "$root/www/cache/blob.bin"
# A static event stream (nginx serves *.sse as text/event-stream): 1,000 events, ids 1 to 1000.
python3 - "$root/www/ticks.sse" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("".join(f'id: {i}\nevent: tick\ndata: {{"i":{i}}}\n\n' for i in range(1, 1001)))
PY

# Certificates, new on every run (so they never expire on a machine that is kept, and a $root from an
# older run gets every file): made aside, then swapped in whole.
python3 -c "import cryptography" 2>/dev/null || { echo "start-servers.sh: python3 needs the cryptography package (pip install cryptography)" >&2; exit 1; }
rm -rf "$root/tls.new" "$root/tls.old"
python3 "$here/make-certs.py" "$root/tls.new" >&2
[ -d "$root/tls" ] && mv "$root/tls" "$root/tls.old"
mv "$root/tls.new" "$root/tls"
rm -rf "$root/tls.old"

# httpbin: the previous gunicorn must be gone; then start it as a daemon, so that it holds none of
# this script's descriptors (a caller reading our output with $(...) would otherwise wait for it).
wait_gone "$old_gunicorn" 100 "$root/gunicorn.pid"
pkill -f "gunicorn.*18181" 2>/dev/null || true
for _ in $(seq 1 50); do pgrep -f "gunicorn.*18181" >/dev/null || break; sleep 0.1; done
(cd "$root" && gunicorn --daemon -b 127.0.0.1:18181 -w 2 --pid "$root/gunicorn.pid" \
  --log-file "$root/logs/gunicorn.log" --access-logfile "$root/logs/gunicorn-access.log" httpbin:app </dev/null >/dev/null 2>&1)

# nginx: a previous run's nginx must be gone (not just signalled) before the new one binds the ports.
for conf in nginx-server nginx-websocket nginx-websocket-proxy; do
  sed -e "s#@ROOT@#$root#g" "$here/$conf.conf.in" > "$root/$conf.conf"
done
sed -e "s#@ROOT@#$root#g" -e "s#@HTTP_PORT@#18180#g" -e "s#@HTTPS_PORT@#18443#g" "$here/nginx.conf.in" > "$root/nginx.conf"
wait_gone "$old_nginx" 50 "$root/nginx.pid"
nginx -c "$root/nginx.conf"

# The mutual-TLS Python server: it listens before it detaches, and writes its pid file.
wait_gone "$old_mtls" 50 "$root/mtls-server.pid"
python3 "$here/mtls-server.py" --port 18453 --cert "$root/tls/server.crt" --key "$root/tls/server.key" \
  --client-ca "$root/tls/client-ca.crt" --daemon --pid-file "$root/mtls-server.pid" \
  --log-file "$root/logs/mtls-server.log" </dev/null >>"$root/logs/mtls-server.log" 2>&1 \
  || { echo "mtls-server.py did not start" >&2; tail -n 20 "$root/logs/mtls-server.log" >&2; exit 1; }

# The SSE server: it listens before it detaches, and writes its pid file.
wait_gone "$old_sse" 50 "$root/sse-server.pid"
python3 "$here/sse-server.py" --port 18454 --daemon --pid-file "$root/sse-server.pid" \
  --log-file "$root/logs/sse-server.log" </dev/null >>"$root/logs/sse-server.log" 2>&1 \
  || { echo "sse-server.py did not start" >&2; tail -n 20 "$root/logs/sse-server.log" >&2; exit 1; }

# The WebSocket servers: they listen before they detach, and write their pid file.
wait_gone "$old_ws" 50 "$root/ws-server.pid"
python3 "$here/ws-server.py" --websockets-port 18455 --websockets-plain-port 18456 --aiohttp-port 18457 \
  --aiohttp-plain-port 18458 --daemon --pid-file "$root/ws-server.pid" --log-file "$root/logs/ws-server.log" \
  </dev/null >>"$root/logs/ws-server.log" 2>&1 \
  || { echo "ws-server.py did not start" >&2; tail -n 20 "$root/logs/ws-server.log" >&2; exit 1; }

# tinyproxy (optional outside CI, which installs it): it detaches and writes its pid file itself.
wait_gone "$old_proxy" 50 "$root/tinyproxy.pid"
proxy_env=
if command -v tinyproxy >/dev/null 2>&1; then
  cat > "$root/tinyproxy.conf" <<CONF
Port 18460
Listen 127.0.0.1
Timeout 600
MaxClients 64
Allow 127.0.0.1
LogFile "$root/logs/tinyproxy.log"
LogLevel Connect
PidFile "$root/tinyproxy.pid"
ConnectPort 18458
ConnectPort 18459
CONF
  : > "$root/logs/tinyproxy.log"
  tinyproxy -c "$root/tinyproxy.conf" </dev/null >>"$root/logs/tinyproxy.log" 2>&1 \
    || { echo "tinyproxy did not start" >&2; tail -n 20 "$root/logs/tinyproxy.log" >&2; exit 1; }
  for _ in $(seq 1 50); do curl -s -o /dev/null -x http://127.0.0.1:18460 http://127.0.0.1:18180/small.json && break; sleep 0.1; done
  curl -sf -o /dev/null -x http://127.0.0.1:18460 http://127.0.0.1:18180/small.json \
    || { echo "tinyproxy does not answer" >&2; tail -n 20 "$root/logs/tinyproxy.log" >&2; exit 1; }
  proxy_env="export COURIER_CONNECT_PROXY_URL=http://127.0.0.1:18460
export COURIER_CONNECT_PROXY_LOG=$root/logs/tinyproxy.log"
else
  echo "start-servers.sh: tinyproxy is not installed; the tests through a proxy will be skipped" >&2
fi

# The HTTP/3 servers (optional outside CI, which installs hypercorn and aioquic): they listen before
# they detach, and write their pid file.
wait_gone "$old_h3" 50 "$root/h3-server.pid"
h3_env=
if python3 -c "import hypercorn, aioquic" 2>/dev/null; then
  python3 "$here/h3-server.py" --serve tcp=18470,quic=18470 --serve tcp=18472,quic=18471 --serve tcp=18473,alt=18474 \
    --serve tcp=18475,quic=18475,mtls=1 --client-ca "$root/tls/client-ca.crt" --cert "$root/tls/server.crt" \
    --key "$root/tls/server.key" --www "$root/www" --daemon --pid-file "$root/h3-server.pid" \
    --log-file "$root/logs/h3-server.log" </dev/null >>"$root/logs/h3-server.log" 2>&1 \
    || { echo "h3-server.py did not start" >&2; tail -n 20 "$root/logs/h3-server.log" >&2; exit 1; }
  for _ in $(seq 1 100); do curl -sf --cacert "$root/tls/ca.crt" https://127.0.0.1:18470/get >/dev/null && break; sleep 0.1; done
  curl -sf --cacert "$root/tls/ca.crt" https://127.0.0.1:18470/get >/dev/null \
    || { echo "h3-server.py does not answer" >&2; tail -n 20 "$root/logs/h3-server.log" >&2; exit 1; }
  h3_env="export COURIER_H3_URL=https://127.0.0.1:18470
export COURIER_H3_ALTSVC_URL=https://127.0.0.1:18472
export COURIER_H3_DEAD_ALTSVC_URL=https://127.0.0.1:18473
export COURIER_H3_MTLS_URL=https://127.0.0.1:18475"
else
  echo "start-servers.sh: hypercorn and aioquic are not installed; the HTTP/3 tests will be skipped" >&2
fi

# Node.js's HTTP/1.1 echo (optional outside CI, which installs nodejs). Detached by nohup, its output
# in its log, so that this script's output (eval'd) is not held open by it.
wait_gone "$old_echo" 50 "$root/echo-server.pid"
echo_env=
if command -v node >/dev/null 2>&1; then
  nohup node "$here/echo-server.js" --port 18476 --pid-file "$root/echo-server.pid" \
    </dev/null >>"$root/logs/echo-server.log" 2>&1 &
  for _ in $(seq 1 100); do curl -sf http://127.0.0.1:18476/health >/dev/null && break; sleep 0.1; done
  curl -sf http://127.0.0.1:18476/health >/dev/null \
    || { echo "echo-server.js does not answer" >&2; tail -n 20 "$root/logs/echo-server.log" >&2; exit 1; }
  echo_env="export COURIER_NODE_ECHO_URL=http://127.0.0.1:18476"
else
  echo "start-servers.sh: node is not installed; the Node.js echo tests will be skipped" >&2
fi

tls=$root/tls
for _ in $(seq 1 50); do
  curl -sf http://127.0.0.1:18181/get >/dev/null && curl -sf http://127.0.0.1:18180/small.json >/dev/null && break
  sleep 0.2
done
curl -sf http://127.0.0.1:18181/get >/dev/null || { echo "httpbin did not start" >&2; cat "$root/logs/gunicorn.log" >&2; exit 1; }
curl -sf http://127.0.0.1:18180/small.json >/dev/null || { echo "nginx did not start" >&2; exit 1; }
curl -sf --cacert "$tls/ca.crt" https://127.0.0.1:18443/small.json >/dev/null || { echo "nginx HTTPS does not answer" >&2; exit 1; }
curl -sf --cacert "$tls/ca.crt" --cert "$tls/client.crt" --key "$tls/client.key" https://127.0.0.1:18453/ >/dev/null \
  || { echo "mtls-server.py does not answer" >&2; tail -n 20 "$root/logs/mtls-server.log" >&2; exit 1; }
for _ in $(seq 1 50); do curl -sf "http://127.0.0.1:18454/events?n=1" >/dev/null && break; sleep 0.1; done
curl -sf "http://127.0.0.1:18454/events?n=1" >/dev/null || { echo "sse-server.py does not answer" >&2; tail -n 20 "$root/logs/sse-server.log" >&2; exit 1; }
# A WebSocket handshake through nginx to each server (an echo each way, with a Python client).
python3 - "$tls/ca.crt" <<'PY' || { echo "ws-server.py does not answer (directly or through nginx)" >&2; tail -n 20 "$root/logs/ws-server.log" >&2; exit 1; }
import asyncio, ssl, sys
from websockets.asyncio.client import connect
context = ssl.create_default_context(cafile=sys.argv[1])
async def check(url):
    async with connect(url, ssl=context if url.startswith("wss:") else None, open_timeout=60) as socket:
        await socket.send("ready?")
        assert await asyncio.wait_for(socket.recv(), 60) == "ready?", url
async def main():
    for url in ["ws://127.0.0.1:18455/echo", "ws://127.0.0.1:18456/echo", "ws://127.0.0.1:18457/echo",
                "ws://127.0.0.1:18458/echo", "wss://127.0.0.1:18459/websockets/echo",
                "wss://127.0.0.1:18459/websockets-plain/echo", "wss://127.0.0.1:18459/aiohttp/echo",
                "wss://127.0.0.1:18459/aiohttp-plain/echo", "wss://127.0.0.1:18443/websockets/echo"]:
        await check(url)
asyncio.run(main())
PY

cat <<ENV
export COURIER_HTTPBIN_URL=http://127.0.0.1:18181
export COURIER_HTTPBIN_ACCESS_LOG=$root/logs/gunicorn-access.log
export COURIER_NGINX_CACHE_LOG=$root/logs/cache-access.log
export COURIER_NGINX_URL=http://127.0.0.1:18180
export COURIER_NGINX_HTTPS_URL=https://127.0.0.1:18443
export COURIER_NGINX_HTTPS_H1_URL=https://127.0.0.1:18444
export COURIER_NGINX_H2C_URL=http://127.0.0.1:18445
export COURIER_NGINX_MTLS_URL=https://127.0.0.1:18446
export COURIER_NGINX_EXPIRED_URL=https://127.0.0.1:18447
export COURIER_NGINX_WRONGHOST_URL=https://127.0.0.1:18448
export COURIER_NGINX_SELFSIGNED_URL=https://127.0.0.1:18449
export COURIER_NGINX_TLS12_URL=https://127.0.0.1:18450
export COURIER_NGINX_GOAWAY_URL=https://127.0.0.1:18451
export COURIER_NGINX_STREAMLIMIT_URL=https://127.0.0.1:18452
export COURIER_PY_MTLS_URL=https://127.0.0.1:18453
export COURIER_SSE_URL=http://127.0.0.1:18454
export COURIER_WS_URL=ws://127.0.0.1:18455
export COURIER_WS_PLAIN_URL=ws://127.0.0.1:18456
export COURIER_AIOHTTP_WS_URL=ws://127.0.0.1:18457
export COURIER_AIOHTTP_WS_PLAIN_URL=ws://127.0.0.1:18458
export COURIER_WSS_URL=wss://127.0.0.1:18459/websockets
export COURIER_WSS_PLAIN_URL=wss://127.0.0.1:18459/websockets-plain
export COURIER_AIOHTTP_WSS_URL=wss://127.0.0.1:18459/aiohttp
export COURIER_AIOHTTP_WSS_PLAIN_URL=wss://127.0.0.1:18459/aiohttp-plain
export COURIER_WSS_H2_ALPN_URL=wss://127.0.0.1:18443/websockets
export COURIER_TEST_CA_FILE=$tls/ca.crt
export COURIER_TEST_CA_DIR=$tls/capath
export COURIER_TEST_OTHER_CA_FILE=$tls/other-ca.crt
export COURIER_TEST_CLIENT_CERT=$tls/client.crt
export COURIER_TEST_CLIENT_KEY=$tls/client.key
export COURIER_TEST_CLIENT_COMBINED=$tls/client-combined.pem
export COURIER_TEST_CLIENT_P12=$tls/client.p12
export COURIER_TEST_CLIENT_P12_PASSWORD=courier
export COURIER_TEST_ROGUE_CLIENT_CERT=$tls/rogue-client.crt
export COURIER_TEST_ROGUE_CLIENT_KEY=$tls/rogue-client.key
export COURIER_TEST_SERVER_PIN='$(cat "$tls/server.pin")'
export COURIER_TEST_WRONG_PIN='$(cat "$tls/wrong.pin")'
$proxy_env
$h3_env
$echo_env
ENV
