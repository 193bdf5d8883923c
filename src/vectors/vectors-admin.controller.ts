import { Body, Controller, Get, HttpCode, Post, Req, UseGuards } from '@nestjs/common';
import { z } from 'zod';
import { AdminGuard, type AuthenticatedRequest } from '../auth/admin.guard';
import { LOCAL_PRINCIPAL } from '../auth/api-key.service';
import { AccessPolicyService } from '../documents/access-policy.service';
import { parseInput } from '../common/validation';
import { VectorsAdminService } from './vectors-admin.service';

export const reindexSchema = z.strictObject({ prefix: z.string().optional() }).optional();

/** `GET /admin/vectors/status` and `POST /admin/vectors/reindex`. */
@Controller('admin/vectors')
@UseGuards(AdminGuard)
export class VectorsAdminController {
  constructor(
    private readonly admin: VectorsAdminService,
    private readonly policy: AccessPolicyService,
  ) {}

  @Get('status')
  status(@Req() request: AuthenticatedRequest) {
    return this.admin.status(this.policy.accessOf(request.principal ?? LOCAL_PRINCIPAL, 'rest'));
  }

  /** Body `{}` (or none) re-queues everything, `{"prefix": "a/"}` the ids starting so. */
  @Post('reindex')
  @HttpCode(202)
  reindex(@Body() body: unknown, @Req() request: AuthenticatedRequest) {
    return this.admin.reindex(
      parseInput(reindexSchema, body)?.prefix,
      this.policy.accessOf(request.principal ?? LOCAL_PRINCIPAL, 'rest'),
    );
  }
}
