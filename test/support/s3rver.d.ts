// The part of s3rver's programmatic API the replica tests use (it ships no types).
declare module 's3rver' {
  interface S3Object {
    readonly key: string;
  }
  interface Listing {
    objects: S3Object[];
    commonPrefixes: string[];
    isTruncated: boolean;
  }
  interface ListOptions {
    delimiter?: string;
    prefix?: string;
    startAfter?: string;
    maxKeys?: number;
  }
  interface Options {
    address?: string;
    port?: number;
    silent?: boolean;
    directory?: string;
    configureBuckets?: Array<{ name: string }>;
  }
  export default class S3rver {
    constructor(options: Options);
    run(): Promise<{ address: string; port: number }>;
    close(): Promise<void>;
    store: { listObjects(bucket: string, options: ListOptions): Promise<Listing> };
  }
}
