/** Longest passage given around a link, in characters (the link's own text aside). */
export const MAX_PASSAGE = 240;

/**
 * The passage of `body` holding the link at `[start, end)`: its paragraph (the lines between
 * blank lines), white space collapsed, cut around the link to about {@link MAX_PASSAGE}
 * characters at word boundaries, with an ellipsis where it was cut.
 */
export function passageAround(body: string, start: number, end: number): string {
  const before = body.lastIndexOf('\n\n', start);
  const after = body.indexOf('\n\n', end);
  const paragraphStart = before === -1 ? 0 : before + 2;
  const paragraphEnd = after === -1 ? body.length : after;
  // Only what may be shown is read: a paragraph of a megabyte is not collapsed whole.
  const from = Math.max(paragraphStart, start - MAX_PASSAGE);
  const to = Math.min(paragraphEnd, end + MAX_PASSAGE);
  const head = collapse(body.slice(from, start)).trimStart();
  const link = collapse(body.slice(start, end));
  const tail = collapse(body.slice(end, to)).trimEnd();
  const room = Math.max(0, MAX_PASSAGE - link.length);
  const keepHead = Math.min(head.length, Math.max(Math.floor(room / 2), room - tail.length));
  const keepTail = Math.min(tail.length, room - keepHead);
  let shownHead = head.slice(head.length - keepHead);
  if (keepHead < head.length || from > paragraphStart) {
    const space = shownHead.indexOf(' ');
    shownHead = `…${space === -1 ? shownHead : shownHead.slice(space + 1)}`;
  }
  let shownTail = tail.slice(0, keepTail);
  if (keepTail < tail.length || to < paragraphEnd) {
    const space = shownTail.lastIndexOf(' ');
    shownTail = `${space <= 0 ? shownTail : shownTail.slice(0, space)}…`;
  }
  return `${shownHead}${link}${shownTail}`;
}

function collapse(text: string): string {
  return text.replace(/\s+/g, ' ');
}
