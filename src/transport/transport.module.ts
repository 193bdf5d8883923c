import { Module } from '@nestjs/common';
import { McpExceptionFilter } from './mcp-exception.filter';
import { McpFraming } from './mcp-framing';
import { OriginGuard } from './origin.guard';
import { TransportMetrics } from './transport.metrics';

/**
 * MCP Streamable HTTP transport: Accept negotiation, JSON / single-event SSE framing,
 * Origin, Content-Type, body-size and protocol-version checks, and JSON-RPC error bodies.
 * Its guard and filter are applied by the MCP controller, which frames its answers with
 * {@link McpFraming}.
 */
const PROVIDERS = [TransportMetrics, McpFraming, OriginGuard, McpExceptionFilter];

@Module({ providers: PROVIDERS, exports: PROVIDERS })
export class TransportModule {}
