import type { OperationDoc } from './operation-doc';

/** `GET /admin/backup` and `POST /admin/restore` (docs/operations.md, "Backup and restore"). */
export const BACKUP_API_OPERATIONS: Readonly<Record<string, OperationDoc>> = {
  'GET /admin/backup': {
    tag: 'Backup',
    summary: 'Back up the knowledge base',
    description:
      'Streams a backup of what cannot be derived again: every document (deleted ones ' +
      'included), every earlier version, the audit trail with its ids, and the sources with ' +
      'their items and runs, all read in one snapshot while writes go on. The body is gzip of ' +
      'lines ending with a manifest (row counts and sha256 checksums); a download cut short ' +
      'lacks it. Needs read access to every document.',
    responses: { 200: { description: 'The backup', binary: 'application/gzip' } },
    errors: {
      403: 'FORBIDDEN: the key or token does not grant the admin profile; PERMISSION_DENIED: the access policy does not let the caller read every document',
    },
  },
  'POST /admin/restore': {
    tag: 'Backup',
    summary: 'Restore a backup into an empty knowledge base',
    description:
      'The body is a backup as `GET /admin/backup` gave it, streamed. Everything is written in ' +
      'one transaction, committed only once every table matched its row count and checksum. ' +
      'The documents are then indexed for lexical search before the answer; their vectors ' +
      'follow in the background. Needs write access to every document.',
    binaryBody: {
      mediaType: 'application/gzip',
      description: 'A backup file of `agent-data backup` or `GET /admin/backup`',
    },
    responses: { 200: { description: 'Restored', schema: 'RestoreResult' } },
    errors: {
      403: 'FORBIDDEN: the key or token does not grant the admin profile; PERMISSION_DENIED: the access policy does not let the caller write every document',
      409: 'NOT_EMPTY: the knowledge base holds documents, audit rows or sources (`found` names which); nothing was written',
      422: 'INVALID_BACKUP: the backup is cut short, corrupt, of another format or of a newer schema; nothing was written',
    },
  },
};
