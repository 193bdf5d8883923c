import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Post,
  Put,
  Query,
  Req,
  UseGuards,
} from '@nestjs/common';
import { AdminGuard, type AuthenticatedRequest } from '../auth/admin.guard';
import { LOCAL_PRINCIPAL } from '../auth/api-key.service';
import { invalidArgument } from '../common/domain-error';
import { queryInteger, queryParameters } from '../common/validation';
import { AccessPolicyService } from '../documents/access-policy.service';
import type { Access } from '../documents/access';
import type { RunView, SourceView } from './sources.schemas';
import { SourcesService } from './sources.service';

const RUNS_DEFAULT_LIMIT = 20;
const RUNS_MAX_LIMIT = 200;

/**
 * `/sources` (admin): the declared sources, their runs, a sync asked for; declared here when
 * no `SOURCES_FILE` is set. Under an access policy, a run's failed items name only the
 * documents the caller may read.
 */
@Controller('sources')
@UseGuards(AdminGuard)
export class SourcesController {
  constructor(
    private readonly sources: SourcesService,
    private readonly policy: AccessPolicyService,
  ) {}

  @Get()
  async list(@Query() query: Record<string, unknown>, @Req() request: AuthenticatedRequest) {
    queryParameters(query, []);
    const access = this.accessOf(request);
    const answer = await this.sources.list();
    return { ...answer, sources: answer.sources.map((source) => readable(source, access)) };
  }

  @Get(':id')
  async get(
    @Param('id') id: string,
    @Query() query: Record<string, unknown>,
    @Req() request: AuthenticatedRequest,
  ) {
    queryParameters(query, []);
    return readable(await this.sources.get(id), this.accessOf(request));
  }

  @Get(':id/runs')
  async runs(
    @Param('id') id: string,
    @Query() query: Record<string, unknown>,
    @Req() request: AuthenticatedRequest,
  ) {
    const { limit, before } = queryParameters(query, ['limit', 'before']);
    const size = queryInteger(limit, 'limit') ?? RUNS_DEFAULT_LIMIT;
    if (size < 1 || size > RUNS_MAX_LIMIT) {
      throw invalidArgument('limit', `must be 1 to ${RUNS_MAX_LIMIT}`);
    }
    if (before !== undefined && !/^\d{1,18}$/.test(before)) {
      throw invalidArgument('before', 'must be the id of a run');
    }
    const access = this.accessOf(request);
    const { runs } = await this.sources.runs(id, size, before ?? null);
    return { runs: runs.map((run) => readableRun(run, access)) };
  }

  @Post(':id/sync')
  @HttpCode(202)
  async sync(
    @Param('id') id: string,
    @Query() query: Record<string, unknown>,
    @Req() request: AuthenticatedRequest,
  ) {
    const { confirm_deletions } = queryParameters(query, ['confirm_deletions']);
    if (confirm_deletions !== undefined && !['true', 'false'].includes(confirm_deletions)) {
      throw invalidArgument('confirm_deletions', 'must be true or false');
    }
    const run = await this.sources.sync(id, confirm_deletions === 'true');
    return readableRun(run, this.accessOf(request));
  }

  @Post()
  @HttpCode(201)
  async create(@Body() body: unknown, @Req() request: AuthenticatedRequest) {
    return readable(await this.sources.create(body), this.accessOf(request));
  }

  @Put(':id')
  async replace(
    @Param('id') id: string,
    @Body() body: unknown,
    @Req() request: AuthenticatedRequest,
  ) {
    return readable(await this.sources.replace(id, body), this.accessOf(request));
  }

  @Delete(':id')
  @HttpCode(204)
  async remove(@Param('id') id: string): Promise<void> {
    await this.sources.remove(id);
  }

  private accessOf(request: AuthenticatedRequest): Access {
    return this.policy.accessOf(request.principal ?? LOCAL_PRINCIPAL, 'rest');
  }
}

/** A source as `access` may see it: its last run's failed items only where readable. */
function readable<T extends SourceView>(source: T, access: Access): T {
  return source.last_run === null
    ? source
    : { ...source, last_run: readableRun(source.last_run, access) };
}

function readableRun(run: RunView, access: Access): RunView {
  if (access.read === '*') return run;
  return {
    ...run,
    failed_items: run.failed_items.filter((item) => access.mayRead(item.document_id)),
  };
}
