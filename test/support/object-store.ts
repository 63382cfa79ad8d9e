// An S3-compatible object store on 127.0.0.1 for the replica tests: s3rver 3.7.1 (npm), run in
// this process, its files in a temporary folder, closed after the test. Chosen over a MinIO
// binary (not on the npm registry, and no network here) and over hand-written S3: it speaks
// the signed REST API Litestream's AWS SDK sends, unchanged.
import S3rver from 's3rver';
import { afterThisTest } from './cleanup.js';
import { tempDir } from './temp.js';

/** s3rver's default credentials, which it checks signatures against. */
export const OBJECT_STORE_KEYS = { LITESTREAM_ACCESS_KEY_ID: 'S3RVER', LITESTREAM_SECRET_ACCESS_KEY: 'S3RVER' } as const;

export interface ObjectStore {
  readonly port: number;
  /** Litestream 0.3's URL of a path in the bucket on this endpoint. */
  url(path: string): string;
}

export async function startObjectStore(bucket: string): Promise<ObjectStore> {
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: tempDir('s3rver-'), configureBuckets: [{ name: bucket }] });
  groupListingsByDelimiter(server);
  const { port } = await server.run();
  afterThisTest('servers', () => server.close());
  return { port, url: (path) => `s3://${bucket}.localhost:${port}/${path}` };
}

/**
 * s3rver's filesystem store drops the common prefixes of keys two or more levels below a listed
 * prefix (it does not walk into those folders), so Litestream, which lists `PATH/generations/`
 * with a delimiter, finds no backup. A listing with a delimiter is made here from the full one,
 * grouped as S3 groups it.
 */
function groupListingsByDelimiter(server: S3rver): void {
  const list = server.store.listObjects.bind(server.store);
  server.store.listObjects = async (bucket, options) => {
    const { delimiter, prefix = '' } = options;
    if (!delimiter) return list(bucket, options);
    const all = await list(bucket, { ...options, delimiter: '', maxKeys: Infinity });
    const commonPrefixes = new Set<string>();
    const objects = all.objects.filter((object) => {
      const below = object.key.slice(prefix.length).indexOf(delimiter);
      if (below !== -1) commonPrefixes.add(object.key.slice(0, prefix.length + below + 1));
      return below === -1;
    });
    return { objects, commonPrefixes: [...commonPrefixes].sort(), isTruncated: false };
  };
}
