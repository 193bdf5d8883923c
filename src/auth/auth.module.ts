import { Global, Module } from '@nestjs/common';
import { AdminGuard } from './admin.guard';
import { ApiKeyService } from './api-key.service';
import { Authenticator } from './authenticator';
import { OAuthService } from './oauth.service';
import { ProtectedResourceController } from './protected-resource.controller';
import { RateLimits } from './rate-limits';

/**
 * Who may do what (docs/mcp.md): API keys, OAuth access tokens with the Protected
 * Resource Metadata that lets clients find the authorization server, and the per-principal
 * rate limits.
 */
@Global()
@Module({
  controllers: [ProtectedResourceController],
  providers: [ApiKeyService, OAuthService, Authenticator, RateLimits, AdminGuard],
  exports: [ApiKeyService, Authenticator, OAuthService, RateLimits, AdminGuard],
})
export class AuthModule {}
