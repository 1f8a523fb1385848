/**
 * `Content-Encoding: gzip` request bodies (contract: accepted on the track routes; harmless on
 * the others). The route's size limit applies to the decoded bytes, and inflation stops the
 * moment they pass it, so a small gzip bomb costs at most one limit's worth of output.
 */
import { PassThrough, type Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { FastifyRequest } from 'fastify';
import { TrackwayError } from '../domain/errors.ts';
import { MAX_BODY_BYTES } from './errors.ts';

/** Fastify compares this with Content-Length (the encoded size) and with the limit. */
type DecodedStream = PassThrough & { receivedEncodedLength: number };

/** A preParsing step: the body as the JSON parser should see it. */
export function decodeBody(request: FastifyRequest, payload: Readable): Readable {
  const header = request.headers['content-encoding'];
  const encoding = header?.trim().toLowerCase();
  if (encoding === undefined || encoding === '' || encoding === 'identity') return payload;
  if (encoding !== 'gzip' && encoding !== 'x-gzip') {
    throw new TrackwayError(
      'unsupported_media_type',
      'Content-Encoding must be gzip (or identity)',
    );
  }
  const limit = request.routeOptions.bodyLimit ?? MAX_BODY_BYTES;
  const gunzip = createGunzip();
  const decoded = new PassThrough() as DecodedStream;
  decoded.receivedEncodedLength = 0;
  // Fastify may answer without reading the body (Content-Length over the limit); the error must
  // then not surface as an uncaught exception. When it does read, its own listener gets it.
  decoded.on('error', () => {});
  let length = 0;
  payload.on('data', (chunk: Buffer) => {
    decoded.receivedEncodedLength += chunk.length;
  });
  payload.on('error', (error) => decoded.destroy(error));
  gunzip.on('data', (chunk: Buffer) => {
    length += chunk.length;
    if (length > limit) {
      // Stop inflating now; the rest of the upload is read and discarded so the reply can go.
      payload.unpipe(gunzip);
      gunzip.destroy();
      payload.resume();
      decoded.destroy(
        new TrackwayError('payload_too_large', `Request body exceeds ${limit} bytes`),
      );
      return;
    }
    decoded.write(chunk);
  });
  gunzip.on('error', () => {
    decoded.destroy(new TrackwayError('invalid_request', 'Malformed gzip body'));
  });
  gunzip.on('end', () => decoded.end());
  payload.pipe(gunzip);
  return decoded;
}
