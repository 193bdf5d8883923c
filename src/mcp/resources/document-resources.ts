import { Injectable } from '@nestjs/common';
import {
  ErrorCode,
  type ListResourcesResult,
  type ListResourceTemplatesResult,
  type ReadResourceResult,
  type Resource,
  type ResourceLink,
} from '@modelcontextprotocol/sdk/types.js';
import { DomainError, ErrorCode as DomainCode } from '../../common/domain-error';
import { DocumentsService } from '../../documents/documents.service';
import { DocumentListingsService, LIST_MAX_LIMIT } from '../../documents/document-listings.service';
import type { Access } from '../../documents/access';
import { PreSerialized } from '../../transport/framing';
import { RpcError } from '../rpc-error';
import {
  DOCUMENT_TEMPLATE,
  documentUri,
  FOLDER_TEMPLATE,
  folderUri,
  parseResourceUri,
} from './resource-uri';

/**
 * Resources per `resources/list` page: as many as a list_documents page holds by default,
 * so that a page costs what a listing does.
 */
export const RESOURCES_PAGE_SIZE = 50;
/** Documents a folder resource lists; list_documents pages through the rest. */
export const FOLDER_INDEX_LIMIT = LIST_MAX_LIMIT;
export const MARKDOWN = 'text/markdown';

/** `resources/read` of a URI that names nothing alive; each era answers it with its own code. */
export class ResourceNotFound extends Error {
  constructor(readonly uri: string) {
    super('Resource not found');
    this.name = 'ResourceNotFound';
  }
}

/**
 * The knowledge base as MCP resources (docs/mcp.md): every alive document is `kb://<id>`
 * (markdown), every folder `kb://<folder>/` (an index of its documents). Listing pages by
 * an opaque cursor over the id index; nothing here loads more rows than it returns.
 */
@Injectable()
export class DocumentResources {
  /** `resources/templates/list`: the same two templates for everyone, serialised once. */
  readonly templatesResult = PreSerialized.of({
    resourceTemplates: [
      {
        uriTemplate: DOCUMENT_TEMPLATE,
        name: 'document',
        title: 'Knowledge base document',
        description:
          'One document by id, as markdown: kb://knowledge/topic/page.md. The id is case-sensitive; completion/complete suggests ids from what you type.',
        mimeType: MARKDOWN,
      },
      {
        uriTemplate: FOLDER_TEMPLATE,
        name: 'folder',
        title: 'Folder index',
        description: `The documents under a folder (an id prefix), as a markdown list of links with revisions and update times: kb://knowledge/reports/. At most ${FOLDER_INDEX_LIMIT} are listed; list_documents pages through more.`,
        mimeType: MARKDOWN,
      },
    ],
  } satisfies ListResourceTemplatesResult);

  constructor(
    private readonly documents: DocumentsService,
    private readonly listings: DocumentListingsService,
  ) {}

  /** One page of `resources/list`: the documents `access` may read, in byte order of id. */
  async list(cursor: string | undefined, access: Access): Promise<ListResourcesResult> {
    const after = cursor === undefined ? undefined : decodeCursor(cursor);
    const page = await this.listings.pageAfter(after, RESOURCES_PAGE_SIZE, access);
    const resources: Resource[] = page.items.map((item) => ({
      uri: documentUri(item.document_id),
      name: item.document_id,
      ...(item.title === '' ? {} : { title: item.title }),
      mimeType: MARKDOWN,
      size: item.size,
      annotations: { lastModified: item.updated_at },
      _meta: { revision: item.revision },
    }));
    const last = page.items.at(-1);
    return page.more && last !== undefined
      ? { resources, nextCursor: encodeCursor(last.document_id) }
      : { resources };
  }

  /**
   * `resources/read`: a document's markdown, or a folder's index. Throws -32602 naming the
   * problem for a URI that is not a valid `kb://` id, {@link ResourceNotFound} for one that
   * names nothing alive (or nothing `access` may read: the same answer).
   */
  async read(uri: string, access: Access): Promise<ReadResourceResult> {
    let target;
    try {
      target = parseResourceUri(uri);
    } catch (error) {
      throw invalidParams(error, { uri: uri.slice(0, 600) });
    }
    if (target.kind === 'folder') return this.readFolder(uri, target.folder, access);
    let document;
    try {
      document = await this.documents.get(target.documentId, access);
    } catch (error) {
      if (error instanceof DomainError && error.code === DomainCode.NOT_FOUND) {
        throw new ResourceNotFound(uri);
      }
      throw error;
    }
    return {
      contents: [
        {
          uri: documentUri(document.document_id),
          mimeType: MARKDOWN,
          text: document.body,
          _meta: {
            title: document.title,
            revision: document.revision,
            updated_at: document.updated_at,
          },
        },
      ],
    };
  }

  /**
   * The markdown index of a folder: one line per document `access` may read, at most
   * {@link FOLDER_INDEX_LIMIT}.
   */
  async folderIndex(
    folder: string,
    access: Access,
  ): Promise<{ text: string; count: number; truncated: boolean }> {
    const page = await this.listings.list(
      { prefix: `${folder}/`, limit: FOLDER_INDEX_LIMIT },
      access,
    );
    const lines = page.items.map(
      (item) =>
        `- [${escapeLinkText(item.title || item.document_id)}](${documentUri(item.document_id)}) \`${item.document_id}\`, revision ${item.revision}, updated ${item.updated_at}`,
    );
    const summary = page.truncated
      ? `The first ${page.count} documents in byte order of id; list_documents with prefix "${folder}/" and offset ${page.count} continues.`
      : `${page.count} document${page.count === 1 ? '' : 's'}.`;
    return {
      text: [
        `# ${folder}/`,
        '',
        `${summary} Each one is a resource of its own.`,
        '',
        ...lines,
        '',
      ].join('\n'),
      count: page.count,
      truncated: page.truncated,
    };
  }

  private async readFolder(
    uri: string,
    folder: string,
    access: Access,
  ): Promise<ReadResourceResult> {
    const index = await this.folderIndex(folder, access);
    if (index.count === 0) throw new ResourceNotFound(uri);
    return {
      contents: [
        {
          uri: folderUri(folder),
          mimeType: MARKDOWN,
          text: index.text,
          _meta: { document_count: index.count, truncated: index.truncated },
        },
      ],
    };
  }
}

/** A `resource_link` content item for a document (tool results and prompts). */
export function resourceLink(
  document: { document_id: string; title?: string },
  description?: string,
): ResourceLink {
  return {
    type: 'resource_link',
    uri: documentUri(document.document_id),
    name: document.document_id,
    ...(document.title ? { title: document.title } : {}),
    ...(description === undefined ? {} : { description }),
    mimeType: MARKDOWN,
  };
}

/**
 * A cursor is the last id of the page, base64url-encoded behind a version tag: opaque to
 * clients, stable across replicas and restarts, and a keyset position rather than an
 * offset (documents written meanwhile shift nothing).
 */
function encodeCursor(lastId: string): string {
  return `k1.${Buffer.from(lastId, 'utf8').toString('base64url')}`;
}

function decodeCursor(cursor: string): string {
  const encoded = /^k1\.([A-Za-z0-9_-]+)$/.exec(cursor)?.[1];
  const id = encoded === undefined ? undefined : Buffer.from(encoded, 'base64url').toString('utf8');
  if (id === undefined || Buffer.from(id, 'utf8').toString('base64url') !== encoded) {
    throw new RpcError(
      ErrorCode.InvalidParams,
      'Invalid params: cursor is not one this server issued; list again without a cursor',
      { cursor: cursor.slice(0, 200) },
    );
  }
  return id;
}

function escapeLinkText(text: string): string {
  return text.replace(/[[\]\\]/g, (c) => `\\${c}`).replace(/\s+/g, ' ');
}

/** A domain refusal of a request's params as JSON-RPC -32602, its message kept. */
export function invalidParams(error: unknown, data?: Record<string, unknown>): unknown {
  if (error instanceof DomainError && error.code === DomainCode.INVALID_ARGUMENT) {
    return new RpcError(ErrorCode.InvalidParams, `Invalid params: ${error.message}`, data);
  }
  return error;
}
