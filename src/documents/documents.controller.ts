import {
  Body,
  Controller,
  Delete,
  Get,
  Headers,
  HttpCode,
  Param,
  Patch,
  Post,
  Put,
  Query,
  Req,
  Res,
  UseGuards,
} from '@nestjs/common';
import type { Response } from 'express';
import { z } from 'zod';
import { AdminGuard, AuthenticatedRequest } from '../auth/admin.guard';
import { actorOf as principalActor } from '../auth/api-key.service';
import { invalidArgument } from '../common/domain-error';
import { restStatus } from '../common/rest-exception.filter';
import { returnPreference } from '../common/prefer-header';
import { parseInput, queryInteger, queryParameters } from '../common/validation';
import { LOCAL_PRINCIPAL } from '../auth/api-key.service';
import { Idempotent } from '../idempotency/idempotency.interceptor';
import { DocumentsService } from './documents.service';
import { DocumentListingsService } from './document-listings.service';
import { ChangeFeedService } from './change-feed.service';
import type { Access } from './access';
import { documentPath } from '../common/document-path';
import { AccessPolicyService } from './access-policy.service';
import { DocumentSources } from './document-sources';
import {
  BULK_MAX_ITEMS,
  type BulkResult,
  type Document,
  documentSchema,
  expectedRevisionSchema,
  patchInputSchema,
} from './document.schemas';
import { deleteResultOf } from './document-rows';

// The fields as the document schema types them; their rules are DocumentFields'.
const tags = documentSchema.shape.tags.optional();
const metadata = documentSchema.shape.metadata.optional();
const revision = expectedRevisionSchema.optional();

export const createSchema = z
  .strictObject({
    document_id: z.string().optional(),
    path: z.string().optional(),
    body: z.string().optional(),
    content: z.string().optional(),
    title: z.string().optional(),
    tags,
    metadata,
  })
  .refine((v) => v.document_id !== undefined || v.path !== undefined, {
    path: ['document_id'],
    message: 'is required',
  })
  .refine((v) => v.body !== undefined || v.content !== undefined, {
    path: ['body'],
    message: 'is required',
  });

export const updateSchema = z.strictObject({
  body: z.string().optional(),
  content: z.string().optional(),
  title: z.string().optional(),
  tags,
  metadata,
  expected_revision: revision,
});

export const patchSchema = patchInputSchema;

export const restoreSchema = z.strictObject({ revision }).optional();

/** One write of a bulk request: the fields of the single write it names. */
export const bulkItemSchema = z
  .strictObject({
    op: z.enum(['create', 'update', 'delete']),
    document_id: z.string().optional(),
    path: z.string().optional(),
    body: z.string().optional(),
    content: z.string().optional(),
    title: z.string().optional(),
    tags,
    metadata,
    expected_revision: revision,
  })
  .refine((v) => v.document_id !== undefined || v.path !== undefined, {
    path: ['document_id'],
    message: 'is required',
  });

export const bulkSchema = z.strictObject({
  items: z.array(bulkItemSchema).min(1).max(BULK_MAX_ITEMS),
});

export const moveSchema = z.strictObject({
  to: z.string().describe('The new id'),
  expected_revision: revision,
});

/** `GET /documents/a/b/c.md` arrives as segments; `a%2Fb` decodes to one segment holding `/`. */
type IdSegments = string[] | string;

/**
 * Admin REST API (docs/documents.md). Ids contain `/`, so each route ends in a wildcard; a document
 * whose id ends in `/history` is reached with that slash encoded (`%2Fhistory`). Every write
 * takes an `Idempotency-Key` (IdempotencyInterceptor): a retry gets the first answer, and draws
 * nothing from the write budget.
 */
@Controller('documents')
@UseGuards(AdminGuard)
export class DocumentsController {
  constructor(
    private readonly documents: DocumentsService,
    private readonly listings: DocumentListingsService,
    private readonly changeFeed: ChangeFeedService,
    private readonly policy: AccessPolicyService,
    private readonly sources: DocumentSources,
  ) {}

  /** What the caller may read and write (the access policy). */
  private accessOf(request: AuthenticatedRequest): Access {
    return this.policy.accessOf(request.principal ?? LOCAL_PRINCIPAL, 'rest');
  }

  @Get()
  list(@Query() query: Record<string, unknown>, @Req() request: AuthenticatedRequest) {
    const { prefix, path, limit, offset } = queryParameters(query, [
      'prefix',
      'path',
      'limit',
      'offset',
    ]);
    return this.listings.list(
      {
        prefix: prefix ?? path,
        limit: queryInteger(limit, 'limit'),
        offset: queryInteger(offset, 'offset'),
      },
      this.accessOf(request),
    );
  }

  @Post()
  @Idempotent()
  @HttpCode(201)
  async create(
    @Body() body: unknown,
    @Headers('prefer') prefer: string | undefined,
    @Req() request: AuthenticatedRequest,
    @Res({ passthrough: true }) response: Response,
  ) {
    const input = parseInput(createSchema, body);
    const document = await this.documents.create(
      {
        document_id: (input.document_id ?? input.path)!,
        body: (input.body ?? input.content)!,
        title: input.title,
        tags: input.tags,
        metadata: input.metadata,
      },
      actorOf(request),
      this.accessOf(request),
    );
    response.setHeader('Location', documentPath(document.document_id));
    return written(response, prefer, document);
  }

  /**
   * Many creates, updates and deletes in one request (the importer's way in): one result per
   * item, in order, with the status the single write would have answered; 200 however many
   * items were refused.
   */
  @Post('bulk')
  @Idempotent()
  @HttpCode(200)
  async bulk(@Body() body: unknown, @Req() request: AuthenticatedRequest): Promise<BulkResult> {
    const { items } = parseInput(bulkSchema, body);
    const outcomes = await this.documents.bulk(
      items.map(({ path, content, ...item }) => ({
        ...item,
        document_id: (item.document_id ?? path)!,
        body: item.body ?? content,
      })),
      actorOf(request),
      this.accessOf(request),
    );
    const results = outcomes.map(({ document_id, document, created, changed, error }) =>
      error === undefined
        ? {
            document_id,
            ok: true,
            status: created ? 201 : 200,
            revision: document!.revision,
            ...(changed === undefined ? {} : { changed }),
          }
        : { document_id, ok: false, status: restStatus(error.code), error: error.toJSON() },
    );
    const succeeded = results.filter((r) => r.ok).length;
    return { results, succeeded, failed: results.length - succeeded };
  }

  /**
   * The audit trail as a feed, newest first, a keyset page at a time: only the rows of
   * documents the caller may read. A literal route, declared ahead of the `*id` ones.
   */
  @Get('changes')
  changes(@Query() query: Record<string, unknown>, @Req() request: AuthenticatedRequest) {
    const { limit, ...filters } = queryParameters(query, [
      'folder',
      'actor',
      'operation',
      'since',
      'until',
      'limit',
      'cursor',
    ]);
    return this.changeFeed.changes(
      { ...filters, limit: queryInteger(limit, 'limit') },
      this.accessOf(request),
    );
  }

  /**
   * The subfolders of `parent` with their document counts, and the documents directly in it:
   * the folder tree a level at a time. A literal route, declared ahead of the `*id` ones.
   */
  @Get('folders')
  folders(@Query() query: Record<string, unknown>, @Req() request: AuthenticatedRequest) {
    const { parent } = queryParameters(query, ['parent']);
    return this.listings.folderTree(parent, this.accessOf(request));
  }

  /** The earlier versions; with `revision`, that one version whole (body included). */
  @Get('*id/history')
  history(
    @Param('id') id: IdSegments,
    @Query() query: Record<string, unknown>,
    @Req() request: AuthenticatedRequest,
  ) {
    const { limit, offset, revision } = queryParameters(query, ['limit', 'offset', 'revision']);
    if (revision !== undefined) {
      if (limit !== undefined || offset !== undefined) {
        throw invalidArgument('revision', 'cannot be given with limit or offset');
      }
      return this.documents.revision(
        joinId(id),
        queryInteger(revision, 'revision')!,
        this.accessOf(request),
      );
    }
    return this.documents.history(
      joinId(id),
      { limit: queryInteger(limit, 'limit'), offset: queryInteger(offset, 'offset') },
      this.accessOf(request),
    );
  }

  @Post('*id/restore')
  @Idempotent()
  @HttpCode(200)
  async restore(
    @Param('id') id: IdSegments,
    @Body() body: unknown,
    @Headers('prefer') prefer: string | undefined,
    @Req() request: AuthenticatedRequest,
    @Res({ passthrough: true }) response: Response,
  ) {
    const input = parseInput(restoreSchema, body);
    const result = await this.documents.restore(
      joinId(id),
      input?.revision,
      actorOf(request),
      this.accessOf(request),
    );
    return written(response, prefer, { ...result.document, changed: result.changed });
  }

  @Post('*id/move')
  @Idempotent()
  @HttpCode(200)
  async move(
    @Param('id') id: IdSegments,
    @Body() body: unknown,
    @Headers('if-match') ifMatch: string | undefined,
    @Headers('prefer') prefer: string | undefined,
    @Req() request: AuthenticatedRequest,
    @Res({ passthrough: true }) response: Response,
  ) {
    const input = parseInput(moveSchema, body ?? {});
    const document = await this.documents.move(
      joinId(id),
      { to: input.to, expected_revision: expectedRevision(ifMatch, input.expected_revision) },
      actorOf(request),
      this.accessOf(request),
    );
    response.setHeader('Location', documentPath(document.document_id));
    return written(response, prefer, document);
  }

  @Get('*id')
  async get(
    @Param('id') id: IdSegments,
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @Req() request: AuthenticatedRequest,
    @Res({ passthrough: true }) response: Response,
  ) {
    const document = await this.documents.get(joinId(id), this.accessOf(request));
    if (
      ifNoneMatch !== undefined &&
      (ifNoneMatch.trim() === '*' ||
        ifNoneMatch.split(',').some((tag) => parseEtag(tag) === document.revision))
    ) {
      response.status(304);
      response.setHeader('ETag', etag(document.revision));
      return undefined;
    }
    const owner = (await this.sources.provenance([document.document_id])).get(document.document_id);
    const source = owner === undefined ? null : { id: owner.source_id, uri: owner.source_uri };
    return withEtag(response, { ...document, source });
  }

  @Put('*id')
  @Idempotent()
  async update(
    @Param('id') id: IdSegments,
    @Body() body: unknown,
    @Headers('if-match') ifMatch: string | undefined,
    @Headers('prefer') prefer: string | undefined,
    @Req() request: AuthenticatedRequest,
    @Res({ passthrough: true }) response: Response,
  ) {
    const input = parseInput(updateSchema, body ?? {});
    const result = await this.documents.update(
      joinId(id),
      {
        body: input.body ?? input.content,
        title: input.title,
        tags: input.tags,
        metadata: input.metadata,
        expected_revision: expectedRevision(ifMatch, input.expected_revision),
      },
      actorOf(request),
      this.accessOf(request),
    );
    return written(response, prefer, { ...result.document, changed: result.changed });
  }

  @Patch('*id')
  @Idempotent()
  async patch(
    @Param('id') id: IdSegments,
    @Body() body: unknown,
    @Headers('if-match') ifMatch: string | undefined,
    @Headers('prefer') prefer: string | undefined,
    @Req() request: AuthenticatedRequest,
    @Res({ passthrough: true }) response: Response,
  ) {
    const input = parseInput(patchSchema, body ?? {});
    const result = await this.documents.patch(
      joinId(id),
      { ...input, expected_revision: expectedRevision(ifMatch, input.expected_revision) },
      actorOf(request),
      this.accessOf(request),
    );
    return written(response, prefer, {
      ...result.document,
      changed: result.changed,
      replacements: result.replacements,
    });
  }

  @Delete('*id')
  @Idempotent()
  async remove(
    @Param('id') id: IdSegments,
    @Headers('if-match') ifMatch: string | undefined,
    @Req() request: AuthenticatedRequest,
  ) {
    const document = await this.documents.delete(
      joinId(id),
      expectedRevision(ifMatch, undefined),
      actorOf(request),
      this.accessOf(request),
    );
    return deleteResultOf(document);
  }
}

function joinId(id: IdSegments): string {
  return Array.isArray(id) ? id.join('/') : id;
}

function actorOf(request: AuthenticatedRequest): string {
  return request.principal === undefined ? 'local' : principalActor(request.principal);
}

function etag(revision: number): string {
  return `"${revision}"`;
}

function withEtag<T extends Pick<Document, 'revision'>>(response: Response, document: T): T {
  response.setHeader('ETag', etag(document.revision));
  return document;
}

/**
 * The answer to a write: the document with its ETag or, when the client sent
 * `Prefer: return=minimal` (RFC 7240), everything but the body and metadata it just sent
 * (a 1 MiB body is not echoed back), with `Preference-Applied`.
 */
function written<T extends Document>(
  response: Response,
  prefer: string | undefined,
  document: T,
): T | Omit<T, 'body' | 'metadata'> {
  withEtag(response, document);
  if (returnPreference(prefer) !== 'minimal') return document;
  response.setHeader('Preference-Applied', 'return=minimal');
  const { body: _body, metadata: _metadata, ...minimal } = document;
  return minimal;
}

/** `"3"`, `W/"3"` or `3` → 3; anything else → `undefined`. */
function parseEtag(tag: string): number | undefined {
  const match = /^\s*(?:W\/)?"?(\d{1,10})"?\s*$/.exec(tag);
  return match ? Number(match[1]) : undefined;
}

/** The revision a write is conditional on, from If-Match or the body (they must agree). */
function expectedRevision(
  ifMatch: string | undefined,
  fromBody: number | undefined,
): number | undefined {
  if (ifMatch === undefined || ifMatch.trim() === '*') return fromBody;
  const fromHeader = parseEtag(ifMatch);
  if (fromHeader === undefined)
    throw invalidArgument('If-Match', 'must be one revision ETag such as "3"');
  if (fromBody !== undefined && fromBody !== fromHeader) {
    throw invalidArgument('expected_revision', `is ${fromBody} but If-Match says ${fromHeader}`);
  }
  return fromHeader;
}
