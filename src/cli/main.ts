import { statSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { AppConfig } from '../config/app-config';
import { validateFolder } from '../documents/document-id';
import { MCP_USAGE, mcpProfileOf, McpUsageError } from './mcp-usage';
import { progressBar } from './progress-bar';
import { apiKey, SERVER_OPTIONS, serverClient } from './server-client';
import { CommandUsageError } from './usage-error';

const USAGE = `agent-data <command> [options]

Commands:
  serve                          run the server (what npm start runs)
  import <dir> [--prefix FOLDER] [--mirror] [--dry-run] [--json]
                                 bring a folder of files in (markdown, text, HTML, PDF, DOCX)
  export <FOLDER> <dir> [--json] write the documents under FOLDER as files
  mcp [--profile NAME] [--api-key-file FILE] [--standalone]
                                 serve MCP over stdio for a local agent, through the server
                                 running on DATA_DIR if one does (agent-data mcp --help)
  models pull|add|list           download, install and list the embedding models the server runs
                                 (agent-data models --help)
  sources list|sync              the folders, repositories and sites a server keeps in sync, and
                                 a sync now (agent-data sources --help)
  backup FILE [--force] [--json] save a backup of the server's knowledge base into FILE
                                 (--force: replace FILE if it exists)
  restore FILE [--json]          restore a backup into the server's empty knowledge base

Options of import, export, sources, backup and restore:
  --server URL          the server (default AGENT_DATA_URL, else http://127.0.0.1:8080)
  --api-key-file FILE   the API key, read from a file (default: AGENT_DATA_API_KEY)
  --help                this text

Exit codes: 0 done, 1 some items failed (each is listed) or the command could not run,
2 a usage error. agent-data --version prints the version.`;

const IMPORT_USAGE = `agent-data import <dir> [--prefix FOLDER] [--mirror] [--dry-run] [--json]

Brings the files under <dir> in: <dir>/a/b.md becomes FOLDER/a/b.md. YAML front matter gives
the title, the tags and (the rest) the metadata. .md, .markdown and .txt are taken as they are;
.html, .htm, .pdf and .docx are converted to markdown (of a page, its main content only: no
navigation, header or footer). Hidden files and folders, symbolic links, other types and files
over the body limit are skipped, each with its reason.

An unchanged file writes nothing; a changed one is an update conditional on the revision listed;
a file renamed with the same content is a move. Running it twice reports 0 changes.

  --prefix FOLDER   the folder the documents go under (required with --mirror)
  --mirror          also delete (softly) the documents under FOLDER that have no file any more
  --dry-run         say what would be done, write nothing
  --json            print a machine-readable report instead of the summary line
  --max-bytes N     the server's body limit (default 1048576)
  --server URL, --api-key-file FILE: as for every command`;

const EXPORT_USAGE = `agent-data export <FOLDER> <dir> [--json]

Writes every document under FOLDER into <dir> (FOLDER/a/b.md → <dir>/a/b.md) with YAML front
matter (title, tags, metadata) and the body as it is. Importing <dir> with --prefix FOLDER
afterwards changes nothing.

  --json   print a machine-readable report instead of the summary line
  --server URL, --api-key-file FILE: as for every command`;

class UsageError extends Error {}

/**
 * The process's entry (bin/agent-data.js): runs the command of `argv` and sets the exit code
 * (a server or an MCP session sets its own when it ends).
 */
export function runCli(argv: readonly string[]): void {
  main(argv).then(
    (code) => {
      if (code >= 0) process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(
        `agent-data: ${error instanceof Error ? error.message : String(error)}\n`,
      );
      process.exitCode = 1;
    },
  );
}

/**
 * Runs one command; resolves with the process's exit code. Each command loads what it needs
 * when it runs (converters, ONNX Runtime, the server), so that a command starts in the time
 * its own work takes.
 */
export async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case undefined:
      case '--help':
      case '-h':
      case 'help':
        process.stdout.write(`${USAGE}\n`);
        return command === undefined ? 2 : 0;
      case 'serve':
        if (rest.includes('--help')) {
          process.stdout.write(
            'agent-data serve\n\nRuns the server on its configuration (see docs/configuration.md).\n',
          );
          return 0;
        }
        await import('../main');
        return -1; // the server runs until it is stopped
      case '--version':
      case '-v':
        process.stdout.write(`agent-data ${(await import('../common/version')).SERVER_VERSION}\n`);
        return 0;
      case 'import':
        return await runImport(rest);
      case 'export':
        return await runExport(rest);
      case 'mcp':
        return await runMcpCommand(rest);
      case 'models':
        return await runModelsCommand(rest);
      case 'sources':
        return await (await import('./sources-command')).runSources(rest);
      case 'backup':
        return await (await import('./backup-command')).runBackup(rest);
      case 'restore':
        return await (await import('./backup-command')).runRestore(rest);
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (error) {
    if (
      error instanceof UsageError ||
      error instanceof McpUsageError ||
      error instanceof CommandUsageError ||
      (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    ) {
      const usage =
        error instanceof McpUsageError
          ? MCP_USAGE
          : error instanceof CommandUsageError
            ? error.usage
            : USAGE;
      process.stderr.write(`agent-data: ${(error as Error).message}\n\n${usage}\n`);
      return 2;
    }
    process.stderr.write(`agent-data: ${(error as Error).message}\n`);
    return 1;
  }
}

async function runImport(args: readonly string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: {
      ...SERVER_OPTIONS,
      prefix: { type: 'string' },
      mirror: { type: 'boolean' },
      'dry-run': { type: 'boolean' },
      'max-bytes': { type: 'string' },
    },
  });
  if (values.help) {
    process.stdout.write(`${IMPORT_USAGE}\n`);
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError('import takes one folder');
  const [dir] = positionals;
  const folder = statSync(dir, { throwIfNoEntry: false });
  if (folder === undefined) throw new Error(`${dir} does not exist`);
  if (!folder.isDirectory()) throw new Error(`${dir} is not a folder`);
  if (values.mirror && !values.prefix) throw new UsageError('--mirror needs --prefix');
  // An empty --prefix is the root, as no --prefix is.
  if (values.prefix === '') values.prefix = undefined;
  if (values.prefix !== undefined) {
    // The folder's rules are the ids' (no "..", no "//", not from "/"): said now, not once per file.
    try {
      validateFolder(values.prefix, '--prefix');
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
  }
  const maxBytes = Number(values['max-bytes'] ?? 1_048_576);
  if (!Number.isInteger(maxBytes) || maxBytes < 1)
    throw new UsageError('--max-bytes must be a number of bytes');
  const { importFolder, summaryOf } = await import('./import-folder');
  const bar = progressBar(values.json === true);
  const report = await importFolder(serverClient(values, USAGE), {
    dir,
    prefix: values.prefix,
    mirror: values.mirror === true,
    dryRun: values['dry-run'] === true,
    maxBytes,
    progress: bar?.update,
  });
  bar?.stop();
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ ...report, summary: summaryOf(report) }, null, 2)}\n`);
  } else {
    for (const { file, reason } of report.skipped)
      process.stderr.write(`skipped ${file}: ${reason}\n`);
    for (const { document_id, error } of report.failed) {
      process.stderr.write(`failed ${document_id}: ${error}\n`);
    }
    process.stdout.write(`${summaryOf(report)}\n`);
  }
  return report.failed.length > 0 ? 1 : 0;
}

async function runExport(args: readonly string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: SERVER_OPTIONS,
  });
  if (values.help) {
    process.stdout.write(`${EXPORT_USAGE}\n`);
    return 0;
  }
  if (positionals.length !== 2) throw new UsageError('export takes a FOLDER and a target folder');
  const [folder, dir] = positionals;
  const { exportFolder } = await import('./export-folder');
  const bar = progressBar(values.json === true);
  const report = await exportFolder(serverClient(values, USAGE), folder, dir, bar?.update);
  bar?.stop();
  if (values.json) {
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } else {
    for (const { document_id, error } of report.failed) {
      process.stderr.write(`failed ${document_id}: ${error}\n`);
    }
    if (report.written.length === 0 && report.failed.length === 0) {
      // Nothing is no error (an empty folder), but a folder misspelt, or a document named
      // where a folder was meant, is worth a line.
      process.stderr.write(
        `no document under ${folder.replace(/\/+$/, '')}/ (a folder, as import's --prefix; nothing was written)\n`,
      );
    }
    process.stdout.write(`exported ${report.written.length}, failed ${report.failed.length}\n`);
  }
  return report.failed.length > 0 ? 1 : 0;
}

async function runMcpCommand(args: readonly string[]): Promise<number> {
  let values: { profile?: string; 'api-key-file'?: string; standalone?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: [...args],
      options: {
        profile: { type: 'string' },
        'api-key-file': { type: 'string' },
        standalone: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    // Answered by main() with the mcp command's own help.
    throw new McpUsageError((error as Error).message);
  }
  if (values.help) {
    process.stdout.write(`${MCP_USAGE}\n`);
    return 0;
  }
  const options = { profile: mcpProfileOf(values.profile), apiKey: apiKey(values['api-key-file']) };
  // A client shows the server's stderr to its user: warnings and errors only, unless asked.
  process.env.LOG_LEVEL ??= 'warn';
  const [{ loadConfig }, { startupFailure }] = await Promise.all([
    import('../config/load-config'),
    import('../config/config-values'),
  ]);
  let config: AppConfig;
  try {
    config = loadConfig();
  } catch (error) {
    process.stderr.write(startupFailure(error));
    return 1;
  }
  if (!values.standalone) {
    // Loads no more than an HTTP client: the application is only loaded below.
    const { runBridgedMcp } = await import('./mcp-bridge-command');
    const code = await runBridgedMcp(config, options);
    if (code !== undefined) return code;
  }
  const { runMcp } = await import('./mcp-command');
  return runMcp(config, options);
}

async function runModelsCommand(args: readonly string[]): Promise<number> {
  // Loaded only for this command: it brings ONNX Runtime and the configuration's parser.
  const { runModels } = await import('./models-command');
  return runModels(args, process.env);
}
