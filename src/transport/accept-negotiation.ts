/**
 * Accept negotiation for MCP POST responses (docs/mcp.md). Pure: no Nest, no I/O.
 *
 * The rule:
 * ```
 * parse Accept (never throws)
 *   absent / empty                    -> JSON
 *   no valid type/subtype token       -> JSON (malformed, e.g. ";;;malformed")
 *   each token with q > 0:
 *     application/json | * / * | application/*   -> wants_json, q_json = max q
 *     text/event-stream | text/*                 -> wants_sse,  q_sse  = max q
 * decide
 *   valid tokens seen, neither wanted -> 406 (e.g. application/xml)
 *   not wants_sse                     -> JSON
 *   wants_sse and not wants_json      -> SSE
 *   both, q_sse > q_json              -> SSE
 *   both, q_json >= q_sse             -> JSON (tie goes to JSON)
 * MCP_POST_SSE=false                  -> JSON whatever the Accept
 * ```
 * A token whose media range is not `type/subtype` (a bare `*`, `json`, `text/`), or whose
 * `q` is not a number from 0 to 1, is not a valid token: it is ignored, as if absent.
 */

/** How a POST answer is framed: a JSON body, one SSE event, or 406 Not Acceptable. */
export type Negotiated = 'json' | 'sse' | 'not-acceptable';

/** What an Accept header says about the two media types an MCP server can produce. */
export interface AcceptPreferences {
  /** At least one syntactically valid `type/subtype` token was present (q=0 ones included). */
  readonly anyValid: boolean;
  readonly wantsJson: boolean;
  readonly wantsSse: boolean;
  /** Highest q among the tokens that want JSON; 0 when none does. */
  readonly qJson: number;
  /** Highest q among the tokens that want SSE; 0 when none does. */
  readonly qSse: number;
}

export interface NegotiationOptions {
  /** `MCP_POST_SSE`: `false` answers every POST with JSON, whatever the Accept. */
  readonly postSse: boolean;
}

// RFC 9110 `token` characters.
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const MEDIA_RANGE = new RegExp(`^(${TOKEN})/(${TOKEN})$`);
const QVALUE = /^(?:0(?:\.\d*)?|1(?:\.0*)?|\.\d+)$/;

const NOTHING: AcceptPreferences = Object.freeze({
  anyValid: false,
  wantsJson: false,
  wantsSse: false,
  qJson: 0,
  qSse: 0,
});

/**
 * Headers parsed lately. A client sends the same Accept on every request, so most requests
 * find theirs here; bounded in entries and in the length of a header worth keeping.
 */
const parsed = new Map<string, AcceptPreferences>();
const PARSED_MAX_ENTRIES = 64;
const PARSED_MAX_LENGTH = 256;

/** Parses an Accept header value (or the values of repeated headers). Never throws. */
export function parseAccept(accept: string | readonly string[] | undefined): AcceptPreferences {
  const header = Array.isArray(accept) ? accept.join(',') : (accept as string | undefined);
  if (header === undefined) return NOTHING;
  let preferences = parsed.get(header);
  if (preferences === undefined) {
    preferences = parseHeader(header);
    if (header.length <= PARSED_MAX_LENGTH) {
      if (parsed.size >= PARSED_MAX_ENTRIES) parsed.clear();
      parsed.set(header, preferences);
    }
  }
  return preferences;
}

function parseHeader(header: string): AcceptPreferences {
  if (header.trim() === '') return NOTHING;
  let anyValid = false;
  let qJson = 0;
  let qSse = 0;
  let wantsJson = false;
  let wantsSse = false;
  for (const element of splitOutsideQuotes(header, ',')) {
    const parts = splitOutsideQuotes(element, ';');
    const range = MEDIA_RANGE.exec(parts[0].trim());
    if (!range) continue;
    const q = qualityOf(parts.slice(1));
    if (q === undefined) continue;
    anyValid = true;
    if (q === 0) continue;
    const type = range[1].toLowerCase();
    const subtype = range[2].toLowerCase();
    const anyType = type === '*' && subtype === '*';
    if (anyType || (type === 'application' && (subtype === 'json' || subtype === '*'))) {
      wantsJson = true;
      qJson = Math.max(qJson, q);
    } else if (type === 'text' && (subtype === 'event-stream' || subtype === '*')) {
      wantsSse = true;
      qSse = Math.max(qSse, q);
    }
  }
  return Object.freeze({ anyValid, wantsJson, wantsSse, qJson, qSse });
}

/** Decides the framing of a POST answer from its request's Accept header (docs/mcp.md). */
export function negotiate(
  accept: string | readonly string[] | undefined,
  options: NegotiationOptions,
): Negotiated {
  if (!options.postSse) return 'json';
  const prefs = parseAccept(accept);
  if (!prefs.anyValid) return 'json';
  if (!prefs.wantsJson && !prefs.wantsSse) return 'not-acceptable';
  if (!prefs.wantsSse) return 'json';
  if (!prefs.wantsJson) return 'sse';
  return prefs.qSse > prefs.qJson ? 'sse' : 'json';
}

/**
 * The `q` parameter of one media range (1 when absent), or `undefined` when it is not a
 * number from 0 to 1. Parameter names are case-insensitive; other parameters are ignored.
 */
function qualityOf(parameters: readonly string[]): number | undefined {
  let q = 1;
  for (const parameter of parameters) {
    const eq = parameter.indexOf('=');
    const name = (eq === -1 ? parameter : parameter.slice(0, eq)).trim().toLowerCase();
    if (name !== 'q') continue;
    const value = eq === -1 ? '' : parameter.slice(eq + 1).trim();
    if (!QVALUE.test(value)) return undefined;
    q = Number(value);
  }
  return q;
}

/** Splits on `separator`, except inside a quoted-string (`foo="a,b"`), honouring `\"`. */
function splitOutsideQuotes(text: string, separator: ',' | ';'): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted && c === '\\' && i + 1 < text.length) {
      current += c + text[++i];
      continue;
    }
    if (c === '"') quoted = !quoted;
    if (c === separator && !quoted) {
      parts.push(current);
      current = '';
    } else {
      current += c;
    }
  }
  parts.push(current);
  return parts;
}
