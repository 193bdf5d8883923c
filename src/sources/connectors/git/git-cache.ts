import { mkdir, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Git } from './git-process';

/**
 * A source's cache: a bare repository of its own holding the commit the source follows
 * (`refs/sources/head`) and what earlier runs fetched. The URL is given to each fetch and
 * never stored in the repository's configuration, so a changed URL or credential needs no
 * migration and nothing secret is written to disk.
 */

/** The ref the fetched commit is kept under. */
export const HEAD_REF = 'refs/sources/head';

/** Lock files a killed or crashed git may leave behind in a bare repository. */
const LOCK_FILES = ['shallow.lock', `${HEAD_REF}.lock`, 'packed-refs.lock', 'config.lock'];

/**
 * Creates the cache repository on the first run, and removes lock files older than any git
 * command may run (a git killed with SIGKILL or a crashed server left them; one that is
 * younger belongs to a command still running, and makes this run fail rather than race it).
 */
export async function openCache(
  git: Git,
  dir: string,
  staleAfterMs: number,
  timeoutMs: number,
): Promise<void> {
  const exists = await stat(join(dir, 'HEAD')).then(
    () => true,
    () => false,
  );
  if (!exists) {
    await mkdir(dirname(dir), { recursive: true });
    // No template: no sample hooks, no description; nothing but the repository.
    await git.run(['init', '--bare', '--quiet', '--template=', dir], {
      timeoutMs,
      maxOutputBytes: 64 * 1024,
    });
    return;
  }
  const now = Date.now();
  for (const name of LOCK_FILES) {
    const path = join(dir, name);
    const info = await stat(path).catch(() => null);
    if (info !== null && now - info.mtimeMs > staleAfterMs) await rm(path, { force: true });
  }
}

/**
 * Fetches `ref` from the URL into {@link HEAD_REF} and gives the commit it now points to
 * (which may be newer than the one `ls-remote` saw a moment before). Only that ref, at depth
 * one: the history is not needed (renames are found between two trees), and objects an
 * earlier run fetched are not fetched again.
 */
export async function fetchHead(
  git: Git,
  dir: string,
  url: string,
  ref: string,
  timeouts: { network: number; local: number },
): Promise<string> {
  await git.run(
    [
      'fetch',
      '--no-tags',
      '--no-recurse-submodules',
      '--no-write-fetch-head',
      '--depth=1',
      '--quiet',
      '--',
      url,
      `+${ref}:${HEAD_REF}`,
    ],
    { cwd: dir, timeoutMs: timeouts.network, maxOutputBytes: 1024 * 1024 },
  );
  const { stdout } = await git.run(['rev-parse', '--verify', `${HEAD_REF}^{commit}`], {
    cwd: dir,
    timeoutMs: timeouts.local,
    maxOutputBytes: 1024,
  });
  return stdout.toString('latin1').trim();
}

/** Whether the cache holds this commit (one fetched by an earlier run, not yet pruned). */
export async function hasCommit(
  git: Git,
  dir: string,
  commit: string,
  timeoutMs: number,
): Promise<boolean> {
  const { code } = await git.run(['rev-parse', '--verify', '--quiet', `${commit}^{commit}`], {
    cwd: dir,
    timeoutMs,
    maxOutputBytes: 1024,
    answers: [1],
  });
  return code === 0;
}

/** Whether `path` is a folder in the commit's tree. */
export async function hasFolder(
  git: Git,
  dir: string,
  commit: string,
  path: string,
  timeoutMs: number,
): Promise<boolean> {
  const { code } = await git.run(['rev-parse', '--verify', '--quiet', `${commit}:${path}^{tree}`], {
    cwd: dir,
    timeoutMs,
    maxOutputBytes: 1024,
    answers: [1],
  });
  return code === 0;
}
