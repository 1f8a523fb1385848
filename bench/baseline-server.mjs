// The baseline: a bare node:http server that reads and parses the same JSON event and answers
// like /v1/track would, with no validation, storage or framework. Run as its own process.
import { answerTracked, serveJson } from './bare-json-server.mjs';

serveJson((event, res) => {
  // A batch ({events: [...]}) is answered with one slot per event, like /v1/track/batch.
  if (!Array.isArray(event.events)) return answerTracked(res, event);
  const body = JSON.stringify({
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
  });
  res.writeHead(200, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
});
