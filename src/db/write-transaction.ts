// Writes beside the page-writer thread's take the write lock up front (BEGIN IMMEDIATE).
import type { Database } from './sqlite.js';

/**
 * The page-writer thread writes on a connection of its own, and a deferred transaction that meets
 * its commit fails with SQLITE_BUSY at once instead of waiting its turn (busy_timeout).
 */
export function immediately<T>(sqlite: Database, write: () => T): T {
  return sqlite.transaction(write).immediate();
}
