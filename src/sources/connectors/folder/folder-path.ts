import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';

/**
 * Why a folder source's path cannot be synced now, or `null` when it can: it must exist, be a
 * folder (a symbolic link to one is followed: the declaration names it) and be readable. The
 * message names the path and the problem, for the source's status and the run's record.
 */
export async function folderProblem(path: string): Promise<string | null> {
  let isFolder: boolean;
  try {
    isFolder = (await stat(path)).isDirectory();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return `the folder ${path} does not exist`;
    if (code === 'ENOTDIR') return `${path} is not a folder (a part of its path is a file)`;
    if (code === 'EACCES') return `the folder ${path} cannot be reached (permission denied)`;
    return `the folder ${path} cannot be examined (${code ?? (error as Error).message})`;
  }
  if (!isFolder) return `${path} is not a folder`;
  try {
    await access(path, constants.R_OK | constants.X_OK);
  } catch {
    return `the folder ${path} cannot be read (permission denied)`;
  }
  return null;
}
