// The writer thread: the only connection that changes the mirror. It opens (and migrates) the file,
// then answers the main thread's calls (protocol.ts) on its own connection, so the main thread goes
// on fetching and parsing while SQLite works, and never waits for a lock.
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { type Answer, MirrorWriter } from './mirror-writer.js';
import { START_ID, type WriterRequest, type WriterResponse, type WriterStart, type WriterThreadData } from './protocol.js';
import type { WalSwitch } from './writer-pragmas.js';
import { openWriterConnection } from './writer-connection.js';
import { releaseUnreachable } from '../sqlite.js';

if (parentPort) serve(parentPort, workerData as WriterThreadData);

function serve(port: MessagePort, data: WriterThreadData): void {
  const post = (response: WriterResponse): void => port.postMessage(response);
  /** The close's id once it is asked for: its answer is the thread's last message. */
  let closeId: number | undefined;
  const answer: Answer = (id, outcome) => {
    const response = responseTo(id, outcome);
    if (id !== closeId) return post(response);
    // The client ends the thread on this answer: first the connection's statements are freed (sqlite.ts).
    setImmediate(() => {
      releaseUnreachable();
      post(response);
      port.close();
    });
  };
  start(data, answer).then(
    ({ writer, started }) => {
      post({ id: START_ID, result: started });
      // Calls sent while the thread started waited at the port, in order; they are taken from here on.
      const take = (request: WriterRequest): void => {
        if (request.kind === 'close') {
          closeId = request.id;
          port.off('message', take); // nothing holds the writer (and its statements) after this call
        }
        writer.take(request);
      };
      port.on('message', take);
    },
    (error: unknown) => {
      post({ id: START_ID, error: { message: error instanceof Error ? error.message : String(error) } });
      port.close();
    },
  );
}

function responseTo(id: number, outcome: Parameters<Answer>[1]): WriterResponse {
  if ('result' in outcome) return { id, result: outcome.result };
  const code = (outcome.error as { code?: unknown }).code;
  return { id, error: { message: outcome.error.message, ...(typeof code === 'string' ? { code } : {}) } };
}

async function start(data: WriterThreadData, answer: Answer): Promise<{ writer: MirrorWriter; started: WriterStart }> {
  let walSwitch: WalSwitch | null = null;
  const sqlite = await openWriterConnection(data.dbPath, { autoCheckpoint: data.autoCheckpoint, onWalSwitch: (switched) => (walSwitch = switched) });
  try {
    const writer = new MirrorWriter(sqlite, { autoCheckpoint: data.autoCheckpoint, answer, stampsAfterMs: data.stampsAfterMs });
    return { writer, started: { ...(await writer.start(data.now)), walSwitch } };
  } catch (error) {
    sqlite.close();
    throw error;
  }
}
