// A real HTTP server on 127.0.0.1 that behaves like the service (threats-api.md) over generated
// data, with switchable faults, request accounting, and a way to change the data while a sync runs.
// The parts live beside it: routes.ts (which handler), threats-endpoint.ts, reports-endpoint.ts,
// control-api.ts (/__standin/*), threat-store.ts (the data), request-log.ts (the accounting).
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createStandinContext, type StandinContext } from './context.js';
import { sendJson } from './http.js';
import { route } from './routes.js';
import type { StandinReport } from './reports.js';
import { assertOffset } from './timestamps.js';
import type { Standin, StandinOptions } from './types.js';

export type { RequestRecord, Standin, StandinKeys, StandinOptions, StandinStats } from './types.js';
export { EARLY_REQUEST_GRACE_MS } from './request-log.js';

export async function startStandin(options: StandinOptions): Promise<Standin> {
  const context = createStandinContext(options);
  const openSockets = new Set<Socket>();
  const server: Server = createServer((request, response) => {
    void route(context, request, response).catch((error: unknown) => {
      if (!response.headersSent) sendJson(response, 500, { message: String(error) });
    });
  });
  server.on('connection', (socket) => {
    openSockets.add(socket);
    socket.on('close', () => openSockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const close = (): Promise<void> =>
    new Promise<void>((resolve) => {
      for (const response of context.hanging) response.destroy();
      for (const socket of openSockets) socket.destroy();
      server.close(() => resolve());
    });
  return standinHandle(`http://${address.address}:${address.port}`, context, close);
}

/** What a test holds: the server's address and the ways to change its data and behaviour as it runs. */
function standinHandle(url: string, context: StandinContext, close: () => Promise<void>): Standin {
  const { threats, reports, log } = context;
  return {
    url,
    faults: context.faults,
    stats: log,
    addThreats: (added) => threats.add(added),
    removeThreats: (ids) => threats.remove(ids),
    updateThreat: (id, patch) => threats.update(id, patch),
    onListRequest: (event) => context.listEvents.add(event),
    threatsVisibleTo: (key) => threats.visibleTo(key),
    setLatency: (ms) => {
      context.latencyMs = ms;
    },
    setBlockedAtOffset: (offset) => {
      context.blockedAtOffset = offset === null ? undefined : assertOffset(offset);
    },
    reportsOf: (organization) => reports.filter((report) => report.organization === organization),
    updateReport: (id, change) => {
      const report = reports.find((candidate) => BigInt(candidate.id) === BigInt(id));
      if (!report) throw new Error(`no report ${id}`);
      change(report);
    },
    addReports: (added) => {
      reports.push(...added);
    },
    removeReports: (ids) => {
      const gone = new Set(ids.map((id) => BigInt(id)));
      for (let index = reports.length - 1; index >= 0; index -= 1) {
        if (gone.has(BigInt((reports[index] as StandinReport).id))) reports.splice(index, 1);
      }
    },
    setReportsVariant: (variant) => {
      context.reportsVariant = variant;
    },
    setReportsEnabled: (enabled) => {
      context.reportsEnabled = enabled;
    },
    waitForRequests: (count) => log.waitForRequests(count),
    waitUntilIdle: () => log.waitUntilIdle(),
    close,
  };
}
