// The baseline: a bare node:http server that reads and parses the same JSON event (or batch)
// and answers like /v1/track (or /v1/track/batch) would, with no validation, storage or
// framework. Run as its own process.
import { answerTracked, serveJson } from './bare-json-server.mjs';

serveJson((event, res) => answerTracked(res, event));
