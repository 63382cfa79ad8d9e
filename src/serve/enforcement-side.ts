// The serving thread's part of enforcement: the DNS primary of the response policy zone, the
// NOTIFYs after a change, and the HTTP feeds. It only reads: the export index (written by the
// export job thread's refreshes alone, docs/architecture.md) and the mirror, on read-only
// connections of its own, so a zone transfer or a feed never waits behind the sync, and the sync
// never waits behind them.
import type { Allowlist } from '../allowlist/allowlist-entries.js';
import { AddressAcl } from '../dns/acl.js';
import { type DnsServer, startDnsServer } from '../dns/dns-server.js';
import { Notifier } from '../dns/notify.js';
import { ZoneReader } from '../dns/zone-reader.js';
import { createFeedHandler, type FeedHandler } from './export-feeds.js';
import type { InFlightBudget } from './http-limits.js';
import { describeError, type ReportFailure } from './guard.js';
import type { EnforcementCommand, EnforcementData, EnforcementEvent } from './protocol.js';

export interface EnforcementSide {
  readonly feeds: FeedHandler;
  command(command: EnforcementCommand): void;
  close(): Promise<void>;
}

/** What the serving thread shares with its enforcement side. */
export interface SharedWithEnforcement {
  /** The thread's requests and bytes in flight, which feeds share with lookups (and DNS with both). */
  readonly budget: InFlightBudget;
  /** THREAT_MIRROR_ALLOWLIST as the thread has it now. */
  readonly allowlist: () => Allowlist | undefined;
  /** The guard's report of a failed handler (serve/guard.ts). */
  readonly report: ReportFailure;
}

export async function startEnforcementSide(data: EnforcementData, emit: (event: EnforcementEvent) => void, { budget, allowlist, report }: SharedWithEnforcement): Promise<EnforcementSide> {
  let indexReady = false;
  const feeds = createFeedHandler({
    dbPath: data.dbPath,
    indexPath: () => (indexReady ? data.indexPath : undefined),
    folder: data.feedsFolder,
    timers: data.timers,
    maxAgeSeconds: data.feedMaxAgeSeconds,
    budget,
    allowlist,
    onError: (error) => report({ listener: 'http', route: '/v1/exports/', answer: '500', ...describeError(error) }),
  });
  let server: DnsServer | undefined;
  let notifier: Notifier | undefined;
  let zone: ZoneReader | undefined;
  if (data.dns !== undefined && data.indexPath !== undefined) {
    const settings = { zone: data.dns.zone, timers: data.timers };
    const tsig = data.dns.tsig === undefined ? undefined : { name: data.dns.tsig.name, secret: Buffer.from(data.dns.tsig.secret, 'base64') };
    zone = new ZoneReader(data.indexPath, settings);
    server = await startDnsServer({
      host: data.dns.host,
      port: data.dns.port,
      acl: new AddressAcl(data.dns.allow),
      zone,
      tsig,
      memory: budget,
      observer: {
        answered: (kind, rcode) => emit({ type: 'dns-answered', kind, rcode }),
        malformed: (transport) => emit({ type: 'dns-malformed', transport }),
        tcpClosed: (reason) => emit({ type: 'dns-tcp-closed', reason }),
        transferred: (kind, records, ms) => emit({ type: 'dns-transferred', kind, records, ms }),
        failed: (transport, kind, answer, error) => report({ listener: `dns-${transport}`, route: kind, answer, ...describeError(error) }),
        error: (error) => emit({ type: 'error', message: `DNS: ${error instanceof Error ? error.message : String(error)}` }),
      },
    });
    emit({ type: 'dns-listening', port: server.port });
    if (data.dns.notify.length > 0) {
      notifier = new Notifier({ source: data.dns.host, settings, targets: data.dns.notify, tsig, observer: { notified: (target, outcome) => emit({ type: 'dns-notified', target, outcome }) } });
    }
  }
  return {
    feeds,
    command: (command) => {
      indexReady = true;
      zone?.markReady();
      if (command.zoneChanged) notifier?.notify(command.serial);
    },
    close: async () => {
      notifier?.close();
      await server?.close();
      zone?.close();
      feeds.close();
    },
  };
}
