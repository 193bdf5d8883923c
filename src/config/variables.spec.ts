import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from './load-config';
import { commonVariablesTable, configurationPage, VARIABLES } from './variables';

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
  it('docs/configuration.md is the page rendered from the table (npm run docs:config)', () => {
    const page = readFileSync(join(__dirname, '..', '..', 'docs', 'configuration.md'), 'utf8');
    expect(page).toBe(configurationPage());
  });

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

describe("the README's table of common variables", () => {
  /** The table's rows as trimmed cells (the formatter pads them), separator row left out. */
  const rows = (markdown: string) =>
    markdown
      .split('\n')
      .filter((line) => line.startsWith('|') && !/^\|[\s|:-]+\|$/.test(line))
      .map((line) => line.split('|').map((cell) => cell.trim()));

  it('is the one rendered from the table (npm run docs:config)', () => {
    const readme = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');
    const section =
      /<!-- common variables: npm run docs:config -->([\s\S]*?)<!-- end of common variables -->/.exec(
        readme,
      )?.[1];
    expect(section).toBeDefined();
    expect(rows(section!)).toEqual(rows(commonVariablesTable()));
  });
});
