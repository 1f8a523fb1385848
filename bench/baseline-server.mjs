// The baseline: a bare node:http server that reads and parses the same JSON event and answers
// like /v1/track would, with no validation, storage or framework. Run as its own process.
import { createServer } from 'node:http';

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
    // A batch ({events: [...]}) is answered with one slot per event, like /v1/track/batch.
    const body = Array.isArray(event.events)
      ? JSON.stringify({
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
        })
      : JSON.stringify({ success: true, event_id: event.event_id, message: 'Event tracked' });
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening on http://127.0.0.1:${server.address().port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
