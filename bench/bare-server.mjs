// The peer for the HTTP benchmark: node:http answering every request with one precomputed
// body (received from the parent over IPC), reading the request body first as a real server
// must.
import http from 'node:http';

const port = Number(process.argv[2]);
process.once('message', (b64) => {
  const body = Buffer.from(b64, 'base64');
  http
    .createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
        res.end(body);
      });
    })
    .listen(port, '127.0.0.1');
});
