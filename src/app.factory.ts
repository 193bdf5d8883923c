import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module';
import { createRootLogger, PinoNestLogger, requestLogging } from './common/logging';
import { TunedExpressAdapter } from './common/http-server';
import { AppConfig } from './config/app-config';
import { mcpFastPath } from './mcp/mcp-fast-path';
import { httpMetricsMiddleware } from './metrics/http-metrics.middleware';
import { MetricsService } from './metrics/metrics.service';
import { setupOpenApi } from './openapi/openapi.setup';

/**
 * Builds the application for `config` with everything main.ts and the integration tests
 * share: an HTTP server with explicit client timeouts and JSON answers to what its parser
 * refuses, JSON logs, our own body parsing (limits and errors per route family), HTTP
 * metrics, the MCP endpoints' fast path, the OpenAPI document of the admin API (`/docs`,
 * `/docs-json`).
 */
export async function createApp(config: AppConfig): Promise<NestExpressApplication> {
  const root = createRootLogger(config);
  const app = await NestFactory.create<NestExpressApplication>(
    AppModule.register(config),
    new TunedExpressAdapter(config),
    {
      bodyParser: false,
      bufferLogs: true,
      abortOnError: false,
    },
  );
  app.useLogger(new PinoNestLogger(root));
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.use(requestLogging(root));
  app.use(httpMetricsMiddleware(app.get(MetricsService)));
  // Ahead of every route: the MCP endpoints without Nest's router (same guards and filter).
  app.use(mcpFastPath(app));
  setupOpenApi(app);
  return app;
}
