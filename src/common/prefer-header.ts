/**
 * The `return` preference of an RFC 7240 `Prefer` header: `minimal` asks a write to skip
 * the echo of what was sent (a 1 MiB body need not come back), `representation` asks for
 * the whole resource. Preferences are comma-separated, names case-insensitive, values may be
 * quoted, and parameters after `;` are ignored; the first `return` wins. Anything
 * unrecognised (or no header) is `undefined`: the server's default applies.
 */
export function returnPreference(
  header: string | readonly string[] | undefined,
): 'minimal' | 'representation' | undefined {
  const values = header === undefined ? [] : typeof header === 'string' ? [header] : header;
  for (const preference of values.flatMap((value) => value.split(','))) {
    const [token] = preference.split(';');
    const match = /^\s*return\s*=\s*("?)(minimal|representation)\1\s*$/i.exec(token);
    if (match) return match[2].toLowerCase() as 'minimal' | 'representation';
    if (/^\s*return\s*(=|$)/i.test(token)) return undefined;
  }
  return undefined;
}
