import { loadConfig } from './load-config';

describe('OAuth and rate-limit configuration', () => {
  const issuer = { OAUTH_ISSUER: 'https://id.example.com/realms/kb' };

  it('is off without OAUTH_ISSUER, and its other variables need it', () => {
    expect(loadConfig({}).oauth).toBeUndefined();
    expect(() => loadConfig({ OAUTH_RESOURCE: 'https://kb.example.com' })).toThrow(
      /OAUTH_RESOURCE: needs OAUTH_ISSUER/,
    );
  });

  it('defaults the resource to the loopback address and the scope map to kb.read/kb.write/kb.admin', () => {
    const config = loadConfig({ ...issuer, PORT: '9000' });
    expect(config.authEnabled).toBe(true);
    expect(config.oauth).toMatchObject({
      issuer: issuer.OAUTH_ISSUER,
      resource: 'http://127.0.0.1:9000',
      audiences: undefined,
      clockSkewSeconds: 30,
      httpTimeoutMs: 5000,
      introspection: undefined,
    });
    expect([...config.oauth!.scopeProfiles].map(([s, p]) => [s, [...p]])).toEqual([
      ['kb.read', ['readonly']],
      ['kb.write', ['gpt']],
      ['kb.admin', ['internal', 'gpt-full', 'admin']],
    ]);
  });

  it('lets OAuth alone authenticate a non-loopback server, which then needs OAUTH_RESOURCE', () => {
    expect(() => loadConfig({ ...issuer, HOST: '0.0.0.0' })).toThrow(
      /OAUTH_RESOURCE: is required with OAUTH_ISSUER when HOST is not a loopback address/,
    );
    const config = loadConfig({
      ...issuer,
      HOST: '0.0.0.0',
      OAUTH_RESOURCE: 'https://kb.example.com/',
      OAUTH_AUDIENCE: 'agent-data, api://agent-data',
    });
    expect(config.oauth?.resource).toBe('https://kb.example.com');
    expect(config.oauth?.audiences).toEqual(['agent-data', 'api://agent-data']);
  });

  it.each([
    [{ OAUTH_ISSUER: 'ftp://id.example.com' }, /OAUTH_ISSUER: must be an http\(s\) URL/],
    [
      { ...issuer, OAUTH_RESOURCE: 'https://kb.example.com/#x' },
      /OAUTH_RESOURCE: must not have a fragment/,
    ],
    [{ ...issuer, OAUTH_SCOPE_PROFILES: 'kb.read:nobody' }, /unknown profile "nobody"/],
    [{ ...issuer, OAUTH_SCOPE_PROFILES: 'kb read:readonly' }, /is not scope:profile/],
    [{ ...issuer, OAUTH_SCOPE_PROFILES: 'a:readonly;a:gpt' }, /scope a twice/],
    [{ ...issuer, OAUTH_ALGORITHMS: 'HS256' }, /only asymmetric algorithms/],
    [{ ...issuer, OAUTH_INTROSPECTION_CLIENT_ID: 'rs' }, /go together/],
    [{ ...issuer, OAUTH_CLOCK_SKEW_SECONDS: '3600' }, /between 0 and 600/],
    [{ RATE_LIMIT_TOOL_CALLS: 'lots' }, /RATE_LIMIT_TOOL_CALLS: must be requests per window/],
    [{ RATE_LIMIT_ADMIN_WRITES: '10/2d' }, /RATE_LIMIT_ADMIN_WRITES/],
  ])('refuses %j', (env, message) => {
    expect(() => loadConfig(env as Record<string, string>)).toThrow(message);
  });

  it('introspection takes its endpoint from the metadata unless given', () => {
    const config = loadConfig({
      ...issuer,
      OAUTH_INTROSPECTION_CLIENT_ID: 'rs',
      OAUTH_INTROSPECTION_CLIENT_SECRET: 's3cret',
    });
    expect(config.oauth?.introspection).toEqual({
      url: undefined,
      clientId: 'rs',
      clientSecret: 's3cret',
    });
  });

  it.each([
    ['120/60s', { points: 120, windowSeconds: 60 }],
    ['10/s', { points: 10, windowSeconds: 1 }],
    ['600/min', { points: 600, windowSeconds: 60 }],
    ['5000/h', { points: 5000, windowSeconds: 3600 }],
    ['off', undefined],
    ['0', undefined],
  ])('reads the rate limit %s', (raw, limit) => {
    expect(loadConfig({ RATE_LIMIT_TOOL_CALLS: raw }).rateLimitToolCalls).toEqual(limit);
  });

  it('limits by default where others can reach the server, not on loopback', () => {
    expect(loadConfig({}).rateLimitToolCalls).toBeUndefined();
    const open = loadConfig({ HOST: '0.0.0.0', API_KEYS: 'ops:ops-key-0123456789abcdef:admin' });
    expect(open.rateLimitToolCalls).toEqual({ points: 600, windowSeconds: 60 });
    expect(open.rateLimitAdminWrites).toEqual({ points: 300, windowSeconds: 60 });
  });
});
