/** Qdrant's REST API as the tests call it beside the store: collections, points, replicas. */
import { waitFor } from './wait';

/** How long the cluster's state may take to settle on a loaded two-core machine. */
const SETTLE_MS = 60_000;

/** One REST call; resolves with Qdrant's `result`, rejects naming the call and Qdrant's error. */
export async function qdrantRequest<T = unknown>(
  url: string,
  method: string,
  path: string,
  body?: unknown,
  /** By default QDRANT_API_KEY, for the external server QDRANT_URL names, and none elsewhere. */
  apiKey = url === process.env.QDRANT_URL?.replace(/\/+$/, '')
    ? process.env.QDRANT_API_KEY
    : undefined,
): Promise<T> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(apiKey ? { 'api-key': apiKey } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  const parsed = (() => {
    try {
      return JSON.parse(text) as { result?: T; status?: { error?: string } | string };
    } catch {
      return undefined;
    }
  })();
  if (!response.ok) {
    const reason = typeof parsed?.status === 'object' ? parsed.status.error : text;
    throw new Error(`Qdrant ${method} ${path}: HTTP ${response.status}: ${reason}`);
  }
  return parsed?.result as T;
}

export interface Replica {
  readonly shardId: number;
  readonly peerId: number;
  /** `Active`, `Dead`, `Partial`, `Initializing`, ... */
  readonly state: string;
}

/** Every replica of a collection's shards as one node sees them (`GET /collections/{c}/cluster`). */
export async function replicas(url: string, collection: string): Promise<Replica[]> {
  const info = await qdrantRequest<{
    peer_id: number;
    local_shards: { shard_id: number; state: string }[];
    remote_shards: { shard_id: number; peer_id: number; state: string }[];
  }>(url, 'GET', `/collections/${collection}/cluster`);
  return [
    ...info.local_shards.map((s) => ({
      shardId: s.shard_id,
      peerId: info.peer_id,
      state: s.state,
    })),
    ...info.remote_shards.map((s) => ({ shardId: s.shard_id, peerId: s.peer_id, state: s.state })),
  ].sort((a, b) => a.shardId - b.shardId || a.peerId - b.peerId);
}

/** Waits until `url` sees `count` replicas of the collection, all of them Active. */
export async function waitForActiveReplicas(
  url: string,
  collection: string,
  count: number,
): Promise<Replica[]> {
  return waitFor(
    async () => {
      const all = await replicas(url, collection);
      return all.length === count && all.every((r) => r.state === 'Active') && all;
    },
    `${count} active replicas of ${collection}`,
    { timeoutMs: SETTLE_MS, intervalMs: 200, retryErrors: true },
  );
}

/**
 * Creates a collection the way the vector store would (cosine vectors of `dimensions`) but
 * with shards and replicas of the caller's choosing, and waits until every replica is Active.
 * The store then uses it as it is.
 */
export async function createCollection(
  url: string,
  collection: string,
  options: { dimensions: number; shards?: number; replicationFactor?: number },
): Promise<Replica[]> {
  const shards = options.shards ?? 1;
  const replicationFactor = options.replicationFactor ?? 1;
  await qdrantRequest(url, 'PUT', `/collections/${collection}`, {
    vectors: { size: options.dimensions, distance: 'Cosine' },
    shard_number: shards,
    replication_factor: replicationFactor,
  });
  return waitForActiveReplicas(url, collection, shards * replicationFactor);
}

/** Deletes a collection; one that is not there is no error. */
export async function deleteCollection(url: string, collection: string): Promise<void> {
  await qdrantRequest(url, 'DELETE', `/collections/${collection}`);
}
