// For unit tests of code that refuses bad input: the message of the error it throws.
import { expect } from 'vitest';

/** Runs `run`, expects it to throw an instance of `type`, and returns the message. */
export function thrownMessage(run: () => unknown, type: abstract new (...args: never[]) => Error): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(type);
    return (error as Error).message;
  }
  throw new Error(`expected a ${type.name}`);
}
