import { Controller, Get, Res } from '@nestjs/common';
import type { Response } from 'express';
import { HealthService } from './health.service';
import type { Live, Ready } from './health.schemas';

@Controller('health')
export class HealthController {
  constructor(private readonly health: HealthService) {}

  /** The process is up and serving HTTP; nothing else is checked. */
  @Get('live')
  live(): Live {
    return { status: 'ok' };
  }

  @Get('ready')
  async ready(@Res({ passthrough: true }) response: Response): Promise<Ready> {
    const { ready, checks } = await this.health.readiness();
    response.status(ready ? 200 : 503);
    return { status: ready ? 'ok' : 'unavailable', checks };
  }
}
