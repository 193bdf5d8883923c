export interface QdrantBinary {
  /** The first path that holds an executable file, else undefined. */
  readonly path: string | undefined;
  /** Why there is none: where it was looked for and how to point at one. */
  readonly missing: string;
  /** QDRANT_BIN was set but names no executable file: a mistake to report, never to skip. */
  readonly misconfigured: boolean;
}

/**
 * `QDRANT_BIN`, else `../shared/qdrant/qdrant` beside the checkout `root` (this module's by
 * default) or, for a linked git worktree, beside its main checkout.
 */
export function qdrantBinary(root?: string): QdrantBinary;
