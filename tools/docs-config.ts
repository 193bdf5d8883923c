// `npm run docs:config`: writes docs/configuration.md, and the README's table of the
// variables most people set, from the table of variables (src/config/variables.ts). A unit
// test fails when either disagrees with the table.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { format } from 'prettier';
import { commonVariablesTable, configurationPage } from './config-docs';

const root = join(__dirname, '..');
writeFileSync(join(root, 'docs', 'configuration.md'), configurationPage());

const readmePath = join(root, 'README.md');
const readme = readFileSync(readmePath, 'utf8').replace(
  /(<!-- common variables: npm run docs:config -->\n)[\s\S]*?(\n<!-- end of common variables -->)/,
  `$1\n${commonVariablesTable()}\n$2`,
);
format(readme, { filepath: readmePath }).then((text) => writeFileSync(readmePath, text));
