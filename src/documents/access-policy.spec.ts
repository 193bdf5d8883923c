import { Access } from './access';
import { AccessPolicy, MAX_POLICY_BYTES, PolicyError } from './access-policy';

const json = (value: unknown) => AccessPolicy.parse(JSON.stringify(value), 'json');

function refusal(text: string, format: 'json' | 'yaml' = 'json'): string {
  try {
    AccessPolicy.parse(text, format);
  } catch (error) {
    expect(error).toBeInstanceOf(PolicyError);
    const message = (error as Error).message;
    expect(message).not.toContain('\n');
    return message;
  }
  throw new Error(`expected ${text.slice(0, 80)} to be refused`);
}

describe('AccessPolicy', () => {
  const policy = json({
    rules: [
      { who: ['key:alice', 'group:eng'], read: ['shared/'], write: ['team-a/'] },
      { who: ['scope:kb.team-b', 'sub:0d1c'], read: ['team-b'] },
      { who: ['route:gpt'], read: ['public/'] },
      { who: ['*'], read: ['shared/'] },
      // Overlapping rules add up.
      { who: ['key:alice'], read: ['team-a/drafts/', 'archive/'] },
      { who: ['key:root'], read: '*', write: ['*'] },
    ],
  });

  it('gives each principal the union of the rules naming it; write implies read', () => {
    const alice = policy.accessOf({ key: 'alice' });
    expect(alice.read).toEqual(['archive/', 'shared/', 'team-a/']);
    expect(alice.write).toEqual(['team-a/']);
    expect(alice.mayRead('team-a/x.md')).toBe(true);
    expect(alice.mayWrite('team-a/x.md')).toBe(true);
    expect(alice.mayWrite('shared/x.md')).toBe(false);
    expect(policy.accessOf({ groups: ['eng', 'ops'] }).write).toEqual(['team-a/']);
    expect(policy.accessOf({ scopes: ['kb.team-b'] }).read).toEqual(['shared/', 'team-b/']);
    expect(policy.accessOf({ subject: '0d1c' }).read).toEqual(['shared/', 'team-b/']);
    expect(policy.accessOf({ route: 'gpt' }).read).toEqual(['public/', 'shared/']);
    expect(policy.accessOf({ key: 'root' }).unlimited).toBe(true);
  });

  it('lets anyone authenticated have the rules for "*", and nothing else', () => {
    const stranger = policy.accessOf({ key: 'mallory' });
    expect(stranger.read).toEqual(['shared/']);
    expect(stranger.write).toEqual([]);
    expect(json({ rules: [] }).accessOf({ key: 'alice' }).read).toEqual([]);
  });

  it('matches whole segments only', () => {
    const access = json({ rules: [{ who: ['*'], read: ['team-a'] }] }).accessOf({});
    expect(access.mayRead('team-a/x.md')).toBe(true);
    expect(access.mayRead('team-a/deep/x.md')).toBe(true);
    expect(access.mayRead('team-ab/x.md')).toBe(false);
    expect(access.mayRead('team-a')).toBe(false);
  });

  it('reads YAML, with the same rules', () => {
    const yaml = AccessPolicy.parse(
      'rules:\n  - who: ["key:alice"]\n    read: [shared/]\n    write: [team-a/]\n',
      'yaml',
    );
    expect(yaml.accessOf({ key: 'alice' }).read).toEqual(['shared/', 'team-a/']);
  });

  it.each([
    ['{"rules": [', 'is not valid JSON'],
    ['[]', 'must be an object with "rules"'],
    ['{"rules": {}}', '"rules" must be a list'],
    ['{"rules": [], "extra": 1}', 'unknown field "extra"'],
    ['{"rules": [{"who": [], "read": ["a/"]}]}', 'rule 1: "who" must be a non-empty list'],
    ['{"rules": [{"who": ["team:x"], "read": ["a/"]}]}', 'rule 1: who "team:x" is not key:NAME'],
    ['{"rules": [{"who": ["alice"], "read": ["a/"]}]}', 'who "alice" is not key:NAME'],
    ['{"rules": [{"who": ["key:"], "read": ["a/"]}]}', 'names nothing after "key:"'],
    ['{"rules": [{"who": ["route:other"], "read": ["a/"]}]}', 'the only route is route:gpt'],
    ['{"rules": [{"who": ["*"], "read": ["../etc/"]}]}', 'must not contain a ".." segment'],
    ['{"rules": [{"who": ["*"], "read": ["a/../b/"]}]}', 'must not contain a ".." segment'],
    ['{"rules": [{"who": ["*"], "read": ["/abs/"]}]}', 'must not start with "/"'],
    ['{"rules": [{"who": ["*"], "read": ["a//b/"]}]}', 'empty segment'],
    ['{"rules": [{"who": ["*"], "read": [""]}]}', 'rule 1: read: "": must not be empty'],
    ['{"rules": [{"who": ["*"], "read": "shared/"}]}', 'read must be a list of folders'],
    ['{"rules": [{"who": ["*"]}]}', 'rule 1: grants nothing'],
    ['{"rules": [{"who": ["*"], "read": ["a/"], "reads": ["b/"]}]}', 'unknown field "reads"'],
    ['{"rules": [{"who": ["*"], "read": ["a/"]}, {"who": ["*"], "write": [1]}]}', 'rule 2'],
  ])('refuses %s with one line naming the problem', (text, expected) => {
    expect(refusal(text)).toContain(expected);
  });

  it('refuses a YAML alias bomb without expanding it', () => {
    const lines = ['a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]'];
    for (let level = 1; level < 12; level++) {
      const previous = String.fromCharCode(96 + level);
      const name = String.fromCharCode(97 + level);
      lines.push(`${name}: &${name} [${Array(10).fill(`*${previous}`).join(', ')}]`);
    }
    lines.push('rules: []');
    expect(refusal(lines.join('\n'), 'yaml')).toMatch(/not valid YAML.*alias/i);
  });

  it('refuses a policy over its size limit unread', () => {
    const big = `{"rules": [], "pad": "${'x'.repeat(MAX_POLICY_BYTES)}"}`;
    expect(refusal(big)).toContain(`over ${MAX_POLICY_BYTES} bytes`);
  });
});

describe('Access', () => {
  const access = new Access(['team-b/', 'shared/', 'team-b/deep/'], ['team-c/']);

  it('keeps the smallest set of folders, write folders among the readable ones', () => {
    expect(access.read).toEqual(['shared/', 'team-b/', 'team-c/']);
  });

  it('says which part of a prefix is readable', () => {
    expect(access.readableUnder('team-b/')).toBe('all');
    expect(access.readableUnder('team-b/x')).toBe('all');
    expect(access.readableUnder('')).toEqual(['shared/', 'team-b/', 'team-c/']);
    expect(access.readableUnder('team')).toEqual(['team-b/', 'team-c/']);
    expect(access.readableUnder('team-a/')).toEqual([]);
    expect(Access.EVERYTHING.readableUnder('anything')).toBe('all');
  });

  it('gives the condition on the ids under a prefix: none, the folders under it, or nothing to read', () => {
    expect(access.readableConditionUnder('team-b/x')).toBeNull();
    expect(access.readableConditionUnder('team')).toEqual(['team-b/%', 'team-c/%']);
    expect(access.readableConditionUnder('team-a/')).toBeUndefined();
    expect(Access.EVERYTHING.readableConditionUnder('')).toBeNull();
  });

  it('narrows a prefix to the readable folders under it', () => {
    expect(access.scopeUnder('team-b/x')).toEqual({ prefix: 'team-b/x', readable: null });
    expect(access.scopeUnder('shared')).toEqual({ prefix: 'shared/', readable: null });
    expect(access.scopeUnder('team')).toEqual({
      prefix: 'team-',
      readable: ['team-b/%', 'team-c/%'],
    });
    expect(access.scopeUnder('')).toEqual({
      prefix: '',
      readable: ['shared/%', 'team-b/%', 'team-c/%'],
    });
    expect(access.scopeUnder('team-a/')).toBeUndefined();
    // Whole code points: two folders sharing the first half of a surrogate pair share nothing.
    expect(new Access(['\u{1F600}/', '\u{1F601}/'], []).scopeUnder('')?.prefix).toBe('');
  });

  it('gives LIKE patterns with the wildcards escaped', () => {
    expect(new Access(['50%_off/'], []).readablePatterns()).toEqual(['50\\%\\_off/%']);
    expect(Access.EVERYTHING.readablePatterns()).toBeUndefined();
  });
});
