import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import type { RunView, SourceList, SourceView } from '../sources/sources.schemas';
import { RequestFailed, type RestClient } from './rest-client';
import { SERVER_OPTIONS, serverClient } from './server-client';
import { table } from './table';
import { CommandUsageError, help, out, err } from './usage-error';

const SOURCES_USAGE = `agent-data sources <list|sync> [options]

The folders, git repositories and web sites a running server keeps in sync with folders of the
knowledge base (declared in its SOURCES_FILE, or over POST /sources), through its admin API.

  list [--json]                                  each source, where it stands, its last run
  sync ID [--confirm-deletions] [--wait] [--json]
                                                 sync a source now; --wait for the run's end

  --server URL          the server (default AGENT_DATA_URL, else http://127.0.0.1:8080)
  --api-key-file FILE   the API key, read from a file (default: AGENT_DATA_API_KEY)

agent-data sources <command> --help says more of each.
Exit codes: 0 done, 1 the command could not be done or the run did not succeed (one line says
why), 2 a usage error.`;

const SOURCES_LIST_USAGE = `agent-data sources list [--json]

A line per source: its id, kind, mount, state (idle, queued, running, failing, paused), the
documents it owns, its last run (status, and when it ended or started) and its next scheduled
run. Deletions held for a confirmation, and a sources file the server refused, are said below.

  --json   print the server's answer (GET /sources) instead
  --server URL, --api-key-file FILE: as for every command`;

const SOURCES_SYNC_USAGE = `agent-data sources sync ID [--confirm-deletions] [--wait] [--json]

Asks the server to sync the source ID now (POST /sources/ID/sync): a run is queued, or the run
already queued or running is the one (a source has one at a time).

  --confirm-deletions   let the run delete more than the source's max_delete (25 % of its
                        documents by default); beyond it a run holds its deletions
  --wait                wait for the run to end and print its counts; exit code 0 when it
                        succeeded, 1 when it failed, ended with errors or was cancelled
  --json                print the run as the server gives it instead
  --server URL, --api-key-file FILE: as for every command`;

/** How often a run waited for is looked at: soon at first, then every two seconds. */
const WAIT_STEPS_MS = [250, 500, 1000, 2000];

/**
 * `agent-data sources <list|sync>` (docs/cli.md, Sources): resolves with the exit code. A
 * server's refusal (an unknown source: 404) is a RequestFailed, which main() prints as one line.
 */
export async function runSources(args: readonly string[]): Promise<number> {
  const [command, ...rest] = args;
  switch (command) {
    case '--help':
    case '-h':
    case 'help':
      out(SOURCES_USAGE);
      return 0;
    case 'list':
      return list(rest);
    case 'sync':
      return sync(rest);
    case undefined:
      throw new CommandUsageError('sources needs a command: list or sync', SOURCES_USAGE);
    default:
      throw new CommandUsageError(`unknown sources command "${command}"`, SOURCES_USAGE);
  }
}

async function list(args: readonly string[]): Promise<number> {
  const { values, positionals } = parse(args, SOURCES_LIST_USAGE, {});
  if (values.help) return help(SOURCES_LIST_USAGE);
  if (positionals.length > 0) {
    throw new CommandUsageError('sources list takes no argument', SOURCES_LIST_USAGE);
  }
  const answer = await serverClient(values, SOURCES_LIST_USAGE).call<SourceList>('GET', '/sources');
  if (values.json) {
    out(JSON.stringify(answer, null, 2));
    return 0;
  }
  if (answer.sources.length === 0) {
    out(answer.file === null ? 'no source declared' : `no source declared in ${answer.file}`);
  } else {
    out(
      table([
        ['id', 'kind', 'mount', 'state', 'documents', 'last run', 'next run'],
        ...answer.sources.map((source) => [
          source.id,
          source.kind,
          source.mount,
          source.state,
          source.documents === null ? '-' : String(source.documents),
          lastRunOf(source),
          source.next_run_at === null ? '-' : time(source.next_run_at),
        ]),
      ]),
    );
  }
  for (const source of answer.sources.filter((s) => s.held_deletions > 0)) {
    out(
      `${source.id} holds ${source.held_deletions} deletions: agent-data sources sync ${source.id} --confirm-deletions makes them`,
    );
  }
  if (answer.file_error !== null) {
    out(`${answer.file} was refused, the sources stay as they were: ${answer.file_error}`);
  }
  return 0;
}

async function sync(args: readonly string[]): Promise<number> {
  const { values, positionals } = parse(args, SOURCES_SYNC_USAGE, {
    'confirm-deletions': { type: 'boolean' },
    wait: { type: 'boolean' },
  });
  if (values.help) return help(SOURCES_SYNC_USAGE);
  if (positionals.length !== 1) {
    throw new CommandUsageError('sources sync takes one source id', SOURCES_SYNC_USAGE);
  }
  const [id] = positionals;
  const client = serverClient(values, SOURCES_SYNC_USAGE);
  const path = `/sources/${encodeURIComponent(id)}`;
  const asked = await client.call<RunView>(
    'POST',
    `${path}/sync${values['confirm-deletions'] ? '?confirm_deletions=true' : ''}`,
  );
  if (!values.wait) {
    out(values.json ? JSON.stringify(asked, null, 2) : `run ${asked.id} of ${id} ${asked.status}`);
    return 0;
  }
  if (!values.json) err(`run ${asked.id} of ${id} ${asked.status}; waiting for it to end`);
  const run = await ended(client, path, asked);
  if (values.json) {
    out(JSON.stringify(run, null, 2));
  } else {
    out(`run ${run.id} of ${id} ${run.status.replaceAll('_', ' ')}${tookOf(run)}`);
    // A run that failed or was cancelled wrote nothing it could count.
    if (run.status === 'succeeded' || run.status === 'completed_with_errors') out(countsOf(run));
    if (run.counts.held > 0) {
      out(
        `${run.counts.held} deletions held: agent-data sources sync ${id} --confirm-deletions makes them`,
      );
    }
    for (const item of run.failed_items) err(`failed ${item.document_id}: ${item.reason}`);
  }
  if (run.status === 'succeeded') return 0;
  err(`agent-data: run ${run.id} of ${id} ${run.status.replaceAll('_', ' ')}: ${reasonOf(run)}`);
  return 1;
}

/**
 * Polls the run until it is neither queued nor running. The runs route reads no single run:
 * the page of one run before `id + 1` is that run.
 */
async function ended(client: RestClient, path: string, run: RunView): Promise<RunView> {
  for (let step = 0; run.status === 'queued' || run.status === 'running'; step++) {
    await sleep(WAIT_STEPS_MS[Math.min(step, WAIT_STEPS_MS.length - 1)]);
    let runs: RunView[];
    try {
      ({ runs } = await client.call<{ runs: RunView[] }>(
        'GET',
        `${path}/runs?limit=1&before=${BigInt(run.id) + 1n}`,
      ));
    } catch (error) {
      if (error instanceof RequestFailed && error.status === 404) {
        throw new Error(`the source was removed before run ${run.id} ended`);
      }
      throw error;
    }
    if (runs[0]?.id !== run.id) throw new Error(`run ${run.id} is no longer listed`);
    run = runs[0];
  }
  return run;
}

/** Why a run did not succeed, in a line. */
function reasonOf(run: RunView): string {
  if (run.message !== null) return run.message;
  if (run.counts.failed > 0) return `${run.counts.failed} items failed (listed above)`;
  return 'the server gave no reason';
}

function countsOf(run: RunView): string {
  return Object.entries(run.counts)
    .map(([name, count]) => `${name} ${count}`)
    .join(', ');
}

function tookOf(run: RunView): string {
  if (run.started_at === null || run.finished_at === null) return '';
  const ms = Date.parse(run.finished_at) - Date.parse(run.started_at);
  return ` in ${(ms / 1000).toFixed(1)} s`;
}

/** The last run's status and when it ended (or started, or was queued). */
function lastRunOf(source: SourceView): string {
  const run = source.last_run;
  if (run === null) return 'never';
  return `${run.status} ${time(run.finished_at ?? run.started_at ?? run.queued_at)}`;
}

/** `2026-11-27 10:32:59Z`: UTC to the second. */
function time(iso: string): string {
  return iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
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
      options: { ...options, ...SERVER_OPTIONS, help: { type: 'boolean', short: 'h' } },
    });
  } catch (error) {
    throw new CommandUsageError((error as Error).message, usage);
  }
}
