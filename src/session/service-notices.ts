// What the service says about itself: Deprecation and Sunset response headers (RFC 8594). Each
// endpoint's notice is logged once per run as a warning, counted, and recorded for `status`.
import type { Logger } from 'pino';
import type { DeprecationNotice } from '../api/http.js';
import type { ServiceNoticeSink } from '../api/service-call.js';
import type { MirrorStore } from '../db/mirror-store.js';
import type { Clock } from '../lib/days.js';
import { redact } from '../lib/redact.js';
import { DEPRECATION_SETTING_PREFIX } from '../commands/status.js';

export interface DeprecationObserver {
  deprecationAnnounced?(endpoint: string): void;
}

export class ServiceNotices implements ServiceNoticeSink {
  /** Endpoints logged in this run. */
  readonly #loggedThisRun = new Set<string>();
  /** What was last recorded per endpoint, so the file is written only when a value changes. */
  readonly #recorded = new Map<string, string>();

  constructor(
    private readonly store: MirrorStore,
    private readonly logger: Logger,
    private readonly clock: Clock,
    private readonly observer?: DeprecationObserver | undefined,
  ) {}

  startRun(): void {
    this.#loggedThisRun.clear();
  }

  deprecation(endpoint: string, notice: DeprecationNotice): void {
    // Header values come from the network: they pass the redaction point like any other text.
    const deprecation = notice.deprecation === null ? null : redact(notice.deprecation);
    const sunset = notice.sunset === null ? null : redact(notice.sunset);
    this.observer?.deprecationAnnounced?.(endpoint);
    if (!this.#loggedThisRun.has(endpoint)) {
      this.#loggedThisRun.add(endpoint);
      this.logger.warn(
        { endpoint, deprecation, sunset },
        `the service announces that ${endpoint} is deprecated (Deprecation: ${deprecation ?? '(none)'}, Sunset: ${sunset ?? '(none)'}); plan the move before the sunset`,
      );
    }
    const value = JSON.stringify({ deprecation, sunset });
    if (this.#recorded.get(endpoint) === value) return;
    this.#recorded.set(endpoint, value);
    this.store.recordSetting(`${DEPRECATION_SETTING_PREFIX}${endpoint}`, value, this.clock().toISOString());
  }
}
