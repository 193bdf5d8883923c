import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { DomainError, ErrorCode } from '../../common/domain-error';
import { AppConfig } from '../../config/app-config';
import { DocumentsService } from '../../documents/documents.service';
import { type Document, documentSchema } from '../../documents/document.schemas';
import { AddressPolicy } from '../../outbound/address-policy';
import { pageText } from '../ingest/page-text';
import { SafeFetcher } from '../../outbound/safe-fetch';
import { UrlPolicy } from '../../outbound/url-policy';
import { McpTool, type ToolContext } from './tool';
import { documentIdArg, limitedArgs, pathAliasArg } from './document-fields';
import { writes } from './tool-annotations';

/** Largest page ingest_document downloads (after decompression). */
export const INGEST_MAX_BYTES = 5 * 1024 * 1024;
const INGEST_MAX_REDIRECTS = 5;

const inputFor = (config: AppConfig) =>
  z.strictObject({
    url: z.string().describe('The page to fetch: an https URL on a host this server allows.'),
    document_id: documentIdArg
      .optional()
      .describe('Where to store it; by default ingested/<host>/<path>.md derived from the URL.'),
    path: pathAliasArg,
    title: z.string().optional().describe('Title; by default the page <title> or first heading.'),
    tags: limitedArgs(config.limits).tags.optional(),
  });
type Input = ReturnType<typeof inputFor>;

const { document_id, revision, title, vector_status, updated_at } = documentSchema.shape;

/** The document's own fields, and what the fetch found. */
const output = z.object({
  document_id,
  revision,
  created: z
    .boolean()
    .describe(
      'true for a new document, false when an earlier ingest of the same URL was refreshed.',
    ),
  changed: z.boolean(),
  title,
  vector_status,
  source_url: z.string(),
  final_url: z.string().describe('The URL after redirects.'),
  media_type: z.string(),
  chars: z.number().int().describe('Length of the stored text.'),
  updated_at,
});

@Injectable()
export class IngestDocumentTool extends McpTool<Input, typeof output> {
  readonly name = 'ingest_document';
  readonly title = 'Import a web page';
  readonly description = [
    'Fetches a web page and stores its text as a document (HTML is converted to text, headings kept as markdown headings).',
    `Only hosts on the server's allow-list can be fetched, over https; private, local and cloud-metadata addresses are refused, redirects are checked the same way, pages are limited to ${INGEST_MAX_BYTES / 1024 / 1024} MiB and the fetch to a few seconds. HTML and text pages only.`,
    'Ingesting the same URL again refreshes its document; a document_id holding a document from elsewhere is refused with ALREADY_EXISTS. Stored when this returns; semantic search catches up within a few seconds.',
  ].join(' ');
  readonly input: Input;
  readonly output = output;
  readonly aliases = { path: 'document_id' };
  readonly annotations = writes({ destructive: false, idempotent: true, openWorld: true });
  private readonly fetcher: SafeFetcher;

  constructor(
    private readonly documents: DocumentsService,
    private readonly config: AppConfig,
  ) {
    super();
    this.input = inputFor(config);
    const policy = new UrlPolicy(
      config.ingestAllowedHosts,
      config.ingestAllowHttp,
      new AddressPolicy(config.ingestAllowedPrivateCidrs),
    );
    this.fetcher = new SafeFetcher(policy, {
      timeoutMs: config.ingestTimeoutMs,
      maxBytes: INGEST_MAX_BYTES,
      maxRedirects: INGEST_MAX_REDIRECTS,
    });
  }

  async run(args: z.output<Input>, context: ToolContext) {
    const progress = context.progress ?? (() => undefined);
    progress(0, 3, `fetching ${args.url.slice(0, 200)}`);
    const page = await this.fetcher.fetch(args.url, context.signal);
    progress(
      1,
      3,
      `converting ${page.body.length} bytes of ${page.contentType.split(';')[0] || 'content'}`,
    );
    const text = pageText(page);
    const documentId = args.document_id ?? documentIdForUrl(new URL(page.url));
    progress(2, 3, `storing ${text.text.length} characters as ${documentId}`);
    // Nothing is written for a caller who is gone; once stored, the answer is only lost.
    context.signal.throwIfAborted();
    const title = clip(args.title ?? text.title, this.config.limits.maxTitleChars);
    const metadata = {
      source_url: page.url,
      final_url: page.finalUrl,
      media_type: text.mediaType,
      fetched_at: new Date().toISOString(),
    };
    const existing = await this.findAlive(documentId, context);
    let document: Document;
    let changed = true;
    if (!existing) {
      document = await this.documents.create(
        { document_id: documentId, body: text.text, title, tags: args.tags, metadata },
        context.actor,
        context.access,
      );
    } else {
      if (existing.metadata.source_url !== page.url) {
        throw new DomainError(
          ErrorCode.ALREADY_EXISTS,
          `document ${documentId} already exists and was not ingested from this URL; choose another document_id`,
          { document_id: documentId },
        );
      }
      // The same page again changes nothing: its fetch time alone is no change.
      ({ document, changed } = await this.documents.update(
        documentId,
        { body: text.text, title, tags: args.tags, metadata },
        context.actor,
        context.access,
        { stamps: ['fetched_at'] },
      ));
    }
    progress(3, 3, `stored ${document.document_id} at revision ${document.revision}`);
    return {
      document_id: document.document_id,
      revision: document.revision,
      created: !existing,
      changed,
      title: document.title,
      vector_status: document.vector_status,
      source_url: page.url,
      final_url: page.finalUrl,
      media_type: text.mediaType,
      chars: text.text.length,
      updated_at: document.updated_at,
    };
  }

  override documentIdOf(args: z.output<Input>): string | undefined {
    return args.document_id;
  }

  private async findAlive(documentId: string, context: ToolContext): Promise<Document | undefined> {
    try {
      return await this.documents.get(documentId, context.access);
    } catch (error) {
      if (error instanceof DomainError && error.code === ErrorCode.NOT_FOUND) return undefined;
      throw error;
    }
  }
}

/**
 * `https://docs.example.com/guide/setup.html?v=2` → `ingested/docs.example.com/guide/setup-<hash>.md`:
 * segments reduced to safe characters, the query (if any) folded into a short hash so two
 * query strings never share a document, at most 512 bytes.
 */
export function documentIdForUrl(url: URL): string {
  const host = url.hostname.replace(/^\[|\]$/g, '').replace(/:/g, '-');
  const segments = url.pathname
    .split('/')
    .map((segment) => safeSegment(segment))
    .filter((segment) => segment !== '');
  let leaf = url.pathname.endsWith('/') || segments.length === 0 ? 'index' : segments.pop()!;
  leaf = leaf.replace(/\.(html?|md|markdown|txt)$/i, '');
  if (url.search !== '') leaf += `-${shortHash(url.search)}`;
  const id = ['ingested', host, ...segments, `${leaf}.md`].join('/');
  return Buffer.byteLength(id) <= 512 ? id : `ingested/${host}/${shortHash(url.toString())}.md`;
}

function safeSegment(raw: string): string {
  let segment: string;
  try {
    segment = decodeURIComponent(raw);
  } catch {
    segment = raw;
  }
  const safe = segment
    .replace(/[^\p{L}\p{N}._~-]+/gu, '-')
    .replace(/-+/g, '-')
    .replace(/^[-.]+|-+$/g, '')
    .slice(0, 120);
  return safe === '.' || safe === '..' ? '' : safe;
}

function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 10);
}

function clip(text: string | undefined, max: number): string | undefined {
  return text === undefined ? undefined : [...text].slice(0, max).join('');
}
