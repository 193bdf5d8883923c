import { InitialSchema1763800000000 } from './1763800000000-initial-schema';
import { VectorPendingIndex1763800000001 } from './1763800000001-vector-pending-index';

/** Every migration, in order. Listed explicitly so ts-jest, the CLI and dist/ agree. */
export const MIGRATIONS = [InitialSchema1763800000000, VectorPendingIndex1763800000001];
