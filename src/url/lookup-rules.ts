// The version of the rules deriveLookupFields (lookup-fields.ts) follows. Raised with every change
// that gives another answer for some content: at its next start the writer derives the stored
// rows again (db/writer/lookup-rules-upgrade.ts), so a mirror written under older rules answers as
// a fresh one. Apart from lookup-fields.ts so that checking it loads no Public Suffix List.
//
// 2: the WHATWG authority rules (a backslash ends the authority, controls trimmed, IDNA on the
//    whole host) and bare base58/bech32 addresses (issues 32 and 33).
// 3: one URL reader, the browser's (web-url.ts: `new URL` after the browser's input rules), for
//    the expression and the host alike, at any length; bare IDN hosts; the export columns
//    export_host and export_left_out (issue 37).
export const LOOKUP_RULES_VERSION = 3;
