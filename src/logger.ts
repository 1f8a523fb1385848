import pino, { type Logger } from 'pino';
import type { Config } from './config.ts';
import { maskCredentials } from './redact.ts';

/**
 * JSON logs. Keys, secrets and PII are redacted by path as a second line of defence: the code
 * never logs them on purpose (user_data is hashed before it exists anywhere but the request).
 * Every line written is also passed through `maskCredentials`: a key sent where it does not
 * belong (`?api_key=tw_live_…` in a URL logged at debug, a secret quoted in an error message)
 * or a password in a URL is masked whatever field carries it.
 */
export function createLogger(
  level: Config['logLevel'],
  destination?: pino.DestinationStream,
): Logger {
  return pino(
    {
      level,
      base: { service: 'trackway' },
      hooks: { streamWrite: maskCredentials },
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
