import { InitialSchema1763800000000 } from './1763800000000-initial-schema';
import { VectorPendingIndex1763800000001 } from './1763800000001-vector-pending-index';
import { VectorStore1763800030000 } from './1763800030000-vector-store';
import { VectorSyncIndexes1763800030001 } from './1763800030001-vector-sync-indexes';
import { FolderIndex1763800040000 } from './1763800040000-folder-index';
import { VectorLeaseToken1763800050000 } from './1763800050000-vector-lease-token';
import { RateLimits1763800060000 } from './1763800060000-rate-limits';
import { Passages1763800070000 } from './1763800070000-passages';
import { LexicalIndex1763800080000 } from './1763800080000-lexical-index';
import { AuditFeedIndexes1763800090000 } from './1763800090000-audit-feed-indexes';
import { FolderCounts1763800100000 } from './1763800100000-folder-counts';
import { IdStatistics1763800110000 } from './1763800110000-id-statistics';
import { PendingOrderIndex1763800120000 } from './1763800120000-pending-order-index';
import { SemanticModel1763800130000 } from './1763800130000-semantic-model';
import { Sources1763800140000 } from './1763800140000-sources';
import { IdempotencyKeys1763800150000 } from './1763800150000-idempotency-keys';
import { RestoreAudited1763800160000 } from './1763800160000-restore-audited';
import { ChangeNotifications1763800170000 } from './1763800170000-change-notifications';
import { LexicalSnapshot1763800180000 } from './1763800180000-lexical-snapshot';
import { LexicalStatistics1763800190000 } from './1763800190000-lexical-statistics';
import { Links1763800200000 } from './1763800200000-links';
import { LinkTargetIndexes1763800200001 } from './1763800200001-link-target-indexes';
import { AnchorText1763800210000 } from './1763800210000-anchor-text';
import { OlderAnalyzerIndex1763800220000 } from './1763800220000-older-analyzer-index';
import { DeletedVersionReason1763800230000 } from './1763800230000-deleted-version-reason';
import { AnalyzerFourIndex1763800240000 } from './1763800240000-analyzer-four-index';
import { LinkKeyHashes1763800250000 } from './1763800250000-link-key-hashes';

/** Every migration, in order. Listed explicitly so ts-jest, the CLI and dist/ agree. */
export const MIGRATIONS = [
  InitialSchema1763800000000,
  VectorPendingIndex1763800000001,
  VectorStore1763800030000,
  VectorSyncIndexes1763800030001,
  FolderIndex1763800040000,
  VectorLeaseToken1763800050000,
  RateLimits1763800060000,
  Passages1763800070000,
  LexicalIndex1763800080000,
  AuditFeedIndexes1763800090000,
  FolderCounts1763800100000,
  IdStatistics1763800110000,
  PendingOrderIndex1763800120000,
  SemanticModel1763800130000,
  Sources1763800140000,
  IdempotencyKeys1763800150000,
  RestoreAudited1763800160000,
  ChangeNotifications1763800170000,
  LexicalSnapshot1763800180000,
  LexicalStatistics1763800190000,
  Links1763800200000,
  LinkTargetIndexes1763800200001,
  AnchorText1763800210000,
  OlderAnalyzerIndex1763800220000,
  DeletedVersionReason1763800230000,
  AnalyzerFourIndex1763800240000,
  LinkKeyHashes1763800250000,
];
