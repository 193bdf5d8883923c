// docs/configuration.md and the README's table of the variables most people set, rendered
// from the table of variables (src/config/variables.ts): what `npm run docs:config` writes
// and what tools/config-docs.spec.ts compares the pages with.
import { GROUPS, type Variable, type VariableName, VARIABLES } from '../src/config/variables';

function shownDefault(v: Variable): string {
  if (v.value === undefined) return v.fallback ?? 'unset';
  return v.note === undefined ? `\`${v.value}\`` : `\`${v.value}\` ${v.note}`;
}

const ENTRIES = Object.entries(VARIABLES) as [VariableName, Variable][];

function table(rows: [VariableName, Variable][]): string[] {
  return [
    '| variable | meaning | default |',
    '| --- | --- | --- |',
    ...rows.map(([name, v]) => `| \`${name}\` | ${v.meaning} | ${shownDefault(v)} |`),
  ];
}

/** The table of the variables most people set (the README shows it too). */
export function commonVariablesTable(): string {
  return table(ENTRIES.filter(([, v]) => v.common)).join('\n');
}

/** docs/configuration.md, as `npm run docs:config` writes it. */
export function configurationPage(): string {
  return [
    '# Configuration',
    '',
    '<!-- Written by `npm run docs:config` from src/config/variables.ts: edit that file. -->',
    '',
    'Everything is read from environment variables once, at start-up, and validated: a bad',
    'value stops the process with one line naming the variable (`agent-data: invalid',
    'configuration: PORT: must be between 0 and 65535, got 70000`). Secrets never appear in',
    'logs. Binding to a non-loopback `HOST` without `API_KEYS` or `OAUTH_ISSUER` is refused.',
    '',
    '## The variables most people set',
    '',
    commonVariablesTable(),
    ...GROUPS.flatMap((group) => [
      '',
      `## ${group}`,
      '',
      ...table(ENTRIES.filter(([, v]) => v.group === group)),
    ]),
    '',
  ].join('\n');
}
