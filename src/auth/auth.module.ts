import { Global, Module } from '@nestjs/common';
import { AdminGuard } from './admin.guard';
import { ApiKeyService } from './api-key.service';

@Global()
@Module({ providers: [ApiKeyService, AdminGuard], exports: [ApiKeyService, AdminGuard] })
export class AuthModule {}
