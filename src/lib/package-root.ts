// The installed package's root folder, found the same way from src/ (tsx) and dist/src/ (compiled).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

export function packageRoot(): string {
  if (cached !== undefined) return cached;
  let directory = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(directory, 'drizzle', 'meta', '_journal.json')) && existsSync(join(directory, 'package.json'))) {
      cached = directory;
      return directory;
    }
    const parent = dirname(directory);
    if (parent === directory) throw new Error('cannot find the threat-mirror package root (package.json beside drizzle/)');
    directory = parent;
  }
}

export function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version?: string };
  return manifest.version ?? '0.0.0';
}
