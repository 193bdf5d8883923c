import { ErrorCode } from '../../common/domain-error';

/**
 * What a model should do after each domain error, shown beside code and message in the
 * `isError` result. The one place the MCP edge maps error codes: adding a code without a
 * case fails to compile.
 */
export function toolErrorHint(code: ErrorCode): string {
  switch (code) {
    case ErrorCode.NOT_FOUND:
      return 'Check the id with list_documents or search_knowledge: ids are case-sensitive paths such as knowledge/topic/page.md.';
    case ErrorCode.PERMISSION_DENIED:
      return 'Your access lets you read this document but not change it: ask whoever manages the knowledge base for write access to its folder, or write under a folder you may write to.';
    case ErrorCode.ALREADY_EXISTS:
      return 'The document exists: change it with update_document or patch_document, or choose another document_id.';
    case ErrorCode.REVISION_CONFLICT:
      return 'The document changed since you read it: read it again with get_document_for_rewrite and retry with the new revision as expected_revision.';
    case ErrorCode.PATCH_NO_MATCH:
      return 'old_str must match the current text exactly, whitespace and line breaks included: read the document with get_document_for_rewrite and copy the passage.';
    case ErrorCode.PATCH_AMBIGUOUS:
      return 'Add surrounding text to old_str so that it occurs exactly once, or pass replace_all: true to replace every occurrence.';
    case ErrorCode.INVALID_ARGUMENT:
      return "Fix the named argument and call again; the tool's input schema lists what it accepts.";
    case ErrorCode.TOO_LARGE:
      return 'Stay under the stated limit, for example by splitting the content into several documents.';
    case ErrorCode.FORBIDDEN_URL:
      return 'Only URLs on the allowed hosts can be fetched (https unless the operator allows http); local, private and cloud-metadata addresses are always refused.';
    case ErrorCode.UPSTREAM_ERROR:
      return 'The remote server failed, was too slow or sent unusable content: try again later or use another URL.';
    case ErrorCode.NOT_IMPLEMENTED:
      return 'This operation is not available on this server.';
    case ErrorCode.UNAVAILABLE:
      return 'The knowledge base is briefly unavailable (its database is not reachable): retry in a few seconds. If this was a write, read the document first: a write cut off at the moment of failure may already be applied.';
    case ErrorCode.IDEMPOTENCY_KEY_REUSED:
      return 'This idempotency key was sent before with other arguments: give each distinct write a key of its own, and resend a key only with the very same call.';
    case ErrorCode.IDEMPOTENCY_KEY_IN_USE:
      return 'The first call with this idempotency key is still running: repeat the same call in a second to get its result.';
    case ErrorCode.NOT_EMPTY:
    case ErrorCode.INVALID_BACKUP:
      // Backups and restores are admin REST operations; no tool answers these.
      return 'Backups are restored by an operator with the agent-data command, not by a tool.';
    default: {
      const unmapped: never = code;
      throw new Error(`unmapped error code ${String(unmapped)}`);
    }
  }
}
