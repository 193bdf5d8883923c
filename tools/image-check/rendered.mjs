// The chart as Kubernetes would run it, without a cluster: `helm template`, then each
// workload's container turned into the `podman run` that reproduces it — its image, command
// and args, environment (env, and envFrom the rendered ConfigMap and Secret or the Secrets a
// value set expects to exist), user and group, read-only root, dropped capabilities, no
// privilege escalation, memory limit, and its volumes (emptyDir as tmpfs of its size limit,
// a claim as a folder of the host group-owned by fsGroup, Secret and ConfigMap volumes as
// read-only files). The containers share the host's network, where PostgreSQL, Qdrant and the
// server listen on loopback; the release's Service names resolve to it. A field this file does
// not know how to reproduce stops the check: a container is never run "roughly as rendered".
import { spawnSync } from 'node:child_process';
import { chownSync, chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as yaml from 'js-yaml';

/** `helm template` of `chart` with `args` (values); resolves with the rendered objects. */
export function render(helm, chart, release, namespace, args) {
  const done = spawnSync(helm, ['template', release, chart, '--namespace', namespace, ...args], {
    encoding: 'utf8',
  });
  if (done.status !== 0) throw new Error(`helm template failed: ${done.stderr.trim()}`);
  return yaml.loadAll(done.stdout).filter((object) => object);
}

/** The pod spec of a Deployment, Job or CronJob. */
export function podSpecOf(object) {
  switch (object.kind) {
    case 'Deployment':
    case 'Job':
      return object.spec.template.spec;
    case 'CronJob':
      return object.spec.jobTemplate.spec.template.spec;
    default:
      return undefined;
  }
}

/** Every workload of `objects`: kind, name, pod spec and its one container. */
export function workloads(objects) {
  return objects
    .filter((object) => podSpecOf(object))
    .map((object) => {
      const pod = podSpecOf(object);
      refuseUnknown(`${object.kind}/${object.metadata.name}`, pod, POD_FIELDS);
      if (pod.containers.length !== 1) {
        throw new Error(`${object.kind}/${object.metadata.name}: one container expected`);
      }
      const [container] = pod.containers;
      refuseUnknown(`${object.kind}/${object.metadata.name}`, container, CONTAINER_FIELDS);
      return { kind: object.kind, name: object.metadata.name, object, pod, container };
    });
}

// Scheduling and identity fields have no effect on one host; the others are reproduced.
const POD_FIELDS = [
  'restartPolicy',
  'serviceAccountName',
  'automountServiceAccountToken',
  'imagePullSecrets',
  'securityContext',
  'containers',
  'volumes',
  'terminationGracePeriodSeconds',
  'nodeSelector',
  'affinity',
  'tolerations',
  'topologySpreadConstraints',
];
const CONTAINER_FIELDS = [
  'name',
  'image',
  'imagePullPolicy',
  'command',
  'args',
  'workingDir',
  'env',
  'envFrom',
  'securityContext',
  'resources',
  'volumeMounts',
  'ports',
  'startupProbe',
  'livenessProbe',
  'readinessProbe',
  'lifecycle',
];

function refuseUnknown(where, spec, known) {
  const unknown = Object.keys(spec).filter((field) => !known.includes(field));
  if (unknown.length > 0) {
    throw new Error(`${where}: image:check cannot reproduce ${unknown.join(', ')}`);
  }
}

/** Secrets and ConfigMaps by name, their values decoded: the rendered ones plus `external`. */
export function dataSources(objects, external = {}) {
  const secrets = { ...external };
  const configMaps = {};
  for (const object of objects) {
    if (object.kind === 'Secret') {
      secrets[object.metadata.name] = {
        ...Object.fromEntries(
          Object.entries(object.data ?? {}).map(([k, v]) => [
            k,
            Buffer.from(v, 'base64').toString(),
          ]),
        ),
        ...(object.stringData ?? {}),
      };
    }
    if (object.kind === 'ConfigMap') configMaps[object.metadata.name] = object.data ?? {};
  }
  return { secrets, configMaps };
}

function lookup(sources, kind, name, where) {
  const found = (kind === 'secret' ? sources.secrets : sources.configMaps)[name];
  if (!found) throw new Error(`${where}: the ${kind} ${name} does not exist`);
  return found;
}

/** The environment Kubernetes gives `container`: envFrom in order, then env over it. */
export function environmentOf(container, sources) {
  const env = {};
  for (const from of container.envFrom ?? []) {
    const ref = from.configMapRef ?? from.secretRef;
    const data = lookup(sources, from.secretRef ? 'secret' : 'configMap', ref.name, 'envFrom');
    for (const [key, value] of Object.entries(data)) env[(from.prefix ?? '') + key] = value;
  }
  for (const entry of container.env ?? []) {
    if ('value' in entry) {
      env[entry.name] = String(entry.value);
      continue;
    }
    const ref = entry.valueFrom?.secretKeyRef ?? entry.valueFrom?.configMapKeyRef;
    if (!ref)
      throw new Error(
        `env ${entry.name}: only value, secretKeyRef and configMapKeyRef are reproduced`,
      );
    const kind = entry.valueFrom.secretKeyRef ? 'secret' : 'configMap';
    const data = lookup(sources, kind, ref.name, `env ${entry.name}`);
    if (data[ref.key] === undefined) {
      if (ref.optional) continue;
      throw new Error(`env ${entry.name}: the ${kind} ${ref.name} has no key ${ref.key}`);
    }
    env[entry.name] = data[ref.key];
  }
  return env;
}

/** Kubernetes quantities (`512Mi`, `64M`, `1Gi`) in bytes. */
export function bytesOf(quantity) {
  const match = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|K|M|G|T)?$/.exec(String(quantity));
  if (!match) throw new Error(`cannot read the quantity ${quantity}`);
  const factor = {
    Ki: 2 ** 10,
    Mi: 2 ** 20,
    Gi: 2 ** 30,
    Ti: 2 ** 40,
    k: 1e3,
    K: 1e3,
    M: 1e6,
    G: 1e9,
    T: 1e12,
  };
  return Math.round(Number(match[1]) * (factor[match[2]] ?? 1));
}

/**
 * The `podman run` arguments (after `run`) that reproduce `workload`'s container, and the
 * environment file they read (written into `scratch`, mode 0600: no value is on a command
 * line). `claims` maps a PersistentVolumeClaim's name to a host folder; `hosts` are the names
 * that resolve to this host (the release's Services).
 */
export function podmanArgs(workload, { sources, scratch, containerName, claims = {}, hosts = [] }) {
  const { pod, container } = workload;
  const where = `${workload.kind}/${workload.name}`;
  const podSecurity = pod.securityContext ?? {};
  const security = { ...podSecurity, ...(container.securityContext ?? {}) };
  const args = [
    '--name',
    containerName,
    '--runtime',
    'runc',
    '--network',
    'host',
    // podman's own default limits are refused on these hosts; a kubelet gives the node's.
    '--ulimit',
    'nofile=20000:20000',
    '--ulimit',
    'nproc=4096:4096',
    // Kubernetes runs its probes, not the image's HEALTHCHECK.
    '--no-healthcheck',
    '--pull',
    'never',
  ];
  if (security.runAsUser === undefined) throw new Error(`${where}: no runAsUser`);
  if (security.runAsNonRoot && security.runAsUser === 0) {
    throw new Error(`${where}: runAsNonRoot with runAsUser 0 cannot start`);
  }
  args.push('--user', `${security.runAsUser}:${security.runAsGroup ?? 0}`);
  if (podSecurity.fsGroup !== undefined) args.push('--group-add', String(podSecurity.fsGroup));
  if (security.readOnlyRootFilesystem) args.push('--read-only', '--read-only-tmpfs=false');
  if (security.allowPrivilegeEscalation === false) args.push('--security-opt', 'no-new-privileges');
  for (const cap of security.capabilities?.drop ?? []) args.push('--cap-drop', cap);
  for (const cap of security.capabilities?.add ?? []) args.push('--cap-add', cap);
  if (security.seccompProfile && security.seccompProfile.type !== 'RuntimeDefault') {
    throw new Error(`${where}: only the RuntimeDefault seccomp profile is reproduced`);
  }
  const limits = container.resources?.limits ?? {};
  if (limits.memory) args.push('--memory', String(bytesOf(limits.memory)));
  if (limits.cpu) args.push('--cpus', String(cpusOf(limits.cpu)));
  for (const host of hosts) args.push('--add-host', `${host}:127.0.0.1`);

  const env = environmentOf(container, sources);
  const envFile = join(scratch, `${containerName}.env`);
  const lines = Object.entries(env).map(([name, value]) => {
    if (value.includes('\n')) throw new Error(`${where}: env ${name} spans lines`);
    return `${name}=${value}`;
  });
  writeFileSync(envFile, lines.join('\n') + '\n', { mode: 0o600 });
  args.push('--env-file', envFile);

  for (const mount of container.volumeMounts ?? []) {
    const volume = (pod.volumes ?? []).find((v) => v.name === mount.name);
    if (!volume) throw new Error(`${where}: volume ${mount.name} is not declared`);
    args.push(
      ...mountArgs(volume, mount, {
        sources,
        scratch,
        claims,
        fsGroup: podSecurity.fsGroup,
        where,
      }),
    );
  }
  if (container.workingDir) args.push('--workdir', container.workingDir);
  if (container.command) args.push('--entrypoint', JSON.stringify(container.command));
  args.push(container.image, ...(container.args ?? []));
  return { args, env };
}

function cpusOf(quantity) {
  const text = String(quantity);
  return text.endsWith('m') ? Number(text.slice(0, -1)) / 1000 : Number(text);
}

function mountArgs(volume, mount, { sources, scratch, claims, fsGroup, where }) {
  const readOnly = mount.readOnly ? ',ro' : '';
  if (volume.emptyDir) {
    const size = volume.emptyDir.sizeLimit
      ? `,tmpfs-size=${bytesOf(volume.emptyDir.sizeLimit)}`
      : '';
    return ['--mount', `type=tmpfs,destination=${mount.mountPath},tmpfs-mode=1777${size}`];
  }
  if (volume.persistentVolumeClaim) {
    const dir = claims[volume.persistentVolumeClaim.claimName];
    if (!dir)
      throw new Error(
        `${where}: no folder for the claim ${volume.persistentVolumeClaim.claimName}`,
      );
    // A volume with fsGroup: owned by that group, writable by it, new files in it too.
    if (fsGroup !== undefined) {
      chownSync(dir, 0, fsGroup);
      chmodSync(dir, 0o2775);
    }
    return ['--volume', `${dir}:${mount.mountPath}${readOnly ? ':ro' : ''}`];
  }
  const files = volume.secret
    ? lookup(sources, 'secret', volume.secret.secretName, where)
    : volume.configMap
      ? lookup(sources, 'configMap', volume.configMap.name, where)
      : undefined;
  if (!files)
    throw new Error(`${where}: volume ${volume.name} is of a kind image:check does not reproduce`);
  const dir = join(scratch, `volume-${volume.name}`);
  mkdirSync(dir, { recursive: true });
  for (const [name, content] of Object.entries(files))
    writeFileSync(join(dir, name), content, { mode: 0o644 });
  return ['--volume', `${dir}:${mount.mountPath}:ro`];
}

/** The container port a probe or Service names (`http`) or gives as a number. */
export function portOf(container, port) {
  if (typeof port === 'number') return port;
  const found = (container.ports ?? []).find((p) => p.name === port);
  if (!found) throw new Error(`port ${port} is not declared`);
  return found.containerPort;
}

/** The names a Service of `objects` answers to from the release's namespace. */
export function serviceHosts(objects, namespace) {
  return objects
    .filter((object) => object.kind === 'Service')
    .flatMap(({ metadata: { name } }) => [
      name,
      `${name}.${namespace}`,
      `${name}.${namespace}.svc`,
      `${name}.${namespace}.svc.cluster.local`,
    ]);
}
