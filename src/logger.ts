import pino, { type Logger } from 'pino';
import type { Config } from './config.ts';

/**
 * JSON logs. Keys, secrets and PII are redacted by path as a second line of defence: the code
 * never logs them on purpose (user_data is hashed before it exists anywhere but the request).
 */
export function createLogger(
  level: Config['logLevel'],
  destination?: pino.DestinationStream,
): Logger {
  return pino(
    {
      level,
      base: { service: 'trackway' },
      redact: {
        paths: [
          'req.headers.authorization',
          'headers.authorization',
          'authorization',
          'api_key',
          'apiKey',
          'secret',
          '*.secret',
          '*.api_key',
          'user_data',
          '*.user_data',
          'body',
          '*.body',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
