// pino JSON lines on stdout; anything that looks like a key is redacted on the way out.
import pino, { type LevelWithSilent, type Logger } from 'pino';
import { redact } from './redact.js';

export interface MirrorLogger {
  readonly logger: Logger;
  /** Writes what is buffered; call before the process exits. */
  flush(): void;
}

export interface LoggerOptions {
  /**
   * Called before each line is written; with it, lines are written at once rather than buffered,
   * so that a progress line on the same terminal can be erased before each (cli/terminal-line.ts).
   */
  readonly beforeWrite?: (() => void) | undefined;
}

export function createLogger(level: LevelWithSilent, options: LoggerOptions = {}): MirrorLogger {
  const { beforeWrite } = options;
  const destination = pino.destination({ dest: 1, sync: beforeWrite !== undefined });
  const logger = pino(
    {
      level,
      base: { name: 'threat-mirror' },
      timestamp: pino.stdTimeFunctions.isoTime,
      // Keys travel as Secret objects that print as [redacted]; this catches any raw header too.
      redact: { paths: ['apiKey', '*.apiKey', 'headers["x-api-key"]', '*.headers["x-api-key"]'], censor: '[redacted]' },
      // And every finished line passes the one redaction point: a key echoed in an error body or a
      // record, or a URL with credentials, is removed whatever field it sits in.
      hooks: {
        streamWrite: (line) => {
          beforeWrite?.();
          return redact(line);
        },
      },
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
