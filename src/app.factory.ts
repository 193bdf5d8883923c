import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module';
import { createRootLogger, PinoNestLogger, requestLogging } from './common/logging';
import { observing, TunedExpressAdapter } from './common/http-server';
import { AppConfig } from './config/app-config';
import { isStartupRefusal } from './config/config-values';
import { documentsFastPath } from './documents/documents-fast-path';
import { mcpFastPath } from './mcp/mcp-fast-path';
import { httpMetrics } from './metrics/http-metrics';
import { MetricsService } from './metrics/metrics.service';
import { setupOpenApi } from './openapi/openapi.setup';
import { answerClientError } from './transport/client-error';

/**
 * Builds the application for `config` with everything main.ts and the integration tests
 * share: an HTTP server with explicit client timeouts and JSON answers to what its parser
 * refuses, JSON logs, our own body parsing (limits and errors per route family), HTTP
 * metrics, the MCP endpoints' fast path, the OpenAPI document of the admin API (`/docs`,
 * `/docs-json`).
 */
export async function createApp(config: AppConfig): Promise<NestExpressApplication> {
  const root = createRootLogger(config);
  const adapter = new TunedExpressAdapter(config, answerClientError);
  const app = await NestFactory.create<NestExpressApplication>(
    AppModule.register(config),
    adapter,
    {
      bodyParser: false,
      // Given at once rather than after (bufferLogs): each line of the start is written, with
      // its time, as it happens, and a refusal to start is left to the caller's one line.
      logger: new PinoNestLogger(root, isStartupRefusal),
      abortOnError: false,
    },
  );
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  const observers = [requestLogging(root), httpMetrics(app.get(MetricsService))];
  for (const observer of observers) app.use(observing(observer));
  // Ahead of Express: the MCP endpoints and the hottest admin reads without its router or
  // Nest's (same guards, handlers, filters, request id, access log and metrics).
  adapter.setFrontDoors(mcpFastPath(adapter, observers), documentsFastPath(adapter, observers));
  setupOpenApi(app);
  return app;
}
