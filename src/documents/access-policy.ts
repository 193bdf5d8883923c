import { parse as parseYaml } from 'yaml';
import { DomainError } from '../common/domain-error';
import { validateDocumentId } from './document-id';
import { Access, type Folders } from './access';

/** What a policy's `who` can name of a principal. */
export interface PrincipalFacts {
  /** The name of the API key it presented (`key:NAME`). */
  readonly key?: string;
  /** Its access token's scopes (`scope:S`). */
  readonly scopes?: readonly string[];
  /** Its access token's groups (`group:G`, from `OAUTH_GROUPS_CLAIM`). */
  readonly groups?: readonly string[];
  /** Its access token's subject (`sub:ID`). */
  readonly subject?: string;
  /** The secret GPT route (`route:gpt`). */
  readonly route?: 'gpt';
}

/** A policy file larger than this is refused unread. */
export const MAX_POLICY_BYTES = 1024 * 1024;
/** YAML aliases expanded at most (an alias bomb is refused, not expanded). */
const MAX_YAML_ALIASES = 100;

const WHO_KINDS = ['key', 'scope', 'group', 'sub', 'route'] as const;
type WhoKind = (typeof WHO_KINDS)[number];
type Who = { readonly kind: WhoKind; readonly value: string } | { readonly kind: 'anyone' };

interface Rule {
  readonly who: readonly Who[];
  readonly read: Folders;
  readonly write: Folders;
}

/** A policy that cannot be used, with one line saying why. */
export class PolicyError extends Error {
  override readonly name = 'PolicyError';
}

/**
 * An access policy (docs/access-control.md): rules binding principals to the folders they
 * may read and write. A principal's access is the union of the rules naming it; one that no
 * rule names reads and writes nothing.
 *
 *   { "rules": [ { "who": ["key:alice", "group:eng"], "read": ["shared/"], "write": ["team-a/"] },
 *                { "who": ["*"], "read": ["shared/"] } ] }
 */
export class AccessPolicy {
  private constructor(private readonly rules: readonly Rule[]) {}

  get ruleCount(): number {
    return this.rules.length;
  }

  /**
   * Reads a policy from its text, JSON or YAML (JSON is YAML too, but its errors are
   * clearer as JSON). Throws {@link PolicyError} naming the first problem; nothing of a bad
   * policy is ever used.
   */
  static parse(text: string, format: 'json' | 'yaml'): AccessPolicy {
    if (Buffer.byteLength(text, 'utf8') > MAX_POLICY_BYTES) {
      throw new PolicyError(`is over ${MAX_POLICY_BYTES} bytes`);
    }
    let value: unknown;
    try {
      value =
        format === 'json'
          ? JSON.parse(text)
          : parseYaml(text, { maxAliasCount: MAX_YAML_ALIASES, uniqueKeys: true });
    } catch (error) {
      const message = (error as Error).message.split('\n')[0];
      throw new PolicyError(`is not valid ${format === 'json' ? 'JSON' : 'YAML'}: ${message}`);
    }
    return new AccessPolicy(rulesOf(value));
  }

  /** What a principal with these facts may read and write. */
  accessOf(facts: PrincipalFacts): Access {
    const read: string[] = [];
    const write: string[] = [];
    let readAll = false;
    let writeAll = false;
    for (const rule of this.rules) {
      if (!rule.who.some((who) => names(who, facts))) continue;
      if (rule.read === '*') readAll = true;
      else read.push(...rule.read);
      if (rule.write === '*') writeAll = true;
      else write.push(...rule.write);
    }
    return new Access(readAll ? '*' : read, writeAll ? '*' : write);
  }
}

function names(who: Who, facts: PrincipalFacts): boolean {
  switch (who.kind) {
    case 'anyone':
      return true;
    case 'key':
      return facts.key === who.value;
    case 'scope':
      return facts.scopes?.includes(who.value) ?? false;
    case 'group':
      return facts.groups?.includes(who.value) ?? false;
    case 'sub':
      return facts.subject === who.value;
    case 'route':
      return facts.route === who.value;
  }
}

function rulesOf(value: unknown): Rule[] {
  if (!isObject(value)) throw new PolicyError('must be an object with "rules"');
  const extra = Object.keys(value).filter((key) => key !== 'rules');
  if (extra.length > 0) throw new PolicyError(`has an unknown field "${extra[0]}"`);
  if (!Array.isArray(value.rules)) throw new PolicyError('"rules" must be a list');
  return value.rules.map((rule, i) => ruleOf(rule, `rule ${i + 1}`));
}

function ruleOf(value: unknown, where: string): Rule {
  if (!isObject(value)) throw new PolicyError(`${where}: must be an object with "who"`);
  const extra = Object.keys(value).filter((key) => !['who', 'read', 'write'].includes(key));
  if (extra.length > 0) {
    throw new PolicyError(`${where}: unknown field "${extra[0]}" (a rule has who, read, write)`);
  }
  if (!Array.isArray(value.who) || value.who.length === 0) {
    throw new PolicyError(`${where}: "who" must be a non-empty list`);
  }
  const who = value.who.map((entry) => whoOf(entry, where));
  const read = foldersOf(value.read, `${where}: read`);
  const write = foldersOf(value.write, `${where}: write`);
  if (read !== '*' && write !== '*' && read.length === 0 && write.length === 0) {
    throw new PolicyError(`${where}: grants nothing (give it "read" or "write" folders)`);
  }
  return { who, read, write };
}

function whoOf(entry: unknown, where: string): Who {
  if (entry === '*') return { kind: 'anyone' };
  if (typeof entry !== 'string') throw new PolicyError(`${where}: who entries must be text`);
  const colon = entry.indexOf(':');
  const kind = entry.slice(0, colon) as WhoKind;
  const value = entry.slice(colon + 1);
  if (colon < 0 || !WHO_KINDS.includes(kind)) {
    throw new PolicyError(
      `${where}: who "${entry}" is not key:NAME, scope:S, group:G, sub:ID, route:gpt or *`,
    );
  }
  if (value === '')
    throw new PolicyError(`${where}: who "${entry}" names nothing after "${kind}:"`);
  if (kind === 'route' && value !== 'gpt') {
    throw new PolicyError(`${where}: who "${entry}": the only route is route:gpt`);
  }
  return { kind, value };
}

function foldersOf(value: unknown, where: string): Folders {
  if (value === undefined) return [];
  if (value === '*') return '*';
  if (!Array.isArray(value)) throw new PolicyError(`${where} must be a list of folders or "*"`);
  if (value.includes('*')) return '*';
  return value.map((entry) => {
    if (typeof entry !== 'string') throw new PolicyError(`${where}: folders must be text`);
    if (entry.startsWith('/')) {
      throw new PolicyError(`${where}: "${entry}" must not start with "/" (folders are relative)`);
    }
    const folder = entry.replace(/\/+$/, '');
    try {
      validateDocumentId(folder, 'folder');
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      throw new PolicyError(`${where}: "${entry}": ${error.message.replace(/^folder: /, '')}`);
    }
    return `${folder}/`;
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
