// What the bare baselines share: a node:http server on a free port that reads each request's
// body (gunzipping it off the event loop when it says Content-Encoding: gzip, as the service
// does), parses it as JSON (400 if it is not) and hands the value to `handle(event, res)`.
// SIGTERM closes it, runs `onClose`, and exits.
import { createServer } from 'node:http';
import { gunzip } from 'node:zlib';

/**
 * Answers like /v1/track (200 with the event's id) or, for a batch ({events: [...]}), like
 * /v1/track/batch: one slot per event.
 */
export function answerTracked(res, event) {
  const body = JSON.stringify(
    Array.isArray(event.events)
      ? {
          accepted: event.events.length,
          deduplicated: 0,
          rejected: 0,
          results: event.events.map((e, index) => ({
            index,
            status: 200,
            success: true,
            event_id: e.event_id,
            message: 'Event tracked',
          })),
        }
      : { success: true, event_id: event.event_id, message: 'Event tracked' },
  );
  res.writeHead(200, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

function malformed(res) {
  res.writeHead(400, { 'content-type': 'application/json' });
  res.end('{"error":"Invalid request","message":"Malformed JSON body"}');
}

export function serveJson(handle, onClose = () => {}) {
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const parse = (buffer) => {
        let event;
        try {
          event = JSON.parse(buffer.toString('utf8'));
        } catch {
          return malformed(res);
        }
        handle(event, res);
      };
      const body = Buffer.concat(chunks);
      if (req.headers['content-encoding'] !== 'gzip') return parse(body);
      gunzip(body, (error, inflated) => (error ? malformed(res) : parse(inflated)));
    });
  });
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`listening on http://127.0.0.1:${server.address().port}\n`);
  });
  process.on('SIGTERM', () =>
    server.close(async () => {
      await onClose();
      process.exit(0);
    }),
  );
}
