// What the CLI prints is read on a terminal, and part of it comes from the service or the mirror
// (an error body, a stored run error, a threat's content or type): a control character in it
// could move the cursor, rewrite a line, set the window title or plant a hyperlink (ESC, OSC, BEL,
// and the 8-bit C1 forms such as CSI U+009B). They are written out as visible escapes instead.

/** C0 controls but tab and newline (which the CLI's own text uses), DEL, and the C1 block. */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
const CONTROLS = new RegExp(CONTROL.source, 'g');

/**
 * The text with each control character as `\u00XX`. Applied to everything the CLI prints: on
 * JSON output it changes bytes only inside strings (JSON.stringify leaves DEL and C1 raw) and
 * never the value a JSON reader gets back, since `\u00XX` is the same character to it.
 */
export function escapeControls(text: string): string {
  return CONTROL.test(text) ? text.replace(CONTROLS, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`) : text;
}
