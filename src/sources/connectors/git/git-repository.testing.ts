import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { GitSourceDeclaration } from '../../source-declaration';
import type { EnumerationContext, KnownItem } from '../connector';

/**
 * For the git connector's tests: a real repository on this machine, a working copy pushing
 * to a bare repository that a source reads by its `file://` URL.
 */

const run = promisify(execFile);

/**
 * The environment a test gives the connector (the server's, as its configuration read it):
 * just what finds `git`.
 */
export const TEST_ENV: NodeJS.ProcessEnv = {
  PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
};

/** Git for the tests, as isolated from the machine's configuration as the connector's. */
const TEST_GIT_ENV = {
  ...TEST_ENV,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.com',
};

export class TestRepository {
  private constructor(
    /** A folder of the test's own, removed by {@link remove}. */
    readonly root: string,
  ) {}

  /** An empty bare repository (`origin.git`) and its working copy on branch `main`. */
  static async create(): Promise<TestRepository> {
    const root = await mkdtemp(join(tmpdir(), 'agent-data-git-test-'));
    const repository = new TestRepository(root);
    await repository.git(root, 'init', '--quiet', '--bare', '--initial-branch=main', 'origin.git');
    await repository.git(root, 'init', '--quiet', '--initial-branch=main', 'work');
    await repository.git(repository.work, 'remote', 'add', 'origin', repository.bare);
    return repository;
  }

  get bare(): string {
    return join(this.root, 'origin.git');
  }

  get work(): string {
    return join(this.root, 'work');
  }

  get url(): string {
    return `file://${this.bare}`;
  }

  /** A new cache folder for a connector (one per connector, as one per source). */
  cacheDir(name = 'cache'): string {
    return join(this.root, 'caches', name);
  }

  async git(cwd: string, ...args: string[]): Promise<string> {
    const { stdout } = await run('git', args, {
      cwd,
      env: TEST_GIT_ENV,
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout;
  }

  /** Writes files of the working copy (path → content), making their folders. */
  async write(files: Record<string, string | Buffer>): Promise<void> {
    for (const [path, content] of Object.entries(files)) {
      await mkdir(dirname(join(this.work, path)), { recursive: true });
      await writeFile(join(this.work, path), content);
    }
  }

  async remove(...paths: string[]): Promise<void> {
    for (const path of paths) await rm(join(this.work, path), { recursive: true });
  }

  /** `git mv`, making the new folder. */
  async move(from: string, to: string): Promise<void> {
    await mkdir(dirname(join(this.work, to)), { recursive: true });
    await this.git(this.work, 'mv', from, to);
  }

  async symlink(path: string, target: string): Promise<void> {
    await mkdir(dirname(join(this.work, path)), { recursive: true });
    await symlink(target, join(this.work, path));
  }

  /**
   * Commits everything in the working copy (or, `stage: false`, what is staged), pushes it to
   * a branch (`force` to rewrite it) and gives the commit.
   */
  async commit(
    message: string,
    options: { force?: boolean; branch?: string; stage?: boolean } = {},
  ): Promise<string> {
    if (options.stage !== false) await this.git(this.work, 'add', '--all');
    await this.git(this.work, 'commit', '--quiet', '--allow-empty', '-m', message);
    const branch = options.branch ?? 'main';
    await this.git(
      this.work,
      'push',
      '--quiet',
      ...(options.force ? ['--force'] : []),
      'origin',
      `HEAD:refs/heads/${branch}`,
    );
    return (await this.git(this.work, 'rev-parse', 'HEAD')).trim();
  }

  /** The blob hash of a file at a commit. */
  async blob(commit: string, path: string): Promise<string> {
    return (await this.git(this.work, 'rev-parse', `${commit}:${path}`)).trim();
  }

  /** Removes the repositories and the caches made in {@link root}. */
  async destroy(): Promise<void> {
    await rm(this.root, { recursive: true, force: true });
  }
}

/** A git source's declaration, with overrides. */
export function aGitSource(overrides: Partial<GitSourceDeclaration> = {}): GitSourceDeclaration {
  return { id: 'handbook', kind: 'git', mount: 'handbook', url: 'file:///nowhere', ...overrides };
}

/** A run's context, with overrides. */
export function aContext(
  overrides: Partial<{
    known: ReadonlyMap<string, KnownItem>;
    cursor: string | null;
    signal: AbortSignal;
    maxBodyBytes: number;
  }> = {},
): EnumerationContext {
  return {
    known: new Map(),
    cursor: null,
    signal: new AbortController().signal,
    maxBodyBytes: 5 * 1024 * 1024,
    ...overrides,
  };
}

/** What a complete run wrote, as the next run knows it. */
export function knownOf(
  items: ReadonlyArray<{ key: string; version: string; uri: string }>,
): Map<string, KnownItem> {
  return new Map(items.map((item) => [item.key, { version: item.version, uri: item.uri }]));
}
