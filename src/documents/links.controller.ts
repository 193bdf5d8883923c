import { Controller, Get, Param, Query, Req, UseGuards } from '@nestjs/common';
import { AdminGuard, AuthenticatedRequest } from '../auth/admin.guard';
import { LOCAL_PRINCIPAL } from '../auth/api-key.service';
import { queryInteger, queryParameters } from '../common/validation';
import type { Access } from './access';
import { AccessPolicyService } from './access-policy.service';
import { LinksService } from './links.service';

/** `GET /documents/a/b.md/links` arrives as segments; `a%2Fb` decodes to one holding `/`. */
type IdSegments = string[] | string;

/**
 * Links between documents over the admin REST API (docs/documents.md, "Links between
 * documents"): a document's links, its backlinks and neighbourhood, a folder's broken links.
 * Registered ahead of DocumentsController, whose `GET /documents/{id}` would take these paths
 * for ids: an id ending in `/links`, `/backlinks` or `/neighbourhood` is read with that slash
 * encoded, as one ending in `/history`.
 */
@Controller('documents')
@UseGuards(AdminGuard)
export class LinksController {
  constructor(
    private readonly links: LinksService,
    private readonly policy: AccessPolicyService,
  ) {}

  private accessOf(request: AuthenticatedRequest): Access {
    return this.policy.accessOf(request.principal ?? LOCAL_PRINCIPAL, 'rest');
  }

  /** The broken links under a prefix, a page of documents at a time. A literal route. */
  @Get('links/broken')
  broken(@Query() query: Record<string, unknown>, @Req() request: AuthenticatedRequest) {
    const { prefix, limit, cursor } = queryParameters(query, ['prefix', 'limit', 'cursor']);
    return this.links.broken(
      { prefix, limit: queryInteger(limit, 'limit'), cursor },
      this.accessOf(request),
    );
  }

  @Get('*id/links')
  outgoing(
    @Param('id') id: IdSegments,
    @Query() query: Record<string, unknown>,
    @Req() request: AuthenticatedRequest,
  ) {
    queryParameters(query, []);
    return this.links.links(joinId(id), this.accessOf(request));
  }

  @Get('*id/backlinks')
  backlinks(
    @Param('id') id: IdSegments,
    @Query() query: Record<string, unknown>,
    @Req() request: AuthenticatedRequest,
  ) {
    const { limit, cursor } = queryParameters(query, ['limit', 'cursor']);
    return this.links.backlinks(
      joinId(id),
      { limit: queryInteger(limit, 'limit'), cursor },
      this.accessOf(request),
    );
  }

  @Get('*id/neighbourhood')
  neighbourhood(
    @Param('id') id: IdSegments,
    @Query() query: Record<string, unknown>,
    @Req() request: AuthenticatedRequest,
  ) {
    const { depth, limit } = queryParameters(query, ['depth', 'limit']);
    return this.links.neighbourhood(
      joinId(id),
      { depth: queryInteger(depth, 'depth'), limit: queryInteger(limit, 'limit') },
      this.accessOf(request),
    );
  }
}

function joinId(id: IdSegments): string {
  return Array.isArray(id) ? id.join('/') : id;
}
