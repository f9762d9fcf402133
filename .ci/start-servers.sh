#!/usr/bin/env bash
# Starts the real servers Courier's interop tests use and prints the environment to export.
#   httpbin under gunicorn on 127.0.0.1:18181
#   nginx on 127.0.0.1:18180 (HTTP) and 127.0.0.1:18443 (HTTPS, certificate from a fresh CA)
set -euo pipefail
root=${COURIER_CI_ROOT:-/tmp/courier-ci}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$root"/{www,logs,tmp,tls}

# Fixtures: random bytes (Range, ETag, Last-Modified) and compressible text.
[ -f "$root/www/random-1m.bin" ] || head -c 1048576 /dev/urandom > "$root/www/random-1m.bin"
[ -f "$root/www/text-1m.txt" ] || python3 -c "import sys; sys.stdout.write(('courier interop line\n' * 52429)[:1048576])" > "$root/www/text-1m.txt"
echo '{"name":"courier","ok":true}' > "$root/www/small.json"

# A CA and a server certificate for 127.0.0.1.
if [ ! -f "$root/tls/server.crt" ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=Courier Test CA" \
    -keyout "$root/tls/ca.key" -out "$root/tls/ca.crt" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout "$root/tls/server.key" -out "$root/tls/server.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n' > "$root/tls/ext.cnf"
  openssl x509 -req -in "$root/tls/server.csr" -CA "$root/tls/ca.crt" -CAkey "$root/tls/ca.key" -CAcreateserial \
    -days 2 -extfile "$root/tls/ext.cnf" -out "$root/tls/server.crt" 2>/dev/null
fi

sed -e "s#@ROOT@#$root#g" -e "s#@HTTP_PORT@#18180#g" -e "s#@HTTPS_PORT@#18443#g" "$here/nginx.conf.in" > "$root/nginx.conf"
# A previous run's nginx must be gone (not just signalled) before the new one binds the ports.
if [ -f "$root/nginx.pid" ] && old=$(cat "$root/nginx.pid") && kill "$old" 2>/dev/null; then
  for _ in $(seq 1 50); do kill -0 "$old" 2>/dev/null || break; sleep 0.1; done
fi
nginx -c "$root/nginx.conf"

# Likewise for a previous gunicorn; then start it as a daemon, so that it holds none of this
# script's descriptors (a caller reading our output with $(...) would otherwise wait for it).
if [ -f "$root/gunicorn.pid" ] && old=$(cat "$root/gunicorn.pid") && kill "$old" 2>/dev/null; then
  for _ in $(seq 1 100); do kill -0 "$old" 2>/dev/null || break; sleep 0.1; done
fi
pkill -f "gunicorn.*18181" 2>/dev/null || true
for _ in $(seq 1 50); do pgrep -f "gunicorn.*18181" >/dev/null || break; sleep 0.1; done
rm -f "$root/gunicorn.pid"
(cd "$root" && gunicorn --daemon -b 127.0.0.1:18181 -w 2 --pid "$root/gunicorn.pid" \
  --log-file "$root/logs/gunicorn.log" httpbin:app </dev/null >/dev/null 2>&1)

for _ in $(seq 1 50); do
  curl -sf http://127.0.0.1:18181/get >/dev/null && curl -sf http://127.0.0.1:18180/small.json >/dev/null && break
  sleep 0.2
done
curl -sf http://127.0.0.1:18181/get >/dev/null || { echo "httpbin did not start" >&2; cat "$root/logs/gunicorn.log" >&2; exit 1; }
curl -sf http://127.0.0.1:18180/small.json >/dev/null || { echo "nginx did not start" >&2; exit 1; }

cat <<ENV
export COURIER_HTTPBIN_URL=http://127.0.0.1:18181
export COURIER_NGINX_URL=http://127.0.0.1:18180
export COURIER_NGINX_HTTPS_URL=https://127.0.0.1:18443
export COURIER_TEST_CA_FILE=$root/tls/ca.crt
ENV
