import { parseInput } from '../common/validation';
import { shown, sourceDeclarationSchema } from './source-declaration';
import { refusal } from '../../test/support/refusal';

describe('a source declaration', () => {
  const git = { id: 'handbook', kind: 'git', mount: 'handbook' };
  const web = { id: 'site', kind: 'web', mount: 'site' };
  const folder = { id: 'notes', kind: 'folder', mount: 'notes' };

  it.each([
    [{ ...git, url: 'https://git.example.com/acme/handbook.git' }],
    [{ ...git, url: 'ssh://git@git.example.com/acme/handbook.git' }],
    [{ ...git, url: 'git@git.example.com:acme/handbook.git' }],
    [{ ...web, url: 'https://docs.example.com/guide/' }],
    [{ ...web, url: 'http://127.0.0.1:8000/' }],
    [{ ...folder, path: '/srv/notes' }],
    [{ ...folder, path: 'notes' }],
  ])('accepts %j', (declaration) => {
    expect(parseInput(sourceDeclarationSchema, declaration)).toEqual(declaration);
  });

  it.each([
    [
      { ...git, url: 'https://user:s3cret@git.example.com/x.git' },
      /^url: the URL holds a password/,
    ],
    [{ ...web, url: 'file:///etc/passwd' }, /^url: an http:\/\/ or https:\/\/ URL/],
    [{ ...web, url: 'https://user:pw@docs.example.com/' }, /^url: the URL holds a user/],
    [{ ...git, url: 'https://ghp_s3cret@github.com/o/r.git' }, /^url: the URL holds a user name/],
  ])('refuses %j when it is declared, not when it runs', (declaration, message) => {
    const said = refusal(() => parseInput(sourceDeclarationSchema, declaration)).message;
    expect(said).toMatch(message);
    expect(said).not.toContain('s3cret');
  });

  it('shows a password, or over https a user name, a declaration stored before held as ***', () => {
    const stored = { ...git, url: 'https://user:s3cret@git.example.com/x.git' };
    expect(shown(stored).url).toBe('https://***:***@git.example.com/x.git');
    const token = { ...git, url: 'https://ghp_s3cret@github.com/o/r.git' };
    expect(shown(token).url).toBe('https://***@github.com/o/r.git');
    const ssh = { ...git, url: 'ssh://git@git.example.com/acme/handbook.git' };
    expect(shown(ssh)).toBe(ssh);
    const clean = { ...git, url: 'git@git.example.com:acme/handbook.git' };
    expect(shown(clean)).toBe(clean);
  });
});
