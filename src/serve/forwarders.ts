// What the serving thread asks of the main thread and waits for: a probe's answer (the probes must
// go on saying whether the *main* thread answers) and a fresh lookup's (the main thread holds the
// keys: daemon/fresh-http.ts). Each question has an id; its answer comes back as a message.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FreshAnswer, FreshJudgement } from '../lookup/fresh-lookup.js';
import type { FromServingThread, ProbeAnswer } from './protocol.js';

type Post = (message: FromServingThread) => void;

/**
 * The probes (/healthz, /readyz, /startupz, /metrics), each asked of the main thread and answered
 * with what it says. They wait for that answer as long as it takes: the orchestrator's own probe
 * timeout decides what "stuck" is.
 */
export class ProbeForwarder {
  readonly #post: Post;
  readonly #waiting = new Map<number, ServerResponse>();
  #next = 1;

  constructor(post: Post) {
    this.#post = post;
  }

  forward(request: IncomingMessage, response: ServerResponse, path: string): void {
    const id = this.#next++;
    this.#waiting.set(id, response);
    response.once('close', () => this.#waiting.delete(id));
    this.#post({ kind: 'probe', id, method: request.method ?? 'GET', path });
  }

  answer(id: number, answer: ProbeAnswer): void {
    const response = this.#waiting.get(id);
    this.#waiting.delete(id);
    if (response && !response.writableEnded) sendAnswer(response, answer);
  }
}

/** A fresh lookup's question, asked of the main thread. */
export class FreshForwarder {
  readonly #post: Post;
  readonly #waiting = new Map<number, (answers: readonly FreshAnswer[]) => void>();
  #next = 1;

  constructor(post: Post) {
    this.#post = post;
  }

  /** An answer's `values`, each answered; `judged`: the organizations asked about (`?org=`: that one), as the answer's verdict judges them. */
  ask(values: readonly string[], judged: readonly FreshJudgement[]): Promise<readonly FreshAnswer[]> {
    const id = this.#next++;
    return new Promise((resolve) => {
      this.#waiting.set(id, resolve);
      // Only what the main thread reads: the judgement's other fields stay on this thread.
      this.#post({ kind: 'fresh', id, values, judged: judged.map(({ organization, completeThrough, problems }) => ({ organization, completeThrough, problems })) });
    });
  }

  answer(id: number, answers: readonly FreshAnswer[]): void {
    this.#waiting.get(id)?.(answers);
    this.#waiting.delete(id);
  }
}

export function sendAnswer(response: ServerResponse, answer: ProbeAnswer): void {
  response.writeHead(answer.status, { 'content-type': answer.contentType, 'cache-control': 'no-store' });
  response.end(answer.body);
}
