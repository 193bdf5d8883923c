import { mkdir, readdir, rm, rmdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { lock } from 'proper-lockfile';
import { checkModelFiles, FingerprintMismatch, type ModelCheck } from './model-check';
import type { HubSettings } from './hub-client';
import { fileHashes, matchesDigest, type Announcement } from './hub-digest';
import {
  announce,
  discard,
  download,
  partialFile,
  readNoteSize,
  verify,
  type PartialFile,
} from './hub-download';
import { HubError, hubFailureMessage, type FailureContext } from './hub-failure';
import { knownModel, type KnownModel } from './known-models';
import {
  installModel,
  MODEL_FILE,
  ModelError,
  readInstalled,
  TOKENIZER_FILE,
  unknownModel,
  type InstalledModel,
  type ReplacedInstall,
} from './model-store';

/** Where downloads wait, under MODELS_DIR (hidden: never taken for a model). */
export const PARTIAL_DIR = '.partial';

/** What `agent-data models pull` did. */
export interface PullReport {
  readonly installed: InstalledModel;
  /** The model installed already had the files the hub announces: nothing was downloaded. */
  readonly upToDate: boolean;
  /** The install it replaced, when another one of the model was there. */
  readonly replaced?: ReplacedInstall;
  /** How the files were told to be the model's (model-check.ts); none when up to date. */
  readonly check?: ModelCheck;
  /** Per file of the model: bytes received now, bytes an earlier run had received, the check. */
  readonly files: Readonly<
    Record<
      typeof MODEL_FILE | typeof TOKENIZER_FILE,
      { received: number; resumed: number; verified: 'sha256' | 'sha1' | 'size' }
    >
  >;
}

/** Told of each file's progress: its name in the repository, bytes there, total when known. */
export type PullProgress = (file: string, done: number, total: number | undefined) => void;

/**
 * `agent-data models pull NAME`: the model's two files from the hub (or a mirror) into
 * MODELS_DIR/.partial/NAME, each resumed from what an earlier run received and checked
 * against the hash the hub announces; loaded and run once; then installed whole. Only one
 * pull of a model runs at a time in a MODELS_DIR. A ModelError says why it could not.
 */
export async function pullModel(
  modelsDir: string,
  name: string,
  settings: HubSettings & { readonly threads: number },
  progress?: PullProgress,
): Promise<PullReport> {
  const model = knownModel(name);
  if (model === undefined) throw unknownModel(name);
  const dir = join(modelsDir, PARTIAL_DIR, model.name);
  await mkdir(dir, { recursive: true });
  const release = await lockPull(dir, model);
  const files = [
    { target: MODEL_FILE, path: model.hub.model },
    { target: TOKENIZER_FILE, path: model.hub.tokenizer },
  ] as const;
  let at: FailureContext = context(model, settings, model.hub.model);
  try {
    const announced: Announcement[] = [];
    for (const file of files) {
      at = context(model, settings, file.path);
      announced.push(await announce(fileUrl(settings.baseUrl, model, file.path), settings));
    }
    const current = await upToDate(modelsDir, model, announced);
    if (current !== undefined) {
      await rm(dir, { recursive: true, force: true });
      return { installed: current, upToDate: true, files: nothingReceived(announced) };
    }
    const parts: PartialFile[] = [];
    const report: Partial<Record<string, PullReport['files'][typeof MODEL_FILE]>> = {};
    for (const [i, file] of files.entries()) {
      at = { ...context(model, settings, file.path), size: announced[i].size };
      const part = partialFile(join(dir, file.target));
      const { received, resumed } = await download(
        fileUrl(settings.baseUrl, model, file.path),
        announced[i],
        part,
        settings,
        progress && ((done, total) => progress(file.path, done, total)),
      );
      await verify(part, announced[i]);
      parts.push(part);
      report[file.target] = {
        received,
        resumed,
        verified: announced[i].digest?.algorithm ?? 'size',
      };
    }
    const [modelPart, tokenizerPart] = parts;
    const paths = { model: modelPart.path, tokenizer: tokenizerPart.path };
    let check: ModelCheck;
    try {
      check = await checkModelFiles(paths, model, settings.threads, {
        [paths.model]: model.hub.model,
        [paths.tokenizer]: model.hub.tokenizer,
      });
    } catch (error) {
      // They are the hub's files, as announced: downloading them again would not mend them.
      await Promise.all(parts.map(discard));
      if (error instanceof FingerprintMismatch) {
        throw new ModelError(
          `the files of ${model.hub.repo} at ${shownBase(settings.baseUrl)} are not ${model.name} (they were removed): ${error.detail}`,
        );
      }
      throw error instanceof ModelError
        ? new ModelError(
            `the files of ${model.hub.repo} at ${shownBase(settings.baseUrl)} are not a model this server runs as ${model.name} (they were removed): ${error.message}`,
          )
        : error;
    }
    const done = await installModel(modelsDir, model, paths, sourceOf(settings, model), {
      move: true,
    });
    await rm(dir, { recursive: true, force: true });
    return { ...done, check, upToDate: false, files: report as PullReport['files'] };
  } catch (error) {
    if (error instanceof HubError) throw new ModelError(hubFailureMessage(error.failure, at));
    throw error;
  } finally {
    await release().catch(() => undefined);
    // The model's folder, and `.partial` itself, go once no download waits in them.
    await rmdir(dir).catch(() => undefined);
    await rmdir(join(modelsDir, PARTIAL_DIR)).catch(() => undefined);
  }
}

/** The installed model when its files are those the hub announces (every hash given). */
async function upToDate(
  modelsDir: string,
  model: KnownModel,
  announced: readonly Announcement[],
): Promise<InstalledModel | undefined> {
  if (announced.some((file) => file.digest === undefined)) return undefined;
  const installed = await readInstalled(modelsDir, model.name).catch(() => undefined);
  if (installed === undefined) return undefined;
  const targets = [MODEL_FILE, TOKENIZER_FILE];
  for (const [i, file] of announced.entries()) {
    const hashes = await fileHashes(join(installed.dir, targets[i]));
    if (!matchesDigest(file.digest!, hashes)) return undefined;
  }
  return installed;
}

function nothingReceived(announced: readonly Announcement[]): PullReport['files'] {
  const none = (file: Announcement) => ({
    received: 0,
    resumed: 0,
    verified: file.digest?.algorithm ?? ('size' as const),
  });
  return { [MODEL_FILE]: none(announced[0]), [TOKENIZER_FILE]: none(announced[1]) };
}

/** Takes the model's pull lock (`.partial/NAME.lock`), or says another pull holds it. */
async function lockPull(dir: string, model: KnownModel): Promise<() => Promise<void>> {
  try {
    return await lock(dir, {
      lockfilePath: `${dir}.lock`,
      realpath: false,
      // A pull refreshes its lock every 2 s; one silent for 10 s was killed.
      stale: 10_000,
      update: 2_000,
      // Losing the lock (the process stalled past `stale`) changes nothing of this pull's
      // files; another pull of the model would have waited for the lock to go stale.
      onCompromised: () => undefined,
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOCKED') {
      throw new ModelError(
        `another \`agent-data models pull ${model.name}\` is running on this MODELS_DIR: let it finish, or stop it and run this again`,
      );
    }
    throw error;
  }
}

/** `BASE/REPO/resolve/REVISION/PATH`, each part escaped as the hub expects. */
export function fileUrl(baseUrl: string, model: KnownModel, path: string): URL {
  const escaped = path.split('/').map(encodeURIComponent).join('/');
  const repo = model.hub.repo.split('/').map(encodeURIComponent).join('/');
  return new URL(`${baseUrl}/${repo}/resolve/${encodeURIComponent(model.hub.revision)}/${escaped}`);
}

/** MODELS_BASE_URL as messages and manifests show it: without credentials. */
export function shownBase(baseUrl: string): string {
  const url = new URL(baseUrl);
  url.username = '';
  url.password = '';
  return url.href.replace(/\/+$/, '');
}

function sourceOf(settings: HubSettings, model: KnownModel): string {
  return `${shownBase(settings.baseUrl)}/${model.hub.repo}/resolve/${model.hub.revision}`;
}

function context(model: KnownModel, settings: HubSettings, file: string): FailureContext {
  return {
    name: model.name,
    file,
    url: `${shownBase(settings.baseUrl)}/${model.hub.repo}/resolve/${model.hub.revision}/${file}`,
    repo: model.hub.repo,
    base: shownBase(settings.baseUrl),
    tokenSent: settings.token !== undefined,
    timeoutMs: settings.timeoutMs,
  };
}

/** A download waiting in `.partial` for a pull to resume it. */
export interface WaitingDownload {
  readonly name: string;
  /** Bytes received of its files. */
  readonly received: number;
  /** Bytes of the files begun, when the hub announced them. */
  readonly size?: number;
}

/** The downloads an interrupted pull left in `modelsDir`, by model. */
export async function waitingDownloads(modelsDir: string): Promise<WaitingDownload[]> {
  const root = join(modelsDir, PARTIAL_DIR);
  const names = await readdir(root, { withFileTypes: true }).then(
    (entries) => entries.filter((e) => e.isDirectory()).map((e) => e.name),
    () => [],
  );
  const waiting: WaitingDownload[] = [];
  for (const name of names.sort()) {
    let received = 0;
    let size: number | undefined = 0;
    let parts = 0;
    for (const target of [MODEL_FILE, TOKENIZER_FILE]) {
      const part = partialFile(join(root, name, target));
      const bytes = await stat(part.path).then(
        (s) => s.size,
        () => undefined,
      );
      if (bytes === undefined) continue;
      parts++;
      received += bytes;
      const expected = await readNoteSize(part);
      size = size === undefined || expected === undefined ? undefined : size + expected;
    }
    if (parts > 0) waiting.push({ name, received, ...(size !== undefined ? { size } : {}) });
  }
  return waiting;
}
