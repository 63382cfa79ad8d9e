// What the DNS primary answers a query with: a message at once, or a transfer to stream (TCP
// only), behind the address list and, with a key, the TSIG check (dns-server.ts sends them).
import type { Answer, DecodedPacket } from 'dns-packet';
import type { AddressAcl } from './acl.js';
import { OPCODE, opcodeOf, type RcodeName, response } from './messages.js';
import { RPZ_TTL, SOA_MNAME, serialAfter } from '../lib/rpz-zone.js';
import { ResponseSigner, signBadTime, type TsigKey, unsignedError, verifyRequest } from './tsig.js';
import { soaRecord, type ZoneReader } from './zone-reader.js';

export type Transport = 'udp' | 'tcp';

/** What answering needs: the address list, the zone, the key, and where each answer is counted. */
export interface AnswerContext {
  readonly acl: AddressAcl;
  readonly zone: ZoneReader;
  readonly tsig?: TsigKey | undefined;
  /** One query answered: its kind (soa, ns, axfr, ixfr, other) and response code. */
  answered(kind: string, rcode: RcodeName): void;
}

export type Answered =
  | { readonly kind: 'message'; readonly message: Buffer }
  | { readonly kind: 'axfr' }
  | { readonly kind: 'ixfr'; readonly clientSerial: number };

/** A transfer to stream, with the signer of its messages when queries are signed. */
export type SignedAnswer = Exclude<Answered, { kind: 'message' }> & { readonly signer?: ResponseSigner | undefined };

/** TSIG's clock is the real one: a secondary's signature is checked against the time it was made. */
export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/**
 * answerQuery behind the TSIG check when a key is set: an unsigned query is REFUSED, one whose
 * signature fails gets NOTAUTH with the TSIG error, and what a signed one is answered with is signed.
 */
export function signedAnswer(query: DecodedPacket, message: Buffer, address: string, transport: Transport, context: AnswerContext): { readonly kind: 'message'; readonly message: Buffer } | SignedAnswer {
  const key = context.tsig;
  // Outside THREAT_MIRROR_DNS_ALLOW the answer is REFUSED whatever the signature: it tells nothing of the key.
  if (key === undefined || !context.acl.allows(address)) return answerQuery(query, address, transport, context);
  const kind = kindOf(query);
  const signature = verifyRequest(message, key, nowSeconds());
  if (signature.kind === 'unsigned') {
    context.answered(kind, 'REFUSED');
    return { kind: 'message', message: response(query, 'REFUSED') };
  }
  if (signature.kind === 'malformed') {
    context.answered(kind, 'FORMERR');
    return { kind: 'message', message: response(query, 'FORMERR') };
  }
  if (signature.kind === 'invalid') {
    context.answered(kind, 'NOTAUTH');
    return { kind: 'message', message: unsignedError(response(query, 'NOTAUTH'), signature, nowSeconds()) };
  }
  if (signature.kind === 'late') {
    context.answered(kind, 'NOTAUTH');
    return { kind: 'message', message: signBadTime(response(query, 'NOTAUTH'), key, signature, nowSeconds()) };
  }
  const signer = new ResponseSigner(key, signature);
  const answer = answerQuery(query, address, transport, context);
  return answer.kind === 'message' ? { kind: 'message', message: signer.sign(answer.message, nowSeconds()) } : { ...answer, signer };
}

/** The kind a query is counted under (threat_mirror_dns_queries_total{kind}). */
export function kindOf(query: DecodedPacket | undefined): string {
  const type = query?.questions?.[0]?.type;
  return type !== undefined && ['SOA', 'NS', 'AXFR', 'IXFR'].includes(type) ? type.toLowerCase() : 'other';
}

/** What a query gets: a message at once, or a transfer to stream (TCP only). */
function answerQuery(query: DecodedPacket, address: string, transport: Transport, context: AnswerContext): Answered {
  const { zone } = context;
  const reply = (kind: string, rcode: RcodeName, answers: Answer[] = [], authorities: Answer[] = []): Answered => {
    context.answered(kind, rcode);
    return { kind: 'message', message: response(query, rcode, answers, authorities) };
  };
  const question = query.questions?.[0];
  if (opcodeOf(query) !== OPCODE.QUERY) return reply('other', 'NOTIMP');
  if (question === undefined || (query.questions?.length ?? 0) !== 1) return reply('other', 'FORMERR');
  const kind = kindOf(query);
  if (!context.acl.allows(address)) return reply(kind, 'REFUSED');
  if (question.name.toLowerCase().replace(/\.$/, '') !== zone.settings.zone || (question.class ?? 'IN') !== 'IN') return reply(kind, 'REFUSED');
  const serial = zone.serial();
  if (serial === undefined) return reply(kind, 'SERVFAIL');
  const version = { soa: () => soaRecord(zone.settings, serial) };
  switch (question.type) {
    case 'SOA':
      return reply(kind, 'NOERROR', [version.soa()]);
    case 'NS':
      return reply(kind, 'NOERROR', [{ type: 'NS', name: zone.settings.zone, ttl: RPZ_TTL, class: 'IN', data: SOA_MNAME }]);
    case 'AXFR':
      return transport === 'tcp' ? { kind: 'axfr' } : reply(kind, 'REFUSED');
    case 'IXFR': {
      const clientSoa = query.authorities?.find((record) => record.type === 'SOA');
      if (clientSoa === undefined || clientSoa.type !== 'SOA') return reply(kind, 'FORMERR');
      const clientSerial = clientSoa.data.serial;
      if (clientSerial === undefined) return reply(kind, 'FORMERR');
      // Up to date (or ahead, RFC 1982), or over UDP: the current SOA alone (RFC 1995 sections 2 and 4:
      // over UDP it tells a client to come over TCP).
      if (clientSerial === serial || serialAfter(clientSerial, serial) || transport === 'udp') return reply(kind, 'NOERROR', [version.soa()]);
      return { kind: 'ixfr', clientSerial };
    }
    default:
      return reply(kind, 'NOERROR', [], [version.soa()]);
  }
}
