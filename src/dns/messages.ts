// DNS messages on the wire, through dns-packet (the npm standard for the wire format: it encodes
// and decodes every record type used here; it has no server, no name compression on encode and no
// TSIG, none of which a primary of one zone needs). Header flags are composed here: opcode and
// response code live in the flags word (RFC 1035 4.1.1).
import { type Answer, AUTHORITATIVE_ANSWER, type DecodedPacket, decode, encode, encodingLength, type Question, RECURSION_DESIRED } from 'dns-packet';

export const OPCODE = { QUERY: 0, NOTIFY: 4 } as const;
export const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5, NOTAUTH: 9 } as const;
export type RcodeName = keyof typeof RCODE;

/** A TCP message holds at most 65,535 bytes; transfers fill messages up to this, leaving room for the header and question. */
const TRANSFER_MESSAGE_BYTES = 60_000;

export function opcodeOf(packet: DecodedPacket): number {
  return ((packet.flags ?? 0) >> 11) & 0xf;
}

/** A decoded query, or undefined for what is no query at all (garbage, a response, no header). */
export function decodeQuery(message: Buffer): DecodedPacket | undefined {
  if (message.length < 12) return undefined;
  let packet: DecodedPacket;
  try {
    packet = decode(message);
  } catch {
    return undefined;
  }
  if (packet.flag_qr) return undefined;
  return packet;
}

/**
 * Whether the query's question reads back as it was sent, so that an answer echoes it unchanged.
 * dns-packet reads a name's bytes as UTF-8 text: a label of other bytes (or one holding a dot, or
 * an unknown class) would be echoed altered, a label grown past 63 bytes: an answer no client can
 * read (the DNS fuzzer found it). Such a query is answered FORMERR with no question.
 */
export function questionReadsBack(query: DecodedPacket, message: Buffer): boolean {
  const questions = query.questions ?? [];
  if (questions.length === 0) return true;
  let section: Buffer;
  try {
    section = encode({ id: 0, type: 'query', questions }).subarray(12);
  } catch {
    return false;
  }
  return message.subarray(12, 12 + section.length).equals(section);
}

export function response(query: DecodedPacket, rcode: RcodeName, answers: Answer[] = [], authorities: Answer[] = []): Buffer {
  const flags = AUTHORITATIVE_ANSWER | ((query.flags ?? 0) & RECURSION_DESIRED) | (opcodeOf(query) << 11) | RCODE[rcode];
  return encode({ id: query.id ?? 0, type: 'response', flags, questions: query.questions ?? [], answers, authorities });
}

/**
 * The answer to a query whose handling failed: the query's question echoed when it encodes, else
 * the header alone (its id, opcode and RD kept, no records): something a client can take as final.
 */
export function failureResponse(message: Buffer, query: DecodedPacket | undefined, rcode: RcodeName): Buffer | undefined {
  if (query !== undefined) {
    try {
      return response(query, rcode);
    } catch {
      // the question itself does not encode: the header alone
    }
  }
  if (message.length < 12) return undefined;
  const header = Buffer.alloc(12);
  message.copy(header, 0, 0, 2);
  const flags = message.readUInt16BE(2);
  header.writeUInt16BE(0x8000 | (flags & 0x7800) | AUTHORITATIVE_ANSWER | (flags & RECURSION_DESIRED) | RCODE[rcode], 2);
  return header;
}

/** Groups a transfer's records into messages that each fit a TCP message, and encodes them. */
export function* transferMessages(query: DecodedPacket, records: Iterable<Answer>): Generator<Buffer> {
  const questions: Question[] = query.questions ?? [];
  let batch: Answer[] = [];
  let bytes = 0;
  for (const record of records) {
    // Names are not compressed on encode: a record costs its name, 10 bytes of type, class, TTL and
    // length, and its data (at most an SOA's two names and 20 bytes).
    const size = record.name.length + 2 + 10 + (record.type === 'SOA' ? 60 + record.name.length : record.type === 'CNAME' ? 1 : 256);
    if (bytes + size > TRANSFER_MESSAGE_BYTES && batch.length > 0) {
      yield encode({ id: query.id ?? 0, type: 'response', flags: AUTHORITATIVE_ANSWER, questions, answers: batch });
      batch = [];
      bytes = 0;
    }
    batch.push(record);
    bytes += size;
  }
  if (batch.length > 0) yield encode({ id: query.id ?? 0, type: 'response', flags: AUTHORITATIVE_ANSWER, questions, answers: batch });
}

/** A NOTIFY (RFC 1996) for the zone, with its new SOA in the answer section as a hint. */
export function notifyMessage(id: number, zone: string, soa: Answer): Buffer {
  return encode({ id, type: 'query', flags: AUTHORITATIVE_ANSWER | (OPCODE.NOTIFY << 11), questions: [{ type: 'SOA', name: zone, class: 'IN' }], answers: [soa] });
}

export { encodingLength };
