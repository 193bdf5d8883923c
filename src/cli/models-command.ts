import { parseArgs } from 'node:util';
import type { AppConfig } from '../config/app-config';
import { ConfigError } from '../config/config-values';
import { EmbeddingsChoice } from '../config/embeddings-choice';
import { loadConfig } from '../config/load-config';
import { addModel } from '../models/add-model';
import type { ModelCheck } from '../models/model-check';
import type { InstalledModel, ReplacedInstall } from '../models/model-store';
import { modelsOverview, type ModelEntry } from '../models/models-overview';
import { pullModel, waitingDownloads, type PullReport } from '../models/pull-model';
import {
  MODELS_ADD_USAGE,
  MODELS_LIST_USAGE,
  MODELS_PULL_USAGE,
  MODELS_USAGE,
} from './models-usage';
import { progressBar, type ProgressBar } from './progress-bar';
import { table } from './table';
import { CommandUsageError, help, out } from './usage-error';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * `agent-data models <pull|add|list>` (docs/cli.md, Models): resolves with the exit code. A failure
 * is a ModelError or a file-system error, whose message main() prints as one line.
 */
export async function runModels(args: readonly string[], env: Env): Promise<number> {
  const [command, ...rest] = args;
  switch (command) {
    case '--help':
    case '-h':
    case 'help':
      out(MODELS_USAGE);
      return 0;
    case 'pull':
      return pull(rest, env);
    case 'add':
      return add(rest, env);
    case 'list':
      return list(rest, env);
    case undefined:
      throw new CommandUsageError('models needs a command: pull, add or list', MODELS_USAGE);
    default:
      throw new CommandUsageError(`unknown models command "${command}"`, MODELS_USAGE);
  }
}

async function pull(args: readonly string[], env: Env): Promise<number> {
  const { values, positionals } = parse(args, MODELS_PULL_USAGE, {});
  if (values.help) return help(MODELS_PULL_USAGE);
  if (positionals.length !== 1) {
    throw new CommandUsageError('models pull takes one model name', MODELS_PULL_USAGE);
  }
  const config = configOf(env);
  const json = values.json === true;
  // Ctrl-C stops the download where it is (kept, resumable) and releases the pull's lock.
  const interruption = new AbortController();
  const interrupt = () => interruption.abort();
  process.once('SIGINT', interrupt);
  let bar: ProgressBar | undefined;
  let barOf: string | undefined;
  let report: PullReport;
  try {
    report = await pullModel(
      config.modelsDir,
      positionals[0],
      {
        baseUrl: config.modelsBaseUrl,
        token: config.modelsToken,
        timeoutMs: config.modelsTimeoutMs,
        signal: interruption.signal,
        threads: config.modelThreads,
      },
      (file, done, total) => {
        if (file !== barOf) {
          bar?.stop();
          bar = progressBar(json, { label: file, bytes: true });
          barOf = file;
        }
        bar?.update(done, total ?? done);
      },
    );
  } finally {
    bar?.stop();
    process.off('SIGINT', interrupt);
  }
  const files = Object.values(report.files);
  const received = files.reduce((sum, file) => sum + file.received, 0);
  const resumed = files.reduce((sum, file) => sum + file.resumed, 0);
  const unchecked = Object.entries(report.files)
    .filter(([, file]) => file.verified === 'size')
    .map(([name]) => name);
  const lines = report.upToDate
    ? []
    : [
        `received ${megabytes(received)}${resumed > 0 ? ` (${megabytes(resumed)} of an earlier run resumed)` : ''}; ${
          unchecked.length === 0
            ? 'each file checked against the hash the server announced'
            : `the server announced no hash for ${unchecked.join(' and ')}: checked by size, and by loading the model`
        }`,
      ];
  await reportInstalled(report.installed, config, json, {
    upToDate: report.upToDate,
    replaced: report.replaced,
    check: report.check,
    lines,
    extra: { up_to_date: report.upToDate, download: report.files },
  });
  return 0;
}

async function add(args: readonly string[], env: Env): Promise<number> {
  const { values, positionals } = parse(args, MODELS_ADD_USAGE, {});
  if (values.help) return help(MODELS_ADD_USAGE);
  if (positionals.length !== 2) {
    throw new CommandUsageError('models add takes a model name and a PATH', MODELS_ADD_USAGE);
  }
  const config = configOf(env);
  const [name, path] = positionals;
  const report = await addModel(config.modelsDir, name, path, {
    threads: config.modelThreads,
  });
  await reportInstalled(report.installed, config, values.json === true, {
    upToDate: false,
    replaced: report.replaced,
    check: report.check,
    lines: [],
    extra: {},
  });
  return 0;
}

async function list(args: readonly string[], env: Env): Promise<number> {
  const { values, positionals } = parse(args, MODELS_LIST_USAGE, { check: { type: 'boolean' } });
  if (values.help) return help(MODELS_LIST_USAGE);
  if (positionals.length > 0) {
    throw new CommandUsageError('models list takes no argument', MODELS_LIST_USAGE);
  }
  const config = configOf(env);
  const overview = await modelsOverview(config.modelsDir, {
    check: values.check === true,
    threads: config.modelThreads,
  });
  const waiting = await waitingDownloads(config.modelsDir);
  const server = await serverChoice(config);
  if (values.json) {
    out(
      JSON.stringify(
        {
          models_dir: config.modelsDir,
          installed: overview.installed,
          waiting: waiting.map((download) => ({
            ...download,
            resume: `agent-data models pull ${download.name}`,
          })),
          available: overview.available.map((model) => ({
            ...model,
            install: `agent-data models pull ${model.name}`,
          })),
          server,
        },
        null,
        2,
      ),
    );
    return 0;
  }
  out(`MODELS_DIR ${config.modelsDir}`);
  if (overview.installed.length === 0) {
    out('no model installed');
  } else {
    out('');
    out(
      table([
        ['installed', 'size', 'on', 'state', 'from'],
        ...overview.installed.map((entry) => [
          entry.name,
          entry.bytes === undefined ? '' : megabytes(entry.bytes),
          entry.installed_at?.slice(0, 10) ?? '',
          stateOf(entry),
          entry.source ?? '',
        ]),
      ]),
    );
  }
  for (const download of waiting) {
    const received =
      download.size === undefined
        ? megabytes(download.received)
        : `${(download.received / 1e6).toFixed(1)} of ${megabytes(download.size)}`;
    out('');
    out(
      `a download of ${download.name} waits: ${received} received; \`agent-data models pull ${download.name}\` resumes it`,
    );
  }
  if (overview.available.length > 0) {
    out('');
    out(
      table([
        ['not installed', 'dimensions', 'languages', 'licence', 'to install it'],
        ...overview.available.map((model) => [
          model.name,
          String(model.dimensions),
          model.languages,
          model.licence,
          `agent-data models pull ${model.name}`,
        ]),
      ]),
    );
  }
  out('');
  out(serverLine(server));
  return 0;
}

/** What `models list` says of one installed folder. */
function stateOf(entry: ModelEntry): string {
  if (!entry.usable) return entry.problem ?? 'not usable';
  if (entry.check === undefined) return 'installed';
  return entry.check.loads ? 'loads' : `does not load: ${entry.check.error}`;
}

/** What `models add` or `models pull` did beside installing. */
interface InstallNotes {
  readonly upToDate: boolean;
  readonly replaced?: ReplacedInstall;
  /** How the files were told to be the model's; none when nothing was installed. */
  readonly check?: ModelCheck;
  readonly lines: readonly string[];
  readonly extra: Record<string, unknown>;
}

/**
 * What a model installed is, what it replaced, and what the server will run: a running
 * server keeps the embedder it started with, so an install counts from its next start.
 */
async function reportInstalled(
  installed: InstalledModel,
  config: AppConfig,
  json: boolean,
  notes: InstallNotes,
): Promise<void> {
  const server = await serverChoice(config);
  const name = installed.model.name;
  if (json) {
    const { manifest } = installed;
    out(
      JSON.stringify(
        {
          name: installed.model.name,
          dir: installed.dir,
          bytes: installed.bytes,
          source: manifest.source,
          installed_at: manifest.installed_at,
          files: manifest.files,
          ...(notes.check ? { check: notes.check } : {}),
          replaced: notes.replaced ?? null,
          ...notes.extra,
          server,
        },
        null,
        2,
      ),
    );
    return;
  }
  out(
    notes.upToDate
      ? `${name} is installed already with the files ${installed.manifest.source} announces (${installed.dir}): nothing to download`
      : `installed ${name} (${megabytes(installed.bytes)}) in ${installed.dir}, from ${installed.manifest.source}`,
  );
  if (notes.replaced) out(`replaced the installed ${name}${replacedFrom(notes.replaced)}`);
  for (const line of notes.lines) out(line);
  if (notes.check === 'dimensions') {
    out(
      `${name} has no recorded vector to check files against: these were checked by the length of their vectors (${installed.model.dimensions}) only`,
    );
  }
  out(
    server.starts && server.model === name && !notes.upToDate
      ? `the server uses it from its next start: ${server.reason}`
      : serverLine(server),
  );
}

/** Where a replaced install came from, as its manifest said. */
function replacedFrom(replaced: ReplacedInstall): string {
  const parts = [
    replaced.source && `from ${replaced.source}`,
    replaced.installed_at && `installed ${replaced.installed_at.slice(0, 10)}`,
  ].filter(Boolean);
  return parts.length === 0 ? '' : ` (${parts.join(', ')})`;
}

/**
 * The embedder a server started now would run, by the server's own rule (EmbeddingsChoice):
 * EMBEDDINGS_MODEL, else the one model installed, else the latent-semantic model.
 */
async function serverChoice(config: AppConfig): Promise<ServerChoice> {
  try {
    const choice = await EmbeddingsChoice.choose(config);
    return {
      starts: true,
      embedder: choice.kind,
      ...(choice.installed ? { model: choice.installed.model.name } : {}),
      reason: choice.reason,
    };
  } catch (error) {
    // EMBEDDINGS_MODEL names a model that is not installed whole.
    return { starts: false, embedder: 'none', reason: (error as Error).message };
  }
}

interface ServerChoice {
  /** False when the server would refuse to start (`reason` says why). */
  readonly starts: boolean;
  readonly embedder: 'openai' | 'model' | 'hashing' | 'none';
  readonly model?: string;
  readonly reason: string;
}

/** What the configuration makes a server started now run: a running one keeps its own. */
function serverLine(server: ServerChoice): string {
  return server.starts
    ? `at its next start the server runs: ${server.reason}`
    : `the server's next start would fail: ${server.reason}`;
}

function configOf(env: Env): AppConfig {
  try {
    return loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      throw new Error(`invalid configuration: ${error.message}`, { cause: error });
    }
    throw error;
  }
}

function parse<O extends Record<string, { type: 'boolean' | 'string' }>>(
  args: readonly string[],
  usage: string,
  options: O,
) {
  try {
    return parseArgs({
      args: [...args],
      allowPositionals: true,
      options: {
        ...options,
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new CommandUsageError((error as Error).message, usage);
  }
}

function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}
