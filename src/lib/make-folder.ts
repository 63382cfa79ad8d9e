// Creates the folder a file goes in, with a message that names the real obstacle: mkdir's own
// error for a parent that is a file says EEXIST ("file already exists") about the path it could
// not make, or ENOTDIR, neither naming the file in the way.
import { mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

/** mkdir -p of `folder`; a path on the way that is not a folder fails with an Error naming it. */
export function makeFolderFor(file: string, folder: string): void {
  try {
    mkdirSync(folder, { recursive: true });
  } catch (error) {
    const code = (error as { code?: string }).code;
    const blocker = code === 'EEXIST' || code === 'ENOTDIR' ? firstNonFolder(folder) : undefined;
    if (blocker === undefined) throw error;
    throw new Error(`cannot make the folder of ${file}: ${blocker} is a file, not a folder`, { cause: error });
  }
}

/** The first path from the root down to `folder` that exists and is not a folder. */
function firstNonFolder(folder: string): string | undefined {
  const chain: string[] = [];
  for (let path = folder; ; path = dirname(path)) {
    chain.unshift(path);
    if (dirname(path) === path) break;
  }
  for (const path of chain) {
    try {
      if (!statSync(path).isDirectory()) return path;
    } catch {
      return undefined; // missing from here on: not the obstacle
    }
  }
  return undefined;
}
