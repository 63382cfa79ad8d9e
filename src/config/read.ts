// Reading one variable: a value (blank counts as unset), checked, or a ConfigError that names the
// variable and what is wrong with it. Hand-written rather than a schema library: a few checks did
// not need one, and loading zod (95 modules) was ~70 ms of every run's start-up (docs/performance.md).
import { ConfigError, errorMessage } from '../lib/errors.js';
import { Secret } from '../lib/secret.js';

export type Environment = Readonly<Record<string, string | undefined>>;
export type FileReader = (path: string) => string;

/** An unset or blank variable counts as absent, as shells and compose files often leave them empty. */
export function value(env: Environment, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw.trim() === '' ? undefined : raw.trim();
}

/** A value that cannot be used: its message completes `NAME: "raw" …`. */
export class InvalidValue extends Error {}

export type Parse<T> = (raw: string) => T;

/** The variable's value parsed, or `fallback` when unset (a ConfigError when there is none). */
export function parseVariable<T>(env: Environment, name: string, fallback: T | undefined, parse: Parse<T>): T {
  const raw = value(env, name);
  if (raw === undefined) {
    if (fallback === undefined) throw new ConfigError(`${name}: missing; it is required`);
    return fallback;
  }
  try {
    return parse(raw);
  } catch (error) {
    if (error instanceof InvalidValue) throw new ConfigError(`${name}: "${raw}" ${error.message}`);
    throw error;
  }
}

export function oneOf<const T extends string>(choices: readonly T[]): Parse<T> {
  return (raw) => {
    const choice = choices.find((candidate) => candidate === raw);
    if (choice === undefined) throw new InvalidValue(`must be one of ${choices.join(', ')}`);
    return choice;
  };
}

/** A finite decimal number (as Number() reads it) within [min, max]; `whole` also refuses fractions. */
export function numberWithin(min: number, max: number, whole: boolean): Parse<number> {
  const kind = whole ? 'a whole number' : 'a number';
  return (raw) => {
    const parsed = Number(raw);
    if (!Number.isFinite(parsed) || (whole && !Number.isInteger(parsed))) throw new InvalidValue(`must be ${kind}`);
    if (parsed < min) throw new InvalidValue(`must be at least ${min}`);
    if (parsed > max) throw new InvalidValue(`must be at most ${max}`);
    return parsed;
  };
}

export function flag(env: Environment, name: string, fallback: boolean): boolean {
  const raw = value(env, name);
  if (raw === undefined) return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
  if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(`${name}: "${raw}" must be 1/true/yes/on or 0/false/no/off`);
}

/**
 * A secret given directly (`name`) or in a file (`name_FILE`: its content, trimmed); undefined
 * when neither is set. Returns which variable it came from, for messages (never the secret).
 */
export function readSecret(env: Environment, name: string, readFile: FileReader): { secret: Secret; variable: string } | undefined {
  const direct = value(env, name);
  const fileVariable = `${name}_FILE`;
  const file = value(env, fileVariable);
  if (direct !== undefined && file !== undefined) throw new ConfigError(`${name}: set either ${name} or ${fileVariable}, not both`);
  if (direct !== undefined) return { secret: new Secret(direct), variable: name };
  if (file === undefined) return undefined;
  let contents: string;
  try {
    contents = readFile(file);
  } catch (error) {
    throw new ConfigError(`${fileVariable}: cannot read ${file}: ${errorMessage(error)}`);
  }
  const secret = contents.trim();
  if (secret === '') throw new ConfigError(`${fileVariable}: ${file} is empty`);
  return { secret: new Secret(secret), variable: fileVariable };
}

/** One environment variable as --help lists it. */
export interface Variable {
  readonly name: string;
  /** How --help shows its default; '' when there is none to show. */
  readonly default: string;
  readonly meaning: string;
}

/** A variable with its default and its check in one place: `read` gives the value loadConfig keeps. */
export interface Setting<T> extends Variable {
  read(env: Environment): T;
}

export function wholeNumber(name: string, fallback: number, [min, max]: readonly [number, number], meaning: string): Setting<number> {
  return { name, default: String(fallback), meaning, read: (env) => parseVariable(env, name, fallback, numberWithin(min, max, true)) };
}

/** A number that may be left unset (`shown`: how --help says so). */
export function optionalNumber(name: string, shown: string, [min, max]: readonly [number, number], meaning: string, whole: boolean): Setting<number | undefined> {
  return { name, default: shown, meaning, read: (env) => (value(env, name) === undefined ? undefined : parseVariable(env, name, undefined, numberWithin(min, max, whole))) };
}

export function decimal(name: string, fallback: number, [min, max]: readonly [number, number], meaning: string): Setting<number> {
  return { name, default: String(fallback), meaning, read: (env) => parseVariable(env, name, fallback, numberWithin(min, max, false)) };
}

export function text(name: string, fallback: string, meaning: string): Setting<string> {
  return { name, default: fallback, meaning, read: (env) => value(env, name) ?? fallback };
}

export function choice<const T extends string>(name: string, choices: readonly T[], fallback: T, meaning: string): Setting<T> {
  return { name, default: fallback, meaning, read: (env) => parseVariable(env, name, fallback, oneOf(choices)) };
}

export function onOff(name: string, fallback: boolean, meaning: string): Setting<boolean> {
  return { name, default: fallback ? '1' : '0', meaning, read: (env) => flag(env, name, fallback) };
}
