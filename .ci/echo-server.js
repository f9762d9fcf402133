#!/usr/bin/env node
// Node.js's own HTTP/1.1 server (a server nobody here wrote) for Courier's interop tests of full
// duplex and trailers (#39). Python's servers cannot do the trailer half: hypercorn and aiohttp parse
// a request's trailer section and drop it, and hypercorn sends response trailers over HTTP/2 only.
//
//   /echo   the response head at once (chunked), then each request body chunk written back as it
//           arrives, then, once the request ended, its trailer fields as the response's trailers, in
//           the order received, and `X-Request-Trailer-Count` (how many request trailer lines came)
//
// Usage: echo-server.js --port P [--pid-file F]. Listens on 127.0.0.1; exits on SIGTERM or SIGINT,
// removing its pid file.
'use strict';
const fs = require('fs');
const http = require('http');

const options = { port: 0, pidFile: null };
for (let index = 2; index < process.argv.length; index += 2) {
  const [flag, value] = [process.argv[index], process.argv[index + 1]];
  if (flag === '--port') options.port = Number(value);
  else if (flag === '--pid-file') options.pidFile = value;
  else { console.error(`echo-server.js: unknown argument ${flag}`); process.exit(2); }
}
if (!options.port) { console.error('echo-server.js: --port is required'); process.exit(2); }

const server = http.createServer((request, response) => {
  if (request.url.split('?')[0] !== '/echo') {
    response.writeHead(request.url === '/health' ? 200 : 404, { 'Content-Type': 'text/plain' });
    response.end(request.url === '/health' ? 'ok' : 'not found');
    return;
  }
  response.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Transfer-Encoding': 'chunked' });
  response.flushHeaders();
  request.on('data', (chunk) => response.write(chunk));
  request.on('end', () => {
    const raw = request.rawTrailers;
    const trailers = [];
    for (let index = 0; index < raw.length; index += 2) trailers.push([raw[index], raw[index + 1]]);
    trailers.push(['X-Request-Trailer-Count', String(trailers.length)]);
    response.addTrailers(trailers);
    response.end();
  });
  request.on('error', () => response.destroy());
});
server.listen(options.port, '127.0.0.1', () => {
  if (options.pidFile) fs.writeFileSync(options.pidFile, `${process.pid}\n`);
  console.log(`echo-server.js: listening on 127.0.0.1:${options.port}`);
});
const stop = () => {
  if (options.pidFile) { try { fs.unlinkSync(options.pidFile); } catch (_) { /* already gone */ } }
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
