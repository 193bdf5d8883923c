import { negotiate, parseAccept } from './accept-negotiation';

const on = { postSse: true };
const off = { postSse: false };

describe('negotiate (the Accept rule of docs/mcp.md)', () => {
  describe('each row of the rule', () => {
    it.each([
      ['absent', undefined, 'json'],
      ['empty', '', 'json'],
      ['blank', '   ', 'json'],
      ['no valid type/subtype token', ';;;malformed', 'json'],
      ['valid tokens, neither wanted', 'application/xml', 'not-acceptable'],
      ['not wants_sse', 'application/json', 'json'],
      ['wants_sse and not wants_json', 'text/event-stream', 'sse'],
      ['both, q_sse > q_json', 'application/json;q=0.5, text/event-stream;q=1', 'sse'],
      ['both, q_json > q_sse', 'application/json;q=1, text/event-stream;q=0.5', 'json'],
      ['both, tie goes to JSON', 'application/json, text/event-stream', 'json'],
      ['both, explicit equal q', 'application/json;q=0.7, text/event-stream;q=0.7', 'json'],
    ] as const)('%s: %p → %s', (_row, accept, expected) => {
      expect(negotiate(accept, on)).toBe(expected);
    });

    it.each([
      'text/event-stream',
      'application/xml',
      'application/json;q=0.1, text/event-stream',
      ';;;malformed',
      undefined,
    ])('MCP_POST_SSE=false answers JSON whatever the Accept (%p)', (accept) => {
      expect(negotiate(accept, off)).toBe('json');
    });
  });

  // The predecessor's matrix (reference 000): the cases that are about negotiation alone.
  describe('U1–U21 Accept values', () => {
    it.each([
      ['U1', 'application/json', 'json'],
      ['U2', 'application/json, text/event-stream', 'json'],
      ['U3', 'text/event-stream', 'sse'],
      ['U4', 'application/json;q=0.5, text/event-stream;q=1', 'sse'],
      ['U5', 'application/json;q=1, text/event-stream;q=0.5', 'json'],
      ['U6', undefined, 'json'],
      ['U7', ';;;malformed', 'json'],
      ['U8', '*/*', 'json'],
      ['U9', 'application/xml', 'not-acceptable'],
      ['U14/U15/U19/U20', 'text/event-stream', 'sse'],
    ] as const)('%s %p → %s', (_id, accept, expected) => {
      expect(negotiate(accept, on)).toBe(expected);
    });
  });

  describe('q=0 means "not acceptable"', () => {
    it.each([
      ['application/json;q=0', 'not-acceptable'],
      ['text/event-stream;q=0', 'not-acceptable'],
      ['*/*;q=0', 'not-acceptable'],
      ['application/json;q=0, text/event-stream', 'sse'],
      ['application/json, text/event-stream;q=0', 'json'],
      ['text/event-stream;q=0.0, application/json;q=0.000', 'not-acceptable'],
      ['application/json;q=0, */*', 'json'],
    ] as const)('%p → %s', (accept, expected) => {
      expect(negotiate(accept, on)).toBe(expected);
    });
  });

  describe('wildcards', () => {
    it.each([
      ['*/*', 'json'],
      ['application/*', 'json'],
      ['text/*', 'sse'],
      ['text/*, application/*', 'json'],
      ['text/*;q=0.9, */*;q=0.1', 'sse'],
      ['text/event-stream, */*', 'json'],
      ['text/event-stream, */*;q=0.8', 'sse'],
      ['text/html, application/xhtml+xml, */*;q=0.8', 'json'],
      ['text/plain', 'not-acceptable'],
      ['image/*', 'not-acceptable'],
      ['*/json', 'not-acceptable'],
    ] as const)('%p → %s', (accept, expected) => {
      expect(negotiate(accept, on)).toBe(expected);
    });
  });

  describe('parameters', () => {
    it.each([
      ['application/json; charset=utf-8', 'json'],
      ['text/event-stream; charset=utf-8', 'sse'],
      ['text/event-stream;charset=utf-8;q=0.9, application/json;q=0.5', 'sse'],
      ['application/json;level=1;q=0.2, text/event-stream;q=0.3', 'sse'],
      ['text/event-stream;foo="a,b;c";q=0.9, application/json;q=0.1', 'sse'],
      ['text/event-stream;foo="a\\"b,c";q=0.9, application/json;q=0.1', 'sse'],
      ['application/json;Q=0.1, text/event-stream;Q=0.2', 'sse'],
      ['application/json;q=.5, text/event-stream;q=0.6', 'sse'],
      ['application/json;q=1.000, text/event-stream;q=1', 'json'],
    ] as const)('%p → %s', (accept, expected) => {
      expect(negotiate(accept, on)).toBe(expected);
    });

    it('ignores a token whose q is not a number from 0 to 1', () => {
      expect(negotiate('text/event-stream;q=2', on)).toBe('json');
      expect(negotiate('text/event-stream;q=abc', on)).toBe('json');
      expect(negotiate('text/event-stream;q=-1', on)).toBe('json');
      expect(negotiate('text/event-stream;q=', on)).toBe('json');
      expect(negotiate('application/json;q=abc, text/event-stream', on)).toBe('sse');
      expect(negotiate('application/xml;q=7', on)).toBe('json');
    });
  });

  describe('whitespace, case and separators', () => {
    it.each([
      ['  application/json  ,   text/event-stream  ', 'json'],
      ['application/json ; q=0.5 ,text/event-stream ; q = 1', 'sse'],
      ['\ttext/event-stream\t', 'sse'],
      ['APPLICATION/JSON', 'json'],
      ['Text/Event-Stream', 'sse'],
      ['TEXT/*', 'sse'],
      ['application/json,,', 'json'],
      [',,text/event-stream', 'sse'],
      ['application / json', 'json'],
      ['application/json text/event-stream', 'json'],
    ] as const)('%p → %s', (accept, expected) => {
      expect(negotiate(accept, on)).toBe(expected);
    });
  });

  describe('repeated types take the highest q', () => {
    it.each([
      ['application/json;q=0.2, application/json;q=0.9, text/event-stream;q=0.5', 'json'],
      ['text/event-stream;q=0.1, text/event-stream;q=0.95, application/json;q=0.9', 'sse'],
      ['text/*;q=0.9, text/event-stream;q=0.1, application/json;q=0.5', 'sse'],
      ['application/json, application/json', 'json'],
      ['text/event-stream, text/event-stream', 'sse'],
    ] as const)('%p → %s', (accept, expected) => {
      expect(negotiate(accept, on)).toBe(expected);
    });

    it('joins repeated Accept headers', () => {
      expect(negotiate(['text/event-stream', 'application/json;q=0.5'], on)).toBe('sse');
      expect(negotiate(['application/xml', 'application/json'], on)).toBe('json');
    });
  });

  describe('malformed input never throws', () => {
    it.each([
      '*',
      'json',
      'text/',
      '/json',
      '"',
      '"unterminated, text/event-stream',
      ';',
      ',',
      'text/event-stream;;;',
      'a/b/c',
      '\u0000',
    ])('%p', (accept) => {
      expect(() => negotiate(accept, on)).not.toThrow();
    });

    it('a 10 000-character header', () => {
      expect(negotiate('x'.repeat(10_000), on)).toBe('json');
      expect(negotiate(`${'text/plain;a=b,'.repeat(1000)}text/event-stream`, on)).toBe('sse');
    });

    it('treats a bare "*" and half tokens as no valid token', () => {
      expect(negotiate('*', on)).toBe('json');
      expect(negotiate('text/, /json', on)).toBe('json');
      expect(negotiate('*, text/event-stream', on)).toBe('sse');
    });

    it('keeps the trailing parameters after ";;;"', () => {
      expect(negotiate('text/event-stream;;;', on)).toBe('sse');
    });
  });
});

describe('parseAccept', () => {
  it('reports what each side wants and the highest q', () => {
    expect(parseAccept('application/json;q=0.4, */*;q=0.6, text/*;q=0.3')).toEqual({
      anyValid: true,
      wantsJson: true,
      wantsSse: true,
      qJson: 0.6,
      qSse: 0.3,
    });
  });

  it('counts q=0 tokens as valid but wanting nothing', () => {
    expect(parseAccept('application/json;q=0')).toEqual({
      anyValid: true,
      wantsJson: false,
      wantsSse: false,
      qJson: 0,
      qSse: 0,
    });
  });

  it('sees nothing valid in an absent header', () => {
    expect(parseAccept(undefined).anyValid).toBe(false);
  });

  it('answers the same for a header it has parsed before, past its memory of 64 headers', () => {
    const header = (n: number) => `application/json;q=0.${n % 10}, text/event-stream;q=0.5`;
    const first = Array.from({ length: 200 }, (_, n) => parseAccept(header(n)));
    const again = Array.from({ length: 200 }, (_, n) => parseAccept(header(n)));
    expect(again).toEqual(first);
    expect(first[3]).toEqual({
      anyValid: true,
      wantsJson: true,
      wantsSse: true,
      qJson: 0.3,
      qSse: 0.5,
    });
    expect(Object.isFrozen(first[3])).toBe(true);
    const long = `${'x'.repeat(300)}/y, text/event-stream`;
    expect(parseAccept(long)).toEqual(parseAccept(long));
    expect(parseAccept(long)).toMatchObject({ wantsSse: true, wantsJson: false });
  });
});
