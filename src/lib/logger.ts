// pino JSON lines on stdout; anything that looks like a key is redacted on the way out.
import pino, { type LevelWithSilent, type Logger } from 'pino';
import { redact } from './redact.js';

export interface MirrorLogger {
  readonly logger: Logger;
  /** Writes what is buffered; call before the process exits. */
  flush(): void;
}

export function createLogger(level: LevelWithSilent): MirrorLogger {
  const destination = pino.destination({ dest: 1, sync: false });
  const logger = pino(
    {
      level,
      base: { name: 'threat-mirror' },
      timestamp: pino.stdTimeFunctions.isoTime,
      // Keys travel as Secret objects that print as [redacted]; this catches any raw header too.
      redact: { paths: ['apiKey', '*.apiKey', 'headers["x-api-key"]', '*.headers["x-api-key"]'], censor: '[redacted]' },
      // And every finished line passes the one redaction point: a key echoed in an error body or a
      // record, or a URL with credentials, is removed whatever field it sits in.
      hooks: { streamWrite: redact },
    },
    destination,
  );
  return {
    logger,
    flush: () => {
      try {
        destination.flushSync();
      } catch {
        // nothing buffered or stdout already closed
      }
    },
  };
}
