import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { commonVariablesTable, configurationPage } from './config-docs';

describe('docs/configuration.md', () => {
  it('is the page rendered from the table of variables (npm run docs:config)', () => {
    const page = readFileSync(join(__dirname, '..', 'docs', 'configuration.md'), 'utf8');
    expect(page).toBe(configurationPage());
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
    const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');
    const section =
      /<!-- common variables: npm run docs:config -->([\s\S]*?)<!-- end of common variables -->/.exec(
        readme,
      )?.[1];
    expect(section).toBeDefined();
    expect(rows(section!)).toEqual(rows(commonVariablesTable()));
  });
});
