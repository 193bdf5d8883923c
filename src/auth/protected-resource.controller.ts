import { Controller, Get, Header, HttpCode, NotFoundException, Options, Req } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request } from 'express';
import { Authenticator } from './authenticator';
import { PRM_PATH, type ProtectedResourceMetadata } from './protected-resource';

/**
 * Protected Resource Metadata (RFC 9728) at `/.well-known/oauth-protected-resource` (the
 * server) and `/.well-known/oauth-protected-resource/<route>` (each MCP endpoint), only
 * with `OAUTH_ISSUER` set. Public documents: any origin may read them (MCP clients in
 * browsers fetch them, with an `MCP-Protocol-Version` header that needs a preflight).
 */
@ApiExcludeController()
@Controller(PRM_PATH)
export class ProtectedResourceController {
  constructor(private readonly auth: Authenticator) {}

  @Get(['', '*path'])
  @Header('Access-Control-Allow-Origin', '*')
  @Header('Cache-Control', 'public, max-age=300')
  metadata(@Req() request: Request): ProtectedResourceMetadata {
    const resources = this.auth.resources;
    if (resources === undefined) {
      throw new NotFoundException('OAuth is not enabled on this server (OAUTH_ISSUER is unset)');
    }
    const after = request.path.slice(`/${PRM_PATH}`.length);
    const document = resources.metadataFor(after);
    if (document === undefined) {
      throw new NotFoundException('no protected resource has this metadata path');
    }
    return document;
  }

  @Options(['', '*path'])
  @HttpCode(204)
  @Header('Access-Control-Allow-Origin', '*')
  @Header('Access-Control-Allow-Methods', 'GET')
  @Header('Access-Control-Allow-Headers', 'MCP-Protocol-Version, Content-Type')
  @Header('Access-Control-Max-Age', '86400')
  preflight(): void {}
}
