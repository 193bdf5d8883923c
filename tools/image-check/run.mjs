#!/usr/bin/env node
// `npm run image:check` (run by .ci/run): the image built from docker/Dockerfile and every
// container of the Helm chart run in it, for real, with buildah and podman (docs/operations.md,
// "The image in CI").
//
// 1. buildah and podman (installed from Debian's packages under CI=true or with --install;
//    where they cannot be, one line says why and the check exits 0).
// 2. The base image the Dockerfile names, made locally from Debian packages and this machine's
//    Node.js when no registry has it (host.mjs), then `buildah bud` of docker/Dockerfile as it
//    is; its size against the budget below, and what it must and must not hold.
// 3. The Docker trial mode of docs/operations.md as written (embedded PostgreSQL in a volume).
// 4. The chart rendered with its default values and with the production example of
//    docs/operations.md (its values file and its Secret), each workload's container run as
//    rendered (rendered.mjs) against a PostgreSQL on this host, and for the production example
//    a Qdrant (when its binary is found: services.mjs) and an embeddings server: the migration
//    Job twice, the server (probes, REST, MCP, /metrics, SIGTERM), the backup CronJob.
//
// Prints one line per step (times, sizes, each container's verdict) and exits 1 when any
// fails. Removes what it started (containers, volume, PostgreSQL, Qdrant, temporary folders);
// the images stay, as the build cache of the next run. `--measure-rebuild` also times a
// rebuild after a one-line change to src/. IMAGE_CHECK_TIMEOUT_S bounds the whole run (1800).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as host from './host.mjs';
import { scenarios } from './scenarios.mjs';
import { trialMode } from './trial.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const DOCKERFILE = join(ROOT, 'docker', 'Dockerfile');
const TAG = 'localhost/agent-data:check';
/** The size budget of the image, in MB (docs/operations.md, Image). */
const SIZE_LIMIT_MB = 450;
const TIMEOUT_S = Number(process.env.IMAGE_CHECK_TIMEOUT_S ?? 1800);

const say = (label, text) => process.stdout.write(`${label.padEnd(6)} ${text}\n`);
const secondsOf = (ms) => `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;

/** What the run started and must remove, whatever happens. */
const started = { containers: new Set(), volumes: new Set(), stops: [], dirs: [] };
let failures = 0;

async function cleanUp() {
  for (const name of started.containers)
    await host.run('podman', ['rm', '--force', '--time', '0', name]);
  for (const name of started.volumes) await host.run('podman', ['volume', 'rm', '--force', name]);
  for (const stop of started.stops.reverse()) await stop().catch(() => undefined);
  for (const dir of started.dirs) rmSync(dir, { recursive: true, force: true });
  for (const child of host.running) child.kill('SIGKILL');
}

async function main() {
  const install = process.env.CI === 'true' || process.argv.includes('--install');
  const tools = await host.containerTools({ install });
  if (tools.why) {
    say('image', `check skipped: ${tools.why}`);
    return 'skipped';
  }
  if (tools.installed.length > 0)
    say('tools', `installed with apt-get: ${tools.installed.join(', ')}`);
  const versions = await host.run('sh', [
    '-c',
    'buildah --version; podman --version; runc --version | head -1',
  ]);
  say('tools', versions.stdout.trim().split('\n').join(', '));

  const scratch = mkdtempSync(join(tmpdir(), 'agent-data-image-check-'));
  started.dirs.push(scratch);
  const baseName = host.baseImageName(DOCKERFILE);
  const base = Date.now();
  say('base', `${await host.ensureBaseImage(baseName)} (${secondsOf(Date.now() - base)})`);

  const caBundle = host.npmCaBundle();
  const build = await host.buildImage({
    root: ROOT,
    dockerfile: DOCKERFILE,
    tag: TAG,
    caBundle,
    logFile: join(tmpdir(), 'agent-data-image-build.log'),
    timeoutMs: 1_500_000,
  });
  say(
    'build',
    `docker/Dockerfile → ${TAG} in ${secondsOf(build.ms)}${caBundle ? ` (npm's CA bundle ${caBundle} as a build secret)` : ''}; ${slowest(build)}`,
  );
  await checkImage(baseName);
  if (process.argv.includes('--measure-rebuild')) await measureRebuild(scratch, caBundle);

  const context = { root: ROOT, tag: TAG, scratch, started, say, secondsOf };
  const trial = await attempt('trial', () => trialMode(context));
  if (trial) say('ok', trial);
  for (const scenario of scenarios(context)) {
    say('chart', scenario.title);
    const results = await attempt('chart', () =>
      scenario.run((verdict) => say(verdict.ok ? 'ok' : 'FAIL', verdict.text)),
    );
    if (results && results.failed) failures += results.failed;
  }
}

/** The slowest steps of a build, for its line. */
function slowest(build) {
  const steps = build.slowest.map((step) => `${step.what.slice(0, 28)}… ${secondsOf(step.ms)}`);
  return `slowest: ${steps.join(', ')}`;
}

/** Runs `step`; a failure is reported on its own line, counted, and the run goes on. */
async function attempt(label, step) {
  try {
    return await step();
  } catch (error) {
    failures++;
    say('FAIL', `${label}: ${error.message}`);
    return undefined;
  }
}

/** The size budget, and what the image must hold and must not. */
async function checkImage(baseName) {
  const { totalMb, layers } = await host.imageLayers(TAG, baseName);
  const parts = layers.map((layer) => `${layer.what} ${layer.mb.toFixed(0)} MB`).join(', ');
  const within = totalMb <= SIZE_LIMIT_MB;
  if (!within) failures++;
  say(within ? 'size' : 'FAIL', `${totalMb.toFixed(0)} MB (budget ${SIZE_LIMIT_MB} MB): ${parts}`);

  const config = await host.imageConfig(TAG);
  const problems = [];
  if (config.User !== '1000:1000') problems.push(`user ${config.User}, not 1000:1000`);
  if (!config.Healthcheck?.Test?.length) problems.push('no HEALTHCHECK');
  if (config.Entrypoint?.[0] !== '/usr/bin/tini') problems.push(`entrypoint ${config.Entrypoint}`);
  if ((config.Env ?? []).some((e) => e.startsWith('NODE_EXTRA_CA_CERTS=')))
    problems.push('NODE_EXTRA_CA_CERTS set');
  // What is inside: the compiler, other platforms' ONNX Runtime, the CA bundle, dev files.
  const inside = await host.run(
    'podman',
    [
      'run',
      '--rm',
      '--runtime',
      'runc',
      '--network',
      'none',
      '--no-healthcheck',
      '--ulimit',
      'nofile=20000:20000',
      '--ulimit',
      'nproc=4096:4096',
      '--entrypoint',
      'sh',
      TAG,
      '-c',
      [
        'test -e node_modules/typescript && echo "typescript is installed"',
        'test -e node_modules/ts-node && echo "ts-node is installed"',
        'ls node_modules/onnxruntime-node/bin/napi-v6 | grep -vx linux | sed "s/^/ONNX Runtime for /"',
        'ls node_modules/onnxruntime-node/bin/napi-v6/linux | grep -vx x64 | sed "s/^/ONNX Runtime for linux\\//"',
        'test -e /run/secrets/npm-ca && echo "the build secret is in the image"',
        'test -e dist/.tsbuildinfo && echo "dist/.tsbuildinfo is in the image"',
        'test -z "$(find node_modules -name "*.d.ts" -print -quit)" || echo "type declarations are in the image"',
        'test -d src && echo "the TypeScript sources are in the image"',
        'true',
      ].join('; '),
    ],
    { timeoutMs: 60_000 },
  );
  problems.push(...inside.stdout.trim().split('\n').filter(Boolean));
  if (inside.code !== 0) problems.push(`looking inside failed: ${inside.stderr.trim()}`);
  if (problems.length > 0) failures++;
  say(
    problems.length ? 'FAIL' : 'ok',
    problems.length
      ? `image: ${problems.join('; ')}`
      : 'image: user 1000:1000, tini as PID 1, HEALTHCHECK kept, no compiler, ONNX Runtime for linux/x64 only, no build secret, no dev files',
  );
}

/**
 * Builds again from a copy of what the Dockerfile reads, with one line added to src/main.ts,
 * and says how long it took: the time a developer waits after a change to the code.
 */
async function measureRebuild(scratch, caBundle) {
  const context = join(scratch, 'context');
  const copied = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json'];
  copied.push('.dockerignore', 'console', 'migrations', 'src', 'docker/Dockerfile');
  await host.must('sh', [
    '-c',
    `mkdir -p "${context}" && cd "${ROOT}" && cp -a --parents ${copied.join(' ')} "${context}"`,
  ]);
  await host.must('sh', [
    '-c',
    `echo "// rebuild ${randomBytes(4).toString('hex')}" >> "${context}/src/main.ts"`,
  ]);
  const rebuild = await host.buildImage({
    root: context,
    dockerfile: join(context, 'docker', 'Dockerfile'),
    tag: `${TAG}-rebuild`,
    caBundle,
    logFile: join(tmpdir(), 'agent-data-image-rebuild.log'),
    timeoutMs: 600_000,
  });
  await host.run('podman', ['rmi', `${TAG}-rebuild`]);
  say('build', `rebuild after a change to src/: ${secondsOf(rebuild.ms)}; ${slowest(rebuild)}`);
}

const deadline = setTimeout(async () => {
  say('FAIL', `image check: not done within ${TIMEOUT_S} s (IMAGE_CHECK_TIMEOUT_S)`);
  await cleanUp();
  process.exit(1);
}, TIMEOUT_S * 1000);
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    await cleanUp();
    process.exit(130);
  });
}

const begun = Date.now();
main()
  .catch((error) => {
    failures++;
    say('FAIL', error.message);
  })
  .then(async (outcome) => {
    await cleanUp();
    clearTimeout(deadline);
    // A skipped check says so in its one line.
    if (outcome !== 'skipped') {
      say(
        failures ? 'FAIL' : 'done',
        `image check: ${failures ? `${failures} failed` : 'every step passed'} in ${secondsOf(Date.now() - begun)}`,
      );
    }
    process.exit(failures ? 1 : 0);
  });
