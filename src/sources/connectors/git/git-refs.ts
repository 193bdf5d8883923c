import type { Git } from './git-process';

/** The ref a source follows, as the remote has it now. */
export interface RemoteHead {
  /** The full name to fetch (`refs/heads/main`, `refs/tags/v1`; `HEAD` if the remote hides it). */
  readonly ref: string;
  /** The commit it points to (an annotated tag peeled). */
  readonly commit: string;
}

/** A full commit hash (SHA-1, or SHA-256 for a repository in that format). */
export const COMMIT_HASH = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/**
 * Whether a declared ref is a name git can fetch, and nothing else: no option (`-x`), no
 * refspec (`a:b`), no revision syntax (`main~1`, `@{…}`, `..`).
 */
export function isRefName(ref: string): boolean {
  return (
    /^[A-Za-z0-9._/+-]+$/.test(ref) &&
    !ref.startsWith('-') &&
    !ref.startsWith('/') &&
    !ref.endsWith('/') &&
    !ref.endsWith('.') &&
    !/\.\.|\/\/|\/\.|\.lock(\/|$)/.test(ref)
  );
}

/** The name a ref is shown by (`main`, `v1`), for a run's version (`main@1a2b3c4`). */
export function shortName(ref: string): string {
  return ref.replace(/^refs\/(heads|tags)\//, '');
}

/** The patterns `ls-remote` is asked for: a branch of that name, else a tag (and its peeled commit). */
export function patternsOf(ref: string): string[] {
  const names = ref.startsWith('refs/') ? [ref] : [`refs/heads/${ref}`, `refs/tags/${ref}`];
  return names.flatMap((name) => [name, `${name}^{}`]);
}

/**
 * The head `ls-remote` answered for `ref` (`patternsOf`), or for the remote's HEAD when no
 * ref is declared (`--symref` giving the branch it names). A branch wins over a tag of the
 * same name; an annotated tag gives the commit it points to. `null` when there is none.
 */
export function headOf(output: string, ref: string | undefined): RemoteHead | null {
  const hashes = new Map<string, string>();
  let symref: string | null = null;
  for (const line of output.split('\n')) {
    const symbolic = /^ref: (\S+)\tHEAD$/.exec(line);
    if (symbolic) {
      symref = symbolic[1];
      continue;
    }
    const match = /^([0-9a-f]+)\t(.+)$/.exec(line);
    if (match && COMMIT_HASH.test(match[1])) hashes.set(match[2], match[1]);
  }
  if (ref === undefined) {
    const commit = hashes.get('HEAD');
    return commit === undefined
      ? null
      : { ref: symref !== null && isRefName(symref) ? symref : 'HEAD', commit };
  }
  for (const name of patternsOf(ref).filter((pattern) => !pattern.endsWith('^{}'))) {
    const commit = hashes.get(`${name}^{}`) ?? hashes.get(name);
    if (commit !== undefined) return { ref: name, commit };
  }
  return null;
}

/**
 * Asks the remote where `ref` (or its HEAD) stands: one `git ls-remote`, which reads no
 * object. Throws naming the ref and the URL when the remote has no such ref.
 */
export async function remoteHead(
  git: Git,
  url: string,
  ref: string | undefined,
  timeoutMs: number,
): Promise<RemoteHead> {
  const args =
    ref === undefined
      ? ['ls-remote', '--symref', '--', url, 'HEAD']
      : ['ls-remote', '--', url, ...patternsOf(ref)];
  const { stdout } = await git.run(args, { timeoutMs, maxOutputBytes: 1024 * 1024 });
  const head = headOf(stdout.toString('utf8'), ref);
  if (head === null) {
    throw new Error(
      ref === undefined
        ? `${git.redact(url)} has no default branch to follow (its HEAD names no commit): declare a ref`
        : `the ref ${ref} does not exist in ${git.redact(url)}`,
    );
  }
  return head;
}
