// The deprecations the service announced (Deprecation / Sunset headers, RFC 8594), as the writer
// recorded them in mirror_settings (session/service-notices.ts): what `status` shows.
import { DEPRECATION_KEY_PREFIX } from '../setting-keys.js';
import type { Database } from '../sqlite.js';
import { readSettingsWithPrefix } from './status-reads.js';

/** A deprecation per endpoint. */
export interface ServiceNotice {
  readonly endpoint: string;
  readonly deprecation: string | null;
  readonly sunset: string | null;
  /** When a process last recorded these values: its first response carrying them, or a change. */
  readonly seenAt: string;
}

export function readServiceNotices(sqlite: Database): ServiceNotice[] {
  return readSettingsWithPrefix(sqlite, DEPRECATION_KEY_PREFIX).map((row) => {
    let parsed: { deprecation?: unknown; sunset?: unknown } = {};
    try {
      parsed = JSON.parse(row.value) as typeof parsed;
    } catch {
      // written by this program, so always JSON; an edited row shows as empty values
    }
    return {
      endpoint: row.key.slice(DEPRECATION_KEY_PREFIX.length),
      deprecation: typeof parsed.deprecation === 'string' ? parsed.deprecation : null,
      sunset: typeof parsed.sunset === 'string' ? parsed.sunset : null,
      seenAt: row.updatedAt,
    };
  });
}

