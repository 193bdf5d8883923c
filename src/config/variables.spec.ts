import { loadConfig } from './load-config';
import { VARIABLES } from './variables';

/** The names `loadConfig` reads for `env` (every one it asks for, set or not). */
function namesRead(env: Record<string, string>): Set<string> {
  const read = new Set<string>();
  loadConfig(
    new Proxy(env, {
      get: (target, name) => {
        if (typeof name === 'string') read.add(name);
        return target[name as string];
      },
    }),
  );
  return read;
}

describe('the configuration variables', () => {
  it('every variable of the table is read by the parser, and no other', () => {
    const read = new Set([
      ...namesRead({}),
      // Read only when OAuth is on, with introspection.
      ...namesRead({
        OAUTH_ISSUER: 'https://id.example.com',
        OAUTH_INTROSPECTION_CLIENT_ID: 'rs',
        OAUTH_INTROSPECTION_CLIENT_SECRET: 's3cret',
      }),
    ]);
    expect([...read].sort()).toEqual(Object.keys(VARIABLES).sort());
  });
});
