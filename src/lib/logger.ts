// pino JSON lines on stdout; anything that looks like a key is redacted on the way out.
import pino, { type LevelWithSilent, type Logger } from 'pino';
import { redact } from './redact.js';

export interface MirrorLogger {
  readonly logger: Logger;
  /** Writes what is buffered, at once; for a process about to exit now (a second signal). */
  flush(): void;
  /**
   * Waits until every line logged so far is written, in order; for the end of a command. A
   * synchronous flush while an earlier write is still in flight writes the later lines first
   * (seen: "stopped" before the error that stopped the daemon).
   */
  drain(): Promise<void>;
}

/** How long drain() waits for stdout before it writes what is left at once. */
const DRAIN_TIMEOUT_MS = 2_000;

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
  const flush = (): void => {
    try {
      destination.flushSync();
    } catch {
      // nothing buffered or stdout already closed
    }
  };
  const drain = async (): Promise<void> => {
    let timer: NodeJS.Timeout | undefined;
    const drained = new Promise<void>((resolve) => {
      try {
        destination.flush(() => resolve());
      } catch {
        resolve(); // stdout already closed
      }
    });
    await Promise.race([drained, new Promise<void>((resolve) => (timer = setTimeout(resolve, DRAIN_TIMEOUT_MS)))]);
    clearTimeout(timer);
    flush();
  };
  return { logger, flush, drain };
}
