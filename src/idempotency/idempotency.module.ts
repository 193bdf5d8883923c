import { Module } from '@nestjs/common';
import { IdempotencyExpiryJob } from './idempotency-expiry.job';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import { IdempotencyRepository } from './idempotency.repository';
import { IdempotencyService } from './idempotency.service';

/** Retry-safe writes: idempotency keys, their stored answers and their expiry. */
@Module({
  providers: [
    IdempotencyRepository,
    IdempotencyService,
    IdempotencyInterceptor,
    IdempotencyExpiryJob,
  ],
  exports: [IdempotencyService, IdempotencyInterceptor],
})
export class IdempotencyModule {}
