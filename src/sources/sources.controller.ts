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
import { DomainError, ErrorCode, invalidArgument } from '../common/domain-error';
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
    return {
      ...answer,
      sources: answer.sources
        .filter((source) => visible(source, access))
        .map((source) => readable(source, access)),
    };
  }

  @Get(':id')
  async get(
    @Param('id') id: string,
    @Query() query: Record<string, unknown>,
    @Req() request: AuthenticatedRequest,
  ) {
    queryParameters(query, []);
    return readable(this.visibleOr404(await this.sources.get(id), request), this.accessOf(request));
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
    this.visibleOr404(await this.sources.get(id), request);
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
    this.visibleOr404(await this.sources.get(id), request);
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

  /** A source whose mount the caller may not read at all is answered as an absent one. */
  private visibleOr404<T extends SourceView>(source: T, request: AuthenticatedRequest): T {
    if (visible(source, this.accessOf(request))) return source;
    throw new DomainError(ErrorCode.NOT_FOUND, `source ${source.id} does not exist`, {
      source_id: source.id,
    });
  }

  private accessOf(request: AuthenticatedRequest): Access {
    return this.policy.accessOf(request.principal ?? LOCAL_PRINCIPAL, 'rest');
  }
}

/** Whether `access` may read anything under the source's mount. */
function visible(source: SourceView, access: Access): boolean {
  const readable = access.readableUnder(`${source.mount}/`);
  return readable === 'all' || readable.length > 0;
}

/**
 * A source as `access` may see it: its count of documents only when the whole mount is
 * readable, its last run's failed items only where readable.
 */
function readable<T extends SourceView>(source: T, access: Access): T {
  const whole = access.readableUnder(`${source.mount}/`) === 'all';
  return {
    ...source,
    documents: whole ? source.documents : null,
    last_run: source.last_run === null ? null : readableRun(source.last_run, access),
  };
}

function readableRun(run: RunView, access: Access): RunView {
  if (access.read === '*') return run;
  return {
    ...run,
    failed_items: run.failed_items.filter((item) => access.mayRead(item.document_id)),
  };
}
