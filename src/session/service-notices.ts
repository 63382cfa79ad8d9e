// What the service says about itself: Deprecation and Sunset response headers (RFC 8594). Each
// endpoint's notice is logged once per run as a warning, counted, and recorded for `status`.
import type { Logger } from 'pino';
import type { DeprecationNotice } from '../api/http.js';
import type { ServiceNoticeSink } from '../api/service-call.js';
import { DEPRECATION_KEY_PREFIX } from '../db/setting-keys.js';
import type { WriterClient } from '../db/writer/writer-client.js';
import type { Clock } from '../lib/days.js';
import { errorMessage } from '../lib/errors.js';
import { redact } from '../lib/redact.js';

export interface DeprecationObserver {
  deprecationAnnounced?(endpoint: string): void;
}

export interface ServiceNoticesOptions {
  readonly writer: WriterClient;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly observer?: DeprecationObserver | undefined;
}

export class ServiceNotices implements ServiceNoticeSink {
  readonly #options: ServiceNoticesOptions;
  /** Endpoints logged in this run. */
  readonly #loggedThisRun = new Set<string>();
  /** What was last recorded per endpoint, so the file is written only when a value changes. */
  readonly #recorded = new Map<string, string>();

  constructor(options: ServiceNoticesOptions) {
    this.#options = options;
  }

  startRun(): void {
    this.#loggedThisRun.clear();
  }

  deprecation(endpoint: string, notice: DeprecationNotice): void {
    const { writer, logger, clock, observer } = this.#options;
    // Header values come from the network: they pass the redaction point like any other text.
    const deprecation = notice.deprecation === null ? null : redact(notice.deprecation);
    const sunset = notice.sunset === null ? null : redact(notice.sunset);
    observer?.deprecationAnnounced?.(endpoint);
    if (!this.#loggedThisRun.has(endpoint)) {
      this.#loggedThisRun.add(endpoint);
      logger.warn(
        { endpoint, deprecation, sunset },
        `the service announces that ${endpoint} is deprecated (Deprecation: ${deprecation ?? '(none)'}, Sunset: ${sunset ?? '(none)'}); plan the move before the sunset`,
      );
    }
    const value = JSON.stringify({ deprecation, sunset });
    if (this.#recorded.get(endpoint) === value) return;
    this.#recorded.set(endpoint, value);
    // Told from inside a response's handling: recorded in the background; a failure only leaves `status` without it.
    writer.call('recordSetting', { key: `${DEPRECATION_KEY_PREFIX}${endpoint}`, value, now: clock().toISOString() }).catch((error: unknown) => {
      this.#recorded.delete(endpoint);
      logger.warn({ endpoint, error: errorMessage(error) }, 'could not record the service notice for status');
    });
  }
}
