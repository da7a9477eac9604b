// Token text as every view of the page shows it: whitespace made visible the same way everywhere
// (space ·, tab →, line feed ↵, carriage return ␍, any other white space ␣), and a token that
// holds only part of a character's UTF-8 bytes written as the bytes it holds (<0xE5>).
//
// The HTML form keeps the real tab and line feed after their marks so that text still wraps
// where it was typed; the plain form (for buttons and tooltips) has the marks only.

export const MARKS = { " ": "·", "\t": "→", "\n": "↵", "\r": "␍" };
const OTHER = "␣";
const WHITE = /\s/u;

export function escapeHTML(s) {
  return s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
}

function mark(c) {
  return MARKS[c] ?? OTHER;
}

/** The text with its whitespace marked, as plain text; runs longer than `run` written once with
 * their length ("·×12"). */
export function markText(text, run = Infinity) {
  if (!text) return "∅";
  let out = "";
  for (let i = 0; i < text.length; ) {
    const c = text[i];
    if (!WHITE.test(c)) {
      out += c;
      i++;
      continue;
    }
    let j = i + 1;
    while (j < text.length && text[j] === c) j++;
    const n = j - i;
    out += n > run ? `${mark(c)}×${n}` : mark(c).repeat(n);
    i = j;
  }
  return out;
}

/** The text as HTML, whitespace marked (each run in a span of class ws). */
export function markHTML(text) {
  return escapeHTML(text).replace(/\s+/gu, (run) => {
    let marks = "";
    for (const c of run) {
      marks += mark(c);
      if (c === "\n") {
        // the break itself, so lines still wrap as typed
        marks += "\n";
      } else if (c === "\t") {
        marks += "\t";
      }
    }
    return `<span class="ws">${marks}</span>`;
  });
}

const encoder = new TextEncoder();

export function utf8Bytes(text) {
  return encoder.encode(text);
}

const hex = (b) => `<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`;

const STRICT = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** A token's label from its own bytes: its text when they are whole UTF-8 characters, else
 * every byte as <0xE5> (" \xe9" is "<0x20><0xE9>": one rule for the Count and Constrain views). */
export function tokenLabel(bytes) {
  try {
    return STRICT.decode(bytes);
  } catch {
    return Array.from(bytes, hex).join("");
  }
}

/** A piece of several ids (a character split between tokens) as one label per id: the bytes
 * each holds ("<0xE9><0xBE>", "<0x98>"), as tokenLabel writes them; null for a piece of one id.  `lengths` are the bytes of
 * each id (Piece.byteLengths); without them, or when they do not add up, each id is taken to
 * be one byte when there are as many ids as bytes, and otherwise null. */
export function byteLabels(text, ids, lengths) {
  if (ids.length < 2) return null;
  const bytes = utf8Bytes(text);
  let sizes = lengths;
  if (!sizes || sizes.length !== ids.length || sizes.reduce((a, b) => a + b, 0) !== bytes.length) {
    if (bytes.length !== ids.length) return null;
    sizes = ids.map(() => 1);
  }
  const out = [];
  let at = 0;
  for (const n of sizes) {
    out.push(tokenLabel(bytes.subarray(at, at + n)));
    at += n;
  }
  return out;
}

/** All of a piece's bytes as one label, for a split the page cannot share out. */
export function bytesLabel(text) {
  return Array.from(utf8Bytes(text), hex).join("");
}
