import { Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { Authenticator } from './authenticator';
import { AppConfig } from '../config/app-config';
import { readJsonBody } from '../common/json-body';

/** Parses JSON bodies of REST routes (size limit, media type, malformed JSON → clear errors). */
@Injectable()
export class JsonBodyMiddleware implements NestMiddleware {
  constructor(
    private readonly config: AppConfig,
    private readonly auth: Authenticator,
  ) {}

  async use(request: Request, _response: Response, next: NextFunction): Promise<void> {
    // Without a valid key or token the guard answers 401 (or 503): an anonymous caller
    // learns nothing about its body (size, media type, syntax), and the body is not even
    // read. The guard reuses this admission rather than checking the token twice.
    const admission = await this.auth.admitOnce(request, 'admin', undefined);
    const known = admission.kind === 'ok' || admission.kind === 'forbidden';
    if (request.method !== 'GET' && request.method !== 'HEAD' && known) {
      request.body = await readJsonBody(request, this.config.maxRequestBytes);
    }
    next();
  }
}
