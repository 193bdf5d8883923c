// The host side of `npm run image:check`: running commands with a time limit, buildah and
// podman (installed from Debian's packages when allowed), the base image the Dockerfile names
// (made from Debian packages with mmdebstrap plus this machine's Node.js, since no registry is
// reachable), the build, and what the built image holds.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Every child still running, so that an interrupted check can end them. */
export const running = new Set();

/**
 * Runs `command` and resolves with its exit code and output (never rejects on a non-zero
 * exit). Past `timeoutMs` it is killed and `timedOut` is set.
 */
export function run(command, args, { timeoutMs = 120_000, env, input, cwd, onOutput } = {}) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(command, args, {
      cwd,
      env: env ?? process.env,
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    running.add(child);
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      onOutput?.(String(chunk));
    });
    child.stderr.on('data', (chunk) => (stderr += chunk));
    if (input !== undefined) child.stdin.end(input);
    let code = 1;
    let finished = false;
    const done = () => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      running.delete(child);
      resolve({ code, stdout, stderr, timedOut, ms: Date.now() - started });
    };
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
      // A grandchild may keep the pipes open: do not wait for them past a few seconds.
      setTimeout(done, 5000).unref();
    }, timeoutMs);
    child.on('error', (error) => {
      stderr += error.message;
      code = 127;
      done();
    });
    child.on('exit', (exitCode, signal) => (code = exitCode ?? (signal ? 128 : 1)));
    // Resolved once the output is whole (the pipes closed), not at the exit alone.
    child.on('close', done);
  });
}

/** `run`, failing with the command's last lines of output when it does not exit 0. */
export async function must(command, args, options) {
  const result = await run(command, args, options);
  if (result.code !== 0) {
    const why = result.timedOut
      ? `timed out after ${Math.round(result.ms / 1000)} s`
      : `exit ${result.code}`;
    throw new Error(
      `${command} ${args[0]} failed (${why}):\n${tail(result.stdout + result.stderr)}`,
    );
  }
  return result;
}

/** The last `lines` lines of `text`, indented. */
export function tail(text, lines = 30) {
  return text
    .trimEnd()
    .split('\n')
    .slice(-lines)
    .map((line) => `      ${line}`)
    .join('\n');
}

const onPath = async (name) => (await run('sh', ['-c', `command -v ${name}`])).code === 0;

// crun (podman's usual runtime) fails on cgroups mixed v1/v2 hosts; runc works on both.
const PACKAGES = ['buildah', 'podman', 'runc', 'mmdebstrap', 'uidmap'];
const TOOLS = ['buildah', 'podman', 'runc', 'mmdebstrap'];

/**
 * Resolves with `{ why }` (a sentence) when buildah and podman cannot be used, else with
 * `{ installed }`: the tools it installed with apt-get (when `install`, i.e. CI=true, and
 * the machine allows it), if any.
 */
export async function containerTools({ install }) {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    return {
      why: `buildah and podman are used on Linux x64 only (this is ${process.platform}/${process.arch})`,
    };
  }
  if (process.getuid() !== 0) {
    return { why: 'buildah and podman run as root here (this user is not root)' };
  }
  const missing = [];
  for (const tool of TOOLS) if (!(await onPath(tool))) missing.push(tool);
  if (missing.length === 0) return { installed: [] };
  if (!(await onPath('apt-get')))
    return { why: `${missing.join(', ')} missing, and no apt-get to install them` };
  if (!install) {
    return {
      why: `${missing.join(', ')} not installed: \`CI=true npm run image:check\` (or --install) installs them with apt-get`,
    };
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  await must('apt-get', ['update', '-qq'], { timeoutMs: 300_000, env });
  await must('apt-get', ['install', '-y', '-qq', ...PACKAGES], { timeoutMs: 600_000, env });
  return { installed: PACKAGES };
}

/** The base image named by the Dockerfile's `ARG NODE_IMAGE=...` default. */
export function baseImageName(dockerfile) {
  const name = /^ARG NODE_IMAGE=(\S+)$/m.exec(readFileSync(dockerfile, 'utf8'))?.[1];
  if (!name) throw new Error(`${dockerfile} has no ARG NODE_IMAGE=<image> default`);
  return name;
}

// What the official Debian images (debuerreotype's "slim" variant) leave out and configure:
// no manuals, documentation or translations, and apt keeps no caches in the layers.
const SLIM_DPKG = [
  'path-exclude=/usr/share/man/*',
  'path-exclude=/usr/share/info/*',
  'path-exclude=/usr/share/lintian/*',
  'path-exclude=/usr/share/locale/*',
  'path-include=/usr/share/locale/locale.alias',
  'path-exclude=/usr/share/doc/*',
  'path-include=/usr/share/doc/*/copyright',
];
const APT_CLEAN = `DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
`;

/** mmdebstrap's customize hook: Node.js, npm and corepack, apt's clean-up, the node user. */
function baseHook(npmRoot) {
  return [
    'set -eu',
    'root="$1"',
    'mkdir -p "$root/usr/local/bin" "$root/usr/local/lib/node_modules"',
    `cp ${process.execPath} "$root/usr/local/bin/node"`,
    `cp -a ${npmRoot}/npm "$root/usr/local/lib/node_modules/"`,
    'ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"',
    'ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"',
    `if [ -d ${npmRoot}/corepack ]; then cp -a ${npmRoot}/corepack "$root/usr/local/lib/node_modules/"`,
    '  ln -s ../lib/node_modules/corepack/dist/corepack.js "$root/usr/local/bin/corepack"; fi',
    `cat > "$root/etc/apt/apt.conf.d/docker-clean" <<'EOF'\n${APT_CLEAN}EOF`,
    // Written before mmdebstrap's own clean-up, which then no longer finds apt's caches.
    'rm -f "$root"/var/cache/apt/*.bin',
    'chroot "$root" groupadd --gid 1000 node',
    'chroot "$root" useradd --uid 1000 --gid node --shell /bin/bash --create-home node',
    'chroot "$root" /usr/local/bin/node --version >/dev/null',
  ].join('\n');
}

/**
 * Makes `name` (e.g. node:20-bookworm-slim) as the official image is made: Debian's minbase
 * (merged /usr, slim), Node.js with npm and corepack under /usr/local, a `node` user 1000.
 * Node.js is this machine's, which must be the major version the tag names. Kept in podman's
 * storage like a pulled image, labelled with the Node.js version; made again when it differs.
 * Resolves with what was done, for the log.
 */
export async function ensureBaseImage(name) {
  const [repository, tag] = name.split(':');
  const major = /^(\d+)-bookworm/.exec(tag ?? '')?.[1];
  if (repository !== 'node' || !major) {
    throw new Error(`cannot make ${name} locally: only node:<major>-bookworm[-slim] images are`);
  }
  const names = [`localhost/${name}`, `docker.io/library/${name}`];
  const npmRoot = (await must('npm', ['root', '--global'])).stdout.trim();
  const hookScript = baseHook(npmRoot);
  // The recipe's own hash too: a change to it makes the image again.
  const recipe = createHash('sha256')
    .update(hookScript + SLIM_DPKG.join())
    .digest('hex');
  const label = `node ${process.version} ${recipe.slice(0, 12)}`;
  const found = await run('podman', [
    'image',
    'inspect',
    names[1],
    '--format',
    '{{index .Config.Labels "agent-data.base"}}',
  ]);
  if (found.code === 0 && found.stdout.trim() === label) return `${name}: kept (${label})`;
  if (found.code === 0 && !found.stdout.trim().startsWith('node ')) {
    return `${name}: a pulled image, used as it is`;
  }
  if (process.versions.node.split('.')[0] !== major) {
    throw new Error(`${name} is made from this machine's Node.js, which is ${process.version}`);
  }
  const work = mkdtempSync(join(tmpdir(), 'agent-data-base-'));
  try {
    const hook = join(work, 'node.sh');
    writeFileSync(hook, hookScript);
    const sources = ['/etc/apt/sources.list.d/debian.sources', '/etc/apt/sources.list'].find(
      (file) => existsSync(file) && readFileSync(file, 'utf8').includes('debian'),
    );
    const rootfs = join(work, 'rootfs.tar');
    const env = { ...process.env };
    delete env.NODE_EXTRA_CA_CERTS; // a host path, absent inside the chroot
    await must(
      'mmdebstrap',
      [
        '--variant=minbase',
        '--quiet',
        '--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr',
        ...SLIM_DPKG.map((option) => `--dpkgopt=${option}`),
        `--customize-hook=sh ${hook} "$1"`,
        'bookworm',
        rootfs,
        ...(sources ? [sources] : []),
      ],
      { timeoutMs: 900_000, env },
    );
    const version = process.versions.node;
    await must(
      'podman',
      [
        'import',
        '--change',
        `LABEL agent-data.base="${label}"`,
        '--change',
        `ENV NODE_VERSION=${version}`,
        '--change',
        'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        '--change',
        'CMD ["node"]',
        rootfs,
        names[0],
      ],
      { timeoutMs: 300_000 },
    );
    await must('podman', ['tag', names[0], names[1]]);
    return `${name}: made from Debian bookworm (minbase) and Node.js ${process.version}`;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The CA bundle npm needs inside the build where TLS is intercepted (NODE_EXTRA_CA_CERTS). */
export function npmCaBundle() {
  const given = process.env.NODE_EXTRA_CA_CERTS;
  return given && existsSync(given) ? given : undefined;
}

/**
 * `buildah bud` of `dockerfile` with `root` as the context; its output goes to `logFile`.
 * Resolves with its time and its three slowest steps (each step's time runs until the next
 * begins).
 */
export async function buildImage({ root, dockerfile, tag, caBundle, logFile, timeoutMs }) {
  const args = [
    'bud',
    '--pull=never',
    '--isolation',
    'oci',
    '--runtime',
    'runc',
    '--layers',
    // OCI image format has no HEALTHCHECK: Docker's keeps it, as `docker build` does.
    '--format',
    'docker',
    ...(caBundle ? ['--secret', `id=npm-ca,src=${caBundle}`] : []),
    '-f',
    dockerfile,
    '-t',
    tag,
    root,
  ];
  // When each step began, to tell where the time goes.
  const steps = [];
  const onOutput = (text) => {
    for (const match of text.matchAll(/^(\[\d+\/\d+\] )?STEP \d+\/\d+: (.*)$/gm)) {
      steps.push({ at: Date.now(), what: match[2] });
    }
  };
  const result = await run('buildah', args, { timeoutMs, onOutput });
  writeFileSync(logFile, result.stdout + result.stderr);
  if (result.code !== 0) {
    const why = result.timedOut
      ? `timed out after ${Math.round(timeoutMs / 1000)} s`
      : `exit ${result.code}`;
    throw new Error(
      `the build failed (${why}); its end (whole log: ${logFile}):\n${tail(result.stdout + result.stderr)}`,
    );
  }
  const end = Date.now();
  const slowest = steps
    .map((step, i) => ({ what: step.what, ms: (steps[i + 1]?.at ?? end) - step.at }))
    .sort((a, b) => b.ms - a.ms)
    .slice(0, 3);
  return { ms: result.ms, slowest };
}

const MB = 1e6;

/**
 * The image's size and what it is made of: the base image's layers, then each layer the
 * Dockerfile adds (its instruction, shortened), sizes in MB as podman counts them.
 */
export async function imageLayers(tag, baseName) {
  const history = async (image) =>
    JSON.parse((await must('podman', ['history', '--format', 'json', image])).stdout);
  const own = await history(tag);
  const base = await history(`docker.io/library/${baseName}`);
  const mine = own.slice(0, own.length - base.length).reverse();
  const baseBytes = base.reduce((sum, layer) => sum + layer.size, 0);
  const layers = [
    { what: `base ${baseName}`, mb: baseBytes / MB },
    ...mine
      .filter((layer) => layer.size > 100_000)
      .map((layer) => ({
        what: describe(layer.CreatedBy ?? layer.createdBy ?? ''),
        mb: layer.size / MB,
      })),
  ];
  const total = (await must('podman', ['image', 'inspect', tag, '--format', '{{.Size}}'])).stdout;
  return { totalMb: Number(total) / MB, layers };
}

function describe(createdBy) {
  const text = createdBy.replace(/^\/bin\/sh -c (#\(nop\) )?/, '').trim();
  const copied = /^(?:COPY|ADD) \S+ in (\S+)/.exec(text)?.[1];
  if (copied) return copied.replace(/^\.\//, '');
  return text.includes('apt-get')
    ? `RUN apt-get (${/install\b.*?(\w+)\s*&&/.exec(text)?.[1] ?? 'packages'})`
    : text.slice(0, 40);
}

/** The image's configuration and HEALTHCHECK as `podman image inspect` gives them. */
export async function imageConfig(tag) {
  const [inspected] = JSON.parse((await must('podman', ['image', 'inspect', tag])).stdout);
  return { ...inspected.Config, Healthcheck: inspected.Healthcheck };
}
