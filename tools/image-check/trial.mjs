// The Docker trial mode of docs/operations.md ("Image"), run as written: its shell block is
// executed by bash with `docker` standing for podman (plus what this host needs: runc and the
// file limits), the image name of the page's `docker build` line standing for the image just
// built, and a free port, container and volume name in place of the page's, so that a run
// never meets another. The block must exit 0, the server must have stored the document it
// sends, and `docker stop` must end it with exit 0.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { run, tail } from './host.mjs';
import { freePort } from './services.mjs';

/** The Image section's `docker build` tag and its trial block (the sh block with `docker run`). */
export function trialBlock(root) {
  const page = readFileSync(join(root, 'docs', 'operations.md'), 'utf8');
  const section = /^## Image\n([\s\S]*?)^## /m.exec(page)?.[1] ?? '';
  const image = /docker build -f docker\/Dockerfile -t (\S+) \./.exec(section)?.[1];
  const block = [...section.matchAll(/```sh\n([\s\S]*?)```/g)]
    .map((m) => m[1])
    .find((text) => text.includes('docker run'));
  if (!image || !block)
    throw new Error(
      'docs/operations.md, Image: no `docker build ... -t IMAGE .` or no sh block with `docker run`',
    );
  const name = /docker run[^\n]*--name (\S+)/.exec(block)?.[1];
  const volume = /-v ([\w.-]+):\/data/.exec(block)?.[1];
  const port = /-p 127\.0\.0\.1:(\d+):8080/.exec(block)?.[1];
  if (!name || !volume || !port)
    throw new Error(
      'docs/operations.md, Image: the trial names no container, /data volume or 127.0.0.1 port',
    );
  return { image, block, name, volume, port };
}

const DOCKER = `docker() {
  if [ "$1" = run ]; then shift
    podman run --runtime runc --ulimit nofile=20000:20000 --ulimit nproc=4096:4096 --no-healthcheck --pull never "$@"
  else podman "$@"; fi
}
`;

export async function trialMode({ root, tag, started, secondsOf }) {
  const trial = trialBlock(root);
  const id = randomBytes(3).toString('hex');
  const name = `agent-data-check-trial-${id}`;
  const volume = `agent-data-check-trial-${id}`;
  const port = String(await freePort());
  started.containers.add(name);
  started.volumes.add(volume);
  const script = trial.block
    .replaceAll(trial.image, tag)
    .replaceAll(`--name ${trial.name}`, `--name ${name}`)
    .replaceAll(` ${trial.name}`, ` ${name}`)
    .replaceAll(`${trial.volume}:/data`, `${volume}:/data`)
    .replaceAll(`127.0.0.1:${trial.port}`, `127.0.0.1:${port}`);
  const began = Date.now();
  const done = await run('bash', ['-euo', 'pipefail', '-c', DOCKER + script], {
    timeoutMs: 300_000,
  });
  const output = done.stdout + done.stderr;
  const logs = async () => {
    const got = await run('podman', ['logs', name]);
    return tail(got.stdout + got.stderr, 20);
  };
  if (done.code !== 0) {
    throw new Error(
      `the trial block exited ${done.timedOut ? '(timed out)' : done.code}:\n${tail(output)}\n    the server's log:\n${await logs()}`,
    );
  }
  if (!/"document_id":"[^"]+"/.test(done.stdout))
    throw new Error(`the document was not stored:\n${tail(output)}`);
  const state = (
    await run('podman', ['inspect', name, '--format', '{{.State.Status}} {{.State.ExitCode}}'])
  ).stdout.trim();
  if (state !== 'exited 0')
    throw new Error(`after docker stop: ${state}, not "exited 0":\n${await logs()}`);
  await run('podman', ['rm', '--force', name]);
  await run('podman', ['volume', 'rm', '--force', volume]);
  started.containers.delete(name);
  started.volumes.delete(volume);
  return `Docker trial mode of docs/operations.md as written: embedded PostgreSQL in a volume, ready, document stored, stopped with exit 0 (${secondsOf(Date.now() - began)})`;
}
