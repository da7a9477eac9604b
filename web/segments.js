// Cut text where token counts add up exactly, so that an edit re-encodes only its segment.
//
// encode(a + b) == encode(a) + encode(b) whenever the split pattern (tiktoken's pre-tokenizer)
// has a piece boundary between a and b in a + b, and splits a alone as it splits that part of
// a + b.  Every pattern anytok bundles (gpt2/r50k/p50k, cl100k, o200k) gives that at two kinds
// of position p, found from the text alone:
//
//  A. text[p-1] is "\n", text[p-2] is not whitespace, and text[p] is a letter or a digit.
//     No piece can hold "\n" followed by a letter or digit: whitespace pieces hold only
//     whitespace, and the punctuation piece ` ?[^\s\p{L}\p{N}]+[\r\n]*` (o200k: `[\r\n/]*`)
//     ends with line breaks or "/".  A piece ending at p sees the same text in a as in a + b,
//     except for the lookahead of `\s+(?!\S)`; since the whitespace run before p is just "\n",
//     that alternative yields the same one-character piece either way.  (A longer run such as
//     "  \n" or "\r\n" would not: r50k splits it differently at the end of a text.)
//  B. text[p] is "\r" or "\n" and text[p-1] is an ASCII letter or digit: a letter or digit
//     piece ends at p in both, and no pattern reads past the end of such a piece.  This is the
//     cut for files with "\r\n" line ends, where A never applies.
//
// Special tokens never contain a line break, so a cut never falls inside one.  Letters and
// digits are tested with JavaScript's Unicode tables; whatever their version, no letter or
// digit is whitespace or "/", which is all A relies on.  Whitespace is Unicode's White_Space
// property, spelled out because JavaScript's \s differs from it (U+FEFF, U+0085).
//
// The cuts used are chosen by content (a hash of the text around a cut, once a segment is
// long enough), so an edit moves only the cuts near it and every other segment is unchanged:
// its count, cached by its text, is reused.

const WHITE_SPACE = /[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/;
const LETTER_OR_DIGIT = /^[\p{L}\p{N}]/u;
const ASCII_ALNUM = /[A-Za-z0-9]/;

/** Every safe cut position in text, in increasing order (see above). */
export function* safeCuts(text) {
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) {
    // B: before the line end ("\r\n" or "\n") that follows a letter or digit.
    const end = i > 0 && text[i - 1] === "\r" ? i - 1 : i;
    if (end > 0 && ASCII_ALNUM.test(text[end - 1])) yield end;
    // A: after the "\n", before a letter or digit.
    if (i > 0 && i + 1 < text.length && !WHITE_SPACE.test(text[i - 1]) && LETTER_OR_DIGIT.test(text.slice(i + 1, i + 3))) {
      yield i + 1;
    }
  }
}

function hashAround(text, p) {
  // FNV-1a over the 8 UTF-16 units on each side of p.
  let h = 0x811c9dc5;
  for (let i = Math.max(0, p - 8), end = Math.min(text.length, p + 8); i < end; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * Split text into segments whose token counts add up to the count of the whole text.
 * Segments are at least `min` UTF-16 units long where the text allows, usually a few times
 * that, and cut as soon as they pass `max` if a safe cut is there.
 */
export function segments(text, { min = 1024, max = 8192, spread = 4 } = {}) {
  const out = [];
  let start = 0;
  for (const p of safeCuts(text)) {
    const length = p - start;
    if (length >= min && (length >= max || hashAround(text, p) % spread === 0)) {
      out.push(text.slice(start, p));
      start = p;
    }
  }
  if (start < text.length || out.length === 0) out.push(text.slice(start));
  return out;
}
