// Error types the program branches on, and a helper to turn anything thrown into a message.

/** Invalid configuration or arguments: the CLI exits 2 and prints the message. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
