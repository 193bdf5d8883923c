import { Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { AppConfig } from '../config/app-config';
import { readJsonBody } from './json-body';

/** Parses JSON bodies of REST routes (size limit, media type, malformed JSON → clear errors). */
@Injectable()
export class JsonBodyMiddleware implements NestMiddleware {
  constructor(private readonly config: AppConfig) {}

  async use(request: Request, _response: Response, next: NextFunction): Promise<void> {
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      request.body = await readJsonBody(request, this.config.maxRequestBytes);
    }
    next();
  }
}
