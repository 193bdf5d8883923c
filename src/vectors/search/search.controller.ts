import { Controller, Get, Query, Req, UseGuards } from '@nestjs/common';
import { AdminGuard, type AuthenticatedRequest } from '../../auth/admin.guard';
import { LOCAL_PRINCIPAL } from '../../auth/api-key.service';
import { AccessPolicyService } from '../../documents/access-policy.service';
import { invalidArgument } from '../../common/domain-error';
import { queryInteger } from '../../common/validation';
import { SearchService } from './search.service';
import type { SearchMode } from './search.schemas';

/**
 * `GET /search?query&limit&prefix&tags&mode`: the search service behind `search_knowledge`,
 * for operators. `tags` may repeat (`tags=a&tags=b`) or list several (`tags=a,b`).
 */
@Controller('search')
@UseGuards(AdminGuard)
export class SearchController {
  constructor(
    private readonly search: SearchService,
    private readonly policy: AccessPolicyService,
  ) {}

  @Get()
  find(@Query() params: Record<string, unknown>, @Req() request: AuthenticatedRequest) {
    const { query, limit, prefix, tags, mode, ...rest } = params;
    const unknown = Object.keys(rest)[0];
    if (unknown !== undefined) throw invalidArgument(unknown, 'unknown query parameter');
    if (query === undefined) throw invalidArgument('query', 'is required');
    if (typeof query !== 'string') throw invalidArgument('query', 'must be given once');
    if (prefix !== undefined && typeof prefix !== 'string')
      throw invalidArgument('prefix', 'must be given once');
    if (mode !== undefined && typeof mode !== 'string')
      throw invalidArgument('mode', 'must be given once');
    return this.search.search({
      query,
      limit: queryInteger(limit, 'limit'),
      prefix,
      tags: tagList(tags),
      mode: mode as SearchMode | undefined,
      access: this.policy.accessOf(request.principal ?? LOCAL_PRINCIPAL, 'rest'),
    });
  }
}

function tagList(tags: unknown): string[] | undefined {
  if (tags === undefined) return undefined;
  const values = Array.isArray(tags) ? tags : [tags];
  return values
    .flatMap((value) => String(value).split(','))
    .map((tag) => tag.trim())
    .filter((tag) => tag !== '');
}
