// THREAT_MIRROR_ASSET_TYPES and THREAT_MIRROR_ASSET_TYPES_<NAME>: the asset types an organization
// mirrors (its scope). Unset: every type, and requests carry no assetType.
import { ConfigError } from '../lib/errors.js';
import { DOCUMENTED_ASSET_TYPES } from '../records.js';
import { type Environment, InvalidValue, parseVariable, value } from './read.js';
import { ASSET_TYPES } from './variables.js';

/** The interface's own spelling: upper-case letters, digits and `_`, as URL or PLATFORM_07 (at most 64). */
const ASSET_TYPE_NAME = /^[A-Z][A-Z0-9_]{0,63}$/;

export interface AssetTypeScope {
  /** Sorted, without repeats; undefined: every type. */
  readonly assetTypes: readonly string[] | undefined;
  /** The variable the scope came from, for messages; undefined when unset. */
  readonly assetTypesVariable: string | undefined;
}

/** The per-organization variable's suffix, as for keys: the name upper-cased, anything not alphanumeric as `_`. */
export function organizationSuffix(organization: string): string {
  return organization.toUpperCase().replace(/[^A-Z0-9]/g, '_');
}

export function assetTypesVariableFor(organization: string): string {
  return `${ASSET_TYPES.name}_${organizationSuffix(organization)}`;
}

/** An organization's scope: its own variable, else the one for every organization, else every type. */
export function loadAssetTypeScope(env: Environment, organization: string): AssetTypeScope {
  for (const variable of [assetTypesVariableFor(organization), ASSET_TYPES.name]) {
    if (value(env, variable) !== undefined) return { assetTypes: parseVariable(env, variable, undefined, parseAssetTypes), assetTypesVariable: variable };
  }
  return { assetTypes: undefined, assetTypesVariable: undefined };
}

/**
 * A THREAT_MIRROR_ASSET_TYPES_<NAME> that no configured organization reads is a typo that would
 * silently leave an organization mirroring every type: refused.
 */
export function assertNoStrayScopes(env: Environment, organizations: readonly string[]): void {
  const read = new Set(organizations.map(assetTypesVariableFor));
  const prefix = `${ASSET_TYPES.name}_`;
  for (const name of Object.keys(env)) {
    if (!name.startsWith(prefix) || read.has(name) || value(env, name) === undefined) continue;
    throw new ConfigError(`${name}: names no configured organization (${organizations.join(', ')}); rename it to ${[...read].join(' or ')}, or remove it`);
  }
}

/** `URL,PAGE`: each item an asset type name; an empty item, lower case or punctuation is refused. */
export function parseAssetTypes(raw: string): readonly string[] {
  const items = raw.split(',').map((item) => item.trim());
  for (const item of items) {
    if (item === '') throw new InvalidValue('has an empty item; list asset types separated by commas, e.g. URL,PAGE');
    if (!ASSET_TYPE_NAME.test(item)) {
      throw new InvalidValue(`holds "${item}", which is not an asset type name (upper-case letters, digits and _, as URL, PAGE, ADDRESS or PLATFORM_07)`);
    }
  }
  return Object.freeze([...new Set(items)].sort());
}

/** The types of a scope the interface does not list: accepted (the service adds platforms), warned about. */
export function undocumentedAssetTypes(assetTypes: readonly string[] | undefined): string[] {
  return (assetTypes ?? []).filter((type) => !DOCUMENTED_ASSET_TYPES.has(type));
}
