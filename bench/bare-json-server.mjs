// What both bare baselines share: a node:http server on a free port that reads each request's
// body, parses it as JSON (400 if it is not) and hands the value to `handle(event, res)`.
// SIGTERM closes it, runs `onClose`, and exits.
import { createServer } from 'node:http';

/** Answers like /v1/track: 200 with the event's id. */
export function answerTracked(res, event) {
  const body = JSON.stringify({
    success: true,
    event_id: event.event_id,
    message: 'Event tracked',
  });
  res.writeHead(200, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

export function serveJson(handle, onClose = () => {}) {
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      let event;
      try {
        event = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end('{"error":"Invalid request","message":"Malformed JSON body"}');
        return;
      }
      handle(event, res);
    });
  });
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`listening on http://127.0.0.1:${server.address().port}\n`);
  });
  process.on('SIGTERM', () =>
    server.close(() => {
      onClose();
      process.exit(0);
    }),
  );
}
