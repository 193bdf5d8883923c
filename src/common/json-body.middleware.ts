import { Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { ApiKeyService } from '../auth/api-key.service';
import { AppConfig } from '../config/app-config';
import { readJsonBody } from './json-body';

/** Parses JSON bodies of REST routes (size limit, media type, malformed JSON → clear errors). */
@Injectable()
export class JsonBodyMiddleware implements NestMiddleware {
  constructor(
    private readonly config: AppConfig,
    private readonly keys: ApiKeyService,
  ) {}

  async use(request: Request, _response: Response, next: NextFunction): Promise<void> {
    // Without a valid key the guard answers 401: an anonymous caller learns nothing about
    // its body (size, media type, syntax), and the body is not even read.
    const anonymous = this.keys.authenticate(request.headers).outcome !== 'ok';
    if (request.method !== 'GET' && request.method !== 'HEAD' && !anonymous) {
      request.body = await readJsonBody(request, this.config.maxRequestBytes);
    }
    next();
  }
}
