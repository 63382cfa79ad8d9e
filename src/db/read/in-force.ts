// "In force", defined once: an organization's link to a threat that is neither removed nor outside
// its asset type scope. The view `in_force` (migration 0016) is that definition; `current_threats`
// and `enforced_threats` are built on it, and every reader that answers (lookup, every export, the
// export index and the zone) reads it through these fragments, never its own copy of the rule.

/**
 * SQL that is true when the threat aliased `threat` is in force for some organization; `also` adds
 * a condition on the link, aliased f (`f.organization = ?`).
 */
export function inForce(threat: string, also = ''): string {
  return `EXISTS (SELECT 1 FROM in_force f WHERE f.threat_id = ${threat}.id${also === '' ? '' : ` AND ${also}`})`;
}

/** SQL of the organizations (separated by `separator`, a SQL expression) in force for the threat aliased `threat`. */
export function inForceOrganizations(threat: string, separator: string, also = ''): string {
  return `(SELECT group_concat(f.organization, ${separator}) FROM in_force f WHERE f.threat_id = ${threat}.id${also === '' ? '' : ` AND ${also}`})`;
}
