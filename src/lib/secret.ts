// A value that must never reach a log line, an error message or JSON output.
import { inspect } from 'node:util';
import { registerSecret } from './redact.js';

const REDACTED = '[redacted]';

export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
    // Whatever text the value ends up in (an echoed error body, a record), redact() removes it.
    registerSecret(value);
  }

  /** The only way to read the value: call sites that send it are easy to find. */
  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [inspect.custom](): string {
    return REDACTED;
  }
}
