// `threat-mirror lookup VALUE…`: is this blocked? Each value is normalized like the derived
// columns and matched through their indexes; only threats currently blocked (not removed) count.
import type Database from 'better-sqlite3';
import { normalizeLookup } from './lookup-fields.js';

export type MatchedBy = 'content' | 'host' | 'registrable_domain' | 'address' | 'email' | 'email_domain';

export interface LookupMatch {
  readonly id: number;
  readonly content: string;
  readonly type: string;
  readonly blockedAt: string;
  readonly organizations: readonly string[];
  readonly matchedBy: MatchedBy;
}

export interface LookupResult {
  readonly value: string;
  readonly matches: readonly LookupMatch[];
}

interface Row {
  id: number;
  content: string;
  type: string;
  blocked_at: string;
  organizations: string;
}

const SELECT = `SELECT id, content, type, blocked_at, group_concat(organization, ',') AS organizations FROM current_threats`;

export function lookupThreats(sqlite: Database.Database, values: readonly string[], organization?: string): LookupResult[] {
  const scope = organization === undefined ? '' : ' AND organization = @organization';
  const by = (where: string) => sqlite.prepare(`${SELECT} WHERE ${where}${scope} GROUP BY id ORDER BY id`);
  const queries: Array<[MatchedBy, Database.Statement, (query: ReturnType<typeof normalizeLookup>) => Record<string, unknown> | undefined]> = [
    ['content', by('content = @value'), (query) => ({ value: query.content })],
    ['host', by('host = @value'), (query) => {
      const host = query.host ?? query.domain;
      return host === null ? undefined : { value: host };
    }],
    ['registrable_domain', by('registrable_domain = @value'), (query) => (query.domain ? { value: query.domain } : undefined)],
    [
      'address',
      by('address = @address AND (@chain IS NULL OR (address_namespace = @namespace AND address_chain = @chain))'),
      (query) => (query.address ? { address: query.address, namespace: query.addressNamespace, chain: query.addressChain } : undefined),
    ],
    ['email', by('email = @value'), (query) => (query.email ? { value: query.email } : undefined)],
    ['email_domain', by('email_domain = @value'), (query) => (query.domain ? { value: query.domain } : undefined)],
  ];
  return values.map((value) => {
    const query = normalizeLookup(value);
    const matches = new Map<number, LookupMatch>();
    for (const [matchedBy, statement, parameters] of queries) {
      const bound = parameters(query);
      if (bound === undefined) continue;
      for (const row of statement.all({ ...bound, ...(organization === undefined ? {} : { organization }) }) as Row[]) {
        if (matches.has(row.id)) continue;
        matches.set(row.id, {
          id: row.id,
          content: row.content,
          type: row.type,
          blockedAt: row.blocked_at,
          organizations: row.organizations.split(','),
          matchedBy,
        });
      }
    }
    return { value, matches: [...matches.values()] };
  });
}

export function formatLookup(results: readonly LookupResult[]): string {
  const lines: string[] = [];
  for (const result of results) {
    if (result.matches.length === 0) {
      lines.push(`${result.value}: not blocked`);
      continue;
    }
    lines.push(`${result.value}: blocked (${result.matches.length} ${result.matches.length === 1 ? 'match' : 'matches'})`);
    for (const match of result.matches) {
      lines.push(`  #${match.id} ${match.type} ${JSON.stringify(match.content)} blocked ${match.blockedAt} for ${match.organizations.join(', ')} (by ${match.matchedBy})`);
    }
  }
  return `${lines.join('\n')}\n`;
}
