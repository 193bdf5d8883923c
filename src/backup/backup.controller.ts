import { Controller, Get, HttpCode, Logger, Post, Req, Res, UseGuards } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AdminGuard, type AuthenticatedRequest } from '../auth/admin.guard';
import { LOCAL_PRINCIPAL } from '../auth/api-key.service';
import { AccessPolicyService } from '../documents/access-policy.service';
import type { RestoreResult } from './backup.schemas';
import { BackupService } from './backup.service';

/** `GET /admin/backup` and `POST /admin/restore` (docs/operations.md, "Backup and restore"). */
@Controller('admin')
@UseGuards(AdminGuard)
export class BackupController {
  private readonly logger = new Logger('Backup');

  constructor(
    private readonly backups: BackupService,
    private readonly policy: AccessPolicyService,
  ) {}

  /** The backup, streamed as it is read; a backup cut off on the way lacks its manifest. */
  @Get('backup')
  async backup(@Req() request: AuthenticatedRequest, @Res() response: Response): Promise<void> {
    const write = await this.backups.backup(this.accessOf(request));
    response.status(200);
    response.setHeader('Content-Type', 'application/gzip');
    response.setHeader(
      'Content-Disposition',
      `attachment; filename="agent-data-${new Date().toISOString().replace(/[:.]/g, '-')}.backup.gz"`,
    );
    response.setHeader('Cache-Control', 'no-store');
    try {
      await write(response);
    } catch (error) {
      // Headers are gone: the client sees the stream end without its manifest.
      this.logger.warn(`backup not finished: ${(error as Error).message}`);
      response.destroy();
    }
  }

  /** Restores the backup sent as the body (gzip, streamed) into an empty knowledge base. */
  @Post('restore')
  @HttpCode(200)
  async restore(@Req() request: AuthenticatedRequest): Promise<RestoreResult> {
    try {
      return await this.backups.restore(request, this.accessOf(request));
    } catch (error) {
      drain(request);
      throw error;
    }
  }

  private accessOf(request: AuthenticatedRequest) {
    return this.policy.accessOf(request.principal ?? LOCAL_PRINCIPAL, 'rest');
  }
}

/**
 * Reads and drops what is left of a refused upload, so that the client, still sending, gets
 * the answer rather than a connection reset.
 */
function drain(request: Request): void {
  request.unpipe();
  request.resume();
}
