/**
 * The operations a write of a document is audited and announced as (kb_audit's `operation`,
 * the change notifications): the triggers of the migrations and the move's own rows write
 * them. A write the access policy refused is audited as `refused:` and the operation asked.
 */
export const WRITE_OPERATIONS = [
  'create',
  'update',
  'delete',
  'restore',
  'purge',
  'move',
  'moved-away',
] as const;

/** The operations a refused write may have asked for (`refused:patch`...). */
export const REFUSABLE_OPERATIONS = [
  'create',
  'update',
  'patch',
  'delete',
  'restore',
  'move',
] as const;
export type RefusableOperation = (typeof REFUSABLE_OPERATIONS)[number];

/** Every operation the audit trail writes (docs/documents.md, "The change feed"). */
export const AUDITED_OPERATIONS: readonly string[] = [
  ...WRITE_OPERATIONS,
  ...REFUSABLE_OPERATIONS.map((op) => `refused:${op}`),
];
