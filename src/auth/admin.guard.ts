import {
  CanActivate,
  ExecutionContext,
  ForbiddenException,
  Injectable,
  UnauthorizedException,
} from '@nestjs/common';
import type { Request } from 'express';
import { ApiKeyService, Principal } from './api-key.service';

export type AuthenticatedRequest = Request & { principal?: Principal };

/** Admin REST routes: with API_KEYS set, a key with the `admin` profile is required. */
@Injectable()
export class AdminGuard implements CanActivate {
  constructor(private readonly keys: ApiKeyService) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const result = this.keys.authenticate(request.headers);
    if (result.outcome === 'missing') {
      throw new UnauthorizedException(
        'an API key is required (X-API-Key or Authorization: Bearer)',
      );
    }
    if (result.outcome === 'invalid') throw new UnauthorizedException('the API key is not valid');
    if (!ApiKeyService.allows(result.principal, 'admin')) {
      throw new ForbiddenException(
        `key "${result.principal.name}" does not grant the admin profile`,
      );
    }
    request.principal = result.principal;
    return true;
  }
}
