// THREAT_MIRROR_ASSET_TYPES and THREAT_MIRROR_ASSET_TYPES_<NAME> (issue 30): the scope each organization mirrors.
import { describe, expect, it } from 'vitest';
import { loadConfig, undocumentedAssetTypes } from '../../src/config.js';
import { ConfigError } from '../../src/lib/errors.js';
import { thrownMessage } from '../support/thrown.js';

const noFiles = (path: string): string => {
  throw new Error(`ENOENT: ${path}`);
};
const two = { THREAT_MIRROR_API_URL: 'http://127.0.0.1:9999', THREAT_MIRROR_ORGS: 'acme,globex-eu', THREAT_MIRROR_API_KEY_ACME: 'a', THREAT_MIRROR_API_KEY_GLOBEX_EU: 'g' };
const scopes = (env: Record<string, string>): Array<[string, readonly string[] | undefined, string | undefined]> =>
  loadConfig(env, noFiles).organizations.map((o) => [o.name, o.assetTypes, o.assetTypesVariable]);

describe('asset type scope', () => {
  it('is every type when unset; one variable for all, the suffixed one for one organization (suffix as for keys)', () => {
    expect(scopes(two)).toEqual([
      ['acme', undefined, undefined],
      ['globex-eu', undefined, undefined],
    ]);
    expect(scopes({ ...two, THREAT_MIRROR_ASSET_TYPES: ' PAGE, URL ,URL', THREAT_MIRROR_ASSET_TYPES_GLOBEX_EU: 'ADDRESS' })).toEqual([
      ['acme', ['PAGE', 'URL'], 'THREAT_MIRROR_ASSET_TYPES'],
      ['globex-eu', ['ADDRESS'], 'THREAT_MIRROR_ASSET_TYPES_GLOBEX_EU'],
    ]);
    // The single organization reads its suffixed variable too.
    const single = loadConfig({ THREAT_MIRROR_API_URL: 'http://127.0.0.1:9999', THREAT_MIRROR_API_KEY: 'k', THREAT_MIRROR_ORG: 'acme', THREAT_MIRROR_ASSET_TYPES_ACME: 'EMAIL' }, noFiles);
    expect(single.organizations[0]?.assetTypes).toEqual(['EMAIL']);
  });

  it('refuses a malformed value naming the variable: an empty item, lower case, punctuation', () => {
    for (const [variable, raw] of [
      ['THREAT_MIRROR_ASSET_TYPES', 'URL,,PAGE'],
      ['THREAT_MIRROR_ASSET_TYPES', 'URL,'],
      ['THREAT_MIRROR_ASSET_TYPES', 'url'],
      ['THREAT_MIRROR_ASSET_TYPES_ACME', 'URL;PAGE'],
      ['THREAT_MIRROR_ASSET_TYPES_ACME', 'PLATFORM-07'],
      ['THREAT_MIRROR_ASSET_TYPES_GLOBEX_EU', 'UR L'],
    ] as const) {
      const message = thrownMessage(() => loadConfig({ ...two, [variable]: raw }, noFiles), ConfigError);
      expect(message, raw).toMatch(new RegExp(`^${variable}: "`));
    }
  });

  it('refuses a per-organization variable no configured organization reads (a typo would mirror every type)', () => {
    const message = thrownMessage(() => loadConfig({ ...two, THREAT_MIRROR_ASSET_TYPES_ACMEE: 'URL' }, noFiles), ConfigError);
    expect(message).toMatch(/^THREAT_MIRROR_ASSET_TYPES_ACMEE: names no configured organization/);
  });

  it('accepts a well-formed name the interface does not list, and says which ones to warn about', () => {
    const [acme] = loadConfig({ ...two, THREAT_MIRROR_ASSET_TYPES: 'URL,PLATFORM_99' }, noFiles).organizations;
    expect(acme?.assetTypes).toEqual(['PLATFORM_99', 'URL']);
    expect(undocumentedAssetTypes(acme?.assetTypes)).toEqual(['PLATFORM_99']);
    expect(undocumentedAssetTypes(undefined)).toEqual([]);
  });
});
