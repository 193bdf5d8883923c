import { Body, Controller, Get, HttpCode, Post, Query, UseGuards } from '@nestjs/common';
import { z } from 'zod';
import { AdminGuard } from '../auth/admin.guard';
import { invalidArgument } from '../common/domain-error';
import { parseInput, queryInteger } from '../common/validation';
import { SearchMode, SearchService } from './search.service';
import { VectorsAdminService } from './vectors-admin.service';

export const reindexSchema = z.strictObject({ prefix: z.string().optional() }).optional();

/**
 * `GET /search?query&limit&prefix&tags&mode`: the search service behind `search_knowledge`,
 * for operators. `tags` may repeat (`tags=a&tags=b`) or list several (`tags=a,b`).
 */
@Controller('search')
@UseGuards(AdminGuard)
export class SearchController {
  constructor(private readonly search: SearchService) {}

  @Get()
  find(@Query() params: Record<string, unknown>) {
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
    });
  }
}

/** `GET /admin/vectors/status` and `POST /admin/vectors/reindex`. */
@Controller('admin/vectors')
@UseGuards(AdminGuard)
export class VectorsAdminController {
  constructor(private readonly admin: VectorsAdminService) {}

  @Get('status')
  status() {
    return this.admin.status();
  }

  /** Body `{}` (or none) re-queues everything, `{"prefix": "a/"}` the ids starting so. */
  @Post('reindex')
  @HttpCode(202)
  reindex(@Body() body: unknown) {
    return this.admin.reindex(parseInput(reindexSchema, body)?.prefix);
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
