import { Body, Controller, Get, HttpCode, Post, UseGuards } from '@nestjs/common';
import { z } from 'zod';
import { AdminGuard } from '../auth/admin.guard';
import { parseInput } from '../common/validation';
import { VectorsAdminService } from './vectors-admin.service';

export const reindexSchema = z.strictObject({ prefix: z.string().optional() }).optional();

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
